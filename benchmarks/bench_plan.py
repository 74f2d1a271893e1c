"""Planner benchmark: how long ``plan()`` takes, and how that grows with the pod count.

What it measures
================

For each size N (default 100, 1,000 and 10,000) it builds N distinct, realistic pods of
3 app containers each (env values carrying the pod index; a unique host port 10000+i on a
third of the pods; volume mounts on some; images ``nginx:1.27``, ``busybox:1.36`` and
``registry.example:5000/team/app:2.3``; every image present, so no pulls), then times:

* **cold**: ``plan(pods, [])`` - nothing observed, every container is created;
* **steady**: ``plan(pods, observed)`` where ``observed`` is what the engine reports after
  applying the cold plan (4 running containers per pod: ``net`` + 3). The script asserts
  that this plan has no changes: a steady state that is not steady is a bug. The same
  Pod objects are planned run after run, as a loop that keeps them (``PodFileCache``)
  plans them: each Pod object remembers the spec texts of its running containers;
  **steady, new Pod objects** plans fresh, equal copies (the first plan after a load);
* **cold, images absent**: the cold plan on an engine without images: every pod needs
  the same 4 absent images, so the plan has 4 pulls, each listing all N pods. Pull
  bookkeeping must be linear: this should cost what the cold plan with the images
  present costs (it was quadratic: 3.5 s of 5 s at 10,000 pods).

Each is timed with ``time.perf_counter`` ``--repeat`` times (default 5), and a fast plan
more often, until ``--min-time`` seconds (default 1) are spent; the table shows the
minimum (the best estimate of the cost on a noisy machine) and the median. The peak
memory of one steady plan call is measured with ``tracemalloc`` in a separate, untimed
run (tracing slows Python down); the memory the largest size's inputs hold (pods and
observed containers, traced) and the process's max RSS are printed at the end.

For comparison only, it also times a **seed-style lookup** (``_seed_style_lookups``,
which lives here and not in podsync): for every desired pod container (``net`` + 3),
scan the whole observed list and parse each name with ``parse_container_name`` until
one matches, as the 2014 kubelet's ``DockerContainers.FindPodContainer`` did. That is
only the lookup, none of the planning, and it is quadratic: it is run in full while it
is predicted to take under 60 s, and otherwise on an evenly spread sample of pods and
scaled up (marked "extrapolated").

Targets (from the issue, for a 2-core machine): steady 10,000 pods / 40,000 observed
containers under 0.5 s (by the minimum), 10x the pods for at most 11x the time, and
under 200 MB of memory; the cold plan with the images absent at most 1.2x the cold
plan with them present (the pulls are extra actions, not extra work per pod).
PASS/FAIL lines are printed; the exit status is 0 either way unless ``--check`` is
given. This is a benchmark script, not a timed test.

Run it from the repository root::

    python -m benchmarks.bench_plan                       # plain-text table
    python -m benchmarks.bench_plan --markdown            # Markdown table for docs/benchmarks.md
    python -m benchmarks.bench_plan --sizes 100,1000 --repeat 3
    python -m benchmarks.bench_plan --check               # exit 1 when a target is missed
    python -m benchmarks.bench_plan --profile             # cProfile the largest steady plan
    python -m benchmarks.bench_plan --plot plan.svg       # and draw the times (log-log)
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import itertools
import math
import os
import platform
import pstats
import resource
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import attrs

from benchmarks import svgchart
from podsync import (
    Container,
    EnvVar,
    Handler,
    HTTPGetAction,
    Lifecycle,
    ObservedContainer,
    ObservedImage,
    Pod,
    Port,
    Probe,
    ResourceList,
    Resources,
    RestartPolicy,
    Volume,
    VolumeMount,
    parse_container_name,
)
from podsync.actions._actions import Create, CreateVolume, Plan
from podsync.actions._options import DEFAULT_NETWORK_IMAGE, AllowedHostPath, PlanOptions
from podsync.planner._plan import plan

NOW = 1_700_000_000.0  # the cold plan's clock; the steady plan runs 5 minutes later
STEADY_NOW = NOW + 300.0

APP_IMAGES = ("nginx:1.27", "busybox:1.36", "registry.example:5000/team/app:2.3")
NAMESPACES = ("default", "team-a", "team-b", "batch")
SOURCES = ("api", "file", "http")

OPTIONS = PlanOptions(
    # The pods' hostPath volumes are under /srv/config (--allowed-host-paths).
    allowed_host_paths=(AllowedHostPath("/srv/config"),),
    cluster_dns="10.0.0.10",
    cluster_domain="cluster.local",
    host_resolv_conf="nameserver 192.168.1.1\nsearch corp.example\noptions ndots:2\n",
)

# Targets from the issue.
TARGET_PODS = 10_000
TARGET_SECONDS = 0.5
TARGET_GROWTH_PER_10X = 11.0
TARGET_MEMORY_MB = 200.0
TARGET_ABSENT_RATIO = 1.2  # cold plan, images absent / present
PROFILE_THRESHOLD_SECONDS = 0.45  # profile automatically when steady 10k is this close

SEED_FULL_RUN_LIMIT_SECONDS = 60.0  # run the seed-style lookup in full below this
SEED_SAMPLE_PODS = 40  # otherwise: time this many evenly spread pods and scale up
SEED_REPEAT_BUDGET_SECONDS = 10.0  # stop repeating the seed-style lookup after this
MAX_RUNS = 100  # the cap on extra runs of a fast plan (see --min-time)

MB = 1024 * 1024


# ---------------------------------------------------------------------------------------
# Inputs


def _limits(milli_cpu: int, memory: int) -> Resources:
    # As the pod files say it (``resources.limits``): the CPU limit is also the weight.
    return Resources(limits=ResourceList(cpu=milli_cpu, memory=memory))


def make_pod(i: int) -> Pod:
    """Pod number ``i``: 3 app containers that differ a little from every other pod's."""
    host_port = 10_000 + i if i % 3 == 0 else 0  # unique, so no host-port conflicts
    volumes: list[Volume] = [Volume("cache")]  # emptyDir
    if i % 4 == 1:
        volumes.append(Volume("config", host_path=f"/srv/config/app-{i:05d}"))
    web = Container(
        name="web",
        image="nginx:1.27",
        env=(EnvVar("POD_INDEX", str(i)), EnvVar("NGINX_WORKER_PROCESSES", str(1 + i % 4))),
        ports=(Port(container_port=80, host_port=host_port, name="http"),),
        volume_mounts=(VolumeMount("cache", "/var/cache/nginx"),) if i % 2 == 0 else (),
        resources=_limits(250, 128 * MB),
    )
    shipper = Container(
        name="log-shipper",
        image="busybox:1.36",
        command=("sh", "-c"),
        args=(f"tail -F /var/log/app/app-{i:05d}.log",),
        env=(EnvVar("SHARD", str(i % 16)),),
        volume_mounts=(
            (VolumeMount("config", "/etc/shipper", read_only=True),) if i % 4 == 1 else ()
        ),
        resources=_limits(50, 32 * MB),
    )
    app = Container(
        name="app",
        image="registry.example:5000/team/app:2.3",
        args=("--index", str(i), "--listen", ":8080"),
        working_dir="/app",
        env=(
            EnvVar("POD_INDEX", str(i)),
            EnvVar("LOG_LEVEL", "debug" if i % 10 == 0 else "info"),
        ),
        ports=(Port(container_port=8080, name="metrics"),),
        liveness_probe=Probe(
            Handler(http_get=HTTPGetAction(port="metrics", path="/healthz")),
            initial_delay_seconds=15,
        ),
        lifecycle=(
            Lifecycle(pre_stop=Handler(exec_command=("/app/drain", "--timeout", "5")))
            if i % 5 == 0
            else None
        ),
        termination_message_path="/dev/termination-log" if i % 3 == 1 else "",
        resources=_limits(500, 256 * MB),
    )
    return Pod(
        name=f"app-{i:05d}",
        namespace=NAMESPACES[i % len(NAMESPACES)],
        source=SOURCES[i % len(SOURCES)],
        containers=(web, shipper, app),
        volumes=tuple(volumes),
        restart_policy=RestartPolicy.ON_FAILURE if i % 7 == 0 else RestartPolicy.ALWAYS,
        labels={"app": "demo", "shard": str(i % 16)},
    )


