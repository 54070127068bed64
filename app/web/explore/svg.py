"""Server-rendered SVG for the explore page: simulated time series (KV usage; running vs waiting).

Geometry only, like ``app.web.planner.svg``: values arrive already decided by the view model, colours come
from CSS classes. Each chart has role="img", a <title> and a <desc> with ids unique on the page
(two charts share the page), and the page puts a table next to it as the text alternative.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from app.core.text import Text
from app.web.svg import Frame, chart, coordinate, escaped

CHART_WIDTH = 1000  # viewBox units; the SVG scales to its container
CHART_HEIGHT = 300
MARGIN_LEFT = 84  # room for '100%' at the phone-sized label font
MARGIN_RIGHT = 24
MARGIN_TOP = 34  # room for the legend above the plot
MARGIN_BOTTOM = 56
STEP_AXIS_LABEL = Text("scheduler step (one forward pass)")  # the x axis of every step chart
TARGET_X_TICKS = 5  # about this many step ticks along the x axis
LEGEND_SWATCH = 22  # length of the line drawn before each legend label
LEGEND_GAP = 190  # horizontal room per legend entry


@dataclass(frozen=True)
class Line:
    """One series: ``key`` is the CSS class suffix (``series-<key>``)."""

    key: str
    label: str
    values: Sequence[float]
    fill: bool = False  # shade the area under the line


@dataclass(frozen=True)
class StepChart:
    """One of the simulation's charts over scheduler steps: its frame (its id, unique on the page, names
    its title and desc), its title and its y axis."""

    frame: Frame
    title: str
    y_label: str


def _step_frame(chart_id: str) -> Frame:
    return Frame(
        "step-chart",
        CHART_WIDTH,
        CHART_HEIGHT,
        chart_id,
        left=MARGIN_LEFT,
        right=MARGIN_RIGHT,
        top=MARGIN_TOP,
        bottom=MARGIN_BOTTOM,
    )


KV_USAGE_CHART = StepChart(
    _step_frame("chart-kv"), Text("KV cache usage over simulated time"), Text("KV usage")
)
RUNNING_CHART = StepChart(
    _step_frame("chart-rw"), Text("Running and waiting requests over simulated time"), Text("requests")
)


@dataclass(frozen=True)
class Limit:
    """A horizontal reference line (a capacity) with its label."""

    value: float
    label: str


def nice_ticks(high: float, target: int = TARGET_X_TICKS) -> list[float]:
    """0 and multiples of 1, 2 or 5 x 10^k up to ``high``, about ``target`` of them."""
    if high <= 0:
        return [0.0]
    raw = high / target
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    count = int(high // step)
    return [i * step for i in range(count + 1)]


def _tick_label(value: float) -> str:
    if value >= 10_000 and value % 1000 == 0:
        return f"{value / 1000:g}k"
    return f"{value:g}"


def step_chart(
    spec: StepChart,
    steps: Sequence[int],
    lines: Sequence[Line],
    *,
    y_max: float,
    y_ticks: Sequence[tuple[float, str]],
    desc: str,
    limit: Limit | None = None,
) -> Markup:
    """Lines over simulated scheduler steps; y from 0 to ``y_max`` (values above are clipped)."""
    frame = spec.frame
    left, right = frame.left, frame.width - frame.right
    top, bottom = frame.top, frame.height - frame.bottom
    x_hi = max(max(steps, default=0), 1)
    y_hi = y_max if y_max > 0 else 1.0

    def px(step: float) -> float:
        return left + step / x_hi * (right - left)

    def py(value: float) -> float:
        return bottom - min(max(value, 0.0), y_hi) / y_hi * (bottom - top)

    parts = [
        f'<rect class="plot-bg" x="{left}" y="{top}" width="{right - left}" height="{bottom - top}"/>',
    ]
    for value, label in y_ticks:
        y = py(value)
        parts.append(
            f'<line class="grid" x1="{left}" x2="{right}" y1="{coordinate(y)}" y2="{coordinate(y)}"/>'
            f'<text class="axis-label" x="{left - 8}" y="{coordinate(y + 5)}" text-anchor="end">{escaped(label)}</text>'
        )
    for tick in nice_ticks(x_hi):
        x = px(tick)
        parts.append(
            f'<line class="grid" x1="{coordinate(x)}" x2="{coordinate(x)}" y1="{top}" y2="{bottom}"/>'
            f'<text class="axis-label" x="{coordinate(x)}" y="{bottom + 22}" text-anchor="middle">'
            f"{_tick_label(tick)}</text>"
        )
    parts.append(
        f'<text class="axis-title" x="{(left + right) / 2}" y="{CHART_HEIGHT - 8}" text-anchor="middle">'
        f"{escaped(STEP_AXIS_LABEL)}</text>"
        f'<text class="axis-title" x="16" y="{(top + bottom) / 2}" text-anchor="middle" '
        f'transform="rotate(-90 16 {(top + bottom) / 2})">{escaped(spec.y_label)}</text>'
    )
    if limit is not None and 0 <= limit.value <= y_hi:
        y = py(limit.value)
        parts.append(
            f'<line class="limit-line" x1="{left}" x2="{right}" y1="{coordinate(y)}" y2="{coordinate(y)}"/>'
            f'<text class="limit-label" x="{right - 6}" y="{coordinate(y - 6)}" text-anchor="end">'
            f"{escaped(limit.label)}</text>"
        )
    for line in lines:
        key = escaped(line.key)
        coords = [f"{coordinate(px(s))},{coordinate(py(v))}" for s, v in zip(steps, line.values, strict=True)]
        if not coords:
            continue
        if line.fill:
            area = [f"{coordinate(px(steps[0]))},{bottom}", *coords, f"{coordinate(px(steps[-1]))},{bottom}"]
            parts.append(f'<polygon class="area-{key}" points="{" ".join(area)}"/>')
        parts.append(f'<polyline class="series series-{key}" points="{" ".join(coords)}"/>')
    for i, line in enumerate(lines):
        x = left + i * LEGEND_GAP
        key = escaped(line.key)
        parts.append(
            f'<line class="series series-{key}" x1="{x}" x2="{x + LEGEND_SWATCH}" y1="14" y2="14"/>'
            f'<text class="legend-label" x="{x + LEGEND_SWATCH + 6}" y="20">{escaped(line.label)}</text>'
        )
    return chart(frame, parts, title=spec.title, desc=desc, element_id=frame.label_id)
