"""A full host under churn (issue 33): ``podsync run`` with Kubernetes' default max-pods.

What it measures
================

``podsync run`` runs as a real process (``python -m podsync run DIR``) on a directory of
``--pods`` pod files (default 110, Kubernetes' default ``maxPods``), each pod two busybox
``sleep`` containers (``a`` and ``b``) beside its network container. It talks to the
engine through a small counting proxy of the engine's unix socket, made by this script,
which counts the API requests by kind (``GET /containers/json``, ``GET /volumes``,
``GET /images/json``, ``POST /containers/{id}/start``, ...):

* **up**: seconds from the process's start to every app container running.
* **idle**: at steady state, over ``--idle`` seconds (default 60): the process's CPU time
  (``/proc/<pid>/stat``, utime + stime) as a share of one core (target: at most 1 %),
  and the engine's list calls per sync period (target: one; the garbage collection
  round's volume list, once per ``--gc-period``, is allowed on top).
* **restart under churn**: ``--crash-loop`` more pods (default 10) whose container ``crash``
  exits 1 at once (restartPolicy Always: they crash-loop), and ``--churn`` of the pods'
  files (default 10) rewritten every ``--churn-period`` seconds (default 10): half with
  a new annotation (the spec does not change: nothing may be restarted), half with a
  new env value in container ``a`` (the spec changes: ``a`` is replaced). Meanwhile
  ``--kills`` times (default 20) an app container of another pod is killed (``docker
  kill``; each container once, so that none waits out a crash-loop back-off), and the
  seconds until its replacement runs are taken: p50, p95 (target: p95 at most 1 s),
  beside the engine's own create + start of a container just after each kill (the
  floor: the least a restart costs as loaded as the machine is then; target: the
  restart's p95 at most 1.5x the floor's). ``--trace`` prints the engine requests of
  the slowest restarts. The containers of the annotation-only pods that were replaced
  are counted too (target: none).
* **memory**: ``podsync run`` again on the same pods (churn and crash-loopers gone) with
  ``--rss-period`` (default 0.05 s) for ``--rss-syncs`` sync rounds (default 3000, each
  counted by its ``GET /containers/json``), the process's RSS (``/proc/<pid>/status``)
  sampled along; the growth is the slope of RSS over the rounds after the first fifth
  (warm-up), in KB per 1,000 syncs (target: under 100 KB, i.e. flat: an hour at the
  default 10 s period is 360 syncs).

The pods are in a namespace of the run's own, synced under a scope of the run's own
(``--scope``: nothing else on the engine is touched), network ``none`` with the test
images (``python -m tests.support.engine images``; nothing is pulled). Everything the run
made - containers, their volumes, podsync's records - is removed at the end, on Ctrl-C
and SIGTERM too. This is a benchmark script, not a test: it prints PASS/FAIL against
the targets, and asserts nothing.

Run it from the repository root::

    python -m benchmarks.bench_host                  # the full host (about 10 minutes)
    python -m benchmarks.bench_host --pods 20 --kills 10 --idle 20 --rss-syncs 1000
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import docker

from podsync import NETWORK_CONTAINER
from podsync.labels import (
    LABEL_CONTAINER,
    LABEL_POD_NAME,
    LABEL_POD_NAMESPACE,
    LABEL_POD_UID,
    LABEL_SCOPE,
    LABEL_VOLUME_NAMESPACE,
)

PAUSE_IMAGE = "podsync-test/pause:latest"
APP_IMAGE = "podsync-test/busybox:latest"
TARGET_IDLE_CPU = 0.01  # of one core, from the issue
TARGET_P95 = 1.0  # seconds, from the issue
# The restart's p95 against the engine's own create + start p95 in the same run: the
# least a restart costs on the machine as loaded as it is then (issue 33: on the shared
# 2-CPU machine the floor's p95 alone was 0.6-1.6 s under this churn).
TARGET_P95_OVER_FLOOR = 1.5
TARGET_KB_PER_1000 = 100.0  # "flat": an hour at 10 s is 360 syncs
SLEEPER = '["/bin/sh", "-c", "trap \'exit 0\' TERM; while :; do sleep 1 & wait $!; done"]'
REPO = Path(__file__).resolve().parent.parent
# The list calls of an observation, as the proxy names them.
LISTS = ("GET /containers/json", "GET /volumes", "GET /images/json")


def pod_yaml(name: str, namespace: str, *, generation: int = 0, env_change: bool = False) -> str:
    """A pod of two sleepers; ``generation`` goes into an annotation, or (``env_change``)
    into container ``a``'s environment."""
    env = (
        f"""
    env:
    - name: GENERATION
      value: "{generation}\""""
        if env_change
        else ""
    )
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
  annotations:
    bench/generation: "{generation}"
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: a
    image: {APP_IMAGE}
    imagePullPolicy: Never
    command: {SLEEPER}{env}
  - name: b
    image: {APP_IMAGE}
    imagePullPolicy: Never
    command: {SLEEPER}
