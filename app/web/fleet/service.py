"""The one fleet call of the web layer: resolve the planner's inputs, run the core search, and build
each candidate's planner parameters (its permalink opens the planner on the same numbers)."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.fleet import Candidate, FleetPlan, plan_fleet, request_len_limit
from app.core.fleet_load import bench_rate
from app.core.perf.bench_args import BenchArgs
from app.core.perf.cluster import ClusterFit
from app.core.perf.workload import workload_lengths
from app.core.specs import ServeConfig
from app.core.text import Msg
from app.web.fleet.params import FleetParams
from app.web.inputs.params import PlannerParams, with_serve
from app.web.inputs.problems import Problem, UnusableInputs
from app.web.inputs.resolve import Resolved, resolve_strict


@dataclass(frozen=True)
class FleetResult:
    resolved: Resolved
    plan: FleetPlan
    params: FleetParams  # the inputs as searched: the lengths nobody set shortened to fit
    cluster: ClusterFit | None = None  # your runs' factors: the kinds of figure they measured are scaled

    @property
    def calibrated_runs(self) -> int:
        return self.cluster.runs if self.cluster is not None else 0

    @property
    def calibrated_figures(self) -> list[str]:
        """The kinds of figure (tpot, ttft, throughput) your runs measured: only these are scaled."""
        return self.cluster.measured_groups() if self.cluster is not None else []


def fitted_load(
    params: FleetParams, *, max_model_len: int, bench: BenchArgs | None = None
) -> tuple[FleetParams, Msg | None]:
    """The load's lengths by the Speed section's rule (app.core.perf.workload.workload_lengths) with
    the fleet's defaults: a length the user did not set (not in ``model_fields_set``: the page's blank
    box, the API's absent key) shrinks to fit ``max_model_len`` and a note says so; one the user set is
    kept, and when it alone leaves no room the refusal names it. ``bench``: a length not set is the
    benchmark's mean request's (app.core.fleet_load)."""
    given = params.model_fields_set
    new_in, new_out, note = workload_lengths(
        input_tokens=params.input_tokens if "input_tokens" in given else None,
        output_tokens=params.output_tokens if "output_tokens" in given else None,
        bench=bench,
        max_model_len=max_model_len,
        defaults=(params.input_tokens, params.output_tokens),
    )
    if note is None and bench is None:
        return params, None
    return params.model_copy(update={"input_tokens": new_in, "output_tokens": new_out}), note


def fleet_for(
    params: FleetParams,
    *,
    cluster: ClusterFit | None,
    unusable: tuple[Problem, ...] = (),
    bench: BenchArgs | None = None,
) -> FleetResult:
    """The search for ``params``; a PlannerError (unknown model, bad config) propagates naming its field,
    and the page's ``unusable`` inputs (a load it could not read) stop it before it runs.

    The model is resolved as published: the search adds the weight formats itself, or only the one
    the user fixed with ``quantization``. ``cluster``: your measured runs' factors (the API's
    measured_runs and my_runs; the page's "Your own runs" box, read as the Speed section reads it).
    ``bench`` (the API's): the load stated as a `vllm bench serve` workload (app.core.fleet_load).
    """
    if unusable:
        raise UnusableInputs(unusable)
    resolved = resolve_strict(params.model_copy(update={"quantization": None}))
    limit = request_len_limit(model=resolved.model, serve=resolved.serve)
    notes: list[Msg] = []
    if bench is not None:
        given = params.requests_per_s if "requests_per_s" in params.model_fields_set else None
        rate, load_note = bench_rate(bench, requests_per_s=given, max_model_len=limit)
        params = params.model_copy(update={"requests_per_s": rate})
        notes.append(load_note)
    params, shortened = fitted_load(params, max_model_len=limit, bench=bench)
    notes.extend([shortened] if shortened is not None else [])
    plan = plan_fleet(
        model=resolved.model,
        device=resolved.device,
        serve=resolved.serve,
        vllm_version=resolved.vllm_version,
        target=params.target().model_copy(update={"cluster": cluster}),
        limits=params.limits(),
        model_label=resolved.model_label,
        quantization=params.quantization,
    )
    if notes:
        plan = plan.model_copy(update={"notes": [*notes, *plan.notes]})
    return FleetResult(resolved, plan, params, cluster)


def planner_params(params: FleetParams, candidate: Candidate) -> PlannerParams:
    """The planner's inputs for one replica of ``candidate``: its flags, and the Speed section at its
    operating point (the same input/output tokens and clients), so the planner shows the same numbers.

    The planner's target concurrency stays the user's: it counts sequences of max_model_len tokens,
    while the fleet's clients send input + output tokens (usually far fewer), so setting it to the
    clients would show a false "does not fit because of N" on a layout that serves them."""
    return point_params(params, candidate.serve, candidate.concurrency_per_replica)


def point_params(params: FleetParams, serve: ServeConfig, concurrency: int) -> PlannerParams:
    """The planner's inputs for one replica with ``serve``'s flags, its Speed section at ``concurrency``
    clients of the fleet's input/output tokens (a candidate's operating point, a frontier point)."""
    applied = with_serve(params.planner(), serve)
    return applied.model_copy(
        update={
            "devices": None,  # one replica: TP x PP devices
            "concurrency": concurrency,
            "input_tokens": params.input_tokens,
            "output_tokens": params.output_tokens,
        }
    )
