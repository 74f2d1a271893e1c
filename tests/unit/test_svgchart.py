"""The benchmarks' SVG chart writer (``benchmarks/svgchart.py``): well-formed documents
whose marks follow the data, escaped text, the same bytes for the same data, and a
``ValueError`` for data a chart cannot show honestly."""

from __future__ import annotations

import itertools
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from benchmarks.svgchart import (
    INK,
    PALETTE,
    REFERENCE,
    WIDTH,
    Axis,
    Bar,
    BarChart,
    BarGroup,
    LineChart,
    Point,
    Rule,
    Series,
    count,
    figure,
    save,
    seconds,
)

SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def marks(root: ET.Element, tag: str, cls: str) -> list[ET.Element]:
    return [e for e in root.iter(f"{SVG}{tag}") if e.get("class") == cls]


def texts(root: ET.Element) -> list[str]:
    return ["".join(e.itertext()) for e in root.iter(f"{SVG}text")]


def plan_chart(**changes: object) -> LineChart:
    series = (
        Series("cold", (Point(100, 0.014), Point(1_000, 0.15), Point(10_000, 2.0))),
        Series("steady", (Point(100, 0.0055), Point(1_000, 0.06), Point(10_000, 0.67))),
        Series(
            "seed-style lookup",
            (Point(100, 0.15), Point(1_000, 15.4), Point(10_000, 1616.0, estimated=True)),
            reference=True,
        ),
    )
    fields: dict[str, object] = {
        "title": "plan()",
        "x": Axis("pods", log=True),
        "y": Axis("seconds", log=True, format=seconds),
        "series": series,
        "rules": (Rule(0.5, "target"),),
    }
    fields.update(changes)
    return LineChart(**fields)  # type: ignore[arg-type]


def apply_chart() -> BarChart:
    return BarChart(
        "apply",
        Axis("seconds", format=seconds),
        (
            BarGroup(
                "cold",
                (
                    Bar("podsync", 10.2, 10.2, 12.0, "10.2 s (0.94x)"),
                    Bar("raw SDK (floor)", 10.9, 10.9, 11.4, "10.9 s", reference=True),
                    Bar("compose", 13.4, note="13.4 s"),
                ),
            ),
            BarGroup(
                "teardown",
                (
                    Bar("podsync", 5.0, 4.9, 5.1),
                    Bar("raw SDK (floor)", 4.77, reference=True),
                    Bar("compose", 6.8),
                ),
            ),
        ),
        (Rule(12.0, "1.1x the floor"),),
    )


def test_a_figure_is_an_accessible_svg_document() -> None:
    root = parse(figure("Plan & apply", "what it shows", [plan_chart(), apply_chart()]))

    assert f"{SVG}svg" == root.tag
    assert "img" == root.get("role")
    assert "title desc" == root.get("aria-labelledby")
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert title is not None
    assert desc is not None
    assert ("Plan & apply", "what it shows") == (title.text, desc.text)
    assert "title" == title.get("id")
    assert str(WIDTH) == root.get("width")
    assert f"0 0 {WIDTH} {root.get('height')}" == root.get("viewBox")


def test_every_point_is_drawn_where_its_data_says() -> None:
    chart = plan_chart()
    points = marks(parse(figure("t", "d", [chart])), "circle", "point")

    assert sum(len(s.points) for s in chart.series) == len(points)
    by_series: dict[str, list[ET.Element]] = {}
    for p in points:
        by_series.setdefault(p.get("data-series", ""), []).append(p)
    assert {"cold", "steady", "seed-style lookup"} == set(by_series)
    for s in chart.series:
        drawn = by_series[s.name]
        assert [(p.x, p.y) for p in s.points] == [
            (float(e.get("data-x", "")), float(e.get("data-y", ""))) for e in drawn
        ]
        cx = [float(e.get("cx", "")) for e in drawn]
        cy = [float(e.get("cy", "")) for e in drawn]
        # More pods to the right; more time upwards (SVG's y grows downwards).
        assert cx == sorted(cx)
        assert len(set(cx)) == len(cx)
        assert cy == sorted(cy, reverse=True)
        # Log axes: each point is 10x the last in pods, so the steps are equal.
        assert cx[2] - cx[1] == pytest.approx(cx[1] - cx[0], abs=0.2)


def test_the_y_scale_is_logarithmic_and_monotonic_across_series() -> None:
    """A point at 10x the time is the same height above, whichever the series."""
    points = marks(parse(figure("t", "d", [plan_chart()])), "circle", "point")
    by_value = sorted((float(p.get("data-y", "")), float(p.get("cy", ""))) for p in points)
    heights = [cy for _, cy in by_value]
    assert heights == sorted(heights, reverse=True)
    per_decade = [
        (cy0 - cy1) / math.log10(v1 / v0)
        for (v0, cy0), (v1, cy1) in itertools.pairwise(by_value)
        if v1 > v0
    ]
    assert max(per_decade) == pytest.approx(min(per_decade), rel=0.02)


