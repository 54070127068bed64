"""Dense MLA prefills in the up-projected multi-head form and decodes in the absorbed multi-query form.

vLLM 0.33.0 vllm/model_executor/layers/attention/mla_attention.py: the module note ("MLA Common Components") describes
the "compute friendly approach" for prefill (q_nope and k_nope = kv_c @ W_UK per head, SDPA with Q.K over
qk_nope + qk_rope and P.V over v_head_dim) and the "data-movement friendly approach" for decode (MQA over the cached
latent: Q.K over kv_lora_rank + qk_rope, P.V over kv_lora_rank), and ``forward`` sends the decode tokens
(num_decode_tokens) to ``forward_mqa`` and the others to ``forward_mha``; 0.11.0 (the release of the H20 runs below)
does the same in vllm/v1/attention/backends/mla/common.py, MLACommonImpl.forward: _forward_prefill up-projects k_nope
and v with kv_b_proj, decode multiplies the query into the latent with W_UK. The step model used to price every token,
prompt tokens too, in the absorbed form; round 16's never-fit DeepSeek-R1 runs on 8 H20-3e (sources-r16) came out
1.9-2.7x slow on prompts of 10k-100k tokens for it.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.perf.physics import (
    StepPhysics,
    mla_prefill_head_dims,
    prefill_attention_flops,
    step_physics,
    step_seconds,
)
from app.core.perf.predict import fit_for
from app.core.perf.rates import rates_of
from app.core.specs import ServeConfig
from tests.unit.test_hf_config import catalog_config


def _physics(model_id: str, device_id: str = "nvidia-h20-3e-141gb", tp: int = 8) -> StepPhysics:
    model = find_model(model_id)
    device = find_device(device_id)
    serve = ServeConfig(tensor_parallel_size=tp, max_model_len=16384)
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.11.0")
    return step_physics(estimate=est, model=model, device=device, serve=serve)


def test_deepseek_r1_prompt_attention_is_the_up_projected_form() -> None:
    # DeepSeek-R1 config.json: 128 heads, kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128,
    # v_head_dim 128, 61 layers, all MLA. Per (token, context token), 2 matmuls x 2 FLOPs a MAC, 61 layers / TP 8:
    # decode (absorbed): 4 x 61 x 128 x (576 + 512) / 2 / 8 = 2,123,776; prefill: 4 x 61 x 128 x (192 + 128) / 2 / 8
    # = 624,640, 3.4x fewer
    physics = _physics("deepseek-ai/DeepSeek-R1")
    assert physics.attention_flops_per_context_token == 2_123_776
    assert physics.prefill_attention_flops_per_context_token == 624_640
    assert prefill_attention_flops(physics) == 624_640


def test_a_prompt_chunk_pays_the_up_projected_attention_and_a_decode_token_the_absorbed() -> None:
    physics = _physics("deepseek-ai/DeepSeek-R1")
    coefficients = fit_for(family="hopper", vllm_version="0.11.0")[1].coefficients()
    rate = (physics.attention_flops_per_s or physics.peak_flops_per_s) * coefficients.compute_efficiency

    def seconds(*, decode: int, prefill: int, context: float) -> float:
        return step_seconds(
            physics=physics,
            coefficients=coefficients,
            decode_tokens=decode,
            prefill_tokens=prefill,
            decode_context_tokens=context if decode else 0,
            prefill_context_tokens=context if prefill else 0,
        ).dense_compute_seconds

    # an 8,192-token chunk seeing 50,000 tokens of context on average: 8,192 x 50,000 x 624,640 FLOPs
    chunk = seconds(decode=0, prefill=8192, context=50_000) - seconds(decode=0, prefill=8192, context=0)
    assert chunk == pytest.approx(8192 * 50_000 * 624_640 / rate, rel=1e-9)
    # 16 decode tokens at 50,000 of context each: 16 x 50,000 x 2,123,776 FLOPs
    decode = seconds(decode=16, prefill=0, context=50_000) - seconds(decode=16, prefill=0, context=0)
    assert decode == pytest.approx(16 * 50_000 * 2_123_776 / rate, rel=1e-9)
    rates = rates_of(physics=physics, coefficients=coefficients)
    assert rates.per_prefill_context_s == pytest.approx(624_640 / rate, rel=1e-9)


def test_models_that_prefill_as_they_decode_keep_one_attention_cost() -> None:
    # DeepSeek-V3.2 (sparse MLA: indexer cache) and a GQA model carry no separate prefill cost (0: the decode one)
    for model_id in ("deepseek-ai/DeepSeek-V3.2", "meta-llama/Llama-3.1-8B"):
        physics = _physics(model_id, device_id="nvidia-h200-141gb")
        assert physics.prefill_attention_flops_per_context_token == 0
        assert prefill_attention_flops(physics) == physics.attention_flops_per_context_token
    # and a physics without the field (older pickles, hand-built tests) falls back the same way
    physics = replace(_physics("deepseek-ai/DeepSeek-R1"), prefill_attention_flops_per_context_token=0.0)
    assert prefill_attention_flops(physics) == physics.attention_flops_per_context_token


def test_the_config_gives_the_up_projected_widths() -> None:
    # DeepSeek-V2-Lite's config.json with v_head_dim changed to 96: it reaches the MLA block (it is not cached, the
    # page stays the 576-wide latent) and the prefill width follows it: 16 heads x (128 + 64 + 96) / 2 = 2,304
    config = catalog_config("deepseek-ai/DeepSeek-V2-Lite")
    config.update(v_head_dim=96)
    model = model_spec_from_hf_config(config, name="v2-lite-v96")
    assert model.mla is not None
    assert (model.mla.qk_nope_head_dim, model.mla.v_head_dim, model.mla.latent_size) == (128, 96, 576)
    assert mla_prefill_head_dims(model) == 16 * (128 + 64 + 96) / 2
