"""Usage readings (issue 32): what one reading of ``--containers`` running containers
costs, each way ``DockerRuntime`` can read it, against the way ``docker stats
--no-stream`` reads it, in the same run.

What it measures
================

``--containers`` (default 50) busybox containers that sleep are started on the engine
of ``DOCKER_HOST`` (labelled with this run's token, removed at the end). Then, ``--rounds``
times each (default 10), the wall time of one reading of all of them:

* **cgroup files**: ``DockerRuntime.container_usage`` as it is on a local engine - each
  container's ``cpuacct.usage``/``cpu.stat`` and ``memory.*`` files read directly (the
  runtime verified once that the container's ``/proc/<pid>/cgroup`` names it). Its first
  reading, which inspects every container once to find its process, is shown apart.
* **one-shot API**: the runtime's Engine API path (``_api_readings``): on Docker, one
  ``GET /containers/{id}/stats?stream=false&one-shot=true`` per container, 32 at a time;
  on podman, one ``GET /libpod/containers/stats`` for all of them - and, to compare on
  podman, the compat call per container, 32 at a time.
* **reference, docker stats --no-stream's call**: ``GET /containers/{id}/stats?stream=false``
  without ``one-shot``, every container at once (the docker CLI starts a stats reader
  per container): Docker answers each after its second sample, about a second later.
  ``--reference-rounds`` times (default 3: each takes seconds).

Each timed reading follows ``--gap`` seconds (default 2) of rest, untimed: Docker 20.10
answers a one-shot request at once only when no stats request of that container came in
the last second or so (measured: 10-20 ms, then about 1 s for a request right after,
then 20 ms again after a rest - its stats collector publishes once a second), which the
loop (every 15 s) never meets. The API's rounds are also timed back to back, to show that
cost (``podsync top --window 1s`` meets it on a remote Docker engine).

p50 and p95 of each, and the ratio of each p50 to the reference's p50. The machine may
be shared: compare ratios from the same run. Not a test.

Run it from the repository root (the test images: ``python -m tests.support.engine
images``)::

    python -m benchmarks.bench_usage
    python -m benchmarks.bench_usage --containers 50 --rounds 10 --reference-rounds 3
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import statistics
import time
import uuid
from collections.abc import Callable, Sequence

import docker

from podsync.docker import DockerRuntime
from tests.support.engine import TEST_IMAGE

_LABEL = "podsync-bench-usage"


def _timed(read: Callable[[], object], rounds: int, gap: float) -> list[float]:
    times = []
    for _ in range(rounds):
        time.sleep(gap)  # untimed: the engine's own collector settles (see the docstring)
        started = time.perf_counter()
        read()
        times.append(time.perf_counter() - started)
    return times


def _streaming_reference(client: docker.APIClient, ids: Sequence[str]) -> None:
    """What ``docker stats --no-stream`` asks: every container's two-sample stats, all
    at once."""
    with concurrent.futures.ThreadPoolExecutor(len(ids)) as pool:
        answers = list(pool.map(lambda cid: client.stats(cid, stream=False), ids))
    assert all("memory_stats" in a for a in answers)


def _one_by_one(runtime: DockerRuntime, ids: Sequence[str]) -> None:
    """The compat one-shot call per container, as many at once as the runtime makes
    them (on Docker: what ``_api_readings`` does; on podman, instead of its one call)."""
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        list(pool.map(runtime._api_reading, ids))


def _p(times: Sequence[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--containers", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--reference-rounds", type=int, default=3)
    parser.add_argument("--gap", type=float, default=2.0)
    args = parser.parse_args()

    token = f"{os.getpid()}-{uuid.uuid4().hex[:6]}"
    client = docker.from_env()
    ids: list[str] = []
    try:
        for i in range(args.containers):
            made = client.api.create_container(
                TEST_IMAGE,
                ["sleep", "3600"],
                name=f"bench-usage-{token}-{i}",
                labels={_LABEL: token},
                host_config=client.api.create_host_config(network_mode="none"),
            )
            client.api.start(made["Id"])
            ids.append(made["Id"])
        with DockerRuntime() as runtime:
            started = time.perf_counter()
            first = runtime.container_usage(ids)
            first_time = time.perf_counter() - started
            assert len(first) == len(ids), "not every container was read"
            local = len(runtime._cgroups)
            files = _timed(lambda: runtime.container_usage(ids), args.rounds, args.gap)
            api = _timed(lambda: runtime._api_readings(ids), args.rounds, args.gap)
            again = _timed(lambda: runtime._api_readings(ids), args.rounds, 0.0)
            each = _timed(lambda: _one_by_one(runtime, ids), args.rounds, args.gap)
        reference = _timed(
            lambda: _streaming_reference(client.api, ids), args.reference_rounds, args.gap
        )
    finally:
        for cid in ids:
            client.api.remove_container(cid, force=True)
        client.close()

    base = statistics.median(reference)
    print(
        f"{args.containers} running containers, {args.rounds} rounds "
        f"({args.reference_rounds} of the reference); {local} read from their cgroup files"
    )
    print(f"first reading (inspects each once): {_ms(first_time)}")
    print("| one reading of every container | p50 | p95 | p50 / reference |")
    print("| --- | --- | --- | --- |")
    for label, times in (
        ("cgroup files (local engine)", files),
        ("one-shot API (podman: one libpod call)", api),
        ("one-shot API, rounds back to back", again),
        ("one-shot API, a compat call per container (32 at once)", each),
        ("reference: two-sample stats, all at once (docker stats --no-stream)", reference),
    ):
        p50 = statistics.median(times)
        print(f"| {label} | {_ms(p50)} | {_ms(_p(times, 0.95))} | {p50 / base:.4f} |")


if __name__ == "__main__":
    main()