"""


def crasher_yaml(name: str, namespace: str) -> str:
    """A pod whose container ``crash`` exits 1 at once, again and again."""
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
spec:
  terminationGracePeriodSeconds: 1
  restartPolicy: Always
  containers:
  - name: app
    image: {APP_IMAGE}
    imagePullPolicy: Never
    command: {SLEEPER}
  - name: crash
    image: {APP_IMAGE}
    imagePullPolicy: Never
    command: ["/bin/sh", "-c", "exit 1"]
"""


# -- the counting proxy of the engine's socket -------------------------------------------

_VERSION = re.compile(r"^/v\d+(\.\d+)?")
_NOUNS = {"containers", "volumes", "images", "networks", "exec"}
_VERBS = {"json", "create", "prune"}


def request_kind(method: str, target: str) -> str:
    """``GET /v1.43/containers/abc/json?all=1`` -> ``GET /containers/{id}/json``."""
    path = _VERSION.sub("", target.split("?", 1)[0])
    parts = path.split("/")
    if len(parts) > 2 and parts[1] in _NOUNS and parts[2] not in _VERBS:
        parts[2] = "{id}"
    return f"{method} {'/'.join(parts)}"


class CountingProxy:
    """A unix socket that forwards every connection to the engine's socket, counting the
    HTTP requests on the way (by ``request_kind``). Bodies are skipped by their
    Content-Length; a connection that upgrades (attach, exec) or sends a chunked body
    is forwarded without being read further."""

    def __init__(self, path: Path, upstream: str) -> None:
        self.path, self.upstream = str(path), upstream
        self.counts: collections.Counter[str] = collections.Counter()
        # (wall time, kind, target) of each request, for ``--trace``: what a restart waited on.
        self.timeline: collections.deque[tuple[float, str, str]] = collections.deque(maxlen=200_000)
        self.lock = threading.Lock()
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.path)
        self.server.listen(128)
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def snapshot(self) -> dict[str, int]:
        with self.lock:
            return dict(self.counts)

    def close(self) -> None:
        self.closed = True
        with contextlib.suppress(OSError):
            self.server.close()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            up.connect(self.upstream)
        except OSError:
            client.close()
            return
        threading.Thread(target=_pump, args=(up, client), daemon=True).start()
        buffer, skip, blind = b"", 0, False
        try:
            while data := client.recv(65536):
                up.sendall(data)
                if blind:
                    continue
                buffer += data
                while buffer:
                    if skip:
                        taken = min(skip, len(buffer))
                        buffer, skip = buffer[taken:], skip - taken
                        continue
                    end = buffer.find(b"\r\n\r\n")
                    if end < 0:
                        break
                    head = buffer[:end].decode("latin-1").split("\r\n")
                    buffer = buffer[end + 4 :]
                    method, target = [*head[0].split(" "), "", ""][:2]
                    headers = {
                        k.strip().lower(): v.strip()
                        for k, _, v in (line.partition(":") for line in head[1:])
                    }
                    with self.lock:
                        kind = request_kind(method, target)
                        self.counts[kind] += 1
                        self.timeline.append((time.time(), kind, target))
                    if "upgrade" in headers or "chunked" in headers.get("transfer-encoding", ""):
                        blind = True
                        break
                    skip = int(headers.get("content-length", "0") or 0)
        except OSError:
            pass
        finally:
            _close(client, up)


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        _close(source, sink)


