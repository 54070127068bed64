"""`POST /api/performance`: TTFT, TPOT and throughput for the planner's parameters plus a workload.

The body is the /api/estimate parameters (strict: an unknown key is a 422) with ``input_tokens``,
``output_tokens`` and ``concurrency``; optionally ``bench`` (`vllm bench serve`'s own arguments:
num_prompts, max_concurrency, request_rate, burstiness, dataset_name, random_* and ignore_eos), which
adds the simulated run's result keys under vLLM's names, and ``measured_runs`` (your cluster's runs,
app/web/measured_runs.py), which scales the kinds of figure they measured by your cluster's factors. The answer is
app.core.perf's :class:`Performance`: each speed as ``{low, expected, high}``, whether the KV pool
limits and from which concurrency, the basis and plain notes. Domain errors are 422s naming the field.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response
from pydantic import ConfigDict, Field

from app.core.perf.bench_args import BenchArgs
from app.core.perf.measured import MAX_MEASURED_RUNS
from app.web.encoding import dumped_response
from app.web.inputs.links import to_query
from app.web.inputs.params import StrictPlannerParams
from app.web.inputs.resolve import resolve_strict
from app.web.measured_runs import MeasuredRun, api_runs, runs_scope
from app.web.speed.service import performance_for

router = APIRouter(prefix="/api", tags=["api"])


class PerformanceRequest(StrictPlannerParams):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    bench: BenchArgs | None = None
    measured_runs: list[MeasuredRun] = Field(default_factory=list, max_length=MAX_MEASURED_RUNS)


def _with_bench_fields(params: PerformanceRequest) -> PerformanceRequest:
    """The request with its ``bench`` object as the page's own fields (the same names), so the permalink
    in ``inputs.query`` opens the page with the same simulated benchmark. ``seed`` has no page field."""
    if params.bench is None:
        return params
    given = params.bench.model_dump(exclude_unset=True, exclude={"seed"})
    return params.model_copy(update={"bench_serve": True, **{k: getattr(params.bench, k) for k in given}})


@router.post("/performance", name="api_performance", response_model=dict[str, Any])
def performance_post(params: PerformanceRequest) -> Response:
    """TTFT / TPOT / throughput bands for `vllm bench serve --max-concurrency C`-style closed-loop clients."""
    # the page's own fields (bench_serve, num_prompts, ..., my_runs) are read here too, so no key is ignored
    resolved = resolve_strict(params)
    runs = api_runs(params, params.measured_runs, params.bench)
    cluster = runs.cluster
    perf = performance_for(resolved, bench=runs.bench, cluster=cluster)
    return dumped_response(
        {  # encoded here, not on the event loop (app/web/encoding.py)
            **perf.model_dump(),
            # which figures your runs scale ("" without runs), as /api/fleet and /api/recommend say it:
            # English, as the notes are (the API's sentences are data; only an error's msg is translated)
            "speed_caption": runs_scope(cluster).caption(),
            "calibrated_figures": cluster.measured_groups() if cluster is not None else [],
            "inputs": {
                "model": resolved.model_label,
                "device": resolved.device.id,
                "vllm_version": resolved.vllm_version,
                "query": to_query(_with_bench_fields(params)),
            },
        }
    )
