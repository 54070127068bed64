"""Round 9 (issue 22) rules for quantized checkpoints, each number worked by hand from the vLLM 0.33.0 wheel."""

from __future__ import annotations

import pytest

from app.core.hf_config.params import ParamBreakdown
from app.core.hf_config.quant_ignore import unconverted_fraction

PARTS = ParamBreakdown(
    embedding=0, lm_head=0, attention=400, mixer=0, mlp=600, experts=0, experts_active=0,
    router=0, norms=0, is_moe=False,
)  # fmt: skip


def _left(cfg: dict[str, object]) -> float:
    return unconverted_fraction(cfg, breakdown=PARTS, num_layers=4, heads=8, kv_heads=2)


def test_awq_modules_to_not_convert_match_as_substrings() -> None:
    # 0.33.0 quantization/auto_awq.py AWQConfig.get_quant_method: is_layer_skipped(prefix, modules_to_not_convert,
    # ..., match_mode="substring") -> any(layer in prefix): "self_attn" is in every
    # model.layers.N.self_attn.{qkv,o}_proj, so all attention (400 of a 1,000 body) stays 16-bit
    assert _left({"quant_method": "awq", "modules_to_not_convert": ["self_attn"]}) == pytest.approx(
        400 / 1_000
    )
    # "model.layers.0.mlp" is in layer 0's gate_up_proj / down_proj prefixes: 600 / 4 layers = 150
    assert _left({"quant_method": "awq", "modules_to_not_convert": ["model.layers.0.mlp"]}) == pytest.approx(
        150 / 1_000
    )


def test_fp8_modules_to_not_convert_stay_exact() -> None:
    # 0.33.0 quantization/fp8.py Fp8Config: ignored_layers_match_mode "exact" -> prefix in ignored_layers; a bare
    # parent name equals no linear's prefix, so nothing is left unconverted
    assert (
        _left({"quant_method": "fp8", "modules_to_not_convert": ["self_attn", "model.layers.0.mlp"]}) == 0.0
    )
