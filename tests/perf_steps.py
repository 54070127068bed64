"""One engine step priced both ways: physics.step_seconds and the simulation's folded rates."""

from __future__ import annotations

from dataclasses import MISSING, fields, replace
from typing import NamedTuple

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.perf.physics import Coefficients, StepCost, StepPhysics, step_physics, step_seconds
from app.core.perf.predict import fit_for
from app.core.perf.rates import StepRates, attended, rates_of, stage_seconds
from app.core.perf.simulate import EngineLimits, SimResult, run
from app.core.result import Estimate
from app.core.specs import DeviceSpec, ModelSpec, ServeConfig


def zeros(cls: type) -> dict[str, int]:
    """Every field of a dataclass without a default, at 0."""
    return {f.name: 0 for f in fields(cls) if f.default is MISSING}


# every step costs 10 ms whatever it carries: fixed 10 ms, nothing per token or context (host work overlapped, as
# StepRates defaults; a test wanting it in series replaces host_overlapped)
FLAT_10MS = replace(StepRates(**zeros(StepRates)), fixed_s=0.010, memory_fixed_s=0.010, moe_tokens_scale=1)
# one rank, one stage, room for everything: 8 sequences, an 8,192-token budget, 10,000 blocks of 16, one KV group
ROOMY_LIMITS = replace(
    EngineLimits(**zeros(EngineLimits)),
    max_num_seqs=8,
    max_num_batched_tokens=8192,
    pool_blocks=10_000,
    block_size=16,
    growth_groups=1,
    pipeline_stages=1,
)

# FLAT_10MS with the host's work in series (no async scheduling's extra step)
FLAT_SERIAL = replace(FLAT_10MS, host_overlapped=False)


def serial_run(
    *,
    prompts: list[int],
    outputs: list[int],
    send_at: list[float],
    max_concurrency: int | None = None,
    **terms: float | int,
) -> SimResult:
    """simulate.run on FLAT_SERIAL and ROOMY_LIMITS with no fixed overhead and no prefix; ``terms`` are the
    run's per-request extras under test (overhead_per_prompt_token_s, tokenizer_workers, frontend_stream_s)."""
    return run(
        rates=FLAT_SERIAL,
        limits=ROOMY_LIMITS,
        prompts=prompts,
        outputs=outputs,
        send_at=send_at,
        max_concurrency=max_concurrency,
        overhead_s=0.0,
        prefix_tokens=0,
        **terms,
    )


class PlannedStep(NamedTuple):
    model: ModelSpec
    device: DeviceSpec
    serve: ServeConfig
    estimate: Estimate
    physics: StepPhysics
    coefficients: Coefficients


def step_both_ways(
    *,
    physics: StepPhysics,
    coefficients: Coefficients,
    decode_tokens: int = 40,
    prefill_tokens: int = 2000,
    decode_context_tokens: int = 1500,
    prefill_context_tokens: int = 1000,
) -> tuple[StepCost, float]:
    """``decode_tokens`` decodes at ``decode_context_tokens`` of context plus a ``prefill_tokens`` chunk
    whose tokens see ``prefill_context_tokens`` on average (by default 40 at 1,500 and 2,000 seeing
    1,000): (step_seconds' cost, stage_seconds over rates_of), which must be the same physics."""
    cost = step_seconds(
        physics=physics,
        coefficients=coefficients,
        decode_tokens=decode_tokens,
        prefill_tokens=prefill_tokens,
        decode_context_tokens=decode_context_tokens,
        prefill_context_tokens=prefill_context_tokens,
    )
    rates = rates_of(physics=physics, coefficients=coefficients)
    seconds = stage_seconds(
        rates,
        decode_tokens=decode_tokens,
        decode_context_sum=decode_tokens * attended(rates, decode_context_tokens),
        prefill_tokens=prefill_tokens,
        prefill_context_sum=prefill_tokens * attended(rates, prefill_context_tokens),
    )
    return cost, seconds


def llama70_fp8_h100(*, vllm_version: str = "0.19.0", kv_cache_dtype: str = "auto") -> PlannedStep:
    """nvidia/Llama-3.1-70B-Instruct-FP8 on 8 H100 SXM at max_model_len 4,096: the perf tests' usual case."""
    model = find_model("nvidia/Llama-3.1-70B-Instruct-FP8")
    device = find_device("nvidia-h100-sxm-80gb")
    serve = ServeConfig(tensor_parallel_size=8, max_model_len=4096, kv_cache_dtype=kv_cache_dtype)
    est = estimate(model=model, device=device, serve=serve, vllm_version=vllm_version)
    physics = step_physics(estimate=est, model=model, device=device, serve=serve)
    coefficients = fit_for(family="hopper", vllm_version=vllm_version)[1].coefficients()
    return PlannedStep(model, device, serve, est, physics, coefficients)
