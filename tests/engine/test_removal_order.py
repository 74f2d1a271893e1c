"""A pod rebuilt after its network container died, then taken down, on a real engine
(issue 31).

The engine is the point: podman refuses to remove a container that another container
- running or exited - joins ("container <id> has dependent containers which must be
removed before it"), and once a pod's network container had died and the pod had been
rebuilt, the dead network container and the exited container that joined it were both
left; ``down`` removed them in an order its ids decided, and failed on podman every time.
Docker removes them in any order; the plan's order is checked on it too. Helpers are
those of ``tests/engine/test_sync``.
"""

from __future__ import annotations

from pathlib import Path

import docker

import podsync
from podsync.actions._actions import Remove
from podsync.docker import DockerRuntime
from tests.engine.test_sync import (  # noqa: F401 - _app_image is an autouse fixture
    CountingRuntime,
    _app,
    _app_image,
    _containers,
    _options,
    _pod,
    _summary,
    _sync,
    _wait_exited,
)
from tests.support.engine import Cleanup


def test_down_after_the_network_container_died_takes_everything_at_once(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """The network container is killed; the next sync rebuilds the pod (the app
    container is killed, a new network container and app container are made), leaving
    two exited containers, one joined to the other. One ``down`` removes all four, each
    app container before the network container it joined."""
    pod = _pod(cleanup, "net-died", _app("web"))
    options = _options(tmp_path)
    with DockerRuntime() as runtime:
        assert (first := _sync([pod], CountingRuntime(runtime), options)).ok, _summary(first)
        (net,) = _containers(engine, pod)["net"]
        engine.api.kill(net["Id"])
        _wait_exited(engine, [net["Id"]])
        assert (second := _sync([pod], CountingRuntime(runtime), options)).ok, _summary(second)
        found = _containers(engine, pod)
        assert (2, 2) == (len(found["net"]), len(found["web"]))
        joined = {
            web["Id"]: web["HostConfig"]["NetworkMode"].removeprefix("container:")
            for web in found["web"]
        }

        result = podsync.down([pod], runtime, options=options)

    assert result.ok, _summary(result)
    assert {} == _containers(engine, pod)
    removed = [a.id for a in result.plan.actions if isinstance(a, Remove)]
    assert 4 == len(removed)
    for web, net_id in joined.items():
        assert removed.index(web) < removed.index(net_id), (web, net_id)
