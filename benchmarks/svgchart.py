"""A small SVG chart writer for the benchmarks' own figures (standard library only).

The benchmarks draw what they measured with it (``--plot FILE.svg``): line charts of a
time against a size, several series on one pair of axes, and horizontal bar charts
with whiskers, in groups. A figure stacks one or more charts under one title, with a
``<title>`` and a ``<desc>`` for screen readers and a few lines of notes under them.

Contract:

* **Pure and deterministic.** ``figure`` returns text and does no I/O; the same charts
  give the same bytes (coordinates are printed with a fixed precision, nothing depends
  on the clock, the locale or a random id). ``save`` is the one function that writes.
* **Light and dark themes.** The background is transparent; text, axes and grid lines
  are one neutral grey (``INK``) that reads on white and on a dark page alike (an SVG
  shown through ``<img>`` does not inherit the page's colour, so ``currentColor`` would
  be black on a dark page); the series colours are the Okabe-Ito colour-blind-safe
  palette without its yellow, mid-tones that read on both. A **reference** series or bar
  (what podsync is compared with: a floor, the seed's design, another tool) is grey and,
  for lines, dashed, so it stays apart from podsync's own series without colour.
* **Escaped text.** Every label, title and note is XML-escaped; a caller's text can
  never become markup.
* **Checked data.** Values must be finite, and positive on a logarithmic axis; an empty
  chart is refused. A ``ValueError`` says which value, rather than a drawing that lies.

The elements a test (or a reader of the file) can find: each line chart's data point is
a ``circle`` of class ``point`` (``data-series``, ``data-x``, ``data-y`` hold the data),
each bar a ``rect`` of class ``bar`` (``data-value``), each whisker a ``path`` of class
``whisker``, each rule (a target) a ``line`` of class ``rule``.
"""

from __future__ import annotations

import html
import math
import os
import platform
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = [
    "Axis",
    "Bar",
    "BarChart",
    "BarGroup",
    "LineChart",
    "Point",
    "Rule",
    "Series",
    "count",
    "figure",
    "run_notes",
    "save",
    "seconds",
]

#: Text, axes and grid: one grey that reads on a white and on a dark background.
INK = "#808080"
#: The reference series' and bars' colour.
REFERENCE = "#9a9a9a"
#: Okabe & Ito's colour-blind-safe palette, without the yellow (unreadable on white).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#999933")
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
FONT_SIZE = 13
WIDTH = 760

_CHAR = 0.6 * FONT_SIZE  # a generous average glyph width: labels are laid out by it
_LINE = FONT_SIZE + 7  # one line of text


# ---------------------------------------------------------------------------------------
# Formatting tick labels


def _trim(value: float, digits: int = 3) -> str:
    """``value`` with at most ``digits`` significant digits, no trailing zeros."""
    if value == 0:
        return "0"
    text = f"{value:.{digits}g}"
    if "e" in text:  # large round numbers: 10,000 and not 1e+04
        text = f"{float(text):,.0f}"
    return text


def seconds(value: float) -> str:
    """A duration for a tick label: ``250 ms``, ``1.5 s``, ``40 µs``."""
    size = abs(value)
    if size == 0:
        return "0"
    if size >= 1:
        return f"{_trim(value)} s"
    if size >= 1e-3:
        return f"{_trim(value * 1e3)} ms"
    return f"{_trim(value * 1e6)} µs"


def count(value: float) -> str:
    """A count for a tick label, with thousands separators: ``10,000``."""
    return f"{value:,.0f}" if value == round(value) else _trim(value)


# ---------------------------------------------------------------------------------------
# What a chart shows


@dataclass(frozen=True)
class Axis:
    """An axis: its label (with the unit), whether it is logarithmic, how its ticks are
    written, and (optionally) the ticks to draw instead of computed ones."""

    label: str
    log: bool = False
    format: Callable[[float], str] = count
    ticks: tuple[float, ...] = ()


@dataclass(frozen=True)
class Point:
    """One measurement; ``estimated`` (extrapolated, not measured) draws it hollow."""

    x: float
    y: float
    estimated: bool = False