def make_images() -> list[ObservedImage]:
    """Every image the pods use, present on the engine (so plans pull nothing)."""
    return [
        ObservedImage(id=f"sha256:{n:064x}", tags=(tag,))
        for n, tag in enumerate((DEFAULT_NETWORK_IMAGE, *APP_IMAGES), start=1)
    ]


def observed_after(cold: Plan, now: float) -> list[ObservedContainer]:
    """What the engine reports after applying ``cold``: one running container per Create.

    Built straight from the Create specs - exactly what ``tests.support.engine_model.EngineModel``
    records (same ids, names, images, labels, times), without its linear by-name scan,
    which would make building 40,000 containers quadratic. ``check_against_engine_model``
    checks the equivalence on the smallest size.
    """
    observed: list[ObservedContainer] = []
    for action in cold.actions:
        if isinstance(action, CreateVolume):
            continue  # a pod's state volume: no container (a steady plan creates none)
        assert isinstance(action, Create), f"cold plan has a {type(action).__name__}"
        spec = action.spec
        observed.append(
            ObservedContainer(
                id=f"id{len(observed) + 1:06d}",
                name=spec.name,
                image=spec.image,
                labels=dict(spec.labels),
                created=now,
                running=True,
            )
        )
    return observed


def check_against_engine_model(cold: Plan, observed: Sequence[ObservedContainer]) -> None:
    """The shortcut in ``observed_after`` gives what the engine model gives."""
    from tests.support.engine_model import EngineModel

    engine = EngineModel()
    engine.apply(cold, NOW)
    assert engine.observed == list(observed), "observed_after differs from EngineModel"


