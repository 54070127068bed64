"""The Speed section's inputs: the planner's own workload fields (input and output tokens, closed-loop
clients), as the core's Workload."""

from __future__ import annotations

from app.core.perf.schedule import Workload
from app.web.planner.params import PlannerParams


def workload_of(params: PlannerParams) -> Workload:
    return Workload(
        input_tokens=params.input_tokens,
        output_tokens=params.output_tokens,
        concurrency=params.speed_concurrency,
    )
