"""Host-port admission in the planner: a pod that runs with a host port keeps it,
whatever the order of the pod files; FakeRuntime binds ports as Docker does, so a plan
that got this wrong fails at start."""

from __future__ import annotations

import attrs

from podsync import Container, Pod, Port, Reason, sync
from podsync.actions._actions import Create
from podsync.actions._options import NODE_SCOPE, PlanOptions
from podsync.labels import LABEL_CONTAINER, LABEL_POD_NAME, LABEL_POD_NAMESPACE, LABEL_SPEC
from podsync.planner._plan import plan
from podsync.testing import FakeRuntime
from tests.support.engine_model import EngineModel

NOW = 1_000_000.0
IMAGES = ["busybox", "pause"]
OPTIONS = PlanOptions(scope=NODE_SCOPE, network_image="pause", root_dir="/var/lib/podsync")


def _web(name: str, *host_ports: int) -> Pod:
    ports = tuple(Port(8000 + i, hp) for i, hp in enumerate(host_ports))
    return Pod(name, (Container("app", "busybox", ports=ports),), uid=f"uid-{name}")


def _model_running(*pods: Pod) -> EngineModel:
    model = EngineModel(image_tags={"busybox:latest", "pause:latest"})
    model.apply(plan(list(pods), [], images=model.images, now=NOW, options=OPTIONS), NOW)
    return model


def _plan(desired: list[Pod], model: EngineModel, **options: object):
    return plan(
        desired,
        model.observed,
        images=model.images,
        pod_dirs=model.pod_dirs,
        now=NOW + 10,
        options=attrs.evolve(OPTIONS, **options),
    )


def test_newcomer_listed_first_is_rejected_not_the_running_pod():
    """``aaa-new.yaml`` sorts before ``web.yaml`` in a directory: the new pod asks for
    the port the running web pod holds and is rejected; web is left alone (input order
    used to reject web, and the new pod then failed to start on every sync)."""
    web = _web("web", 80)
    model = _model_running(web)
    newcomer = _web("aaa-new", 80)

    p = _plan([newcomer, web], model)

    assert [
        (
            "default/aaa-new",
            Reason.HOST_PORT_CONFLICT,
            "host port 80/TCP is already used by pod default/web",
        )
    ] == [(r.pod, r.reason, r.message) for r in p.rejected]
    assert not p.has_changes


def test_port_of_a_pod_that_is_kept_running_is_not_given_away():
    """A pod that is no longer desired but not deleted (deletions are off) still runs
    and holds its port: a new pod asking for it is rejected."""
    old = _web("old", 80)
    model = _model_running(old)

    p = _plan([_web("new", 80)], model, allow_deletions=False)

    assert ["host port 80/TCP is held by running pod default/old"] == [
        r.message for r in p.rejected
    ]


def test_a_recorded_port_no_engine_could_publish_holds_nothing_and_hides_nothing():
    """A network container's spec label that records a host port beyond 65535 (a record
    podsync did not write) is read without raising: that port holds nothing, and the
    ports recorded after it are still held."""
    old = _web("old", 80, 81)
    model = _model_running(old)
    net = next(c for c in model.observed if c.labels.get(LABEL_CONTAINER) == "net")
    spec = net.labels[LABEL_SPEC]
    assert spec.count('"host_port":80,') == 1
    labels = {**net.labels, LABEL_SPEC: spec.replace('"host_port":80,', '"host_port":70000,')}
    model.containers[net.id] = attrs.evolve(net, labels=labels)

    p = _plan([_web("new", 81), _web("other", 80)], model, allow_deletions=False)

    assert [("default/new", "host port 81/TCP is held by running pod default/old")] == [
        (r.pod, r.message) for r in p.rejected
    ]


def test_port_of_a_pod_being_stopped_is_free_on_the_next_sync():
    """Deleting the old pod and starting the new one in one apply would race for the
    port: the new pod waits one sync, then starts."""
    model = _model_running(_web("old", 80))
    new = _web("new", 80)

    first = _plan([new], model, allow_deletions=True)
    model.apply(first, NOW + 10)
    second = _plan([new], model, allow_deletions=True)

    assert ["host port 80/TCP is held by running pod default/old"] == [
        r.message for r in first.rejected
    ]
    assert ([], ["net", "app"]) == (
        list(second.rejected),
        [a.container for a in second.actions if isinstance(a, Create)],
    )


def test_running_pod_that_moves_to_another_port_frees_the_old_one_after_its_rebuild():
    """web moves from 80 to 81 while a new pod asks for 80: web is rebuilt on 81 and the
    new pod starts on the next sync."""
    model = _model_running(_web("web", 80))
    web, new = _web("web", 81), _web("aaa-new", 80)

    first = _plan([new, web], model)
    model.apply(first, NOW + 10)
    second = _plan([new, web], model)

    assert ["default/aaa-new"] == [r.pod for r in first.rejected]
    assert ["default/web"] == [pp.pod for pp in first.pods]
    assert ([], ["default/aaa-new"]) == (list(second.rejected), [pp.pod for pp in second.pods])


def test_sync_on_an_engine_that_binds_ports():
    """On FakeRuntime, which refuses a second binding as Docker does, syncing the pod
    files in either order keeps web running and starts nothing that cannot bind."""
    fake = FakeRuntime(images=IMAGES, clock=lambda: NOW)
    web = _web("web", 80)
    assert sync([web], fake, options=OPTIONS, now=NOW, probe=False, clock=fake.clock).ok

    result = sync(
        [_web("aaa-new", 80), web],
        fake,
        options=OPTIONS,
        now=NOW + 1,
        probe=False,
        clock=fake.clock,
    )

    assert result.ok, result.apply_result.summary()
    assert ["default/aaa-new"] == [r.pod for r in result.plan.rejected]
    assert {"default/web"} == {
        f"{c.labels[LABEL_POD_NAMESPACE]}/{c.labels[LABEL_POD_NAME]}"
        for c in fake.containers
        if c.running
    }