def _close(*sockets: socket.socket) -> None:
    for s in sockets:
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            s.close()


def engine_socket() -> str:
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if not host.startswith("unix://"):
        raise SystemExit(f"the counting proxy needs a unix socket engine, not {host}")
    return host.removeprefix("unix://")


# -- the podsync process -------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` (``/proc/<pid>/stat`` fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise SystemExit(f"no VmRSS for process {pid}")


class Run:
    """One ``podsync run`` process on the proxy's socket; its stderr goes to ``log``."""

    def __init__(self, args: argparse.Namespace, work: Path, run_id: str, period: float) -> None:
        self.log_path = work / f"podsync-{time.monotonic_ns()}.log"
        argv = [
            sys.executable,
            "-m",
            "podsync",
            "run",
            str(work / "pods"),
            "--scope",
            run_id,
            "--docker-host",
            f"unix://{work / 'engine.sock'}",
            "--network-mode",
            "none",
            "--network-image",
            PAUSE_IMAGE,
            "--root-dir",
            str(work / "root"),
            "--sync-period",
            f"{period}s",
            "--gc-period",
            f"{args.gc_period}s",
            "--log-format",
            "json",
            *(("--workers", str(args.workers)) if args.workers else ()),
        ]
        # ``--podsync``: the checkout whose podsync runs (another commit's, to compare).
        repo = Path(args.podsync or REPO).resolve()
        env = dict(os.environ, PYTHONPATH=str(repo))
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=log, env=env, cwd=repo)
        self.started = time.monotonic()

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        """True while the process runs; it ending is the benchmark's end."""
        if self.process.poll() is not None:
            tail = self.log_path.read_text().splitlines()[-20:]
            raise SystemExit("podsync run ended:\n" + "\n".join(tail))
        return True

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# -- the engine, seen directly (not through the proxy: the benchmark's own looks are not
# -- podsync's calls) ---------------------------------------------------------------------


def running(client: docker.DockerClient, namespace: str) -> dict[tuple[str, str], str]:
    """(pod name, container name) -> id, of the running app containers."""
    found = client.api.containers(filters={"label": [f"{LABEL_POD_NAMESPACE}={namespace}"]})
    return {
        (c["Labels"][LABEL_POD_NAME], c["Labels"][LABEL_CONTAINER]): c["Id"]
        for c in found
        if LABEL_CONTAINER in c["Labels"] and c["Labels"][LABEL_CONTAINER] != NETWORK_CONTAINER
    }


def runs_again(
    client: docker.DockerClient, namespace: str, target: tuple[str, str], old: str
) -> bool:
    """Whether ``target`` runs again, in another container than ``old``."""
    return running(client, namespace).get(target) not in (None, old)


def wait_until(condition: Callable[[], Any], timeout: float, pause: float = 0.02) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(pause)
    raise SystemExit(f"gave up after {timeout:g}s")


def remove_everything(client: docker.DockerClient, namespace: str, run_id: str) -> int:
    """Remove the run's containers (with their anonymous volumes) and named volumes."""
    removed = 0
    uids: set[str] = set()
    for c in client.api.containers(
        all=True, filters={"label": f"{LABEL_POD_NAMESPACE}={namespace}"}
    ):
        uids.add(c["Labels"].get(LABEL_POD_UID, ""))
        with contextlib.suppress(docker.errors.NotFound):
            client.api.remove_container(c["Id"], force=True, v=True)
            removed += 1
    for v in client.api.volumes().get("Volumes") or ():
        labels = v.get("Labels") or {}
        if (
            labels.get(LABEL_SCOPE) == run_id
            or labels.get(LABEL_VOLUME_NAMESPACE) == namespace
            or labels.get(LABEL_POD_UID, "-") in uids
        ):
            with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
                client.api.remove_volume(v["Name"], force=True)
                removed += 1
    return removed


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def per_period(calls: dict[str, int], periods: float) -> str:
    return ", ".join(f"{k} {v / periods:.3g}" for k, v in sorted(calls.items()) if v)


