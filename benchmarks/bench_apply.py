"""Apply benchmark: podsync on the real engine, beside the raw docker SDK and docker-compose.

What it measures
================

The workload is ``--pods`` pods (default 50), each a network container (the local pause
test image, network mode ``none``) and two app containers (the busybox test image,
joined to the network container with ``container:<net>``, an environment and a label):
150 containers for 50 pods. Nothing is pulled: ``tests.support.engine.ensure_test_images``
builds both images locally with ``docker import``, and this run tags them with a tag of
its own (``bench-apply-<pid>-<random>``, removed at the end), so that pull policy
IfNotPresent pulls nothing and no other run's (un)tagging of ``latest`` can interfere.
The app command is a shell that exits at once on SIGTERM, so a stop measures the engine
rather than the grace period (the test image's default ``sleep`` as PID 1 ignores
SIGTERM and would wait out the whole stop timeout).

Three contenders do the same work on the same engine, in the same run:

* **podsync** - ``podsync.sync(pods, runtime, options=..., workers=W)`` on a
  ``podsync.docker.DockerRuntime`` (long-lived: pinged and warmed up with one untimed
  container list before the first timing, as a kubelet's runtime would be):

  - *cold*: from nothing to 150 running containers - observe, plan and apply, one call;
  - *steady*: the same sync again. It must plan no changes; its engine calls are counted
    twice: by a counting proxy around the runtime (the ``Runtime`` protocol calls) and by
    HTTP request (which also sees what ``DockerRuntime.list_containers`` does inside,
    such as inspects of exited containers);
  - *teardown*: a sync with no desired pods, deletions allowed for this run's pod source
    only (``ready_sources``) and ``GCPolicy(min_age=0, max_per_container=0)``: 150 stops
    and 150 removals.

  With ``--workers`` (default ``podsync.DEFAULT_WORKERS``) and with 4, 8 and 16 workers,
  to see whether the default is right. Options: ``PlanOptions(network_mode="none",
  network_image=<pause image>, root_dir=<temporary directory>, allow_deletions=False,
  stop_timeout=--stop-timeout)``: nothing that is not this run's is ever stopped.
* **raw SDK** - the floor: the same creates and starts with ``docker.APIClient`` and
  the same create parameters (network mode ``none`` / ``container:<net id>``, hostname,
  environment, labels), with no observation and no planning. Pods run in parallel on a
  thread pool, a pod's containers in order (network first); each worker thread has its
  own client (a pool of clients, built before the timing). Teardown: stop (the same
  timeout) and remove, the same way and in podsync's order (app containers, then the
  network container, then the removals). With 1, 2, 4, 8 and 16 workers; the floor of
  each phase is the best worker count's minimum. Engine requests are timed the same way
  for podsync and the raw SDK (a wrapper around ``requests.Session.send``), which shows
  where podsync's time goes: engine requests, or its own Python around them.
* **docker-compose v1** (Debian's ``docker-compose`` 1.29.2): a generated compose file
  with one service per container (``net-<i>`` with ``network_mode: none``, ``a-<i>`` and
  ``b-<i>`` with ``network_mode: "service:net-<i>"``, which orders them after their
  network container), run with its default parallel limit (``COMPOSE_PARALLEL_LIMIT`` is
  removed from its environment): ``up -d`` (cold), ``up -d`` again (no-op) and
  ``down -t <stop timeout>`` (teardown). Its times include starting compose's Python
  process, as a user pays it.

Each contender's phases run ``--repeat`` times (default 3) in rounds; the contenders'
order rotates from round to round, and the worker counts' order alternates, to spread
the noise of a shared engine. The first ``--curve-rounds`` rounds (default 1) run every
worker count of podsync and of the raw SDK (the curves); the later rounds run podsync at
``--workers`` and the raw SDK at its best (cold) worker count so far, which keeps a run
near six minutes (the table's ``runs`` column says how many runs each row has;
``--curve-rounds 3`` gives every worker count three runs, in about twelve minutes).
Wall-clock times (``time.perf_counter``) are reported as the minimum (the best estimate
on a noisy machine) and the median. Client CPU (``time.process_time``, and
``RUSAGE_CHILDREN`` for compose) is reported beside: on a small machine, every CPU
second the client spends is taken from the engine.

Targets (from the issue): podsync's cold apply at most 1.10x the floor; a steady-state
sync that is exactly one engine list call and at most 10% of compose's no-op ``up``;
teardown at most 1.10x the floor - all by the minimum, podsync at ``--workers``. PASS and
FAIL lines are printed; the exit status is 0 either way unless ``--check`` is given
(2 when the benchmark itself could not run). This is a benchmark script, not a test.

Safety: other runs may use the same engine at the same time. Everything this script
creates carries this run's id: raw and compose containers a label
(``io.podsync.bench=apply``, ``io.podsync.bench.run=<host>.<pid>.<random>``), podsync
containers the namespace ``podsync-bench-apply`` and a pod source naming the run. All of
it is removed in a ``finally``; at start, leftovers of runs on this host whose process
has gone are removed. Nothing else is touched.

Run it from the repository root, with the engine up (``bash .ci/test`` starts one and
builds the images; ``python -m tests.support.engine images`` builds the images)::

    python -m benchmarks.bench_apply                  # plain-text table
    python -m benchmarks.bench_apply --markdown       # Markdown table for docs/benchmarks.md
    python -m benchmarks.bench_apply --pods 20 --repeat 1
    python -m benchmarks.bench_apply --check          # exit 1 when a target is missed
    python -m benchmarks.bench_apply --plot apply.svg # and draw the times

A full run (3 rounds, 50 pods) takes about six minutes on a 2-CPU machine.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import queue
import re
import resource
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import docker
import docker.errors
import requests
import yaml

import podsync
from benchmarks import svgchart
from podsync import (
    DEFAULT_WORKERS,
    Container,
    Create,
    CreateSpec,
    EnvVar,
    GCPolicy,
    Kill,
    ObservedContainer,
    ObservedImage,
    PlanOptions,
    Pod,
    Remove,
    SyncResult,
)
from podsync.docker import DockerRuntime
from podsync.labels import LABEL_POD_NAMESPACE, LABEL_POD_SOURCE
from podsync.runtime import ExecResult
from tests.support.engine import PAUSE_IMAGE, TEST_IMAGE, connect, ensure_test_images

# Everything this script creates is recognised by these.
BENCH_LABEL = "io.podsync.bench"
BENCH_VALUE = "apply"
RUN_LABEL = "io.podsync.bench.run"
NAMESPACE = "podsync-bench-apply"  # the namespace of every podsync pod of this script
SOURCE_PREFIX = "bench"  # podsync pod sources: bench-<pid>-<random>-w<W>-r<round>
RUN_ID = f"{socket.gethostname()}.{os.getpid()}.{secrets.token_hex(3)}"
RUN_TOKEN = f"{os.getpid()}-{RUN_ID.rpartition('.')[2]}"  # the short form, for names
# podsync's syncs run in a scope of this run's own: the teardown (no desired pods) may
# remove only the pods this run's scope owns (a sync without a scope removes nothing of
# a pod it was not given, and the node scope would own every podsync pod on the engine).
SCOPE = f"bench-apply-{RUN_TOKEN}"

# The images, under tags of this run's own (untagged at the end): the test images'
# ``latest`` tags belong to every test run on the engine, and a pod whose image is not
# ``latest`` is not pulled (pull policy IfNotPresent).
IMAGE_TAG_PREFIX = "bench-apply-"
APP_IMAGE = f"{TEST_IMAGE.rpartition(':')[0]}:{IMAGE_TAG_PREFIX}{RUN_TOKEN}"
NET_IMAGE = f"{PAUSE_IMAGE.rpartition(':')[0]}:{IMAGE_TAG_PREFIX}{RUN_TOKEN}"
IMAGES = {APP_IMAGE: TEST_IMAGE, NET_IMAGE: PAUSE_IMAGE}

APP_CONTAINERS = ("a", "b")
APP_ENTRYPOINT = ("/bin/sh", "-c")
# Exits 0 at once on SIGTERM: ``wait`` is interrupted by the trapped signal (the pause
# image's script; a plain ``sleep`` as PID 1 would ignore SIGTERM).
APP_SCRIPT = "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"

COMPOSE = "docker-compose"
COMPOSE_DEFAULT_PARALLEL_LIMIT = 64  # compose v1's default for COMPOSE_PARALLEL_LIMIT

RAW_WORKERS = (1, 2, 4, 8, 16)
PODSYNC_WORKERS = (4, 8, 16)  # besides --workers

# Targets from the issue.
TARGET_COLD_RATIO = 1.10
TARGET_TEARDOWN_RATIO = 1.10
TARGET_STEADY_VS_COMPOSE = 0.10

PODSYNC, RAW, COMPOSE_NAME = "podsync", "raw SDK", "docker-compose"
CONTENDERS = (PODSYNC, RAW, COMPOSE_NAME)
COLD, STEADY, TEARDOWN = "cold", "steady", "teardown"


class BenchError(RuntimeError):
    """The benchmark could not do what it measures (a failed action, a wrong count)."""


# ---------------------------------------------------------------------------------------
# The workload


def pod_name(i: int) -> str:
    return f"p-{i:03d}"


def app_env(i: int, container: str) -> list[tuple[str, str]]:
    return [("POD_INDEX", str(i)), ("CONTAINER", container), ("BENCH", BENCH_VALUE)]


def bench_labels() -> dict[str, str]:
    """The labels of raw SDK and compose containers."""
    return {BENCH_LABEL: BENCH_VALUE, RUN_LABEL: RUN_ID}


def podsync_pods(n: int, source: str) -> list[Pod]:
    return [
        Pod(
            name=pod_name(i),
            namespace=NAMESPACE,
            source=source,
            containers=tuple(
                Container(
                    name=c,
                    image=APP_IMAGE,
                    command=APP_ENTRYPOINT,
                    args=(APP_SCRIPT,),
                    env=tuple(EnvVar(k, v) for k, v in app_env(i, c)),
                )
                for c in APP_CONTAINERS
            ),
        )
        for i in range(n)
    ]


def compose_file(n: int) -> dict[str, Any]:
    """The compose project: one service per container of the workload."""
    labels = bench_labels()
    # compose interpolates $VAR in the file: $$ is a literal $.
    script = APP_SCRIPT.replace("$", "$$")
    services: dict[str, Any] = {}
    for i in range(n):
        services[f"net-{i}"] = {
            "image": NET_IMAGE,
            "network_mode": "none",
            "hostname": pod_name(i),
            "labels": labels,
        }
        for c in APP_CONTAINERS:
            services[f"{c}-{i}"] = {
                "image": APP_IMAGE,
                "network_mode": f"service:net-{i}",
                "entrypoint": list(APP_ENTRYPOINT),
                "command": [script],
                "environment": dict(app_env(i, c)),
                "labels": labels,
            }
    return {"version": "2.4", "services": services}


# ---------------------------------------------------------------------------------------
# Counting engine calls


@dataclass(frozen=True)
class Request:
    """One HTTP request to the engine: method, route (ids replaced) and duration."""

    method: str
    route: str
    seconds: float

    @property
    def call(self) -> str:
        return f"{self.method} {self.route}"


_API_VERSION_PREFIX = re.compile(r"^/v\d+\.\d+(?=/)")
_CONTAINER_ROUTE = re.compile(r"^/containers/(?!json$|create$)[^/]+")


def route_of(url: str) -> str:
    path = _API_VERSION_PREFIX.sub("", urlsplit(url).path)
    return _CONTAINER_ROUTE.sub("/containers/{id}", path)


class HttpLog:
    """The HTTP requests this process's docker clients send while ``recording``.

    ``requests.Session.send`` is wrapped for the whole benchmark (``installed``): every
    ``docker.APIClient`` is a ``requests.Session``, so this sees each engine call of
    podsync's runtime and of the raw SDK alike, with the same (small) overhead for both.
    Compose runs in its own process and is not seen.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active: list[Request] | None = None

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        original = requests.Session.send
        log = self

        def send(session: requests.Session, request: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(session, request, **kwargs)
            finally:
                log._add(str(request.method), str(request.url), time.perf_counter() - start)

        requests.Session.send = send  # type: ignore[method-assign,assignment]
        try:
            yield
        finally:
            requests.Session.send = original  # type: ignore[method-assign]

    def _add(self, method: str, url: str, seconds: float) -> None:
        with self._lock:
            if self._active is not None:
                self._active.append(Request(method, route_of(url), seconds))

    @contextlib.contextmanager
    def recording(self) -> Iterator[list[Request]]:
        entries: list[Request] = []
        with self._lock:
            self._active = entries
        try:
            yield entries
        finally:
            with self._lock:
                self._active = None


class CountingRuntime:
    """A ``podsync.Runtime`` that forwards every call to ``inner`` and counts it."""

    OBSERVING = frozenset({"list_containers", "list_images", "container_address"})

    def __init__(self, inner: DockerRuntime) -> None:
        self.inner = inner
        self._lock = threading.Lock()
        self._calls: Counter[str] = Counter()

    def take(self) -> Counter[str]:
        """The calls counted since the last ``take``."""
        with self._lock:
            calls, self._calls = self._calls, Counter()
        return calls

    def _count(self, name: str) -> None:
        with self._lock:
            self._calls[name] += 1

    def __getattr__(self, name: str) -> Any:
        # The calls not spelled out below (the volume calls a pod's state volume needs:
        # list_volumes, create_volume, ...) are forwarded and counted all the same.
        target = getattr(self.inner, name)
        if not callable(target):
            return target

        def counted(*args: Any, **kwargs: Any) -> Any:
            self._count(name)
            return target(*args, **kwargs)

        return counted

    def list_containers(self) -> list[ObservedContainer]:
        self._count("list_containers")
        return self.inner.list_containers()

    def list_images(self) -> list[ObservedImage]:
        self._count("list_images")
        return self.inner.list_images()

    def pull_image(self, image: str) -> None:
        self._count("pull_image")
        self.inner.pull_image(image)

    def create_container(self, spec: CreateSpec) -> str:
        self._count("create_container")
        return self.inner.create_container(spec)

    def start_container(self, container_id: str) -> None:
        self._count("start_container")
        self.inner.start_container(container_id)

    def stop_container(self, container_id: str, timeout: int) -> None:
        self._count("stop_container")
        self.inner.stop_container(container_id, timeout)

    def remove_container(self, container_id: str) -> None:
        self._count("remove_container")
        self.inner.remove_container(container_id)

    def exec_in_container(
        self, container_id: str, command: Sequence[str], timeout: float
    ) -> ExecResult:
        self._count("exec_in_container")
        return self.inner.exec_in_container(container_id, command, timeout)

    def container_address(self, container_id: str) -> str | None:
        self._count("container_address")
        return self.inner.container_address(container_id)

    def remove_image(self, image_id: str) -> None:
        self._count("remove_image")
        self.inner.remove_image(image_id)

    def close(self) -> None:
        # Not counted: the inner runtime is closed by its owner when the run ends.
        pass


# ---------------------------------------------------------------------------------------
# Measurements


@dataclass
class Sample:
    """One timed phase."""

    seconds: float
    cpu: float  # client CPU seconds (this process, or compose's processes)
    requests: list[Request] = field(default_factory=list)
    calls: Counter[str] = field(default_factory=Counter)  # Runtime protocol calls
    detail: dict[str, float] = field(default_factory=dict)


@dataclass
class Series:
    """Every sample of one contender at one worker count."""

    contender: str
    workers: int
    phases: dict[str, list[Sample]] = field(default_factory=dict)

    def add(self, phase: str, sample: Sample) -> None:
        self.phases.setdefault(phase, []).append(sample)

    def times(self, phase: str) -> list[float]:
        return [s.seconds for s in self.phases.get(phase, [])]

    def min(self, phase: str) -> float | None:
        times = self.times(phase)
        return min(times) if times else None

    def median(self, phase: str) -> float | None:
        times = self.times(phase)
        return statistics.median(times) if times else None

    def samples(self, phase: str) -> list[Sample]:
        return self.phases.get(phase, [])


class Timer:
    """Wall-clock and client CPU time of a block (``children``: of the processes it ran)."""

    def __init__(self, children: bool = False) -> None:
        self.children = children
        self.seconds = 0.0
        self.cpu = 0.0

    def _cpu(self) -> float:
        if self.children:
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            return usage.ru_utime + usage.ru_stime
        return time.process_time()

    def __enter__(self) -> Timer:
        self._cpu0 = self._cpu()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.seconds = time.perf_counter() - self._t0
        self.cpu = self._cpu() - self._cpu0


# ---------------------------------------------------------------------------------------
# The contenders


class PodsyncContender:
    """podsync.sync on a long-lived DockerRuntime, with ``workers`` apply workers."""

    def __init__(self, workers: int, n: int, root_dir: str, stop_timeout: int) -> None:
        self.workers = workers
        self.n = n
        self.root_dir = root_dir
        self.stop_timeout = stop_timeout
        self.docker_runtime = DockerRuntime()
        self.runtime = CountingRuntime(self.docker_runtime)
        self.docker_runtime.ping()
        # Warm up as a long-lived runtime is: the first list inspects every exited
        # container podsync owns on the engine (other runs' too) once, then caches it.
        self.docker_runtime.list_containers()

    def close(self) -> None:
        self.docker_runtime.close()

    def options(self, source: str, *, teardown: bool) -> PlanOptions:
        common: dict[str, Any] = {
            "network_mode": "none",
            "network_image": NET_IMAGE,
            "root_dir": self.root_dir,
            "stop_timeout": self.stop_timeout,
            "scope": SCOPE,
        }
        if teardown:
            return PlanOptions(
                **common,
                allow_deletions=True,
                ready_sources=frozenset({source}),
                gc=GCPolicy(min_age=0, max_per_container=0),
            )
        return PlanOptions(**common, allow_deletions=False)

    def _sync(
        self, pods: Sequence[Pod], options: PlanOptions, http: HttpLog
    ) -> tuple[Sample, SyncResult]:
        self.runtime.take()
        with http.recording() as requests_sent, Timer() as timer:
            result = podsync.sync(pods, self.runtime, options=options, workers=self.workers)
        sample = Sample(timer.seconds, timer.cpu, list(requests_sent), self.runtime.take())
        sample.detail = _sync_detail(result, sample)
        return sample, result

    def run(self, round_no: int, http: HttpLog, series: Series, settle: float) -> None:
        source = f"{SOURCE_PREFIX}-{RUN_TOKEN}-w{self.workers}-r{round_no}"
        pods = podsync_pods(self.n, source)
        want = self.n * (1 + len(APP_CONTAINERS))
        try:
            cold, result = self._sync(pods, self.options(source, teardown=False), http)
            _expect(result, creates=want, what=f"podsync cold (W={self.workers})")
            time.sleep(settle)
            steady, result = self._sync(pods, self.options(source, teardown=False), http)
            if result.plan.has_changes:
                raise BenchError(
                    f"podsync steady (W={self.workers}) planned changes:\n" + result.plan.describe()
                )
            time.sleep(settle)
            down, result = self._sync([], self.options(source, teardown=True), http)
            _expect(result, kills=want, removes=want, what=f"podsync teardown (W={self.workers})")
        finally:
            remove_podsync_source(source)
        series.add(COLD, cold)
        series.add(STEADY, steady)
        series.add(TEARDOWN, down)


def _sync_detail(result: SyncResult, sample: Sample) -> dict[str, float]:
    """Where a sync's time went: observe + plan (everything before apply), apply, and
    within the actions, engine time versus the rest (Python: host paths, events, ...)."""
    apply = result.apply_result
    in_actions = sum(r.duration for r in apply.results)
    mutating = [r for r in sample.requests if r.method in ("POST", "DELETE")]
    return {
        "before_apply": sample.seconds - apply.duration,
        "apply": apply.duration,
        "actions": len(apply.results),
        "in_actions": in_actions,
        "engine_in_actions": sum(r.seconds for r in mutating),
    }


def _expect(
    result: SyncResult, *, what: str, creates: int = 0, kills: int = 0, removes: int = 0
) -> None:
    actions = result.plan.actions
    counted = (
        sum(isinstance(a, Create) for a in actions),
        sum(isinstance(a, Kill) for a in actions),
        sum(isinstance(a, Remove) for a in actions),
    )
    if counted != (creates, kills, removes) or not result.ok:
        raise BenchError(
            f"{what}: planned {counted[0]} creates, {counted[1]} stops, {counted[2]} removals "
            f"(expected {creates}, {kills}, {removes}); apply: {result.apply_result.summary()}"
        )


class RawContender:
    """The floor: the same creates and starts with docker.APIClient, nothing else."""

    def __init__(self, workers: int, n: int, api_version: str, stop_timeout: int) -> None:
        self.workers = workers
        self.n = n
        self.stop_timeout = stop_timeout
        self.clients: queue.SimpleQueue[docker.APIClient] = queue.SimpleQueue()
        self._all = [docker.APIClient(version=api_version) for _ in range(workers)]
        for api in self._all:
            api.ping()  # open its connection before any timing, as podsync's are
            self.clients.put(api)

    def close(self) -> None:
        for api in self._all:
            api.close()

    @contextlib.contextmanager
    def _client(self) -> Iterator[docker.APIClient]:
        api = self.clients.get()
        try:
            yield api
        finally:
            self.clients.put(api)

    def _create_pod(self, prefix: str, i: int) -> list[str]:
        labels = bench_labels()
        with self._client() as api:
            net = api.create_container(
                NET_IMAGE,
                name=f"{prefix}-{i:03d}-net",
                environment=[],
                labels=labels,
                hostname=pod_name(i),
                host_config=api.create_host_config(
                    binds=[], port_bindings={}, network_mode="none", privileged=False
                ),
            )["Id"]
            api.start(net)
            ids = [net]
            for c in APP_CONTAINERS:
                cid = api.create_container(
                    APP_IMAGE,
                    name=f"{prefix}-{i:03d}-{c}",
                    entrypoint=list(APP_ENTRYPOINT),
                    command=[APP_SCRIPT],
                    environment=[f"{k}={v}" for k, v in app_env(i, c)],
                    labels=labels,
                    host_config=api.create_host_config(
                        binds=[],
                        port_bindings={},
                        network_mode=f"container:{net}",
                        privileged=False,
                    ),
                )["Id"]
                api.start(cid)
                ids.append(cid)
        return ids

    def _remove_pod(self, ids: list[str]) -> None:
        net, *apps = ids
        with self._client() as api:
            for cid in [*apps, net]:  # app containers first, then their network
                api.stop(cid, timeout=self.stop_timeout)
            for cid in [*apps, net]:
                api.remove_container(cid, v=True)

    def _parallel(self, fn: Callable[[int], object]) -> float:
        """Run ``fn(i)`` for every pod on ``workers`` threads; (busy) seconds in tasks."""
        busy = [0.0]
        lock = threading.Lock()

        def task(i: int) -> object:
            start = time.perf_counter()
            try:
                return fn(i)
            finally:
                with lock:
                    busy[0] += time.perf_counter() - start

        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="raw") as pool:
            for future in [pool.submit(task, i) for i in range(self.n)]:
                future.result()
        return busy[0]

    def run(self, round_no: int, http: HttpLog, series: Series, settle: float) -> None:
        prefix = f"pbench-{RUN_TOKEN}-raw-w{self.workers}-r{round_no}"
        pods: dict[int, list[str]] = {}

        def create(i: int) -> None:
            pods[i] = self._create_pod(prefix, i)

        try:
            with http.recording() as sent, Timer() as timer:
                busy = self._parallel(create)
            cold = Sample(timer.seconds, timer.cpu, list(sent))
            cold.detail = {"in_actions": busy, "engine_in_actions": sum(r.seconds for r in sent)}
            time.sleep(settle)
            with http.recording() as sent, Timer() as timer:
                busy = self._parallel(lambda i: self._remove_pod(pods[i]))
            down = Sample(timer.seconds, timer.cpu, list(sent))
            down.detail = {"in_actions": busy, "engine_in_actions": sum(r.seconds for r in sent)}
        finally:
            remove_labelled(f"{RUN_LABEL}={RUN_ID}")
        series.add(COLD, cold)
        series.add(TEARDOWN, down)


