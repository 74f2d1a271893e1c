"""Faults on the real engine: the world changes between plan and apply, two syncs race,
and the engine itself restarts in the middle of an apply.

In every case apply reports what failed (and only the pods that failed), touches
nothing outside its plan, and the next sync converges.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

import podsync
from podsync import Container, Pod, PullPolicy, Wait
from podsync.actions._options import PlanOptions
from podsync.docker import DockerRuntime
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup, run_labels

SERVE = ("/bin/sh", "-c", "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done")


def _app(name: str) -> Container:
    return Container(name, TEST_IMAGE, command=SERVE, image_pull_policy=PullPolicy.NEVER)


def _pod(cleanup: Cleanup, *names: str) -> Pod:
    pod = Pod(f"f{uuid.uuid4().hex[:8]}", tuple(_app(n) for n in names))
    cleanup.add_label(f"io.podsync.pod.uid={pod.uid}")
    return pod


def _options(tmp_path: Path) -> PlanOptions:
    # Deletions off: other sessions may share this engine, and these tests never need
    # to stop a pod they did not describe.
    return PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        allow_deletions=False,
        stop_timeout=1,
    )


def _instances(engine: docker.DockerClient, pod: Pod) -> dict[str, list[dict[str, object]]]:
    """The pod's containers on the engine, running ones, by container name."""
    found: dict[str, list[dict[str, object]]] = {}
    for c in engine.api.containers(filters={"label": f"io.podsync.pod.uid={pod.uid}"}):
        found.setdefault(c["Labels"]["io.podsync.container.name"], []).append(c)
    return found


def _converged(pods: list[Pod], options: PlanOptions) -> podsync.Plan:
    with DockerRuntime() as runtime:
        seen = podsync.observe(runtime, options.root_dir)
    return podsync.plan(
        pods,
        seen.containers,
        images=seen.images,
        pod_dirs=seen.pod_dirs,
        now=time.time(),
        options=options,
    )


def _changes(p: podsync.Plan) -> list[str]:
    return [a.message for a in p.actions if not isinstance(a, Wait)]


