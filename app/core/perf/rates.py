"""The step-time model as a handful of per-unit rates, for the benchmark simulation's inner loop.

:func:`app.core.perf.physics.step_seconds` builds a :class:`StepCost` with every partial term (what the
fit and the notes need); a simulated benchmark evaluates thousands of steps, so :func:`rates_of` folds
the same physics and coefficients into seconds per step, per token, per context token, and
:func:`stage_seconds` adds them up. The two give the same seconds (a unit test checks it to 1e-12).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.perf.physics import (
    Coefficients,
    StepPhysics,
    attention_rate,
    host_step_seconds,
    layer_floor_s,
    prefill_attention_flops,
    touched_expert_fraction,
    with_host,
)


@dataclass(frozen=True)
class StepRates:
    """Seconds of one pipeline stage's step, per unit of what the step carries."""

    fixed_s: float  # overheads, collective latencies, dense weights' read, host-offloaded weights
    per_token_s: float  # GEMMs and all-reduce bytes per token scheduled (decode or prefill)
    per_decode_token_s: float  # scheduler/sampler work per decoding sequence, its DP expert exchange
    per_prefill_token_s: float  # the prompt token's KV written, its DP expert exchange (bulk rate)
    per_context_token_s: float  # a decode token reading one context token's KV (and its attention)
    per_prefill_context_s: float  # attention of one prompt token over one token of its context
    expert_bytes_s: float  # every routed expert's weights read once
    num_experts: int
    experts_per_token: int
    moe_tokens_scale: int
    memory_fixed_s: float  # the memory-bound part of fixed_s (for the regime)
    memory_per_context_s: float  # the memory-bound part of per_context_token_s
    windowed_share: float  # share of KV in sliding/chunked layers
    window_tokens: int
    host_step_s: float = 0.0  # the host's work per engine step (physics.Coefficients.host_step_s)
    host_request_s: float = 0.0  # and per request scheduled in it
    host_overlapped: bool = True  # async scheduling: the host's work hides behind the device's
    # a step past the captured graphs launches its layers one by one (uncaptured.py): the launches' seconds
    # (0: not modelled), the graph limit and whether V0's decode-only rule applies
    uncaptured_launch_s: float = 0.0
    graph_token_limit: int = 0
    v0_graphs: bool = False
    uncaptured_serial: bool = False  # the launches add to the device's work (else they overlap it)


def engine_step_seconds(rates: StepRates, *, device_s: float, requests: float) -> float:
    """One engine step of ``requests`` scheduled requests whose device work (every stage) takes
    ``device_s``: the host's work overlapped with it or added to it (physics.with_host)."""
    host = rates.host_step_s + rates.host_request_s * requests
    return with_host(device_s=device_s, host_s=host, overlapped=rates.host_overlapped)


def rates_of(*, physics: StepPhysics, coefficients: Coefficients) -> StepRates:
    bandwidth = physics.bandwidth_bytes_per_s * coefficients.bandwidth_efficiency
    dense_rate = physics.peak_flops_per_s * coefficients.compute_efficiency
    attention = attention_rate(physics) * coefficients.compute_efficiency
    expert_rate = physics.peak_flops_per_s * coefficients.moe_compute_efficiency
    link = physics.link_bytes_per_s
    fixed = (
        coefficients.step_overhead_s
        + layer_floor_s(physics=physics, coefficients=coefficients)
        + physics.collectives_per_step * coefficients.collective_latency_s
        + physics.pcie_ring_s
        + physics.dense_weight_bytes / bandwidth
        + physics.host_weight_bytes / physics.host_link_bytes_per_s
    )
    return StepRates(
        fixed_s=fixed,
        per_token_s=physics.gemm_flops_per_token / dense_rate
        + physics.expert_flops_per_token / expert_rate
        + physics.collective_bytes_per_token / link / coefficients.link_efficiency,
        per_decode_token_s=coefficients.token_overhead_s
        + physics.exchange_bytes_per_token / link / coefficients.exchange_efficiency,
        per_prefill_token_s=physics.kv_bytes_per_token / bandwidth
        + physics.exchange_bytes_per_token / link / coefficients.link_efficiency,
        per_context_token_s=physics.kv_bytes_per_token / bandwidth
        + physics.attention_flops_per_context_token / attention,
        per_prefill_context_s=prefill_attention_flops(physics) / attention,
        expert_bytes_s=physics.expert_weight_bytes / bandwidth,
        num_experts=physics.num_experts,
        experts_per_token=physics.experts_per_token,
        moe_tokens_scale=physics.moe_tokens_scale,
        memory_fixed_s=physics.dense_weight_bytes / bandwidth,
        memory_per_context_s=physics.kv_bytes_per_token / bandwidth,
        windowed_share=physics.windowed_kv_share,
        window_tokens=physics.kv_window_tokens,
        host_step_s=host_step_seconds(coefficients, tensor_parallel_size=physics.tensor_parallel_size),
        host_request_s=coefficients.host_request_s,
        host_overlapped=physics.host_overlapped,
        uncaptured_launch_s=physics.layers_on_device
        * coefficients.eager_layer_s
        * coefficients.uncaptured_share
        if coefficients.uncaptured_launch and not physics.eager
        else 0.0,
        graph_token_limit=physics.graph_token_limit,
        v0_graphs=physics.v0_graphs,
        uncaptured_serial=coefficients.uncaptured_serial,
    )


def attended(rates: StepRates, context_tokens: float) -> float:
    """The context one token's attention reads (sliding layers read at most their window)."""
    if not rates.window_tokens:
        return context_tokens
    share = rates.windowed_share
    return (1 - share) * context_tokens + share * min(context_tokens, float(rates.window_tokens))


def expert_seconds(rates: StepRates, tokens: float) -> float:
    if not rates.num_experts:
        return rates.expert_bytes_s
    return rates.expert_bytes_s * touched_expert_fraction(
        num_experts=rates.num_experts,
        experts_per_token=rates.experts_per_token,
        tokens=tokens * rates.moe_tokens_scale,
    )


def stage_seconds(
    rates: StepRates,
    *,
    decode_tokens: float,
    decode_context_sum: float,
    prefill_tokens: float,
    prefill_context_sum: float,
) -> float:
    """One step of one stage: ``decode_context_sum`` is the attended context summed over the decoding
    sequences, ``prefill_context_sum`` the sum over prompt tokens of the context each attends to."""
    return (
        rates.fixed_s
        + (decode_tokens + prefill_tokens) * rates.per_token_s
        + decode_tokens * rates.per_decode_token_s
        + prefill_tokens * rates.per_prefill_token_s
        + decode_context_sum * rates.per_context_token_s
        + prefill_context_sum * rates.per_prefill_context_s
        + expert_seconds(rates, decode_tokens + prefill_tokens)
    )
