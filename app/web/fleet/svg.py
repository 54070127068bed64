"""The fleet page's charts. The cost chart: each layout's cost per hour against the load. The Pareto chart: output tokens/s per device against tokens/s per user, the frontier
of the search's own points, the TPOT SLO as a vertical line, each point a link to its planner view.

Both axes are logarithmic: a frontier runs from a few tokens/s per device at one client on many
devices to thousands at full batch, and a linear axis crushes one end into a corner. Drawn in a
narrow viewBox with large type so it reads on a phone (the SVG scales to the card's width: at 390
CSS pixels the 20-unit labels are ~11 px; tests/e2e/test_pareto_e2e.py measures them)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from markupsafe import Markup, escape

from app.web.format import axis_ticks, money, speed_number
from app.web.i18n import t
from app.web.svg import Frame, chart

# narrow, with large type, so it reads on a phone
PARETO_FRAME = Frame("pareto-chart", 640, 460, "pareto", left=92, right=20, top=24, bottom=74)
FONT = 20
GRID = "#d7d7de"
SLO_COLOUR = "#c53030"
COLOURS = (
    "#2b6cb0",
    "#c05621",
    "#2f855a",
    "#6b46c1",
    "#b83280",
    "#2c7a7b",
    "#975a16",
    "#1a202c",
    "#e53e3e",
    "#718096",
)
LOG_STEPS = (1, 2, 5)  # tick mantissas of a log axis
MARKER_R = 7
SLO_FILL = "#fdeaea"  # the side of the SLO line whose points miss it
# the cost chart: a wide one beside its table
COST_FRAME = Frame("fleet-chart", 1000, 340, "fleet-chart", left=80, right=24, top=24, bottom=56)
COST_Y_TICKS = 4


@dataclass(frozen=True)
class ChartPoint:
    per_user: float
    per_device: float
    group: int  # index of its layout in the legend (its colour)
    label: str  # the tooltip: layout, clients, both speeds
    link: str
    meets_slo: bool


def log_ticks(low: float, high: float) -> list[float]:
    """1-2-5 ticks covering [low, high] (both > 0), from the one at or below low to the one at or above high."""
    ticks: list[float] = []
    exponent = math.floor(math.log10(low))
    while True:
        for mantissa in LOG_STEPS:
            value = mantissa * 10.0**exponent
            if value > high:
                ticks.append(value)
                return [t for t in ticks if t >= _floor_tick(low)]
            ticks.append(value)
        exponent += 1


def _floor_tick(value: float) -> float:
    exponent = math.floor(math.log10(value))
    return max(m * 10.0**exponent for m in LOG_STEPS if m * 10.0**exponent <= value)


def tick_text(value: float) -> str:
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def colour(group: int) -> str:
    return COLOURS[group % len(COLOURS)]


def pareto_chart(points: list[ChartPoint], *, slo_per_user: float, slo_tpot_ms: float) -> Markup:
    """The frontier as a line through its points (fastest per user on the right), the SLO line dashed."""
    if not points:
        return Markup("")
    plot_w = PARETO_FRAME.plot_width
    plot_h = PARETO_FRAME.plot_height
    users = [p.per_user for p in points if p.per_user > 0] + [slo_per_user]
    devices = [p.per_device for p in points if p.per_device > 0] or [1.0]
    x_ticks = log_ticks(min(users), max(users))
    y_ticks = log_ticks(min(devices), max(devices))
    x_lo, x_hi = math.log10(x_ticks[0]), math.log10(x_ticks[-1])
    y_lo, y_hi = math.log10(y_ticks[0]), math.log10(y_ticks[-1])

    def x(value: float) -> float:
        return (
            PARETO_FRAME.left + (math.log10(max(value, x_ticks[0])) - x_lo) / ((x_hi - x_lo) or 1.0) * plot_w
        )

    def y(value: float) -> float:
        return (
            PARETO_FRAME.top
            + plot_h
            - (math.log10(max(value, y_ticks[0])) - y_lo) / ((y_hi - y_lo) or 1.0) * plot_h
        )

    title = escape(t("Throughput against interactivity (Pareto frontier)"))
    slo_label = escape(t("SLO"))
    x_label = escape(t("tokens/s per user"))
    y_label = escape(t("output tokens/s per device"))
    desc = escape(
        t(
            "Output tokens/s per device against tokens/s per user for the layouts and client counts the search evaluated; only points nothing beats on both axes. The dashed red line is the TPOT SLO ({tpot} ms = {speed} tokens/s per user): points left of it miss it.",
            tpot=speed_number(slo_tpot_ms),
            speed=speed_number(slo_per_user),
        )
    )
    parts = [
        f'<rect x="{PARETO_FRAME.left}" y="{PARETO_FRAME.top}" width="{max(0.0, x(slo_per_user) - PARETO_FRAME.left):.1f}" height="{plot_h}" fill="{SLO_FILL}"/>',
    ]
    for tick in y_ticks:
        parts.append(
            f'<line x1="{PARETO_FRAME.left}" y1="{y(tick):.1f}" x2="{PARETO_FRAME.width - PARETO_FRAME.right}" y2="{y(tick):.1f}" stroke="{GRID}"/>'
            f'<text x="{PARETO_FRAME.left - 8}" y="{y(tick) + 7:.1f}" text-anchor="end" font-size="{FONT}">{tick_text(tick)}</text>'
        )
    for i, tick in enumerate(x_ticks):
        anchor = "end" if i == len(x_ticks) - 1 else "start" if i == 0 else "middle"
        parts.append(
            f'<line x1="{x(tick):.1f}" y1="{PARETO_FRAME.top}" x2="{x(tick):.1f}" y2="{PARETO_FRAME.top + plot_h}" stroke="{GRID}"/>'
            f'<text x="{x(tick):.1f}" y="{PARETO_FRAME.top + plot_h + 26}" text-anchor="{anchor}" font-size="{FONT}">'
            f"{tick_text(tick)}</text>"
        )
    parts.append(
        f'<text x="{PARETO_FRAME.left + plot_w / 2:.1f}" y="{PARETO_FRAME.height - 12}" text-anchor="middle" font-size="{FONT}">'
        f"{x_label}</text>"
        f'<text transform="translate(22 {PARETO_FRAME.top + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle" '
        f'font-size="{FONT}">{y_label}</text>'
    )
    ordered = sorted(points, key=lambda p: p.per_user)
    line = " ".join(f"{x(p.per_user):.1f},{y(p.per_device):.1f}" for p in ordered)
    parts.append(f'<polyline points="{line}" fill="none" stroke="#4a5568" stroke-width="2"/>')
    sx = x(slo_per_user)
    parts.append(
        f'<line id="pareto-slo" x1="{sx:.1f}" y1="{PARETO_FRAME.top}" x2="{sx:.1f}" y2="{PARETO_FRAME.top + plot_h}" '
        f'stroke="{SLO_COLOUR}" stroke-width="3" stroke-dasharray="10 7"/>'
        f'<text x="{sx + 6:.1f}" y="{PARETO_FRAME.top + 22}" font-size="{FONT}" fill="{SLO_COLOUR}">'
        f"{slo_label}</text>"
    )
    for p in ordered:
        fill = colour(p.group) if p.meets_slo else "#ffffff"
        parts.append(
            f'<a class="pareto-point" href="{escape(p.link)}"><circle cx="{x(p.per_user):.1f}" '
            f'cy="{y(p.per_device):.1f}" r="{MARKER_R}" fill="{fill}" stroke="{colour(p.group)}" '
            f'stroke-width="3"><title>{escape(p.label)}</title></circle></a>'
        )
    return chart(PARETO_FRAME, parts, title=title, desc=desc)


def cost_chart(
    series: list[tuple[str, list[tuple[float, float]]]], *, target_requests_per_s: float, load_top: float
) -> Markup:
    """Step lines: each layout's cost per hour (by its label) as the load grows from 0 to ``load_top``
    requests/s (one more replica at each step), and the target load as a dashed line."""
    if not series:
        return Markup("")
    plot_w = COST_FRAME.plot_width
    plot_h = COST_FRAME.plot_height
    x_top = load_top
    y_ticks = axis_ticks(max(cost for _, points in series for _, cost in points), COST_Y_TICKS)
    y_top = y_ticks[-1] or 1.0
    rps_title = escape(t("requests/s"))  # outside the f-string, where the extractor sees it

    def x(load: float) -> float:
        return COST_FRAME.left + load / x_top * plot_w

    def y(cost: float) -> float:
        return COST_FRAME.top + plot_h - cost / y_top * plot_h

    title = escape(t("Cost per hour against load"))
    desc = escape(
        t(
            "Cost per hour of the cheapest layouts meeting the SLO, from 0 to {top} requests/s; the red line is the target load.",
            top=speed_number(x_top),
        )
    )
    parts: list[str] = []
    for tick in y_ticks:
        ty = y(tick)
        parts.append(
            f'<line x1="{COST_FRAME.left}" y1="{ty:.1f}" x2="{COST_FRAME.width - COST_FRAME.right}" y2="{ty:.1f}" '
            f'stroke="{GRID}" stroke-width="1"/>'
            f'<text x="{COST_FRAME.left - 8}" y="{ty + 5:.1f}" text-anchor="end" font-size="16">{money(tick)}</text>'
        )
    for i in range(5):
        load = x_top * i / 4
        parts.append(
            f'<text x="{x(load):.1f}" y="{COST_FRAME.height - COST_FRAME.bottom + 22}" text-anchor="middle" font-size="15">'
            f"{speed_number(load)}</text>"
        )
    parts.append(
        f'<text x="{COST_FRAME.left + plot_w / 2:.1f}" y="{COST_FRAME.height - 8}" text-anchor="middle" font-size="16">'
        f"{rps_title}</text>"
    )
    for index, (series_label, points) in enumerate(series):
        path: list[str] = [f"{x(0):.1f},{y(points[0][1]):.1f}"]
        previous = points[0][1]
        for load, cost in points:
            if cost != previous:
                path.append(f"{x(load):.1f},{y(previous):.1f}")
            path.append(f"{x(load):.1f},{y(cost):.1f}")
            previous = cost
        colour = COLOURS[index % len(COLOURS)]
        label = escape(series_label)
        parts.append(
            f'<polyline class="fleet-series" points="{" ".join(path)}" fill="none" stroke="{colour}" stroke-width="3">'
            f"<title>{label}</title></polyline>"
            f'<text x="{COST_FRAME.left + 10}" y="{COST_FRAME.top + 18 + 20 * index}" font-size="15" fill="{colour}">{label}</text>'
        )
    tx = x(target_requests_per_s)
    parts.append(
        f'<line id="fleet-target" x1="{tx:.1f}" y1="{COST_FRAME.top}" x2="{tx:.1f}" y2="{COST_FRAME.top + plot_h}" '
        f'stroke="{SLO_COLOUR}" stroke-width="2" stroke-dasharray="8 6"/>'
    )
    return chart(COST_FRAME, parts, title=title, desc=desc)