class ComposeContender:
    """docker-compose v1: up -d, up -d again, down, on a generated project."""

    def __init__(self, n: int, work_dir: Path, stop_timeout: int) -> None:
        self.n = n
        self.stop_timeout = stop_timeout
        self.path = work_dir / "docker-compose.yml"
        self.path.write_text(yaml.safe_dump(compose_file(n), sort_keys=False))
        self.env = {k: v for k, v in os.environ.items() if k != "COMPOSE_PARALLEL_LIMIT"}
        self.workers = COMPOSE_DEFAULT_PARALLEL_LIMIT

    def _compose(self, project: str, *args: str) -> Sample:
        command = [COMPOSE, "--no-ansi", "-f", str(self.path), "-p", project, *args]
        with Timer(children=True) as timer:
            done = subprocess.run(command, env=self.env, capture_output=True, text=True)
        if done.returncode != 0:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
            raise BenchError(f"{' '.join(command)} exited {done.returncode}:\n{tail}")
        return Sample(timer.seconds, timer.cpu)

    def run(self, round_no: int, http: HttpLog, series: Series, settle: float) -> None:
        project = re.sub(r"[^a-z0-9]", "", f"pbench{RUN_TOKEN}r{round_no}".lower())
        want = self.n * (1 + len(APP_CONTAINERS))
        try:
            cold = self._compose(project, "up", "-d")
            running = _count_running(f"com.docker.compose.project={project}")
            if running != want:
                raise BenchError(f"compose up: {running} containers run, expected {want}")
            time.sleep(settle)
            noop = self._compose(project, "up", "-d")
            time.sleep(settle)
            down = self._compose(project, "down", "-t", str(self.stop_timeout))
        finally:
            remove_labelled(f"{RUN_LABEL}={RUN_ID}")
        series.add(COLD, cold)
        series.add(STEADY, noop)
        series.add(TEARDOWN, down)


