"""A Hugging Face ``config.json`` -> :class:`ModelSpec`, following vLLM's own rules.

Everything here is a pure function of the JSON object. Rules are cited where they come from:
``vllm-accounting.md`` (the reference read from released vLLM sdists), vLLM's
``ModelConfig`` (``get_head_size``, ``get_total_num_kv_heads``, ``_get_and_verify_max_len``) and the
transformers config classes whose defaults fill keys that a config.json leaves out.

Any JSON object may come in (a pasted config, a fuzzer's dict); the only exception that leaves
this module is :class:`ConfigError`, naming the JSON key at fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

from pydantic import ValidationError

from app.core.errors import ConfigError
from app.core.hf_config import hy_v4
from app.core.hf_config.backend_fields import kv_view
from app.core.hf_config.coerce import (
    _as_mapping,
    _config_error,
    _Configs,
    _split_configs,
)
from app.core.hf_config.geometry import (
    _dtype,
    _geometry,
    _layers,
    compress_ratios,
    indexer_bytes_per_token,
    indexer_layers,
    layer_attention,
    mamba_ssm_dtype,
    retrieval_attention_contract,
)
from app.core.hf_config.index_weights import loaded_index_bytes
from app.core.hf_config.max_len import (
    _longrope_default_max_model_len,
    _max_model_len,
    _yarn_scaled_max_model_len,
    derive_max_model_len,
)
from app.core.hf_config.minimax_m3 import msa_block_size, msa_indexer_bytes_per_token, msa_indexer_layers
from app.core.hf_config.params import (
    ParamBreakdown,
    _breakdown,
    _moe,
    _tied,
    architecture_of,
    count_params,
    is_pooling,
    param_breakdown,
)
from app.core.hf_config.quantization import _quantization
from app.core.hf_config.registry import check_loader_fields, refuse_unloadable
from app.core.hf_config.remote_config import names_remote_config
from app.core.hf_config.sinks import config_attention_sinks
from app.core.hf_config.text_model import with_text_model
from app.core.hf_config.vision import uncounted_towers, vision_tower_params
from app.core.specs import DTYPE_BYTES, ModelSpec
from app.core.text import Text

__all__ = [
    "ParamBreakdown",
    "count_params",
    "derive_max_model_len",
    "model_spec_from_hf_config",
    "param_breakdown",
]

CONFIDENCES = ("verified", "likely", "recalled", "user")


# ----------------------------------------------------------------------------------------------
# Public entry point
# ----------------------------------------------------------------------------------------------


def model_spec_from_hf_config(
    config: Mapping[str, Any],
    *,
    name: str,
    params_total: int | None = None,
    params_active: int | None = None,
    safetensors_index: Mapping[str, Any] | None = None,
    hf_quant_config: Mapping[str, Any] | None = None,
    source: str = "",
    confidence: str = "user",
    vllm_version: str | None = None,
) -> ModelSpec:
    """Turn a config.json object into a ModelSpec the way vLLM reads it.

    ``params_total``/``params_active`` override the count from the config (model-card figures);
    ``safetensors_index`` is a model.safetensors.index.json object giving the exact weight bytes;
    ``hf_quant_config`` an hf_quant_config.json object (older ModelOpt checkpoints), read as vLLM does
    when config.json has no quantization_config. ``vllm_version`` (None: the default release) only picks the
    refusal said for a config the planner cannot read: vLLM's own (an unknown model_type, an architecture its
    registry lacks) comes before the field the planner found missing (:func:`registry.refuse_unloadable`).
    """
    if confidence not in CONFIDENCES:
        raise ConfigError(
            "confidence", Text("must be one of {confidences}", confidences=", ".join(CONFIDENCES))
        )
    try:
        return _model_spec(
            config,
            name=name,
            params_total=params_total,
            params_active=params_active,
            safetensors_index=safetensors_index,
            hf_quant_config=hf_quant_config,
            source=source,
            confidence=confidence,
            vllm_version=vllm_version,
        )
    except ValidationError as exc:
        raise _config_error(exc) from exc


def _check_identity(cfgs: _Configs) -> None:
    """What vLLM needs to pick a model class: an architecture or a model_type, and the loader's fields."""
    if not architecture_of(cfgs.top) and not cfgs.model_type:
        # vLLM: "No model architectures are specified"; transformers cannot pick a config class either
        raise ConfigError(
            "architectures",
            Text(
                "config.json has neither `architectures` nor `model_type`; vLLM cannot tell what model it is"
            ),
        )
    check_loader_fields(
        cfgs.top,
        architecture=architecture_of(cfgs.top),
        text=cfgs.text,
        text_prefix=f"{cfgs.text_key}." if cfgs.text_key else "",
    )


