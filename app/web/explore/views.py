"""Explore page view models: every number formatted in Python, so the template holds no arithmetic."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from fastapi import Request
from markupsafe import Markup

from app.core.blocks import (
    PrefixHit,
    blocks_for_tokens,
    expected_tail_waste_fraction,
    prefix_cache_hit,
    tail_waste_tokens,
)
from app.core.errors import PlannerError
from app.core.result import Estimate
from app.core.specs import GIB, MIB
from app.core.text import N_, Text
from app.core.workload import (
    WORKLOAD_PRESETS,
    EngineParams,
    WorkloadPreset,
    WorkloadResult,
    WorkloadSpec,
    simulate,
)
from app.web.explore import svg as explore_svg
from app.web.explore.params import (
    CUSTOM,
    DEFAULT_CUSTOM_WL,
    EXTRA_KEY_FIELDS,
    MAX_PAGE_REQUESTS,
    SEED_EXAMPLE_BLOCK_SIZE,
    SEED_EXAMPLE_SHARED,
    SEED_MISPRINT_NOTE,
    SERIES_TABLE_ROWS,
    WL_HELP,
    BlockFields,
    ExploreParams,
    describe_length,
    encode_classes,
    explore_query,
    parse_classes,
    planner_params,
)
from app.web.explore.service import (
    BlockSizes,
    PrefixResult,
    block_sizes,
    engine_for,
    prefix_for,
    workload_spec,
)
from app.web.format import Figure, gib, integer, percent
from app.web.inputs.links import form_values, query_items, to_query, with_typed
from app.web.inputs.options import Choices, choices
from app.web.inputs.params import PlannerParams, same_named
from app.web.inputs.problems import Problem, problems_of, typed_values
from app.web.inputs.resolve import Resolved, estimate_for, resolve_lenient
from app.web.templating import url_path

# ---- view models -------------------------------------------------------------------------------


@dataclass(frozen=True)
class BlockRowView:
    block_size: int
    bytes_per_block: str
    num_gpu_blocks: str
    usable_tokens: str
    mean_waste_tokens: str
    waste_percent: str
    prefix_hit: str
    table_entries: str
    table_bytes: str
    marks: tuple[str, ...]  # "default", "current" (msgids: the template shows them through _())
    rejected: bool
    note: str


@dataclass(frozen=True)
class WasteExample:
    seq_tokens: str
    blocks: str
    slots: str
    wasted: str
    exact: str
    approx: str


@dataclass(frozen=True)
class BlocksView:
    rows: tuple[BlockRowView, ...]
    backend: str
    default_block_size: int
    current_block_size: int
    groups: int
    waste: tuple[WasteExample, ...]
    lengths_text: str


@dataclass(frozen=True)
class PrefixRowView:
    shared: int
    block_size: int
    tokens_hit: int
    tokens_recomputed: int
    blocks_hit: int
    reason: str


@dataclass(frozen=True)
class PrefixView:
    block_size: int
    shared: str
    tokens_hit: str
    tokens_recomputed: str
    blocks_hit: str
    reason: str
    differing: str
    num_requests: str
    saved: str
    saved_tokens: str
    saved_share: str
    saved_formula: str
    note: str  # prefix caching off, or a calculator block size other than the engine's
    seed_rows: tuple[PrefixRowView, ...]


@dataclass(frozen=True)
class PresetView:
    key: str
    label: str
    description: str
    hits_first: str
    checked: bool


@dataclass(frozen=True)
class ClassRow:
    share: str
    prompt: str
    output: str
    prefix: str


@dataclass(frozen=True)
class WorkloadView:
    title: str
    hits_first: str
    mode: str
    classes: tuple[ClassRow, ...]
    classes_text: str
    edit_link: str
    metrics: tuple[Figure, ...]
    binding_limit: str
    binding_label: (
        str  # the limit in words (the API keeps its key: kv_pool, max_num_seqs, max_model_len, none)
    )
    binding_explanation: str
    kv_chart: Markup
    rw_chart: Markup
    summary: str
    series_rows: tuple[tuple[str, str, str, str], ...]
    engine: str


@dataclass(frozen=True)
class ExploreView:
    params: ExploreParams
    values: dict[str, str]
    permalink: str
    planner_link: str
    problems: tuple[Problem, ...]
    error: Problem | None
    engine_line: str
    blocks: BlocksView | None
    prefix: PrefixView | None
    workload: WorkloadView | None
    workload_error: Problem | None
    presets: tuple[PresetView, ...]
    choices: Choices
    max_page_requests: str
    wl_help: str
    misprint_note: str


# the simulator's binding-limit keys as the page names them (its API answer keeps the key)
BINDING_LABELS = {
    "kv_pool": N_("the KV pool"),
    "max_num_seqs": N_("--max-num-seqs"),
    "max_model_len": N_("--max-model-len"),
    "none": N_("none"),
}


def _bytes_text(num_bytes: int) -> str:
    """Sizes below a GiB in MiB or KiB, so a block or a small saving never reads as 0.00 GiB."""
    if num_bytes >= GIB:
        return gib(num_bytes)
    return (
        Text("{num_bytes:,.2f} MiB", num_bytes=num_bytes / MIB)
        if num_bytes >= MIB
        else Text("{num_bytes:,.1f} KiB", num_bytes=num_bytes / 1024)
    )


def blocks_view(sizes: BlockSizes, est: Estimate, fields: BlockFields) -> BlocksView:
    groups = max(len(est.groups), 1)
    rows = []
    for row in sizes.rows:
        marks = tuple(
            mark
            for mark, on in (
                (N_("default"), row.is_default),
                (N_("current"), row.block_size == sizes.current_block_size),
            )
            if on
        )
        note = sizes.notes.get(row.block_size, "") if row.rejected else ""
        if not note:
            note = row.rejected_reason or sizes.notes.get(row.block_size, "")
        rows.append(
            BlockRowView(
                block_size=row.block_size,
                bytes_per_block=_bytes_text(row.bytes_per_block),
                num_gpu_blocks=integer(row.num_gpu_blocks),
                usable_tokens=integer(row.usable_tokens),
                mean_waste_tokens=f"{row.mean_tail_waste_tokens:,.1f}",
                waste_percent=percent(row.tail_waste_fraction, 2),
                prefix_hit=f"{integer(row.prefix_tokens_hit)} / {integer(fields.shared_prefix_tokens)}",
                table_entries=integer(row.block_table_entries_per_max_seq),
                table_bytes=_bytes_text(row.block_table_bytes_per_max_seq * groups),
                marks=marks,
                rejected=row.rejected,
                note=note,
            )
        )
    b = sizes.current_block_size
    return BlocksView(
        rows=tuple(rows),
        backend=sizes.backend,
        default_block_size=sizes.default_block_size,
        current_block_size=b,
        groups=groups,
        waste=tuple(waste_example(seq_tokens=s, block_size=b) for s in fields.typical_lengths),
        lengths_text=", ".join(integer(s) for s in fields.typical_lengths),
    )


def waste_example(*, seq_tokens: int, block_size: int) -> WasteExample:
    """One sequence's tail: S=1000, B=16 -> 63 blocks, 1008 slots, 8 wasted (0.79 %; B/(2S) = 0.80 %)."""
    blocks = blocks_for_tokens(tokens=seq_tokens, block_size=block_size)
    wasted = tail_waste_tokens(seq_tokens=seq_tokens, block_size=block_size)
    return WasteExample(
        seq_tokens=integer(seq_tokens),
        blocks=integer(blocks),
        slots=integer(blocks * block_size),
        wasted=integer(wasted),
        exact=percent(wasted / (blocks * block_size), 2),
        approx=percent(expected_tail_waste_fraction(seq_tokens=seq_tokens, block_size=block_size), 2),
    )


