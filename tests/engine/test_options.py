"""An option change reaches running pods on a real Docker engine (issue 10, part 3).

The same conventions as ``tests/engine/test_sync.py``, whose helpers this uses: no
bridge (network mode ``none``), nothing pulled, deletions off on the shared engine.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import docker

from podsync import Create, Kill, Reason
from tests.engine.test_sync import (
    CountingRuntime,
    _app,
    _app_image,  # noqa: F401 - the module fixture that tags the app image
    _containers,
    _net_ns,
    _options,
    _pod,
    _summary,
    _sync,
    runtime,  # noqa: F401 - fixture
)
from tests.support.engine import Cleanup

HOST_RESOLV = "nameserver 192.0.2.53\nsearch corp.example\n"


def test_cluster_dns_change_reaches_the_running_pod(
    engine: docker.DockerClient,
    cleanup: Cleanup,
    runtime: CountingRuntime,  # noqa: F811
    tmp_path: Path,
) -> None:
    """--cluster-dns changes between two syncs: the pod is rebuilt, and its new network
    container - which the app container joins - has the new DNS server. A third sync
    has nothing to do."""
    before_options = attrs.evolve(_options(tmp_path), host_resolv_conf=HOST_RESOLV)
    pod = _pod(cleanup, "dns", _app("app"))
    first = _sync([pod], runtime, before_options)
    assert first.ok, _summary(first)
    (old_net,) = _containers(engine, pod)["net"]
    assert ["10.0.0.10", "192.0.2.53"] == old_net["HostConfig"]["Dns"]

    after_options = attrs.evolve(before_options, cluster_dns="10.0.0.11")
    second = _sync([pod], runtime, after_options)

    assert second.ok, _summary(second)
    kills = [a for a in second.plan.actions if isinstance(a, Kill)]
    creates = [a for a in second.plan.actions if isinstance(a, Create)]
    assert ["app", "net"] == [k.container for k in kills]
    assert ["net", "app"] == [c.container for c in creates]
    assert Reason.NETWORK_CHANGED == kills[1].reason
    assert "network spec changed (--cluster-dns 10.0.0.10 -> 10.0.0.11)" in kills[1].message
    after = _containers(engine, pod)
    old, new_net = after["net"]
    assert old_net["Id"] == old["Id"]
    assert not old["State"]["Running"]
    assert new_net["State"]["Running"]
    assert ["10.0.0.11", "192.0.2.53"] == new_net["HostConfig"]["Dns"]
    assert [f"{pod.namespace}.cluster.local", "cluster.local", "corp.example"] == (
        new_net["HostConfig"]["DnsSearch"]
    )
    new_app = after["app"][-1]
    assert new_app["State"]["Running"]
    assert f"container:{new_net['Id']}" == new_app["HostConfig"]["NetworkMode"]
    assert _net_ns(runtime, new_net["Id"]) == _net_ns(runtime, new_app["Id"])

    third = _sync([pod], runtime, after_options)
    assert third.ok, _summary(third)
    assert [] == runtime.mutations(), third.plan.describe()
