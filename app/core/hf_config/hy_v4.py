"""HY V4 (``hy_v4``, Tencent Hy4) as vLLM 0.33.0 builds it (vllm/models/hy_v4, registered since 0.29.0).

Every layer caches the MLA latent (kv_lora_rank + qk_rope_head_dim). A layer is DeepSeek-sparse only when
``layer_types`` names it so (models/hy_v4/nvidia/attention.py ``HYV4MLAAttention.__init__``: ``requested_sparse``
needs ``layer_types[i]`` in ``_SPARSE_LAYER_TYPES``); HYV4Config (transformers_utils/configs/hy_v4.py) leaves an
absent ``layer_types`` None, so such a checkpoint runs dense MLA with no indexer and no sparse backend. Of the
sparse layers, those ``indexer_types`` marks "full" build the lightning indexer and its cache
(``compute_skip_topk_layers``; "shared" reuses the preceding full layer's indices); HYV4Config fills an absent
``indexer_types`` with "full" on layer 0 and every layer with (i - 1) % 4 == 0, and folds the ``layer_types``
spellings "sparse_attention" / "sparse" into "deepseek_sparse_attention" before transformers checks the list.
HYV4Config's defaults (``index_head_dim`` 128, ``learnable_sink`` True, ...) are coerce.CLASS_DEFAULTS["hy_v4"].
``learnable_sink`` gives the sparse layers a sink that only HY V4's FlashMLA-sparse subclass applies (``HYV4MLAAttention._resolve_sink_backend``: when the selected
backend's supports_sink is False the layer binds HYV4FlashMLASparseBackend, named FLASHMLA_SPARSE, if its
validate_configuration passes; else the sink is disabled and the selected backend stays).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core import kinds
from app.core.errors import ConfigError
from app.core.hf_config.coerce import _as_list, _flag, _present, _required_int
from app.core.specs import LayerKind
from app.core.text import Text

MODEL_TYPE = "hy_v4"
# the spellings HYV4Config folds into "deepseek_sparse_attention" (an MLA layer, as geometry.LAYER_TYPE_NAMES has it)
LAYER_TYPE_NAMES: dict[str, LayerKind] = {"sparse_attention": LayerKind.FULL, "sparse": LayerKind.FULL}
SPARSE_LAYER_TYPES = frozenset({"deepseek_sparse_attention", "sparse_attention", "sparse"})
INDEXER_TYPES = ("full", "shared")
DEFAULT_FULL_EVERY = 4  # HYV4Config.__post_init__: "full" if i == 0 or (i - 1) % 4 == 0


def is_hy_v4(text: Mapping[str, Any]) -> bool:
    return text.get("model_type") == MODEL_TYPE


def sparse_layers(text: Mapping[str, Any], num_layers: int | None = None) -> frozenset[int]:
    """The layers ``layer_types`` makes DeepSeek-sparse (none without ``layer_types``)."""
    if not _present(text, "layer_types"):
        return frozenset()
    entries = _as_list("layer_types", text["layer_types"])[:num_layers]
    return frozenset(i for i, entry in enumerate(entries) if entry in SPARSE_LAYER_TYPES)


def _full_layers(text: Mapping[str, Any], num_layers: int) -> tuple[int, ...]:
    """The layers ``indexer_types`` (or HYV4Config's default for it) marks "full"; a list of the wrong length or
    with another entry is compute_skip_topk_layers' ValueError."""
    if not _present(text, "indexer_types"):
        return tuple(i for i in range(num_layers) if i == 0 or (i - 1) % DEFAULT_FULL_EVERY == 0)
    entries = _as_list("indexer_types", text["indexer_types"])
    if len(entries) != num_layers or any(entry not in INDEXER_TYPES for entry in entries):
        raise ConfigError(
            "indexer_types", Text('needs one of "full" or "shared" per layer ({n} layers)', n=num_layers)
        )
    return tuple(i for i, entry in enumerate(entries) if entry == "full")


def indexer_layers(text: Mapping[str, Any], num_layers: int) -> tuple[int, ...] | None:
    """The sparse layers that build an indexer: None when every layer does, () when none does."""
    sparse = sparse_layers(text, num_layers)
    built = tuple(i for i in _full_layers(text, num_layers) if i in sparse)
    return None if len(built) == num_layers else built


def indexer_bytes_per_token(text: Mapping[str, Any]) -> int:
    """The indexer cache's bytes a token on a layer that has one; 0 when no layer is sparse (dense MLA)."""
    if not sparse_layers(text):
        return 0
    return kinds.indexer_bytes_per_token(_required_int(text, ("index_head_dim",)))  # CLASS_DEFAULTS: 128


def sparse_mla_sink(text: Mapping[str, Any]) -> bool:
    """HY V4 sparse layers with a learnable sink (HYV4Config.learnable_sink; CLASS_DEFAULTS: True)."""
    return is_hy_v4(text) and bool(sparse_layers(text)) and _flag(text, "learnable_sink")
