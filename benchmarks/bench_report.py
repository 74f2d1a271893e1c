"""Fleet reporting benchmark (issue 32): what three reporting hosts cost etcd, and how
fast the fleet's view follows what happens on them.

What it measures
================

etcd (Debian's, on 127.0.0.1, ``tests/support/etcd_server.py``) and three extra Docker
engines (``tests.support.engines.start_engines``: real ``dockerd`` processes, no bridge,
the test images copied in) are started for the run. Each host gets ``--pods`` pods
(default 10: a network container and a busybox app that restarts, ``restartPolicy:
Always``) published to its key ``/registry/hosts/<host>/kubelet``, and one ``podsync run
etcd://.../registry/hosts/<host>/kubelet -H <engine>`` process of its own, which reports
back under ``/registry/hosts/<host>/`` with a lease of ``--ttl`` seconds (default 10).
Once every pod of every host shows Running in ``podsync.report.fleet_statuses``:

* **steady state** (``--steady`` seconds, default 60): etcd's writes per second, as its
  revision counts them (every put, delete and transaction that changes a key moves it
  by one), and the lease keepalives per second, from etcd's own ``/metrics``
  (``grpc_server_handled_total`` of ``LeaseKeepAlive``). Target: keepalives only - no
  revision change.
* **death to fleet status** (``--kills`` times, default 20): an app container killed
  with ``docker kill`` on one of the engines, in turn; the time until its pod's status
  key under ``/registry/hosts/<host>/pods/`` says so (its restart count grown, or it not
  Running), seen by a watch on that key. Target: p95 at most 1 s.
* **SIGKILL to NotReady**: one host's ``podsync run`` killed with SIGKILL; the time
  until ``podsync.report.fleet_hosts`` shows that host NotReady (its lease expired). Target:
  within the lease TTL plus one second.

Everything is the benchmark's own: the engines and etcd (their directories under /tmp
are removed at the end), the processes. Nothing on the engine at ``DOCKER_HOST`` is
changed beyond reading its test images. This is a benchmark script, not a test.

Run it from the repository root, as root (it starts ``dockerd``), with the engine up::

    .venv/bin/python -m benchmarks.bench_report [--pods 10] [--steady 60] [--kills 20] [--ttl 10]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import requests

import podsync.report
from podsync.etcd._client import EtcdClient
from podsync.etcd._urls import parse_etcd_url
from podsync.labels import LABEL_CONTAINER, LABEL_POD_NAME
from podsync.report._records import parse_pod_record, pod_key
from tests.support.engine import (
    PAUSE_IMAGE,
    TEST_IMAGE,
    EngineUnreachable,
    connect,
    ensure_test_images,
)
from tests.support.engines import ExtraEngine, start_engines, stop_engines
from tests.support.etcd_server import EtcdServer

NAMESPACE = "bench-report"
_COMMAND = ["/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1 & wait $!; done"]
_KEEPALIVES = re.compile(
    r'^grpc_server_handled_total\{[^}]*grpc_method="LeaseKeepAlive"[^}]*\} (?P<n>[0-9.e+]+)$',
    re.M,
)


def pods_json(host: str, pods: int) -> str:
    """The host's key: a JSON list of pods, as ``podsync publish`` writes it."""
    return json.dumps(
        [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"{host}-{i:02d}", "namespace": NAMESPACE},
                "spec": {
                    "terminationGracePeriodSeconds": 1,
                    "containers": [
                        {
                            "name": "app",
                            "image": TEST_IMAGE,
                            "imagePullPolicy": "Never",
                            "command": _COMMAND,
                        }
                    ],
                },
            }
            for i in range(pods)
        ]
    )


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def wait_until(condition: Callable[[], Any], timeout: float, pause: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(pause)
    raise SystemExit(f"bench_report: gave up after {timeout:g}s")


def keepalives(etcd: EtcdServer) -> float:
    """etcd's count of lease keepalive calls handled so far."""
    text = requests.get(f"http://{etcd.endpoint}/metrics", timeout=5).text
    return sum(float(m["n"]) for m in _KEEPALIVES.finditer(text))


def start_run(
    etcd: EtcdServer, engine: ExtraEngine, work: Path, ttl: int
) -> subprocess.Popen[bytes]:
    """``podsync run`` of one host's key, on its engine, reporting back."""
    root = work / "roots" / engine.name
    log = open(work / f"run-{engine.name}.log", "wb")  # noqa: SIM115 - the process's
    return subprocess.Popen(
        [
            str(Path(sys.executable).with_name("podsync")),
            "run",
            etcd.url(f"/registry/hosts/{engine.name}/kubelet"),
            "-H",
            engine.address,
            "--root-dir",
            str(root),
            "--network-mode",
            "none",
            "--network-image",
            PAUSE_IMAGE,
            "--no-probe",
            "--report-ttl",
            str(ttl),
        ],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def all_running(endpoints: str, hosts: Sequence[str], pods: int) -> bool:
    statuses = podsync.report.fleet_statuses(endpoints)
    running = [
        s for s in statuses if s.host in hosts and s.record.get("display_status") == "Running"
    ]
    return len(running) == len(hosts) * pods


def steady(etcd: EtcdServer, seconds: float) -> tuple[float, float]:
    """etcd writes per second (revision) and keepalives per second over ``seconds``."""
    revision, calls, started = etcd.revision(), keepalives(etcd), time.monotonic()
    time.sleep(seconds)
    elapsed = time.monotonic() - started
    return (etcd.revision() - revision) / elapsed, (keepalives(etcd) - calls) / elapsed


def _watch_for_change(
    client: EtcdClient,
    key: str,
    restarts: int,
    start: int,
    seen: threading.Event,
    closers: list[Callable[[], None]],
) -> None:
    """Set ``seen`` once the pod record at ``key`` shows more restarts than ``restarts``
    or a status other than Running."""
    for batch in client.watch(start, idle=30, key=key, on_open=closers.append):
        if batch.events and batch.value is not None:
            record = parse_pod_record(batch.value)
            if record["restarts"] != restarts or record["display_status"] != "Running":
                seen.set()
                return


def death_to_status(etcd: EtcdServer, engines: Sequence[ExtraEngine], kills: int) -> list[float]:
    """Seconds from each ``docker kill`` of an app container to its pod's status key
    showing it, seen by a watch on that key."""
    client = EtcdClient(parse_etcd_url(etcd.url("/registry/hosts/")))
    seconds: list[float] = []
    for k in range(kills):
        engine = engines[k % len(engines)]
        docker_client = engine.client()
        try:
            apps = docker_client.api.containers(
                filters={"label": [f"{LABEL_CONTAINER}=app"], "status": "running"}
            )
            victim = apps[k % len(apps)]
            pod = f"{NAMESPACE}/{victim['Labels'][LABEL_POD_NAME]}"
            key = pod_key(engine.name, pod)
            before = client.read(key)
            assert before.value is not None, key
            restarts = parse_pod_record(before.value)["restarts"]
            seen = threading.Event()
            closers: list[Callable[[], None]] = []

            watcher = threading.Thread(
                target=_watch_for_change,
                args=(client, key, restarts, before.revision + 1, seen, closers),
                daemon=True,
            )
            watcher.start()
            time.sleep(0.3)  # the watch created
            killed = time.monotonic()
            docker_client.api.kill(victim["Id"])
            if not seen.wait(30):
                raise SystemExit(f"bench_report: {pod} on {engine.name}: no status change in 30s")
            seconds.append(time.monotonic() - killed)
            for close in closers:
                close()
            # Let the restart settle before the next kill.
            time.sleep(1.5)
        finally:
            docker_client.close()
    client.close()
    return seconds


def sigkill_to_not_ready(endpoints: str, host: str, run: subprocess.Popen[bytes]) -> float:
    killed = time.monotonic()
    run.send_signal(signal.SIGKILL)
    run.wait()
    wait_until(
        lambda: any(h.name == host and not h.ready for h in podsync.report.fleet_hosts(endpoints)),
        300,
        0.1,
    )
    return time.monotonic() - killed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--pods", type=int, default=10)
    parser.add_argument("--steady", type=float, default=60.0)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--ttl", type=int, default=10)
    args = parser.parse_args(argv)
    try:
        source = connect()
    except EngineUnreachable as exc:
        print(f"bench_report: {exc}", file=sys.stderr)
        return 2
    ensure_test_images(source)
    print(f"{os.cpu_count()} CPUs; 3 engines, {args.pods} pods each; lease TTL {args.ttl} s")
    with tempfile.TemporaryDirectory(prefix="podsync-bench-report-") as tmp:
        work = Path(tmp)
        etcd = EtcdServer(work / "etcd")
        etcd.start()
        engines = start_engines(3, source=source)
        runs: list[subprocess.Popen[bytes]] = []
        endpoints = f"etcd://{etcd.endpoint}"
        try:
            for engine in engines:
                etcd.put(
                    f"/registry/hosts/{engine.name}/kubelet", pods_json(engine.name, args.pods)
                )
                runs.append(start_run(etcd, engine, work, args.ttl))
            hosts = [e.name for e in engines]
            wait_until(lambda: all_running(endpoints, hosts, args.pods), 300, 0.5)
            time.sleep(2 * args.ttl)  # past the first writes of usage and records
            writes, calls = steady(etcd, args.steady)
            died = death_to_status(etcd, engines, args.kills)
            not_ready = sigkill_to_not_ready(endpoints, engines[0].name, runs[0])
        finally:
            for run in runs:
                if run.poll() is None:
                    run.send_signal(signal.SIGTERM)
            for run in runs:
                try:
                    run.wait(30)
                except subprocess.TimeoutExpired:
                    run.kill()
            for engine in engines:
                engine.remove_all_containers()
            stop_engines(engines)
            etcd.stop()
            source.close()
    print("| measure | figure | target |")
    print("| --- | --- | --- |")
    print(f"| etcd writes at steady state | {writes:.3f}/s | 0 (keepalives only) |")
    expected = 3 * 4 / args.ttl  # three hosts, each renewing every TTL/4
    print(f"| lease keepalives at steady state | {calls:.2f}/s | {expected:.2f}/s |")
    print(
        f"| container death to fleet status | p50 {statistics.median(died):.2f} s, "
        f"p95 {percentile(died, 0.95):.2f} s (n={len(died)}) | p95 <= 1 s |"
    )
    print(f"| SIGKILL to NotReady | {not_ready:.2f} s | <= TTL + 1 = {args.ttl + 1} s |")
    ok = writes == 0 and percentile(died, 0.95) <= 1.0 and not_ready <= args.ttl + 1
    print("PASS" if ok else "FAIL")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
