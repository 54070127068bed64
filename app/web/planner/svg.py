"""Server-rendered SVG: the partition bar of one device and the capacity chart.

Geometry only: the numbers arrive from the view model already decided; colours come from CSS
classes so the page's stylesheet (and a dark theme later) owns them. Every chart has role="img",
a <title> and a <desc>; the page puts a table next to each as the text alternative.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from app.web.format import gib, human_tokens
from app.web.i18n import tr
from app.web.svg import Frame, chart, coordinate, escaped

BAR_WIDTH = 1000  # viewBox units; the SVG scales to its container
BAR_HEIGHT = 182  # room above for the budget label and below for the demand label at phone size
BAR_FRAME = Frame("partition-bar", BAR_WIDTH, BAR_HEIGHT, "bar", preserve_aspect_ratio="xMinYMin meet")
BAR_Y = 52
BAR_H = 56
BAR_DEMAND_H = 12  # the S x N demand band along the bottom of the KV segment
MIN_LABEL_WIDTH = 110  # a segment narrower than this gets no inside label (the table has it)

CHART_WIDTH = 1000
CHART_HEIGHT = 400
CHART_FRAME = Frame("capacity-chart", CHART_WIDTH, CHART_HEIGHT, "chart")
CHART_MARGIN_LEFT = 130  # the rotated y title, then tick labels at the phone's larger text (app.css)
CHART_MARGIN_RIGHT = 24
Y_TITLE_X = 20  # the rotated y-axis title's centre line, left of the tick labels
PHONE_TICKS = 6  # more x ticks than this: a phone shows every other label
LABEL_CHAR_UNITS = 16  # viewBox units per character of a 30-unit label (the phone's size), for fitting
CHART_MARGIN_TOP = 20
CHART_MARGIN_BOTTOM = 80
CHART_Y_FLOOR = 0.1  # concurrency below this is drawn on the bottom edge (nothing fits)


@dataclass(frozen=True)
class BarSegment:
    key: str  # css class suffix: weights, activation, non-torch, graphs, kv, unused
    label: str
    num_bytes: int


def partition_bar(
    *,
    segments: Sequence[BarSegment],
    device_total_bytes: int,
    budget_bytes: int,
    overrun_bytes: int,
    title: str,
    desc: str,
    budget_label: str,
    overrun_label: str,
    kv_demand_bytes: int = 0,
    kv_demand_label: str = "",
) -> Markup:
    """A stacked bar of one device; ``overrun_bytes`` > 0 draws the part over budget in red.

    ``kv_demand_bytes`` (S x N x per-token KV) is drawn as a band along the bottom of the KV
    segment, so moving max_model_len or the target concurrency visibly fills or overflows the pool.
    """
    used = sum(max(0, s.num_bytes) for s in segments)
    scale_bytes = max(device_total_bytes, used, budget_bytes + overrun_bytes, 1)

    def x_of(num_bytes: float) -> float:
        return num_bytes / scale_bytes * BAR_WIDTH

    parts: list[str] = [
        '<defs><pattern id="hatch" width="10" height="10" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="10" height="10" class="hatch-bg"/>'
        '<line x1="0" y1="0" x2="0" y2="10" class="hatch-line"/></pattern></defs>',
    ]
    cursor = 0
    kv_start = kv_size = 0
    for seg in segments:
        if seg.key == "kv":
            kv_start, kv_size = cursor, max(0, seg.num_bytes)
        if seg.num_bytes <= 0:
            continue
        x0, x1 = x_of(cursor), x_of(cursor + seg.num_bytes)
        parts.append(
            f'<rect class="seg seg-{escaped(seg.key)}" x="{coordinate(x0)}" y="{BAR_Y}" '
            f'width="{coordinate(max(x1 - x0, 0.5))}" height="{BAR_H}"><title>{escaped(seg.label)}: '
            f"{gib(seg.num_bytes)}</title></rect>"
        )
        if x1 - x0 >= MIN_LABEL_WIDTH:
            parts.append(
                f'<text class="seg-label" x="{coordinate((x0 + x1) / 2)}" y="{BAR_Y + BAR_H / 2 - 4}" '
                f'text-anchor="middle">{escaped(seg.label)}</text>'
                f'<text class="seg-value" x="{coordinate((x0 + x1) / 2)}" y="{BAR_Y + BAR_H / 2 + 16}" '
                f'text-anchor="middle">{gib(seg.num_bytes, 1)}</text>'
            )
        cursor += seg.num_bytes
    if kv_demand_bytes > 0 and kv_size > 0:
        over = kv_demand_bytes > kv_size
        x0 = x_of(kv_start)
        x1 = min(x_of(kv_start + kv_demand_bytes), BAR_WIDTH)
        band_y = BAR_Y + BAR_H - BAR_DEMAND_H
        parts.append(
            f'<rect class="kv-demand{" kv-demand-over" if over else ""}" x="{coordinate(x0)}" y="{band_y}" '
            f'width="{coordinate(max(x1 - x0, 1))}" height="{BAR_DEMAND_H}">'
            f"<title>{escaped(kv_demand_label)}</title></rect>" + _demand_label(kv_demand_label, x0, over)
        )
    if overrun_bytes > 0:
        x0, x1 = x_of(budget_bytes), x_of(budget_bytes + overrun_bytes)
        parts.append(
            f'<rect class="seg seg-overrun" x="{coordinate(x0)}" y="{BAR_Y - 6}" width="{coordinate(max(x1 - x0, 2))}" '
            f'height="{BAR_H + 12}" fill="url(#hatch)"><title>{escaped(overrun_label)}</title></rect>'
            f'<text class="overrun-label" x="{coordinate(min(x1, BAR_WIDTH - 4))}" y="{BAR_Y + BAR_H + 60}" '
            f'text-anchor="end">{escaped(overrun_label)}</text>'
        )
    bx = x_of(budget_bytes)
    anchor = "end" if bx > BAR_WIDTH / 2 else "start"
    parts.append(
        f'<line class="budget-line" x1="{coordinate(bx)}" x2="{coordinate(bx)}" '
        f'y1="{BAR_Y - 14}" y2="{BAR_Y + BAR_H + 8}"/>'
        f'<text class="budget-label" x="{coordinate(bx)}" y="{BAR_Y - 20}" text-anchor="{anchor}">'
        f"{escaped(budget_label)}</text>"
    )
    tx = x_of(device_total_bytes)
    parts.append(
        f'<line class="total-line" x1="{coordinate(tx)}" x2="{coordinate(tx)}" y1="{BAR_Y}" y2="{BAR_Y + BAR_H + 8}"/>'
        f'<text class="axis-label" x="0" y="{BAR_Y + BAR_H + 24}">0</text>'
        f'<text class="axis-label" x="{coordinate(tx)}" y="{BAR_Y + BAR_H + 24}" text-anchor="end">'
        f"{gib(device_total_bytes, 1)}</text>"
    )
    return chart(BAR_FRAME, parts, title=title, desc=desc)


def _demand_label(label: str, x0: float, over: bool) -> str:
    """Under the KV segment from its left edge, or ending at the bar's right edge when it would run past it
    ("S × N need 96.0 GiB > pool" started at x 775 of 1000 and was cut to "> po")."""
    text = tr(label)
    fits = x0 + 4 + len(text) * LABEL_CHAR_UNITS <= BAR_WIDTH - 4
    x, anchor = (x0 + 4, "start") if fits else (BAR_WIDTH - 4, "end")
    return (
        f'<text class="demand-label{" over" if over else ""}" x="{coordinate(x)}" y="{BAR_Y + BAR_H + 60}" '
        f'text-anchor="{anchor}">{escape(text)}</text>'
    )


def _log_ticks(low: float, high: float, base: int) -> list[float]:
    first = math.floor(math.log(low, base))
    last = math.ceil(math.log(high, base))
    return [float(base**k) for k in range(first, last + 1) if low <= base**k <= high]


def _conc_label(value: float) -> str:
    return f"{value:g}" if value < 1 else f"{value:,.0f}"


def capacity_chart(
    *,
    curve: Sequence[tuple[int, float]],
    current_len: int,
    current_concurrency: float,
    target_concurrency: int,
    title: str,
    desc: str,
    x_label: str,
    y_label: str,
    target_label: str,
) -> Markup:
    """Max concurrency (log y) against max_model_len (log x); the current point and target line."""
    lens = [s for s, _ in curve] + [current_len]
    concs = [c for _, c in curve if c > 0] + [float(target_concurrency)]
    x_lo, x_hi = min(lens), max(lens)
    x_hi = x_hi if x_hi > x_lo else x_lo * 2
    y_lo = max(CHART_Y_FLOOR, min(concs) / 2)
    y_hi = max(concs) * 2
    left, right = CHART_MARGIN_LEFT, CHART_WIDTH - CHART_MARGIN_RIGHT
    top, bottom = CHART_MARGIN_TOP, CHART_HEIGHT - CHART_MARGIN_BOTTOM

    log_x_lo, log_y_lo = math.log2(x_lo), math.log10(y_lo)
    x_scale = (right - left) / (math.log2(x_hi) - log_x_lo)
    y_scale = (bottom - top) / (math.log10(y_hi) - log_y_lo)

    def px(tokens: float) -> float:
        return left + (math.log2(tokens) - log_x_lo) * x_scale

    def py(conc: float) -> float:
        return bottom - (math.log10(min(max(conc, y_lo), y_hi)) - log_y_lo) * y_scale

    parts = [
        f'<rect class="plot-bg" x="{left}" y="{top}" width="{right - left}" height="{bottom - top}"/>',
    ]
    x_ticks = _log_ticks(x_lo, x_hi, 2)
    for index, tick in enumerate(x_ticks):
        x = px(tick)
        # the last label ends at the right edge instead of running past it ("128K" was cut); a phone shows
        # every other label, so its larger text does not run together
        anchor = "end" if x > right - 30 else "middle"
        minor = " tick-minor" if index % 2 and len(x_ticks) > PHONE_TICKS else ""
        parts.append(
            f'<line class="grid" x1="{coordinate(x)}" x2="{coordinate(x)}" y1="{top}" y2="{bottom}"/>'
            f'<text class="axis-label{minor}" x="{coordinate(x)}" y="{bottom + 26}" text-anchor="{anchor}">'
            f"{human_tokens(int(tick))}</text>"
        )
    for tick in _log_ticks(y_lo, y_hi, 10):
        y = py(tick)
        parts.append(
            f'<line class="grid" x1="{left}" x2="{right}" y1="{coordinate(y)}" y2="{coordinate(y)}"/>'
            f'<text class="axis-label" x="{left - 8}" y="{coordinate(y + 5)}" text-anchor="end">'
            f"{_conc_label(tick)}</text>"
        )
    parts.append(
        f'<text class="axis-title" x="{(left + right) / 2}" y="{CHART_HEIGHT - 8}" text-anchor="middle">'
        f"{escaped(x_label)}</text>"
        f'<text class="axis-title" x="{Y_TITLE_X}" y="{(top + bottom) / 2}" text-anchor="middle" '
        f'dominant-baseline="middle" transform="rotate(-90 {Y_TITLE_X} {(top + bottom) / 2})">'
        f"{escaped(y_label)}</text>"
    )
    ty = py(target_concurrency)
    parts.append(
        f'<line class="target-line" x1="{left}" x2="{right}" y1="{coordinate(ty)}" y2="{coordinate(ty)}"/>'
        f'<text class="target-label" x="{right - 6}" y="{coordinate(ty - 6)}" text-anchor="end">'
        f"{escaped(target_label)}</text>"
    )
    points = " ".join(f"{coordinate(px(s))},{coordinate(py(c))}" for s, c in curve)
    parts.append(f'<polyline class="curve" points="{points}"/>')
    cx, cy = px(current_len), py(current_concurrency)
    parts.append(
        f'<circle class="current-point" cx="{coordinate(cx)}" cy="{coordinate(cy)}" r="8">'
        f"<title>{human_tokens(current_len)}: {current_concurrency:.2f}x</title></circle>"
    )
    return chart(CHART_FRAME, parts, title=title, desc=desc)