@dataclass
class Inputs:
    pods: list[Pod]
    images: list[ObservedImage]
    observed: list[ObservedContainer]


def build_inputs(n: int, *, cross_check: bool) -> Inputs:
    pods = [make_pod(i) for i in range(n)]
    images = make_images()
    cold = plan(pods, [], now=NOW, images=images, options=OPTIONS)
    assert not cold.rejected, f"{len(cold.rejected)} pods rejected: {cold.rejected[0]}"
    assert not cold.pulls, "every image is present: the cold plan must not pull"
    creates = sum(isinstance(a, Create) for a in cold.actions)
    assert creates == 4 * n, f"cold plan creates {creates} containers, expected {4 * n}"
    observed = observed_after(cold, NOW)
    if cross_check:
        check_against_engine_model(cold, observed)
    del cold
    steady = plan(pods, observed, now=STEADY_NOW, images=images, options=OPTIONS)
    assert not steady.has_changes, "steady state is not steady:\n" + "\n".join(
        steady.describe().splitlines()[:20]
    )
    return Inputs(pods, images, observed)


# ---------------------------------------------------------------------------------------
# The seed's lookup, for comparison only (NOT podsync's code)


def _seed_find_pod_container(
    observed: Sequence[ObservedContainer], pod_full_name: str, uid: str, container: str
) -> ObservedContainer | None:
    """The 2014 kubelet's ``DockerContainers.FindPodContainer``: scan every container,
    parse its name, return the first that matches (a blank uid matches any)."""
    for oc in observed:
        parsed = parse_container_name(oc.name)
        if (
            parsed.pod_full_name == pod_full_name
            and (uid == "" or parsed.uid == uid)
            and parsed.container == container
        ):
            return oc
    return None


