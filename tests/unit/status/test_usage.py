"""Pods' usage from two readings (``podsync.status.pod_usage``, ``usage_figures``), on
the containers a sync really makes on a ``FakeRuntime`` - whose ``set_usage`` scripts
the cores and memory each container uses, as its clock moves."""

from __future__ import annotations

import pytest

from podsync import (
    NETWORK_CONTAINER,
    Container,
    ContainerUsage,
    ObservedContainer,
    Pod,
    PodUsage,
    UsageFigures,
    sync,
)
from podsync.actions._options import PlanOptions
from podsync.exceptions import MissingCapability
from podsync.runtime import UsageRuntime, require_usage
from podsync.status import pod_usage, usage_figures
from podsync.testing import FakeClock, FakeRuntime

PAUSE = "registry.k8s.io/pause:3.10"
OPTIONS = PlanOptions(root_dir="/nonexistent")
MiB = 1024 * 1024


def _pods(*pods: Pod) -> FakeRuntime:
    fake = FakeRuntime(images=["busybox", PAUSE], clock=FakeClock(1000.0, step=0))
    assert sync(list(pods), fake, options=OPTIONS, clock=fake.clock).ok
    return fake


def _by_name(fake: FakeRuntime, pod: str) -> dict[str, ObservedContainer]:
    return {
        c.labels["io.podsync.container.name"]: c
        for c in fake.containers
        if c.labels.get("io.podsync.pod.name") == pod
    }


def test_usage_figures_average_the_window() -> None:
    before = ContainerUsage(10.0, 100, at=50.0)
    assert UsageFigures(None, 200, 12.0) == usage_figures(None, ContainerUsage(12.0, 200, 60.0))
    assert UsageFigures(0.25, 300, 12.5) == usage_figures(before, ContainerUsage(12.5, 300, 60.0))
    # No window (the same moment, or earlier): no rate; a counter that went back: 0.
    assert usage_figures(before, ContainerUsage(11.0, 1, 50.0)).cpu_cores is None
    assert UsageFigures(0.0, 1, 1.0) == usage_figures(before, ContainerUsage(1.0, 1, 60.0))


def test_pod_usage_sums_a_pods_containers_network_container_included() -> None:
    web = Pod("web", (Container("app", "busybox"), Container("side", "busybox")), source="file")
    db = Pod("db", (Container("app", "busybox"),), source="file")
    fake = _pods(web, db)
    assert isinstance(fake, UsageRuntime)
    containers = _by_name(fake, "web")
    fake.set_usage(containers["app"].id, cpu_cores=0.5, memory=10 * MiB)
    fake.set_usage(containers["side"].id, cpu_cores=0.25, memory=2 * MiB)
    fake.set_usage(containers[NETWORK_CONTAINER].id, memory=MiB)
    fake.set_usage(_by_name(fake, "db")["app"].id, cpu_cores=2.0, memory=5 * MiB)
    observed = fake.list_containers()
    ids = [c.id for c in observed]

    first = fake.container_usage(ids)
    usage = pod_usage({}, first, observed)
    assert ["default/db", "default/web"] == [u.pod for u in usage]
    assert UsageFigures(None, 13 * MiB, 0.0) == usage[1].total
    assert {"app", "side", NETWORK_CONTAINER} == set(usage[1].containers)

    fake.clock.advance(4)
    second = fake.container_usage(ids)
    db_usage, web_usage = pod_usage(first, second, observed)
    assert isinstance(web_usage, PodUsage)
    assert web_usage.uid == web.uid
    # The cumulative seconds: 4 s of 0.5 + 0.25 cores (set at the same fake moment).
    assert UsageFigures(0.75, 13 * MiB, 3.0) == web_usage.total
    assert UsageFigures(0.5, 10 * MiB, 2.0) == web_usage.containers["app"]
    assert UsageFigures(0.0, MiB, 0.0) == web_usage.containers[NETWORK_CONTAINER]
    assert UsageFigures(2.0, 5 * MiB, 8.0) == db_usage.total


def test_pod_usage_leaves_out_foreign_unread_and_stopped_containers() -> None:
    web = Pod("web", (Container("app", "busybox"),), source="file")
    fake = _pods(web)
    fake.add_container(ObservedContainer("foreign", "someone-else", running=True))
    app = _by_name(fake, "web")["app"]
    fake.set_usage(app.id, cpu_cores=1.0, memory=MiB)
    observed = fake.list_containers()
    readings = fake.container_usage([c.id for c in observed])
    assert "foreign" in readings  # the engine reads it; the pods' usage leaves it out
    (usage,) = pod_usage({}, readings, observed)
    assert "foreign" not in usage.containers

    fake.exit(app.id, 0)
    after = fake.container_usage([app.id, "no-such-container"])
    assert {} == after  # a stopped container and a missing one are left out, no error
    assert [] == pod_usage(readings, after, [app])


def test_a_container_read_for_the_first_time_adds_memory_only() -> None:
    web = Pod("web", (Container("app", "busybox"), Container("side", "busybox")), source="file")
    fake = _pods(web)
    containers = _by_name(fake, "web")
    for c in containers.values():
        fake.set_usage(c.id, cpu_cores=1.0, memory=MiB)
    observed = fake.list_containers()
    first = fake.container_usage([containers["app"].id])
    fake.clock.advance(2)
    second = fake.container_usage([c.id for c in observed])
    (usage,) = pod_usage(first, second, observed)
    assert UsageFigures(1.0, 3 * MiB, 6.0) == usage.total
    assert usage.containers["side"].cpu_cores is None


def test_node_usage_is_none_until_set() -> None:
    fake = FakeRuntime(clock=FakeClock(0.0, step=0))
    assert fake.node_usage() is None
    fake.set_node_usage(cpu_cores=1.5, memory=3 * MiB)
    fake.clock.advance(2)
    assert ContainerUsage(3.0, 3 * MiB, 2.0) == fake.node_usage()
    assert ["node_usage", "node_usage"] == fake.call_names()


def test_require_usage_names_the_protocol() -> None:
    class Core:
        def list_containers(self) -> list[ObservedContainer]:
            return []

    with pytest.raises(MissingCapability, match=r"no usage capability.*UsageRuntime"):
        require_usage(Core(), "podsync top")
    fake = FakeRuntime()
    assert require_usage(fake, "podsync top") is fake
    with pytest.raises(ValueError, match="0 or more"):
        fake.set_node_usage(cpu_cores=-1)