def diff(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0)}


# -- the phases ------------------------------------------------------------------------------


@contextlib.contextmanager
def churning(
    directory: Path, namespace: str, names: Sequence[str], period: float
) -> Iterator[dict[str, int]]:
    """Rewrite the files of ``names`` every ``period`` seconds while the block runs: the
    even ones with a new annotation, the odd ones with a new env value. Yields the
    rewrites done, by kind."""
    stop = threading.Event()
    done = {"annotation": 0, "env": 0}

    def rewrite() -> None:
        generation = 0
        while not stop.wait(period):
            generation += 1
            for i, name in enumerate(names):
                env = i % 2 == 1
                text = pod_yaml(name, namespace, generation=generation, env_change=env)
                path = directory / f"{name}.yaml"
                temporary = path.with_suffix(".tmp")
                temporary.write_text(text)
                temporary.rename(path)  # whole, as an editor's save: never half a file
                done["env" if env else "annotation"] += 1

    thread = threading.Thread(target=rewrite, daemon=True)
    thread.start()
    try:
        yield done
    finally:
        stop.set()
        thread.join()


@attrs.frozen
class Restarts:
    """What the restart phase saw, in seconds per kill."""

    latencies: list[float]  # kill -> the replacement seen running
    to_created: list[float]  # kill -> podsync's ``created`` event (its create returned)
    to_started: list[float]  # ``created`` -> ``started`` event (the start call)
    floor: list[float]  # the engine's own create + start of a container, just after
    replaced: int  # containers of the annotation-only pods replaced
    rewrites: dict[str, int]
    kills: list[tuple[tuple[str, str], float]]  # (pod, container), wall time of the kill


def engine_floor(client: docker.DockerClient, namespace: str) -> float:
    """The seconds the engine takes, now, to create and start a container as podsync's
    restart does (the least a restart costs): a throwaway container, labelled with the
    run's namespace (podsync ignores it: it has no pod uid), removed at once."""
    began = time.monotonic()
    made = client.api.create_container(
        APP_IMAGE,
        ["sleep", "30"],
        labels={LABEL_POD_NAMESPACE: namespace},
        host_config=client.api.create_host_config(network_mode="none"),
    )
    client.api.start(made["Id"])
    took = time.monotonic() - began
    client.api.remove_container(made["Id"], force=True)
    return took


def apply_events(log: Path) -> list[dict[str, Any]]:
    """The apply events of a ``--log-format json`` log."""
    found = []
    for line in log.read_text().splitlines():
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if isinstance(record, dict) and "container" in record and "time" in record:
                found.append(record)
    return found


def first_event(
    events: Sequence[dict[str, Any]], kind: str, target: tuple[str, str], after: float
) -> float | None:
    pod, container = target
    times = [
        e["time"]
        for e in events
        if e.get("kind") == kind
        and str(e.get("pod", "")).endswith(f"/{pod}")
        and e.get("container") == container
        and e["time"] >= after
    ]
    return min(times, default=None)


