"""HY V4 (`hy_v4`, vLLM 0.33.0 models/hy_v4/): which layers build the lightning indexer and so carry its cache.

vLLM 0.33.0 models/hy_v4/nvidia/attention.py `compute_skip_topk_layers` reads `indexer_types` first: one entry a
decoder layer, "full" (computes its own top-k, builds an `Indexer` whose `DeepseekV32IndexerCache` stores
index_head_dim + index_head_dim // 128 x 4 bytes a token) or "shared" (reuses the preceding full layer's indices,
`HYV4MLAAttention.create_indexer` False: no indexer, no cache). A list of the wrong length or an entry other than
those two raises ValueError. Only without `indexer_types` does it fall back to index_topk_freq / index_topk_pattern /
index_skip_topk_offset (default 2), the rule deepseek_v2.py uses.

No real Hy4 config.json was reachable this round (tests/data/configs/current-2026-12/LANE_B_SEARCH.md), so the
config below is HAND-MADE for this unit test of the rule only; it is not a scored plan.
"""

from __future__ import annotations

from typing import Any

import pytest

from app.core.catalog import find_device
from app.core.errors import ConfigError
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.specs import ServeConfig


def _hand_made_hy_v4(**overrides: Any) -> dict[str, Any]:
    """A small hy_v4 config (hand-made, labelled as such): six sparse-MLA layers, indexers on layers 0 and 3."""
    cfg: dict[str, Any] = {
        "architectures": ["HYV4ForCausalLM"],
        "model_type": "hy_v4",
        "torch_dtype": "bfloat16",
        "vocab_size": 1024,
        "hidden_size": 1024,
        "intermediate_size": 2048,
        "moe_intermediate_size": 256,
        "num_hidden_layers": 6,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
        "q_lora_rank": 256,
        "kv_lora_rank": 512,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
        "n_routed_experts": 8,
        "n_shared_experts": 1,
        "num_experts_per_tok": 2,
        "index_topk": 2048,
        "index_n_heads": 32,
        "index_head_dim": 128,
        "layer_types": ["deepseek_sparse_attention"] * 6,
        "indexer_types": ["full", "shared", "shared", "full", "shared", "shared"],
        "mlp_layer_types": ["dense"] + ["sparse"] * 5,
        "max_position_embeddings": 65536,
    }
    cfg.update(overrides)
    return cfg


def test_indexer_types_picks_the_full_layers() -> None:
    spec = model_spec_from_hf_config(_hand_made_hy_v4(), name="hand-made-hy_v4")
    assert spec.indexer_layers == (0, 3)


@pytest.mark.parametrize("tp", [8, 2])
def test_only_full_layers_pay_for_the_indexer_cache(tp: int) -> None:
    spec = model_spec_from_hf_config(_hand_made_hy_v4(), name="hand-made-hy_v4")
    est = estimate(
        model=spec, device=find_device("h100"), serve=ServeConfig(tensor_parallel_size=tp, max_model_len=8192)
    )
    # MLA latent (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 B bf16 = 1,152 B on all 6 layers (one latent, not
    # split by TP) + the indexer's 128 + 128 // 128 x 4 = 132 B on the 2 "full" layers: 6,912 + 264 = 7,176 B a
    # token (main gave 6 x 1,284 = 7,704: an indexer on every layer)
    assert est.kv_bytes_per_token == 7_176
    (group,) = est.groups
    assert group.num_layers == 6
    # one group, pages as for GLM-5.2's every-fourth-layer indexer (test_layer_fold): block 64 x (1,152 + 132)
    assert group.page_size_bytes == 64 * (1_152 + 132)


def test_every_layer_full_is_an_indexer_everywhere() -> None:
    spec = model_spec_from_hf_config(_hand_made_hy_v4(indexer_types=["full"] * 6), name="hand-made-hy_v4")
    assert spec.indexer_layers is None  # None means every layer has one (geometry.indexer_layers)


def test_indexer_types_wins_over_index_topk_freq() -> None:
    # compute_skip_topk_layers returns from the indexer_types branch before reading index_topk_freq
    spec = model_spec_from_hf_config(_hand_made_hy_v4(index_topk_freq=2), name="hand-made-hy_v4")
    assert spec.indexer_layers == (0, 3)


@pytest.mark.parametrize(
    "indexer_types",
    [["full", "shared"], ["full", "shared", "shared", "dense", "shared", "shared"]],
)
def test_a_bad_indexer_types_is_refused_naming_the_field(indexer_types: list[str]) -> None:
    # wrong length or an entry other than "full" / "shared": compute_skip_topk_layers raises ValueError
    with pytest.raises(ConfigError) as err:
        model_spec_from_hf_config(_hand_made_hy_v4(indexer_types=indexer_types), name="hand-made-hy_v4")
    assert err.value.field == "indexer_types"