def test_a_linear_axis_places_points_in_proportion() -> None:
    chart = LineChart(
        "t",
        Axis("workers", ticks=(1.0, 2.0, 4.0, 8.0)),
        Axis("seconds", format=seconds),
        (Series("raw", (Point(1, 20.0), Point(2, 10.0), Point(4, 5.0), Point(8, 5.0))),),
    )
    points = marks(parse(figure("t", "d", [chart])), "circle", "point")
    cx = [float(p.get("cx", "")) for p in points]
    cy = [float(p.get("cy", "")) for p in points]
    assert cx[3] - cx[2] == pytest.approx(2 * (cx[2] - cx[1]), abs=0.2)
    assert cy[3] == cy[2]
    # From 0: 20 s is twice as far above the axis as 10 s.
    axis = max(
        float(e.get("y1", "")) for e in marks(parse(figure("t", "d", [chart])), "line", "grid")
    )
    assert axis - cy[0] == pytest.approx(2 * (axis - cy[1]), abs=0.2)


def test_estimated_points_are_hollow_and_references_grey_and_dashed() -> None:
    root = parse(figure("t", "d", [plan_chart()]))
    points = marks(root, "circle", "point")
    hollow = [p for p in points if p.get("fill") == "none"]
    assert [("seed-style lookup", "1616.0")] == [
        (p.get("data-series"), p.get("data-y")) for p in hollow
    ]
    lines = {e.get("data-series"): e for e in marks(root, "polyline", "series")}
    assert REFERENCE == lines["seed-style lookup"].get("stroke")
    assert lines["seed-style lookup"].get("stroke-dasharray")
    own = [lines["cold"].get("stroke"), lines["steady"].get("stroke")]
    assert own == list(PALETTE[:2])
    assert lines["cold"].get("stroke-dasharray") is None


def test_bars_are_as_long_as_their_values() -> None:
    chart = apply_chart()
    root = parse(figure("t", "d", [chart]))
    rects = marks(root, "rect", "bar")
    bars = [b for g in chart.groups for b in g.bars]

    assert len(bars) == len(rects)
    assert [b.value for b in bars] == [float(r.get("data-value", "")) for r in rects]
    widths = [float(r.get("width", "")) for r in rects]
    for bar, width in zip(bars, widths, strict=True):
        assert width / widths[0] == pytest.approx(bar.value / bars[0].value, rel=0.01)
    # All bars start on the same axis, and go downwards one under another.
    assert 1 == len({r.get("x") for r in rects})
    ys = [float(r.get("y", "")) for r in rects]
    assert ys == sorted(ys)
    assert len(set(ys)) == len(ys)


def test_a_bars_colour_follows_its_label_and_the_reference_is_grey() -> None:
    rects = marks(parse(figure("t", "d", [apply_chart()])), "rect", "bar")
    fills = {(r.get("data-label"), r.get("fill")) for r in rects}
    assert {
        ("podsync", PALETTE[0]),
        ("raw SDK (floor)", REFERENCE),
        ("compose", PALETTE[1]),
    } == fills


def test_whiskers_span_low_to_high() -> None:
    chart = apply_chart()
    root = parse(figure("t", "d", [chart]))
    whiskers = marks(root, "path", "whisker")
    rects = marks(root, "rect", "bar")
    with_range = [b for g in chart.groups for b in g.bars if b.low is not None]

    assert len(with_range) == len(whiskers)
    first = whiskers[0].get("d", "").split()
    start = float(first[0].lstrip("M").split(",")[0])
    end = float(first[1].lstrip("H"))
    bar_end = float(rects[0].get("x", "")) + float(rects[0].get("width", ""))
    # 10.2 (the bar's end) to 12.0: the axis's pixels per second from the bar itself.
    per_second = float(rects[0].get("width", "")) / 10.2
    assert start == pytest.approx(bar_end, abs=0.2)
    assert end - start == pytest.approx(1.8 * per_second, abs=0.3)


def test_rules_are_drawn_and_labelled() -> None:
    root = parse(figure("t", "d", [plan_chart(), apply_chart()]))
    assert 2 == len(marks(root, "line", "rule"))
    assert {"target", "1.1x the floor"} <= set(texts(root))


