"""The lm_head runs on the tokens vLLM samples, not on every prompt token (physics.step_physics)."""

from __future__ import annotations

import pytest

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.perf.physics import step_physics, step_seconds
from app.core.perf.predict import fit_for
from app.core.perf.rates import rates_of, stage_seconds
from app.core.specs import ServeConfig


@pytest.fixture(scope="module")
def llama8b() -> tuple:
    model, device = find_model("meta-llama/Llama-3.1-8B-Instruct"), find_device("nvidia-h100-sxm-80gb")
    serve = ServeConfig(max_model_len=8192)
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.19.0")
    coefficients = fit_for(family="hopper", vllm_version="0.19.0")[1].bench_coefficients()
    return step_physics(estimate=est, model=model, device=device, serve=serve), coefficients


def test_the_lm_head_is_apart_from_the_body(llama8b: tuple) -> None:
    physics, _ = llama8b
    # Llama-3.1-8B: 8,030,261,248 parameters, untied 128,256 x 4,096 = 525,336,576 embedding and lm_head
    # each; body 8,030,261,248 - 2 x 525,336,576 = 6,979,588,096, so 13,959,176,192 FLOPs a token
    assert physics.gemm_flops_per_token == 2 * 6_979_588_096
    # the lm_head: 2 x 525,336,576 = 1,050,673,152 FLOPs a sampled token (before: on every token)
    assert physics.lm_head_flops_per_token == 2 * 525_336_576


def test_a_prompt_chunk_pays_no_lm_head_a_decode_token_does(llama8b: tuple) -> None:
    physics, coefficients = llama8b
    prefill = step_seconds(
        physics=physics,
        coefficients=coefficients,
        decode_tokens=0,
        prefill_tokens=2048,
        decode_context_tokens=0,
        prefill_context_tokens=1024,
    )
    decode = step_seconds(
        physics=physics,
        coefficients=coefficients,
        decode_tokens=64,
        prefill_tokens=0,
        decode_context_tokens=1024,
        prefill_context_tokens=0,
    )
    attention_per_context_token = physics.attention_flops_per_context_token
    # 2,048 prompt tokens: body GEMMs and attention over 1,024 tokens of context on average, no lm_head
    assert prefill.flops == pytest.approx(2048 * (13_959_176_192 + attention_per_context_token * 1024))
    # 64 decode tokens: body, lm_head and attention over 1,024 tokens each
    assert decode.flops == pytest.approx(
        64 * (13_959_176_192 + 1_050_673_152 + attention_per_context_token * 1024)
    )
    # the simulation's rates give the same seconds
    rates = rates_of(physics=physics, coefficients=coefficients)
    for cost, (d, p, dctx, pctx) in (
        (prefill, (0, 2048, 0.0, 2048 * 1024.0)),
        (decode, (64, 0, 64 * 1024.0, 0.0)),
    ):
        seconds = stage_seconds(
            rates, decode_tokens=d, decode_context_sum=dctx, prefill_tokens=p, prefill_context_sum=pctx
        )
        assert seconds == pytest.approx(cost.seconds, rel=1e-12)
