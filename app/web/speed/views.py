"""The Speed section's view model: the three numbers with bands, the KV-cliff line and the chart (server-rendered SVG)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from markupsafe import Markup, escape

from app.core.perf.bench import BAND_OF_KEY, RESULT_KEYS, BenchResult
from app.core.perf.calibrated import RunsScope
from app.core.perf.predict import CurvePoint, Performance
from app.core.result import Range
from app.core.text import N_, Plural, Text
from app.web.format import Figure, axis_ticks, regime_text, speed_band
from app.web.format import speed_number as _number
from app.web.i18n import t, tr
from app.web.svg import Frame, chart

CHART_WIDTH = 1000  # viewBox units; the SVG scales to its container
CHART_HEIGHT = 400
CHART_FRAME = Frame("speed-chart", CHART_WIDTH, CHART_HEIGHT, "speed-chart")
MARGIN_LEFT = 120  # room for "10,000" at the phone's larger text (static/app.css)
MARGIN_RIGHT = 110
MARGIN_TOP = 118  # two legend rows, then each axis's unit above its ticks
MARGIN_BOTTOM = 64
LEGEND_ROWS = (30, 66)  # baselines of the legend's two rows
THROUGHPUT_COLOUR = "#2b6cb0"
TPOT_COLOUR = "#c05621"
CLIFF_COLOUR = "#c53030"
GRID_COLOUR = "#d7d7de"
Y_TICKS = 4
LIMIT_LABELS = {
    "clients": Text("the number of clients"),
    "max_num_seqs": Text("--max-num-seqs"),
    "kv_pool": Text("the KV pool"),
}


@dataclass(frozen=True)
class CurveRow:
    """One concurrency of the chart's table: each figure as (expected, low–high)."""

    concurrency: str
    ttft: tuple[str, str]
    tpot: tuple[str, str]
    throughput: tuple[str, str]
    kv_limited: bool


def _cell(r: Range) -> tuple[str, str]:
    return _number(r.expected), speed_band(r)


@dataclass(frozen=True)
class BenchView:
    """The simulated `vllm bench serve` run: its result keys (vLLM's names) as expected (low–high)."""

    rows: tuple[tuple[str, str, str], ...]  # key, expected, low–high
    regime: str
    summary: str
    calibrated_keys: frozenset[str] = frozenset()  # the keys of a kind your runs measured (scaled by them)


@dataclass(frozen=True)
class SpeedView:
    numbers: tuple[Figure, ...]
    badge: str  # "calibrated" / "extrapolated", translated
    calibrated: bool
    secondary: str  # requests/s and per-user tokens/s
    kv_line: str  # where the KV cliff is, or that the pool never limits
    kv_limited: bool
    notes: tuple[str, ...]
    chart: Markup
    table: tuple[CurveRow, ...]  # the chart as a table: each figure with its band
    bench: BenchView | None = None
    regime: str = ""  # what binds the steady state (format.regime_text, explained)
    runs_tag: str = ""  # "calibrated on your N runs" beside every figure your runs measured
    runs_groups: frozenset[str] = frozenset()  # the figures (ttft, tpot, throughput) your runs measured
    runs_caption: str = ""  # which figures your runs calibrate, for a line covering all (the benchmark's)


PHONE_TICKS = 6  # more x ticks than this: a phone shows every other label


def _tick(value: float) -> str:
    return "0" if value == 0 else _number(value)