def test_container_removed_between_plan_and_apply(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """A container the plan stops is removed by someone else before apply: the stop
    counts as done (it is gone either way), and the rest of the plan goes on."""
    pod = _pod(cleanup, "a", "b")
    options = _options(tmp_path)
    with DockerRuntime() as runtime:
        assert podsync.sync([pod], runtime, options=options).ok
        smaller = Pod(pod.name, pod.containers[:1], uid=pod.uid)
        seen = podsync.observe(runtime, options.root_dir)
        p = podsync.plan(
            [smaller], seen.containers, images=seen.images, now=time.time(), options=options
        )
        (b,) = _instances(engine, pod)["b"]
        engine.api.remove_container(b["Id"], force=True)

        result = podsync.apply(p, runtime)

    assert result.ok, result.summary()
    assert [] == _changes(_converged([smaller], options))


def test_network_container_killed_between_plan_and_apply(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """The network container dies after the plan that adds a container to it: the start
    fails, apply reports that pod (and only that pod), and the next sync rebuilds it."""
    pod = _pod(cleanup, "a")
    other = _pod(cleanup, "a")
    options = _options(tmp_path)
    with DockerRuntime() as runtime:
        assert podsync.sync([pod, other], runtime, options=options).ok
        grown = Pod(pod.name, (*pod.containers, _app("b")), uid=pod.uid)
        other_grown = Pod(other.name, (*other.containers, _app("b")), uid=other.uid)
        seen = podsync.observe(runtime, options.root_dir)
        p = podsync.plan(
            [grown, other_grown],
            seen.containers,
            images=seen.images,
            now=time.time(),
            options=options,
        )
        (net,) = _instances(engine, pod)["net"]
        engine.api.kill(net["Id"])

        result = podsync.apply(p, runtime)

        assert {grown.key} == set(result.failed_pods)
        again = podsync.sync([grown, other_grown], runtime, options=options)
        assert again.ok, again.apply_result.summary()
    assert [] == _changes(_converged([grown, other_grown], options))


def test_two_syncs_at_once_leave_no_duplicates(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """Two syncs of the same pods race on one engine: container names are a function of
    the plan, so the loser's creates meet a name conflict instead of making a second
    instance, and adopt the winner's container (same pod uid, same spec hash) instead
    of failing. Both syncs succeed, every pod container has exactly one running
    instance, and the next sync converges."""
    pods = [_pod(cleanup, "a", "b") for _ in range(3)]
    options = _options(tmp_path)
    results: list[podsync.SyncResult] = []
    barrier = threading.Barrier(2)

    def one() -> None:
        with DockerRuntime() as runtime:
            barrier.wait()
            results.append(podsync.sync(pods, runtime, options=options))

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)

    assert 2 == len(results)
    assert [True, True] == [r.ok for r in results], [
        r.error for s in results for r in s.apply_result.results if r.error
    ]
    for pod in pods:
        found = _instances(engine, pod)
        assert {"net": 1, "a": 1, "b": 1} == {
            name: len(found.get(name, [])) for name in ("net", "a", "b")
        }
    with DockerRuntime() as runtime:
        assert podsync.sync(pods, runtime, options=options).ok
    assert [] == _changes(_converged(pods, options))


# --- the engine restarts in the middle of an apply ------------------------------------------

RESTART_ENV = "PODSYNC_TEST_ENGINE_RESTART"


def _dockerd_pid() -> int | None:
    out = subprocess.run(["pidof", "dockerd"], capture_output=True, text=True, check=False)
    pids = out.stdout.split()
    return int(pids[0]) if len(pids) == 1 else None


def _wait_for_engine(deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            with DockerRuntime() as runtime:
                runtime.ping()
            return
        except podsync.PodsyncError:
            time.sleep(0.2)
    raise AssertionError("the engine did not come back")


@pytest.fixture
def restartable_engine() -> Iterator[None]:
    """Only where this test may stop the engine: CI (``.ci/run`` sets the variable), as
    root, with the one dockerd on the default socket that ``.ci/test`` started."""
    if os.environ.get(RESTART_ENV) != "1":
        pytest.skip(f"stops and restarts dockerd: set {RESTART_ENV}=1 (CI does) to run it")
    if os.geteuid() != 0 or _dockerd_pid() is None or os.environ.get("DOCKER_HOST"):
        pytest.fail("the engine-restart test needs root and one local dockerd")
    yield
    if _dockerd_pid() is None:  # leave an engine behind whatever happened
        _start_dockerd()
        _wait_for_engine(time.monotonic() + 60)


def _start_dockerd() -> None:
    """Start dockerd as .ci/test does; it outlives the test (its own session)."""
    fd, _ = tempfile.mkstemp(prefix="podsync-dockerd-", suffix=".log")
    try:
        # setsid -f forks dockerd into a session of its own and returns at once, so no
        # child process of this one is left to wait for.
        subprocess.run(
            ["setsid", "-f", "dockerd", "--bridge=none", "--iptables=false", "--ip-masq=false"],
            stdout=fd,
            stderr=fd,
            stdin=subprocess.DEVNULL,
            check=True,
        )
    finally:
        os.close(fd)


@pytest.mark.docker_only(reason="stops and restarts dockerd itself")
def test_engine_restart_during_apply(
    restartable_engine: None, engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """dockerd stops while a plan of many pods is applied: the actions that could not
    reach it are reported failed (nothing raises), and once it is back the next sync
    converges."""
    pods = [_pod(cleanup, "a") for _ in range(12)]
    options = _options(tmp_path)
    events: list[podsync.Event] = []
    started = threading.Event()

    def on_event(event: podsync.Event) -> None:
        events.append(event)
        if event.kind == "started":
            started.set()

    def stop_engine() -> None:
        started.wait(30)
        pid = _dockerd_pid()
        assert pid is not None
        os.kill(pid, signal.SIGTERM)
        # dockerd stops its containers before it exits (each within its stop timeout).
        deadline = time.monotonic() + 60
        while _dockerd_pid() is not None and time.monotonic() < deadline:
            time.sleep(0.1)
        _start_dockerd()

    killer = threading.Thread(target=stop_engine)
    killer.start()
    with DockerRuntime() as runtime:
        result = podsync.sync(pods, runtime, options=options, on_event=on_event, workers=2)
    killer.join(60)

    assert not result.ok
    assert result.apply_result.failures
    _wait_for_engine(time.monotonic() + 60)
    for _ in range(3):  # containers of the stopped engine come back exited: resync
        with DockerRuntime() as runtime:
            if podsync.sync(pods, runtime, options=options).ok and not _changes(
                _converged(pods, options)
            ):
                break
        time.sleep(1)
    assert [] == _changes(_converged(pods, options))
    shutil.rmtree(tmp_path / "root", ignore_errors=True)
    assert run_labels()  # the cleanup fixture removes everything labelled for this run
