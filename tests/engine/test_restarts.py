"""What counts as a run, on a real Docker engine: a container whose start failed, and a
container podsync stopped whose replacement could not be created.

Docker's behaviour is the point here: a container whose start fails stays in the
``created`` state (exit code 127, no finish time), and a stopped container's labels
cannot say that podsync stopped it - podsync's stop record under the root directory
does, and it is read back by a new ``DockerRuntime``, as the next ``podsync apply`` (a
new process) would. Helpers and the engine rules are those of ``tests/engine/test_sync``.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import attrs
import docker
import pytest

import podsync
from podsync import Create, Kill, Reason, RestartPolicy, Volume, VolumeMount
from podsync.actions._actions import CreateSpec
from podsync.docker import DockerRuntime
from podsync.exceptions import RuntimeCallError
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


@pytest.fixture
def counting(engine: docker.DockerClient) -> Iterator[CountingRuntime]:
    """A counting runtime on its own ``DockerRuntime``, closed after."""
    with DockerRuntime() as inner:
        yield CountingRuntime(inner)


def test_never_pod_whose_first_start_failed_starts_on_the_next_sync(
    engine: docker.DockerClient, cleanup: Cleanup, counting: CountingRuntime, tmp_path: Path
) -> None:
    """restartPolicy Never; the container's first start fails on the engine (its hostPath
    volume is a file, mounted onto a directory). Docker leaves it "created", and podsync
    sees an instance that never started: not a run. Once the host path is a directory,
    the next sync starts the container - it used to call the pod completed and stop its
    network container."""
    host = tmp_path / "config"
    host.write_text("a file where a directory belongs\n")
    pod = _pod(
        cleanup,
        "never-started",
        _app("app", volume_mounts=(VolumeMount("config", "/etc"),)),
        volumes=(Volume("config", str(host)),),
        restart_policy=RestartPolicy.NEVER,
    )
    options = _options(tmp_path)

    first = _sync([pod], counting, options)

    assert not first.ok
    (failure,) = first.apply_result.failures
    assert isinstance(failure.action, Create)
    assert "app" == failure.action.container
    (created,) = _containers(engine, pod)["app"]
    state = created["State"]
    assert ("created", "0001-01-01T00:00:00Z") == (state["Status"], state["FinishedAt"])
    host.unlink()
    host.mkdir()

    second = _sync([pod], counting, options)

    assert second.ok, _summary(second)
    (create,) = _actions(second, pod)
    assert isinstance(create, Create)
    assert ("app", Reason.NOT_STARTED) == (create.container, create.reason)
    found = _containers(engine, pod)
    assert [False, True] == [_running(engine, c["Id"]) for c in found["app"]]
    assert _running(engine, found["net"][0]["Id"])


class _FailingCreate(CountingRuntime):
    """Refuses the next create of a container whose name starts with ``prefix``, as an
    engine refuses a create (after recording the call)."""

    def __init__(self, inner: DockerRuntime, prefix: str) -> None:
        super().__init__(inner)
        self.prefix = prefix

    def create_container(self, spec: CreateSpec) -> str:
        if self.prefix and spec.name.startswith(self.prefix):
            self.prefix = ""
            self._record("create_container", spec.name)
            raise RuntimeCallError("create", spec.name, "refused for the test")
        return super().create_container(spec)


def test_replaced_container_whose_replacement_create_failed_runs_again(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """restartPolicy Never; the pod is rebuilt (its network image changed), and the app
    container's replacement cannot be created. The stopped old instance exited 0 on
    SIGTERM; a new runtime (a new process) observes it as stopped by podsync, and the
    next sync creates the container instead of stopping the pod's network container."""
    pause2 = f"{PAUSE_IMAGE.rpartition(':')[0]}:restart-{secrets.token_hex(4)}"
    repository, _, tag = pause2.rpartition(":")
    assert engine.api.tag(PAUSE_IMAGE, repository, tag)
    try:
        pod = _pod(cleanup, "replaced", _app("app"), restart_policy=RestartPolicy.NEVER)
        options = _options(tmp_path)
        with DockerRuntime() as inner:
            first = _sync([pod], CountingRuntime(inner), options)
            assert first.ok, _summary(first)
            (old,) = _containers(engine, pod)["app"]

            rebuilt = attrs.evolve(options, network_image=pause2)
            failing = _FailingCreate(inner, "k8s_app")
            second = _sync([pod], failing, rebuilt)

        assert not second.ok
        assert [("Kill", "app"), ("Kill", "net"), ("Create", "net"), ("Create", "app")] == [
            (type(a).__name__, a.container) for a in _actions(second, pod)
        ]
        kill = _actions(second, pod)[0]
        assert isinstance(kill, Kill)
        assert kill.record_stop
        _wait_exited(engine, [old["Id"]])
        assert 0 == engine.api.inspect_container(old["Id"])["State"]["ExitCode"]

        with DockerRuntime() as fresh:
            seen = podsync.observe(fresh, rebuilt.root_dir)
            (mark,) = [c.stopped_by_podsync for c in seen.containers if c.id == old["Id"]]
            assert "pod-rebuild" == mark
            third = _sync([pod], CountingRuntime(fresh), rebuilt)

        assert third.ok, _summary(third)
        (create,) = _actions(third, pod)
        assert isinstance(create, Create)
        assert ("app", Reason.NOT_REPLACED) == (create.container, create.reason)
        found = _containers(engine, pod)
        assert [False, True] == [_running(engine, c["Id"]) for c in found["app"]]
        assert [False, True] == [_running(engine, c["Id"]) for c in found["net"]]
    finally:
        engine.api.remove_image(pause2)


def test_never_pod_whose_network_container_died_is_killed_and_failed(
    engine: docker.DockerClient, cleanup: Cleanup, counting: CountingRuntime, tmp_path: Path
) -> None:
    """restartPolicy Never; the pod's network container is killed on the engine. Docker
    leaves the app container running in the namespace it joined, so podsync must stop
    it: the sync stops it as a failed run (``network-lost``, recorded), creates no new
    network container, and the pod ends Failed - the next sync does nothing (the
    kubelet's computePodActions, step B)."""
    pod = _pod(cleanup, "net-died", _app("app"), restart_policy=RestartPolicy.NEVER)
    options = _options(tmp_path)
    first = _sync([pod], counting, options)
    assert first.ok, _summary(first)
    found = _containers(engine, pod)
    (net,), (app,) = found["net"], found["app"]
    engine.api.kill(net["Id"])
    _wait_exited(engine, [net["Id"]])
    assert _running(engine, app["Id"])

    with DockerRuntime() as fresh:
        second = _sync([pod], CountingRuntime(fresh), options)

    assert second.ok, _summary(second)
    assert [("Kill", "app", Reason.NETWORK_LOST)] == [
        (type(a).__name__, a.container, a.reason) for a in _actions(second, pod)
    ]
    after = _containers(engine, pod)
    assert [net["Id"]] == [c["Id"] for c in after["net"]]
    assert not _running(engine, app["Id"])
    with DockerRuntime() as fresh:
        seen = podsync.observe(fresh, options.root_dir)
        (mark,) = [c.stopped_by_podsync for c in seen.containers if c.id == app["Id"]]
        status = podsync.pod_status(pod, seen.containers)
        third = _sync([pod], CountingRuntime(fresh), options)
    assert "network-lost" == mark
    assert (podsync.PodPhase.FAILED, "failed") == (status.phase, status.state)
    assert [] == _actions(third, pod)