def _prefix_row(hit: PrefixHit) -> PrefixRowView:
    return PrefixRowView(
        hit.shared_prefix_tokens,
        hit.block_size,
        hit.tokens_hit,
        hit.tokens_recomputed,
        hit.blocks_hit,
        hit.reason,
    )


def seed_prefix_rows() -> tuple[PrefixRowView, ...]:
    return tuple(
        _prefix_row(prefix_cache_hit(shared_prefix_tokens=s, block_size=SEED_EXAMPLE_BLOCK_SIZE))
        for s in SEED_EXAMPLE_SHARED
    )


def prefix_view(
    result: PrefixResult, *, differing: Sequence[str], engine_block_size: int, kv_cache_bytes: int
) -> PrefixView:
    hit = result.hit
    labels = dict(EXTRA_KEY_FIELDS)
    notes = []
    if not result.caching_enabled:
        notes.append(
            Text(
                "Prefix caching is off for this engine (--enable-prefix-caching): nothing hits in vLLM; the numbers show what would hit with it on."
            )
        )
    if hit.block_size != engine_block_size:
        notes.append(
            Text(
                "Calculated at B = {block_size}; the engine runs B = {engine_block_size}.",
                block_size=hit.block_size,
                engine_block_size=engine_block_size,
            )
        )
    share = result.saved_bytes / kv_cache_bytes if kv_cache_bytes > 0 else 0.0
    return PrefixView(
        block_size=hit.block_size,
        shared=integer(hit.shared_prefix_tokens),
        tokens_hit=integer(hit.tokens_hit),
        tokens_recomputed=integer(hit.tokens_recomputed),
        blocks_hit=integer(hit.blocks_hit),
        reason=hit.reason,
        differing=", ".join(labels[key] for key in differing),
        num_requests=integer(result.num_requests),
        saved=_bytes_text(result.saved_bytes),
        saved_tokens=integer(result.saved_tokens),
        saved_share=percent(share),
        saved_formula=(
            Text(
                "{blocks_hit} blocks × ({num_requests} − 1) × {bytes_per_block} B",
                blocks_hit=integer(hit.blocks_hit),
                num_requests=integer(result.num_requests),
                bytes_per_block=integer(result.bytes_per_block),
            )
        ),
        note=" ".join(notes),
        seed_rows=seed_prefix_rows(),
    )


