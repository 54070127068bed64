"""DBRX keeps its KV heads in `attn_config.kv_n_heads`, not in a top-level key.

vLLM 0.33.0 transformers_utils/model_arch_config_convertor.py DbrxModelArchConfigConvertor.get_total_num_kv_heads:
getattr(hf_text_config.attn_config, "kv_n_heads", num_attention_heads); transformers' DbrxAttentionConfig gives
kv_n_heads = 1 when it is absent. models/dbrx.py DbrxAttention then asserts total_num_kv_heads % tp == 0 when the
KV heads are at least TP (else tp % kv == 0). The blind score of heldout_0_33s missed this: the planner took the 48
query heads (`n_heads`) as KV heads (589,824 B a token at TP 2 instead of 147,456) and planned TP 8.

Config: tests/data/configs/heldout_0_33s/sgl-project--ome-dbrx_132b_config.json (SOURCES.md there): d_model 6,144,
n_heads 48 -> head 6,144 / 48 = 128, kv_n_heads 12, n_layers 48.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.errors import PlannerError
from app.core.hf_config import model_spec_from_hf_config
from tests.config_plans import kv_bytes_per_token

DBRX = (
    Path(__file__).resolve().parents[1] / "data/configs/heldout_0_33s/sgl-project--ome-dbrx_132b_config.json"
)


def _config(**attn: Any) -> dict[str, Any]:
    config = json.loads(DBRX.read_text(encoding="utf-8"))
    config["attn_config"] |= attn
    return config


def _kv_bytes(config: dict[str, Any], tp: int) -> int:
    return kv_bytes_per_token(config, "0.33.0", tp=tp, max_model_len=8192)


def test_kv_heads_come_from_attn_config() -> None:
    spec = model_spec_from_hf_config(_config(), name="dbrx", vllm_version="0.33.0")
    assert (spec.num_attention_heads, spec.num_kv_heads) == (48, 12)


def test_tp_2_caches_six_kv_heads_a_rank() -> None:
    # 12 / 2 = 6 KV heads x 2 (K, V) x 128 x 2 B = 3,072 B a layer, x 48 layers = 147,456
    assert _kv_bytes(_config(), 2) == 147_456


def test_tp_8_is_refused_as_12_kv_heads_do_not_split_8_ways() -> None:
    with pytest.raises(PlannerError) as err:
        _kv_bytes(_config(), 8)
    assert err.value.field == "tensor_parallel_size"


def test_dbrx_instruct_eight_kv_heads_at_tp_8() -> None:
    # databricks/dbrx-instruct declares kv_n_heads 8: one a rank at TP 8, 1 x 2 x 128 x 2 B = 512 B x 48 = 24,576
    assert _kv_bytes(_config(kv_n_heads=8), 8) == 24_576


def test_absent_kv_n_heads_is_transformers_default_of_one() -> None:
    config = _config()
    del config["attn_config"]["kv_n_heads"]
    spec = model_spec_from_hf_config(config, name="dbrx", vllm_version="0.33.0")
    assert spec.num_kv_heads == 1
