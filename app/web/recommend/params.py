"""The recommendation's inputs: the planner's parameters plus the target and the room the recommender has."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from app.core.perf.bench_args import BenchArgs
from app.core.perf.measured import MAX_MEASURED_RUNS
from app.core.specs import ServeConfig
from app.web.inputs.params import PlannerParams, StrictPlannerParams, with_serve
from app.web.measured_runs import MeasuredRun

MAX_TOKENS = 10_000_000  # ServeConfig.max_model_len's upper bound
MAX_DEVICES_PER_NODE = 1024
MAX_NODES = 1024


class RecommendRequest(StrictPlannerParams):
    """The /api/estimate parameters (one model: app.web.inputs.params) plus the target and the room the
    recommender has. ``target_max_model_len`` defaults to ``max_model_len`` (else the model's maximum)."""

    target_max_model_len: int | None = Field(default=None, ge=1, le=MAX_TOKENS)
    devices_per_node: int | None = Field(default=None, ge=1, le=MAX_DEVICES_PER_NODE)
    nodes: int = Field(default=1, ge=1, le=MAX_NODES)
    allow_fp8_kv: bool = True
    preference: Literal["latency", "throughput"] = "throughput"
    # `vllm bench serve`'s own arguments, as /api/performance takes them: the speed workload's blank
    # lengths and what the my_runs box's runs start from (else the page's fields num_prompts, ...)
    bench: BenchArgs | None = None
    # your cluster's `vllm bench serve` runs (app/web/measured_runs.py): every speed figure scaled by them
    measured_runs: list[MeasuredRun] = Field(default_factory=list, max_length=MAX_MEASURED_RUNS)


# What the recommender adds to the planner's parameters (not part of a configuration).
RECOMMEND_ONLY = frozenset(RecommendRequest.model_fields) - frozenset(PlannerParams.model_fields)


def params_with(params: PlannerParams, serve: ServeConfig) -> PlannerParams:
    """The planner's inputs with a recommended configuration applied (what a step's permalink and the
    API's ``final`` carry); a device count given by hand grows to hold the new TP × PP (blank follows
    TP × PP by itself)."""
    applied = with_serve(params, serve)
    ranks = serve.ranks
    return applied.model_copy(update={"devices": max(params.devices, ranks) if params.devices else None})