def _seed_style_lookups(pods: Sequence[Pod], observed: Sequence[ObservedContainer]) -> int:
    """One seed-style lookup per desired pod container (``net`` + app containers), as the
    seed's syncPod made them. Returns how many were found (all of them, in steady state)."""
    found = 0
    for pod in pods:
        full_name, uid = pod.full_name, pod.uid  # computed once per pod, as the seed did
        for name in ("net", *(c.name for c in pod.containers)):
            if _seed_find_pod_container(observed, full_name, uid, name) is not None:
                found += 1
    return found


# ---------------------------------------------------------------------------------------
# Measuring


@dataclass
class Timing:
    runs: list[float] = field(default_factory=list)

    @property
    def min(self) -> float:
        return min(self.runs)

    @property
    def median(self) -> float:
        return statistics.median(self.runs)


def time_it(
    fn: Callable[[], object],
    repeat: int,
    budget: float = math.inf,
    min_time: float = 0.0,
) -> Timing:
    """Run ``fn`` ``repeat`` times - fewer once ``budget`` seconds are spent (at least
    once), more while less than ``min_time`` seconds are spent (at most ``MAX_RUNS``)."""
    timing = Timing()
    spent = 0.0
    while len(timing.runs) < MAX_RUNS:
        if len(timing.runs) >= repeat and spent >= min_time:
            break
        gc.collect()  # start each run from the same heap state; never inside the timing
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
        del result  # freeing the result (a cold plan is big) is not part of the timing
        timing.runs.append(elapsed)
        spent += elapsed
        if spent >= budget:
            break
    return timing