def _legend_and_axis_titles() -> list[str]:
    """Which line is which, on which axis, and each axis's unit above its ticks."""
    rows = (
        (THROUGHPUT_COLOUR, t("Output tokens/s of the replica (left axis)")),
        (TPOT_COLOUR, t("Time per output token, ms (right axis)")),
    )
    out = [
        f'<line x1="{MARGIN_LEFT}" y1="{row - 8}" x2="{MARGIN_LEFT + 40}" y2="{row - 8}" stroke="{colour}" '
        f'stroke-width="5"/><text class="legend" x="{MARGIN_LEFT + 52}" y="{row}" font-size="17">'
        f"{escape(label)}</text>"
        for row, (colour, label) in zip(LEGEND_ROWS, rows, strict=True)
    ]
    unit_y = MARGIN_TOP - 14
    left_unit, right_unit = escape(t("tokens/s")), escape(t("ms"))  # outside the f-string: extracted
    out.append(
        f'<text class="axis-unit" x="4" y="{unit_y}" font-size="16" '
        f'fill="{THROUGHPUT_COLOUR}">{left_unit}</text>'
        f'<text class="axis-unit" x="{CHART_WIDTH - 4}" y="{unit_y}" text-anchor="end" font-size="16" '
        f'fill="{TPOT_COLOUR}">{right_unit}</text>'
    )
    return out


def speed_chart(curve: list[CurvePoint], *, concurrency: int, cliff: int | None) -> Markup:
    """Output tokens/s (left axis) and TPOT (right axis) against concurrency on a log2 axis."""
    if not curve:
        return Markup("")
    plot_w = CHART_WIDTH - MARGIN_LEFT - MARGIN_RIGHT
    plot_h = CHART_HEIGHT - MARGIN_TOP - MARGIN_BOTTOM
    lo, hi = math.log2(curve[0].concurrency), math.log2(curve[-1].concurrency)
    span = max(hi - lo, 1e-9)
    thr_ticks = axis_ticks(max(p.output_tokens_per_s.expected for p in curve), Y_TICKS)
    tpot_ticks = axis_ticks(max(p.tpot_ms.expected for p in curve), Y_TICKS)
    thr_top, tpot_top = thr_ticks[-1] or 1.0, tpot_ticks[-1] or 1.0

    def x(c: float) -> float:
        return MARGIN_LEFT + (math.log2(c) - lo) / span * plot_w

    def y(value: float, top: float) -> float:
        return MARGIN_TOP + plot_h - value / top * plot_h

    title = escape(tr(t("Throughput and TPOT against concurrency")))
    desc = escape(
        tr(
            t(
                "Output tokens per second (blue, left axis) and time per output token in ms (orange, right axis) "
                "for 1 to {top} concurrent clients; the red line marks where the KV pool stops holding every request.",
                top=curve[-1].concurrency,
            )
        )
    )
    parts = list(_legend_and_axis_titles())
    for tick in thr_ticks:
        ty = y(tick, thr_top)
        parts.append(
            f'<line x1="{MARGIN_LEFT}" y1="{ty:.1f}" x2="{CHART_WIDTH - MARGIN_RIGHT}" y2="{ty:.1f}" '
            f'stroke="{GRID_COLOUR}" stroke-width="1"/>'
            f'<text x="{MARGIN_LEFT - 8}" y="{ty + 5:.1f}" text-anchor="end" font-size="16" '
            f'fill="{THROUGHPUT_COLOUR}">{_tick(tick)}</text>'
        )
    for tick in tpot_ticks:
        ty = y(tick, tpot_top)
        parts.append(
            f'<text x="{CHART_WIDTH - MARGIN_RIGHT + 8}" y="{ty + 5:.1f}" font-size="16" '
            f'fill="{TPOT_COLOUR}">{_tick(tick)}</text>'
        )
    powers = [p.concurrency for p in curve if not p.concurrency & (p.concurrency - 1)]
    for index, clients in enumerate(powers):
        # the axis labels the powers of two (the cliff's own point is labelled on its line); a phone
        # shows every other one, so the larger text does not run together
        minor = ' class="tick-minor"' if index % 2 and len(powers) > PHONE_TICKS else ""
        parts.append(
            f'<text{minor} x="{x(clients):.1f}" y="{CHART_HEIGHT - MARGIN_BOTTOM + 26}" text-anchor="middle" '
            f'font-size="15">{clients}</text>'
        )
    x_title = escape(t("concurrent clients"))  # outside the f-string, where the extractor sees it
    parts.append(
        f'<text x="{MARGIN_LEFT + plot_w / 2:.1f}" y="{CHART_HEIGHT - 8}" text-anchor="middle" font-size="16">'
        f"{x_title}</text>"
    )
    for key, colour, top, attr in (
        ("throughput", THROUGHPUT_COLOUR, thr_top, "output_tokens_per_s"),
        ("tpot", TPOT_COLOUR, tpot_top, "tpot_ms"),
    ):
        points = " ".join(f"{x(p.concurrency):.1f},{y(getattr(p, attr).expected, top):.1f}" for p in curve)
        parts.append(
            f'<polyline class="speed-{key}" points="{points}" fill="none" stroke="{colour}" stroke-width="3"/>'
        )
    if cliff is not None and curve[0].concurrency <= cliff <= curve[-1].concurrency:
        cx = x(cliff)
        label = escape(tr(t("KV cliff at {cliff}", cliff=cliff)))
        parts.append(
            f'<line id="kv-cliff" x1="{cx:.1f}" y1="{MARGIN_TOP}" x2="{cx:.1f}" y2="{MARGIN_TOP + plot_h}" '
            f'stroke="{CLIFF_COLOUR}" stroke-width="2" stroke-dasharray="8 6"/>'
            f'<text x="{cx + (-6 if cx > CHART_WIDTH / 2 else 6):.1f}" y="{MARGIN_TOP + 16}" '
            f'text-anchor="{"end" if cx > CHART_WIDTH / 2 else "start"}" font-size="16" '
            f'fill="{CLIFF_COLOUR}">{label}</text>'
        )
    here = min(curve, key=lambda p: abs(p.concurrency - concurrency))
    parts.append(
        f'<circle cx="{x(here.concurrency):.1f}" cy="{y(here.output_tokens_per_s.expected, thr_top):.1f}" r="7" '
        f'fill="{THROUGHPUT_COLOUR}"/><circle cx="{x(here.concurrency):.1f}" '
        f'cy="{y(here.tpot_ms.expected, tpot_top):.1f}" r="7" fill="{TPOT_COLOUR}"/>'
    )
    return chart(CHART_FRAME, parts, title=title, desc=desc)


