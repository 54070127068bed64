"""The fleet page's view model: everything the template shows is decided here (no arithmetic in Jinja),
and the cost-against-load chart is server-rendered SVG."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from fastapi import Request
from markupsafe import Markup

from app.core.errors import PlannerError
from app.core.fleet import Candidate, FleetPlan, LoadPoint, cost_at_load
from app.core.perf.bench_args import BenchArgs
from app.core.perf.calibrated import RunsScope
from app.core.result import Range
from app.core.text import N_, Plural, Text
from app.web.fleet.params import FLEET_FIELDS, LENGTH_FIELDS, RATE_FIELD, FleetParams, fleet_query
from app.web.fleet.service import FleetResult, fleet_for, planner_params, point_params
from app.web.fleet.svg import COLOURS, ChartPoint, cost_chart, pareto_chart
from app.web.format import (
    gib,
    money,
    regime_text,
    speed_band,
    speed_number,  # the Speed section's format: the numbers read alike
)
from app.web.i18n import page_lang, t, tr
from app.web.inputs.links import form_values, query_items, to_query, with_typed
from app.web.inputs.options import Choices, choices
from app.web.inputs.problems import Problem, error_of, problems_of, stopping, typed_values
from app.web.measured_runs import BENCH_FIELDS, PageRuns, page_bench_error, page_runs_lenient
from app.web.templating import url_path

MAX_TABLE_ROWS = 15  # the ranked table shows the cheapest; /api/fleet returns every candidate
CHART_LAYOUTS = 4  # cost curves for the cheapest distinct layouts meeting the SLO
CHART_LOAD_FACTOR = 2.0  # the chart's load axis runs to twice the target load
CHART_POINTS = 60
# A layout's manifests (GET /api/deploy) with its replica count; names of formats, not sentences.
DEPLOY_TARGETS = (("kubernetes", "Kubernetes"), ("helm", "Helm"), ("compose", "compose"))
BINDING_LABELS = {
    "kv_pool": Text("KV pool"),
    "max_num_seqs": Text("max_num_seqs"),
    "compute": Text("compute"),
    "slo": Text("SLO"),
}
# Planner fields the fleet form does not show, carried as hidden inputs so the round trip keeps them.
FORM_FIELDS = frozenset(
    {
        "model",
        "device",
        "vllm_version",
        "max_model_len",
        "gpu_memory_utilization",
        "input_tokens",
        "output_tokens",
        "my_runs",
        "bench_serve",  # the load as a `vllm bench serve` workload: its fieldset, as on the planner
        "ignore_eos",
        *BENCH_FIELDS,
    }
    | set(FLEET_FIELDS)
)


@dataclass(frozen=True)
class CandidateRow:
    rank: int
    layout: str
    weights: str
    weights_flag: str
    kv_cache_dtype: str
    max_num_seqs: int
    replicas: int
    devices_per_replica: int
    devices_total: int
    concurrency: int
    requests_per_s: str
    ttft_ms: str
    tpot_ms: str
    ttft_band: str  # low–high
    tpot_band: str
    regime: str  # what binds the speed at the operating point
    meets_slo: bool
    meets_slo_with_margin: bool
    slo_text: str
    extrapolated: bool
    cost_per_hour: str
    cost_per_million: str
    headroom: str
    binding: str
    binding_reason: str
    kv_cache: str
    weights_gib: str
    accuracy_costs: tuple[str, ...]
    command: str
    planner_link: str
    deploy_links: tuple[tuple[str, str], ...]  # (label, /api/deploy URL with the layout's replicas)
    is_best: bool
    within_devices: bool


@dataclass(frozen=True)
class ParetoRow:
    layout: str
    colour: int  # the legend's swatch class (pareto-c<n>, static/fleet.css)
    concurrency: int
    per_user: str
    per_device: str
    ttft_ms: str
    tpot_ms: str
    ttft_band: str
    tpot_band: str
    regime: str
    meets_slo: bool
    planner_link: str


@dataclass(frozen=True)
class ParetoView:
    chart: Markup
    rows: tuple[ParetoRow, ...]
    legend: tuple[tuple[int, str], ...]  # (swatch class number, layout)
    slo_text: str


@dataclass(frozen=True)
class BestView:
    meets_slo: bool
    summary: str
    why_none: str


@dataclass(frozen=True)
class FleetView:
    params: FleetParams
    values: dict[str, str]
    hidden: tuple[tuple[str, str], ...]
    permalink: str
    query: str
    problems: tuple[Problem, ...]
    error: Problem | None
    rows: tuple[CandidateRow, ...]
    more_rows: int
    best: BestView | None
    notes: tuple[str, ...]
    chart: Markup
    chart_table: tuple[tuple[str, tuple[str, ...]], ...]
    chart_loads: tuple[str, ...]
    pareto: ParetoView | None
    model_label: str
    device_name: str
    choices: Choices
    calibrated: str = ""  # which speed figures your pasted runs calibrate ("TPOT calibrated on your 1 run")
    runs_tag: str = ""  # "calibrated on your N runs" beside each figure of a kind they measured
    runs_groups: frozenset[str] = frozenset()  # the kinds (ttft, tpot, throughput) your runs measured
    runs_error: Problem | None = None  # a bad paste in "Your own runs": the figures answer uncalibrated
    runs_notes: tuple[str, ...] = ()  # how the pasted runs were read (a rate they did not state)
    length_placeholders: tuple[str, str] = ("", "")  # what blank input / output boxes model
    workload: str = ""  # the load the layouts were sized for, as searched (and the benchmark it came from)
    rate_placeholder: str = ""  # what a blank requests-per-second box models


class LayoutLike(Protocol):
    """A candidate or a frontier point: both name their parallel layout and formats alike."""

    @property
    def tensor_parallel_size(self) -> int: ...
    @property
    def pipeline_parallel_size(self) -> int: ...
    @property
    def weight_format(self) -> str: ...
    @property
    def kv_cache_dtype(self) -> str: ...


def _layout(c: LayoutLike) -> str:
    if c.pipeline_parallel_size > 1:
        return t("TP {tp} × PP {pp}", tp=c.tensor_parallel_size, pp=c.pipeline_parallel_size)
    return t("TP {tp}", tp=c.tensor_parallel_size)


def _row(
    request: Request, params: FleetParams, c: Candidate, rank: int, best: Candidate | None
) -> CandidateRow:
    query = to_query(planner_params(params, c))
    link = f"{url_path(request, 'planner')}?{query}"
    deploy = url_path(request, "api_deploy")
    return CandidateRow(
        rank=rank,
        layout=_layout(c),
        weights=c.weight_format,
        weights_flag=f"--quantization {c.quantization}" if c.quantization else t("the checkpoint's own"),
        kv_cache_dtype=c.kv_cache_dtype,
        max_num_seqs=c.max_num_seqs,
        replicas=c.replicas,
        devices_per_replica=c.devices_per_replica,
        devices_total=c.devices_total,
        concurrency=c.concurrency_per_replica,
        requests_per_s=speed_number(c.requests_per_s_per_replica),
        ttft_ms=speed_number(c.ttft_ms.expected),
        tpot_ms=speed_number(c.tpot_ms.expected),
        ttft_band=speed_band(c.ttft_ms),
        tpot_band=speed_band(c.tpot_ms),
        regime=regime_text(c.regime),
        meets_slo=c.meets_slo,
        meets_slo_with_margin=c.meets_slo_with_margin,
        slo_text=t("meets, with margin")
        if c.meets_slo_with_margin
        else t("meets (expected)")
        if c.meets_slo
        else t("misses"),
        extrapolated=c.basis != "calibrated",
        cost_per_hour=money(c.cost_per_hour),
        cost_per_million=money(c.cost_per_million_output_tokens),
        headroom=f"{c.headroom * 100:.0f}%",
        binding=tr(BINDING_LABELS[c.binding]),
        binding_reason=tr(c.binding_reason),
        kv_cache=gib(c.kv_cache_bytes),
        weights_gib=gib(c.weights_bytes),
        accuracy_costs=tuple(tr(x) for x in c.accuracy_costs),
        command=c.command,
        planner_link=link,
        deploy_links=tuple(
            (label, f"{deploy}?{query}&replicas={c.replicas}&target={target}")
            for target, label in DEPLOY_TARGETS
        ),
        is_best=c is best,
        within_devices=c.within_devices_available,
    )


def chart_series(
    params: FleetParams, candidates: list[Candidate]
) -> list[tuple[Candidate, list[tuple[float, float]]]]:
    """Cost per hour against load (0 to twice the target) for the cheapest distinct layouts meeting the SLO."""
    seen: set[tuple[int, int, str | None, str]] = set()
    chosen: list[Candidate] = []
    for c in candidates:
        key = (c.tensor_parallel_size, c.pipeline_parallel_size, c.quantization, c.kv_cache_dtype)
        if c.meets_slo and key not in seen:
            seen.add(key)
            chosen.append(c)
        if len(chosen) == CHART_LAYOUTS:
            break
    top = params.requests_per_s * CHART_LOAD_FACTOR
    loads = [top * (i + 1) / CHART_POINTS for i in range(CHART_POINTS)]
    return [
        (
            c,
            [
                (
                    load,
                    cost_at_load(c, requests_per_s=load, price_per_device_hour=params.price_per_device_hour),
                )
                for load in loads
            ],
        )
        for c in chosen
    ]


def _series_label(c: LayoutLike) -> str:
    """ "TP 2 · fp8 weights · fp8 KV", "TP 2 · fp8 weights" (KV auto): each part says what it is. The bare
    "TP 2 · fp8 · fp8" beside "TP 2 · fp8" left the reader to guess which fp8 was the KV cache (the new-user
    walkthrough of 2026-12, fleet; walk11)."""
    extras = [
        t("{format} weights", format=c.weight_format) if c.weight_format else "",
        t("{dtype} KV", dtype=c.kv_cache_dtype) if c.kv_cache_dtype != "auto" else "",
    ]
    return " · ".join([_layout(c), *(e for e in extras if e)])


def pareto_view(request: Request, params: FleetParams, plan: FleetPlan) -> ParetoView | None:
    """The frontier as a chart (each point links to its planner view), its table and its legend."""
    if not plan.pareto:
        return None
    groups: dict[str, int] = {}
    chart_points: list[ChartPoint] = []
    rows: list[ParetoRow] = []
    for p in plan.pareto:
        layout = _series_label(p)
        group = groups.setdefault(layout, len(groups))
        link = f"{url_path(request, 'planner')}?{to_query(point_params(params, p.serve, p.concurrency))}"
        per_user, per_device = speed_number(p.tokens_per_s_per_user), speed_number(p.tokens_per_s_per_device)
        label = t(
            "{layout}, {clients} clients: {per_user} tokens/s per user, {per_device} tokens/s per device",
            layout=layout,
            clients=p.concurrency,
            per_user=per_user,
            per_device=per_device,
        )
        chart_points.append(
            ChartPoint(p.tokens_per_s_per_user, p.tokens_per_s_per_device, group, label, link, p.meets_slo)
        )
        rows.append(
            ParetoRow(
                layout=layout,
                colour=group % len(COLOURS),
                concurrency=p.concurrency,
                per_user=per_user,
                per_device=per_device,
                ttft_ms=speed_number(p.ttft_ms.expected),
                tpot_ms=speed_number(p.tpot_ms.expected),
                ttft_band=speed_band(p.ttft_ms),
                tpot_band=speed_band(p.tpot_ms),
                regime=regime_text(p.regime),
                meets_slo=p.meets_slo,
                planner_link=link,
            )
        )
    slo = plan.pareto_slo_tokens_per_s_per_user
    return ParetoView(
        chart=pareto_chart(chart_points, slo_per_user=slo, slo_tpot_ms=params.slo_tpot_ms),
        rows=tuple(rows),
        legend=tuple((g % len(COLOURS), layout) for layout, g in groups.items()),
        slo_text=t(
            "Both axes are logarithmic. The TPOT SLO of {tpot} ms is {speed} tokens/s per user: filled points meet the SLO (TTFT and TPOT), hollow ones miss it. Each point opens the planner on that layout and client count.",
            tpot=speed_number(params.slo_tpot_ms),
            speed=speed_number(slo),
        ),
    )


def load_values(params: FleetParams) -> dict[str, str]:
    """The form's values; the load's lengths and its rate blank unless the user set them (a blank box is
    the default, the lengths shortened to fit max_model_len, as the Speed section's; the rate a benchmark's
    --request-rate where one is given, else the default): its placeholder says what it models. A rate box
    filled with the default would post it back as typed, and a benchmark ticked next would be sized at 20/s."""
    values = form_values(params)
    for name in (*LENGTH_FIELDS, RATE_FIELD):
        if name not in params.model_fields_set:
            values[name] = ""
    return values


def hidden_inputs(params: FleetParams) -> tuple[tuple[str, str], ...]:
    return tuple((k, v) for k, v in query_items(params) if k not in FORM_FIELDS and k != "v")


def bench_flags(params: FleetParams) -> str:
    """The `vllm bench serve` arguments the user gave, under vLLM's flag names ("" when none)."""
    given = [(name, getattr(params, name)) for name in BENCH_FIELDS if getattr(params, name) is not None]
    flags = [
        f"--{name.replace('_', '-')} {value:g}"
        if isinstance(value, float)
        else f"--{name.replace('_', '-')} {value}"
        for name, value in given
    ]
    return " ".join([*flags, *(["--ignore-eos"] if params.ignore_eos else [])])