def traced_peak_mb(fn: Callable[[], object]) -> float:
    """Peak memory allocated while ``fn`` runs, traced by tracemalloc (untimed run)."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / MB


def traced_inputs_mb(n: int) -> tuple[float, float]:
    """Memory held by the inputs of an ``n``-pod steady plan: (pods, observed), traced."""
    gc.collect()
    tracemalloc.start()
    try:
        pods = [make_pod(i) for i in range(n)]
        after_pods, _ = tracemalloc.get_traced_memory()
        cold = plan(pods, [], now=NOW, images=make_images(), options=OPTIONS)
        observed = observed_after(cold, NOW)
        del cold
        gc.collect()
        after_observed, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(observed) == 4 * n
    return after_pods / MB, (after_observed - after_pods) / MB


def max_rss_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / MB if sys.platform == "darwin" else rss / 1024  # bytes on macOS, else KiB


@dataclass
class SeedResult:
    seconds: float  # min over runs, or the extrapolation
    runs: int
    extrapolated: bool = False
    note: str = ""


@dataclass
class Row:
    pods: int
    observed: int
    cold: Timing
    steady: Timing
    peak_mb: float
    absent: Timing
    seed: SeedResult | None = None
    first: Timing | None = None  # steady, planning new Pod objects (nothing remembered)


def measure_seed(inputs: Inputs, repeat: int, previous: tuple[int, float] | None) -> SeedResult:
    pods, observed = inputs.pods, inputs.observed
    n = len(pods)
    predicted = 0.0 if previous is None else previous[1] * (n / previous[0]) ** 2
    if predicted < SEED_FULL_RUN_LIMIT_SECONDS:
        found = _seed_style_lookups(pods, observed)  # warm-up, and a sanity check
        assert found == 4 * n, f"seed-style lookup found {found} of {4 * n}"
        timing = time_it(
            lambda: _seed_style_lookups(pods, observed), repeat, SEED_REPEAT_BUDGET_SECONDS
        )
        return SeedResult(timing.min, len(timing.runs))
    # Quadratic: too slow to run in full. Time a sample of pods against the full observed
    # list; each pod's lookups are independent, so scale by n/sample. A lookup's cost is
    # the position of its match in the list, so the sample is spread evenly over the
    # observed order (not the pod index: the plan orders pods by namespace, then name).
    first_seen: dict[str, int] = {}
    for position, oc in enumerate(observed):
        first_seen.setdefault(parse_container_name(oc.name).uid, position)
    by_position = sorted(pods, key=lambda p: first_seen[p.uid])
    step = max(n // SEED_SAMPLE_PODS, 1)
    sample = by_position[step // 2 :: step][:SEED_SAMPLE_PODS]
    found = _seed_style_lookups(sample, observed)
    assert found == 4 * len(sample), f"seed-style lookup found {found} of {4 * len(sample)}"
    timing = time_it(lambda: _seed_style_lookups(sample, observed), 2, SEED_REPEAT_BUDGET_SECONDS)
    return SeedResult(
        timing.min * n / len(sample),
        len(timing.runs),
        extrapolated=True,
        note=(
            f"{len(sample)} evenly spread pods timed against all {len(observed)} observed "
            f"containers, scaled by {n / len(sample):.0f} (a full run was predicted at "
            f"{predicted:.0f} s)"
        ),
    )


def measure(
    n: int,
    repeat: int,
    *,
    min_time: float,
    with_seed: bool,
    previous_seed: tuple[int, float] | None,
    cross_check: bool,
) -> Row:
    inputs = build_inputs(n, cross_check=cross_check)
    pods, images, observed = inputs.pods, inputs.images, inputs.observed

    def cold() -> Plan:
        return plan(pods, [], now=NOW, images=images, options=OPTIONS)

    def steady() -> Plan:
        return plan(pods, observed, now=STEADY_NOW, images=images, options=OPTIONS)

    def absent() -> Plan:
        return plan(pods, [], now=NOW, images=[], options=OPTIONS)

    pulls = absent().pulls
    assert len(pulls) == 1 + len(APP_IMAGES), f"{len(pulls)} pulls, expected 4"
    assert all(len(p.pods) == n for p in pulls), "every pull must list every pod"
    cold_timing = time_it(cold, repeat, min_time=min_time)
    steady_timing = time_it(steady, repeat, min_time=min_time)
    absent_timing = time_it(absent, repeat, min_time=min_time)
    peak = traced_peak_mb(steady)
    seed = measure_seed(inputs, repeat, previous_seed) if with_seed else None
    first = first_steady(pods, observed, images, repeat)
    return Row(n, len(observed), cold_timing, steady_timing, peak, absent_timing, seed, first)


def first_steady(
    pods: Sequence[Pod],
    observed: Sequence[ObservedContainer],
    images: Sequence[ObservedImage],
    repeat: int,
    clock: Callable[[], float] = time.perf_counter,
) -> Timing:
    """The steady plan of Pod objects planned for the first time: a Pod object
    remembers the spec texts of its running containers for its next plan (as a loop
    that keeps its Pod objects, through a PodFileCache, plans them), so ``steady``
    times the same objects planned again; here each run plans fresh, equal copies."""
    timing = Timing()
    for _ in range(repeat):
        fresh = [attrs.evolve(p) for p in pods]
        gc.collect()
        start = clock()
        result = plan(fresh, observed, now=STEADY_NOW, images=images, options=OPTIONS)
        timing.runs.append(clock() - start)
        assert not result.has_changes
        del result, fresh
    return timing


def profile_steady(n: int, top: int = 10) -> str:
    inputs = build_inputs(n, cross_check=False)
    profiler = cProfile.Profile()
    gc.collect()
    profiler.enable()
    plan(inputs.pods, inputs.observed, now=STEADY_NOW, images=inputs.images, options=OPTIONS)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


# ---------------------------------------------------------------------------------------
# Reporting


def _seconds(s: float) -> str:
    if s >= 10:
        return f"{s:.1f} s"
    if s >= 1:
        return f"{s:.2f} s"
    return f"{s * 1000:.1f} ms"


def _growth(rows: Sequence[Row], i: int, value: Callable[[Row], float | None]) -> str:
    if i == 0:
        return "-"
    now, before = value(rows[i]), value(rows[i - 1])
    if now is None or before is None:
        return "-"
    return f"{now / before:.1f}x"


def _seed_cell(row: Row) -> str:
    if row.seed is None:
        return "-"
    mark = "~" if row.seed.extrapolated else ""
    return f"{mark}{_seconds(row.seed.seconds)}" + (" *" if row.seed.extrapolated else "")


def table(rows: Sequence[Row]) -> tuple[list[str], list[list[str]]]:
    header = [
        "pods",
        "observed containers",
        "cold min",
        "cold median",
        "steady min",
        "steady median",
        "steady µs/container",
        "steady growth",
        "steady peak MB",
        "steady, new Pod objects min",
        "cold, images absent min",
        "absent / present",
        "seed-style lookup",
        "seed growth",
    ]
    body: list[list[str]] = []
    for i, r in enumerate(rows):
        body.append(
            [
                f"{r.pods:,}",
                f"{r.observed:,}",
                _seconds(r.cold.min),
                _seconds(r.cold.median),
                _seconds(r.steady.min),
                _seconds(r.steady.median),
                f"{r.steady.min / r.observed * 1e6:.1f}",
                _growth(rows, i, lambda x: x.steady.min),
                f"{r.peak_mb:.1f}",
                _seconds(r.first.min) if r.first is not None else "-",
                _seconds(r.absent.min),
                f"{r.absent.min / r.cold.min:.2f}x",
                _seed_cell(r),
                ("~" if r.seed is not None and r.seed.extrapolated else "")
                + _growth(rows, i, lambda x: x.seed.seconds if x.seed else None),
            ]
        )
    return header, body


def render_markdown(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join("---:" for _ in header) + "|")
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


def render_text(header: list[str], body: list[list[str]]) -> str:
    widths = [max(len(h), *(len(row[k]) for row in body)) for k, h in enumerate(header)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in body]
    return "\n".join(lines)


def plot(rows: Sequence[Row], notes: Sequence[str] = ()) -> str:
    """The ``--plot`` figure: one plan()'s time per pod count on log-log axes (the
    minimum of the runs), podsync's plans beside the seed-style lookup alone, measured
    in the same run (hollow where extrapolated), and the steady plan's target."""
    sizes = tuple(float(r.pods) for r in rows)

    def line(name: str, value: Callable[[Row], float | None]) -> svgchart.Series:
        found = [(r.pods, value(r)) for r in rows]
        return svgchart.Series(name, tuple(svgchart.Point(n, v) for n, v in found if v is not None))

    series = [
        line("cold: every container created", lambda r: r.cold.min),
        line("cold, images absent", lambda r: r.absent.min),
        line("steady, new Pod objects", lambda r: r.first.min if r.first else None),
        line("steady: nothing to do", lambda r: r.steady.min),
    ]
    seeds = [(r.pods, r.seed) for r in rows if r.seed is not None]
    if seeds:
        points = tuple(svgchart.Point(n, s.seconds, s.extrapolated) for n, s in seeds)
        name = "seed-style lookup alone (the 2014 kubelet's; hollow: extrapolated)"
        series.append(svgchart.Series(name, points, reference=True))
    largest = rows[-1]
    rules: tuple[svgchart.Rule, ...] = ()
    if largest.pods == TARGET_PODS:
        rules = (svgchart.Rule(TARGET_SECONDS, f"target: steady plan of {TARGET_PODS:,} pods"),)
    chart = svgchart.LineChart(
        "plan() of N pods of 3 containers (steady: against 4 observed containers per pod)",
        svgchart.Axis("pods", log=True, ticks=sizes),
        svgchart.Axis("one plan() call (minimum of the runs)", log=True, format=svgchart.seconds),
        tuple(s for s in series if s.points),
        rules,
    )
    desc = (
        f"plan() time by pod count, log-log. {largest.pods:,} pods: cold "
        f"{_seconds(largest.cold.min)}, steady {_seconds(largest.steady.min)}, images absent "
        f"{_seconds(largest.absent.min)}"
        + (f", seed-style lookup alone {_seed_cell(largest)}" if largest.seed else "")
        + "."
    )
    return svgchart.figure("podsync plan() benchmark", desc, [chart], notes)