def restarts_under_churn(
    args: argparse.Namespace, client: docker.DockerClient, namespace: str, run: Run, pods: Path
) -> Restarts:
    """Kill ``--kills`` app containers one at a time while pods crash-loop and files
    churn, and time each restart, its stages (from podsync's log) and the engine's floor
    just after it."""
    for i in range(args.crash_loop):
        (pods / f"crash{i:03d}.yaml").write_text(crasher_yaml(f"crash{i:03d}", namespace))
    names = [f"p{i:03d}" for i in range(args.pods)]
    churned = names[len(names) - args.churn :] if args.churn else []
    targets = [
        (name, container) for container in ("a", "b") for name in names if name not in churned
    ][: args.kills]
    quiet = [n for i, n in enumerate(churned) if i % 2 == 0]
    before = {k: v for k, v in running(client, namespace).items() if k[0] in quiet}
    latencies: list[float] = []
    floor: list[float] = []
    kills: list[tuple[tuple[str, str], float]] = []
    with churning(pods, namespace, churned, args.churn_period) as rewrites:
        churn_started = time.monotonic()
        # The crash-loopers start and crash once or twice, the first rewrites land.
        time.sleep(min(args.churn_period * 1.5, 15.0))
        for target in targets:
            run.alive()
            old = running(client, namespace).get(target)
            if old is None:
                continue
            killed, killed_at = time.monotonic(), time.time()
            client.api.kill(old)
            wait_until(functools.partial(runs_again, client, namespace, target, old), 60)
            latencies.append(time.monotonic() - killed)
            kills.append((target, killed_at))
            floor.append(engine_floor(client, namespace))
            time.sleep(args.kill_gap)
        # Every annotation-only file rewritten at least twice, and read.
        time.sleep(max(0.0, 2.5 * args.churn_period - (time.monotonic() - churn_started)))
    after = running(client, namespace)
    replaced = sum(1 for k, cid in before.items() if after.get(k) != cid)
    for i in range(args.crash_loop):
        (pods / f"crash{i:03d}.yaml").unlink()
    events = apply_events(run.log_path)
    to_created, to_started = [], []
    for target, at in kills:
        created = first_event(events, "created", target, at)
        started = first_event(events, "started", target, at)
        if created is not None and started is not None:
            to_created.append(created - at)
            to_started.append(started - created)
    return Restarts(latencies, to_created, to_started, floor, replaced, dict(rewrites), kills)


def trace(proxy: CountingProxy, restarts: Restarts, slowest: int = 3) -> None:
    """The engine requests in the ``slowest`` restarts, from the kill to the replacement
    seen running, in seconds after the kill (``--trace``): what a restart waited on."""
    with proxy.lock:
        timeline = list(proxy.timeline)
    ranked = sorted(zip(restarts.latencies, restarts.kills, strict=True), reverse=True)
    for latency, (target, at) in ranked[:slowest]:
        print(f"  trace of {target[0]}/{target[1]}: {latency:.2f} s")
        for when, kind, path in timeline:
            if at <= when <= at + latency:
                print(f"    +{when - at:6.3f} {kind}  {path[:110]}")


def p50_p95(values: Sequence[float]) -> str:
    if not values:
        return "none seen"
    return f"p50 {statistics.median(values):.2f} s, p95 {percentile(values, 0.95):.2f} s"


@attrs.frozen
class Memory:
    """What the memory phase saw."""

    samples: list[tuple[int, int]]  # (rounds, RSS KB)
    growth: float  # KB per 1,000 rounds after the warm-up
    seconds: float
    calls: dict[str, int]  # the engine calls after the warm-up
    rounds: int  # the rounds after the warm-up