# ---------------------------------------------------------------------------------------
# Cleanup (untimed, with a client of its own)

_client: docker.DockerClient | None = None


def engine() -> docker.DockerClient:
    global _client
    if _client is None:
        _client = connect()
    return _client


def _force_remove(ids: Sequence[str]) -> None:
    api = engine().api
    for cid in ids:
        try:
            api.remove_container(cid, force=True, v=True)
        except docker.errors.NotFound:
            continue
        except docker.errors.APIError as exc:
            if exc.status_code == 409 and "in progress" in str(exc):
                continue
            raise


def remove_labelled(label_filter: str) -> None:
    found = engine().api.containers(all=True, filters={"label": label_filter})
    _force_remove([c["Id"] for c in found])


def remove_podsync_source(source: str) -> None:
    remove_labelled(f"{LABEL_POD_SOURCE}={source}")


def _count_running(label_filter: str) -> int:
    return len(engine().api.containers(filters={"label": label_filter, "status": "running"}))


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie - killed, not yet reaped - does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rpartition(")")[2].split()[:1] != ["Z"]
    return True


def remove_leftovers(*, this_run: bool) -> int:
    """Remove this run's containers (``this_run``), or those of runs on this host whose
    process has gone. Returns how many were removed."""
    api = engine().api
    stale: list[str] = []
    host = socket.gethostname()
    for c in api.containers(all=True, filters={"label": f"{BENCH_LABEL}={BENCH_VALUE}"}):
        run = (c.get("Labels") or {}).get(RUN_LABEL, "")
        run_host, _, rest = run.rpartition(".")[0].rpartition(".")
        if this_run:
            if run == RUN_ID:
                stale.append(c["Id"])
        elif run_host == host and rest.isdigit() and not _alive(int(rest)):
            stale.append(c["Id"])
    for c in api.containers(all=True, filters={"label": f"{LABEL_POD_NAMESPACE}={NAMESPACE}"}):
        source = (c.get("Labels") or {}).get(LABEL_POD_SOURCE, "")
        parts = source.split("-")
        if this_run:
            if source.startswith(f"{SOURCE_PREFIX}-{RUN_TOKEN}-"):
                stale.append(c["Id"])
        elif len(parts) > 1 and parts[1].isdigit() and not _alive(int(parts[1])):
            stale.append(c["Id"])
    _force_remove(stale)
    for image in api.images():
        for ref in image.get("RepoTags") or ():
            repository, _, tag = str(ref).rpartition(":")
            if repository not in {r.rpartition(":")[0] for r in IMAGES}:
                continue
            if not tag.startswith(IMAGE_TAG_PREFIX):
                continue
            pid = tag.removeprefix(IMAGE_TAG_PREFIX).partition("-")[0]
            if (ref in IMAGES) if this_run else (pid.isdigit() and not _alive(int(pid))):
                with contextlib.suppress(docker.errors.APIError):
                    api.remove_image(ref)  # the tag only: the image keeps its other tags
    return len(stale)


