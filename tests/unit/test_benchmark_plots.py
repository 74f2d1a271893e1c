"""Each benchmark's ``--plot`` figure (``benchmarks/bench_*.py``'s ``plot``) draws what
that run measured, from synthetic results (no engine is run here): one mark per
measurement, podsync beside its reference, the reference drawn as one; and
``bench_plan --plot`` end to end, on a few tiny pod counts."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from benchmarks import bench_apply, bench_e2e, bench_loop, bench_plan
from benchmarks.bench_plan import Timing
from benchmarks.svgchart import REFERENCE

SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def points(root: ET.Element) -> dict[str, list[tuple[float, float]]]:
    """Each line's data points, by series name, as the file holds them."""
    found: dict[str, list[tuple[float, float]]] = {}
    for e in root.iter(f"{SVG}circle"):
        if e.get("class") == "point":
            xy = (float(e.get("data-x", "")), float(e.get("data-y", "")))
            found.setdefault(e.get("data-series", ""), []).append(xy)
    return found


def bars(root: ET.Element) -> list[tuple[str, float, str]]:
    """(label, value, fill) of each bar, top to bottom."""
    return [
        (e.get("data-label", ""), float(e.get("data-value", "")), e.get("fill", ""))
        for e in root.iter(f"{SVG}rect")
        if e.get("class") == "bar"
    ]


def texts(root: ET.Element) -> str:
    return "\n".join("".join(e.itertext()) for e in root.iter(f"{SVG}text"))


# --- bench_plan ------------------------------------------------------------------------


def plan_row(pods: int, scale: float, seed: bench_plan.SeedResult | None) -> bench_plan.Row:
    return bench_plan.Row(
        pods=pods,
        observed=4 * pods,
        cold=Timing([2 * scale, 2.5 * scale]),
        steady=Timing([0.7 * scale]),
        peak_mb=1.0,
        absent=Timing([2.1 * scale]),
        seed=seed,
        first=Timing([1.2 * scale]),
    )