def _series_table(result: WorkloadResult) -> tuple[tuple[str, str, str, str], ...]:
    series = result.series
    n = len(series.step)
    if not n:
        return ()
    picks = sorted(
        {round(i * (n - 1) / max(SERIES_TABLE_ROWS - 1, 1)) for i in range(min(n, SERIES_TABLE_ROWS))}
    )
    return tuple(
        (
            integer(series.step[i]),
            percent(series.kv_usage[i]),
            integer(series.running[i]),
            integer(series.waiting[i]),
        )
        for i in picks
    )


def _class_rows(spec: WorkloadSpec) -> tuple[ClassRow, ...]:
    total = sum(c.share for c in spec.classes)
    return tuple(
        ClassRow(
            share=percent(c.share / total, 0),
            prompt=describe_length(c.prompt_tokens),
            output=describe_length(c.output_tokens),
            prefix=f"{c.shared_prefix_tokens:,} ({c.prefix_group})" if c.shared_prefix_tokens else "—",
        )
        for c in spec.classes
    )


def workload_view(
    *,
    result: WorkloadResult,
    spec: WorkloadSpec,
    engine: EngineParams,
    preset: WorkloadPreset | None,
    edit_link: str,
) -> WorkloadView:
    series = result.series
    max_waiting = max(series.waiting, default=0)
    y_conc = max(max(series.running, default=0), max_waiting, 1)
    limit_visible = engine.max_num_seqs <= 2 * y_conc
    y_top = max(y_conc, engine.max_num_seqs) if limit_visible else y_conc
    y_top = int(y_top * 1.1) + 1
    conc_ticks = [(float(t), integer(t)) for t in explore_svg.nice_ticks(y_top, 4)]
    pct_ticks = [(t / 4, percent(t / 4, 0)) for t in range(5)]
    usage_desc = Text(
        "KV cache usage over {steps} scheduler steps: peak {peak_kv_usage}, mean {mean_kv_usage} of {usable_blocks} usable blocks.",
        steps=integer(result.steps),
        peak_kv_usage=percent(result.peak_kv_usage),
        mean_kv_usage=percent(result.mean_kv_usage),
        usable_blocks=integer(result.usable_blocks),
    )
    rw_desc = Text(
        "Running requests peak at {max_running} (mean {mean_running:.1f}); waiting peaks at {max_waiting} (mean {mean_waiting:.1f}); max_num_seqs is {max_num_seqs}.",
        max_running=integer(result.max_running),
        mean_running=result.mean_running,
        max_waiting=integer(max_waiting),
        mean_waiting=result.mean_waiting,
        max_num_seqs=integer(engine.max_num_seqs),
    )
    kv_chart = explore_svg.step_chart(
        explore_svg.KV_USAGE_CHART,
        series.step,
        [explore_svg.Line("kv", Text("KV cache usage"), series.kv_usage, fill=True)],
        y_max=1.0,
        y_ticks=pct_ticks,
        desc=usage_desc,
    )
    rw_chart = explore_svg.step_chart(
        explore_svg.RUNNING_CHART,
        series.step,
        [
            explore_svg.Line("running", Text("running"), series.running),
            explore_svg.Line("waiting", Text("waiting"), series.waiting),
        ],
        y_max=y_top,
        y_ticks=conc_ticks,
        desc=rw_desc,
        limit=explore_svg.Limit(
            engine.max_num_seqs,
            Text("max_num_seqs = {max_num_seqs}", max_num_seqs=integer(engine.max_num_seqs)),
        )
        if limit_visible
        else None,
    )
    if spec.arrival_rate is not None:
        mode = Text(
            "open loop: Poisson arrivals, {arrival_rate:g} requests per step", arrival_rate=spec.arrival_rate
        )
    else:
        mode = Text(
            "closed loop: {integer} clients, each sends its next request when one ends",
            integer=integer(spec.concurrency or 0),
        )
    metrics = _workload_metrics(result, max_waiting=max_waiting)
    blocked = ", ".join(f"{k} {integer(v)}" for k, v in result.admission_blocked_steps.items())
    summary = Text(
        "{usage_desc} {rw_desc} Steps on which admission stopped, by cause: {blocked}.",
        usage_desc=usage_desc,
        rw_desc=rw_desc,
        blocked=blocked,
    )
    return WorkloadView(
        title=Text("{label} — {description}", label=preset.label, description=preset.description)
        if preset
        else Text("Custom request classes"),
        hits_first=preset.hits_first if preset else "",
        mode=mode,
        classes=_class_rows(spec),
        classes_text=encode_classes(spec.classes),
        edit_link=edit_link,
        metrics=metrics,
        binding_limit=result.binding_limit,
        binding_label=Text(BINDING_LABELS[result.binding_limit]),
        binding_explanation=result.binding_explanation,
        kv_chart=kv_chart,
        rw_chart=rw_chart,
        summary=summary,
        series_rows=_series_table(result),
        engine=_engine_text(engine, spec),
    )