@dataclass(frozen=True)
class Series:
    """A line of points in x order. ``reference``: what podsync is compared with."""

    name: str
    points: tuple[Point, ...]
    reference: bool = False


@dataclass(frozen=True)
class Rule:
    """A target or a limit: a dotted line across the chart at ``value``, labelled."""

    value: float
    label: str


@dataclass(frozen=True)
class Bar:
    """One bar from 0 to ``value``, a whisker from ``low`` to ``high`` when both are
    given (the spread of the runs: the chart's axis label says which), and a note
    written after it (the figure and its ratio, as the benchmark prints them)."""

    label: str
    value: float
    low: float | None = None
    high: float | None = None
    note: str = ""
    reference: bool = False


@dataclass(frozen=True)
class BarGroup:
    """Bars under one heading (a phase); a bar's colour follows its label across groups."""

    name: str
    bars: tuple[Bar, ...]


@dataclass(frozen=True)
class LineChart:
    title: str
    x: Axis
    y: Axis
    series: tuple[Series, ...]
    rules: tuple[Rule, ...] = ()
    height: float = 300.0  # of the plot area, in pixels


@dataclass(frozen=True)
class BarChart:
    title: str
    axis: Axis
    groups: tuple[BarGroup, ...]
    rules: tuple[Rule, ...] = ()


Chart = LineChart | BarChart


# ---------------------------------------------------------------------------------------
# Scales


def _nice_step(span: float, target: int = 5) -> float:
    """A step of 1, 2 or 5 times a power of ten giving about ``target`` intervals."""
    raw = span / target
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return factor * power
    raise AssertionError("unreachable: factor 10 always covers raw")


@dataclass(frozen=True)
class _Scale:
    """Maps data values in ``[lo, hi]`` to pixels in ``[start, end]``."""

    lo: float
    hi: float
    start: float
    end: float
    log: bool

    def __call__(self, value: float) -> float:
        f = math.log10 if self.log else float
        t = (f(value) - f(self.lo)) / (f(self.hi) - f(self.lo))
        return self.start + t * (self.end - self.start)


def _domain(values: Sequence[float], axis: Axis, *, from_zero: bool) -> tuple[float, float]:
    """The axis's range: whole decades on a log axis, nice steps (from 0 for bars)."""
    for v in values:
        if not math.isfinite(v):
            raise ValueError(f"{axis.label}: {v!r} is not a finite number")
        if axis.log and v <= 0:
            raise ValueError(f"{axis.label}: {v!r} cannot be shown on a logarithmic axis")
    lo, hi = min(values), max(values)
    if axis.ticks:  # the caller's ticks (the values measured): the range they span
        lo, hi = min(lo, *axis.ticks), max(hi, *axis.ticks)
        if hi > lo:
            return lo, hi
    if axis.log:
        lo = 10.0 ** math.floor(math.log10(lo))
        return lo, max(10.0 ** math.ceil(math.log10(hi)), lo * 10)
    if from_zero:
        lo = min(lo, 0.0)
    if hi == lo:
        hi = lo + 1
    step = _nice_step(hi - lo)
    return math.floor(lo / step) * step, math.ceil(hi / step) * step


def _ticks(lo: float, hi: float, axis: Axis) -> list[float]:
    if axis.ticks:
        return sorted(t for t in axis.ticks if lo <= t <= hi)
    if axis.log:
        decades = [10.0**k for k in range(round(math.log10(lo)), round(math.log10(hi)) + 1)]
        if len(decades) > 2:
            return decades
        # One decade: 1, 2 and 5 of it, or the axis would have two labels.
        return [d * f for d in decades for f in (1, 2, 5) if d * f <= hi]
    step = _nice_step(hi - lo)
    n = round((hi - lo) / step)
    return [lo + k * step for k in range(n + 1)]


# ---------------------------------------------------------------------------------------
# Drawing


def _f(value: float) -> str:
    """A coordinate, at a fixed precision (the same data gives the same bytes)."""
    return f"{value:.1f}"


def _text(x: float, y: float, text: str, *, anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}"{extra}>{html.escape(text)}</text>'


def _width(text: str) -> float:
    return len(text) * _CHAR


