"""One engine step priced both ways: physics.step_seconds and the simulation's folded rates."""

from __future__ import annotations

from app.core.perf.physics import Coefficients, StepCost, StepPhysics, step_seconds
from app.core.perf.rates import attended, rates_of, stage_seconds


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
