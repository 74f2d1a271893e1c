"""The continuous loop's benchmark (issue 17): restart latency and idle cost.

What it measures
================

* **Restart latency**: the time from ``docker kill`` of a pod's container (restart
  policy Always, its first restart: no crash-loop back-off) to its replacement
  running, over ``--kills`` pods (each killed once), p50 and p95. Twice, in the same
  run: with the loop as it is (the engine's ``die`` event triggers a sync of the pod),
  and with the seed's design (no events: the restart waits for the next sync period,
  ``--sync-period``, default the seed's 10 s). Target: p95 at most 1 s.
* **Idle cost**: ``--pods`` pods (default 50) at steady state for ``--idle`` seconds
  (default 60): the CPU seconds the loop used (this process's own CPU time, in which
  nothing else runs; target: at most 1 % of one core) and the engine API calls per
  sync period (target: one list call, and nothing for the unchanged sources).

The loop runs in this process (``podsync.Reconciler`` in its thread) against the engine
of ``DOCKER_HOST`` with the test images (``python -m tests.support.engine images``); its pods
are in a namespace of their own, and deletions are off (the engine may be shared).
Everything it made is removed at the end. This is a benchmark script, not a test.

Run it from the repository root::

    python -m benchmarks.bench_loop                 # both parts
    python -m benchmarks.bench_loop --kills 5 --idle 20 --pods 10   # a quick look
    python -m benchmarks.bench_loop --plot loop.svg  # and draw the restart latencies
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import docker

import podsync
from benchmarks import svgchart
from podsync.docker import DockerRuntime
from podsync.labels import LABEL_CONTAINER, LABEL_POD_NAME, LABEL_POD_NAMESPACE

PAUSE_IMAGE = "podsync-test/pause:latest"
APP_IMAGE = "podsync-test/busybox:latest"
TARGET_P95 = 1.0  # seconds, from the issue
SLEEPER = '["/bin/sh", "-c", "trap \'exit 0\' TERM; while :; do sleep 1 & wait $!; done"]'


def pod_yaml(name: str, namespace: str) -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: {APP_IMAGE}
    imagePullPolicy: Never
    command: {SLEEPER}
"""


class Counting:
    """A runtime that counts the calls made to it, by name."""

    def __init__(self, inner: DockerRuntime) -> None:
        self.inner = inner
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def counted(*args: Any, **kwargs: Any) -> Any:
            with self.lock:
                self.counts[name] = self.counts.get(name, 0) + 1
            return attr(*args, **kwargs)

        return counted

    def snapshot(self) -> dict[str, int]:
        with self.lock:
            return dict(self.counts)


def running_apps(client: docker.DockerClient, namespace: str) -> dict[str, str]:
    """pod name -> id of its running app container."""
    found = client.api.containers(
        filters={"label": [f"{LABEL_POD_NAMESPACE}={namespace}", f"{LABEL_CONTAINER}=app"]}
    )
    return {c["Labels"][LABEL_POD_NAME]: c["Id"] for c in found}


def replaced(
    client: docker.DockerClient, namespace: str, name: str, cid: str
) -> Callable[[], bool]:
    """Whether pod ``name``'s app runs again, in another container than ``cid``."""
    return lambda: running_apps(client, namespace).get(name) not in (None, cid)


def wait_until(condition: Callable[[], Any], timeout: float, pause: float = 0.01) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(pause)
    raise SystemExit(f"gave up after {timeout:g}s")


def make_loop(
    directory: Path, runtime: Any, root: Path, *, sync_period: float, events: bool
) -> podsync.Reconciler:
    options = podsync.PlanOptions(
        network_mode="none",
        network_image=PAUSE_IMAGE,
        root_dir=str(root),
        allow_deletions=False,
    )
    return podsync.Reconciler(
        [str(directory)],
        runtime,
        options,
        sync_period=sync_period,
        source_period=sync_period * 2,
        follow_events=events,
        probe=False,
    )


def restart_latencies(
    client: docker.DockerClient, work: Path, kills: int, *, sync_period: float, events: bool
) -> list[float]:
    """Seconds from each kill to the replacement running, one kill per pod."""
    namespace = f"bench-{uuid.uuid4().hex[:8]}"
    pods = work / namespace
    pods.mkdir()
    for i in range(kills):
        (pods / f"p{i}.yaml").write_text(pod_yaml(f"p{i}", namespace))
    latencies: list[float] = []
    try:
        with (
            DockerRuntime() as runtime,
            make_loop(pods, runtime, work / "root", sync_period=sync_period, events=events),
        ):
            ids = wait_until(
                lambda: (
                    (found := running_apps(client, namespace)) and len(found) == kills and found
                ),
                timeout=60 + 5 * kills,
                pause=0.2,
            )
            if events:
                # One at a time: each restart alone, as a user meets it.
                for name, cid in sorted(ids.items()):
                    killed = time.monotonic()
                    client.api.kill(cid)
                    wait_until(replaced(client, namespace, name, cid), 60)
                    latencies.append(time.monotonic() - killed)
            else:
                # The seed's restarts wait for the period: spread the kills over one
                # period (the phase decides the wait), then wait for all of them.
                killed_at: dict[str, float] = {}
                for name, cid in sorted(ids.items()):
                    killed_at[name] = time.monotonic()
                    client.api.kill(cid)
                    time.sleep(sync_period / kills)
                pending = dict(ids)
                deadline = time.monotonic() + 3 * sync_period + 30
                while pending and time.monotonic() < deadline:
                    now_running = running_apps(client, namespace)
                    for name, cid in list(pending.items()):
                        if now_running.get(name) not in (None, cid):
                            latencies.append(time.monotonic() - killed_at[name])
                            del pending[name]
                    time.sleep(0.02)
    finally:
        remove_namespace(client, namespace)
    return latencies


