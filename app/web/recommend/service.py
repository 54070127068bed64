"""The recommender run for the API's body or the planner's inputs, and its JSON payload."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.core.errors import PlannerError
from app.core.perf.bench_run import bench_sets_clients, whole_clients
from app.core.perf.calibrated import RunsScope
from app.core.perf.predict import MAX_CONCURRENCY, performance
from app.core.perf.schedule import Workload
from app.core.recommend import Recommendation, recommend
from app.core.specs import ServeConfig
from app.web.inputs.params import SERVE_FIELDS, PlannerParams, workload_of
from app.web.inputs.resolve import Resolved, estimate_for, require_usable, resolve_strict
from app.web.measured_runs import PageRuns, api_runs, page_runs_lenient
from app.web.recommend.params import RECOMMEND_ONLY, RecommendRequest, params_with


def recommend_for(
    resolved: Resolved,
    *,
    runs: PageRuns,
    target_max_model_len: int | None = None,
    devices_per_node: int | None = None,
    **room: Any,
) -> Recommendation:
    """The one recommender call of the web features: the resolved inputs, the target length (default
    the inputs' max_model_len, else the model's maximum) and their target concurrency; ``runs``: the
    benchmark (its mean request is the speed workload's blank lengths) and your measured runs' cluster,
    which calibrates every speed figure; ``room``: the API's nodes, allow_fp8_kv and preference.
    PlannerError propagates."""
    params = require_usable(resolved).params
    target_len = target_max_model_len or params.max_model_len or resolved.default_len
    workload, shortened = workload_of(params, max_model_len=target_len, bench=runs.bench)
    if bench_sets_clients(concurrency=params.concurrency, bench=runs.bench):
        workload = _open_loop_clients(resolved, workload, runs)
    rec = recommend(
        workload=workload,
        model=resolved.model,
        device=resolved.device,
        serve=resolved.serve,
        vllm_version=resolved.vllm_version,
        target_max_model_len=target_len,
        target_concurrency=params.target_concurrency,
        devices_per_node=devices_per_node,
        cluster=runs.cluster,
        **room,
    )
    # the lengths the user did not set, shortened to fit the target length: said, as the Speed section says
    return rec if shortened is None else rec.model_copy(update={"warnings": [*rec.warnings, shortened]})


def _open_loop_clients(resolved: Resolved, workload: Workload, runs: PageRuns) -> Workload:
    """An open-loop benchmark (a finite --request-rate, no --max-concurrency) keeps request throughput x mean
    E2E latency in flight (BenchArgs.clients_in_flight), as the Speed section models it; the recommender's steps
    are priced at those clients, counted once on the inputs as given (unchanged when they do not start)."""
    try:
        perf = performance(
            estimate=estimate_for(resolved),
            model=resolved.model,
            device=resolved.device,
            serve=resolved.serve,
            workload=workload,
            with_curve=False,
            bench=runs.bench,
            cluster=runs.cluster,
            clients_from_bench=True,
        )
    except PlannerError:
        return workload
    if perf.bench is None:
        return workload
    return replace(workload, concurrency=min(MAX_CONCURRENCY, whole_clients(perf.bench.clients_in_flight)))


def run(body: RecommendRequest) -> tuple[Resolved, Recommendation]:
    """Resolve the inputs as /api/estimate does and run the recommender with the body's room; a bad
    benchmark argument or measured run is a PlannerError (the API's 422 naming it)."""
    resolved = resolve_strict(body)
    rec = recommend_for(
        resolved,
        runs=api_runs(body, body.measured_runs, body.bench),
        target_max_model_len=body.target_max_model_len,
        devices_per_node=body.devices_per_node,
        nodes=body.nodes,
        allow_fp8_kv=body.allow_fp8_kv,
        preference=body.preference,
    )
    return resolved, rec


def run_for_planner(resolved: Resolved) -> tuple[Recommendation, PageRuns]:
    """The planner's section: the node the device usually comes in (or the devices given, when more).
    The "Your own runs" box is read as the Speed section reads it: a bad paste is returned with the
    answer, which is then uncalibrated."""
    runs = page_runs_lenient(resolved.params)
    rec = recommend_for(
        resolved,
        runs=runs,
        devices_per_node=max(resolved.params.device_count, resolved.device.typical_node_devices),
    )
    return rec, runs


def final_params(resolved: Resolved, rec: Recommendation) -> dict[str, Any]:
    """The final configuration as /api/estimate parameters: POST it there unchanged."""
    return params_for(resolved, rec.final)


def params_for(resolved: Resolved, serve: ServeConfig) -> dict[str, Any]:
    """A configuration the recommender reached as /api/estimate parameters (the planner's inputs with it)."""
    params = PlannerParams.model_validate(
        {k: v for k, v in resolved.params.model_dump().items() if k not in RECOMMEND_ONLY}
    )
    applied = params_with(params, serve)
    out = applied.model_dump(exclude_defaults=True, exclude={"lang", "v"})
    out.update(
        {name: getattr(applied, name) for name in ("model", "device", *SERVE_FIELDS)},
        vllm_version=resolved.vllm_version,
    )
    return out


def payload(resolved: Resolved, rec: Recommendation) -> dict[str, Any]:
    return {
        "target_max_model_len": rec.target_max_model_len,
        "target_concurrency": rec.target_concurrency,
        "steps": [step.model_dump() for step in rec.steps],
        "final": final_params(resolved, rec),
        "meets_target": rec.meets_target,
        "impossible_reason": rec.impossible_reason,
        "best_len_at_target_concurrency": rec.best_len_at_target_concurrency,
        "best_concurrency_at_target_len": rec.best_concurrency_at_target_len,
        "command": rec.command,
        "bisection": rec.bisection.model_dump(),
        "warnings": rec.warnings,
        "speed_workload": rec.speed_workload,
        # > 0: the speed figures (steps, cheapest layouts) of calibrated_figures' kinds are scaled by
        # your measured runs; the caption says which
        "calibrated_runs": rec.calibrated_runs,
        "calibrated_figures": rec.calibrated_figures,
        # English, as the steps and warnings are (the API's sentences are data)
        "speed_caption": RunsScope.of(rec.calibrated_runs, rec.calibrated_figures).caption(),
        "cheapest": _cheapest_payload(resolved, rec),
    }


def _cheapest_payload(resolved: Resolved, rec: Recommendation) -> dict[str, Any] | None:
    """The layouts meeting the target, cheapest first, each with its /api/estimate parameters."""
    if rec.cheapest is None:
        return None
    return {
        "sentence": rec.cheapest.sentence,
        "recommended_is_cheapest": rec.cheapest.recommended_is_cheapest,
        "params": params_for(resolved, rec.cheapest.serve),
        "layouts": [
            {**c.model_dump(exclude={"serve"}), "params": params_for(resolved, c.serve)}
            for c in rec.cheapest.layouts
        ],
    }
