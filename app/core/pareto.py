"""The throughput / interactivity Pareto frontier of a fleet search (the chart `vllm bench sweep …
plot_pareto` and every performance study draws): output tokens/s per device against tokens/s per user.

A point is one replica layout at one client count the fleet search evaluated (no extra performance
call: the search's own probes). A point is on the frontier when no other point is at least as good on
both axes and better on one. The SLO appears as a line on the per-user axis: TPOT ≤ S ms is exactly
per-user speed ≥ 1000 / S tokens/s (the performance model's per-user speed is 1000 / TPOT).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from app.core.result import Range
from app.core.specs import ServeConfig

MS_PER_S = 1000.0


class ParetoPoint(BaseModel):
    model_config = ConfigDict(frozen=True)

    tokens_per_s_per_device: float  # expected output tokens/s of the replica / its devices
    tokens_per_s_per_user: float  # expected 1000 / TPOT
    layout: str  # "TP 4 × PP 1, weights fp8, KV fp8"
    tensor_parallel_size: int
    pipeline_parallel_size: int
    data_parallel_size: int
    devices_per_replica: int
    quantization: str | None
    weight_format: str
    kv_cache_dtype: str
    concurrency: int  # closed-loop clients per replica
    ttft_ms: Range  # with its band (Performance's ttft_ms / tpot_ms)
    tpot_ms: Range
    regime: str = ""  # what binds the speed at this point (Performance.regime)
    meets_slo: bool  # expected TTFT and TPOT within the SLO
    serve: ServeConfig
    command: str


def slo_tokens_per_s_per_user(slo_tpot_ms: float) -> float:
    """The SLO line: a TPOT limit of S ms is a per-user speed of at least 1000 / S tokens/s."""
    return MS_PER_S / slo_tpot_ms


def frontier(points: list[ParetoPoint]) -> list[ParetoPoint]:
    """The non-dominated points, fastest per user first (so per-device throughput rises along the list).

    Sorted by per-user speed (descending, ties by per-device throughput descending), a point is kept
    when its per-device throughput beats every faster point's: nothing faster serves more per device.
    """
    ordered = sorted(points, key=lambda p: (-p.tokens_per_s_per_user, -p.tokens_per_s_per_device))
    kept: list[ParetoPoint] = []
    best = float("-inf")
    for point in ordered:
        if point.tokens_per_s_per_device > best:
            kept.append(point)
            best = point.tokens_per_s_per_device
    return kept
