"""Fleet benchmark: ``podsync apply --hosts`` on three engines at once, versus applying
to the same engines one after another.

What it measures
================

Three extra Docker engines are started on this machine (``tests.support.engines.start_engines``:
real ``dockerd`` processes with their own data root, exec root, pid file and socket,
no bridge), with the test images copied in from the engine at ``DOCKER_HOST``
(``docker save | docker load``; nothing is pulled). Each host gets ``--pods`` pods
(default 50): a network container (the pause test image, network mode ``none``) and one
app container (the busybox test image, ``imagePullPolicy: Never``, a shell that exits at
once on SIGTERM), bound to the host by ``spec.nodeName``: 300 containers in all.

Two contenders, each from no containers to every pod running, through the command line
in this process (its output thrown away), ``--workers`` engine calls at a time per
engine (default ``podsync.DEFAULT_WORKERS``):

* **fleet** - one ``podsync apply --hosts HOSTS.yaml pods/<name>/...``: the three
  engines at once,
  a pool per engine;
* **sequential** - ``podsync apply -H <engine> --root-dir <root>/hosts/<name>
  pods/<name>/`` for each host, one after the other (the same root directories as the
  fleet uses, the same pods).

With ``--fake SECONDS`` no ``dockerd`` is started: each host's engine is a
``podsync.testing.FakeRuntime`` whose every call takes SECONDS (outside its lock), the
engines' work done elsewhere, as when the hosts are separate machines. Three real
engines on one machine share its CPUs: creating a container costs dockerd, containerd
and runc CPU time, so on a small machine applying to them at once gains only what one
engine leaves idle.

Between runs every container of the three engines is removed (untimed). The two
alternate, ``--repeat`` times each (default 3); wall-clock times (``time.perf_counter``)
are reported as the minimum and the median. Target (issue 19): the fleet at most 0.5x
the sequential time, by the minimum. A PASS or FAIL line is printed; the exit status is
0 either way unless ``--check`` is given (2 when the benchmark could not run).

The engines are the benchmark's own (their directories under /tmp are removed at the
end); nothing on the engine at ``DOCKER_HOST`` is changed beyond reading its test images.

Run it from the repository root, as root (it starts ``dockerd``), with the engine up::

    .venv/bin/python -m benchmarks.bench_fleet [--pods 50] [--repeat 3] [--workers N]
    .venv/bin/python -m benchmarks.bench_fleet --fake 0.05     # no dockerd
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import attrs

import podsync
import podsync.fleet
from podsync import cli
from podsync.testing import FakeRuntime
from tests.support.engine import (
    PAUSE_IMAGE,
    TEST_IMAGE,
    EngineUnreachable,
    connect,
    ensure_test_images,
)
from tests.support.engines import ExtraEngine, start_engines, stop_engines


class Engine(Protocol):
    """What the benchmark needs of an engine: its host name and address."""

    @property
    def name(self) -> str: ...
    @property
    def address(self) -> str: ...


@attrs.frozen
class FakeEngine:
    """A host whose engine is a ``FakeRuntime`` with a latency per call (``--fake``)."""

    name: str
    address: str


_COMMAND = ["/bin/sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
_TARGET = 0.5


def pod_yaml(name: str, node: str) -> str:
    return f"""\
  - apiVersion: v1
    kind: Pod
    metadata:
      name: {name}
      namespace: podsync-bench-fleet
    spec:
      nodeName: {node}
      terminationGracePeriodSeconds: 2
      containers:
      - name: app
        image: {TEST_IMAGE}
        imagePullPolicy: Never
        command: {json.dumps(_COMMAND)}
        env:
        - name: POD
          value: {name}
