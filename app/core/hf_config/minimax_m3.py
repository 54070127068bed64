"""MiniMax-M3's block-sparse attention as vLLM 0.33.0 builds it (vllm/models/minimax_m3, also in 0.26-0.32).

Every layer keeps an ordinary GQA K/V cache (``FullAttentionSpec``, num_key_value_heads of head_dim); the
layers whose ``sparse_attention_config.sparse_attention_freq`` entry is not 0 also run the lightning indexer,
whose key-only side cache (common/indexer.py ``MiniMaxM3IndexerCache``) holds one ``sparse_index_dim``
vector a token in ``indexer_kv_dtype`` (``attention_config.resolve_indexer_kv_dtype("bf16")``: bf16 unless
``--attention-config '{"indexer_kv_dtype": "fp8"}'``). Both caches use the sparse backend's one kernel
block, ``sparse_block_size`` (common/sparse_attention.py ``get_supported_kernel_block_sizes``: [128]).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.hf_config.coerce import MAX_DIM, _as_int, _as_list, _Configs

# registry.py: the architectures served by models/minimax_m3 (MiniMaxM3ForCausalLM, the dense preview, is
# not registered and is refused)
SPARSE_ARCHITECTURES = frozenset({"MiniMaxM3SparseForConditionalGeneration", "MiniMaxM3SparseForCausalLM"})
INDEXER_KV_BYTES = 2  # bf16, the default indexer_kv_dtype
MAX_SPARSE_LAYERS = 100_000


def _sparse_config(cfgs: _Configs) -> Mapping[str, Any] | None:
    archs = cfgs.top.get("architectures")
    if not isinstance(archs, list) or not archs or archs[0] not in SPARSE_ARCHITECTURES:
        return None
    value = cfgs.text.get("sparse_attention_config")
    return value if isinstance(value, Mapping) else None


def msa_indexer_bytes_per_token(cfgs: _Configs) -> int:
    """One layer's index-key cache a token: ``sparse_index_dim`` x 2 B (bf16). E.g. MiniMax-M3: 128 x 2 = 256."""
    sparse = _sparse_config(cfgs)
    if sparse is None or "sparse_index_dim" not in sparse:
        return 0
    dim = _as_int(
        "sparse_attention_config.sparse_index_dim", sparse["sparse_index_dim"], minimum=1, maximum=MAX_DIM
    )
    return dim * INDEXER_KV_BYTES


def msa_indexer_layers(cfgs: _Configs, num_layers: int) -> tuple[int, ...] | None:
    """The layers that run the indexer (``sparse_attention_freq`` entries not 0; models/minimax_m3/nvidia/
    model.py ``_sparse_attention_layer_ids``). E.g. MiniMax-M3: 0, 0, 0, then 1 on the other 57 -> 3 .. 59."""
    sparse = _sparse_config(cfgs)
    if sparse is None or sparse.get("sparse_attention_freq") is None:
        return None
    freq = _as_list("sparse_attention_config.sparse_attention_freq", sparse["sparse_attention_freq"])
    return tuple(i for i, f in enumerate(freq[: min(num_layers, MAX_SPARSE_LAYERS)]) if f not in (0, False))


def msa_block_size(cfgs: _Configs) -> int | None:
    """The sparse backend's kernel block, ``sparse_block_size`` (MiniMax-M3: 128); None for other models."""
    sparse = _sparse_config(cfgs)
    if sparse is None:
        return None
    value = sparse.get("sparse_block_size", 128)
    return _as_int("sparse_attention_config.sparse_block_size", value, minimum=1, maximum=MAX_DIM)