def _workload_metrics(result: WorkloadResult, *, max_waiting: int) -> tuple[Figure, ...]:
    """The simulation's headline numbers, in the order the page lists them."""
    return (
        Figure("w-max-running", Text("Concurrency reached (max running)"), integer(result.max_running)),
        Figure("w-mean-running", Text("Mean running"), f"{result.mean_running:.1f}"),
        Figure("w-preemptions", Text("Preemptions"), integer(result.preemptions)),
        Figure("w-mean-waiting", Text("Mean waiting"), f"{result.mean_waiting:.1f}"),
        Figure("w-max-waiting", Text("Max waiting"), integer(max_waiting)),
        Figure("w-peak-kv", Text("Peak KV usage"), percent(result.peak_kv_usage)),
        Figure("w-prefix-hit", Text("Prefix hit rate"), percent(result.prefix_hit_rate)),
        Figure(
            "w-fragmentation", Text("Fragmentation waste"), percent(result.fragmentation_waste_fraction, 2)
        ),
        Figure(
            "w-finished",
            Text("Finished / rejected"),
            f"{integer(result.finished)} / {integer(result.rejected)}",
        ),
        Figure("w-steps", Text("Steps"), integer(result.steps)),
    )


def _engine_text(engine: EngineParams, spec: WorkloadSpec) -> str:
    """The engine the simulation ran, in one sentence."""
    return Text(
        "{num_gpu_blocks} blocks of {block_size} tokens, max_num_seqs {max_num_seqs}, max_num_batched_tokens {max_num_batched_tokens}, max_model_len {max_model_len}, prefix caching {value}, {num_requests} requests, random seed {seed}",
        num_gpu_blocks=integer(engine.num_gpu_blocks),
        block_size=engine.block_size,
        max_num_seqs=integer(engine.max_num_seqs),
        max_num_batched_tokens=integer(engine.max_num_batched_tokens),
        max_model_len=integer(engine.max_model_len),
        value=Text("on") if engine.enable_prefix_caching else Text("off"),
        num_requests=integer(spec.num_requests),
        seed=spec.seed,
    )