def _colours(names: Sequence[tuple[str, bool]]) -> dict[str, str]:
    """A colour per distinct name, in first-seen order; references are grey."""
    colours: dict[str, str] = {}
    for name, reference in names:
        if name not in colours:
            own = sum(1 for c in colours.values() if c != REFERENCE)
            colours[name] = REFERENCE if reference else PALETTE[own % len(PALETTE)]
    return colours


def _legend(
    series: Sequence[Series], colours: dict[str, str], top: float
) -> tuple[list[str], float]:
    """The legend's items, wrapped into rows across the width; (elements, height)."""
    out: list[str] = []
    x, y = 20.0, top + FONT_SIZE
    for s in series:
        item = 34 + _width(s.name) + 18
        if x > 20 and x + item > WIDTH - 20:
            x, y = 20.0, y + _LINE
        colour = colours[s.name]
        dash = ' stroke-dasharray="6 4"' if s.reference else ""
        out.append(
            f'<line x1="{_f(x)}" y1="{_f(y - 4)}" x2="{_f(x + 26)}" y2="{_f(y - 4)}" '
            f'stroke="{colour}" stroke-width="2.5"{dash}/>'
        )
        out.append(f'<circle cx="{_f(x + 13)}" cy="{_f(y - 4)}" r="3.5" fill="{colour}"/>')
        out.append(_text(x + 34, y, s.name))
        x += item
    return out, y - top + 8


def _line_chart(chart: LineChart) -> tuple[list[str], float]:
    points = [p for s in chart.series for p in s.points]
    if not points:
        raise ValueError(f"{chart.title}: no points to draw")
    colours = _colours([(s.name, s.reference) for s in chart.series])
    out = [_text(WIDTH / 2, FONT_SIZE + 4, chart.title, anchor="middle", extra=' class="title"')]
    legend, legend_height = _legend(chart.series, colours, _LINE + 6)
    out += legend
    ys = [p.y for p in points] + [r.value for r in chart.rules]
    x_lo, x_hi = _domain([p.x for p in points], chart.x, from_zero=False)
    y_lo, y_hi = _domain(ys, chart.y, from_zero=not chart.y.log)
    y_ticks = _ticks(y_lo, y_hi, chart.y)
    left = 34 + max(_width(chart.y.format(t)) for t in y_ticks)
    top = _LINE + 6 + legend_height + 10
    height = chart.height
    x = _Scale(x_lo, x_hi, left, WIDTH - 30, chart.x.log)
    y = _Scale(y_lo, y_hi, top + height, top, chart.y.log)
    out += _axes(x, y, chart.x, chart.y)
    for rule in chart.rules:
        py = y(rule.value)
        out.append(
            f'<line class="rule" x1="{_f(x.start)}" y1="{_f(py)}" x2="{_f(x.end)}" y2="{_f(py)}"/>'
        )
        out.append(_text(x.start + 6, py - 5, rule.label))
    for s in chart.series:
        colour = colours[s.name]
        ordered = sorted(s.points, key=lambda p: p.x)
        dash = ' stroke-dasharray="6 4"' if s.reference else ""
        path = " ".join(f"{_f(x(p.x))},{_f(y(p.y))}" for p in ordered)
        out.append(
            f'<polyline class="series" data-series="{html.escape(s.name)}" points="{path}" '
            f'fill="none" stroke="{colour}" stroke-width="2.5"{dash}/>'
        )
        for p in ordered:
            fill = "none" if p.estimated else colour
            tip = f"{s.name}: {chart.x.format(p.x)}, {chart.y.format(p.y)}"
            tip += " (estimated)" if p.estimated else ""
            out.append(
                f'<circle class="point" data-series="{html.escape(s.name)}" '
                f'data-x="{float(p.x)!r}" data-y="{float(p.y)!r}" '
                f'cx="{_f(x(p.x))}" cy="{_f(y(p.y))}" '
                f'r="4.5" fill="{fill}" stroke="{colour}" stroke-width="2">'
                f"<title>{html.escape(tip)}</title></circle>"
            )
    return out, top + height + 2 * _LINE + 14


