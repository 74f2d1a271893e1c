"""The etcd source's benchmark (issue 19): from an etcd write to the pod running.

What it measures
================

The time from a write of a host's key (``/registry/hosts/<host>/kubelet``, a value
holding one more pod than before) to that pod's app container running on the engine (the
loop's ``started`` event of it), over ``--writes`` writes (default 50), p50 and p95; and
to podsync's first engine call for the pod done (its network container created: what
the loop adds, without the engine's time to start containers). Twice, in the same run:

* **watched** (``podsync run etcd://...``): the loop watches the key and syncs at once
  on a change. Target: p95 at most 1 s.
* **read every source period** (the seed's period-driven design: the key read again
  every ``--source-period``, default the seed's 20 s; ``--seed-writes`` writes, default
  10, spread over one period, since the phase decides the wait).

etcd is Debian's ``etcd`` started on 127.0.0.1 for the run (``tests/support/etcd_server.py``);
the loop runs in this process (``podsync.Reconciler`` in its thread) against the engine
of ``DOCKER_HOST`` with the test images (``python -m tests.support.engine images``), its pods
in a namespace of their own, deletions off. Everything it made is removed at the end.
This is a benchmark script, not a test.

Run it from the repository root::

    python -m benchmarks.bench_etcd
    python -m benchmarks.bench_etcd --writes 10 --seed-writes 4 --source-period 5   # quick
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import docker

import podsync
from podsync.docker import DockerRuntime
from podsync.labels import LABEL_CONTAINER, LABEL_POD_NAME, LABEL_POD_NAMESPACE
from tests.support.etcd_server import EtcdServer

PAUSE_IMAGE = "podsync-test/pause:latest"
APP_IMAGE = "podsync-test/busybox:latest"
SLEEPER = ["/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1 & wait $!; done"]
HOST = "bench-node"
KEY = f"/registry/hosts/{HOST}/kubelet"


def value(names: Sequence[str], namespace: str) -> str:
    """The key's value: a JSON list of pods, as ``podsync publish`` writes it."""
    return json.dumps(
        [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {
                    "terminationGracePeriodSeconds": 1,
                    "containers": [
                        {
                            "name": "app",
                            "image": APP_IMAGE,
                            "imagePullPolicy": "Never",
                            "command": SLEEPER,
                        }
                    ],
                },
            }
            for name in names
        ],
        indent=2,
    )


def running_apps(client: docker.DockerClient, namespace: str) -> set[str]:
    found = client.api.containers(
        filters={"label": [f"{LABEL_POD_NAMESPACE}={namespace}", f"{LABEL_CONTAINER}=app"]}
    )
    return {c["Labels"][LABEL_POD_NAME] for c in found}


def wait_until(condition: Callable[[], Any], timeout: float, pause: float = 0.01) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(pause)
    raise SystemExit(f"gave up after {timeout:g}s")


class Times:
    """When podsync first acted on each pod (its first engine call done) and when its app
    container's start returned (the pod running), from the loop's apply events."""

    def __init__(self) -> None:
        self.first: dict[str, float] = {}
        self.running: dict[str, float] = {}
        self.lock = threading.Lock()

    def on_event(self, event: podsync.Event) -> None:
        now = time.monotonic()
        name = event.pod.rpartition("/")[2]
        with self.lock:
            self.first.setdefault(name, now)
            if event.kind == podsync.EventKind.STARTED and event.container == "app":
                self.running.setdefault(name, now)


def make_loop(
    source: str, runtime: Any, root: Path, times: Times, *, source_period: float, watched: bool
) -> podsync.Reconciler:
    options = podsync.PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(root),
        allow_deletions=False,
    )
    loop = podsync.Reconciler(
        [source],
        runtime,
        options,
        sync_period=10.0,
        source_period=source_period,
        follow_events=False,
        probe=False,
        on_event=times.on_event,
    )
    if not watched:
        # The seed's design: the key read every source period, as a file is polled.
        loop._sources.follows = lambda name: False  # type: ignore[method-assign]
    return loop


def latencies(
    client: docker.DockerClient,
    etcd: EtcdServer,
    work: Path,
    writes: int,
    *,
    source_period: float,
    watched: bool,
) -> tuple[list[float], list[float]]:
    """Seconds from each write to podsync's first action on its new pod, and to the
    pod's app running."""
    namespace = f"bench-{uuid.uuid4().hex[:8]}"
    names: list[str] = []
    etcd.put(KEY, value(names, namespace))
    written_at: dict[str, float] = {}
    times = Times()
    try:
        with (
            DockerRuntime() as runtime,
            make_loop(
                etcd.url(KEY),
                runtime,
                work / "root",
                times,
                source_period=source_period,
                watched=watched,
            ),
        ):
            time.sleep(1.0)  # the first read
            for i in range(writes):
                names.append(f"p{i}")
                written_at[names[-1]] = time.monotonic()
                etcd.put(KEY, value(names, namespace))
                if watched:
                    # One write at a time: each change alone, as an operator makes it.
                    wait_until(lambda n=names[-1]: n in times.running, 60, 0.01)
                else:
                    # Spread over one period: the phase decides the wait.
                    time.sleep(source_period / writes)
            wait_until(lambda: set(names) <= set(times.running), 3 * source_period + 60, 0.1)
            assert set(names) <= running_apps(client, namespace)
    finally:
        for c in client.api.containers(
            all=True, filters={"label": f"{LABEL_POD_NAMESPACE}={namespace}"}
        ):
            client.api.remove_container(c["Id"], force=True)
    first = [times.first[n] - written_at[n] for n in names]
    running = [times.running[n] - written_at[n] for n in names]
    return first, running


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=50)
    parser.add_argument("--seed-writes", type=int, default=10)
    parser.add_argument("--source-period", type=float, default=20.0)
    args = parser.parse_args(argv)
    client = docker.from_env()
    client.ping()
    print(f"engine {os.environ.get('DOCKER_HOST', '(default)')}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="podsync-bench-etcd-") as tmp:
        work = Path(tmp)
        etcd = EtcdServer(work / "etcd")
        etcd.start()
        try:
            print("| etcd write to | pod running p50 | p95 | first engine call p50 | p95 | n |")
            print("| --- | --- | --- | --- | --- | --- |")
            for label, watched, writes in (
                ("watched (podsync run etcd://...)", True, args.writes),
                (
                    f"read every {args.source_period:g} s (the seed's period)",
                    False,
                    args.seed_writes,
                ),
            ):
                first, running = latencies(
                    client,
                    etcd,
                    work,
                    writes,
                    source_period=args.source_period,
                    watched=watched,
                )
                print(
                    f"| {label} | {statistics.median(running):.2f} s | "
                    f"{percentile(running, 0.95):.2f} s | {statistics.median(first):.2f} s | "
                    f"{percentile(first, 0.95):.2f} s | {len(running)} |"
                )
        finally:
            etcd.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
