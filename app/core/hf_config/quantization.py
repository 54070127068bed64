"""quantization_config -> QuantSpec, as vLLM names and sizes each method."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from app.core.errors import ConfigError
from app.core.hf_config.coerce import (
    MAX_DIM,
    _as_int,
    _as_list,
    _as_mapping,
    _as_str,
    _Configs,
    _flag,
    _lookup,
)
from app.core.hf_config.geometry import _Geometry
from app.core.hf_config.params import ParamBreakdown
from app.core.specs import QuantMethod, QuantSpec
from app.core.text import Text

MXFP4_GROUP_SIZE = 32  # one e8m0 scale per 32 values (OCP MX spec)
NVFP4_GROUP_SIZE = 16  # one fp8 scale per 16 values
BNB_4BIT_BLOCK_SIZE = 64  # bitsandbytes nf4/fp4 default blocksize


# ----------------------------------------------------------------------------------------------
# Quantization
# ----------------------------------------------------------------------------------------------


def _int_bits(key: str, value: Any) -> int:
    return _as_int(key, value, minimum=1, maximum=64)


def _group_size(key: str, value: Any, *, per_channel: int) -> int:
    """A group size; -1/None mean one scale per output channel (a row of ``per_channel`` inputs)."""
    if value is None:
        return per_channel
    size = _as_int(key, value, minimum=-1, maximum=MAX_DIM)
    return per_channel if size <= 0 else size


def _compressed_tensors(q: Mapping[str, Any], hidden: int) -> QuantSpec:
    groups = _as_mapping("quantization_config", q.get("config_groups"))
    if not groups:
        raise ConfigError("quantization_config", Text("compressed-tensors config_groups is empty"))
    group = _as_mapping("quantization_config", next(iter(groups.values())))
    weights = _as_mapping("quantization_config", group.get("weights"))
    bits = _int_bits("quantization_config", weights.get("num_bits"))
    kind = weights.get("type", "int")
    group_size = _group_size("quantization_config", weights.get("group_size"), per_channel=hidden)
    name = "compressed-tensors"
    if kind == "float" and bits == 8:
        return QuantSpec(method=QuantMethod.FP8, group_size=group_size, source_name=name)
    if kind == "float" and bits == 4:
        return QuantSpec(method=QuantMethod.NVFP4, group_size=NVFP4_GROUP_SIZE, source_name=name)
    if kind == "int" and bits == 8:
        return QuantSpec(method=QuantMethod.INT8, group_size=group_size, source_name=name)
    if kind == "int" and bits == 4:
        return QuantSpec(method=QuantMethod.INT4, group_size=group_size, source_name=name)
    raise ConfigError(
        "quantization_config",
        Text("unsupported compressed-tensors weights: {kind} {bits}-bit", kind=kind, bits=bits),
    )


def _quantization(
    cfgs: _Configs, geometry: _Geometry, breakdown: Callable[[], ParamBreakdown]
) -> QuantSpec | None:
    raw = _lookup(cfgs, "quantization_config")
    if raw is None:
        raw = _lookup(cfgs, "compression_config")  # older compressed-tensors checkpoints
    if raw is None:
        return None
    q = _as_mapping("quantization_config", raw)
    method = _as_str("quantization_config", q.get("quant_method", "")).lower()
    hidden = geometry.hidden_size
    if method in ("fp8", "fbgemm_fp8"):
        block = q.get("weight_block_size")
        group = (
            _as_int(
                "quantization_config", _as_list("quantization_config", block)[0], minimum=1, maximum=MAX_DIM
            )
            if block
            else hidden
        )
        return QuantSpec(method=QuantMethod.FP8, group_size=group, source_name=method)
    if method == "compressed-tensors":
        return _compressed_tensors(q, hidden)
    if method in ("gptq", "awq"):
        bits = _int_bits("quantization_config", q.get("bits", q.get("w_bit")))
        group = _group_size(
            "quantization_config", q.get("group_size", q.get("q_group_size")), per_channel=hidden
        )
        if bits == 8:
            return QuantSpec(method=QuantMethod.INT8, group_size=group, source_name=method)
        if bits == 4:
            return QuantSpec(method=QuantMethod.INT4, group_size=group, source_name=method)
        raise ConfigError(
            "quantization_config", Text("unsupported {method} bits {bits}", method=method, bits=bits)
        )
    if method == "mxfp4":
        # gpt-oss: only the MoE experts are MXFP4; attention, router, embeddings, lm_head stay bf16.
        parts = breakdown()
        fraction = parts.experts / parts.non_embedding if parts.experts and parts.non_embedding else 1.0
        return QuantSpec(
            method=QuantMethod.MXFP4,
            group_size=MXFP4_GROUP_SIZE,
            quantized_fraction=min(1.0, fraction),
            source_name="mxfp4",
        )
    if method == "modelopt":
        inner = q.get("quantization")
        algo_source = _as_mapping("quantization_config", inner) if inner is not None else q
        algo = _as_str("quantization_config", algo_source.get("quant_algo", "")).upper()
        if algo == "NVFP4":
            return QuantSpec(
                method=QuantMethod.NVFP4, group_size=NVFP4_GROUP_SIZE, source_name="modelopt_fp4"
            )
        if algo == "FP8":
            return QuantSpec(method=QuantMethod.FP8, group_size=hidden, source_name="modelopt")
        raise ConfigError("quantization_config", Text("unsupported modelopt quant_algo {algo!r}", algo=algo))
    if method == "bitsandbytes":
        if _flag(q, "load_in_8bit"):
            return QuantSpec(method=QuantMethod.INT8, group_size=hidden, source_name=method)
        return QuantSpec(method=QuantMethod.INT4, group_size=BNB_4BIT_BLOCK_SIZE, source_name=method)
    raise ConfigError("quantization_config", Text("unsupported quant_method {method!r}", method=method))