def _axes(x: _Scale, y: _Scale, x_axis: Axis, y_axis: Axis) -> list[str]:
    """Grid lines, ticks and labels of both axes of a line chart (``y`` runs upwards:
    its start is the plot's bottom)."""
    out = []
    top, bottom = y.end, y.start
    for t in _ticks(y.lo, y.hi, y_axis):
        py = y(t)
        out.append(
            f'<line class="grid" x1="{_f(x.start)}" y1="{_f(py)}" x2="{_f(x.end)}" y2="{_f(py)}"/>'
        )
        out.append(_text(x.start - 6, py + 4, y_axis.format(t), anchor="end"))
    for t in _ticks(x.lo, x.hi, x_axis):
        px = x(t)
        out.append(
            f'<line class="grid" x1="{_f(px)}" y1="{_f(top)}" x2="{_f(px)}" y2="{_f(bottom)}"/>'
        )
        out.append(_text(px, bottom + _LINE - 2, x_axis.format(t), anchor="middle"))
    out.append(f'<path class="axis" d="M{_f(x.start)},{_f(top)} V{_f(bottom)} H{_f(x.end)}"/>')
    out.append(_text((x.start + x.end) / 2, bottom + 2 * _LINE + 2, x_axis.label, anchor="middle"))
    mid = (top + bottom) / 2
    out.append(
        _text(
            14, mid, y_axis.label, anchor="middle", extra=f' transform="rotate(-90 14 {_f(mid)})"'
        )
    )
    return out


def _bar_chart(chart: BarChart) -> tuple[list[str], float]:
    if chart.axis.log:
        raise ValueError(f"{chart.title}: bars start at 0; a logarithmic bar axis would lie")
    bars = [b for g in chart.groups for b in g.bars]
    if not bars:
        raise ValueError(f"{chart.title}: no bars to draw")
    values = [b.value for b in bars]
    values += [v for b in bars for v in (b.low, b.high) if v is not None]
    values += [r.value for r in chart.rules]
    lo, hi = _domain(values, chart.axis, from_zero=True)
    colours = _colours([(b.label, b.reference) for b in bars])
    label_width = 20 + max(_width(b.label) for b in bars)
    note_width = 14 + max(_width(b.note) for b in bars)
    # Long labels and notes would leave the bars too little room: the labels go above
    # their bars instead, and the bars have the whole width.
    above = WIDTH - 20 - note_width - label_width < 0.45 * WIDTH
    if above:
        label_width = 20.0
    x = _Scale(lo, hi, label_width, WIDTH - 20 - note_width, False)
    out = [_text(WIDTH / 2, FONT_SIZE + 4, chart.title, anchor="middle", extra=' class="title"')]
    y = _LINE + 12.0 + len(chart.rules) * _LINE  # each rule's label on a line of its own
    top = y
    rows: list[str] = []
    bar_height = 18.0
    for group in chart.groups:
        if group.name:
            rows.append(_text(10, y + FONT_SIZE, group.name, extra=' class="group"'))
            y += _LINE + 2
        for bar in group.bars:
            colour = colours[bar.label]
            if above:
                rows.append(_text(label_width, y + FONT_SIZE, bar.label))
                y += _LINE
            else:
                rows.append(_text(label_width - 8, y + bar_height / 2 + 4, bar.label, anchor="end"))
            end = x(bar.value)
            rows.append(
                f'<rect class="bar" data-label="{html.escape(bar.label)}" '
                f'data-value="{bar.value!r}" x="{_f(x(0))}" y="{_f(y)}" '
                f'width="{_f(max(end - x(0), 0.5))}" height="{_f(bar_height)}" fill="{colour}">'
                f"<title>{html.escape(f'{bar.label}: {bar.note}'.rstrip(': '))}</title></rect>"
            )
            reach = end
            if bar.low is not None and bar.high is not None:
                a, b, mid = x(bar.low), x(bar.high), y + bar_height / 2
                rows.append(
                    f'<path class="whisker" d="M{_f(a)},{_f(mid)} H{_f(b)} '
                    f"M{_f(a)},{_f(mid - 5)} V{_f(mid + 5)} "
                    f'M{_f(b)},{_f(mid - 5)} V{_f(mid + 5)}"/>'
                )
                reach = max(reach, b)
            if bar.note:
                rows.append(_text(reach + 8, y + bar_height / 2 + 4, bar.note))
            y += bar_height + 6
        y += 6
    bottom = y
    for t in _ticks(lo, hi, chart.axis):
        px = x(t)
        out.append(
            f'<line class="grid" x1="{_f(px)}" y1="{_f(top)}" x2="{_f(px)}" y2="{_f(bottom)}"/>'
        )
        out.append(_text(px, bottom + _LINE - 2, chart.axis.format(t), anchor="middle"))
    for k, rule in enumerate(chart.rules):
        px, label_y = x(rule.value), top - 8 - k * _LINE
        out.append(
            f'<line class="rule" x1="{_f(px)}" y1="{_f(label_y + 4)}" x2="{_f(px)}" '
            f'y2="{_f(bottom)}"/>'
        )
        out.append(_text(px, label_y, rule.label, anchor="middle"))
    out += rows
    out.append(f'<path class="axis" d="M{_f(x(0))},{_f(top)} V{_f(bottom)} H{_f(x.end)}"/>')
    out.append(
        _text((x.start + x.end) / 2, bottom + 2 * _LINE + 2, chart.axis.label, anchor="middle")
    )
    return out, bottom + 2 * _LINE + 14