def _model_spec(
    config: Mapping[str, Any],
    *,
    name: str,
    params_total: int | None,
    params_active: int | None,
    safetensors_index: Mapping[str, Any] | None,
    hf_quant_config: Mapping[str, Any] | None,
    source: str,
    confidence: str,
    vllm_version: str | None,
) -> ModelSpec:
    cfgs = _split_configs(with_text_model(config))
    if hf_quant_config is not None:
        hf_quant_config = _as_mapping("hf_quant_config", hf_quant_config)
    _check_identity(cfgs)
    cfgs = kv_view(cfgs)  # a Transformers-backend architecture: only the fields that backend reads
    try:
        geometry = _geometry(cfgs)
        layers = _layers(cfgs, geometry)
        ratios = compress_ratios(cfgs, geometry.num_layers)  # V4.1 refused after the registry's check
    except (ConfigError, ValidationError):
        refuse_unloadable(cfgs.top, model_type=cfgs.model_type, vllm_version=vllm_version)
        raise
    moe = _moe(cfgs, geometry)
    breakdown_cache: list[ParamBreakdown] = []

    def breakdown() -> ParamBreakdown:
        if not breakdown_cache:
            breakdown_cache.append(_breakdown(cfgs, geometry, layers, moe))
        return breakdown_cache[0]

    arch = architecture_of(cfgs.top)
    vision_params = vision_tower_params(cfgs, architecture=arch, text_hidden=geometry.hidden_size)
    if params_total is None:
        params_total = breakdown().total + vision_params
        if params_active is None:
            params_active = breakdown().active
    dtype, dtype_assumed = _dtype(cfgs)
    exact = loaded_index_bytes(
        (cfgs, geometry, layers, moe, breakdown()),
        index=safetensors_index,
        hf_quant_config=hf_quant_config,
        vision_params=vision_params,
        dtype_bytes=DTYPE_BYTES[dtype],
    )
    return ModelSpec(
        name=name,
        architecture=arch,
        model_type=cfgs.model_type,
        mm_prefix_lm=cfgs.text.get("use_bidirectional_attention") == "vision",
        remote_code=bool(cfgs.top.get("auto_map")),
        remote_config=names_remote_config(cfgs.top),
        attention_sinks=config_attention_sinks(cfgs.text, architecture=arch),
        sparse_mla_sink=hy_v4.sparse_mla_sink(cfgs.text),
        num_layers=geometry.num_layers,
        hidden_size=geometry.hidden_size,
        intermediate_size=geometry.intermediate_size,
        moe_intermediate_size=moe.expert_size if moe else 0,
        num_experts=moe.num_experts if moe else 0,
        num_experts_per_tok=moe.top_k if moe else 0,
        num_shared_experts=moe.num_shared if moe else 0,
        shared_expert_size=moe.shared_size if moe else 0,
        moe_layers=breakdown().moe_layers if moe else None,
        one_sublayer_blocks=breakdown().one_sublayer_blocks,
        num_attention_heads=geometry.num_heads,
        num_kv_heads=geometry.num_kv_heads,
        head_size=geometry.head_size,
        head_size_v=geometry.head_size_v,
        vocab_size=geometry.vocab_size,
        tie_word_embeddings=_tied(cfgs),
        pooling=is_pooling(cfgs),
        max_model_len_derived=_max_model_len(cfgs),
        max_model_len_yarn_scaled=_yarn_scaled_max_model_len(cfgs),
        max_model_len_longrope_default=_longrope_default_max_model_len(cfgs),
        layer_kinds=layers.kinds,
        sliding_window_tokens=layers.sliding_window,
        attention_chunk_tokens=layers.chunk,
        mla=geometry.mla,
        mamba=layers.mamba,
        layer_attention=layer_attention(cfgs, geometry, layers),
        indexer_bytes_per_token=indexer_bytes_per_token(cfgs) or msa_indexer_bytes_per_token(cfgs),
        indexer_layers=indexer_layers(cfgs, geometry.num_layers)
        or msa_indexer_layers(cfgs, geometry.num_layers),
        sparse_kernel_block=msa_block_size(cfgs),
        compress_ratios=ratios,
        mamba_ssm_dtype=mamba_ssm_dtype(cfgs),
        retrieval_attention_contract=retrieval_attention_contract(cfgs),
        params_total=params_total,
        params_active=params_active,
        torch_dtype=dtype,
        dtype_assumed=dtype_assumed,
        quantization=_quantization(cfgs, geometry, breakdown, hf_quant_config, vllm_version=vllm_version),
        weights_bytes_exact=exact,
        vision_params=vision_params,
        uncounted_towers=uncounted_towers(cfgs, architecture=arch, vision_params=vision_params),
        source=source,
        confidence=cast(Literal["verified", "likely", "recalled", "user"], confidence),
    )