HIDDEN_PLANNER_FIELDS = frozenset(
    {"devices", "target_concurrency", "pipeline_parallel_size", "enforce_eager", "config_json"}
    | {"hf_quant_config_json", "device_memory_used_gib"}
    | {name for name in PlannerParams.model_fields if name.startswith("card_")}
)


def hidden_inputs(params: ExploreParams) -> list[tuple[str, str]]:
    """Planner parameters the explore form does not show, carried so the round trip keeps them."""
    return [(k, v) for k, v in query_items(params) if k in HIDDEN_PLANNER_FIELDS]


@dataclass(frozen=True)
class _Sections:
    params: ExploreParams
    problems: list[Problem]
    error: Problem | None = None
    engine_line: str = ""
    blocks: BlocksView | None = None
    prefix: PrefixView | None = None
    workload: WorkloadView | None = None
    workload_error: Problem | None = None


def _sections(request: Request, params: ExploreParams, problems: list[Problem]) -> _Sections:
    """Resolve the inputs and compute the three sections; a PlannerError becomes the page's error."""
    try:
        resolved, more = resolve_lenient(params, problems)
    except PlannerError as exc:  # the catalogue itself is unusable: nothing to fall back to
        return _Sections(params, problems, error=Problem(exc.field, exc.message))
    problems = problems + more
    # what was given stays given (model_fields_set: the permalink keeps a typed target N = 1, not a default one)
    given = {**params.model_dump(exclude_unset=True), **resolved.params.model_dump(exclude_unset=True)}
    params = ExploreParams.model_validate(given)
    resolved = dataclasses.replace(resolved, params=params)
    try:
        est = estimate_for(resolved)
    except PlannerError as exc:
        return _Sections(params, problems, error=Problem(exc.field, exc.message))
    engine_line = Text(
        "{model_label} on {name} · vLLM {vllm_version} · {attention_backend} · B = {block_size} · {num_gpu_blocks} blocks · {kv_cache_bytes} KV pool",
        model_label=resolved.model_label,
        name=resolved.device.name,
        vllm_version=est.vllm_version,
        attention_backend=est.attention_backend,
        block_size=est.block_size,
        num_gpu_blocks=integer(est.num_gpu_blocks),
        kv_cache_bytes=gib(est.kv_cache_bytes),
    )
    sizes = block_sizes(resolved, est, params)
    blocks = blocks_view(sizes, est, params)
    prefix, params, problems = _prefix_section(resolved, params, est, sizes, problems)
    workload, workload_error, params, problems = _workload_section(request, resolved, params, est, problems)
    return _Sections(params, problems, None, engine_line, blocks, prefix, workload, workload_error)