def tag_images() -> None:
    api = engine().api
    for reference, source in IMAGES.items():
        repository, _, tag = reference.rpartition(":")
        if not api.tag(source, repository, tag):
            raise BenchError(f"could not tag {source} as {reference}")


# ---------------------------------------------------------------------------------------
# Reporting


def _seconds(s: float | None) -> str:
    if s is None:
        return "-"
    if s >= 10:
        return f"{s:.1f} s"
    if s >= 1:
        return f"{s:.2f} s"
    return f"{s * 1000:.0f} ms" if s >= 0.1 else f"{s * 1000:.1f} ms"


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b <= 0:
        return "-"
    return f"{a / b:.2f}x"


@dataclass
class Report:
    podsync: dict[int, Series]
    raw: dict[int, Series]
    compose: Series
    default_workers: int
    pods: int

    def floor(self, phase: str) -> Series:
        return min(
            (s for s in self.raw.values() if s.min(phase) is not None),
            key=lambda s: s.min(phase) or 0.0,
        )

    def floor_workers(self) -> tuple[int, ...]:
        """The raw SDK's best worker count so far (for the cold phase, the costlier)."""
        return (self.floor(COLD).workers,)

    @property
    def headline(self) -> Series:
        return self.podsync[self.default_workers]


def table(report: Report) -> tuple[list[str], list[list[str]]]:
    header = [
        "contender",
        "workers",
        "runs",
        "cold min",
        "cold median",
        "cold / floor",
        "steady (no-op) min",
        "steady median",
        "steady / compose no-op",
        "teardown min",
        "teardown median",
        "teardown / floor",
    ]
    cold_floor = report.floor(COLD)
    down_floor = report.floor(TEARDOWN)
    compose_noop = report.compose.min(STEADY)
    rows: list[tuple[str, Series]] = []
    for w in sorted(report.podsync):
        mark = " (default)" if w == report.default_workers else ""
        rows.append((f"podsync{mark}", report.podsync[w]))
    for w in sorted(report.raw):
        marks = []
        if report.raw[w] is cold_floor:
            marks.append("cold")
        if report.raw[w] is down_floor:
            marks.append("teardown")
        floor = f" (floor: {', '.join(marks)})" if marks else ""
        rows.append((f"raw SDK{floor}", report.raw[w]))
    rows.append((f"docker-compose {compose_version()}", report.compose))
    body: list[list[str]] = []
    for name, s in rows:
        steady = s.min(STEADY)
        body.append(
            [
                name,
                str(s.workers) if s.contender != COMPOSE_NAME else f"{s.workers} (limit)",
                str(len(s.times(COLD))),
                _seconds(s.min(COLD)),
                _seconds(s.median(COLD)),
                _ratio(s.min(COLD), cold_floor.min(COLD)),
                _seconds(steady),
                _seconds(s.median(STEADY)),
                _ratio(steady, compose_noop) if s.contender == PODSYNC else "-",
                _seconds(s.min(TEARDOWN)),
                _seconds(s.median(TEARDOWN)),
                _ratio(s.min(TEARDOWN), down_floor.min(TEARDOWN)),
            ]
        )
    return header, body


