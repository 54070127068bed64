"""The device's situation, beyond its size: memory other processes hold, unified memory, Ascend's
own budget and graphs (issue 22 items 4 and 6).

Pure rules over a release's :class:`~app.core.versions.VersionRules` and the device; the estimator
(app/core/estimate/stages.py) applies them. Every fact is read from the code of the release named:

- vLLM 0.10.2+ refuses to start when the free memory at its snapshot is below ``total x u``
  (``v1/worker/utils.py::request_memory``, reference §2.1); memory held by other processes counts
  against that free memory, not against the pool;
- V1 0.7.3 / 0.8.5 (``Worker.determine_available_memory``, §2.4) and vllm-ascend up to v0.14
  (``NPUWorker.determine_available_memory``, §9) have no such check: their non-torch term is
  ``(total - free) - torch allocated``, so another process's memory comes out of the KV pool;
- vllm-ascend from v0.15 refuses with vLLM 0.11's wording (no device id);
- vllm-ascend captures ACL graphs after it sizes the pool and never budgets them;
- vllm-ascend reads ``--kv-cache-memory-bytes`` only from v0.19.1rc1, and never on a 310P, whose worker
  halves the pool from v0.18.0 (``vllm_ascend/_310p/worker_310p.py``).
"""

from __future__ import annotations

from app.core import graph_mode
from app.core.budget import CUDA_CONTEXT_BYTES
from app.core.specs import GIB, DeviceSpec, ServeConfig
from app.core.text import Text
from app.core.versions import VersionRules

ASCEND_FREE_MEMORY_DEVICE = "device "  # vllm_ascend/worker/worker.py (v0.15.0rc1 … v0.23.0): no device id
# vllm-ascend runs NPUWorker310 (vllm_ascend/_310p/worker_310p.py) when get_ascend_device_type() is _310P:
# the catalog's 310P entry (device_specs/devices_added.yaml)
ASCEND_310P_DEVICE_ID = "huawei-ascend-310p"
ASCEND_310P_POOL_DIVISOR = 2  # NPUWorker310.determine_available_memory: "(…) // 2" (v0.18.0+)


# NPUWorker310.determine_available_memory (vllm-ascend v0.18.0+ _310p/worker_310p.py) also subtracts
# "non_torch_memory_cleared_by_empty_cache" = (total - free - torch reserved) inside the profile run minus the
# non-torch increase over the init snapshot: the non-torch memory the device already held at that snapshot (the
# runtime's context and other processes), plus what empty_cache released. The context is read from a real 310P
# start (vllm-ascend#10122, tests/data/logs/collected/ascend_310p_qwen36_27b_w8a8_tp2_suggestion.log): "Free
# memory on device (42.24/43.24 GiB) on startup", 1.00 GiB held before vLLM allocated (rank 1: 1.03 GiB). The
# rest of that log's term (0.49 / 0.50 GiB, released by empty_cache) is not modelled.
ASCEND_310P_STARTUP_HELD_BYTES = int(1.00 * GIB)

# What the 310P3 runtime reports as one die's total (torch.npu.mem_get_info()[1], printed by vllm-ascend as "total
# memory: <bytes>" or "Free memory on device (free/total GiB)") is not one figure: 42.67 GiB and 43.24 GiB on the two
# dies of one Atlas 300I Duo (vllm-ascend#4074, #10122: TP0 / TP1), 42.67 alone (Ascend/pytorch#78), 43.24 alone
# (vllm-ascend#3479, #14004), 46.20 GiB on another 300I Duo (vllm-ascend#3316). Nominally 48 GiB a die, so the board's
# firmware and driver keep 1.85-5.33 GiB, and the second die of a card 0.57 GiB more than the first. Which board a
# user has the planner cannot know: the plan names the spread and what it moves the pool by.
ASCEND_310P_DUO_DIE_TOTALS_BYTES = (
    45816029184,
    46431260672,
)  # the two dies of one 300I Duo (#4074: TP1, TP0)
ASCEND_310P_REPORTED_TOTALS_BYTES = (*ASCEND_310P_DUO_DIE_TOTALS_BYTES, 49602220032)


