"""The compare view model: rows of both estimates, which differ and why, the two verdict columns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fastapi import Request

from app.core.errors import PlannerError
from app.core.result import Estimate
from app.core.text import COMMA, SEMICOLON, Text, TextList
from app.core.versions import rules_for
from app.web.compare.params import VERSION_KEYS, parse_versions
from app.web.format import gib, gib_range, integer
from app.web.inputs.lenient import parse_lenient
from app.web.inputs.links import query_items, to_query
from app.web.inputs.options import Option, release_options, version_options
from app.web.inputs.params import PlannerParams
from app.web.inputs.problems import Problem, error_of, problems_of, typed_values
from app.web.inputs.resolve import estimate_for, resolve_lenient
from app.web.templating import url_path
from app.web.verdict import holds_no_kv, verdict_view
from app.web.version_notes import RuleDifference, rule_differences


@dataclass(frozen=True)
class RowSpec:
    key: str
    label: str
    value: Callable[[Estimate, PlannerParams], str]
    rules: tuple[str, ...]  # version_notes aspect keys that move this row
    upstream: tuple[str, ...] = ()  # rows this one is computed from


def _utilization(est: Estimate, params: PlannerParams) -> str:
    how = Text("set") if params.gpu_memory_utilization is not None else Text("this version's default")
    utilization = format(est.gpu_memory_utilization, "g")
    return Text("{utilization} ({how})", utilization=utilization, how=how)


def _graphs(est: Estimate, _: PlannerParams) -> str:
    if est.cuda_graph_bytes <= 0:
        return Text("none (--enforce-eager or no graphs)")
    where = (
        Text("CUDA graphs subtracted from the budget before KV sizing")
        if est.cuda_graph_budgeted
        else Text("not subtracted: from the 1 − utilization slack")
    )
    return Text("{size} — {where}", size=gib(est.cuda_graph_bytes), where=where)


def _kv(figure: Callable[[Estimate], str]) -> Callable[[Estimate, PlannerParams], str]:
    """A KV pool row: ``figure`` of the pool, or "—" where no layer keeps a KV cache (vLLM sizes no pool:
    app.web.verdict.holds_no_kv, as the planner's headline says)."""
    return lambda est, _: "—" if holds_no_kv(est) else figure(est)


def _kv_pool(est: Estimate, _: PlannerParams) -> str:
    return Text("none (no KV cache)") if holds_no_kv(est) else gib(est.kv_cache_bytes)


def _kv_range(est: Estimate) -> str:
    pool = est.ranges.get("kv_cache_bytes")
    return gib_range(pool) if pool else "—"


def _largest(est: Estimate, _: PlannerParams) -> str:
    return integer(est.estimated_max_model_len) if est.estimated_max_model_len else Text("none")


ROWS: tuple[RowSpec, ...] = (
    RowSpec("utilization", Text("gpu_memory_utilization used"), _utilization, ("default_util",)),
    RowSpec(
        "budget",
        Text("Budget (total × utilization)"),
        lambda e, _: gib(e.budget_bytes),
        ("budget",),
        ("utilization",),
    ),
    RowSpec("weights", Text("Weights"), lambda e, _: gib(e.weights_bytes), ()),
    RowSpec(
        "activation",
        Text("Activation & workspace (peak)"),
        lambda e, _: gib(e.activation_peak_bytes),
        ("sampler", "inflight", "budget"),
    ),
    RowSpec("non-torch", Text("Non-torch"), lambda e, _: gib(e.non_torch_bytes), ("budget",)),
    RowSpec("graphs", Text("CUDA graphs"), _graphs, ("cuda_graphs",)),
    RowSpec(
        "kv",
        Text("KV cache pool"),
        _kv_pool,
        ("cuda_graphs", "budget"),
        ("budget", "weights", "activation", "non-torch", "graphs"),
    ),
    RowSpec("kv-range", Text("KV cache pool, range"), _kv(_kv_range), (), ("kv",)),
    RowSpec("blocks", "num_gpu_blocks", _kv(lambda e: integer(e.num_gpu_blocks)), (), ("kv",)),
    RowSpec(
        "tokens",
        Text("GPU KV cache size (tokens)"),
        _kv(lambda e: integer(e.kv_tokens)),
        ("tokens",),
        ("blocks",),
    ),
    RowSpec(
        "concurrency",
        Text("Max concurrency at max_model_len"),
        lambda e, _: f"{e.max_concurrency:.2f}x",
        ("concurrency", "inflight"),
        ("blocks",),
    ),
    RowSpec(
        "largest", Text("Largest max_model_len that starts"), _largest, ("needed", "null_block"), ("kv",)
    ),
)
LOG_RULES = ("weights_log", "capacity_log", "gib_format", "cuda_graphs")
VERDICT_RULES = ("needed", "null_block")
LOG_UPSTREAM = ("weights", "graphs", "kv", "tokens", "concurrency", "largest")


@dataclass(frozen=True)
class CompareRow:
    key: str
    label: str
    a: str
    b: str
    differs: bool
    reason: str


@dataclass(frozen=True)
class Column:
    slot: str  # a / b (element ids)
    version: str
    verdict_key: str
    verdict_tone: str  # ok / warn / bad
    verdict: str
    log_lines: tuple[str, ...]
    planner_link: str


@dataclass(frozen=True)
class SideBySide:
    rows: tuple[CompareRow, ...] = ()
    columns: tuple[Column, ...] = ()
    verdict_reason: str = ""  # "" when both versions reach the same verdict
    log_reason: str = ""  # "" when both print the same lines


@dataclass(frozen=True)
class CompareView:
    problems: tuple[Problem, ...]
    a: str
    b: str
    versions: tuple[Option, ...]
    hidden: tuple[tuple[str, str], ...]  # the planner inputs, carried by the version form
    title: str
    result: SideBySide
    differences: tuple[RuleDifference, ...]
    error: Problem | None


def _reason(
    own: tuple[str, ...],
    upstream: tuple[str, ...],
    diffs: dict[str, RuleDifference],
    differing: dict[str, tuple[str, tuple[str, ...]]],
) -> str:
    """The rows this one is computed from that differ, then the rules of its own that differ and are
    not already the reason of one of those rows."""
    follows = [u for u in upstream if u in differing]
    explained = {k for u in follows for k in differing[u][1]}
    rows = TextList(COMMA, (differing[u][0] for u in follows))
    parts = [Text("follows from {rows}", rows=rows)] if follows else []
    parts += [
        Text("{topic}: {a} → {b}", topic=diffs[k].topic, a=diffs[k].a, b=diffs[k].b)
        for k in own
        if k in diffs and k not in explained
    ]
    return (
        TextList(SEMICOLON, parts) if parts else Text("the modelled constants differ between these releases")
    )


def side_by_side(
    request: Request,
    params: PlannerParams,
    pair: tuple[tuple[str, Estimate], ...],
    diffs: dict[str, RuleDifference],
) -> SideBySide:
    rows: list[CompareRow] = []
    differing: dict[str, tuple[str, tuple[str, ...]]] = {}  # row key -> (label, rules behind it)
    for spec in ROWS:
        va, vb = (spec.value(e, params) for _, e in pair)
        reason = _reason(spec.rules, spec.upstream, diffs, differing) if va != vb else ""
        if reason:
            behind = {k for u in spec.upstream if u in differing for k in differing[u][1]}
            differing[spec.key] = (spec.label, tuple(behind | {k for k in spec.rules if k in diffs}))
        rows.append(CompareRow(spec.key, spec.label, va, vb, bool(reason), reason))
    planner = url_path(request, "planner")
    columns = []
    for slot, (version, est) in zip(VERSION_KEYS, pair, strict=True):
        verdict = verdict_view(est, params.target_concurrency)
        lines = tuple(est.log_lines)
        if est.error and est.error not in lines:
            lines = (*lines, est.error)
        link = f"{planner}?{to_query(params.model_copy(update={'vllm_version': version}))}"
        columns.append(Column(slot, version, verdict.key, verdict.tone, verdict.headline, lines, link))
    first, second = columns
    return SideBySide(
        rows=tuple(rows),
        columns=tuple(columns),
        verdict_reason=_reason(VERDICT_RULES, ("kv", "concurrency"), diffs, differing)
        if first.verdict_key != second.verdict_key
        else "",
        log_reason=_reason(LOG_RULES, LOG_UPSTREAM, diffs, differing)
        if first.log_lines != second.log_lines
        else "",
    )


def build_view(request: Request) -> CompareView:
    params, problems = parse_lenient(PlannerParams, request.query_params.multi_items())
    a, b, version_problems = parse_versions(request)
    resolved, more = resolve_lenient(params, [*problems, *version_problems])
    params = resolved.params
    diffs = {d.key: d for d in rule_differences(rules_for(a), rules_for(b))}
    error: Problem | None = None
    try:
        result = side_by_side(
            request,
            params,
            ((a, estimate_for(resolved, vllm_version=a)), (b, estimate_for(resolved, vllm_version=b))),
            diffs,
        )
    except PlannerError as exc:
        result, error = SideBySide(), error_of(exc)
    # the select keeps a typed version it cannot use (so the error stays until another is picked)
    shown = typed_values({"a": a, "b": b}, version_problems)
    return CompareView(
        problems=problems_of(problems + version_problems + more),
        a=shown["a"],
        b=shown["b"],
        versions=version_options(version_options(release_options(), a), b),
        hidden=tuple((k, v) for k, v in query_items(params) if k != "vllm_version"),
        title=Text(
            "{model_label} on {name} × {devices}",
            model_label=resolved.model_label,
            name=resolved.device.name,
            devices=params.device_count,
        ),
        result=result,
        differences=tuple(diffs.values()),
        error=error,
    )