def checks(rows: Sequence[Row]) -> list[tuple[bool, str]]:
    """(passed, line) for each target the measured sizes can judge."""
    results: list[tuple[bool, str]] = []
    for r in rows:
        if r.pods == TARGET_PODS:
            ok = r.steady.min < TARGET_SECONDS
            results.append(
                (
                    ok,
                    f"steady plan, {r.pods:,} pods / {r.observed:,} observed containers: "
                    f"{_seconds(r.steady.min)} (min) < {TARGET_SECONDS} s",
                )
            )
            if r.first is not None:
                results.append(
                    (
                        r.first.min < TARGET_SECONDS,
                        f"steady plan of new Pod objects (nothing remembered), {r.pods:,} "
                        f"pods: {_seconds(r.first.min)} (min) < {TARGET_SECONDS} s",
                    )
                )
    for prev, r in itertools.pairwise(rows):
        factor = r.pods / prev.pods
        allowed = TARGET_GROWTH_PER_10X / 10 * factor  # 11x per 10x, scaled to the step
        for label, now, before in (
            ("steady", r.steady.min, prev.steady.min),
            ("cold", r.cold.min, prev.cold.min),
        ):
            ratio = now / before
            results.append(
                (
                    ratio <= allowed,
                    f"{label} growth {prev.pods:,} -> {r.pods:,} pods ({factor:g}x): "
                    f"{ratio:.1f}x (by the min) <= {allowed:g}x",
                )
            )
    for r in rows:
        ratio = r.absent.min / r.cold.min
        results.append(
            (
                ratio <= TARGET_ABSENT_RATIO,
                f"cold plan with every image absent, {r.pods:,} pods: "
                f"{_seconds(r.absent.min)}, {ratio:.2f}x the cold plan with them present "
                f"(by the min) <= {TARGET_ABSENT_RATIO:g}x",
            )
        )
    for r in rows:
        if r.pods == max(x.pods for x in rows):
            results.append(
                (
                    r.peak_mb < TARGET_MEMORY_MB,
                    f"steady plan memory, {r.pods:,} pods: peak {r.peak_mb:.1f} MB traced "
                    f"< {TARGET_MEMORY_MB:g} MB",
                )
            )
    return results


