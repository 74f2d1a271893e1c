"""The reporting benchmark (issue 32): what reporting hosts cost etcd, and how fast the
fleet's view follows a host.

What it measures
================

``--hosts`` hosts (default 3), each a ``podsync.Reconciler`` with a
``podsync.HostReporter`` (the same pair ``podsync run etcd://...`` makes) following its
own key ``/registry/hosts/<host>/kubelet`` with ``--pods`` pods (default 5), on the engines of
``--engine`` (one per host, in turn; default the engine of ``DOCKER_HOST`` for all):

* **steady state**: once every pod's record says Running and etcd's revision stopped
  moving, etcd's revision over ``--quiet`` seconds (default 30): writes per second
  (target: none - keepalives only, which make no revision), and the keepalives made.
* **death to fleet status**: ``--kills`` times (default 15: each pod once, so that
  none waits out a crash-loop back-off), a pod's app container is killed through the
  engine; the time until the pod's record in etcd says so (a restart counted, or the
  container not running), p50 and p95 (target: p95 <= 1 s).
* **SIGKILL to NotReady**: ``--sigkills`` times (default 3), a ``podsync run
  --report-to ... --report-ttl`` subprocess is killed with SIGKILL; the time until its
  heartbeat key is gone (target: within the TTL plus one second).

etcd is Debian's ``etcd`` started on 127.0.0.1 for the run (``tests/support/etcd_server.py``);
the pods run in namespaces of their own, under a scope of the run's own (nothing else on
the engines is touched), with the test images (``python -m tests.support.engine images``).
Everything it made is removed at the end. This is a benchmark script, not a test.

Run it from the repository root::

    python -m benchmarks.bench_report
    python -m benchmarks.bench_report --quiet 10 --kills 5 --sigkills 1   # quick
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import docker

import podsync
from benchmarks.bench_etcd import PAUSE_IMAGE, percentile, value, wait_until
from podsync.docker import DockerRuntime
from podsync.labels import (
    LABEL_CONTAINER,
    LABEL_POD_NAME,
    LABEL_POD_NAMESPACE,
    LABEL_VOLUME_NAMESPACE,
)
from podsync.report._records import heartbeat_key, pod_key
from tests.support.etcd_server import EtcdServer

TTL = 4


class BenchHost:
    """One reporting host: its loop, its reporter, its engine and namespace."""

    def __init__(self, etcd: EtcdServer, name: str, engine: str | None, work: Path) -> None:
        self.name, self.engine = name, engine
        self.namespace = f"bench-{uuid.uuid4().hex[:8]}"
        self.client = docker.DockerClient(base_url=engine) if engine else docker.from_env()
        if engine:
            os.environ["DOCKER_HOST"] = engine
        self.runtime = DockerRuntime()
        self.reporter = podsync.HostReporter(
            f"etcd://{etcd.endpoint}/registry/hosts/{name}", runtime=self.runtime
        )
        options = podsync.PlanOptions(
            network_mode="none",
            network_image=PAUSE_IMAGE,
            root_dir=str(work / name),
            scope=f"bench-report-{self.namespace}",
        )
        self.loop = podsync.Reconciler(
            [etcd.url(f"/registry/hosts/{name}/kubelet")],
            self.runtime,
            options,
            probe=False,
            board=self.reporter,
        )

    def record(self, etcd: EtcdServer, pod: str) -> dict[str, Any] | None:
        raw = etcd.get(pod_key(self.name, f"{self.namespace}/{pod}"))
        return None if raw is None else dict(json.loads(raw))

    def app(self, pod: str) -> str | None:
        found = self.client.api.containers(
            filters={
                "label": [f"{LABEL_POD_NAMESPACE}={self.namespace}", f"{LABEL_POD_NAME}={pod}"]
            }
        )
        ids = [c["Id"] for c in found if c["Labels"].get(LABEL_CONTAINER) == "app"]
        return ids[0] if ids else None

    def clean(self) -> None:
        """Remove the containers (the network containers last: podman refuses them
        while others join them) and the volumes of this host's pods."""
        mine = {"label": f"{LABEL_POD_NAMESPACE}={self.namespace}"}
        found = self.client.api.containers(all=True, filters=mine)
        found.sort(key=lambda c: c["Labels"].get(LABEL_CONTAINER) == "net")
        for c in found:
            self.client.api.remove_container(c["Id"], force=True)
        volumes = {"label": f"{LABEL_VOLUME_NAMESPACE}={self.namespace}"}
        for volume in self.client.api.volumes(filters=volumes).get("Volumes") or ():
            self.client.api.remove_volume(volume["Name"])


def settle(etcd: EtcdServer, quiet: float = 3.0) -> int:
    revision, since = etcd.revision(), time.monotonic()
    while time.monotonic() - since < quiet:
        time.sleep(0.2)
        if (now := etcd.revision()) != revision:
            revision, since = now, time.monotonic()
    return revision