def _phase_bar(
    name: str, s: Series, phase: str, note: str, reference: bool = False
) -> svgchart.Bar:
    """A bar at the minimum of ``s``'s runs of ``phase``, its whisker to the slowest."""
    times = s.times(phase)
    low, high = min(times), max(times)
    return svgchart.Bar(name, low, low, high, f"{_seconds(low)} {note}".rstrip(), reference)


def plot(report: Report, notes: Sequence[str] = ()) -> str:
    """The ``--plot`` figure: cold apply and teardown of podsync (at its default worker
    count) beside the raw SDK's floor and docker-compose, measured in the same run; the
    steady sync beside compose's no-op ``up``; and cold apply by worker count."""
    p, w = report.headline, report.default_workers
    cold_floor, down_floor = report.floor(COLD), report.floor(TEARDOWN)
    compose = report.compose
    mine = f"podsync ({w} workers)"
    per_pod = 1 + len(APP_CONTAINERS)
    phases = []
    for phase, heading, floor in (
        (
            COLD,
            f"cold apply: {report.pods * per_pod} containers from nothing",
            cold_floor,
        ),
        (TEARDOWN, "teardown: stop and remove them all", down_floor),
    ):

        def ratio(s: Series, phase: str = phase, floor: Series = floor) -> str:
            return f"({_ratio(s.min(phase), floor.min(phase))} the floor)"

        bars = (
            _phase_bar(mine, p, phase, ratio(p)),
            _phase_bar(f"raw SDK ({floor.workers} workers, floor)", floor, phase, "", True),
            _phase_bar(COMPOSE_NAME, compose, phase, ratio(compose)),
        )
        phases.append(svgchart.BarGroup(heading, bars))
    whisker = "bar: minimum of the runs; whisker: to the slowest run"
    steady_ratio = f"({(p.min(STEADY) or 0) / (compose.min(STEADY) or 1):.1%} of compose's no-op)"
    steady = (
        _phase_bar(mine, p, STEADY, steady_ratio),
        _phase_bar(f"{COMPOSE_NAME} up -d again (no-op)", compose, STEADY, "", True),
    )
    curves = [
        svgchart.Series(
            f"{name} cold apply",
            tuple(
                svgchart.Point(k, t)
                for k, s in sorted(series.items())
                if (t := s.min(COLD)) is not None
            ),
            reference=name == RAW,
        )
        for name, series in (("podsync", report.podsync), (RAW, report.raw))
    ]
    counts = tuple(float(k) for k in sorted({*report.podsync, *report.raw}))
    charts: list[svgchart.Chart] = [
        svgchart.BarChart(
            f"Applying {report.pods} pods on the engine ({per_pod} containers each)",
            svgchart.Axis(f"seconds ({whisker})", format=svgchart.seconds),
            tuple(phases),
        ),
        svgchart.BarChart(
            "Steady sync: the same pods again, nothing to do",
            svgchart.Axis(f"seconds ({whisker})", format=svgchart.seconds),
            (svgchart.BarGroup("", steady),),
        ),
        svgchart.LineChart(
            "Cold apply by worker count (minimum of the runs)",
            svgchart.Axis("workers", log=True, ticks=counts),
            svgchart.Axis("seconds", format=svgchart.seconds),
            tuple(c for c in curves if c.points),
            height=200.0,
        ),
    ]
    desc = (
        f"Cold apply of {report.pods} pods: podsync {_seconds(p.min(COLD))}, raw SDK floor "
        f"{_seconds(cold_floor.min(COLD))}, docker-compose {_seconds(compose.min(COLD))}. "
        f"Teardown: podsync {_seconds(p.min(TEARDOWN))}, floor "
        f"{_seconds(down_floor.min(TEARDOWN))}, docker-compose {_seconds(compose.min(TEARDOWN))}. "
        f"Steady sync: podsync {_seconds(p.min(STEADY))}, compose's no-op up "
        f"{_seconds(compose.min(STEADY))}."
    )
    return svgchart.figure("podsync apply benchmark", desc, charts, notes)


