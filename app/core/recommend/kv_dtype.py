"""Lever 2, the KV cache dtype (--kv-cache-dtype): check, candidates, effect, cost."""

from __future__ import annotations

from app.core.kv import DS_MLA_BYTES_PER_TOKEN, ONE_BYTE_KV_DTYPES
from app.core.recommend.engine import Context
from app.core.specs import ServeConfig
from app.core.text import Text

# --- 2. kv_cache_dtype --------------------------------------------------------------------------------


def _kv_dtype_for(ctx: Context) -> str:
    return "int8" if ctx.device.platform == "npu" else "fp8"


def dtype_check(ctx: Context) -> str | None:
    device, current = ctx.device, ctx.serve.kv_cache_dtype
    if current in ONE_BYTE_KV_DTYPES or current == "fp8_ds_mla":
        return Text("The KV cache is already {current} (one byte per element).", current=current)
    if current in DS_MLA_BYTES_PER_TOKEN:  # nvfp4_ds_mla: 352 B a token-layer, under one byte per element
        return Text("The KV cache is already {current}.", current=current)
    if not ctx.allow_fp8_kv:
        return Text("Quantized KV cache not allowed by the request (allow_fp8_kv is off).")
    if device.platform == "npu":
        if not device.int8_kv:
            return Text("{name} has no INT8 (C8) KV path in vllm-ascend.", name=device.name)
        return None
    if device.platform not in ("cuda", "rocm"):
        return Text("A quantized KV cache is not modelled on {platform} devices.", platform=device.platform)
    if not device.fp8_kv:
        sm = (
            Text(" (sm {compute_capability})", compute_capability=device.compute_capability)
            if device.compute_capability
            else ""
        )
        return Text(
            "{name}{sm} has no fp8 KV cache in its default attention backend (FlashAttention takes fp8 KV only from sm 9.0); vLLM would refuse --kv-cache-dtype fp8 or fall back to a slower backend.",
            name=device.name,
            sm=sm,
        )
    return None


def dtype_candidates(ctx: Context) -> list[ServeConfig]:
    return [ctx.serve.model_copy(update={"kv_cache_dtype": _kv_dtype_for(ctx)})]


def dtype_effect(ctx: Context, chosen: ServeConfig | None) -> str:
    target = _kv_dtype_for(ctx)
    text = Text(
        "One byte per KV element instead of {kv_dtype_bytes_per_element}: KV use roughly halves.",
        kv_dtype_bytes_per_element=ctx.now.kv_dtype_bytes_per_element,
    )
    if chosen is not None:
        before, after = ctx.engine.snapshot(ctx.serve), ctx.engine.snapshot(chosen)
        text += Text(
            " KV bytes per token per device {kv_bytes_per_token:,} → {kv_bytes_per_token2:,} B; KV cache {kv_tokens:,} → {kv_tokens2:,} tokens.",
            kv_bytes_per_token=before.kv_bytes_per_token,
            kv_bytes_per_token2=after.kv_bytes_per_token,
            kv_tokens=before.kv_tokens,
            kv_tokens2=after.kv_tokens,
        )
    if target == "int8":
        text += Text(
            " On Ascend the INT8 (C8) KV cache is not a --kv-cache-dtype value: vllm-ascend reads it from the ModelSlim quantization description (kv_cache_type C8 in quant_model_description.json) of a ModelSlim-quantized checkpoint served with --quantization ascend; the command below carries no KV flag."
        )
    return text


def dtype_cost(ctx: Context, chosen: ServeConfig | None) -> str:
    if _kv_dtype_for(ctx) == "int8":
        return Text(
            "Quantization error of INT8 KV with per-channel scales from ModelSlim calibration; needs a C8-quantized checkpoint and block_size a multiple of 32 (128 on Ascend)."
        )
    text = Text(
        "Quantization error: fp8 is fp8_e4m3 (3 mantissa bits, range ±448) with per-tensor scales (from the checkpoint, else 1.0); fp8_e5m2 keeps more range but only 2 mantissa bits. Check accuracy on long contexts. The attention backend must support an fp8 KV cache"
    )
    if chosen is not None:
        old, new = ctx.now.attention_backend, ctx.engine.at(chosen).attention_backend
        text += f": {new}" + (Text(" (instead of {old})", old=old) if new != old else "")
    return text + "."
