"""The bytes vLLM loads for a checkpoint whose model.safetensors.index.json is given: its ``total_size`` less
what vLLM does not load (MTP layers the checkpoint stores, hf_config/mtp.py; stored rotary buffers and a tied
lm_head's second copy, :func:`unloaded_tensor_bytes`) plus what vLLM allocates that the checkpoint does not store
(Gemma-4's k_eq_v V slots, hf_config/index_slots.py). vLLM itself never reads ``total_size``: an index that gives
none, or 0, is planned from the config's parameter count."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.hf_config.coerce import _as_int, _as_mapping, _Configs
from app.core.hf_config.geometry import _Geometry, _Layers
from app.core.hf_config.index_slots import unstored_v_slot_params, with_v_slots
from app.core.hf_config.mtp import loaded_bytes, mtp_layers, mtp_stored, mtp_unquantized
from app.core.hf_config.params import ParamBreakdown, _Moe, _separate_lm_head

# stored buffers vLLM's loader drops (0.33.0 models/utils.py AutoWeightsLoader: "rotary_emb.inv_freq" and
# "rotary_pos_emb.inv_freq" map to None); transformers' rotary modules make inv_freq float32, head/2 of them
ROTARY_BUFFER_SUFFIXES = ("rotary_emb.inv_freq", "rotary_pos_emb.inv_freq")
ROTARY_BUFFER_BYTES_PER_ELEMENT = 4
# a checkpoint cast as a whole (``model.half()`` before saving) stores them in its own 2-byte dtype instead
ROTARY_BUFFER_CAST_BYTES_PER_ELEMENT = 2
# the untied-looking copy of a tied output head (0.33.0 models/utils.py AutoWeightsLoader aliased_params: of
# ``lm_head.weight`` and the embedding only the first met is loaded, the rest skipped)
TIED_HEAD_NAMES = ("lm_head.weight", "language_model.lm_head.weight")


def index_total_size(index: Mapping[str, Any]) -> int | None:
    """``metadata.total_size`` of an index object; None when it gives none or 0 (a Qwen3-VL copy's index says
    ``"total_size": 0``), which vLLM never reads."""
    metadata = _as_mapping("safetensors_index", _as_mapping("safetensors_index", index).get("metadata"))
    if metadata.get("total_size") is None:
        return None
    size = _as_int("safetensors_index", metadata["total_size"], minimum=0, maximum=2**60)
    return size or None


def unloaded_tensor_bytes(
    index: Mapping[str, Any],
    *,
    geometry: _Geometry,
    tied: bool,
    dtype_bytes: int,
    loaded_bytes: int | None = None,
) -> int:
    """Bytes of stored tensors vLLM does not load: ``rotary_emb.inv_freq`` buffers (head_size / 2 each) and, for
    a tied model, the stored ``lm_head.weight`` (vocab x hidden in the checkpoint dtype).

    The index gives no dtypes: a buffer is float32 (transformers' rotary modules) unless the checkpoint was cast
    whole before saving, when it is 2-byte. With ``loaded_bytes`` (an unquantized checkpoint's parameters x
    dtype, what its total_size must be once the skipped tensors are off) the element size that makes the index
    agree is taken, else float32. E.g. openPangu-Embedded-7B stores 34 inv_freq buffers of 128 / 2 x 4 = 256 B:
    8,704 B; Pygmalion-7B 32 of 128 / 2 x 2 = 128 B (total_size 13,476,835,328 = 2 x 6,738,415,616 + 4,096);
    falcon-180B-chat (tied by FalconConfig's default) stores ``lm_head.weight`` beside ``word_embeddings``:
    65,024 x 14,848 x 2 B = 1,930,952,704 B."""
    weight_map = index.get("weight_map")
    if not isinstance(weight_map, Mapping):
        return 0
    buffers = sum(1 for name in weight_map if isinstance(name, str) and name.endswith(ROTARY_BUFFER_SUFFIXES))
    head = 0
    if tied and any(name in weight_map for name in TIED_HEAD_NAMES):
        head = geometry.vocab_size * geometry.hidden_size * dtype_bytes
    sizes = [buffers * (geometry.head_size // 2) * per for per in _BUFFER_ELEMENT_SIZES]
    total = index_total_size(index)
    for size in sizes:
        if loaded_bytes is not None and total is not None and total - size - head == loaded_bytes:
            return size + head
    return sizes[0] + head


_BUFFER_ELEMENT_SIZES = (ROTARY_BUFFER_BYTES_PER_ELEMENT, ROTARY_BUFFER_CAST_BYTES_PER_ELEMENT)


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
    if exact is None:
        return None
    quant_cfg = cfgs.top.get("quantization_config") or cfgs.text.get("quantization_config") or hf_quant_config
    quantized = isinstance(quant_cfg, Mapping)
    body_and_tower = (breakdown.total + vision_params) * dtype_bytes
    unloaded = unloaded_tensor_bytes(
        index,
        geometry=geometry,
        tied=not _separate_lm_head(cfgs),  # a pooling model skips a stored lm_head.weight too
        dtype_bytes=dtype_bytes,
        loaded_bytes=None if quantized else body_and_tower,
    )
    exact -= min(exact - 1, unloaded)
    mtp = mtp_layers(cfgs, geometry, moe, breakdown)
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