def test_text_is_escaped() -> None:
    nasty = "<script>alert('x')</script> & \"quoted\""
    chart = plan_chart(
        title=nasty,
        series=(Series(nasty, (Point(1, 1.0), Point(10, 2.0))),),
        rules=(Rule(1.5, nasty),),
    )
    bars = BarChart(nasty, Axis(nasty), (BarGroup(nasty, (Bar(nasty, 1.0, note=nasty),)),))
    svg = figure(nasty, nasty, [chart, bars], notes=[nasty])
    root = parse(svg)

    assert "<script>" not in svg
    assert not list(root.iter(f"{SVG}script"))
    assert texts(root).count(nasty) >= 6
    assert nasty == root.findtext(f"{SVG}title")
    assert {nasty} == {p.get("data-series") for p in marks(root, "circle", "point")}


def test_the_same_data_gives_the_same_bytes() -> None:
    first = figure("t", "d", [plan_chart(), apply_chart()], notes=["note"])
    again = figure("t", "d", [plan_chart(), apply_chart()], notes=["note"])
    assert first == again
    changed = plan_chart(
        series=(Series("cold", (Point(100, 0.014), Point(1_000, 0.16), Point(10_000, 2.0))),)
    )
    assert first != figure("t", "d", [changed, apply_chart()], notes=["note"])


def test_the_background_is_transparent_and_the_text_neutral() -> None:
    svg = figure("t", "d", [plan_chart(), apply_chart()])
    root = parse(svg)
    assert not [r for r in root.iter(f"{SVG}rect") if r.get("class") != "bar"]
    style = root.findtext(f"{SVG}style") or ""
    assert f"fill:{INK}" in style
    assert "#000" not in svg
    assert "#fff" not in svg.lower()


def test_long_notes_are_wrapped_to_the_width() -> None:
    note = " ".join(["python -m benchmarks.bench_plan --sizes 100,1000,10000"] * 4)
    root = parse(figure("t", "d", [apply_chart()], notes=[note, "short"]))
    lines = [e for e in root.iter(f"{SVG}text") if e.get("class") == "note"]

    assert len(lines) > 2
    assert note == " ".join("".join(e.itertext()) for e in lines[:-1])
    assert "short" == "".join(lines[-1].itertext())
    assert all(len("".join(e.itertext())) * 0.6 * 13 <= WIDTH - 20 for e in lines)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0.0, "0"),
        (4e-5, "40 µs"),
        (0.0055, "5.5 ms"),
        (0.25, "250 ms"),
        (1.0, "1 s"),
        (1.5, "1.5 s"),
        (1616.2, "1,620 s"),
        (10_000.0, "10,000 s"),
    ],
    ids=["zero", "micro", "milli", "sub-second", "one", "seconds", "large", "round large"],
)
def test_seconds_labels(value: float, shown: str) -> None:
    assert shown == seconds(value)


@pytest.mark.parametrize(
    ("value", "shown"),
    [(0.0, "0"), (100.0, "100"), (10_000.0, "10,000"), (12_345.0, "12,345"), (2.5, "2.5")],
    ids=["zero", "hundred", "thousands", "every digit", "fraction"],
)
def test_count_labels(value: float, shown: str) -> None:
    assert shown == count(value)


