"""A rebuild whose new network container could not be created, on a real Docker engine.

Docker's behaviour is the point: a stopped container's labels cannot say that podsync
stopped it, and a network container that podsync stopped looks, to a new process, like
one that died - which, for a ``Never`` pod whose containers ran, means the pod has
failed (the kubelet's computePodActions). podsync's stop record of the network
container, written to the engine before the stop and read back by a new
``DockerRuntime`` (the next ``podsync apply``), tells the two apart. Helpers and the
engine rules are those of ``tests/engine/test_sync`` and ``tests/engine/test_restarts``.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import attrs
import docker

import podsync
from podsync import Reason, RestartPolicy
from podsync.docker import DockerRuntime
from tests.engine.test_restarts import _FailingCreate
from tests.engine.test_sync import (  # noqa: F401 - _app_image is an autouse fixture
    CountingRuntime,
    _actions,
    _app,
    _app_image,
    _containers,
    _options,
    _pod,
    _running,
    _summary,
    _sync,
    _wait_exited,
)
from tests.support.engine import PAUSE_IMAGE, Cleanup


def test_never_pod_whose_new_network_container_could_not_be_created_is_rebuilt(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """restartPolicy Never, two containers: ``load`` ran to completion, ``serve`` runs.
    The pod is rebuilt for a new network image, and the new network container's create
    fails. A new runtime observes the old network container as stopped by podsync
    (``network-changed``), so the next sync goes on with the rebuild - a new network
    container and ``serve`` - instead of calling the pod failed; ``load`` does not run
    again."""
    pause2 = f"{PAUSE_IMAGE.rpartition(':')[0]}:rebuild-{secrets.token_hex(4)}"
    repository, _, tag = pause2.rpartition(":")
    assert engine.api.tag(PAUSE_IMAGE, repository, tag)
    try:
        pod = _pod(
            cleanup,
            "net-rebuild",
            _app("load", command=("/bin/sh", "-c", "exit 0")),
            _app("serve"),
            restart_policy=RestartPolicy.NEVER,
        )
        options = _options(tmp_path)
        with DockerRuntime() as inner:
            first = _sync([pod], CountingRuntime(inner), options)
            assert first.ok, _summary(first)
            found = _containers(engine, pod)
            (load,), (old_net,) = found["load"], found["net"]
            _wait_exited(engine, [load["Id"]])

            rebuilt = attrs.evolve(options, network_image=pause2)
            second = _sync([pod], _FailingCreate(inner, "k8s_net"), rebuilt)

        assert not second.ok
        assert [
            ("Kill", "serve", Reason.POD_REBUILD),
            ("Kill", "net", Reason.NETWORK_CHANGED),
            ("Create", "net", Reason.NETWORK_CHANGED),
            ("Create", "serve", Reason.POD_REBUILD),
        ] == [(type(a).__name__, a.container, a.reason) for a in _actions(second, pod)]
        _wait_exited(engine, [old_net["Id"]])

        with DockerRuntime() as fresh:
            seen = podsync.observe(fresh, rebuilt.root_dir)
            (mark,) = [c.stopped_by_podsync for c in seen.containers if c.id == old_net["Id"]]
            waiting = podsync.pod_status(pod, seen.containers)
            third = _sync([pod], CountingRuntime(fresh), rebuilt)

        assert "network-changed" == mark
        assert podsync.PodPhase.FAILED != waiting.phase
        assert third.ok, _summary(third)
        assert [
            ("Create", "net", Reason.NETWORK_CHANGED),
            ("Create", "serve", Reason.NOT_REPLACED),
        ] == [(type(a).__name__, a.container, a.reason) for a in _actions(third, pod)]
        after = _containers(engine, pod)
        assert [load["Id"]] == [c["Id"] for c in after["load"]]
        assert [False, True] == [_running(engine, c["Id"]) for c in after["net"]]
        assert [False, True] == [_running(engine, c["Id"]) for c in after["serve"]]
    finally:
        engine.api.remove_image(pause2)