_STYLE = (
    f"text{{font-family:{FONT};font-size:{FONT_SIZE}px;fill:{INK}}}"
    ".title,.group{font-weight:600}.title{font-size:15px}"
    f".note{{font-size:12px}}.grid{{stroke:{INK};stroke-opacity:0.25;stroke-width:1}}"
    f".axis{{fill:none;stroke:{INK};stroke-width:1.2}}.whisker{{fill:none;stroke:{INK};"
    f"stroke-width:1.5}}.rule{{stroke:{INK};stroke-width:1.5;stroke-dasharray:2 3}}"
)


def _wrap(text: str, width: float) -> list[str]:
    """``text`` in lines that fit ``width`` (by the estimated glyph width), broken
    between words; a word longer than a line gets a line of its own."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and _width(f"{lines[-1]} {word}") <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines


def figure(title: str, desc: str, charts: Sequence[Chart], notes: Sequence[str] = ()) -> str:
    """The SVG document of ``charts`` stacked under one another, then ``notes`` (small
    lines: the machine, the load, the command that made it). ``title`` and ``desc`` are
    the document's accessible name and description (``<title>``, ``<desc>``)."""
    if not charts:
        raise ValueError(f"{title}: a figure needs at least one chart")
    body: list[str] = []
    y = 10.0
    for chart in charts:
        elements, height = _line_chart(chart) if isinstance(chart, LineChart) else _bar_chart(chart)
        body.append(f'<g transform="translate(0 {_f(y)})">')
        body += elements
        body.append("</g>")
        y += height + 16
    for line in (wrapped for note in notes for wrapped in _wrap(note, WIDTH - 20)):
        body.append(_text(10, y, line, extra=' class="note"'))
        y += _LINE - 3
    height = y + 6
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{_f(height)}" '
        f'viewBox="0 0 {WIDTH} {_f(height)}" role="img" aria-labelledby="title desc">'
    )
    return "\n".join(
        [
            head,
            f'<title id="title">{html.escape(title)}</title>',
            f'<desc id="desc">{html.escape(desc)}</desc>',
            f"<style>{_STYLE}</style>",
            *body,
            "</svg>",
            "",
        ]
    )


def run_notes(prog: str, argv: Sequence[str]) -> list[str]:
    """Notes for a figure: the command that made it; the Python, the CPUs and the load
    average at the end of the run (the machine is shared: the load is part of the
    figure). Reads the machine; the figure stays a function of what it is given."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return [
        " ".join(["python -m", prog, *(shlex.quote(a) for a in argv)]),
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load average {load} "
        "(1, 5, 15 min) at the end of the run",
    ]


def save(path: str, svg: str) -> None:
    """Write ``svg`` to ``path`` (UTF-8, ``\\n`` line ends on every platform)."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(svg)