def bench_view(result: BenchResult, scope: RunsScope | None = None) -> BenchView:
    """``scope``: what your runs calibrate; only the keys of the kinds they measured are marked."""
    groups = scope.groups if scope is not None else ()
    rows = tuple(
        (key, _number((band := getattr(result, key)).expected), speed_band(band)) for key in RESULT_KEYS
    )
    args = result.args
    rate = "inf" if math.isinf(args.request_rate) else _number(args.request_rate)
    summary = tr(
        t(
            "{prompts} prompts, request rate {rate}, max concurrency {concurrency}; simulated duration {duration} s, {preemptions} preemptions.",
            prompts=args.num_prompts,
            rate=rate,
            concurrency=args.max_concurrency if args.max_concurrency is not None else tr(t("unlimited")),
            duration=_number(result.duration_s),
            preemptions=result.preemptions,
        )
    )
    if args.open_loop():  # the arrivals, not a cap, decide the load: say how many that keeps in flight
        summary += " " + tr(
            t(
                "{clients} requests in flight on average (Little's law: request_throughput x mean_e2el_ms).",
                clients=_number(result.clients_in_flight),
            )
        )
    return BenchView(
        rows=rows,
        regime=regime_text(result.regime, explained=True),
        summary=summary,
        calibrated_keys=frozenset(k for k in RESULT_KEYS if BAND_OF_KEY[k] in groups),
    )