def ascend_310p_pool_shift_bytes(
    *, device: DeviceSpec, rules: VersionRules, requested: int
) -> tuple[int, int]:
    """How much smaller / larger the pool is on the 310P boards that report the smallest / largest total than on
    the plan's device: utilization (``requested`` / total) x (total - plan's total), halved where the 310P worker
    halves the pool.

    E.g. at 0.9 on the catalog's 43.24 GiB at v0.18.0: (-0.26, +1.33) GiB.
    """
    divisor = pool_divisor(rules=rules, device=device)
    low, high = min(ASCEND_310P_REPORTED_TOTALS_BYTES), max(ASCEND_310P_REPORTED_TOTALS_BYTES)
    total = device.memory_total_bytes
    utilization = requested / total
    return int(utilization * (low - total) / divisor), int(utilization * (high - total) / divisor)


# On an integrated GPU vLLM's "free memory" is the OS's available memory: MemorySnapshot.measure replaces
# cudaMemGetInfo's free with psutil.virtual_memory().available (vllm/utils/mem_utils.py: for compute capability
# 8.7 / 11.0 / 12.1 - Orin, Thor, Spark - in 0.13.0-0.19.1, for current_platform.is_integrated_gpu in 0.20.0-0.33.0).
# The pool is what the start-up's drop in that figure leaves (0.13.0-0.26: non_torch_increase, the growth of
# (total - available) - torch reserved; 0.27.1+: total_consumed = free before - free after, mem_utils.py::
# memory_profiling), so whatever the host side takes from the shared memory meanwhile (torch.compile's workers, the
# engine's heap, other processes, page cache the OS cannot drop) leaves the KV pool too. That depends on the host,
# not the model, so it is a band on the pool, not a term: the spread of two starts of one configuration on one GB10
# (guardkit's Nemotron-3-Nano-4B-FP8, vLLM 0.13.0+nv26.01, tests/data/logs/heldout-2026-12g: util 0.05 -> pool
# -2.51 GiB, util 0.15 -> 11.15 GiB, weights 4.9054 GiB both; 121.69 x 0.10 - 13.66 = -1.49 GiB between them).
UMA_HOST_BAND_BYTES = round(1.49 * GIB)


def unified_memory_band_bytes(device: DeviceSpec) -> int:
    """How much more or less the pool can be on a unified-memory device (:data:`UMA_HOST_BAND_BYTES`); 0 elsewhere."""
    return UMA_HOST_BAND_BYTES if device.unified_memory else 0


def used_by_others_bytes(serve: ServeConfig) -> int:
    return int(serve.device_memory_used_gib * GIB)


def free_at_start_bytes(*, device: DeviceSpec, serve: ServeConfig) -> int:
    """The device's free memory when the worker starts: the total less the CUDA context and what other processes
    hold (the start-up free-memory check, and 0.34.0's extensible-cache headroom, both compare with it).

    E.g. an H100 (84,932,978,278 B) with nothing else on it: 84,932,978,278 - 536,870,912 = 84,396,107,366 B."""
    return device.memory_total_bytes - CUDA_CONTEXT_BYTES - used_by_others_bytes(serve)


def free_check(*, rules: VersionRules, device: DeviceSpec) -> tuple[bool, str]:
    """Whether this release refuses to start on too little free memory, and how it names the device."""
    if device.platform == "npu":
        return rules.ascend_budget == "profile", ASCEND_FREE_MEMORY_DEVICE
    return rules.free_memory_check, rules.free_memory_device


def is_310p(device: DeviceSpec) -> bool:
    return device.platform == "npu" and device.id == ASCEND_310P_DEVICE_ID


def kv_bytes_given(*, rules: VersionRules, device: DeviceSpec, serve: ServeConfig) -> int | None:
    """``--kv-cache-memory-bytes`` where the worker takes it as the pool; None where it is not given or not
    read: vllm-ascend up to v0.18.0, and its 310P worker in every release (no fast path in its override).

    E.g. 20 GiB on an H100 at 0.33.0 -> 20 GiB; on a 910B at 0.18.0 -> None; at 0.19.0 -> 20 GiB.
    """
    if device.platform == "npu" and (is_310p(device) or not rules.ascend_kv_memory_bytes):
        return None
    return serve.kv_cache_memory_bytes