def workload_line(searched: FleetParams, bench: BenchArgs | None) -> str:
    """What the layouts were sized for: the rate and the request as searched; with a benchmark, its
    arguments, and that its --max-concurrency is not the fleet's (the search picks clients per replica)."""
    line = t(
        "Sized for {rate:g} requests/s of {input_tokens:,} input + {output_tokens:,} output tokens.",
        rate=searched.requests_per_s,
        input_tokens=searched.input_tokens,
        output_tokens=searched.output_tokens,
    )
    if bench is None:
        return line
    flags = bench_flags(searched)
    line = f"{line} {t('The workload of vllm bench serve {flags}.', flags=flags or '--dataset-name random')}"
    if searched.max_concurrency is not None:
        line = f"{line} {t('Its --max-concurrency is not used: the search picks the clients per replica.')}"
    return line


def _search(params: FleetParams, problems: list[Problem], runs: PageRuns) -> FleetResult:
    """The page's search: the benchmark is the load, so a bad argument stops it as an unusable input does
    (the answer would be for another load)."""
    bench_stop = (error_of(runs.bench_error),) if runs.bench_error is not None else ()
    unusable = (*stopping(problems), *bench_stop)
    return fleet_for(params, cluster=runs.cluster, unusable=unusable, bench=runs.bench)


