"""The bytes vLLM loads for a checkpoint whose model.safetensors.index.json is given: its ``total_size`` less
what vLLM does not load (MTP layers the checkpoint stores, hf_config/mtp.py) plus what vLLM allocates that the
checkpoint does not store (Gemma-4's k_eq_v V slots, hf_config/index_slots.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.errors import ConfigError
from app.core.hf_config.coerce import _as_int, _as_mapping, _Configs
from app.core.hf_config.geometry import _Geometry, _Layers
from app.core.hf_config.index_slots import unstored_v_slot_params, with_v_slots
from app.core.hf_config.mtp import loaded_bytes, mtp_layers, mtp_stored, mtp_unquantized
from app.core.hf_config.params import ParamBreakdown, _Moe
from app.core.text import Text


def index_total_size(index: Mapping[str, Any]) -> int:
    """``metadata.total_size`` of an index object."""
    metadata = _as_mapping("safetensors_index", _as_mapping("safetensors_index", index).get("metadata"))
    if metadata.get("total_size") is None:
        raise ConfigError("safetensors_index", Text("metadata.total_size missing"))
    return _as_int("safetensors_index", metadata["total_size"], minimum=1, maximum=2**60)


# the parsed config as hf_config reads it: the configs, their geometry, layer kinds, MoE shape and parameter count
Parsed = tuple[_Configs, _Geometry, _Layers, _Moe | None, ParamBreakdown]


def loaded_index_bytes(
    parsed: Parsed,
    *,
    index: Mapping[str, Any] | None,
    hf_quant_config: Mapping[str, Any] | None,
    vision_params: int,
    dtype_bytes: int,
) -> int | None:
    """What vLLM holds for the checkpoint behind ``index``; None without an index.

    E.g. DeepSeek-R1 (FP8): 688,586,727,753 less its stored MTP layer = 673,162,303,026; gemma-4-31B-it (bf16):
    62,546,177,752 plus 10 V slots of 5,376 x 2,048 x 2 B = 62,766,378,712; a REAP-pruned Qwen3.5 MoE that declares
    an MTP layer and stores none: its 37,087,995,136 as given."""
    cfgs, geometry, layers, moe, breakdown = parsed
    if index is None:
        return None
    exact = index_total_size(index)
    quant_cfg = cfgs.top.get("quantization_config") or cfgs.text.get("quantization_config") or hf_quant_config
    quantized = isinstance(quant_cfg, Mapping)
    mtp = mtp_layers(cfgs, geometry, moe, breakdown)
    body_and_tower = (breakdown.total + vision_params) * dtype_bytes
    if mtp.count and mtp_stored(
        index,
        mtp=mtp,
        num_layers=geometry.num_layers,
        total_size=exact,
        unquantized_body_bytes=None if quantized else body_and_tower,
        dtype_bytes=dtype_bytes,
    ):
        exact = loaded_bytes(
            total_size=exact,
            mtp=mtp,
            breakdown=breakdown,
            vision_params=vision_params,
            dtype_bytes=dtype_bytes,
            mtp_in_checkpoint_dtype=not quantized
            or mtp_unquantized(quant_cfg if quantized else None, num_layers=geometry.num_layers),
        )
    return with_v_slots(
        total_size=exact,
        slot_params=unstored_v_slot_params(cfgs, geometry, layers),
        body_params=breakdown.total - breakdown.embedding - breakdown.lm_head,
        plain_bytes=(breakdown.embedding + breakdown.lm_head + vision_params) * dtype_bytes,
        dtype_bytes=dtype_bytes,
        quantized=quantized,
    )