def kv_bytes_ignored(*, rules: VersionRules, device: DeviceSpec, serve: ServeConfig) -> bool:
    return (
        serve.kv_cache_memory_bytes is not None
        and kv_bytes_given(rules=rules, device=device, serve=serve) is None
    )


def free_check_runs(*, rules: VersionRules, device: DeviceSpec, serve: ServeConfig) -> bool:
    """Whether the start-up free-memory check runs for this plan (:func:`startup_free_check`)."""
    runs, _ = startup_free_check(rules=rules, device=device, serve=serve)
    return runs


def startup_free_check(*, rules: VersionRules, device: DeviceSpec, serve: ServeConfig) -> tuple[bool, str]:
    """Whether the start-up free-memory check runs for this plan, and how the refusal names the device
    (:func:`free_check`): upstream skips it under --kv-cache-memory-bytes before 0.33
    (``free_memory_check_with_kv_bytes``); vllm-ascend's ``NPUWorker._init_device`` (v0.15.0rc1+)
    checks whatever the flags."""
    checks, where = free_check(rules=rules, device=device)
    if (
        rules.extensible_kv_cache
        and device.platform in ("cuda", "rocm")
        and serve.kv_cache_memory_bytes is None
    ):
        return False, where  # 0.34.0 request_memory: under the extensible KV cache the budget is only a cap
    if device.platform == "npu" or serve.kv_cache_memory_bytes is None:
        return checks, where
    return checks and rules.free_memory_check_with_kv_bytes, where


def pool_divisor(*, rules: VersionRules, device: DeviceSpec) -> int:
    """What the worker divides its profiled pool by: 2 on a 310P from vllm-ascend v0.18.0, else 1."""
    return ASCEND_310P_POOL_DIVISOR if is_310p(device) and rules.ascend_310p_halves_pool else 1


def cleared_before_halving_bytes(*, rules: VersionRules, device: DeviceSpec, serve: ServeConfig) -> int:
    """What the 310P worker subtracts before it halves the pool (ASCEND_310P_STARTUP_HELD_BYTES): the runtime's
    context plus the memory other processes hold; 0 on every other worker.

    E.g. a 310P at v0.18.0 with nothing else on it: 1.00 GiB; with 2 GiB held by another process: 3.00 GiB.
    """
    if pool_divisor(rules=rules, device=device) == 1:
        return 0
    return ASCEND_310P_STARTUP_HELD_BYTES + used_by_others_bytes(serve)


def others_in_pool(*, rules: VersionRules, device: DeviceSpec) -> bool:
    """Other processes' memory counted as this instance's non-torch memory (it leaves the KV pool)."""
    if device.platform == "npu":
        return rules.engine == "v1" and rules.ascend_budget == "peak"
    return rules.budget_style == "v1_peak"


def requested_uses_ceil(*, rules: VersionRules, device: DeviceSpec) -> bool:
    """`ceil(T x u)` from vLLM 0.14; vllm-ascend keeps the plain product (NPUWorker, reference §9)."""
    return platform_requested_uses_ceil(rules=rules, platform=device.platform)


def platform_requested_uses_ceil(*, rules: VersionRules, platform: str) -> bool:
    """:func:`requested_uses_ceil` for a platform alone (the doctor may know the platform, not the card)."""
    return rules.requested_uses_ceil and platform != "npu"


