"""The rules heldout_0_33c's misses led to (SOURCES.md there; every quantity of the set is pinned by
test_heldout_configs_0_33.py): LFM2 ShortConv layers, Llama-4's empty no_rope_layers, Voxtral refused from a
transformers config.json, EXAONE-4 / OLMo-3 q/k-norm parameters, an MTP layer an index does not hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.errors import ConfigError
from app.core.hf_config import model_spec_from_hf_config

HELD = Path(__file__).resolve().parents[1] / "data" / "configs" / "heldout_0_33c"


def _config(name: str) -> dict[str, Any]:
    return json.loads((HELD / f"{name}_config.json").read_text(encoding="utf-8"))


def test_lfm2_shortconv_state_sets_the_page() -> None:
    # LFM2.5-VL: 10 ShortConv + 6 attention layers. ShortConv state at TP 8 = conv_dim 2,048 / 8 x (conv_L_cache 3
    # - 1) x 2 B = 1,024 B (0.33.0 mamba_utils.short_conv_state_shape); an attention token-layer = 1 head x (64 + 64)
    # x 2 B = 256 B; ShortConv exports no prefill checkpoints, so block 16 x cdiv(1,024, 16 x 256) = 16 and the
    # conv state is padded to the 4,096 B page.
    spec = model_spec_from_hf_config(_config("LiquidAI--LFM2.5-VL-1.6B"), name="lfm2")
    assert spec.mamba is not None and spec.mamba.kind == "short_conv"
    assert (spec.mamba.intermediate_size, spec.mamba.conv_kernel) == (2048, 3)
    assert [k.value for k in spec.layer_kinds].count("mamba") == 10


def test_llama4_empty_no_rope_layers_means_every_fourth_nope() -> None:
    # transformers Llama4TextConfig: `no_rope_layers if no_rope_layers else default` (a NoPE layer every 4th):
    # [] is the default, not a 0-entry list; 36 chunked + 12 full for 48 layers.
    spec = model_spec_from_hf_config(
        _config("RedHatAI--Llama-4-Scout-17B-16E-Instruct-FP8-dynamic"), name="scout-fp8"
    )
    kinds = [k.value for k in spec.layer_kinds]
    assert kinds[:4] == ["chunked", "chunked", "chunked", "full"]
    assert (kinds.count("chunked"), kinds.count("full")) == (36, 12)


def test_voxtral_from_transformers_config_is_refused_naming_the_field() -> None:
    with pytest.raises(ConfigError) as err:
        model_spec_from_hf_config(_config("mistralai--Voxtral-Mini-3B-2507"), name="voxtral")
    assert err.value.field == "audio_config.downsample_factor"
    assert "params.json" in str(err.value)


def test_voxtral_with_the_field_mistral_sets_is_planned() -> None:
    config = _config("mistralai--Voxtral-Mini-3B-2507")
    config["audio_config"]["downsample_factor"] = 4  # what transformers_utils/configs/mistral.py writes
    spec = model_spec_from_hf_config(config, name="voxtral")
    assert (spec.num_layers, spec.num_kv_heads, spec.head_size) == (30, 8, 128)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        # EXAONE-4.0: + 64 layers x 2 x head_dim 128 per-head q/k norms = 16,384 (models/exaone4.py)
        ("LGAI-EXAONE--EXAONE-4.0-32B", 32_003_216_384),
        # OLMo-3.1: + 64 x (40 x 128 + 8 x 128) = 393,216 for q/k norms over the whole projections
        ("allenai--Olmo-3.1-32B-Instruct", 32_233_522_176),
    ],
)
def test_qk_norm_parameters(name: str, params: int) -> None:
    assert model_spec_from_hf_config(_config(name), name=name).params_total == params


def _reap(index: dict[str, Any]):  # type: ignore[no-untyped-def]
    return model_spec_from_hf_config(
        _config("bryce-hoehn--Qwen3.5-18B-REAP-A3B-Coding"), name="reap", safetensors_index=index
    )


def test_an_mtp_layer_the_index_does_not_hold_is_not_taken_off() -> None:
    # The REAP checkpoint declares mtp_num_hidden_layers 1 but stores no mtp.* tensor. fp16 and unquantized, its
    # total_size 37,087,995,136 is exactly the 18,543,997,568 parameters counted from config.json x 2 B, so vLLM
    # loads all of it (no MTP layer to take off: attention 27,263,488 + MoE 406,063,104 + 2 norms 4,096 + fc
    # 2 x 2,048^2 + 3 norms 6,144 = 441,725,440 parameters, 883,450,880 B)
    assert _reap({"metadata": {"total_size": 37_087_995_136}}).weights_bytes_exact == 37_087_995_136
    # a weight_map decides by its names when there is one: without mtp.* nothing is taken off...
    stored = {
        "metadata": {"total_size": 37_087_995_136},
        "weight_map": {"model.language_model.norm.weight": "a"},
    }
    assert _reap(stored).weights_bytes_exact == 37_087_995_136
    # ...and with one the layer is, as for Qwen3.5-27B (test_weights_2026_12)
    stored["weight_map"]["mtp.fc.weight"] = "b"
    assert _reap(stored).weights_bytes_exact == 37_087_995_136 - 883_450_880