def _running_line(running: int, figures: dict[str, object], *, data_parallel_size: int) -> str:
    """The Speed section's second line: requests/s, per-user speed and the requests that run at once (per
    engine: the replica at DP 1, else per data-parallel rank), "1 request runs" in the singular."""
    return tr(
        Plural(
            running,
            N_(
                "{requests} requests/s ({requests_band}); {per_user} tokens/s per user while decoding ({per_user_band}); {running} request runs at once in the replica (limited by {limit})."
            ),
            N_(
                "{requests} requests/s ({requests_band}); {per_user} tokens/s per user while decoding ({per_user_band}); {running} requests run at once in the replica (limited by {limit})."
            ),
            **figures,
        )
        if data_parallel_size == 1
        else Plural(
            running,
            N_(
                "{requests} requests/s ({requests_band}); {per_user} tokens/s per user while decoding ({per_user_band}); {running} request runs at once per data-parallel rank (limited by {limit})."
            ),
            N_(
                "{requests} requests/s ({requests_band}); {per_user} tokens/s per user while decoding ({per_user_band}); {running} requests run at once per data-parallel rank (limited by {limit})."
            ),
            **figures,
        )
    )


def speed_view(
    perf: Performance, measured: frozenset[str] = frozenset(), *, data_parallel_size: int = 1
) -> SpeedView:
    """``measured``: the kinds of figure (ttft, tpot, throughput) your pasted runs measured; only those
    say "calibrated on your N runs" (the others keep the model's band)."""
    calibrated = perf.basis == "calibrated"
    scope = RunsScope.of(perf.calibrated_runs, sorted(measured))
    numbers = (
        Figure(
            "ttft",
            tr(t("Time to first token (ms)")),
            _number(perf.ttft_ms.expected),
            band=speed_band(perf.ttft_ms),
        ),
        Figure(
            "tpot",
            tr(t("Time per output token (ms)")),
            _number(perf.tpot_ms.expected),
            band=speed_band(perf.tpot_ms),
        ),
        Figure(
            "throughput",
            tr(t("Output tokens/s (this replica)")),
            _number(perf.output_tokens_per_s.expected),
            band=speed_band(perf.output_tokens_per_s),
        ),
    )
    # "per rank" read as per GPU beside a TP 8 replica (the new-user walkthrough of 2026-12, 2a): the count is
    # per engine, i.e. per data-parallel rank (Performance.running_requests), which is the replica at DP 1
    figures: dict[str, object] = {
        "requests": _number(perf.requests_per_s.expected),
        "requests_band": speed_band(perf.requests_per_s),
        "per_user": _number(perf.per_user_tokens_per_s.expected),
        "per_user_band": speed_band(perf.per_user_tokens_per_s),
        "running": perf.running_requests,
        "limit": tr(LIMIT_LABELS.get(perf.limit, perf.limit)),
    }
    secondary = _running_line(perf.running_requests, figures, data_parallel_size=data_parallel_size)
    if perf.kv_limited_from_concurrency is None:
        kv_line = tr(t("The KV pool holds every request up to max_num_seqs: no KV cliff for this workload."))
    elif perf.kv_limited:
        kv_line = tr(
            t(
                "KV-limited: from {cliff} concurrent clients the pool cannot hold every request; latency jumps.",
                cliff=perf.kv_limited_from_concurrency,
            )
        )
    else:
        kv_line = tr(
            t(
                "The KV cliff is at {cliff} concurrent clients: beyond it vLLM preempts and requests queue.",
                cliff=perf.kv_limited_from_concurrency,
            )
        )
    table = tuple(
        CurveRow(
            str(p.concurrency),
            _cell(p.ttft_ms),
            _cell(p.tpot_ms),
            _cell(p.output_tokens_per_s),
            p.kv_limited,
        )
        for p in perf.curve
    )
    return SpeedView(
        numbers=numbers,
        badge=tr(t("calibrated")) if calibrated else tr(t("extrapolated")),
        calibrated=calibrated,
        secondary=secondary,
        kv_line=kv_line,
        kv_limited=perf.kv_limited,
        notes=tuple(tr(n) for n in perf.notes),
        chart=speed_chart(perf.curve, concurrency=perf.concurrency, cliff=perf.kv_limited_from_concurrency),
        table=table,
        bench=bench_view(perf.bench, scope) if perf.bench is not None else None,
        regime=regime_text(perf.regime, explained=True),
        runs_tag=tr(scope.tag()),
        runs_groups=frozenset(scope.groups),
        runs_caption=tr(scope.caption()),
    )