def _latencies(ttft: Range, tpot: Range) -> dict[str, str]:
    """A sentence's TTFT and TPOT with their bands: "TTFT {ttft} ms ({ttft_band}), TPOT {tpot} ms ({tpot_band})"."""
    return {
        "ttft": speed_number(ttft.expected),
        "tpot": speed_number(tpot.expected),
        "ttft_band": speed_band(ttft),
        "tpot_band": speed_band(tpot),
    }


def _best_summary(b: Candidate, at_load: LoadPoint | None, calibrated: str) -> str:
    """The best layout in a few sentences: "1 × TP 1 = 1 device" in the singular, its weight and KV formats and its
    cost; the latencies at the load asked (each replica's share of it); and, when it meets the SLO, the busiest
    point it was sized at (the most clients a replica takes within the SLO: more load, not this one, would see
    those latencies)."""
    summary = tr(
        Plural(
            b.devices_total,
            N_(
                "{replicas} × {layout} = {devices} device, {formats}, {cost} per hour ({per_million} per million output tokens)."
            ),
            N_(
                "{replicas} × {layout} = {devices} devices, {formats}, {cost} per hour ({per_million} per million output tokens)."
            ),
            replicas=b.replicas,
            layout=_layout(b),
            devices=b.devices_total,
            # the formats the search chose, which the user may not have asked for (fp8 weights of a bf16 model):
            # the summary names them as the table's row does
            formats=t("weights {weights} · KV {kv}", weights=b.weight_format, kv=b.kv_cache_dtype),
            cost=money(b.cost_per_hour),
            per_million=money(b.cost_per_million_output_tokens),
        )
    )
    if at_load is not None:
        load = tr(
            Plural(
                at_load.concurrency,
                N_(
                    "At the load asked, {share} requests/s a replica ({clients} client at a time): TTFT {ttft} ms ({ttft_band}), TPOT {tpot} ms ({tpot_band})."
                ),
                N_(
                    "At the load asked, {share} requests/s a replica ({clients} clients at a time): TTFT {ttft} ms ({ttft_band}), TPOT {tpot} ms ({tpot_band})."
                ),
                share=speed_number(at_load.requests_per_s_per_replica),
                clients=at_load.concurrency,
                **_latencies(at_load.ttft_ms, at_load.tpot_ms),
            )
        )
        summary = f"{summary} {load}"
    if b.meets_slo:
        busiest = tr(
            Plural(
                b.concurrency_per_replica,
                N_(
                    "Sized at its busiest within the SLO: {concurrency} client, {capacity} requests/s a replica, TTFT {ttft} ms ({ttft_band}), TPOT {tpot} ms ({tpot_band})."
                ),
                N_(
                    "Sized at its busiest within the SLO: {concurrency} clients, {capacity} requests/s a replica, TTFT {ttft} ms ({ttft_band}), TPOT {tpot} ms ({tpot_band})."
                ),
                concurrency=b.concurrency_per_replica,
                capacity=speed_number(b.requests_per_s_per_replica),
                **_latencies(b.ttft_ms, b.tpot_ms),
            )
        )
        summary = f"{summary} {busiest}"
    regime = regime_text(b.regime)  # "" for a regime the page has no words for: no clause
    if regime:
        summary = f"{summary} {t('What binds the speed: {regime}.', regime=regime)}"
    if calibrated:
        summary = f"{summary} ({calibrated})"
    return summary