def written_since(etcd: EtcdServer, revision: int) -> list[tuple[str, int]]:
    """The keys under ``/registry/hosts/`` last written after ``revision``."""
    b64 = lambda text: base64.b64encode(text.encode()).decode()  # noqa: E731
    body = etcd._post(
        "/kv/range", {"key": b64("/registry/hosts/"), "range_end": b64("/registry/hosts0")}
    )
    found = [
        (base64.b64decode(kv["key"]).decode(), int(kv["mod_revision"]))
        for kv in body.get("kvs", ())
    ]
    return sorted((k, r) for k, r in found if r > revision)


def died_seen(host: BenchHost, etcd: EtcdServer, pod: str, restarts: int) -> bool:
    record = host.record(etcd, pod)
    if record is None:
        return False
    app = record["containers"][0]
    return bool(record["restarts"] > restarts or app["state"] != "running")


def sigkill_times(etcd: EtcdServer, work: Path, runs: int) -> list[float]:
    """Seconds from SIGKILL of a ``podsync run`` to its heartbeat gone."""
    times: list[float] = []
    pods = work / "sigkill-pods"
    pods.mkdir()
    for n in range(runs):
        host = f"sigkill-{n}"
        argv = [sys.executable, "-m", "podsync", "run", str(pods), "--scope", f"bench-{host}"]
        argv += ["--root-dir", str(work / host), "--report-ttl", str(TTL)]
        argv += ["--report-to", f"etcd://{etcd.endpoint}/registry/hosts/{host}"]
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_until(lambda h=host: etcd.get(heartbeat_key(h)) is not None, 30, 0.05)
            time.sleep(TTL / 2)
            process.send_signal(signal.SIGKILL)
            process.wait(10)
            killed = time.monotonic()
            wait_until(lambda h=host: etcd.get(heartbeat_key(h)) is None, TTL + 30, 0.02)
            times.append(time.monotonic() - killed)
        finally:
            if process.poll() is None:
                process.kill()
    return times


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=3)
    parser.add_argument("--pods", type=int, default=5)
    parser.add_argument("--engine", action="append", default=[])
    parser.add_argument("--quiet", type=float, default=30.0)
    parser.add_argument("--kills", type=int, default=15)
    parser.add_argument("--sigkills", type=int, default=3)
    args = parser.parse_args(argv)
    engines = args.engine or [os.environ.get("DOCKER_HOST", "")]
    print(f"{args.hosts} hosts x {args.pods} pods on {engines}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="podsync-bench-report-") as tmp:
        work = Path(tmp)
        etcd = EtcdServer(work / "etcd")
        etcd.start()
        hosts: list[BenchHost] = []
        try:
            for i in range(args.hosts):
                host = BenchHost(etcd, f"bench-{i}", engines[i % len(engines)] or None, work)
                names = [f"p{n}" for n in range(args.pods)]
                etcd.put(f"/registry/hosts/{host.name}/kubelet", value(names, host.namespace))
                hosts.append(host)
            for host in hosts:
                host.reporter.start()
                host.loop.__enter__()
            for host in hosts:
                for n in range(args.pods):
                    wait_until(
                        lambda h=host, p=f"p{n}": (
                            (r := h.record(etcd, p)) and r["phase"] == "Running"
                        ),
                        120,
                        0.1,
                    )
            before = settle(etcd)
            time.sleep(args.quiet)
            writes = etcd.revision() - before
            for key, revision in written_since(etcd, before):
                print(f"  written at steady state: {key} (revision {revision})")
            print(
                f"steady state: {writes} writes in {args.quiet:g} s "
                f"({writes / args.quiet:.3f}/s) for {args.hosts} hosts; about "
                f"{args.hosts * args.quiet / 10:.0f} keepalives meanwhile (one per 10 s per host)"
            )
            latencies: list[float] = []
            for k in range(args.kills):
                host = hosts[k % len(hosts)]
                pod = f"p{(k // len(hosts)) % args.pods}"
                wait_until(
                    lambda h=host, p=pod: (
                        (r := h.record(etcd, p))
                        and r["phase"] == "Running"
                        and r["containers"][0]["state"] == "running"
                    ),
                    60,
                    0.05,
                )
                record = host.record(etcd, pod)
                assert record is not None
                app = wait_until(lambda h=host, p=pod: h.app(p), 60, 0.05)
                host.client.api.kill(app)
                killed = time.monotonic()
                wait_until(
                    lambda h=host, p=pod, r=record["restarts"]: died_seen(h, etcd, p, r), 30, 0.005
                )
                latencies.append(time.monotonic() - killed)
                time.sleep(0.5)
            if latencies:
                p50, p95 = statistics.median(latencies), percentile(latencies, 0.95)
                print(
                    f"container death to its record in etcd: p50 {p50:.3f} s, "
                    f"p95 {p95:.3f} s, n {len(latencies)}"
                )
            gone = sigkill_times(etcd, work, args.sigkills)
            print(
                f"SIGKILL to heartbeat gone (TTL {TTL} s): " + ", ".join(f"{g:.2f} s" for g in gone)
            )
        finally:
            for host in hosts:
                host.loop.__exit__(None, None, None)
                host.reporter.close()
                host.clean()
                host.runtime.close()
            etcd.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
