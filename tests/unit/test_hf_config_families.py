"""Families whose config.json vLLM reads in its own way, checked against numbers worked by hand from
vLLM's model code (0.19.0 wheel: minicpm3.py, nemotron_nas.py, deepseek_v2.py, gemma4.py,
mimo_v2.py, mamba.py, models/config.py, v1/core/kv_cache_utils.py).

The configs here are written for the test in the shape of the published ones (key names and the
values that matter); the real-world copies are in tests/data/configs/real.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core import kv as K
from app.core.catalog import find_device, find_model
from app.core.errors import ConfigError
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config, param_breakdown
from app.core.hf_config.registry import check_architecture
from app.core.specs import LayerKind, ModelSpec, ServeConfig
from app.core.versions import rules_for

RULES = rules_for("0.19.0")


CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"


def layout_of(spec: ModelSpec, *, version: str = "0.19.0", block_size: int = 16) -> K.KVLayout:
    return K.build_layout(
        model=spec,
        layer_range=(0, spec.num_layers),
        tensor_parallel_size=1,
        block_size=block_size,
        kv_cache_dtype="auto",
        model_dtype=spec.torch_dtype,
        rules=rules_for(version),
    )


# --- MiniCPM3: MLA-style projections, plain attention cache ------------------------------------------


def minicpm3() -> dict[str, Any]:
    return {
        "architectures": ["MiniCPM3ForCausalLM"],
        "model_type": "minicpm3",
        "hidden_size": 2560,
        "num_attention_heads": 40,
        "num_key_value_heads": 40,
        "num_hidden_layers": 62,
        "intermediate_size": 6400,
        "vocab_size": 73448,
        "max_position_embeddings": 32768,
        "q_lora_rank": 768,
        "kv_lora_rank": 256,
        "qk_nope_head_dim": 64,
        "qk_rope_head_dim": 32,
        "v_head_dim": 64,
        "torch_dtype": "bfloat16",
    }


def test_minicpm3_is_plain_attention_not_mla() -> None:
    # minicpm3.py: Attention(num_local_heads, qk_head_dim = 64 + 32, num_kv_heads=num_local_heads),
    # V padded to qk_head_dim. KV/token = 2 x 62 x 40 x 96 x 2 = 952,320 B — not the MLA latent
    # 62 x (256 + 32) x 2 = 35,712 B (26.7x less).
    spec = model_spec_from_hf_config(minicpm3(), name="minicpm3")
    assert spec.mla is None
    assert (spec.num_kv_heads, spec.head_size, spec.head_size_v) == (40, 96, 96)
    assert layout_of(spec).kv_bytes_per_token == 952_320


# --- Nemotron-NAS (DeciLM) block_configs -------------------------------------------------------------


def decilm() -> dict[str, Any]:
    attention = {"n_heads_in_group": 8, "no_op": False, "replace_with_linear": False}
    return {
        "architectures": ["DeciLMForCausalLM"],
        "model_type": "nemotron-nas",
        "hidden_size": 8192,
        "num_attention_heads": 64,
        "num_hidden_layers": 4,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
        "torch_dtype": "bfloat16",
        "block_configs": [
            {"attention": attention, "ffn": {"ffn_mult": 2.625, "no_op": False}},
            {
                "attention": {"n_heads_in_group": None, "no_op": True},
                "ffn": {"ffn_mult": 5.25, "no_op": False},
            },
            {"attention": attention | {"n_heads_in_group": 16}, "ffn": {"ffn_mult": 1.3125, "no_op": False}},
            {"attention": attention, "ffn": {"no_op": True}},
        ],
    }


def test_decilm_no_op_blocks_have_no_cache_and_kv_heads_are_per_block() -> None:
    spec = model_spec_from_hf_config(decilm(), name="nas")
    # 64 heads / n_heads_in_group: 8, none, 4, 8 KV heads (the convertor's num_kv_heads: the first, 8)
    assert spec.layer_kinds == (LayerKind.FULL, LayerKind.NONE, LayerKind.FULL, LayerKind.FULL)
    assert spec.num_kv_heads == 8
    layout = layout_of(spec)
    # KV/token = 2 x (8 + 4 + 8) x 128 x 2 = 10,240 B (head 8192 / 64 = 128)
    assert layout.kv_bytes_per_token == 10_240
    # one group (UniformTypeKVCacheSpecs): pages 16 x 2 x 8 x 128 x 2 = 65,536, 32,768, 65,536
    assert [g.num_layers for g in layout.groups] == [3]
    assert layout.bytes_per_block == 163_840


def test_decilm_ffn_width_per_block() -> None:
    # nemotron_nas.py: int(2 x mult x 8192 / 3) rounded up to 256: 2.625 -> 14,336; 5.25 -> 28,672;
    # 1.3125 -> 7,168; no-op -> 0. Gated MLP: 3 x 8192 x (14,336 + 28,672 + 7,168) = 1,233,125,376.
    assert param_breakdown(decilm()).mlp == 1_233_125_376


def test_decilm_replace_with_linear_is_refused() -> None:
    config = decilm()
    config["block_configs"][0]["attention"] = {"replace_with_linear": True, "no_op": False}
    with pytest.raises(ConfigError, match="replace_with_linear"):
        model_spec_from_hf_config(config, name="nas")


# --- DeepSeek-V3.2 / GLM-5 sparse attention -----------------------------------------------------------


def deepseek_v32() -> dict[str, Any]:
    return {
        "architectures": ["DeepseekV32ForCausalLM"],
        "model_type": "deepseek_v32",
        "hidden_size": 7168,
        "num_attention_heads": 128,
        "num_key_value_heads": 128,
        "num_hidden_layers": 61,
        "intermediate_size": 18432,
        "moe_intermediate_size": 2048,
        "n_routed_experts": 256,
        "n_shared_experts": 1,
        "num_experts_per_tok": 8,
        "first_k_dense_replace": 3,
        "vocab_size": 129280,
        "max_position_embeddings": 163840,
        "q_lora_rank": 1536,
        "kv_lora_rank": 512,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
        "index_topk": 2048,
        "index_head_dim": 128,
        "index_n_heads": 64,
        "torch_dtype": "bfloat16",
    }


def test_deepseek_v32_indexer_cache_is_counted() -> None:
    # deepseek_v2.py Indexer: DeepseekV32IndexerCache(head_dim = 128 + 128 // 128 x 4 = 132, uint8)
    spec = model_spec_from_hf_config(deepseek_v32(), name="v32")
    assert spec.indexer_bytes_per_token == 132
    # per layer per token: latent (512 + 64) x 2 = 1,152 + 132 = 1,284 B; x 61 = 78,324 B
    assert layout_of(spec, block_size=64).kv_bytes_per_token == 78_324


def test_deepseek_v32_uses_the_sparse_backend_and_its_block_size() -> None:
    # FLASHMLA_SPARSE supports only 64-token blocks (flashmla_sparse.py); page 64 x 1,284 = 82,176 B
    spec = model_spec_from_hf_config(deepseek_v32(), name="v32")
    result = estimate(
        model=spec,
        device=find_device("h200"),
        serve=ServeConfig(tensor_parallel_size=8, max_model_len=32768),
        vllm_version="0.19.0",
    )
    assert result.attention_backend == "FLASHMLA_SPARSE"
    assert result.block_size == 64
    assert result.bytes_per_block == 61 * 64 * 1_284  # one group of all 61 layers, page 82,176 B


def test_deepseek_v32_needs_a_release_that_has_it() -> None:
    spec = model_spec_from_hf_config(deepseek_v32(), name="v32")
    with pytest.raises(ConfigError, match=r"vLLM 0\.11\.0 has it"):
        estimate(
            model=spec,
            device=find_device("h200"),
            serve=ServeConfig(tensor_parallel_size=8),
            vllm_version="0.10.2",
        )


# --- Gemma-4: full-attention layers with their own head size and KV heads ------------------------------


def gemma4() -> dict[str, Any]:
    return {
        "architectures": ["Gemma4ForCausalLM"],
        "model_type": "gemma4_text",
        "hidden_size": 5376,
        "num_attention_heads": 32,
        "num_key_value_heads": 16,
        "head_dim": 256,
        "global_head_dim": 512,
        "num_global_key_value_heads": 4,
        "attention_k_eq_v": True,
        "num_hidden_layers": 6,
        "intermediate_size": 21504,
        "vocab_size": 262144,
        "max_position_embeddings": 262144,
        "sliding_window": 1024,
        "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
        "torch_dtype": "bfloat16",
    }


def test_gemma4_full_layers_have_their_own_geometry_and_unified_page() -> None:
    spec = model_spec_from_hf_config(gemma4(), name="g4")
    layout = layout_of(spec)
    # per token: sliding 2 x 16 x 256 x 2 = 16,384 B; full (k_eq_v: 4 KV heads, head 512) 2 x 4 x 512 x 2
    # = 8,192 B. KV/token = 5 x 16,384 + 8,192 = 90,112.
    assert layout.kv_bytes_per_token == 90_112
    # unify_kv_cache_spec_page_size: the full page (16 x 8,192) doubles its block to 32 tokens to
    # match the sliding page 16 x 16,384 = 262,144 B. Groups of min(5, 1) = 1 layer: 5 sliding + 1 full.
    assert [g.num_layers for g in layout.groups] == [1, 1, 1, 1, 1, 1]
    assert {g.page_size_bytes for g in layout.groups} == {262_144}
    assert [g.block_size_tokens for g in layout.groups if g.kind == LayerKind.FULL] == [32]
    assert layout.bytes_per_block == 262_144


def test_gemma4_per_layer_config_spelling() -> None:
    # newer configs list the full layers' overrides in text_config.per_layer_config instead of
    # global_head_dim / num_global_key_value_heads; same layout as above.
    text = gemma4()
    for key in ("global_head_dim", "num_global_key_value_heads", "attention_k_eq_v"):
        del text[key]
    text["per_layer_config"] = {"05": {"head_dim": 512, "num_key_value_heads": 4}}
    spec = model_spec_from_hf_config(text, name="g4")
    assert layout_of(spec).kv_bytes_per_token == 90_112


# --- MiMo-V2-Flash: SWA layers with their own heads, list-valued moe_layer_freq ------------------------


def mimo_v2_flash() -> dict[str, Any]:
    pattern = [0, 1, 1, 1, 1] + [0, 1, 1, 1, 1, 1] * 7 + [0]
    return {
        "architectures": ["MiMoV2FlashForCausalLM"],
        "model_type": "mimo_v2_flash",
        "hidden_size": 4096,
        "num_hidden_layers": 48,
        "num_attention_heads": 64,
        "num_key_value_heads": 4,
        "head_dim": 192,
        "v_head_dim": 128,
        "swa_num_attention_heads": 64,
        "swa_num_key_value_heads": 8,
        "swa_head_dim": 192,
        "swa_v_head_dim": 128,
        "sliding_window_size": 128,
        "attention_chunk_size": 128,
        "hybrid_layer_pattern": pattern,
        "moe_layer_freq": [0] + [1] * 47,
        "n_routed_experts": 256,
        "num_experts_per_tok": 8,
        "moe_intermediate_size": 2048,
        "intermediate_size": 16384,
        "vocab_size": 152576,
        "max_position_embeddings": 262144,
        "torch_dtype": "bfloat16",
    }


def test_mimo_v2_flash_is_accepted_and_sized() -> None:
    spec = model_spec_from_hf_config(mimo_v2_flash(), name="mimo")
    kinds = spec.layer_kinds
    assert (kinds.count(LayerKind.FULL), kinds.count(LayerKind.SLIDING)) == (9, 39)
    assert spec.sliding_window_tokens == 128  # sliding_window_size; attention_chunk_size is not used
    layout = layout_of(spec)
    # per token: full 4 x (192 + 128) x 2 = 2,560 B; SWA 8 x 320 x 2 = 5,120 B; 9 x 2,560 + 39 x 5,120
    assert layout.kv_bytes_per_token == 222_720
    # groups of min(9, 39) = 9: full 9; SWA cdiv(39, 9) = 5 groups 8,8,8,8,7; full block doubled
    assert sorted(g.num_layers for g in layout.groups) == [7, 8, 8, 8, 8, 9]
    # moe_layer_freq [0, 1, ...]: layer 0 dense (3 x 4096 x 16,384), 47 MoE layers of 256 experts
    parts = param_breakdown(mimo_v2_flash())
    assert parts.experts == 47 * 256 * 3 * 4096 * 2048


# --- Mamba state dtype, attention-free Mamba ----------------------------------------------------------


def mamba_2_8b() -> dict[str, Any]:
    return {
        "architectures": ["MambaForCausalLM"],
        "model_type": "mamba",
        "hidden_size": 2560,
        "intermediate_size": 5120,
        "num_hidden_layers": 64,
        "state_size": 16,
        "conv_kernel": 4,
        "expand": 2,
        "vocab_size": 50280,
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
    }


def test_attention_free_mamba_is_state_only() -> None:
    spec = model_spec_from_hf_config(mamba_2_8b(), name="mamba")
    assert set(spec.layer_kinds) == {LayerKind.MAMBA}
    layout = layout_of(spec)
    # no attention: 0 KV bytes per token; one state per layer per request:
    # conv 5,120 x (4 - 1) + ssm 5,120 x 16 = 97,280 values x 4 B (float32 config) = 389,120 B
    assert layout.kv_bytes_per_token == 0
    assert layout.page_size_bytes == 389_120
    assert [g.num_layers for g in layout.groups] == [64]


def test_qwen3_5_mamba_ssm_dtype_from_the_config() -> None:
    # Qwen3_5ForConditionalGenerationConfig (0.17+): mamba_ssm_dtype float32 doubles the SSM state. The hook is
    # per architecture and release (MODELS_CONFIG_MAP, vllm_model_config_map.json): Qwen3_5ForConditionalGeneration
    # has it from 0.17.0; Qwen3_5ForCausalLM only from 0.27.0 (absent from 0.19.0's registry and map)
    config = {
        "architectures": ["Qwen3_5ForConditionalGeneration"],
        "model_type": "qwen3_next",
        "hidden_size": 2048,
        "num_hidden_layers": 4,
        "num_attention_heads": 16,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "intermediate_size": 5120,
        "vocab_size": 151936,
        "full_attention_interval": 4,
        "linear_num_key_heads": 16,
        "linear_num_value_heads": 32,
        "linear_key_head_dim": 128,
        "linear_value_head_dim": 128,
        "linear_conv_kernel_dim": 4,
        "mamba_ssm_dtype": "float32",
        "torch_dtype": "bfloat16",
    }
    spec = model_spec_from_hf_config(config, name="q35")
    assert spec.mamba_ssm_dtype == "float32"
    assert spec.mamba is not None
    # conv (2 x 128 x 16 + 128 x 32) x 3 = 24,576 bf16 = 49,152 B; ssm 32 x 128 x 128 = 524,288 x 4 B
    state = K.mamba_state_bytes(
        mamba=spec.mamba,
        tensor_parallel_size=1,
        dtype_bytes=2,
        ssm_dtype_bytes=K.mamba_ssm_dtype_bytes(model=spec, rules=RULES),
    )
    assert state == 49_152 + 2_097_152


# --- configs the loaders refuse -------------------------------------------------------------------------


def test_jamba_attention_offset_not_below_period_is_refused() -> None:
    config = {
        "architectures": ["JambaForCausalLM"],
        "model_type": "jamba",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "num_hidden_layers": 8,
        "intermediate_size": 14336,
        "vocab_size": 65536,
        "attn_layer_period": 8,
        "attn_layer_offset": 8,
        "mamba_d_state": 16,
        "mamba_d_conv": 4,
        "mamba_expand": 2,
    }
    with pytest.raises(ConfigError, match="attn_layer_offset 8 must be less than attn_layer_period 8"):
        model_spec_from_hf_config(config, name="jamba")


def test_more_kv_heads_than_heads_is_refused() -> None:
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096}
    config |= {"num_attention_heads": 8, "num_key_value_heads": 32, "num_hidden_layers": 2, "vocab_size": 100}
    with pytest.raises(ConfigError, match="32 KV heads but only 8 attention heads"):
        model_spec_from_hf_config(config, name="x")


def test_no_architecture_and_no_model_type_is_refused() -> None:
    config = {"hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 2, "vocab_size": 100}
    with pytest.raises(ConfigError, match="neither `architectures` nor `model_type`"):
        model_spec_from_hf_config(config, name="x")


# --- the registry -----------------------------------------------------------------------------------------


def test_architecture_the_release_lacks_is_refused_with_the_release_that_added_it() -> None:
    spec = model_spec_from_hf_config(gemma4(), name="g4")
    with pytest.raises(ConfigError, match=r"not in vLLM 0\.17\.0's model registry; vLLM 0\.19\.0 has it"):
        estimate(model=spec, device=find_device("h100"), serve=ServeConfig(), vllm_version="0.17.0")


def test_a_release_between_two_read_registries_is_checked_at_itself_not_its_bracket() -> None:
    # vllm_architectures.json (round 6 reads 0.11.1, 0.12.0, 0.13.0 and 0.18.0 too): MiniMaxM2ForCausalLM is first
    # listed by 0.11.1, absent from 0.11.0. 0.12.0 plans with 0.11.0's rules (its bracket), but the registry is
    # the user's release: 0.12.0 lists it, so no refusal and no note (the Vultr B200 cookbook ran MiniMax-M2.5 on
    # vLLM 0.12.0). At 0.11.0 itself it is refused.
    config = json.loads((CONFIGS / "current" / "MiniMaxAI--MiniMax-M2.5_config.json").read_text())
    spec = model_spec_from_hf_config(config, name="MiniMaxAI/MiniMax-M2.5")
    serve = ServeConfig(tensor_parallel_size=4)
    est = estimate(model=spec, device=find_device("b200"), serve=serve, vllm_version="0.12.0")
    assert est.vllm_version == "0.12.0"
    assert not any("MiniMaxM2ForCausalLM" in w for w in est.warnings)
    with pytest.raises(ConfigError, match=r"not in vLLM 0\.11\.0's model registry; vLLM 0\.11\.1 has it"):
        estimate(model=spec, device=find_device("b200"), serve=serve, vllm_version="0.11.0")
    # a series no wheel was read for (0.16) still gets the bracket's note: Qwen3_5ForConditionalGeneration is
    # first listed by 0.17.0, absent from 0.15.0
    qwen = json.loads((CONFIGS / "current" / "Qwen--Qwen3.5-27B_config.json").read_text())
    qwen_spec = model_spec_from_hf_config(qwen, name="Qwen/Qwen3.5-27B")
    between = estimate(
        model=qwen_spec, device=find_device("h100"), serve=ServeConfig(), vllm_version="0.16.0"
    )
    assert any(
        "added to vLLM between 0.15.0 and 0.17.0; check that 0.16.0 has it" in w for w in between.warnings
    )


def test_misspelt_architecture_gets_did_you_mean() -> None:
    config = minicpm3() | {"architectures": ["MiniCPM3ForCausalLm"]}
    spec = model_spec_from_hf_config(config, name="typo")
    with pytest.raises(ConfigError, match="did you mean 'MiniCPM3ForCausalLM'"):
        estimate(model=spec, device=find_device("h100"), serve=ServeConfig(), vllm_version="0.19.0")


def test_unknown_architecture_is_refused() -> None:
    config = minicpm3() | {"architectures": ["TotallyNewForCausalLM"]}
    spec = model_spec_from_hf_config(config, name="new")
    with pytest.raises(ConfigError, match="in no vLLM model registry"):
        estimate(model=spec, device=find_device("h100"), serve=ServeConfig(), vllm_version="0.19.0")


def test_architecture_vllm_dropped_is_refused_with_vllms_words() -> None:
    # vLLM 0.33.0 registry.py _PREVIOUSLY_SUPPORTED_MODELS: "MiniMaxM1ForCausalLM": "0.23.0"
    spec = find_model("MiniMaxAI/MiniMax-M1-80k")
    with pytest.raises(ConfigError, match=r"supported in vLLM until v0\.23\.0"):
        estimate(
            model=spec,
            device=find_device("h200"),
            serve=ServeConfig(tensor_parallel_size=8),
            vllm_version="0.33.0",
        )
    with pytest.raises(ConfigError, match=r"until v0\.23\.0"):
        estimate(
            model=spec,
            device=find_device("h200"),
            serve=ServeConfig(tensor_parallel_size=8),
            vllm_version="0.24.0",
        )
    # ...and 0.21.0 still has it
    assert (
        check_architecture(architecture=spec.architecture, model_type=spec.model_type, version=(0, 21, 0))
        == []
    )
