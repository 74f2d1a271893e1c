"""A whole pod stops within one grace period on a real engine, sidecars last.

The modern kubelet kills a pod's containers at once (killContainersWithSyncResult,
kuberuntime_manager.go) and its sidecars in their turn (newTerminationOrdering,
kuberuntime_termination_order.go), every kill within the pod's grace period. Here the
processes ignore SIGTERM (busybox ``sh`` with ``trap '' TERM``, as PID 1), so each stop
lasts its whole timeout and Docker kills the process with SIGKILL (exit 137): the
times show how the stops were run.

Network rule (``tests/support/engine.py``): network mode ``none`` and ``container:<id>``
only. Deletions are limited to this test's own source (the engine is shared).
"""

from __future__ import annotations

import datetime
import time
import uuid
from pathlib import Path
from typing import Any

import docker

import podsync
from podsync import Kill, Pod, SyncResult, parse_pods
from podsync.actions._options import NODE_SCOPE, PlanOptions
from podsync.docker import DockerRuntime
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup

# A process that ignores SIGTERM: only the SIGKILL after the stop's timeout ends it.
STUBBORN = "trap '' TERM; while :; do sleep 1; done"
# One that exits 0 at once on SIGTERM.
SERVE = "trap 'exit 0' TERM; while :; do sleep 1; done"


def _container(name: str, process: str, *, sidecar: bool = False) -> str:
    policy = ", restartPolicy: Always" if sidecar else ""
    return (
        f"  - {{name: {name}, image: {TEST_IMAGE}, imagePullPolicy: Never{policy},\n"
        f'     command: [/bin/sh, -c, "{process}"]}}\n'
    )


def _load(
    cleanup: Cleanup, apps: list[str], sidecars: list[str], *, apps_exit: bool = False
) -> tuple[Pod, str]:
    """The pod, with a source of its own (the only one deletions may touch)."""
    uid = str(uuid.uuid4())
    text = (
        "apiVersion: v1\nkind: Pod\n"
        f"metadata: {{name: stop-{uid[:6]}, uid: {uid}}}\n"
        "spec:\n  terminationGracePeriodSeconds: 3\n"
    )
    if sidecars:
        text += "  initContainers:\n" + "".join(
            _container(n, STUBBORN, sidecar=True) for n in sidecars
        )
    app_process = SERVE if apps_exit else STUBBORN
    text += "  containers:\n" + "".join(_container(n, app_process) for n in apps)
    source = f"t{uid[:8]}"
    (pod,) = parse_pods(text, source=source)
    cleanup.add_label(f"{podsync.labels.LABEL_POD_UID}={pod.uid}")
    return pod, source


def _options(tmp_path: Path, source: str) -> PlanOptions:
    return PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        # The node scope's rule (a pod that is not desired goes), narrowed to this
        # test's source: the engine is shared.
        scope=NODE_SCOPE,
        allow_deletions=True,
        ready_sources=frozenset({source}),
    )


def _start(runtime: DockerRuntime, pod: Pod, options: PlanOptions) -> None:
    """Sync until every container of the pod runs (sidecars start one per sync)."""
    for _ in range(6):
        result = podsync.sync([pod], runtime, options=options)
        assert result.ok, result.apply_result.summary()
        if not result.plan.has_changes:
            return
    raise AssertionError("the pod did not settle")


def _run_and_remove(pod: Pod, source: str, tmp_path: Path) -> tuple[SyncResult, float]:
    """Start ``pod``, then sync without it: the sync that stops it, and how long it took
    (it succeeded)."""
    options = _options(tmp_path, source)
    with DockerRuntime() as runtime:
        _start(runtime, pod, options)
        started = time.monotonic()
        result = podsync.sync([], runtime, options=options)
        elapsed = time.monotonic() - started
    assert result.ok, result.apply_result.summary()
    return result, elapsed


def _states(engine: docker.DockerClient, pod: Pod) -> dict[str, dict[str, Any]]:
    """Each container's inspected ``State``, by pod container name."""
    listed = engine.api.containers(
        all=True, filters={"label": f"{podsync.labels.LABEL_POD_UID}={pod.uid}"}
    )
    return {
        entry["Labels"][podsync.labels.LABEL_CONTAINER]: engine.api.inspect_container(entry["Id"])[
            "State"
        ]
        for entry in listed
    }


def _finished(state: dict[str, Any]) -> float:
    return datetime.datetime.fromisoformat(state["FinishedAt"]).timestamp()


def test_three_containers_that_ignore_sigterm_stop_in_one_grace_period(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """Three containers with 3 s of grace stop in about 3 s, not 9 s: their stops
    overlap. Each was killed after its grace period (exit 137), at about one time."""
    pod, source = _load(cleanup, ["app", "cache", "worker"], [])

    result, elapsed = _run_and_remove(pod, source, tmp_path)

    kills = [a for a in result.plan.actions if isinstance(a, Kill)]
    assert {("app", True), ("cache", True), ("worker", True), ("net", False)} == {
        (k.container, k.concurrent) for k in kills
    }
    states = _states(engine, pod)
    apps = [states[name] for name in ("app", "cache", "worker")]
    assert [137, 137, 137] == [s["ExitCode"] for s in apps]
    ends = [_finished(s) for s in apps]
    assert max(ends) - min(ends) < 1.5, ends
    # One grace period (3 s) and the engine's work; one after the other took 9 s and more.
    assert 2.5 < elapsed < 6.0, elapsed


def test_sidecars_stop_after_the_app_containers_last_one_first(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    """The sidecars get SIGTERM only once the app containers exited, the last one in
    the spec first, each within what is left of the grace period. The app containers
    exit on SIGTERM; the sidecars ignore it. FinishedAt shows the order: the apps at
    once, ``proxy`` after what is left of its 3 s of grace, ``logs`` - which waited
    for it until no grace was left - after the 2 s minimum."""
    pod, source = _load(cleanup, ["app", "worker"], ["logs", "proxy"], apps_exit=True)

    _, elapsed = _run_and_remove(pod, source, tmp_path)

    states = _states(engine, pod)
    assert {0} == {states[n]["ExitCode"] for n in ("app", "worker")}
    assert {137} == {states[n]["ExitCode"] for n in ("logs", "proxy")}
    apps_done = max(_finished(states["app"]), _finished(states["worker"]))
    proxy, logs = _finished(states["proxy"]), _finished(states["logs"])
    # What is left of the 3 s once the apps' stops returned, in whole seconds (on a
    # loaded engine their stops take a second or more): 2 or 3 s.
    assert 1.5 < proxy - apps_done < 4.5, (apps_done, proxy)
    assert 1.5 < logs - proxy < 4.0, (proxy, logs)
    assert _finished(states["net"]) >= logs
    # 3 s + 2 s and the engine's work; one after the other took 3 s + 3 s more.
    assert 4.5 < elapsed < 10.0, elapsed