def render_markdown(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join(":---" if k == 0 else "---:" for k in range(len(header))) + "|")
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


def render_text(header: list[str], body: list[list[str]]) -> str:
    widths = [max(len(h), *(len(row[k]) for row in body)) for k, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        return "  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in pairs)

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in body)])


def _calls(requests_sent: Sequence[Request]) -> Counter[str]:
    return Counter(r.call for r in requests_sent)


def _describe_calls(calls: Counter[str]) -> str:
    return ", ".join(f"{call} x{n}" for call, n in sorted(calls.items())) or "none"


def checks(report: Report) -> list[tuple[bool, str]]:
    p = report.headline
    w = report.default_workers
    results: list[tuple[bool, str]] = []
    cold_floor, down_floor = report.floor(COLD), report.floor(TEARDOWN)
    cold, floor = p.min(COLD), cold_floor.min(COLD)
    assert cold is not None
    assert floor is not None
    results.append(
        (
            cold <= TARGET_COLD_RATIO * floor,
            f"cold apply, podsync W={w}: {_seconds(cold)} = {cold / floor:.2f}x the floor "
            f"(raw SDK W={cold_floor.workers}, {_seconds(floor)}) <= {TARGET_COLD_RATIO:.2f}x"
            f"{_medians(p, cold_floor, COLD)}",
        )
    )
    # The steady-state engine calls, in every steady sync of every worker count.
    steadies = _steady_samples(report)
    http = [_calls(s.requests) for s in steadies]
    lists = Counter(sum(n for call, n in c.items() if call in LIST_CALLS) for c in http)
    writes = Counter(sum(n for call, n in c.items() if not call.startswith("GET ")) for c in http)
    proxy = Counter(_describe_calls(s.calls) for s in steadies)
    proxy_ok = all(s.calls == Counter(list_containers=1) for s in steadies)
    results.append(
        (
            set(lists) == {1} and set(writes) == {0} and proxy_ok,
            f"steady sync = exactly one engine list call: {_histogram(lists)} list request(s) "
            f"({_spread(http, LIST_CALLS)}) and {_histogram(writes)} mutating request(s) per "
            f"sync, in {len(steadies)} steady syncs (all worker counts); runtime calls "
            f"{_histogram(proxy)}",
        )
    )
    steady, noop = p.min(STEADY), report.compose.min(STEADY)
    assert steady is not None
    assert noop is not None
    results.append(
        (
            steady <= TARGET_STEADY_VS_COMPOSE * noop,
            f"steady sync, podsync W={w}: {_seconds(steady)} = {steady / noop:.1%} of compose's "
            f"no-op up ({_seconds(noop)}) <= {TARGET_STEADY_VS_COMPOSE:.0%}",
        )
    )
    down, dfloor = p.min(TEARDOWN), down_floor.min(TEARDOWN)
    assert down is not None
    assert dfloor is not None
    results.append(
        (
            down <= TARGET_TEARDOWN_RATIO * dfloor,
            f"teardown, podsync W={w}: {_seconds(down)} = {down / dfloor:.2f}x the floor "
            f"(raw SDK W={down_floor.workers}, {_seconds(dfloor)}) <= {TARGET_TEARDOWN_RATIO:.2f}x"
            f"{_medians(p, down_floor, TEARDOWN)}",
        )
    )
    return results


