"""`POST /api/performance`: TTFT, TPOT and throughput for the planner's parameters plus a workload.

The body is the /api/estimate parameters (strict: an unknown key is a 422) with ``input_tokens``,
``output_tokens`` and ``concurrency``. The answer is app.core.perf's :class:`Performance`: each speed
as ``{low, expected, high}``, whether the KV pool limits and from which concurrency, the basis
(calibrated on measured runs, or extrapolated) and plain notes. Domain errors are 422s naming the field.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from app.core.estimate import estimate
from app.core.perf.predict import Performance, performance
from app.core.perf.schedule import Workload
from app.web.planner.params import PlannerParams, StrictPlannerParams, to_query
from app.web.planner.service import Resolved, resolve_strict

router = APIRouter(prefix="/api", tags=["api"])


def workload_of(params: PlannerParams) -> Workload:
    return Workload(
        input_tokens=params.input_tokens,
        output_tokens=params.output_tokens,
        concurrency=params.speed_concurrency,
    )


def performance_for(resolved: Resolved, *, with_curve: bool = True) -> Performance:
    """The estimate (the exact pool) and the speed on top of it; PlannerError propagates."""
    est = estimate(
        model=resolved.model,
        device=resolved.device,
        serve=resolved.serve,
        vllm_version=resolved.vllm_version,
        target_concurrency=resolved.params.target_concurrency,
    )
    return performance(
        estimate=est,
        model=resolved.model,
        device=resolved.device,
        serve=resolved.serve,
        workload=workload_of(resolved.params),
        with_curve=with_curve,
    )


@router.post("/performance", name="api_performance")
def performance_post(params: StrictPlannerParams) -> dict[str, Any]:
    """TTFT / TPOT / throughput bands for `vllm bench serve --max-concurrency C`-style closed-loop clients."""
    resolved = resolve_strict(params)
    perf = performance_for(resolved)
    return {
        **perf.model_dump(),
        "inputs": {
            "model": resolved.model_label,
            "device": resolved.device.id,
            "vllm_version": resolved.vllm_version,
            "query": to_query(params),
        },
    }
