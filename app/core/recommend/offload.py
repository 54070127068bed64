"""Lever 5, CPU offload (--cpu-offload-gb, --swap-space / --kv-offloading-size): check, candidates, effect, cost."""

from __future__ import annotations

import math

from app.core.recommend.engine import Context, gib_changes
from app.core.recommend.parallel import BYTES_PER_GB
from app.core.specs import GIB, DeviceSpec, ServeConfig
from app.core.text import Text
from app.core.versions import V0_DEFAULT_SWAP_GIB

# --- --cpu-offload-gb: weights streamed from host memory every forward step --------------------------
PCIE_GEN4_GB_PER_S = 25  # achievable host-to-device copy rate of a PCIe Gen4 x16 link (32 GB/s raw)
PCIE_GEN5_GB_PER_S = 50  # PCIe Gen5 x16 (64 GB/s raw)
PCIE_GEN5_MIN_SM = 90  # Hopper/Blackwell servers ship PCIe Gen5 hosts; older GPUs sit on Gen4


# --- 5. offload ---------------------------------------------------------------------------------------


def pcie_gb_per_s(device: DeviceSpec) -> int:
    sm = device.sm
    return PCIE_GEN5_GB_PER_S if sm is not None and sm >= PCIE_GEN5_MIN_SM else PCIE_GEN4_GB_PER_S


def offload_check(ctx: Context) -> str | None:
    if ctx.preference == "latency":
        return Text(
            "The preference is latency, and --cpu-offload-gb streams weights over PCIe on every step; CPU KV tiers (--swap-space / --kv-offloading-size) add no GPU blocks."
        )
    if ctx.now.weights_bytes < GIB:
        return Text("Less than 1 GiB of weights per device: nothing worth offloading.")
    return None


def offload_candidates(ctx: Context) -> list[ServeConfig]:
    current = ctx.serve.cpu_offload_gb
    top = math.floor(current + ctx.now.weights_bytes / GIB)
    return [
        ctx.serve.model_copy(update={"cpu_offload_gb": float(g)})
        for g in range(math.floor(current) + 1, top + 1)
    ]


def _offload_tiers(ctx: Context) -> str:
    rules = ctx.rules
    if rules.swap_space_used:
        return Text(
            "--swap-space (default {v0_default_swap_gib} GiB per GPU) keeps the KV of preempted sequences in CPU memory; it does not add GPU blocks, so it does not raise the concurrency at S* and swapping adds latency.",
            v0_default_swap_gib=V0_DEFAULT_SWAP_GIB,
        )
    if rules.has_kv_offloading_flags:
        return Text(
            "--kv-offloading-size N --kv-offloading-backend native adds a CPU tier for KV blocks: it helps prefix reuse across requests but adds no GPU blocks, so the concurrency at max length is unchanged."
        )
    return Text(
        "--swap-space is accepted but unused by the V1 engine of this version (preemption recomputes)."
    )


def offload_effect(ctx: Context, chosen: ServeConfig | None) -> str:
    text = _offload_tiers(ctx)
    if chosen is not None:
        b, a = ctx.now, ctx.engine.at(chosen)
        text += Text(
            " --cpu-offload-gb {cpu_offload_gb:g} moves that much of each device's weights to host memory: weights per device {weights_bytes} → {weights_bytes2}, KV pool {kv_cache_bytes} → {kv_cache_bytes2}.",
            cpu_offload_gb=chosen.cpu_offload_gb,
            **gib_changes(b, a, "weights_bytes", "kv_cache_bytes"),
        )
    else:
        text += Text(" --cpu-offload-gb would free GPU memory for KV by moving weights to host memory.")
    return text


def offload_cost(ctx: Context, chosen: ServeConfig | None) -> str:
    rate = pcie_gb_per_s(ctx.device)
    gen = "Gen5" if rate == PCIE_GEN5_GB_PER_S else "Gen4"
    if chosen is None:
        return Text(
            "Offloaded weights are streamed over PCIe ({gen}, ~{rate} GB/s) on every forward step: each GiB adds ≈ {gib:.0f} ms per step.",
            gen=gen,
            rate=rate,
            gib=GIB / (rate * BYTES_PER_GB) * 1000.0,
        )
    offload_bytes = chosen.cpu_offload_gb * GIB
    millis = offload_bytes / (rate * BYTES_PER_GB) * 1e3
    return Text(
        "Every forward step streams {cpu_offload_gb:g} GiB of weights over PCIe {gen} (~{rate} GB/s): ≈ {millis:.0f} ms added to every decode step, i.e. to every generated token of the batch. Throughput and latency both drop sharply; prefer more devices where possible.",
        cpu_offload_gb=chosen.cpu_offload_gb,
        gen=gen,
        rate=rate,
        millis=millis,
    )