# ---------------------------------------------------------------------------------------
# Main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bench_plan",
        description="Time podsync's planner for growing pod counts (cold and steady).",
    )
    parser.add_argument(
        "--sizes",
        default="100,1000,10000",
        help="comma-separated pod counts, ascending (default: 100,1000,10000)",
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per plan (default 5)")
    parser.add_argument(
        "--min-time",
        type=float,
        default=1.0,
        help="keep timing a fast plan past --repeat runs until this many seconds are spent "
        f"(at most {MAX_RUNS} runs; default 1.0; 0 for exactly --repeat runs)",
    )
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--plot", metavar="FILE.svg", help="also draw the times as an SVG chart")
    parser.add_argument(
        "--no-seed", action="store_true", help="skip the seed-style lookup comparison"
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="cProfile one steady plan of the largest size (top 10 by tottime); done "
        f"anyway when steady {TARGET_PODS:,} takes >= {PROFILE_THRESHOLD_SECONDS} s",
    )
    args = parser.parse_args(argv)
    try:
        args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--sizes must be comma-separated integers, got {args.sizes!r}")
    if not args.sizes or any(n <= 0 for n in args.sizes) or args.sizes != sorted(args.sizes):
        parser.error("--sizes must be positive and ascending")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.min_time < 0:
        parser.error("--min-time must not be negative")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    print(
        f"podsync plan() benchmark - Python {platform.python_version()} "
        f"({platform.python_implementation()}), {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs; {args.repeat} timed runs per plan, more for fast plans "
        f"until {args.min_time:g} s are spent (at most {MAX_RUNS})."
    )
    print(
        "Times are the minimum and median of the runs: this machine is small and noisy, "
        "so the minimum is the better estimate of the cost."
    )
    print()

    rows: list[Row] = []
    previous_seed: tuple[int, float] | None = None
    for k, n in enumerate(args.sizes):
        row = measure(
            n,
            args.repeat,
            min_time=args.min_time,
            with_seed=not args.no_seed,
            previous_seed=previous_seed,
            cross_check=k == 0,
        )
        rows.append(row)
        if row.seed is not None and not row.seed.extrapolated:
            previous_seed = (n, row.seed.seconds)
        print(
            f"  measured {n:,} pods: cold {_seconds(row.cold.min)}, "
            f"steady {_seconds(row.steady.min)}, images absent {_seconds(row.absent.min)}"
            + (f", seed-style lookup {_seed_cell(row)}" if row.seed else ""),
            file=sys.stderr,
            flush=True,
        )

    rss_mb = max_rss_mb()  # before the traced runs below, whose bookkeeping inflates it
    header, body = table(rows)
    print(render_markdown(header, body) if args.markdown else render_text(header, body))
    print()
    print(
        "cold: plan(pods, []) - every container created. steady: plan(pods, observed) with "
        "4 running containers per pod (net + 3) and no changes (asserted). "
        "µs/container: steady min / observed containers. growth: time ratio to the "
        "previous size (by the min). peak MB: tracemalloc peak of one steady plan call, "
        "in a separate untimed run (inputs not included). images absent: the cold plan "
        "against an engine with no images (4 pulls, each needed by every pod)."
    )
    print(
        "timed runs per size (cold/steady/absent): "
        + ", ".join(
            f"{r.pods:,}: {len(r.cold.runs)}/{len(r.steady.runs)}/{len(r.absent.runs)}"
            for r in rows
        )
        + "."
    )
    if not args.no_seed:
        print(
            "seed-style lookup: for comparison only, not podsync code - one "
            "FindPodContainer-style scan of the observed list (parse_container_name on "
            "each name until a match) per desired pod container; the lookups alone, no "
            "planning (min of up to "
            f"{args.repeat} runs, fewer once {SEED_REPEAT_BUDGET_SECONDS:g} s are spent)."
        )
        for r in rows:
            if r.seed is not None and r.seed.extrapolated:
                print(f"  * {r.pods:,} pods: extrapolated - {r.seed.note}.")
    print()

    results = checks(rows)
    for ok, line in results:
        print(f"{'PASS' if ok else 'FAIL'}: {line}")
    if not any(r.pods == TARGET_PODS for r in rows):
        print(f"(no {TARGET_PODS:,}-pod size measured: the time target was not judged)")
    largest = rows[-1]
    pods_mb, observed_mb = traced_inputs_mb(largest.pods)
    print(
        f"INFO: steady plan of {largest.pods:,} pods with its inputs: pods {pods_mb:.1f} MB "
        f"+ observed containers {observed_mb:.1f} MB + plan peak {largest.peak_mb:.1f} MB "
        f"= {pods_mb + observed_mb + largest.peak_mb:.1f} MB traced"
    )
    print(
        f"INFO: process max RSS {rss_mb:.0f} MB over the measurements above (interpreter included; "
        "the peak is a cold plan's result held with the largest inputs)"
    )

    if args.plot:
        argv = sys.argv[1:] if argv is None else argv
        svgchart.save(args.plot, plot(rows, svgchart.run_notes("benchmarks.bench_plan", argv)))
        print(f"INFO: chart written to {args.plot}")
    if args.profile or (
        largest.pods >= TARGET_PODS and largest.steady.min >= PROFILE_THRESHOLD_SECONDS
    ):
        print()
        print(f"cProfile of one steady plan, {largest.pods:,} pods, top 10 by tottime:")
        print(profile_steady(largest.pods))
    print(f"total benchmark time {time.perf_counter() - started:.0f} s")
    return 1 if args.check and not all(ok for ok, _ in results) else 0


if __name__ == "__main__":
    sys.exit(main())
