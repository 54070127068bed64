"""Weights vLLM allocates that a checkpoint does not store, so an index's ``total_size`` lacks them.

Gemma-4 ``attention_k_eq_v``: the full-attention layers (those before the KV-shared tail) ship ``k_proj``
only. vLLM 0.33.0 still builds a full ``QKVParallelLinear`` for them and loads K into both the K and the V
shard (``models/gemma4.py _gemma4_layer_weights_mapper``: ``k_eq_v_shards = (("q", "q"), ("k", ["k",
"v"]))``; ``Gemma4Attention.__init__``: "k_eq_v layers load K weights into both K and V slots ... no
structural difference needed"). So the device holds one more hidden x (KV heads x head_dim) matrix a layer
than the index counts. google/gemma-4-31B-it: 10 such layers (every 6th of 60) x 5,376 x (4 x 512) =
110,100,480 parameters, 220,200,960 B in bf16.
"""

from __future__ import annotations

from app.core.hf_config.coerce import _Configs, _flag, _int
from app.core.hf_config.geometry import _Geometry, _Layers
from app.core.specs import LayerKind


def unstored_v_slot_params(cfgs: _Configs, geometry: _Geometry, layers: _Layers) -> int:
    """Parameters of the V projections vLLM allocates on ``attention_k_eq_v`` full-attention layers."""
    text = cfgs.text
    if not cfgs.text_model_type.startswith("gemma4") or not _flag(text, "attention_k_eq_v"):
        return 0
    first_shared = geometry.num_layers - (_int(text, "num_kv_shared_layers", minimum=0) or 0)
    full_layers = sum(1 for kind in layers.kinds[:first_shared] if kind == LayerKind.FULL)
    kv_heads = _int(text, "num_global_key_value_heads") or geometry.num_kv_heads
    head = _int(text, "global_head_dim") or geometry.head_size
    return full_layers * geometry.hidden_size * kv_heads * head


def with_v_slots(
    *,
    total_size: int,
    slot_params: int,
    body_params: int,
    plain_bytes: int,
    dtype_bytes: int,
    quantized: bool,
) -> int:
    """``total_size`` plus the V slots, stored like the rest of the body: ``dtype_bytes`` a parameter for an
    unquantized checkpoint, else the body's own bytes a parameter (total less embeddings and towers
    ``plain_bytes``, over the body's stored parameters)."""
    if not slot_params:
        return total_size
    stored_params = body_params - slot_params
    if not quantized or stored_params <= 0 or total_size <= plain_bytes:
        return total_size + slot_params * dtype_bytes
    return total_size + round(slot_params * (total_size - plain_bytes) / stored_params)