def _medians(mine: Series, floor: Series, phase: str) -> str:
    """The medians' ratio, for judging a ratio of minimums on a noisy engine."""
    a, b = mine.median(phase), floor.median(phase)
    if a is None or b is None:
        return ""
    return f" (medians: {_seconds(a)} / {_seconds(b)} = {a / b:.2f}x)"


LIST_CALLS = frozenset({"GET /containers/json", "GET /images/json"})


def _steady_samples(report: Report) -> list[Sample]:
    return [s for series in report.podsync.values() for s in series.samples(STEADY)]


def _histogram(values: Counter[Any]) -> str:
    """``1`` when every sync had 1; ``1 (8 syncs), 3 (1 sync)`` otherwise."""
    if len(values) == 1:
        return str(next(iter(values)))
    return ", ".join(f"{v} ({n} sync{'s' if n > 1 else ''})" for v, n in sorted(values.items()))


def _spread(http: Sequence[Counter[str]], calls: Collection[str]) -> str:
    """How many of each call in ``calls`` the syncs made: ``GET /images/json x0``."""
    parts = []
    for call in sorted(calls):
        parts.append(f"{call} x{_histogram(Counter(c[call] for c in http))}")
    return ", ".join(parts)


def _best(samples: Sequence[Sample]) -> Sample:
    return min(samples, key=lambda s: s.seconds)


def _mean_latency(samples: Sequence[Sample], call: str) -> str:
    times = [r.seconds for s in samples for r in s.requests if r.call == call]
    return f"{statistics.mean(times) * 1000:.1f} ms" if times else "-"


def details(report: Report) -> list[str]:
    """Where the time goes: INFO lines."""
    lines: list[str] = []
    w = report.default_workers
    p = report.headline
    containers = report.pods * (1 + len(APP_CONTAINERS))
    for phase in (COLD, TEARDOWN):
        floor = report.floor(phase)
        mine, theirs = _best(p.samples(phase)), _best(floor.samples(phase))
        d, r = mine.detail, theirs.detail
        mine_rest = (d["in_actions"] - d["engine_in_actions"]) / containers * 1000
        their_rest = (r["in_actions"] - r["engine_in_actions"]) / containers * 1000
        lines.append(
            f"INFO: {phase}, best runs: podsync W={w} {_seconds(mine.seconds)} = observe+plan "
            f"{_seconds(d['before_apply'])} + apply {_seconds(d['apply'])}; its "
            f"{int(d['actions'])} actions were busy {d['in_actions']:.2f} s, engine requests "
            f"{d['engine_in_actions']:.2f} s of it, the rest {mine_rest:.2f} ms per container. "
            f"Raw SDK W={floor.workers} {_seconds(theirs.seconds)}: its pod tasks were busy "
            f"{r['in_actions']:.2f} s, engine requests {r['engine_in_actions']:.2f} s of it, "
            f"the rest {their_rest:.2f} ms per container."
        )
        lines.append(
            f"INFO: {phase} client CPU (best runs): podsync W={w} {mine.cpu:.2f} s, raw SDK "
            f"W={floor.workers} {theirs.cpu:.2f} s, docker-compose "
            f"{_best(report.compose.samples(phase)).cpu:.2f} s (its processes)."
        )
        lines.append(
            f"INFO: {phase} engine requests of podsync's best run: "
            f"{_describe_calls(_calls(mine.requests))}"
        )
    for call in (
        "POST /containers/create",
        "POST /containers/{id}/start",
        "POST /containers/{id}/stop",
        "DELETE /containers/{id}",
    ):
        per = ", ".join(
            f"W={s.workers} {_mean_latency(s.samples(COLD) + s.samples(TEARDOWN), call)}"
            for s in [*report.podsync.values()]
        )
        raw = ", ".join(
            f"W={s.workers} {_mean_latency(s.samples(COLD) + s.samples(TEARDOWN), call)}"
            for s in report.raw.values()
        )
        lines.append(f"INFO: mean latency of {call}: podsync {per}; raw SDK {raw}")
    steadies = _steady_samples(report)
    others = [
        Counter({k: n for k, n in _calls(s.requests).items() if k not in LIST_CALLS})
        for s in steadies
    ]
    extra = sorted({k for c in others for k in c})
    if extra:
        lines.append(
            f"INFO: other engine requests of the steady syncs: {_spread(others, extra)} - "
            "inspects of exited containers that podsync owns and first saw in that list "
            "(other runs' pods on a shared engine: DockerRuntime inspects every exited "
            "podsync container once, desired or not)."
        )
    steady = _best(p.samples(STEADY))
    lines.append(
        f"INFO: podsync steady sync (best run, {_seconds(steady.seconds)}): runtime calls "
        f"{dict(sorted(steady.calls.items()))}; engine requests "
        f"{_describe_calls(_calls(steady.requests))} "
        f"({sum(r.seconds for r in steady.requests) * 1000:.1f} ms of engine time); client CPU "
        f"{steady.cpu * 1000:.0f} ms; compose no-op client CPU "
        f"{_best(report.compose.samples(STEADY)).cpu:.2f} s."
    )
    return lines


_compose_version: str | None = None


def compose_version() -> str:
    global _compose_version
    if _compose_version is None:
        try:
            out = subprocess.run(
                [COMPOSE, "version", "--short"], capture_output=True, text=True, check=True
            ).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            out = "?"
        _compose_version = out or "?"
    return _compose_version


# ---------------------------------------------------------------------------------------
# Main


