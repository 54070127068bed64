"""The workload simulator's inputs and outputs: length distributions, request classes, the workload,
the engine knobs, and the result (frozen pydantic models, validated at the edge)."""

from __future__ import annotations

import math
import random
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.core.blocks import NULL_BLOCKS
from app.core.text import Msg, Text

MAX_NUM_REQUESTS = 100_000  # keeps one simulation well under a few seconds (bench/workload.py)
MAX_SERIES_POINTS = 400  # the time series is downsampled (stride doubling) to at most this many points
DEFAULT_PREFIX_GROUP = "default"
# Shares are relative weights: a million to one is any mix worth simulating, and a finite sum of
# 32 shares (random.choices adds them up) then stays far from float overflow.
MAX_SHARE = 1e6
MAX_LENGTH_TOKENS = 10_000_000  # as max_model_len's own bound

BindingLimit = Literal["kv_pool", "max_num_seqs", "max_model_len", "none"]
RejectReason = Literal["max_model_len", "kv_pool"]
BlockedBy = Literal["kv_pool", "max_num_seqs", "max_num_batched_tokens"]


class FrozenModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class UniformLength(FrozenModel):
    """Token counts uniformly distributed on the integers [low, high]."""

    dist: Literal["uniform"]
    low: int = Field(ge=1, le=MAX_LENGTH_TOKENS)
    high: int = Field(ge=1, le=MAX_LENGTH_TOKENS)

    @model_validator(mode="after")
    def _ordered(self) -> UniformLength:
        if self.low > self.high:
            raise ValueError(Text("low ({low}) must be <= high ({high})", low=self.low, high=self.high))
        return self


class LognormalLength(FrozenModel):
    """round(median x exp(sigma x N(0, 1))), clamped to [min, max] — long-tailed lengths."""

    dist: Literal["lognormal"]
    median: int = Field(ge=1, le=MAX_LENGTH_TOKENS)
    sigma: float = Field(ge=0.0, le=4.0, allow_inf_nan=False)
    max: int = Field(ge=1, le=MAX_LENGTH_TOKENS)
    min: int = Field(default=1, ge=1, le=MAX_LENGTH_TOKENS)

    @model_validator(mode="after")
    def _ordered(self) -> LognormalLength:
        if not self.min <= self.median <= self.max:
            raise ValueError(
                Text(
                    "need min <= median <= max, got {min}, {median}, {max}",
                    min=self.min,
                    median=self.median,
                    max=self.max,
                )
            )
        return self


LengthDist = (
    Annotated[int, Field(ge=1, le=MAX_LENGTH_TOKENS)]
    | Annotated[UniformLength | LognormalLength, Field(discriminator="dist")]
)


def length_bounds(dist: LengthDist) -> tuple[int, int]:
    """The smallest and largest token count a length distribution can produce."""
    if isinstance(dist, int):
        return dist, dist
    if isinstance(dist, UniformLength):
        return dist.low, dist.high
    return dist.min, dist.max


def sample_length(dist: LengthDist, rng: random.Random) -> int:
    if isinstance(dist, int):
        return dist
    if isinstance(dist, UniformLength):
        return rng.randint(dist.low, dist.high)
    value = round(dist.median * math.exp(dist.sigma * rng.normalvariate(0.0, 1.0)))
    return min(max(value, dist.min), dist.max)


class RequestClass(FrozenModel):
    """A kind of request: its share of the traffic, its lengths and the prefix it shares.

    ``prompt_tokens`` counts the whole prompt, shared prefix included.
    """

    share: float = Field(gt=0.0, le=MAX_SHARE, allow_inf_nan=False)
    prompt_tokens: LengthDist
    output_tokens: LengthDist
    shared_prefix_tokens: int = Field(default=0, ge=0, le=MAX_LENGTH_TOKENS)
    prefix_group: str = Field(default=DEFAULT_PREFIX_GROUP, min_length=1, max_length=64)

    @model_validator(mode="after")
    def _prefix_inside_prompt(self) -> RequestClass:
        shortest, _ = length_bounds(self.prompt_tokens)
        if self.shared_prefix_tokens > shortest:
            raise ValueError(
                Text(
                    "shared_prefix_tokens ({shared_prefix_tokens}) exceeds the shortest prompt ({shortest})",
                    shared_prefix_tokens=self.shared_prefix_tokens,
                    shortest=shortest,
                )
            )
        return self


class WorkloadSpec(FrozenModel):
    """Request classes, how many requests, and how they arrive (closed or open loop)."""

    classes: list[RequestClass] = Field(min_length=1, max_length=32)
    num_requests: int = Field(ge=1, le=MAX_NUM_REQUESTS)
    concurrency: int | None = Field(default=None, ge=1, le=MAX_NUM_REQUESTS)  # closed loop
    arrival_rate: float | None = Field(
        default=None, ge=1e-4, le=1e4, allow_inf_nan=False
    )  # requests per step, Poisson
    seed: int = 0

    @model_validator(mode="after")
    def _one_arrival_mode(self) -> WorkloadSpec:
        if (self.concurrency is None) == (self.arrival_rate is None):
            raise ValueError(
                Text("give exactly one of concurrency (closed loop) or arrival_rate (open loop)")
            )
        return self


class EngineParams(FrozenModel):
    """The vLLM engine knobs the simulation depends on."""

    num_gpu_blocks: int = Field(ge=NULL_BLOCKS + 1, le=100_000_000)  # as logged: includes the null block
    block_size: int = Field(ge=1, le=16_384)
    max_num_seqs: int = Field(ge=1, le=65_536)
    max_model_len: int = Field(ge=1, le=100_000_000)
    max_num_batched_tokens: int = Field(ge=1, le=100_000_000)
    enable_prefix_caching: bool = True

    @model_validator(mode="after")
    def _budget_covers_decodes(self) -> EngineParams:
        # vLLM's SchedulerConfig refuses max_num_batched_tokens < max_num_seqs.
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise ValueError(
                Text(
                    "max_num_batched_tokens ({max_num_batched_tokens}) must be >= max_num_seqs ({max_num_seqs})",
                    max_num_batched_tokens=self.max_num_batched_tokens,
                    max_num_seqs=self.max_num_seqs,
                )
            )
        return self


class KVSeries(FrozenModel):
    """Downsampled per-step state after the step's finished requests are freed (as vLLM reports)."""

    step: list[int]
    kv_usage: list[float]  # 1 - free / (num_gpu_blocks - 1), vLLM's kv_cache_usage_perc
    running: list[int]
    waiting: list[int]


class WorkloadResult(FrozenModel):
    """What the simulation observed. Step quantities are taken at the forward pass of each step."""

    num_gpu_blocks: int
    usable_blocks: int  # num_gpu_blocks - NULL_BLOCKS
    block_size: int
    steps: int
    finished: int
    rejected: int
    rejected_by_reason: dict[str, int]
    preemptions: int
    peak_blocks_used: int
    peak_kv_usage: float
    mean_kv_usage: float
    max_running: int
    mean_running: float
    mean_waiting: float
    admission_blocked_steps: dict[BlockedBy, int]  # steps whose FIFO admission stopped, by what stopped it
    prefix_tokens_hit: int
    prompt_tokens_queried: int
    prefix_hit_rate: float
    fragmentation_waste_fraction: float
    binding_limit: BindingLimit
    binding_explanation: Msg
    series: KVSeries