"""


def write_inputs(directory: Path, engines: Sequence[Engine], pods: int) -> Path:
    """``pods/<host>/pods.yaml`` (a List per host) and ``hosts.yaml``; returns the
    hosts file."""
    for engine in engines:
        host_dir = directory / "pods" / engine.name
        host_dir.mkdir(parents=True)
        items = "".join(pod_yaml(f"{engine.name}-{i:03d}", engine.name) for i in range(pods))
        (host_dir / "pods.yaml").write_text(f"apiVersion: v1\nkind: List\nitems:\n{items}")
    hosts = directory / "hosts.yaml"
    hosts.write_text("hosts:\n" + "".join(f"  {e.name}: {e.address}\n" for e in engines))
    return hosts


def _quiet(argv: list[str], factory: cli.RuntimeFactory | None) -> int:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv, runtime_factory=factory)
    if code != 0:
        raise RuntimeError(
            f"podsync {' '.join(argv[:3])}... exited {code}: {err.getvalue()[-2000:]}"
        )
    return code


def _common(root: Path, workers: int) -> list[str]:
    return [
        "--root-dir",
        str(root),
        "--network-mode",
        "none",
        "--network-image",
        PAUSE_IMAGE,
        "--workers",
        str(workers),
        "--no-probe",
    ]


def run_fleet(
    hosts: Path,
    engines: list[Engine],
    pods: Path,
    root: Path,
    workers: int,
    factory: cli.RuntimeFactory | None = None,
) -> float:
    sources = [str(pods / engine.name) for engine in engines]
    started = time.perf_counter()
    _quiet(["apply", "--hosts", str(hosts), *_common(root, workers), *sources], factory)
    return time.perf_counter() - started


def run_sequential(
    engines: list[Engine],
    pods: Path,
    root: Path,
    workers: int,
    factory: cli.RuntimeFactory | None = None,
) -> float:
    started = time.perf_counter()
    for engine in engines:
        host_root = Path(podsync.fleet.host_root_dir(str(root), engine.name))
        _quiet(
            [
                "apply",
                "-H",
                engine.address,
                *_common(host_root, workers),
                str(pods / engine.name),
            ],
            factory,
        )
    return time.perf_counter() - started


def _running(engines: list[ExtraEngine]) -> int:
    total = 0
    for engine in engines:
        with contextlib.closing(engine.client()) as client:
            total += len(client.api.containers(filters={"status": "running"}))
    return total


def _rounds(
    args: argparse.Namespace,
    engines: Sequence[Engine],
    work: Path,
    factory: cli.RuntimeFactory | None,
    running: Callable[[], int],
    reset: Callable[[], None],
) -> dict[str, list[float]]:
    """Run the two contenders ``args.repeat`` times each, alternating; their times."""
    hosts = write_inputs(work, engines, args.pods)
    expected = len(engines) * args.pods * 2
    times: dict[str, list[float]] = {"fleet": [], "sequential": []}
    for round_number in range(args.repeat):
        order = ["fleet", "sequential"] if round_number % 2 == 0 else ["sequential", "fleet"]
        for name in order:
            root = work / f"root-{name}-{round_number}"
            if name == "fleet":
                seconds = run_fleet(
                    hosts, list(engines), work / "pods", root, args.workers, factory
                )
            else:
                seconds = run_sequential(list(engines), work / "pods", root, args.workers, factory)
            found = running()
            if found != expected:
                raise RuntimeError(f"{name}: {found} containers run, not {expected}")
            times[name].append(seconds)
            print(f"round {round_number + 1}: {name:10s} {seconds:6.2f}s", flush=True)
            reset()
            shutil.rmtree(root, ignore_errors=True)
    return times


def _real(args: argparse.Namespace, work: Path) -> dict[str, list[float]] | int:
    try:
        source = connect()
    except EngineUnreachable as exc:
        print(f"bench_fleet: {exc}", file=sys.stderr)
        return 2
    try:
        ensure_test_images(source)
        engines = start_engines(3, source=source)
    except (OSError, RuntimeError) as exc:
        print(f"bench_fleet: cannot start the engines: {exc}", file=sys.stderr)
        source.close()
        return 2
    try:

        def reset() -> None:
            for engine in engines:
                engine.remove_all_containers()

        return _rounds(args, engines, work, None, lambda: _running(engines), reset)
    finally:
        stop_engines(engines)
        source.close()


def _fake(args: argparse.Namespace, work: Path) -> dict[str, list[float]]:
    engines = [FakeEngine(f"host-{i}", f"unix:///fake/host-{i}.sock") for i in range(3)]
    fakes: dict[str, FakeRuntime] = {}

    def factory(address: str | None) -> FakeRuntime:
        assert address is not None
        if address not in fakes:
            fakes[address] = FakeRuntime(
                images=[TEST_IMAGE, PAUSE_IMAGE], latency=args.fake, bridge=False
            )
        return fakes[address]

    def running() -> int:
        return sum(1 for fake in fakes.values() for c in fake.containers if c.running)

    return _rounds(args, engines, work, factory, running, fakes.clear)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pods", type=int, default=50, help="pods per host (default 50)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (default 3)")
    parser.add_argument("--workers", type=int, default=podsync.DEFAULT_WORKERS)
    parser.add_argument(
        "--fake",
        type=float,
        metavar="SECONDS",
        help="no dockerd: each host's engine is a FakeRuntime whose every call takes "
        "SECONDS (the engine's work done elsewhere, as on separate machines)",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="podsync-bench-fleet-"))
    try:
        found = _fake(args, work) if args.fake is not None else _real(args, work)
    except RuntimeError as exc:
        print(f"bench_fleet: {exc}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if isinstance(found, int):
        return found
    times = found
    fleet, sequential = min(times["fleet"]), min(times["sequential"])
    ratio = fleet / sequential
    kind = f"fake engines, {args.fake:g}s per call" if args.fake is not None else "dockerd"
    print()
    print(
        f"3 engines ({kind}) x {args.pods} pods ({3 * args.pods * 2} containers), "
        f"workers {args.workers}:"
    )
    for name in ("fleet", "sequential"):
        values = times[name]
        print(
            f"  {name:10s} min {min(values):6.2f}s  median {statistics.median(values):6.2f}s"
            f"  ({len(values)} runs)"
        )
    verdict = "PASS" if ratio <= _TARGET else "FAIL"
    print(f"{verdict}: fleet / sequential = {ratio:.2f} (target <= {_TARGET})")
    return 1 if args.check and verdict == "FAIL" else 0


if __name__ == "__main__":
    sys.exit(main())
