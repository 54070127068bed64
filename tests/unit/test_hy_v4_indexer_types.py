"""HY V4 (`hy_v4`, vLLM 0.33.0 models/hy_v4/): which layers build the lightning indexer and so carry its cache.

vLLM 0.33.0 models/hy_v4/nvidia/attention.py `compute_skip_topk_layers` reads `indexer_types` first: one entry a
decoder layer, "full" (computes its own top-k, builds an `Indexer` whose `DeepseekV32IndexerCache` stores
index_head_dim + index_head_dim // 128 x 4 bytes a token) or "shared" (reuses the preceding full layer's indices,
`HYV4MLAAttention.create_indexer` False: no indexer, no cache). A list of the wrong length or an entry other than
those two raises ValueError. Only without `indexer_types` does it fall back to index_topk_freq / index_topk_pattern /
index_skip_topk_offset (default 2), the rule deepseek_v2.py uses.

vLLM 0.33.0 transformers_utils/configs/hy_v4.py HYV4Config.__post_init__ fills an absent `indexer_types` with
"full" on layer 0 and every layer with (i - 1) % 4 == 0 (0, 1, 5, 9, ...), so the freq/pattern fallback is never
reached for hy_v4; it folds `layer_types` "sparse_attention" and "sparse" into "deepseek_sparse_attention" before
transformers validates the list. A layer is sparse (`HYV4MLAAttention.__init__ requested_sparse`) only when
`layer_types` names it one of the sparse kinds: with no `layer_types` (HYV4Config default None) or none sparse the
model runs dense MLA, with no indexer and no sparse backend.

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
    # a list of the wrong length, or with an entry that is neither "full" nor the indexer-sharing kind: 0.33.0
    # models/hy_v4/nvidia/attention.py compute_skip_topk_layers raises ValueError
    with pytest.raises(ConfigError) as err:
        model_spec_from_hf_config(_hand_made_hy_v4(indexer_types=indexer_types), name="hand-made-hy_v4")
    assert err.value.field == "indexer_types"


def test_without_indexer_types_hy_v4_config_default_applies() -> None:
    # HYV4Config.__post_init__: "full" if i == 0 or (i - 1) % 4 == 0 -> 0, 1, 5 of 6 layers (main: every layer)
    cfg = _hand_made_hy_v4()
    del cfg["indexer_types"]
    spec = model_spec_from_hf_config(cfg, name="hand-made-hy_v4")
    assert spec.indexer_layers == (0, 1, 5)
    est = estimate(
        model=spec, device=find_device("h100"), serve=ServeConfig(tensor_parallel_size=8, max_model_len=8192)
    )
    # 6 x 1,152 + 3 x 132 = 6,912 + 396 = 7,308 B a token
    assert est.kv_bytes_per_token == 7_308


@pytest.mark.parametrize("spelling", ["sparse_attention", "sparse"])
def test_hy_v4_sparse_layer_spellings_are_read(spelling: str) -> None:
    # HYV4Config folds both into "deepseek_sparse_attention" (main refused them: "unknown layer type")
    spec = model_spec_from_hf_config(_hand_made_hy_v4(layer_types=[spelling] * 6), name="hand-made-hy_v4")
    assert spec.indexer_layers == (0, 3)
    assert spec.indexer_bytes_per_token == 132


@pytest.mark.parametrize("layer_types", [None, ["full_attention"] * 6])
def test_no_sparse_layer_means_dense_mla_and_no_indexer(layer_types: list[str] | None) -> None:
    cfg = _hand_made_hy_v4(layer_types=layer_types)
    if layer_types is None:
        del cfg["layer_types"]
    spec = model_spec_from_hf_config(cfg, name="hand-made-hy_v4")
    assert spec.indexer_bytes_per_token == 0
    est = estimate(
        model=spec, device=find_device("h100"), serve=ServeConfig(tensor_parallel_size=8, max_model_len=8192)
    )
    # requested_sparse False on every layer: the MLA latent only, 6 x 1,152 = 6,912 B a token (main: 7,176), and a
    # dense MLA backend (use_sparse False in get_attn_backend)
    assert est.kv_bytes_per_token == 6_912
    assert "SPARSE" not in est.attention_backend


def test_only_sparse_layers_keep_their_indexer() -> None:
    # a "full" indexer entry on a layer layer_types leaves dense builds nothing (requested_sparse False)
    types = ["deepseek_sparse_attention"] * 3 + ["full_attention"] * 3
    spec = model_spec_from_hf_config(_hand_made_hy_v4(layer_types=types), name="hand-made-hy_v4")
    assert spec.indexer_layers == (0,)


@pytest.mark.parametrize(
    ("learnable_sink", "backend"), [(None, "FLASHMLA_SPARSE"), (False, "FLASH_ATTN_MLA_SPARSE")]
)
def test_a_learnable_sink_binds_flashmla_sparse(learnable_sink: bool | None, backend: str) -> None:
    # 0.33.0 models/hy_v4/nvidia/attention.py HYV4MLAAttention._resolve_sink_backend: with learnable_sink
    # (HYV4Config default True) the selected sparse backend (H100, bf16: FLASH_ATTN_MLA_SPARSE, platforms/cuda.py
    # SM90 sparse tail) has supports_sink False (v1/attention/backend.py default), so the layer binds
    # HYV4FlashMLASparseBackend, whose get_name() stays FLASHMLA_SPARSE (models/hy_v4/nvidia/flashmla_sparse.py),
    # once its validate_configuration passes (SM90, bf16); kernel blocks [64] / MultipleOf(64): block 64 either way
    cfg = _hand_made_hy_v4()
    if learnable_sink is not None:
        cfg["learnable_sink"] = learnable_sink
    spec = model_spec_from_hf_config(cfg, name="hand-made-hy_v4")
    est = estimate(
        model=spec, device=find_device("h100"), serve=ServeConfig(tensor_parallel_size=8, max_model_len=8192)
    )
    assert est.attention_backend == backend
    (group,) = est.groups
    assert group.page_size_bytes == 64 * (1_152 + 132)


def test_a_config_without_index_head_dim_weighs_the_indexer_at_its_default() -> None:
    # HYV4Config.index_head_dim defaults to 128 (0.33.0 transformers_utils/configs/hy_v4.py; coerce.CLASS_DEFAULTS).
    # The indexer's weights on each layer that builds one (params._sparse_attention_params, deepseek_v2.py Indexer):
    # wq_b q_lora_rank x heads x dim + (wk + weights_proj) h x (dim + heads) + k_norm 2 x dim. Layers 0 and 3 here,
    # q_lora_rank 256, 32 index heads, h 1,024: at dim 128 a layer holds 256 x 32 x 128 + 1,024 x 160 + 256 =
    # 1,212,672, at dim 64 524,288 + 98,304 + 128 = 622,720, so two layers differ by 2 x 589,952 = 1,179,904
    # (main counted a left-out index_head_dim as 0: no indexer weights at all, 1,245,440 fewer than at dim 64).
    from app.core.hf_config.params import count_params

    without = _hand_made_hy_v4()
    del without["index_head_dim"]
    total_without, _ = count_params(without)
    total_128, _ = count_params(_hand_made_hy_v4(index_head_dim=128))
    total_64, _ = count_params(_hand_made_hy_v4(index_head_dim=64))
    assert total_without == total_128
    assert total_128 - total_64 == 2 * 589_952
    spec = model_spec_from_hf_config(without, name="hand-made-hy_v4")
    assert spec.indexer_bytes_per_token == 132  # 128 + 128 // 128 x 4