def memory_growth(
    args: argparse.Namespace, proxy: CountingProxy, work: Path, run_id: str
) -> Memory:
    """``podsync run`` at ``--rss-period`` for ``--rss-syncs`` rounds, its RSS sampled
    along; the slope is taken after the first fifth (the warm-up), and so are the
    engine calls per round."""
    run = Run(args, work, run_id, args.rss_period)
    samples: list[tuple[int, int]] = []
    warm_up = args.rss_syncs // 5
    warm_calls: dict[str, int] | None = None
    try:
        start = proxy.snapshot().get(LISTS[0], 0)
        while True:
            run.alive()
            calls = proxy.snapshot()
            rounds = calls.get(LISTS[0], 0) - start
            samples.append((rounds, rss_kb(run.pid)))
            if warm_calls is None and rounds >= warm_up:
                warm_calls, warm_rounds = calls, rounds
            if rounds >= args.rss_syncs:
                break
            time.sleep(0.5)
    finally:
        run.stop()
    seconds = time.monotonic() - run.started
    assert warm_calls is not None
    warm = [s for s in samples if s[0] >= warm_up]
    growth = float("nan")
    if len(warm) >= 3:
        slope, _ = statistics.linear_regression([s[0] for s in warm], [s[1] for s in warm])
        growth = slope * 1000
    return Memory(samples, growth, seconds, diff(calls, warm_calls), rounds - warm_rounds)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pods", type=int, default=110)
    parser.add_argument("--crash-loop", type=int, default=10, help="crash-looping pods added")
    parser.add_argument("--churn", type=int, default=10, help="pod files rewritten")
    parser.add_argument("--churn-period", type=float, default=10.0)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--kill-gap", type=float, default=1.0, help="seconds between kills")
    parser.add_argument("--idle", type=float, default=60.0, help="seconds at steady state")
    parser.add_argument("--sync-period", type=float, default=10.0)
    parser.add_argument("--gc-period", type=float, default=60.0)
    parser.add_argument("--rss-syncs", type=int, default=3000)
    parser.add_argument("--rss-period", type=float, default=0.05)
    for phase in ("idle", "churn", "rss"):
        parser.add_argument(f"--skip-{phase}", action="store_true")
    parser.add_argument(
        "--trace", action="store_true", help="print the engine requests of the slowest restarts"
    )
    parser.add_argument(
        "--workers", type=int, help="podsync run --workers (its default if not given)"
    )
    parser.add_argument(
        "--podsync", help="the checkout whose podsync runs (default: this one), to compare"
    )
    args = parser.parse_args(argv)
    if args.churn > args.pods or 2 * (args.pods - args.churn) < args.kills:
        parser.error("--kills needs that many app containers of pods that do not churn")
    client = docker.from_env()
    client.ping()
    print(f"engine {engine_socket()}, {os.cpu_count()} CPUs; {args.pods} pods of 2 containers")
    run_id = f"host-{uuid.uuid4().hex[:8]}"
    namespace = run_id
    failed: list[str] = []
    # SIGTERM ends the run as Ctrl-C does: through the clean-up below.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with tempfile.TemporaryDirectory(prefix="podsync-bench-host-") as tmp:
        work = Path(tmp)
        pods = work / "pods"
        pods.mkdir()
        for i in range(args.pods):
            (pods / f"p{i:03d}.yaml").write_text(pod_yaml(f"p{i:03d}", namespace))
        proxy = CountingProxy(work / "engine.sock", engine_socket())
        run: Run | None = None
        try:
            run = Run(args, work, run_id, args.sync_period)
            want = 2 * args.pods
            wait_until(
                lambda: run.alive() and len(running(client, namespace)) >= want,
                60 + 2 * args.pods,
                pause=0.2,
            )
            up = time.monotonic() - run.started
            print(f"up: {args.pods} pods ({want} app containers) running after {up:.1f} s")
            if not args.skip_idle:
                time.sleep(2 * args.sync_period)  # the last creations settle
                calls_before, cpu_before = proxy.snapshot(), cpu_seconds(run.pid)
                time.sleep(args.idle)
                cpu = cpu_seconds(run.pid) - cpu_before
                calls = diff(proxy.snapshot(), calls_before)
                periods = args.idle / args.sync_period
                share = cpu / args.idle
                lists = sum(calls.get(k, 0) for k in LISTS) / periods
                allowed = 1 + args.sync_period / args.gc_period
                ok_cpu, ok_lists = share <= TARGET_IDLE_CPU, lists <= allowed + 0.01
                print(
                    f"idle {args.idle:g} s: {cpu:.2f} CPU s = {100 * share:.2f} % of a core "
                    f"(target <= {100 * TARGET_IDLE_CPU:g} %): {verdict(ok_cpu)}; "
                    f"RSS {rss_kb(run.pid) / 1024:.1f} MB"
                )
                print(
                    f"idle engine calls per sync period ({args.sync_period:g} s): "
                    f"{per_period(calls, periods) or 'none'}"
                )
                print(
                    f"idle list calls per period: {lists:.2f} (target <= {allowed:.2f}: one, "
                    f"and the GC round's volume list every {args.gc_period:g} s): "
                    f"{verdict(ok_lists)}"
                )
                failed += [
                    n for n, ok in (("idle CPU", ok_cpu), ("idle lists", ok_lists)) if not ok
                ]
            if not args.skip_churn:
                cpu_before, churn_began = cpu_seconds(run.pid), time.time()
                restarts = restarts_under_churn(args, client, namespace, run, pods)
                churn_cpu = cpu_seconds(run.pid) - cpu_before
                churn_seconds = time.time() - churn_began
                with proxy.lock:
                    full_lists = sum(
                        1
                        for when, kind, path in proxy.timeline
                        if when >= churn_began and kind == LISTS[0] and "filters" not in path
                    )
                latencies, rewrites = restarts.latencies, restarts.rewrites
                p95 = percentile(latencies, 0.95)
                ok_p95, ok_quiet = p95 <= TARGET_P95, restarts.replaced == 0
                over_floor = p95 / percentile(restarts.floor, 0.95)
                ok_floor = over_floor <= TARGET_P95_OVER_FLOOR
                print(
                    f"restart after docker kill, {args.crash_loop} pods crash-looping, "
                    f"{args.churn} files rewritten every {args.churn_period:g} s "
                    f"({rewrites['annotation']} annotation, {rewrites['env']} env rewrites): "
                    f"{p50_p95(latencies)}, max {max(latencies):.2f} s, n {len(latencies)} "
                    f"(target p95 <= {TARGET_P95:g} s): {verdict(ok_p95)}"
                )
                print(
                    f"  kill -> podsync's create returned: {p50_p95(restarts.to_created)}; "
                    f"its start: {p50_p95(restarts.to_started)}; the engine's own create + "
                    f"start just after each (the floor): {p50_p95(restarts.floor)}"
                )
                print(
                    f"  podsync's CPU under churn: {churn_cpu:.1f} s in {churn_seconds:.0f} s "
                    f"({100 * churn_cpu / churn_seconds:.0f} % of a core); rounds (whole "
                    f"container lists): {full_lists} ({full_lists / churn_seconds:.2f} per s)"
                )
                print(
                    f"restart p95 / the floor's p95: {over_floor:.2f}x "
                    f"(target <= {TARGET_P95_OVER_FLOOR:g}x): {verdict(ok_floor)}"
                )
                print(
                    f"annotation-only rewrites: {restarts.replaced} containers replaced "
                    f"(target 0): {verdict(ok_quiet)}"
                )
                failed += [
                    n
                    for n, ok in (
                        ("restart p95", ok_p95),
                        ("restart p95 over the floor", ok_floor),
                        ("quiet", ok_quiet),
                    )
                    if not ok
                ]
                if args.trace:
                    trace(proxy, restarts)
            run.stop()
            if not args.skip_rss:
                memory = memory_growth(args, proxy, work, run_id)
                warm = [kb for rounds, kb in memory.samples if rounds >= args.rss_syncs // 5]
                ok_rss = memory.growth <= TARGET_KB_PER_1000
                print(
                    f"memory: {memory.samples[-1][0]} syncs at {args.rss_period:g} s in "
                    f"{memory.seconds:.0f} s: RSS after the warm-up {warm[0] / 1024:.1f} -> "
                    f"{warm[-1] / 1024:.1f} MB, growth {memory.growth:.0f} KB per 1,000 syncs "
                    f"(target <= {TARGET_KB_PER_1000:g}): {verdict(ok_rss)}"
                )
                lists = sum(memory.calls.get(k, 0) for k in LISTS) / memory.rounds
                ok_lists = lists <= 1.01
                print(
                    f"engine calls per sync, stopped instances of the killed containers on "
                    f"the engine: {per_period(memory.calls, memory.rounds)}; list calls "
                    f"{lists:.3f} (target 1): {verdict(ok_lists)}"
                )
                failed += [n for n, ok in (("memory", ok_rss), ("lists", ok_lists)) if not ok]
        finally:
            if run is not None:
                run.stop()
            proxy.close()
            print(f"removed {remove_everything(client, namespace, run_id)} containers/volumes")
    print("all targets met" if not failed else f"missed: {', '.join(failed)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