def _workers_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(sorted({int(x) for x in text.split(",") if x.strip()}))
    except ValueError:
        message = f"expected comma-separated integers, got {text!r}"
        raise argparse.ArgumentTypeError(message) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("worker counts must be at least 1")
    return values


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bench_apply",
        description="Time podsync's apply on the real engine beside the raw docker SDK "
        "and docker-compose v1 (cold apply, steady-state sync, teardown).",
    )
    parser.add_argument("--pods", type=int, default=50, help="pods (3 containers each; 50)")
    parser.add_argument(
        "--workers",
        type=int,
        default=DEFAULT_WORKERS,
        help=f"podsync's apply workers for the targets (default DEFAULT_WORKERS={DEFAULT_WORKERS})",
    )
    parser.add_argument(
        "--podsync-workers",
        type=_workers_list,
        default=PODSYNC_WORKERS,
        help="other worker counts to run podsync with (default 4,8,16)",
    )
    parser.add_argument(
        "--raw-workers",
        type=_workers_list,
        default=RAW_WORKERS,
        help="the raw SDK's worker counts; the best is the floor (default 1,2,4,8,16)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    parser.add_argument(
        "--curve-rounds",
        type=int,
        default=1,
        help="rounds that run every worker count (default 1); the other rounds run podsync "
        "at --workers and the raw SDK at its best cold worker count so far",
    )
    parser.add_argument(
        "--stop-timeout", type=int, default=10, help="stop grace period in seconds (default 10)"
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=0.25,
        help="untimed pause between phases, seconds (default 0.25)",
    )
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--plot", metavar="FILE.svg", help="also draw the times as an SVG chart")
    args = parser.parse_args(argv)
    if args.pods < 1 or args.pods > 999:
        parser.error("--pods must be between 1 and 999")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.curve_rounds < 1:
        parser.error("--curve-rounds must be at least 1")
    if args.stop_timeout < 0 or args.settle < 0:
        parser.error("--stop-timeout and --settle must not be negative")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    if shutil.which(COMPOSE) is None:
        print(f"bench_apply: {COMPOSE} is not installed (Debian: docker-compose)", file=sys.stderr)
        return 2
    client = engine()
    ensure_test_images(client)
    version = client.version()
    removed = remove_leftovers(this_run=False)
    n = args.pods
    print(
        f"podsync apply benchmark - {n} pods x (net + {len(APP_CONTAINERS)} containers) = "
        f"{n * (1 + len(APP_CONTAINERS))} containers; Docker engine {version.get('Version')} "
        f"(API {version.get('ApiVersion')}), docker-compose {compose_version()}, Python "
        f"{platform.python_version()}, {os.cpu_count()} CPUs; {args.repeat} rounds, stop "
        f"timeout {args.stop_timeout} s."
    )
    if removed:
        print(f"(removed {removed} containers left by an earlier run that died)")
    print(
        "Times are the minimum and median of the rounds; the engine may be shared, so the "
        "minimum is the better estimate of the cost."
    )
    print()

    podsync_ws = tuple(sorted({args.workers, *args.podsync_workers}))
    report = Report(
        podsync={w: Series(PODSYNC, w) for w in podsync_ws},
        raw={w: Series(RAW, w) for w in args.raw_workers},
        compose=Series(COMPOSE_NAME, COMPOSE_DEFAULT_PARALLEL_LIMIT),
        default_workers=args.workers,
        pods=n,
    )
    root_dir = tempfile.mkdtemp(prefix="podsync-bench-apply-")
    work_dir = Path(tempfile.mkdtemp(prefix="podsync-bench-compose-"))
    http = HttpLog()
    podsyncs: dict[int, PodsyncContender] = {}
    raws: dict[int, RawContender] = {}
    try:
        tag_images()
        with http.installed():
            api_version = str(version.get("ApiVersion"))
            for w in podsync_ws:
                podsyncs[w] = PodsyncContender(w, n, root_dir, args.stop_timeout)
            for w in args.raw_workers:
                raws[w] = RawContender(w, n, api_version, args.stop_timeout)
            compose = ComposeContender(n, work_dir, args.stop_timeout)
            for k in range(args.repeat):
                order = CONTENDERS[k % 3 :] + CONTENDERS[: k % 3]
                # A curve round runs every worker count; the others run podsync at
                # --workers and the raw SDK at its best worker count so far (the floor).
                curve = k < args.curve_rounds
                for contender in order:
                    round_started = time.perf_counter()
                    if contender == PODSYNC:
                        ws = podsync_ws if curve else (args.workers,)
                        for w in ws if k % 2 == 0 else ws[::-1]:
                            podsyncs[w].run(k, http, report.podsync[w], args.settle)
                    elif contender == RAW:
                        ws = args.raw_workers if curve else report.floor_workers()
                        for w in ws if k % 2 == 0 else ws[::-1]:
                            raws[w].run(k, http, report.raw[w], args.settle)
                    else:
                        compose.run(k, http, report.compose, args.settle)
                    print(
                        f"  round {k + 1}/{args.repeat}: {contender} done in "
                        f"{time.perf_counter() - round_started:.0f} s",
                        file=sys.stderr,
                        flush=True,
                    )
    except (
        BenchError,
        podsync.PodsyncError,
        docker.errors.DockerException,
        requests.RequestException,
        OSError,
    ) as exc:
        print(f"bench_apply: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    finally:
        for p in podsyncs.values():
            p.close()
        for r in raws.values():
            r.close()
        remove_leftovers(this_run=True)
        shutil.rmtree(root_dir, ignore_errors=True)
        shutil.rmtree(work_dir, ignore_errors=True)
        client.close()

    header, body = table(report)
    print(render_markdown(header, body) if args.markdown else render_text(header, body))
    print()
    print(
        "cold: from nothing to all containers running. steady: podsync's sync of the same "
        "pods again (no changes); for compose, `up -d` again (no-op). teardown: stop and "
        "remove everything (podsync: a sync with no desired pods, deletions allowed for "
        "this run's source only; compose: `down -t`). floor: the raw SDK's best worker "
        "count for that phase, by the minimum. Ratios are of minimums."
    )
    print()
    results = checks(report)
    for ok, line in results:
        print(f"{'PASS' if ok else 'FAIL'}: {line}")
    for line in details(report):
        print(line)
    if args.plot:
        argv = sys.argv[1:] if argv is None else argv
        svgchart.save(args.plot, plot(report, svgchart.run_notes("benchmarks.bench_apply", argv)))
        print(f"chart written to {args.plot}")
    print(f"total benchmark time {time.perf_counter() - started:.0f} s")
    return 1 if args.check and not all(ok for ok, _ in results) else 0


if __name__ == "__main__":
    sys.exit(main())
