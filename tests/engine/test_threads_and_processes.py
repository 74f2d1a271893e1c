"""docs/library.md's "Threads and processes" on the real engine: two syncs of the same pods at
once - two threads sharing one ``DockerRuntime``, then two processes with a runtime each
- round after round while the pods change and go. No exception escapes ``sync`` (a lost
race is a failed result: a name taken by the other sync, a network container the other
replaced), and the sync that follows leaves exactly one running instance of every
container, and nothing more to do. Two removals of one container at once both succeed,
as a removal of a missing container does.

Deletions are allowed for this test's own source only (the engine is shared: see
``tests/engine/test_sync.py``).
"""

from __future__ import annotations

import multiprocessing
import threading
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import docker

import podsync
from podsync import NODE_SCOPE, PlanOptions, Pod, SyncResult, parse_pods
from podsync.actions._actions import CreateSpec
from podsync.actions._options import GCPolicy
from podsync.docker import DockerRuntime
from podsync.labels import LABEL_CONTAINER, LABEL_POD_UID
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, Cleanup

SERVE = "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"


def _pods(source: str, names: Sequence[str], version: str = "1") -> tuple[Pod, ...]:
    text = "\n---\n".join(
        f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: {TEST_IMAGE}
    imagePullPolicy: Never
    command: ["/bin/sh", "-c", "{SERVE}"]
    env:
    - name: VERSION
      value: "{version}"
"""
        for name in names
    )
    return parse_pods(text, source=source)


def _options(tmp_path: Path, source: str) -> PlanOptions:
    return PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(tmp_path / "root"),
        allow_deletions=True,
        # The node's rule, narrowed to this test's source: the pod that leaves goes.
        scope=NODE_SCOPE,
        ready_sources=frozenset({source}),
        gc=GCPolicy(min_age=0),
        stop_timeout=1,
    )


def _running(engine: docker.DockerClient, source: str) -> dict[tuple[str, str], int]:
    """How many running instances each pod container of ``source`` has."""
    counts: dict[tuple[str, str], int] = {}
    for c in engine.api.containers(filters={"label": f"io.podsync.pod.source={source}"}):
        key = (c["Labels"][LABEL_POD_UID], c["Labels"][LABEL_CONTAINER])
        counts[key] = counts.get(key, 0) + 1
    return counts


def _rounds(cleanup: Cleanup, source: str) -> list[tuple[Pod, ...]]:
    """Both pods made, synced again, one changed (replaced), one gone; each registered
    for cleanup by its uid (its containers, state volume and stop records)."""
    made = _pods(source, ["ta", "tb"])
    for pod in made:
        cleanup.add_label(f"{LABEL_POD_UID}={pod.uid}")
    return [made, made, _pods(source, ["ta", "tb"], version="2"), _pods(source, ["tb"])]


def _converges(
    engine: docker.DockerClient, pods: tuple[Pod, ...], options: PlanOptions, source: str
) -> None:
    with DockerRuntime() as runtime:
        settled = podsync.sync(pods, runtime, options=options)
        assert settled.ok, settled.apply_result.summary()
        again = podsync.sync(pods, runtime, options=options)
    assert not again.plan.has_changes, again.plan.describe()
    want = {(p.uid, c): 1 for p in pods for c in ("net", "app")}
    assert want == _running(engine, source)


def test_two_threads_sharing_one_runtime_sync_the_same_pods_at_once(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    source = f"thr{uuid.uuid4().hex[:8]}"
    options = _options(tmp_path, source)

    with DockerRuntime() as shared:
        for pods in _rounds(cleanup, source):
            barrier = threading.Barrier(2)

            def one(
                _: int, pods: tuple[Pod, ...] = pods, barrier: threading.Barrier = barrier
            ) -> SyncResult:
                barrier.wait()
                return podsync.sync(pods, shared, options=options)

            with ThreadPoolExecutor(2) as pool:
                results = list(pool.map(one, range(2)))
            assert all(isinstance(r, SyncResult) for r in results)
            _converges(engine, pods, options, source)


def _sync_in_a_process(arguments: tuple[tuple[Pod, ...], PlanOptions, float]) -> bool:
    """One sync in a worker process, on a runtime of its own, begun at ``start``."""
    pods, options, start = arguments
    time.sleep(max(0.0, start - time.time()))
    with DockerRuntime() as runtime:
        return podsync.sync(pods, runtime, options=options).ok


def test_two_processes_sync_the_same_pods_at_once(
    engine: docker.DockerClient, cleanup: Cleanup, tmp_path: Path
) -> None:
    source = f"prc{uuid.uuid4().hex[:8]}"
    options = _options(tmp_path, source)

    with multiprocessing.get_context("spawn").Pool(2) as pool:
        for pods in _rounds(cleanup, source):
            # Both begin at one moment, once their process has imported podsync.
            start = time.time() + 1.5
            work = [(pods, options, start)] * 2
            # An exception in either sync would come out of map: each gives a result.
            assert 2 == len(pool.map(_sync_in_a_process, work, chunksize=1))
            _converges(engine, pods, options, source)


def test_two_removals_of_one_container_at_once_both_succeed(
    engine: docker.DockerClient, cleanup: Cleanup
) -> None:
    """Docker refuses the second of two removals at once ("removal of container ... is
    already in progress"); the runtime waits for the first instead, so both succeed
    once the container is gone (each time: two syncs at once remove the same ones)."""
    with DockerRuntime() as runtime:
        for _ in range(5):
            spec = CreateSpec(f"rm-{uuid.uuid4().hex[:8]}", TEST_IMAGE, network="none")
            container_id = cleanup.add(runtime.create_container(spec))
            barrier = threading.Barrier(2)

            def remove(
                _: int, container_id: str = container_id, barrier: threading.Barrier = barrier
            ) -> None:
                barrier.wait()
                runtime.remove_container(container_id)

            with ThreadPoolExecutor(2) as pool:
                list(pool.map(remove, range(2)))
            assert [] == engine.api.containers(all=True, filters={"id": container_id})