def device_warnings(
    *, device: DeviceSpec, serve: ServeConfig, rules: VersionRules, requested: int
) -> list[str]:
    """What the device's situation changes that vLLM's arithmetic does not show."""
    out: list[str] = []
    mode = graph_mode.effective_mode(serve, rules=rules)
    # the graph model is calibrated on FULL_AND_PIECEWISE (0.11.0+'s default), whatever the release's default
    if mode not in ("NONE", graph_mode.DEFAULT_MODE) and device.platform in ("cuda", "rocm"):
        out.append(
            Text(
                "cudagraph_mode {mode}: the CUDA-graph memory shown is modelled on logs of the default FULL_AND_PIECEWISE capture; {mode} captures another set of graphs, so that figure is approximate here.",
                mode=mode,
            )
        )
    if device.unified_memory:
        out.append(
            Text(
                "{name} has unified memory: the OS, its page cache and every other process share the {total:.2f} GiB with the GPU, so gpu_memory_utilization is not a hard bound there (vllm#46307, #56824) — the profile run and graph capture can push the whole host out of memory. Leave more than the usual headroom (users run 0.80-0.87) and drop the page cache before starting.",
                name=device.name,
                total=device.memory_total_bytes / GIB,
            )
        )
        out.append(
            Text(
                "vLLM reads the free memory on {name} as the OS's available memory (vllm/utils/mem_utils.py), so what the host side of the start-up takes from the shared memory meanwhile (torch.compile's workers, the engine's heap, other processes) also comes out of the KV pool: the pool's range here is {band:.2f} GiB wider on each side, the spread of two starts of one configuration on one GB10.",
                name=device.name,
                band=unified_memory_band_bytes(device) / GIB,
            )
        )
    if device.platform == "npu" and graph_mode.captures_graphs(serve, rules=rules):
        out.append(
            Text(
                "vllm-ascend captures its ACL graphs after it sizes the KV pool and does not budget them (vllm_ascend/worker/worker.py; the start-up log's usage line reports them as 'GiB for NPU graph memory'): they must fit in the {slack:.2f} GiB outside gpu_memory_utilization. The planner does not model their size on Ascend.",
                slack=(device.memory_total_bytes - requested) / GIB,
            )
        )
    if kv_bytes_ignored(rules=rules, device=device, serve=serve):
        out.append(
            Text(
                "vllm-ascend {version} does not read --kv-cache-memory-bytes on {name} (vllm_ascend/worker/worker.py reads it from v0.19.1rc1; the 310P worker never): the pool is sized from gpu_memory_utilization as if it were not given.",
                version=rules.version,
                name=device.name,
            )
        )
    if is_310p(device):
        less, more = ascend_310p_pool_shift_bytes(device=device, rules=rules, requested=requested)
        out.append(
            Text(
                "The 310P's runtime reports {low:.2f}-{high:.2f} GiB per die on real boards (firmware and driver keep different amounts; the second die of a 300I Duo {die_gap:.2f} GiB more), and the plan uses {total:.2f} GiB: on another board the pool is {less:.2f} to +{more:.2f} GiB off. Set the device memory to the 'total memory' your log or npu-smi shows.",
                low=min(ASCEND_310P_REPORTED_TOTALS_BYTES) / GIB,
                high=max(ASCEND_310P_REPORTED_TOTALS_BYTES) / GIB,
                total=device.memory_total_bytes / GIB,
                less=less / GIB,
                more=more / GIB,
                die_gap=(max(ASCEND_310P_DUO_DIE_TOTALS_BYTES) - min(ASCEND_310P_DUO_DIE_TOTALS_BYTES)) / GIB,
            )
        )
    if pool_divisor(rules=rules, device=device) > 1:
        out.append(
            Text(
                "vllm-ascend's 310P worker halves the KV pool it profiles, to leave room for operator workspace (vllm_ascend/_310p/worker_310p.py, v0.18.0+): the pool shown is that half.",
            )
        )
    used = used_by_others_bytes(serve)
    checked, _ = free_check(rules=rules, device=device)
    if used and not checked and others_in_pool(rules=rules, device=device):
        out.append(
            Text(
                "vLLM {version} has no start-up free-memory check; it counts the {used:.2f} GiB other processes hold as its own non-torch memory, so the KV pool is that much smaller.",
                version=rules.version,
                used=used / GIB,
            )
        )
    elif used and not checked:
        out.append(
            Text(
                "vLLM {version} neither checks nor subtracts the {used:.2f} GiB other processes hold: total x utilization ({requested:.2f} GiB) must still fit beside them, or the KV allocation runs out of memory.",
                version=rules.version,
                used=used / GIB,
                requested=requested / GIB,
            )
        )
    return out
