"""A network container is removed after the containers that join it, on the real engine.

podman refuses to remove a container that others join ("container ... has dependent
containers which must be removed before it", HTTP 500); Docker allows it. Before the
rule (issue 31), a pod whose network container had died and been replaced could never
be taken down on podman: the old network container was still joined by the app
instances that garbage collection keeps. The rule is the plan's, on every engine
(``podsync.planner._joins``; the kubelet's ``evictSandboxes`` keeps a sandbox while
it has containers): this test runs on each engine of ``PODSYNC_TEST_ENGINES``.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import docker

from podsync import GCPolicy, Remove
from podsync.docker import DockerRuntime
from podsync.spec._labels import LABEL_JOINS
from tests.engine.test_sync import (  # noqa: F401 - _app_image is an autouse fixture
    CountingRuntime,
    _app,
    _app_image,
    _containers,
    _hex,
    _options,
    _pod,
    _summary,
    _sync,
    _wait_exited,
)
from tests.support.engine import Cleanup


def test_a_rebuilt_pod_goes_down_each_network_container_after_its_joiners(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """Two app containers on a network container that is killed: the next sync rebuilds
    the pod on a new one and keeps the old instances (and the old network container they
    join); a sync without the pod, deletions allowed in its own scope, removes every
    container of it, each network container after the containers that join it."""
    pod = _pod(cleanup, "rm-order", _app("load"), _app("serve"))
    options = _options(tmp_path, scope=f"rm-order-{_hex()}", gc=GCPolicy(min_age=0))
    with DockerRuntime() as inner:
        runtime = CountingRuntime(inner)
        first = _sync([pod], runtime, options)
        assert first.ok, _summary(first)
        (old_net,) = _containers(engine, pod)["net"]
        engine.api.kill(old_net["Id"])
        _wait_exited(engine, [old_net["Id"]])

        rebuilt = _sync([pod], runtime, options)
        assert rebuilt.ok, _summary(rebuilt)
        found = _containers(engine, pod)
        nets = [n["Name"].lstrip("/") for n in found["net"]]
        assert len(nets) == 2, nets
        assert found["net"][1]["State"]["Running"], nets
        # Each app instance says which network container it joins: the one it joined.
        for name in ("load", "serve"):
            joined = [i["Config"]["Labels"][LABEL_JOINS] for i in found[name]]
            mode = [i["HostConfig"]["NetworkMode"] for i in found[name]]
            assert joined == nets, (name, joined)
            assert mode == [f"container:{n['Id']}" for n in found["net"]], (name, mode)

        down = _sync([], runtime, attrs.evolve(options, allow_deletions=True))
        assert down.ok, _summary(down)
        removed = [
            a.name
            for p in down.plan.pods
            for a in p.actions
            if isinstance(a, Remove) and a.pod_uid == pod.uid
        ]
        apps = [i for name in ("load", "serve") for i in found[name]]
        for net in nets:
            joiners = [
                i["Name"].lstrip("/") for i in apps if i["Config"]["Labels"][LABEL_JOINS] == net
            ]
            assert len(joiners) == 2, (net, joiners)
            assert all(removed.index(j) < removed.index(net) for j in joiners), removed
    assert {} == _containers(engine, pod)