@pytest.mark.parametrize(
    ("largest", "rules"),
    [(1_000, 0), (bench_plan.TARGET_PODS, 1)],
    ids=["no target size", "the target size"],
)
def test_plan_draws_each_plan_per_pod_count_beside_the_seed(largest: int, rules: int) -> None:
    rows = [
        plan_row(largest // 10, 0.01, bench_plan.SeedResult(0.15, 2)),
        plan_row(largest, 0.1, bench_plan.SeedResult(15.0, 1, extrapolated=True)),
    ]
    root = parse(bench_plan.plot(rows, ["a note"]))
    drawn = points(root)

    assert {
        "cold: every container created": [(largest // 10, 0.02), (largest, 0.2)],
        "cold, images absent": [(largest // 10, 0.021), (largest, 0.21)],
        "steady, new Pod objects": [(largest // 10, 0.012), (largest, 0.12)],
        "steady: nothing to do": [(largest // 10, 0.007), (largest, 0.07)],
        "seed-style lookup alone (the 2014 kubelet's; hollow: extrapolated)": [
            (largest // 10, 0.15),
            (largest, 15.0),
        ],
    } == {name: [(int(x), round(y, 9)) for x, y in xy] for name, xy in drawn.items()}
    seed = [e for e in root.iter(f"{SVG}polyline") if e.get("data-series", "").startswith("seed")]
    assert REFERENCE == seed[0].get("stroke")
    hollow = [e.get("data-x") for e in root.iter(f"{SVG}circle") if e.get("fill") == "none"]
    assert [str(float(largest))] == hollow
    assert rules == sum(1 for e in root.iter(f"{SVG}line") if e.get("class") == "rule")
    assert "a note" in texts(root)


def test_plan_without_the_seed_draws_podsyncs_plans_only() -> None:
    rows = [plan_row(10, 0.001, None), plan_row(100, 0.01, None)]
    drawn = points(parse(bench_plan.plot(rows)))
    assert 4 == len(drawn)
    assert not [name for name in drawn if "seed" in name]


def test_bench_plan_writes_its_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--plot`` end to end: the sizes measured in that run, each plan drawn, and the
    command in the notes."""
    path = tmp_path / "plan.svg"
    argv = ["--sizes", "3,6", "--repeat", "1", "--min-time", "0", "--no-seed", "--plot", str(path)]
    assert 0 == bench_plan.main(argv)

    root = parse(path.read_text(encoding="utf-8"))
    drawn = points(root)
    assert 4 == len(drawn)
    assert all([3.0, 6.0] == [x for x, _ in xy] for xy in drawn.values())
    assert all(y > 0 for xy in drawn.values() for _, y in xy)
    assert "python -m benchmarks.bench_plan --sizes 3,6" in texts(root)
    assert f"chart written to {path}" in capsys.readouterr().out


# --- bench_apply -----------------------------------------------------------------------


def apply_series(
    contender: str, workers: int, cold: list[float], steady: float, down: float
) -> bench_apply.Series:
    series = bench_apply.Series(contender, workers)
    for seconds in cold:
        series.add(bench_apply.COLD, bench_apply.Sample(seconds, 0.1))
        series.add(bench_apply.STEADY, bench_apply.Sample(steady, 0.01))
        series.add(bench_apply.TEARDOWN, bench_apply.Sample(down, 0.1))
    return series


def test_apply_draws_podsync_beside_the_floor_and_compose() -> None:
    report = bench_apply.Report(
        podsync={
            4: apply_series(bench_apply.PODSYNC, 4, [10.6], 0.025, 5.2),
            8: apply_series(bench_apply.PODSYNC, 8, [10.2, 11.1], 0.018, 5.0),
        },
        raw={
            1: apply_series(bench_apply.RAW, 1, [22.7], 0.0, 9.5),
            4: apply_series(bench_apply.RAW, 4, [10.9, 11.4], 0.0, 4.8),
        },
        compose=apply_series(bench_apply.COMPOSE_NAME, 64, [13.4, 14.3], 2.21, 6.8),
        default_workers=8,
        pods=50,
    )
    root = parse(bench_apply.plot(report))
    grey = REFERENCE

    assert [
        ("podsync (8 workers)", 10.2, "#0072B2"),
        ("raw SDK (4 workers, floor)", 10.9, grey),
        ("docker-compose", 13.4, "#E69F00"),
        ("podsync (8 workers)", 5.0, "#0072B2"),
        ("raw SDK (4 workers, floor)", 4.8, grey),
        ("docker-compose", 6.8, "#E69F00"),
        ("podsync (8 workers)", 0.018, "#0072B2"),
        ("docker-compose up -d again (no-op)", 2.21, grey),
    ] == bars(root)
    # Whiskers to the slowest run: podsync's cold 10.2 -> 11.1, compose's 13.4 -> 14.3.
    assert 8 == sum(1 for e in root.iter(f"{SVG}path") if e.get("class") == "whisker")
    assert {
        "podsync cold apply": [(4.0, 10.6), (8.0, 10.2)],
        "raw SDK cold apply": [(1.0, 22.7), (4.0, 10.9)],
    } == points(root)
    shown = texts(root)
    assert "0.94x the floor" in shown
    assert "0.8% of compose's no-op" in shown
    assert "cold apply: 150 containers from nothing" in shown


# --- bench_e2e -------------------------------------------------------------------------


def e2e_row(pods: int, scale: float, cli: bool) -> bench_e2e.SizeRow:
    return bench_e2e.SizeRow(
        pods=pods,
        floor=Timing([1.4 * scale]),
        load=Timing([0.5 * scale]),
        cold=Timing([0.1 * scale]),
        absent=Timing([0.11 * scale]),
        steady=Timing([0.03 * scale]),
        first=Timing([0.07 * scale]),
        cli=Timing([1.1 * scale]) if cli else None,
    )


def timed(wall: list[float], cpu: float) -> bench_e2e.Timed:
    t = bench_e2e.Timed()
    for w in wall:
        t.add(w, cpu)
    return t


def applies() -> bench_e2e.ApplyTimings:
    return bench_e2e.ApplyTimings(
        podsync=timed([0.55, 0.6], 0.28),
        docker=timed([0.3, 0.35], 0.03),
        sdk_floor=timed([0.4], 0.13),
        python=timed([0.022], 0.022),
        import_docker=timed([0.12], 0.12),
    )


def test_e2e_draws_the_phases_per_pod_count_and_the_one_pod_apply() -> None:
    rows = [e2e_row(1_000, 1.0, cli=True), e2e_row(10_000, 10.0, cli=False)]
    root = parse(bench_e2e.plot(rows, applies(), cpu=True))
    drawn = points(root)

    assert [(1_000.0, 1.4), (10_000.0, 14.0)] == [
        (x, round(y, 9)) for x, y in drawn["PyYAML's C loader alone (the floor)"]
    ]
    assert [(1_000.0, 0.5), (10_000.0, 5.0)] == drawn["load_pods"]
    # The CLI row was measured at one size only: one point.
    assert [(1_000.0, 1.1)] == drawn["CLI plan --json, end to end"]
    assert 7 == len(drawn)
    floor = [e for e in root.iter(f"{SVG}polyline") if "floor" in e.get("data-series", "")]
    assert REFERENCE == floor[0].get("stroke")
    # No --baseline: five bars, two docker run -d the reference, and its 1.1x target.
    assert [
        ("podsync apply", 0.55),
        ("two docker run -d", 0.3),
        ("SDK floor: the same 4 calls", 0.4),
        ('python -c "import docker"', 0.12),
        ("python -c pass", 0.022),
    ] == [(label, value) for label, value, _ in bars(root)]
    assert [REFERENCE] == [fill for label, _, fill in bars(root) if label == "two docker run -d"]
    assert "1.83x docker run" in texts(root)
    assert "CPU time, minimum of the runs" in texts(root)


@pytest.mark.parametrize(
    ("rows", "with_applies", "lines", "bar_count"),
    [([], True, 0, 5), ([e2e_row(1_000, 1.0, cli=False)], False, 6, 0)],
    ids=["--apply-only", "no engine"],
)
def test_e2e_draws_what_was_measured(
    rows: list[bench_e2e.SizeRow], with_applies: bool, lines: int, bar_count: int
) -> None:
    root = parse(bench_e2e.plot(rows, applies() if with_applies else None))
    assert lines == len(points(root))
    assert bar_count == len(bars(root))


def test_e2e_with_nothing_measured_has_no_figure() -> None:
    with pytest.raises(ValueError, match="at least one chart"):
        bench_e2e.plot([], None)


# --- bench_loop ------------------------------------------------------------------------


def test_loop_draws_the_restart_percentiles_of_both_designs() -> None:
    events = [0.2 + 0.02 * k for k in range(20)]  # p50 0.39 (median), p95 0.56
    period = [0.5 * k for k in range(1, 21)]  # p50 5.25, p95 9.5
    restarts = [("engine events", events, False), ("next sync period", period, True)]
    root = parse(bench_loop.plot(restarts, 10.0, ["idle: 0.04 CPU s"]))

    assert [
        ("engine events", pytest.approx(0.39), "#0072B2"),
        ("next sync period", 5.25, REFERENCE),
    ] == bars(root)
    shown = texts(root)
    assert "p50 0.39 s, p95 0.56 s, n 20" in shown
    assert "p50 5.25 s, p95 9.50 s, n 20" in shown
    assert "target p95 1 s" in shown
    assert "sync period 10 s" in shown
    assert "idle: 0.04 CPU s" in shown
    whiskers = [e.get("d", "") for e in root.iter(f"{SVG}path") if e.get("class") == "whisker"]
    assert 2 == len(whiskers)


def test_loop_plot_needs_the_restarts(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        bench_loop.main(["--skip-restart", "--plot", "x.svg"])
    assert "--plot draws the restart latencies" in capsys.readouterr().err
