"""MTP / next-n layers: stored in the checkpoint (so in an index's ``total_size``), not loaded to serve.

vLLM 0.33.0 skips them when it loads the model and loads them only as a speculative "mtp" draft:
``deepseek_v2.py DeepseekV2ForCausalLM.load_weights`` (``get_spec_layer_idx_from_weight_name``: layers
``num_hidden_layers`` .. ``+ num_nextn_predict_layers - 1``), ``glm4_moe.py`` (``skip_spec_layers``),
``qwen3_5.py`` / ``qwen3_next.py`` (``WeightsMapper({"mtp.": None})``), ``nemotron_h.py`` (``"mtp": None``).
One MTP layer is one decoder layer (attention and the model's MoE or dense FFN, two norms) plus its
projection of [embedding; hidden] (``eh_proj`` / ``fc``, 2h x h) and three norms (enorm, hnorm and the
final norm; Qwen's pre_fc_norm_hidden, pre_fc_norm_embedding, norm). The DeepSeek layout stores its own
``embed_tokens`` and ``shared_head.head`` copies too (``deepseek_mtp.py _rewrite_spec_layer_name``:
``embed_tokens`` and ``shared_head`` are spec-layer weight names); Qwen's ``mtp.*`` shares the model's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from app.core.hf_config.coerce import MAX_DIM, _Configs, _first_int
from app.core.hf_config.geometry import _Geometry
from app.core.hf_config.params import (
    ParamBreakdown,
    _attention_params,
    _Moe,
    _nemotron_h_blocks,
    _nemotron_h_moe,
    _sparse_attention_params,
)

MTP_LAYER_KEYS = ("num_nextn_predict_layers", "mtp_num_hidden_layers")
MAX_MTP_LAYERS = 64
# model types whose checkpoints keep the DeepSeek next-n layout (model.layers.<n>.embed_tokens and
# .shared_head.head stored per MTP layer): deepseek_mtp.py, glm4_moe_mtp.py, deepseek_v32 / glm_moe_dsa
EMBEDDING_COPY_MODEL_TYPES = frozenset({"deepseek_v3", "deepseek_v32", "glm4_moe", "glm_moe_dsa"})
GATED_MLP_MATRICES = 3


@dataclass(frozen=True)
class MtpLayers:
    """Parameters of a checkpoint's MTP layers: the decoder part (quantized like the body) and the
    parts kept in the checkpoint dtype (projection, norms, embedding copies)."""

    count: int
    decoder_params: int
    plain_params: int


def mtp_layer_count(cfgs: _Configs) -> int:
    """``num_nextn_predict_layers`` (DeepSeek, GLM, Nemotron-H) or ``mtp_num_hidden_layers`` (Qwen)."""
    return _first_int(cfgs.text, MTP_LAYER_KEYS, minimum=0, maximum=MAX_MTP_LAYERS) or 0


def _ffn_params(cfgs: _Configs, g: _Geometry, moe: _Moe | None) -> int:
    h = g.hidden_size
    if moe is None:
        return GATED_MLP_MATRICES * h * g.intermediate_size
    if _nemotron_h_blocks(cfgs):
        routed, shared, gate = _nemotron_h_moe(cfgs, moe)
        return moe.num_experts * routed + shared + gate
    shared = GATED_MLP_MATRICES * h * moe.shared_size + (h if moe.shared_gate else 0)
    return moe.num_experts * GATED_MLP_MATRICES * h * moe.expert_size + shared + h * moe.num_experts


def mtp_layers(cfgs: _Configs, g: _Geometry, moe: _Moe | None, breakdown: ParamBreakdown) -> MtpLayers:
    """The MTP layers' parameters, split as :class:`MtpLayers`.

    E.g. DeepSeek-R1 (one layer: MLA projections, 256 experts x 3 x 7,168 x 2,048 = 11,274,289,152, a shared
    expert, the router and two norms): decoder 11,507,286,016; plain eh_proj 2 x 7,168^2 + 3 x 7,168 +
    embed_tokens and shared_head.head 2 x 129,280 x 7,168 = 1,956,140,032."""
    count = mtp_layer_count(cfgs)
    if not count:
        return MtpLayers(0, 0, 0)
    h = g.hidden_size
    attention, mla = _attention_params(cfgs, g)
    attention = (mla or attention) + _sparse_attention_params(cfgs, g, 1)
    decoder = attention + _ffn_params(cfgs, g, moe) + 2 * h
    plain = 2 * h * h + 3 * h
    if cfgs.text_model_type in EMBEDDING_COPY_MODEL_TYPES:
        plain += breakdown.embedding + g.vocab_size * h
    return MtpLayers(count, count * decoder, count * plain)


def _names(quant: Mapping[str, Any] | None) -> Iterable[str]:
    if not isinstance(quant, Mapping):
        return ()
    inner = quant.get("quantization")
    names: list[Any] = []
    for block in (quant, inner if isinstance(inner, Mapping) else {}):
        for key in ("ignore", "exclude_modules", "modules_to_not_convert"):
            value = block.get(key)
            if isinstance(value, list):
                names.extend(value[:MAX_DIM])
    return (name for name in names if isinstance(name, str))


def mtp_unquantized(quant: Mapping[str, Any] | None, *, num_layers: int) -> bool:
    """Whether the quantization config leaves the first MTP layer (``layers.<num_hidden_layers>``) in the
    checkpoint dtype: nvidia's ModelOpt DeepSeek checkpoints list ``model.layers.61*`` in
    ``exclude_modules``."""
    marker = f"layers.{num_layers}"
    # the whole layer: "model.layers.61*" / "model.layers.61.*" / "model.layers.61", not one module of it
    # ("model.layers.61.mlp.gate" leaves the rest quantized)
    return any(name.rstrip("*").rstrip(".").endswith(marker) for name in _names(quant))


def mtp_stored(
    index: Mapping[str, Any],
    *,
    mtp: MtpLayers,
    num_layers: int,
    total_size: int,
    unquantized_body_bytes: int | None,
    dtype_bytes: int,
) -> bool:
    """Whether the checkpoint behind ``index`` stores its MTP layers at all (a config may declare one that a
    derived checkpoint dropped: a REAP-pruned Qwen3.5 MoE keeps ``mtp_num_hidden_layers: 1`` and no ``mtp.*``).

    With a ``weight_map``: an ``mtp.*`` tensor, a ``model.mtp_layers.*`` one (MiMo: 0.33.0 mimo.py maps
    ``model.mtp_layers.`` to None) or one of layer ``num_layers`` (the DeepSeek / GLM next-n layout).
    Without one, for an unquantized checkpoint (``unquantized_body_bytes``: every counted parameter at the
    checkpoint dtype, tower included): ``total_size`` (the index's, validated) holds the MTP layers when it exceeds that by more than half
    their size. A quantized checkpoint without a weight_map is taken to store them, as its published layout does."""
    weight_map = index.get("weight_map")
    if isinstance(weight_map, Mapping) and weight_map:
        marker = f"layers.{num_layers}."
        return any(
            isinstance(name, str)
            and (name.startswith("mtp.") or ".mtp." in name or ".mtp_layers." in name or marker in name)
            for name in weight_map
        )
    if unquantized_body_bytes is None:
        return True
    half_mtp = (mtp.decoder_params + mtp.plain_params) * dtype_bytes // 2
    return total_size > unquantized_body_bytes + half_mtp


def loaded_bytes(
    *,
    total_size: int,
    mtp: MtpLayers,
    breakdown: ParamBreakdown,
    vision_params: int,
    dtype_bytes: int,
    mtp_in_checkpoint_dtype: bool,
) -> int:
    """An index's ``total_size`` less the MTP layers vLLM skips.

    The decoder part is stored like the body: at the body's bytes per parameter, (total - embeddings -
    tower - plain MTP parts) / (body + MTP decoder parameters), unless the quantization config leaves it
    unquantized; the plain parts are in the checkpoint dtype. E.g. DeepSeek-R1, FP8: 688,586,727,753 -
    11,507,286,016 x 1.00042 (FP8 plus its block scales and bf16 norms) - 1,956,140,032 x 2 = 673,162,303,026,
    0.04 % from the 672,879,762,432 counted from config.json alone."""
    if not mtp.count:
        return total_size
    embeddings = (breakdown.embedding + breakdown.lm_head) * dtype_bytes
    plain = mtp.plain_params * dtype_bytes
    body = breakdown.total - breakdown.embedding - breakdown.lm_head
    stored = total_size - embeddings - vision_params * dtype_bytes - plain
    if stored <= 0 or body + mtp.decoder_params <= 0:
        return total_size
    per_param = dtype_bytes if mtp_in_checkpoint_dtype else stored / (body + mtp.decoder_params)
    return max(1, round(total_size - mtp.decoder_params * per_param - plain))
