"""Rules the fifth held-apart set (tests/data/configs/heldout_0_33e, SOURCES.md) found.

Each number is worked by hand from the named vLLM release's code and the config.json / index in that directory
(SOURCES.md gives each one's repository and commit). The set's blind score is in its SOURCES.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.catalog import find_device
from app.core.errors import ConfigError
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.hf_config.registry import check_quant_method, quant_methods_removed
from app.core.plan import apply_quantization_flag
from app.core.specs import ServeConfig

HELD = Path(__file__).resolve().parents[1] / "data" / "configs" / "heldout_0_33e"
BNB_NF4 = "IrfanUruchi--Llama-2-13B-Computer-Engineering-"


def _load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((HELD / name).read_text(encoding="utf-8"))
    return loaded


def _plan(config: dict[str, Any], *, release: str, index: dict[str, Any] | None = None) -> Any:
    return estimate(
        model=model_spec_from_hf_config(config, name="t", safetensors_index=index),
        device=find_device("h100"),
        serve=ServeConfig(tensor_parallel_size=8, max_model_len=2_048),
        vllm_version=release,
    )


def test_removed_quantization_methods_are_the_wheels() -> None:
    # QuantizationMethods in model_executor/layers/quantization/__init__.py: "bitsandbytes" is in 0.27.1's
    # (with bitsandbytes.py) and not in 0.28.0's; "gguf" leaves in 0.24.0, "cpu_awq" in 0.23.0, "petit_nvfp4"
    # in 0.20.0, "ptpc_fp8" in 0.19.0 (scripts/gen_quant_methods.py over the wheels 0.18.0 ... 0.33.0); "fp_quant"
    # leaves in 0.34.0 (its QuantizationMethods lacks it; round 11 added 0.34.0 to vllm_quant_methods.json)
    assert quant_methods_removed() == {
        "fp_quant": "0.34.0",
        "bitsandbytes": "0.28.0",
        "cpu_awq": "0.23.0",
        "gguf": "0.24.0",
        "petit_nvfp4": "0.20.0",
        "ptpc_fp8": "0.19.0",
    }


def test_bitsandbytes_checkpoint_plans_until_0_27_and_is_refused_from_0_28() -> None:
    config = _load(f"{BNB_NF4}_config.json")
    assert config["quantization_config"]["quant_method"] == "bitsandbytes"
    # 0.27.1 loads it: Llama-2-13B, 40 layers, 40 KV heads / TP 8 = 5 a rank x 2 x 128 x 2 B = 2,560 B a layer
    assert _plan(config, release="0.27.1").kv_bytes_per_token == 40 * 2_560 == 102_400
    for release in ("0.28.0", "0.33.0"):
        # 0.28.0+ config/model.py _verify_quantization: "Unknown quantization method: bitsandbytes"
        with pytest.raises(ConfigError) as refused:
            _plan(config, release=release)
        assert refused.value.field == "quantization_config.quant_method"
        assert "Unknown quantization method: bitsandbytes" in str(refused.value)
        assert "removed in 0.28.0" in str(refused.value)


def test_a_method_no_release_lists_is_not_judged() -> None:
    # vllm-ascend registers "ascend" itself; fp8 is in every release read; neither is refused
    for method in ("ascend", "fp8", None):
        check_quant_method(method=method, version=(0, 33, 0))
    with pytest.raises(ConfigError):
        check_quant_method(method="gguf", version=(0, 24, 0))
    check_quant_method(method="gguf", version=(0, 23, 0))


def test_two_byte_rotary_buffers_come_off_total_size() -> None:
    # Pygmalion-7B (Llama 7B, V 32,000, MHA): 2 x 32,000 x 4,096 + 32 x (4 x 4,096^2 + 3 x 4,096 x 11,008 + 2 x
    # 4,096) + 4,096 = 6,738,415,616 parameters; total_size 13,476,835,328 = 2 x that + 4,096: its 32 stored
    # rotary_emb.inv_freq buffers are 64 x 2 B (the checkpoint was cast whole), not 64 x 4 B
    name = "kleberbaum--Pygmalion-7b-Merged-Safetensors"
    index = _load(f"{name}_model.safetensors.index.json")
    spec = model_spec_from_hf_config(_load(f"{name}_config.json"), name="t", safetensors_index=index)
    assert spec.params_total == 6_738_415_616
    assert spec.weights_bytes_exact == 13_476_835_328 - 32 * 64 * 2 == 2 * 6_738_415_616


def test_float32_rotary_buffers_still_come_off_as_float32() -> None:
    # RUTERGPT13B (Llama-2-13B shape, fp16): 13,015,864,320 parameters; total_size 26,031,738,880 = 2 x that +
    # 10,240: 40 buffers of 64 x 4 B
    name = "bjornerikkorum--RUTERGPT13B"
    index = _load(f"{name}_model.safetensors.index.json")
    spec = model_spec_from_hf_config(_load(f"{name}_config.json"), name="t", safetensors_index=index)
    assert spec.weights_bytes_exact == 26_031_738_880 - 40 * 64 * 4 == 2 * 13_015_864_320


def test_bloom_spellings_are_read_as_transformers_reads_them() -> None:
    # heldout_0_33f's BLOOM-176B config.json stores n_embed 14,336 and n_layer 70 only: BloomConfig's
    # attribute_map gives num_hidden_layers <- n_layer, num_attention_heads <- n_head, and its __post_init__ pops
    # n_embed into hidden_size (transformers 5.x models/bloom/configuration_bloom.py). 112 heads of 14,336 / 112 =
    # 128, MHA: at TP 8 14 heads a rank x 2 x 128 x 2 B = 7,168 B a layer x 70 = 501,760 a token; no length key,
    # so vLLM's default 2,048 (config/model.py _get_and_verify_max_len)
    config = json.loads(
        (HELD.parent / "heldout_0_33f" / "amansingh61--bloom_config.json").read_text(encoding="utf-8")
    )
    assert "hidden_size" not in config and "num_hidden_layers" not in config
    est = _plan(config, release="0.33.0")
    assert est.kv_bytes_per_token == 70 * 7_168 == 501_760
    assert est.groups[0].page_size_bytes == 16 * 7_168


def test_an_attribute_map_spelling_fills_the_standard_name_only_when_it_is_absent() -> None:
    # GPT-2's attribute_map (transformers models/gpt2/configuration_gpt2.py): hidden_size <- n_embd,
    # num_hidden_layers <- n_layer, num_attention_heads <- n_head, max_position_embeddings <- n_positions
    from app.core.hf_config.coerce import _with_standard_names

    stored = {"n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024, "hidden_size": 1024}
    named = _with_standard_names(dict(stored), "gpt2")
    assert named["num_hidden_layers"] == 12 and named["num_attention_heads"] == 12
    assert named["hidden_size"] == 1024  # a standard name the config stores wins
    # only the attention geometry is renamed (the length keys are read under every spelling already)
    assert "max_position_embeddings" not in named
    assert _with_standard_names({"n_layer": 3}, "llama") == {"n_layer": 3}  # LlamaConfig maps nothing


def test_the_flag_not_the_checkpoint_is_named_when_the_flag_asks_for_a_dropped_method() -> None:
    # `--quantization bitsandbytes` on the plain Llama-2-13B shape: the method comes from the flag
    # (quantization_flags.yaml), so 0.33.0's "Unknown quantization method" is the flag's fault, not the
    # checkpoint's; 0.27.1 still plans it (bitsandbytes in its QuantizationMethods)
    config = _load(f"{BNB_NF4}_config.json")
    plain = {k: v for k, v in config.items() if k != "quantization_config"}
    model = apply_quantization_flag(model_spec_from_hf_config(plain, name="t"), "bitsandbytes")
    with pytest.raises(ConfigError) as refused:
        estimate(
            model=model,
            device=find_device("h100"),
            serve=ServeConfig(tensor_parallel_size=8, max_model_len=4096, quantization="bitsandbytes"),
            vllm_version="0.33.0",
        )
    assert refused.value.field == "quantization"
    assert "removed in 0.28.0" in str(refused.value)
