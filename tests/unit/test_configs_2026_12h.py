"""Round 9 (issue 22) rules for quantized checkpoints, each number worked by hand from the vLLM 0.33.0 wheel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.catalog import find_device
from app.core.errors import ConfigError
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.hf_config.params import ParamBreakdown
from app.core.hf_config.quant_ignore import unconverted_fraction
from app.core.specs import ServeConfig

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


def test_awq_entries_naming_no_attention_or_mlp_word_still_match_as_substrings() -> None:
    # review9a: is_layer_skipped's substring mode (0.33.0 utils/quant_utils.py: any(layer in prefix)) also skips a
    # linear for an entry such as "model.layers.0." (every linear of layer 0) or "proj" (every linear); the
    # planner counted nothing for them. PARTS: attention 400 + MLP 600 over 4 layers.
    assert _left({"quant_method": "awq", "modules_to_not_convert": ["model.layers.0."]}) == pytest.approx(
        (400 + 600) / 4 / 1_000
    )
    assert _left({"quant_method": "awq", "modules_to_not_convert": ["proj"]}) == pytest.approx(1.0)
    # "layers.1" is in layers 1 and 10-19's prefixes; of 4 layers only layer 1: 250 / 1,000
    assert _left({"quant_method": "awq", "modules_to_not_convert": ["layers.1"]}) == pytest.approx(0.25)
    # "o_proj" names one leaf: q/o are heads x head of 2 x (8 + 2) -> 8/20 of attention = 160
    assert _left({"quant_method": "awq", "modules_to_not_convert": ["o_proj"]}) == pytest.approx(0.16)


def test_fp8_reads_ignored_layers_before_modules_to_not_convert() -> None:
    # 0.33.0 quantization/fp8.py Fp8Config.from_config: ignored_layers = config["ignored_layers"], and only when it
    # is empty modules_to_not_convert; exact match. Layer 0's q_proj by its full prefix: 400 x 8/20 / 4 = 40
    q0 = "model.layers.0.self_attn.q_proj"
    assert _left({"quant_method": "fp8", "ignored_layers": [q0]}) == pytest.approx(40 / 1_000)
    both = {
        "quant_method": "fp8",
        "ignored_layers": [q0],
        "modules_to_not_convert": ["model.layers.1.self_attn.q_proj"],
    }
    assert _left(both) == pytest.approx(40 / 1_000)  # ignored_layers wins
    assert _left({**both, "ignored_layers": []}) == pytest.approx(
        40 / 1_000
    )  # empty: falls back to the other


def test_fp8_modules_to_not_convert_stay_exact() -> None:
    # 0.33.0 quantization/fp8.py Fp8Config: ignored_layers_match_mode "exact" -> prefix in ignored_layers; a bare
    # parent name equals no linear's prefix, so nothing is left unconverted
    assert (
        _left({"quant_method": "fp8", "modules_to_not_convert": ["self_attn", "model.layers.0.mlp"]}) == 0.0
    )


def _ultravox() -> dict[str, object]:
    path = (
        Path(__file__).parents[1]
        / "data/configs/heldout_0_33i/bhzhao19--ultravox-v0_6-llama-3_1-8b_config.json"
    )
    return dict(json.loads(path.read_text(encoding="utf-8")))


def test_text_model_id_is_read_as_that_models_config() -> None:
    # 0.33.0 transformers_utils/configs/ultravox.py UltravoxConfig.__setattr__: text_model_id loads that model's
    # config (meta-llama/Llama-3.1-8B-Instruct: 32 layers, 8 KV heads x 128, 131,072 positions). At TP 2 on H100
    # (FLASH_ATTN, block 16): 32 x (8 // 2) x 2 x 128 x 2 B = 65,536 B a token; page 16 x 2,048 = 32,768
    spec = model_spec_from_hf_config(_ultravox(), name="ultravox")
    assert (spec.num_layers, spec.num_kv_heads, spec.head_size, spec.max_model_len_derived) == (
        32,
        8,
        128,
        131072,
    )
    est = estimate(
        model=spec,
        device=find_device("h100"),
        serve=ServeConfig(tensor_parallel_size=2, max_model_len=8192),
        vllm_version="0.33.0",
    )
    assert (est.attention_backend, est.kv_bytes_per_token, est.groups[0].page_size_bytes) == (
        "FLASH_ATTN",
        65_536,
        32_768,
    )


def test_text_model_id_outside_the_catalog_names_the_field() -> None:
    config = _ultravox() | {"text_model_id": "someone/not-in-the-catalog-8B"}
    with pytest.raises(ConfigError) as err:
        model_spec_from_hf_config(config, name="ultravox")
    assert err.value.field == "text_model_id"
    assert "someone/not-in-the-catalog-8B" in str(err.value)
    # with the text config pasted beside an unknown id, that text config is read
    text = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4,
            "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 1000, "max_position_embeddings": 4096}  # fmt: skip
    assert model_spec_from_hf_config(config | {"text_config": text}, name="u").num_layers == 2


def test_gptq_does_not_read_modules_to_not_convert() -> None:
    # 0.33.0 quantization/auto_gptq.py AutoGPTQConfig.from_config reads bits, group_size, desc_act, sym, lm_head,
    # dynamic, autoround_version... and never modules_to_not_convert: every linear stays GPTQ (skips go through
    # `dynamic`), so the named modules are not 16-bit. The same list under AWQ (or FP8, exact names) leaves the four
    # down_proj 16-bit: 600 x 1/3 (one of three MLP projections) = 200 of a 1,000 body.
    names = [f"model.layers.{i}.mlp.down_proj" for i in range(4)]
    assert _left({"quant_method": "gptq", "bits": 4, "modules_to_not_convert": names}) == 0.0
    assert _left({"quant_method": "awq", "bits": 4, "modules_to_not_convert": names}) == pytest.approx(0.2)
    assert _left({"quant_method": "fp8", "modules_to_not_convert": names}) == pytest.approx(0.2)