def build_view(request: Request, params: ExploreParams, problems: list[Problem]) -> ExploreView:
    sec = _sections(request, params, problems)
    params = sec.params
    values = typed_values(form_values(params), sec.problems)  # "abc" stays in its box
    return same_named(  # the sections (the engine line, blocks, prefix, workload, an error) as computed
        ExploreView,
        sec,
        values=values,
        permalink=f"{url_path(request, 'explore')}?{with_typed(explore_query(params), sec.problems)}",
        planner_link=f"{url_path(request, 'planner')}?{to_query(planner_params(params))}",
        problems=problems_of(sec.problems),
        presets=tuple(
            # the typed preset: an unknown one checks none of these (the template adds it, labelled unknown)
            PresetView(p.key, p.label, p.description, p.hits_first, p.key == values.get("preset"))
            for p in WORKLOAD_PRESETS.values()
        ),
        choices=choices(params.vllm_version),
        max_page_requests=integer(MAX_PAGE_REQUESTS),
        wl_help=WL_HELP,
        misprint_note=SEED_MISPRINT_NOTE,
    )


def _prefix_section(
    resolved: Resolved, params: ExploreParams, est: Estimate, sizes: BlockSizes, problems: list[Problem]
) -> tuple[PrefixView, ExploreParams, list[Problem]]:
    try:
        result = prefix_for(resolved, params, est, sizes)
    except PlannerError as exc:  # request_tokens below the shared prefix: drop it and say so
        value = str(getattr(params, exc.field, ""))  # a combination the section resolves itself, and says
        problems = [*problems, Problem(exc.field, exc.message, value=value, stops=False)]
        params = params.model_copy(update={"request_tokens": None, "mm_item_start_token": None})
        result = prefix_for(resolved, params, est, sizes)
    view = prefix_view(
        result,
        differing=params.extra_keys_differ,
        engine_block_size=est.block_size,
        kv_cache_bytes=max(0, est.kv_cache_bytes),
    )
    return view, params, problems


def _workload_section(
    request: Request, resolved: Resolved, params: ExploreParams, est: Estimate, problems: list[Problem]
) -> tuple[WorkloadView | None, Problem | None, ExploreParams, list[Problem]]:
    preset = WORKLOAD_PRESETS.get(params.preset)
    classes = None if preset else parse_classes(params.wl or DEFAULT_CUSTOM_WL)
    concurrency = params.concurrency
    if params.arrival_rate is not None and concurrency is not None:
        problems = [
            *problems,
            Problem(
                "concurrency",
                Text("ignored: arrival_rate is set (open loop)"),
                value=str(concurrency),
                stops=False,  # a combination the section resolves itself, and says
            ),
        ]
        params = params.model_copy(update={"concurrency": None})
        concurrency = None
    try:
        engine = engine_for(resolved, est)
        spec = workload_spec(
            preset=preset,
            classes=classes,
            num_requests=params.num_requests,
            concurrency=concurrency,
            arrival_rate=params.arrival_rate,
            seed=params.seed,
        )
        result = simulate(workload=spec, engine=engine)  # bounded: WorkloadTooLargeError is a PlannerError
    except PlannerError as exc:
        return None, Problem(exc.field, exc.message), params, problems
    edit = params.model_copy(
        update={
            "preset": CUSTOM,
            "wl": encode_classes(spec.classes),
            "num_requests": spec.num_requests,
            "concurrency": spec.concurrency,
            "arrival_rate": spec.arrival_rate,
        }
    )
    edit_link = f"{url_path(request, 'explore')}?{explore_query(edit)}"
    view = workload_view(result=result, spec=spec, engine=engine, preset=preset, edit_link=edit_link)
    return view, None, params, problems
