"""Config shapes and checkpoint layouts the fourth held-apart set (tests/data/configs/heldout_0_33d) found.

Each number is worked by hand from vLLM 0.33.0's code (the file and function named in the test) and the
published config.json / model.safetensors.index.json in that directory (SOURCES.md gives each one's repository
and commit). The set's blind score is in its SOURCES.md; these tests pin the general rules, not those files:
every test builds its own config where a smaller one shows the rule.
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
from app.core.specs import LayerKind, ServeConfig

HELD = Path(__file__).resolve().parents[1] / "data" / "configs" / "heldout_0_33d"


def _load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((HELD / name).read_text(encoding="utf-8"))
    return loaded


def _plan(config: dict[str, Any], *, tp: int, index: dict[str, Any] | None = None) -> Any:
    spec = model_spec_from_hf_config(config, name="t", safetensors_index=index)
    return spec, estimate(
        model=spec,
        device=find_device("h100"),
        serve=ServeConfig(tensor_parallel_size=tp, max_model_len=8_192),
        vllm_version="0.33.0",
    )


def test_lfm2_full_attn_idxs_gives_the_conv_layers() -> None:
    # LFM2-1.2B's config.json has `full_attn_idxs` [2, 5, 8, 10, 12, 14] and no `layer_types`; transformers'
    # Lfm2Config (configuration_lfm2.py __post_init__) builds layer_types from it, "conv" elsewhere. So 10 ShortConv
    # layers + 6 attention layers of 8 KV heads x 64 (2,048 / 32). TP 8: 1 KV head -> 256 B a token-layer, 6 x 256
    # = 1,536 B a token; the conv state 2,048 / 8 x (3 - 1) x 2 B = 1,024 fits one 16-token page of 4,096; groups of
    # size 6 (10 >= 1.5 x 6): conv in two groups of 5, full 6 (v1/core/kv_cache_planning.py
    # _get_kv_cache_groups_uniform_page_size).
    spec, est = _plan(_load("LiquidAI--LFM2-1.2B_config.json"), tp=8)
    assert spec.layer_kinds.count(LayerKind.MAMBA) == 10
    assert [i for i, kind in enumerate(spec.layer_kinds) if kind == LayerKind.FULL] == [2, 5, 8, 10, 12, 14]
    assert est.kv_bytes_per_token == 1_536
    assert (est.block_size, est.groups[0].page_size_bytes) == (16, 4_096)
    assert [[g.kind, g.num_layers] for g in est.groups] == [["mamba", 5], ["mamba", 5], ["full", 6]]


def test_lfm2_full_attn_idxs_out_of_range_names_the_field() -> None:
    config = _load("LiquidAI--LFM2-1.2B_config.json") | {"full_attn_idxs": [2, -1]}
    with pytest.raises(ConfigError, match="full_attn_idxs"):
        model_spec_from_hf_config(config, name="t")


def test_deepseek_v2_with_zero_qk_dims_is_plain_multi_head_attention() -> None:
    # DeepSeek-OCR-2's language model: DeepSeek-V2 with kv_lora_rank null and qk_nope = qk_rope = v_head = 0.
    # models/deepseek_v2.py DeepseekV2DecoderLayer: use_mha when both qk dims are 0 -> DeepseekAttention, 10 KV heads
    # of 1,280 / 10 = 128 (model_arch_config_convertor.py get_head_size: a head_dim of 0 counts as unset). TP 1:
    # 10 x 2 x 128 x 2 B = 5,120 B a token-layer, x 12 layers = 61,440 B a token; page 16 x 5,120 = 81,920.
    _, est = _plan(_load("sen-ye--DeepSeek-OCR2_config.json"), tp=1)
    assert est.kv_bytes_per_token == 61_440
    assert est.groups[0].page_size_bytes == 81_920
    assert [[g.kind, g.num_layers] for g in est.groups] == [["full", 12]]