def build_view(request: Request, params: FleetParams, problems: list[Problem]) -> FleetView:
    params = params.model_copy(update={"lang": page_lang()})
    query = with_typed(fleet_query(params), problems)  # a reload shows the same error
    rows: tuple[CandidateRow, ...] = ()
    best_view: BestView | None = None
    notes: tuple[str, ...] = ()
    error: Problem | None = None
    chart = Markup("")
    chart_table: tuple[tuple[str, tuple[str, ...]], ...] = ()
    chart_loads: tuple[str, ...] = ()
    pareto: ParetoView | None = None
    more = 0
    model_label, device_name = params.model, params.device
    calibrated = runs_tag = ""
    groups: frozenset[str] = frozenset()
    lengths = (str(params.input_tokens), str(params.output_tokens))
    # a bad paste in "Your own runs" is shown above the results, which answer uncalibrated
    runs = page_runs_lenient(params)
    workload, rate = "", f"{params.requests_per_s:g}"
    try:
        result = _search(params, problems, runs)
        plan, searched = result.plan, result.params  # searched: the lengths as modelled (links)
        lengths = (str(searched.input_tokens), str(searched.output_tokens))
        workload = workload_line(searched, runs.bench)
        rate = f"{searched.requests_per_s:g}"
        scope = RunsScope.of(result.calibrated_runs, result.calibrated_figures)
        calibrated, runs_tag, groups = tr(scope.caption()), tr(scope.tag()), frozenset(scope.groups)
        model_label, device_name = result.resolved.model_label, result.resolved.device.name
        shown = plan.candidates[:MAX_TABLE_ROWS]
        if plan.best is not None and plan.best not in shown:
            shown = [*shown, plan.best]
        rows = tuple(_row(request, searched, c, i + 1, plan.best) for i, c in enumerate(shown))
        more = len(plan.candidates) - len(shown)
        if plan.best is not None:
            b = plan.best
            summary = _best_summary(b, plan.best_at_load, calibrated)
            best_view = BestView(plan.best_meets_slo, summary, tr(plan.why_none) if plan.why_none else "")
        elif plan.why_none:
            best_view = BestView(False, "", tr(plan.why_none))
        notes = tuple(tr(n) for n in plan.notes)
        pareto = pareto_view(request, searched, plan)
        series = chart_series(params, plan.candidates)
        chart = cost_chart(
            [(_series_label(c), points) for c, points in series],
            target_requests_per_s=params.requests_per_s,
            load_top=params.requests_per_s * CHART_LOAD_FACTOR,
        )
        if series:
            picks = range(0, CHART_POINTS, CHART_POINTS // 6)
            chart_loads = tuple(speed_number(series[0][1][i][0]) for i in picks)
            chart_table = tuple(
                (_series_label(c), tuple(money(points[i][1]) for i in picks)) for c, points in series
            )
    except PlannerError as exc:
        error = error_of(page_bench_error(exc) or exc)  # a benchmark's refusal names the page's box
    return FleetView(
        params=params,
        values=typed_values(load_values(params), problems),  # "thirty" stays
        length_placeholders=lengths,
        hidden=hidden_inputs(params),
        permalink=f"{url_path(request, 'fleet')}?{query}",
        query=query,
        problems=problems_of(problems),
        error=error,
        rows=rows,
        more_rows=more,
        best=best_view,
        notes=notes,
        chart=chart,
        chart_table=chart_table,
        chart_loads=chart_loads,
        pareto=pareto,
        model_label=model_label,
        device_name=device_name,
        choices=choices(params.vllm_version),
        calibrated=calibrated,
        runs_tag=runs_tag,
        runs_groups=groups,
        runs_error=error_of(runs.runs_error) if runs.runs_error else None,
        runs_notes=tuple(tr(n) for n in runs.notes),
        workload=workload,
        rate_placeholder=rate,
    )
