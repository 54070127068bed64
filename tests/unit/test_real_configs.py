"""Real config.json files from public repositories (tests/data/configs/real, sources in SOURCES.md),
sized the way vLLM 0.19.0 sizes them, against numbers worked by hand from vLLM's code.

Each row: KV bytes per token (all attention layers, TP 1, bf16 `auto` KV), the block size and the
page of one layer, layers per KV group, vLLM's derived max_model_len and, where worked by hand,
the parameter count. Arithmetic in the comments.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core import kv as K
from app.core.hf_config import model_spec_from_hf_config, param_breakdown
from app.core.versions import rules_for
from tests.unit.test_real_configs_wide import CASES as WIDE_CASES

REAL = Path(__file__).resolve().parents[1] / "data" / "configs" / "real"
RULES = rules_for("0.19.0")


def _config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REAL / f"{name}.config.json").read_text(encoding="utf-8"))
    return data


# (file, kv bytes/token, block size, page bytes of one layer, layers per group, derived max len)
# Plain attention: kv/token = 2 (K,V) x layers x kv_heads x head_dim x 2 B; page = 16 x 2 x kv x hd x 2.
CASES = [
    # 2 x 32 x 8 x 128 x 2 = 131,072; page 16 x 2 x 8 x 128 x 2 = 65,536; llama3 rope does not scale
    ("meta-llama__Llama-3.1-8B", 131_072, 16, 65_536, [32], 131_072),
    # 2 x 28 x 8 x 128 x 2 = 114,688
    ("meta-llama__Llama-3.2-3B", 114_688, 16, 65_536, [28], 131_072),
    # 2 x 48 x 8 x 128 x 2 = 196,608 (head 5120 / 40 = 128); sliding_window inert (use_sliding_window false)
    ("Qwen__Qwen2.5-14B", 196_608, 16, 65_536, [48], 131_072),
    # 2 x 64 x 8 x 128 x 2 = 262,144
    ("Qwen__Qwen2.5-32B", 262_144, 16, 65_536, [64], 131_072),
    # 2 x 36 x 2 x 128 x 2 = 36,864; page 16 x 2 x 2 x 128 x 2 = 16,384
    ("Qwen__Qwen2.5-3B", 36_864, 16, 16_384, [36], 32_768),
    # 2 x 28 x 4 x 128 x 2 = 57,344 (head 3584 / 28 = 128); page 32,768
    ("Qwen__Qwen2.5-7B", 57_344, 16, 32_768, [28], 131_072),
    # 2 x 40 x 8 x 128 x 2 = 163,840
    ("Qwen__Qwen3-14B", 163_840, 16, 65_536, [40], 40_960),
    # 2 x 48 x 4 x 128 x 2 = 98,304; page 32,768
    ("Qwen__Qwen3-30B-A3B", 98_304, 16, 32_768, [48], 40_960),
    # 2 x 64 x 8 x 128 x 2 = 262,144
    ("Qwen__Qwen3-32B", 262_144, 16, 65_536, [64], 40_960),
    # 2 x 36 x 8 x 128 x 2 = 147,456 (head_dim 128 given, not 2560 / 32 = 80)
    ("Qwen__Qwen3-4B", 147_456, 16, 65_536, [36], 40_960),
    ("Qwen__Qwen3-8B", 147_456, 16, 65_536, [36], 40_960),
    # Nemotron-H MoE, 52 blocks: 6 attention, 23 Mamba-2, 23 MoE (no cache).
    # KV: 2 x 6 x 2 x 128 x 2 = 6,144 B/token.
    # Mamba-2 state (mamba_utils.mamba2_state_shape, TP 1): conv (64 x 64 + 2 x 8 x 128) x (4 - 1)
    # = 18,432 bf16 = 36,864 B; ssm 64 x 64 x 128 = 524,288 x 4 B (mamba_ssm_cache_dtype float32,
    # NemotronHForCausalLMConfig) = 2,097,152 B; state 2,134,016 B.
    # Attention block raised to hold one state: 16 x cdiv(2,134,016, 16 x 1,024) = 16 x 131 = 2,096
    # tokens; page 2,096 x 1,024 = 2,146,304 B. Groups of min(6, 23) = 6 layers: mamba 6,6,6,5 + 6 full.
    ("nemotron-h-moe-52-layers.selected-fields", 6_144, 2_096, 2_146_304, [6, 6, 6, 5, 6], 262_144),
]


@pytest.mark.parametrize(("name", "per_token", "block", "page", "layers", "max_len"), CASES)
def test_real_config_sizing_matches_vllm(
    name: str, per_token: int, block: int, page: int, layers: list[int], max_len: int
) -> None:
    spec = model_spec_from_hf_config(_config(name), name=name)
    layout = K.build_layout(
        model=spec,
        layer_range=(0, spec.num_layers),
        tensor_parallel_size=1,
        block_size=16,
        kv_cache_dtype="auto",
        model_dtype=spec.torch_dtype,
        rules=RULES,
    )
    assert layout.kv_bytes_per_token == per_token
    assert layout.block_size == block
    assert layout.page_size_bytes == page
    assert [g.num_layers for g in layout.groups] == layers
    assert spec.max_model_len_derived == max_len


def test_real_configs_all_checked() -> None:
    # every file in the set has a row above (a new file without one would not be judged)
    files = sorted(p.name.removesuffix(".config.json") for p in REAL.glob("*.config.json"))
    others = [
        "state-spaces__mamba-2.8b-hf",
        "gemma4-unified-48-layers.text-tower",
        "mistralai__Mistral-Small-3.1-24B-Instruct-2503",  # judged in test_preset_mistral_small_3_1.py
    ]
    wide = [name for name, *_ in WIDE_CASES]  # tests/unit/test_real_configs_wide.py
    assert files == sorted([name for name, *_ in CASES] + others + wide)


def test_llama_3_1_8b_parameters_by_hand() -> None:
    # embed 128,256 x 4,096 = 525,336,576, untied lm_head the same: 1,050,673,152.
    # layer: q/o 2 x 4,096^2 = 33,554,432 + k/v 2 x 4,096 x 1,024 = 8,388,608 + MLP 3 x 4,096 x 14,336
    # = 176,160,768 + 2 norms 8,192 = 218,112,000; x 32 = 6,979,584,000; + final norm 4,096.
    assert param_breakdown(_config("meta-llama__Llama-3.1-8B")).total == 8_030_261_248


def test_qwen2_5_7b_parameters_by_hand() -> None:
    # embed 152,064 x 3,584 = 544,997,376, untied x 2 = 1,089,994,752.
    # layer: q/o 2 x 3,584^2 = 25,690,112 + k/v 2 x 3,584 x 512 = 3,670,016 + qkv bias 3,584 + 1,024
    # + MLP 3 x 3,584 x 18,944 = 203,685,888 + norms 7,168 = 233,057,792; x 28 = 6,525,618,176; + 3,584.
    assert param_breakdown(_config("Qwen__Qwen2.5-7B")).total == 7_615_616_512


def test_nemotron_h_moe_expert_weights_counted() -> None:
    # 23 'E' blocks x 128 routed experts x 2 (up, down; relu2, ungated) x 2,688 x 1,856
    # = 23 x 128 x 9,977,856 = 29,374,808,064 expert parameters: the bulk of a ~31B model.
    parts = param_breakdown(_config("nemotron-h-moe-52-layers.selected-fields"))
    assert parts.experts == 29_374_808_064
    # active: 6 of 128 experts per block: 23 x 6 x 9,977,856 = 1,376,944,128 of the experts
    assert parts.experts_active == 1_376_944_128
    assert 30e9 < parts.total < 32e9


def test_nemotron_h_ssm_dtype_follows_the_release() -> None:
    # 0.11.0 had no NemotronH dtype rule: ssm in bf16, 524,288 x 2 + 36,864 = 1,085,440 B;
    # block 16 x cdiv(1,085,440, 16,384) = 16 x 67 = 1,072.
    spec = model_spec_from_hf_config(_config("nemotron-h-moe-52-layers.selected-fields"), name="n")
    layout = K.build_layout(
        model=spec,
        layer_range=(0, spec.num_layers),
        tensor_parallel_size=1,
        block_size=16,
        kv_cache_dtype="auto",
        model_dtype="bfloat16",
        rules=rules_for("0.11.0"),
    )
    assert layout.block_size == 1_072


def test_mamba_2_8b_is_attention_free_state_only() -> None:
    # vLLM serves the float32 config as bf16 (--dtype auto downcasts float32); mamba_cache_dtype auto
    # follows it. State per layer (mamba1_state_shape, TP 1): conv 5,120 x (4 - 1) = 15,360 +
    # ssm 5,120 x 16 = 81,920 -> 97,280 x 2 B = 194,560 B; no attention, 0 KV bytes per token.
    spec = model_spec_from_hf_config(_config("state-spaces__mamba-2.8b-hf"), name="mamba")
    layout = K.build_layout(
        model=spec,
        layer_range=(0, spec.num_layers),
        tensor_parallel_size=1,
        block_size=16,
        kv_cache_dtype="auto",
        model_dtype="bfloat16",
        rules=RULES,
    )
    assert layout.kv_bytes_per_token == 0
    assert layout.page_size_bytes == 194_560
    assert [g.num_layers for g in layout.groups] == [64]
    # parameters: mixer per layer = in_proj 2,560 x 10,240 = 26,214,400 + conv 5,120 x 4 + 5,120
    # + x_proj 5,120 x (160 + 32) = 983,040 + dt_proj 160 x 5,120 + 5,120 + A_log 5,120 x 16 + D 5,120
    # + out_proj 5,120 x 2,560 = 41,241,600; + norm 2,560 -> 41,244,160 x 64 = 2,639,626,240;
    # tied embedding 50,280 x 2,560 = 128,716,800; final norm 2,560.
    assert param_breakdown(_config("state-spaces__mamba-2.8b-hf")).total == 2_768_345_600


def test_gemma4_unified_full_layers_have_their_own_geometry() -> None:
    # Gemma4UnifiedForConditionalGeneration: first in vLLM 0.24.0's registry; text tower = gemma4.py.
    # sliding layers: 8 KV heads x 256: 2 x 8 x 256 x 2 = 8,192 B/token; full layers (attention_k_eq_v):
    # num_global_key_value_heads 1 x global_head_dim 512: 2 x 1 x 512 x 2 = 2,048 B/token.
    # KV/token = 40 x 8,192 + 8 x 2,048 = 344,064 B.
    spec = model_spec_from_hf_config(_config("gemma4-unified-48-layers.text-tower"), name="g4u")
    layout = K.build_layout(
        model=spec,
        layer_range=(0, spec.num_layers),
        tensor_parallel_size=1,
        block_size=16,
        kv_cache_dtype="auto",
        model_dtype="bfloat16",
        rules=rules_for("0.24.0"),
    )
    assert layout.kv_bytes_per_token == 344_064
    # pages: sliding 16 x 8,192 = 131,072; full 16 x 2,048 = 32,768 -> full blocks x4 = 64 tokens
    # (unify_kv_cache_spec_page_size). Groups of min(40, 8) = 8: 5 sliding + 1 full.
    assert [g.num_layers for g in layout.groups] == [8] * 6
    assert {g.page_size_bytes for g in layout.groups} == {131_072}
    assert [g.block_size_tokens for g in layout.groups if g.kind.value == "full"] == [64]
    assert layout.bytes_per_block == 8 * 131_072
    assert spec.max_model_len_derived == 262_144