@pytest.mark.parametrize(
    ("chart", "message"),
    [
        (plan_chart(series=(Series("s", (Point(1, 0.0),)),)), r"seconds: 0\.0 cannot be shown"),
        (plan_chart(series=(Series("s", (Point(0, 1.0),)),)), r"pods: 0 cannot be shown"),
        (plan_chart(series=(Series("s", (Point(1, math.nan),)),)), r"seconds: nan is not"),
        (plan_chart(series=(Series("s", ()),)), r"plan\(\): no points"),
        (BarChart("b", Axis("s"), (BarGroup("g", ()),)), r"b: no bars"),
        (
            BarChart("b", Axis("s", log=True), (BarGroup("g", (Bar("x", 1.0),)),)),
            r"b: bars start at 0",
        ),
        (BarChart("b", Axis("s"), (BarGroup("g", (Bar("x", math.inf),)),)), r"s: inf is not"),
    ],
    ids=["zero on log y", "zero on log x", "nan", "no points", "no bars", "log bars", "inf"],
)
def test_data_a_chart_cannot_show_is_refused(chart: LineChart | BarChart, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        figure("t", "d", [chart])


def test_a_figure_needs_a_chart() -> None:
    with pytest.raises(ValueError, match="at least one chart"):
        figure("t", "d", [])


def test_save_writes_the_text_as_utf8(tmp_path: Path) -> None:
    svg = figure("µs", "d", [plan_chart()])
    path = tmp_path / "chart.svg"
    save(str(path), svg)
    assert svg.encode() == path.read_bytes()


@pytest.mark.parametrize(
    ("label", "above"),
    [("short", False), ("a label long enough to leave the bars too little room", True)],
    ids=["beside", "above"],
)
def test_long_labels_go_above_their_bars(label: str, above: bool) -> None:
    chart = BarChart(
        "b",
        Axis("s", format=seconds),
        (BarGroup("", (Bar(label, 1.0, note="a note of some length, 1.00x"), Bar("x", 2.0))),),
    )
    root = parse(figure("t", "d", [chart]))
    rect = marks(root, "rect", "bar")[0]
    text = next(e for e in root.iter(f"{SVG}text") if e.text == label)
    bar_x, bar_y = float(rect.get("x", "")), float(rect.get("y", ""))

    if above:
        assert float(text.get("y", "")) < bar_y
        assert float(text.get("x", "")) == bar_x
    else:
        assert bar_y < float(text.get("y", "")) < bar_y + float(rect.get("height", ""))
        assert float(text.get("x", "")) < bar_x
        assert "end" == text.get("text-anchor")


def test_each_rule_label_has_a_line_of_its_own() -> None:
    chart = BarChart(
        "b",
        Axis("s"),
        (BarGroup("", (Bar("x", 10.0),)),),
        (Rule(1.0, "one"), Rule(1.2, "close by")),
    )
    root = parse(figure("t", "d", [chart]))
    ys = {e.text: float(e.get("y", "")) for e in root.iter(f"{SVG}text")}
    assert abs(ys["one"] - ys["close by"]) >= 13
    rules = marks(root, "line", "rule")
    assert [float(r.get("x1", "")) for r in rules] == sorted(float(r.get("x1", "")) for r in rules)


def test_a_series_is_drawn_in_x_order_whatever_its_order() -> None:
    shuffled = (Point(1_000, 0.15), Point(100, 0.014), Point(10_000, 2.0))
    chart = plan_chart(series=(Series("cold", shuffled),))
    root = parse(figure("t", "d", [chart]))
    line = marks(root, "polyline", "series")[0]
    xs = [float(pair.split(",")[0]) for pair in line.get("points", "").split()]
    assert xs == sorted(xs)
    assert [100.0, 1_000.0, 10_000.0] == [
        float(p.get("data-x", "")) for p in marks(root, "circle", "point")
    ]


def test_a_log_axis_of_one_decade_has_ticks_inside_it() -> None:
    chart = plan_chart(
        x=Axis("pods", log=True, format=count),
        series=(Series("cold", (Point(1_000, 0.15), Point(10_000, 0.9))),),
        rules=(),
    )
    shown = texts(parse(figure("t", "d", [chart])))
    assert {"1,000", "2,000", "5,000", "10,000"} <= set(shown)
    assert {"200 ms", "500 ms", "1 s"} <= set(shown)


def test_a_note_is_written_after_its_whisker() -> None:
    chart = BarChart("b", Axis("s"), (BarGroup("", (Bar("x", 1.0, 1.0, 3.0, note="the note"),)),))
    root = parse(figure("t", "d", [chart]))
    whisker = marks(root, "path", "whisker")[0].get("d", "").split()
    end = float(whisker[1].lstrip("H"))
    note = next(e for e in root.iter(f"{SVG}text") if e.text == "the note")
    assert end < float(note.get("x", "")) < end + 20


def test_rule_labels_sit_between_the_title_and_the_bars() -> None:
    rules = (Rule(1.0, "one"), Rule(2.0, "two"))
    chart = BarChart("the title", Axis("s"), (BarGroup("", (Bar("x", 3.0),)),), rules)
    root = parse(figure("t", "d", [chart]))
    ys = {e.text: float(e.get("y", "")) for e in root.iter(f"{SVG}text")}
    bar_top = float(marks(root, "rect", "bar")[0].get("y", ""))
    for label in ("one", "two"):
        assert ys["the title"] + 13 <= ys[label] < bar_top


def test_a_linear_axis_has_ticks_at_nice_steps() -> None:
    """0 to 13.4 s: ticks every 5 s (1, 2 or 5 times a power of ten), up past the data."""
    bar_ticks = [t for t in texts(parse(figure("t", "d", [apply_chart()]))) if t[:1].isdigit()]
    assert ["0", "5 s", "10 s", "15 s"] == bar_ticks[:4]


def test_the_legend_wraps_within_the_width() -> None:
    names = [f"series number {k} with a long descriptive name" for k in range(5)]
    chart = plan_chart(
        series=tuple(
            Series(n, (Point(1, 1.0 + k), Point(10, 2.0 + k))) for k, n in enumerate(names)
        ),
        rules=(),
    )
    root = parse(figure("t", "d", [chart]))
    legend = [e for e in root.iter(f"{SVG}text") if e.text in names]
    rows = {float(e.get("y", "")) for e in legend}
    assert len(rows) >= 3
    assert all(float(e.get("x", "")) + len(e.text or "") * 0.6 * 13 <= WIDTH for e in legend)