def idle_cost(
    client: docker.DockerClient, work: Path, pods: int, seconds: float, sync_period: float
) -> tuple[float, dict[str, int], float]:
    """(CPU seconds, runtime calls, sync periods) over ``seconds`` at steady state."""
    namespace = f"bench-{uuid.uuid4().hex[:8]}"
    directory = work / namespace
    directory.mkdir()
    for i in range(pods):
        (directory / f"p{i}.yaml").write_text(pod_yaml(f"p{i}", namespace))
    try:
        with DockerRuntime() as inner:
            runtime = Counting(inner)
            with make_loop(directory, runtime, work / "root", sync_period=sync_period, events=True):
                wait_until(
                    lambda: len(running_apps(client, namespace)) == pods,
                    timeout=60 + 3 * pods,
                    pause=0.5,
                )
                time.sleep(sync_period)  # the last creations settle
                before_calls = runtime.snapshot()
                before_cpu = time.process_time()
                time.sleep(seconds)
                cpu = time.process_time() - before_cpu
                after_calls = runtime.snapshot()
    finally:
        remove_namespace(client, namespace)
    calls = {k: after_calls.get(k, 0) - before_calls.get(k, 0) for k in after_calls}
    return cpu, {k: v for k, v in calls.items() if v}, seconds / sync_period


def remove_namespace(client: docker.DockerClient, namespace: str) -> None:
    for c in client.api.containers(
        all=True, filters={"label": f"{LABEL_POD_NAMESPACE}={namespace}"}
    ):
        client.api.remove_container(c["Id"], force=True)


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def plot(
    restarts: Sequence[tuple[str, Sequence[float], bool]],
    sync_period: float,
    notes: Sequence[str] = (),
) -> str:
    """The ``--plot`` figure: the restart latency of each design, measured in the same
    run (``restarts``: label, seconds of each restart, whether it is the reference -
    the seed's design), as a bar to the p50 with a whisker on to the p95, beside the
    target (p95 at most 1 s) and the sync period."""
    bars = tuple(
        svgchart.Bar(
            label,
            statistics.median(got),
            statistics.median(got),
            percentile(got, 0.95),
            f"p50 {statistics.median(got):.2f} s, p95 {percentile(got, 0.95):.2f} s, n {len(got)}",
            reference,
        )
        for label, got, reference in restarts
    )
    chart = svgchart.BarChart(
        "Restart after docker kill (policy Always, first restart: no back-off)",
        svgchart.Axis(
            "seconds from the kill to the replacement running (bar: p50; whisker: to p95)",
            format=svgchart.seconds,
        ),
        (svgchart.BarGroup("", bars),),
        (
            svgchart.Rule(TARGET_P95, f"target p95 {TARGET_P95:g} s"),
            svgchart.Rule(sync_period, f"sync period {sync_period:g} s"),
        ),
    )
    desc = "Restart latency: " + "; ".join(
        f"{label}: p50 {statistics.median(got):.2f} s, p95 {percentile(got, 0.95):.2f} s"
        for label, got, _ in restarts
    )
    return svgchart.figure("podsync loop benchmark", desc + ".", [chart], notes)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--pods", type=int, default=50)
    parser.add_argument("--idle", type=float, default=60.0, help="seconds at steady state")
    parser.add_argument("--sync-period", type=float, default=10.0)
    parser.add_argument("--skip-restart", action="store_true")
    parser.add_argument("--skip-idle", action="store_true")
    parser.add_argument(
        "--plot", metavar="FILE.svg", help="also draw the restart latencies as an SVG chart"
    )
    args = parser.parse_args(argv)
    if args.plot and args.skip_restart:
        parser.error("--plot draws the restart latencies: it cannot go with --skip-restart")
    client = docker.from_env()
    client.ping()
    print(f"engine {os.environ.get('DOCKER_HOST', '(default)')}, {os.cpu_count()} CPUs")
    restarts: list[tuple[str, Sequence[float], bool]] = []
    idle = ""
    with tempfile.TemporaryDirectory(prefix="podsync-bench-loop-") as tmp:
        work = Path(tmp)
        if not args.skip_restart:
            print("| restart after docker kill | p50 | p95 | n |")
            print("| --- | --- | --- | --- |")
            for label, events in (
                ("engine events (podsync run)", True),
                (f"next sync period ({args.sync_period:g} s, the seed's design)", False),
            ):
                got = restart_latencies(
                    client, work, args.kills, sync_period=args.sync_period, events=events
                )
                restarts.append((label, got, not events))
                print(
                    f"| {label} | {statistics.median(got):.2f} s | "
                    f"{percentile(got, 0.95):.2f} s | {len(got)} |"
                )
        if not args.skip_idle:
            cpu, calls, periods = idle_cost(client, work, args.pods, args.idle, args.sync_period)
            share = 100 * cpu / args.idle
            per_period = ", ".join(f"{k} {v / periods:.2f}" for k, v in sorted(calls.items()))
            idle = (
                f"idle: {args.pods} pods for {args.idle:g} s: {cpu:.2f} CPU s "
                f"({share:.2f} % of one core); calls per sync period: {per_period}"
            )
            print(idle)
    if args.plot:
        notes = svgchart.run_notes("benchmarks.bench_loop", sys.argv[1:] if argv is None else argv)
        svgchart.save(
            args.plot, plot(restarts, args.sync_period, [idle, *notes] if idle else notes)
        )
        print(f"chart written to {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
