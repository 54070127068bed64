"""The config fields vLLM reads when it serves an architecture through the Transformers modeling backend.

An architecture outside vLLM's model registry is served, under ``--model-impl auto``, by the Transformers backend
(0.33.0 ``model_executor/models/registry.py`` ``_try_resolve_transformers``: a transformers class, or the
checkpoint's ``auto_map`` code with ``--trust-remote-code``). That backend sizes the KV cache from the whole-model
config alone (``model_executor/models/transformers/base.py`` ``_create_attention_instances``): every layer gets
``head_size`` = ``head_dim`` (one size for K and V: no ``head_size_v``), ``num_kv_heads`` =
``num_key_value_heads``, a per-layer window only where ``layer_types`` says ``sliding_attention``, and otherwise
``cache_config.sliding_window`` (``engine/arg_utils.py``: ``get_sliding_window()`` when ``layer_types`` is absent or
all sliding; ``model_executor/layers/attention/attention.py``). The fields below are read only by one vLLM model
class each, so a config that carries them under another architecture name does not get their geometry:

- ``hybrid_layer_pattern``, ``sliding_window_size``, ``swa_head_dim``, ``swa_num_key_value_heads``,
  ``swa_v_head_dim``: ``models/mimo_v2.py`` (MiMo-V2's per-layer SWA geometry);
- ``attention_chunk_size``: ``models/llama4.py`` (the only ``ChunkedLocalAttention`` user);
- ``v_head_dim``: a V size different from K's, which only a model class passes to ``Attention`` (kept for an MLA
  config, ``kv_lora_rank`` set: the backend's ``MLAAttention`` reads it through ``get_mla_dims``).
"""

from __future__ import annotations

from dataclasses import replace

from app.core.hf_config.coerce import _Configs
from app.core.hf_config.registry import architecture_table

# fields only their own vLLM model class reads (module docstring); dropped for a Transformers-backend architecture
MODEL_CLASS_FIELDS = (
    "hybrid_layer_pattern",
    "sliding_window_size",
    "swa_head_dim",
    "swa_num_key_value_heads",
    "swa_v_head_dim",
    "attention_chunk_size",
    "v_head_dim",
)


def served_by_transformers_backend(cfgs: _Configs) -> bool:
    """True when the config names an architecture that no vLLM release registers (so the Transformers backend
    serves it, or vLLM refuses it, which the registry check reports)."""
    names = cfgs.top.get("architectures")
    first = names[0] if isinstance(names, list) and names else None
    return isinstance(first, str) and bool(first) and first not in architecture_table()


def kv_view(cfgs: _Configs) -> _Configs:
    """``cfgs`` as vLLM's KV sizing reads it: without :data:`MODEL_CLASS_FIELDS` for a Transformers-backend
    architecture, unchanged otherwise (a registered class reads its own fields; a spec with no architecture keeps
    every field, as before)."""
    if not served_by_transformers_backend(cfgs):
        return cfgs
    dropped = set(MODEL_CLASS_FIELDS)
    if cfgs.text.get("kv_lora_rank") is not None:
        dropped.discard("v_head_dim")
    kept = {key: value for key, value in cfgs.text.items() if key not in dropped}
    return replace(cfgs, text=kept) if len(kept) != len(cfgs.text) else cfgs
