"""Lever 4, --gpu-memory-utilization: the safe ceiling, check, candidates, effect, cost."""

from __future__ import annotations

import math

from app.core.budget import CUDA_CONTEXT_BYTES
from app.core.extensible_kv import EXTENSIBLE_DEFAULT_UTILIZATION
from app.core.recommend.engine import Context, gib_changes, gib_text
from app.core.recommend.refusals import free_utilization
from app.core.result import Estimate
from app.core.specs import GIB, ServeConfig
from app.core.text import Text

# --- gpu_memory_utilization ceiling ------------------------------------------------------------------
# With CUDA graphs budgeted (0.20+) only the CUDA context, NCCL and cuBLAS handles live outside
# T x u; 0.95 leaves 4 GiB of an 80 GB device for them and for allocator fragmentation.
SAFE_UTILIZATION_CEILING = 0.95
# Older versions capture graphs in the 1 - u slack; besides the graphs and the context we keep this
# much for activation spikes above the profiled peak (the seed: "顶到 1.0 会挤占 prefill 峰值").
ACTIVATION_HEADROOM_BYTES = GIB // 2
UTILIZATION_STEP = 0.01  # the ceiling is rounded down to whole hundredths


# --- 4. gpu_memory_utilization ------------------------------------------------------------------------


def utilization_ceiling(est: Estimate) -> tuple[float, str]:
    """The highest utilization we recommend for this estimate's version and device, and why: 1.0 under 0.34.0's
    extensible KV cache, which keeps its margin free itself and takes 1.0 when the flag is unset."""
    if est.extensible_kv_cache:
        return EXTENSIBLE_DEFAULT_UTILIZATION, Text(
            "vLLM {vllm_version} sizes its extensible KV cache from the memory measured after warmup and keeps its own margin free, so 1.0 (its default when the flag is unset) is safe: ceiling 1.00",
            vllm_version=est.vllm_version,
        )
    if est.cuda_graph_budgeted:
        return SAFE_UTILIZATION_CEILING, (
            Text(
                "vLLM {vllm_version} budgets CUDA graphs inside T × u, so only the CUDA context, NCCL and allocator slack live outside: ceiling {safe_utilization_ceiling:.2f}",
                vllm_version=est.vllm_version,
                safe_utilization_ceiling=SAFE_UTILIZATION_CEILING,
            )
        )
    outside = est.cuda_graph_bytes + CUDA_CONTEXT_BYTES + ACTIVATION_HEADROOM_BYTES
    raw = 1 - outside / est.device_total_bytes
    floored = round(math.floor(raw / UTILIZATION_STEP + 1e-9) * UTILIZATION_STEP, 2)
    ceiling = min(SAFE_UTILIZATION_CEILING, floored)
    return round(ceiling, 2), (
        Text(
            "vLLM {vllm_version} captures CUDA graphs outside T × u: 1 − (graphs {cuda_graph_bytes} + CUDA context {cuda_context_bytes} + activation headroom {activation_headroom_bytes}) / {device_total_bytes} = {raw:.4f}, rounded down to {floored:.2f}",
            vllm_version=est.vllm_version,
            cuda_graph_bytes=gib_text(est.cuda_graph_bytes),
            cuda_context_bytes=gib_text(CUDA_CONTEXT_BYTES),
            activation_headroom_bytes=gib_text(ACTIVATION_HEADROOM_BYTES),
            device_total_bytes=gib_text(est.device_total_bytes),
            raw=raw,
            floored=floored,
        )
        + (
            Text(
                ", capped at {safe_utilization_ceiling:.2f}",
                safe_utilization_ceiling=SAFE_UTILIZATION_CEILING,
            )
            if floored > SAFE_UTILIZATION_CEILING
            else ""
        )
    )


def util_check(ctx: Context) -> str | None:
    ceiling, why = utilization_ceiling(ctx.now)
    current = ctx.now.gpu_memory_utilization
    free = free_utilization(ctx)
    if free is not None and current >= free:
        return Text(
            "gpu_memory_utilization is {current:g}, already at the free share of the device ({free:.2f}): other processes hold the rest, and vLLM refuses to start above it.",
            current=current,
            free=free,
        )
    if current >= ceiling:
        return Text(
            "gpu_memory_utilization is {current:g}, already at or above the safe ceiling ({why}).",
            current=current,
            why=why,
        )
    return None


def util_candidates(ctx: Context) -> list[ServeConfig]:
    ceiling, _ = utilization_ceiling(ctx.now)
    free = free_utilization(ctx)  # never above what vLLM's free-memory check accepts
    ceiling = ceiling if free is None else min(ceiling, free)
    start = math.floor(ctx.now.gpu_memory_utilization / UTILIZATION_STEP + 1e-9) + 1
    stop = round(ceiling / UTILIZATION_STEP)
    return [
        ctx.serve.model_copy(update={"gpu_memory_utilization": round(h * UTILIZATION_STEP, 2)})
        for h in range(start, stop + 1)
    ]


def util_effect(ctx: Context, chosen: ServeConfig | None) -> str:
    _, why = utilization_ceiling(ctx.now)
    if chosen is None:
        return Text(
            "A larger share of the device for vLLM; all of the increase goes to the KV pool ({why}).", why=why
        )
    b, a = ctx.now, ctx.engine.at(chosen)
    return Text(
        "Budget T × u {budget_bytes} → {budget_bytes2}: KV pool {kv_cache_bytes} → {kv_cache_bytes2}. Safe ceiling: {why}.",
        **gib_changes(b, a, "budget_bytes", "kv_cache_bytes"),
        why=why,
    )


def util_cost(ctx: Context, chosen: ServeConfig | None) -> str:
    est = ctx.engine.at(chosen) if chosen is not None else ctx.now
    if est.extensible_kv_cache:
        return Text(
            "vLLM keeps its margin for the CUDA context and activation spikes free itself; only memory it does not measure (other processes that start on the device later) must fit in the {unused_bytes} outside the budget.",
            unused_bytes=gib_text(est.unused_bytes),
        )
    return (
        Text(
            "Only {unused_bytes} stays outside the budget for the CUDA context, NCCL buffers",
            unused_bytes=gib_text(est.unused_bytes),
        )
        + ("" if est.cuda_graph_budgeted else Text(", CUDA graphs"))
        + Text(
            " and activation spikes above the profiled peak; other processes on the device must fit there too."
        )
    )
