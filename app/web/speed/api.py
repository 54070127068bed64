"""`POST /api/performance`: TTFT, TPOT and throughput for the planner's parameters plus a workload.

The body is the /api/estimate parameters (strict: an unknown key is a 422) with ``input_tokens``,
``output_tokens`` and ``concurrency``. The answer is app.core.perf's :class:`Performance`: each speed
as ``{low, expected, high}``, whether the KV pool limits and from which concurrency, the basis
(calibrated on measured runs, or extrapolated) and plain notes. Domain errors are 422s naming the field.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from app.web.inputs.links import to_query
from app.web.inputs.params import StrictPlannerParams
from app.web.inputs.resolve import resolve_strict
from app.web.speed.service import performance_for

router = APIRouter(prefix="/api", tags=["api"])


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
