"""The tensor rates the step model reads: attention's in the KV cache's dtype; a device's without a data sheet figure.

Attention's matmuls run in the KV cache's dtype, not the weights' format.

vLLM's FlashAttention backend multiplies the query by the cached K and V as stored: with the default
``--kv-cache-dtype auto`` an FP8-weight checkpoint still keeps a bf16 cache (the weights' FP8 GEMMs run at the
FP8 tensor rate, attention at BF16's); with ``--kv-cache-dtype fp8`` on Hopper vLLM's FA3 path quantizes the
query and passes q/k/v descales, so attention runs at FP8's rate as well. The H100 SXM data sheet: 989 TFLOPS
dense BF16, 1,979 FP8 (the catalog's 989 x 2).
"""

from __future__ import annotations

import statistics

import pytest

from app.core.catalog import find_device, list_devices
from app.core.perf.physics import (
    MACHINE_BALANCE_FLOP_PER_BYTE,
    StepPhysics,
    bf16_dense_tflops,
    step_seconds,
)
from app.core.perf.predict import fit_for
from app.core.perf.rates import rates_of
from tests.perf_steps import llama70_fp8_h100

H100_BF16_FLOPS = 989e12


def _physics(kv_cache_dtype: str) -> StepPhysics:
    return llama70_fp8_h100(kv_cache_dtype=kv_cache_dtype).physics


def test_fp8_weights_with_a_bf16_cache_attend_at_bf16s_rate() -> None:
    physics = _physics("auto")
    assert physics.peak_flops_per_s == pytest.approx(2 * H100_BF16_FLOPS)  # the GEMMs: FP8
    assert physics.attention_flops_per_s == pytest.approx(H100_BF16_FLOPS)


def test_an_fp8_cache_attends_at_fp8s_rate() -> None:
    assert _physics("fp8").attention_flops_per_s == pytest.approx(2 * H100_BF16_FLOPS)


def test_prefill_attention_seconds_follow_the_attention_rate() -> None:
    # Llama-3.1-70B at TP 8: 64 heads x (128 + 128) / 2 dims, 2 matmuls, 2 FLOPs a MAC, 80 layers / 8 ranks =
    # 4 x 80 x 64 x 128 / 8 = 327,680 FLOPs per (token, context token). One 4,096-token prompt from empty
    # attends to 4,096 x 2,048 pairs on average: 2.75e15 FLOPs; at BF16 (989 TFLOPS x the fitted compute
    # efficiency) that is twice the seconds it would be at FP8's rate.
    physics = _physics("auto")
    assert physics.attention_flops_per_context_token == 4 * 80 * 64 * 128 / 8
    coefficients = fit_for(family="hopper", vllm_version="0.19.0")[1].coefficients()

    def chunk(context: float) -> float:
        return step_seconds(
            physics=physics,
            coefficients=coefficients,
            decode_tokens=0,
            prefill_tokens=4096,
            decode_context_tokens=0,
            prefill_context_tokens=context,
        ).dense_compute_seconds

    attention_s = chunk(2048) - chunk(0)
    expected = 4096 * 2048 * 327_680 / (H100_BF16_FLOPS * coefficients.compute_efficiency)
    assert attention_s == pytest.approx(expected, rel=1e-9)
    rates = rates_of(physics=physics, coefficients=coefficients)
    assert rates.per_prefill_context_s * 4096 * 2048 == pytest.approx(expected, rel=1e-9)


def test_machine_balance_is_the_catalogs_median() -> None:
    ratios = [
        d.bf16_dense_tflops / d.memory_bandwidth_tbps
        for d in list_devices()
        if d.bf16_dense_tflops and d.memory_bandwidth_tbps
    ]
    assert len(ratios) >= 40
    assert statistics.median(ratios) == pytest.approx(MACHINE_BALANCE_FLOP_PER_BYTE, rel=0.05)


def test_a_device_without_a_data_sheet_rate_computes_at_its_bandwidths_balance() -> None:
    # a device given without a TFLOPS figure (e.g. a custom device: only its 0.273 TB/s known, GB10's
    # LPDDR5X): 0.273 x 215 = 58.7 TFLOPS, not an H100's 989
    gb10 = find_device("nvidia-gb10").model_copy(update={"bf16_dense_tflops": None})
    assert bf16_dense_tflops(gb10) == pytest.approx(0.273 * 215)
    assert bf16_dense_tflops(find_device("nvidia-h100-sxm-80gb")) == 989
