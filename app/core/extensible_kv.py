"""vLLM 0.34.0's extensible KV cache: the pool is sized from the memory left after warmup and graph capture.

From 0.34.0 `enable_extensible_kv_cache` is on by default on CUDA and ROCm (config/vllm.py
VllmConfig._resolve_extensible_kv_cache) unless ``--kv-cache-memory-bytes`` (or num_gpu_blocks_override)
sizes the pool. Then:

- ``--gpu-memory-utilization`` left unset is 1.0, not 0.92 (config/cache.py
  CacheConfig.resolved_gpu_memory_utilization), and the start-up "Free memory on device … is less than
  desired GPU memory utilization" check does not run (v1/worker/utils.py request_memory: "the budget is
  only a cap");
- the pool is what v1/worker/extensible_kv_cache.py measure_kv_cache_bytes leaves:
  ``min(requested - non_kv, headroom - margin) - transient_peak``, where non_kv is everything resident
  after warmup and capture but the KV cache (weights, non-torch memory, the captured graphs), headroom
  the free memory at start-up less non_kv, transient_peak the profiled activation peak
  (gpu_worker.py: reserved_headroom_bytes = peak_activation_memory; the graph estimate is 0 under this
  cache, gpu/model_runner.py GPUModelRunner.profile_cudagraph_memory) and margin
  ``max(KV_CACHE_MARGIN_FLOOR_BYTES, KV_CACHE_MARGIN_FRACTION x transient_peak)``.

With nothing else on the device the second term binds at utilization 1.0 (free memory is the total less
the runtime's context), the first at any explicit utilization below about 0.99.
"""

from __future__ import annotations

from typing import NamedTuple

from app.core.errors import InvalidServeConfigError
from app.core.kinds import cdiv
from app.core.kv import KVLayout, num_blocks_for
from app.core.specs import GIB, DeviceSpec, ServeConfig
from app.core.text import Text
from app.core.versions import VersionRules

# v1/worker/extensible_kv_cache.py (0.34.0): "(3 if current_platform.is_rocm() else 1) << 30" - ROCr maps
# kernel scratch outside the allocator when a kernel first needs it, so ROCm keeps the larger floor
KV_CACHE_MARGIN_FLOOR_BYTES_CUDA = 1 * GIB
KV_CACHE_MARGIN_FLOOR_BYTES_ROCM = 3 * GIB
KV_CACHE_MARGIN_FRACTION = 0.75  # same file: the margin's share of the transient peak
EXTENSIBLE_DEFAULT_UTILIZATION = 1.0  # config/cache.py resolved_gpu_memory_utilization, extensible cache on
PLATFORMS = ("cuda", "rocm")  # _resolve_extensible_kv_cache: "it is only supported on CUDA and ROCm"


def check_requested(*, rules: VersionRules, device: DeviceSpec, serve: ServeConfig) -> None:
    """``--enable-extensible-kv-cache`` asked for where vLLM cannot build it: config/vllm.py
    VllmConfig._resolve_extensible_kv_cache (0.34.0) raises ValueError("enable_extensible_kv_cache: <why>.")
    off CUDA and ROCm, and beside --kv-cache-memory-bytes (unset, it is simply off there).

    E.g. an Ascend NPU at 0.34.0 with the flag: refused; an H100 with it: nothing to refuse.
    """
    if not rules.extensible_kv_cache or serve.enable_extensible_kv_cache is not True:
        return
    if device.platform not in PLATFORMS:
        raise InvalidServeConfigError(
            "enable_extensible_kv_cache",
            Text(
                "vLLM {version} refuses --enable-extensible-kv-cache on this device: enable_extensible_kv_cache: it is only supported on CUDA and ROCm.",
                version=rules.version,
            ),
        )
    if serve.kv_cache_memory_bytes is not None:
        raise InvalidServeConfigError(
            "enable_extensible_kv_cache",
            Text(
                "vLLM {version} refuses --enable-extensible-kv-cache with --kv-cache-memory-bytes: enable_extensible_kv_cache: it sizes the KV cache from measured memory, which kv_cache_memory_bytes overrides.",
                version=rules.version,
            ),
        )


def applies(*, rules: VersionRules, device: DeviceSpec, serve: ServeConfig) -> bool:
    """Whether this start sizes an extensible KV cache: 0.34.0+, CUDA or ROCm, no --kv-cache-memory-bytes, not
    switched off (--no-enable-extensible-kv-cache).

    E.g. an H100 at 0.34.0: True; at 0.33.0: False; with --kv-cache-memory-bytes 20 GiB at 0.34.0: False.
    """
    return (
        rules.extensible_kv_cache
        and device.platform in PLATFORMS
        and serve.kv_cache_memory_bytes is None
        and serve.enable_extensible_kv_cache is not False
    )


def default_utilization(
    *, rules: VersionRules, device: DeviceSpec, serve: ServeConfig, fallback: float
) -> float:
    """``--gpu-memory-utilization`` when not given: 1.0 under the extensible cache, else ``fallback``."""
    return EXTENSIBLE_DEFAULT_UTILIZATION if applies(rules=rules, device=device, serve=serve) else fallback


def _margin_floor_bytes(platform: str) -> int:
    return KV_CACHE_MARGIN_FLOOR_BYTES_ROCM if platform == "rocm" else KV_CACHE_MARGIN_FLOOR_BYTES_CUDA


def margin_bytes(*, platform: str, transient_peak_bytes: int) -> int:
    """E.g. CUDA with a 2 GiB activation peak: max(1 GiB, 1.5 GiB) = 1.5 GiB; ROCm: max(3 GiB, 1.5 GiB) = 3 GiB."""
    return max(_margin_floor_bytes(platform), int(transient_peak_bytes * KV_CACHE_MARGIN_FRACTION))


def peak_sensitivity(
    *,
    requested_bytes: int,
    free_at_start_bytes: int,
    transient_peak_bytes: int,
    platform: str,
) -> float:
    """How many bytes the pool loses per byte of activation peak (:func:`pool_bytes`): 1 where the requested
    budget binds; 1 + KV_CACHE_MARGIN_FRACTION = 1.75 where the device headroom binds and the margin is its
    0.75 x peak share rather than the floor (the peak is then taken off twice: in full, and in the margin).

    E.g. an H100 at 0.34.0, utilization unset (1.0), peak 2,023,699,251 B: margin 1,517,774,438 > 1 GiB and the
    headroom term binds: 1.75; at --gpu-memory-utilization 0.9 the requested term binds: 1.0."""
    margin = margin_bytes(platform=platform, transient_peak_bytes=transient_peak_bytes)
    # both terms then lose the same weights, non-torch and graph bytes, so those do not decide which one binds
    headroom_binds = free_at_start_bytes - margin <= requested_bytes
    return (
        1.0 + KV_CACHE_MARGIN_FRACTION if headroom_binds and margin > _margin_floor_bytes(platform) else 1.0
    )


def pool_bytes(
    *,
    requested_bytes: int,
    free_at_start_bytes: int,
    non_kv_bytes: int,
    transient_peak_bytes: int,
    platform: str,
) -> int:
    """measure_kv_cache_bytes (0.34.0) with the committed prefix folded in (free + committed = free at start
    - non_kv): ``min(requested - non_kv, free_at_start - non_kv - margin) - transient_peak``, at least 0.

    E.g. an H100 (84,932,978,278 B), 0.5 GiB of context, non_kv 16 GiB, peak 2 GiB, utilization 1.0:
    min(84,932,978,278 - 17,179,869,184, 84,932,978,278 - 536,870,912 - 17,179,869,184 - 1,610,612,736)
    - 2,147,483,648 = 63,458,141,798 B.
    """
    margin = margin_bytes(platform=platform, transient_peak_bytes=transient_peak_bytes)
    available = min(requested_bytes - non_kv_bytes, free_at_start_bytes - non_kv_bytes - margin)
    return max(available - transient_peak_bytes, 0)


# 0.34.0 utils/extensible_tensor.py _MIN_GRANULARITY: the extensible cache maps physical memory in granules of
# the driver's granularity floored at 2 MiB (CUDA's own is 2 MiB; ROCm's 4 KiB is raised to it)
VMM_GRANULE_BYTES = 2 << 20


def segment_strides(layout: KVLayout) -> tuple[int, ...] | None:
    """The per-block strides of the extensible cache's segments, one per layer region (0.34.0
    v1/worker/extensible_kv_cache.py ExtensibleKVCache._segments under the default layer-outermost, block-compact
    layout, v1/attention/backends/utils.py _DEFAULT_LAYOUT_PREFERENCE LBNHC): a layer's page each. None when the
    layout's pages are not one size over whole layer regions (not modelled: the floor division stands).

    E.g. Llama-3.1-8B TP 1: 32 regions of 65,536 B (2,097,152 B a block)."""
    pages = {g.page_size_bytes for g in layout.groups if g.holds_kv}
    if len(layout.groups) == 1 and layout.groups[0].layer_pages:
        return tuple(page for page, layers in layout.groups[0].layer_pages for _ in range(layers))
    if len(pages) != 1 or any(g.layer_pages for g in layout.groups):
        return None
    page = pages.pop()
    if page <= 0 or layout.bytes_per_block % page:
        return None
    return (page,) * (layout.bytes_per_block // page)


class GranuleFit(NamedTuple):
    """Blocks whose layer segments, all of one stride, each fit whole granules: ``granules_per_segment`` =
    ⌊pool ÷ (segments × 2 MiB)⌋ granules a segment, holding ⌊granules_per_segment × 2 MiB ÷ stride⌋ blocks."""

    segments: int
    stride_bytes: int
    granules_per_segment: int
    blocks: int


def uniform_fit(*, available_bytes: int, segments: int, stride_bytes: int) -> GranuleFit:
    """The granule count where every segment has one stride: n blocks map segments x cdiv(n x stride, 2 MiB)
    granules, which fit the pool while cdiv(n x stride, 2 MiB) <= ⌊pool ÷ (segments × 2 MiB)⌋, i.e.
    n x stride <= that many granules' bytes.

    E.g. Llama-3.1-8B TP 1 on an H100, pool 63,547,668,726 B, 32 segments of 65,536 B: 946 granules a segment,
    946 x 2,097,152 // 65,536 = 30,272 blocks."""
    granules = max(available_bytes, 0) // (segments * VMM_GRANULE_BYTES)
    return GranuleFit(segments, stride_bytes, granules, granules * VMM_GRANULE_BYTES // stride_bytes)


def _granules_for(blocks: int, strides: tuple[int, ...]) -> int:
    """ExtensibleKVCache.physical_bytes_for (0.34.0) in granules: each segment's n x stride rounded up."""
    return sum(cdiv(blocks * stride, VMM_GRANULE_BYTES) for stride in strides)


def _mixed_fit(*, granules: int, strides: tuple[int, ...], cap: int) -> int:
    """The most blocks n <= cap with sum over segments of cdiv(n x stride, 2 MiB) <= granules. The sum lies
    between n x S / 2 MiB and that plus the m segments (S the strides' sum), so n lies between
    ⌊(granules - m) x 2 MiB ÷ S⌋ (always fits) and ⌊granules x 2 MiB ÷ S⌋ (the most that can); the footprint
    grows with n, so halving that bracket (a few dozen blocks wide: m x 2 MiB ÷ S) finds it."""
    total = sum(strides)
    high = min(cap, granules * VMM_GRANULE_BYTES // total)
    low = min(high, max(0, (granules - len(strides)) * VMM_GRANULE_BYTES // total))
    while low < high:  # low fits, every n above high does not
        middle = (low + high + 1) // 2
        if _granules_for(middle, strides) <= granules:
            low = middle
        else:
            high = middle - 1
    return low


def extensible_num_blocks_for(*, available_bytes: int, layout: KVLayout) -> int:
    """0.34.0 ExtensibleKVCache.blocks_within: the most blocks whose mapped footprint, each segment rounded up to
    whole granules (physical_bytes_for: sum of cdiv(n x stride, granule) x granule), fits the pool. vLLM steps
    down one block at a time from the floor; the same count is had in closed form where the segments share one
    stride (:func:`uniform_fit`) and by halving a bracket a few dozen blocks wide where they do not.

    E.g. Llama-3.1-8B TP 1 on an H100, pool 63,547,668,726 B: the floor gives 30,301 blocks, but 32 segments of
    65,536 B a block map cdiv(n x 65,536, 2 MiB) granules each, at most 63,547,668,726 // (32 x 2 MiB) = 946
    a segment, so n <= 946 x 2 MiB / 65,536 = 30,272."""
    blocks = num_blocks_for(available_bytes=available_bytes, layout=layout)
    strides = segment_strides(layout)
    if strides is None or blocks == 0:
        return blocks
    if len(set(strides)) == 1:
        fit = uniform_fit(available_bytes=available_bytes, segments=len(strides), stride_bytes=strides[0])
        return min(blocks, fit.blocks)
    return _mixed_fit(granules=available_bytes // VMM_GRANULE_BYTES, strides=strides, cap=blocks)


def stage_num_blocks(
    *, available_bytes: int, layout: KVLayout, rules: VersionRules, device: DeviceSpec, serve: ServeConfig
) -> int:
    """A stage's block count: in whole granules where the extensible cache sizes the pool (:func:`applies`; it
    never does under --kv-cache-memory-bytes, which sizes the pool itself), else vLLM's floor division.

    E.g. Llama-3.1-8B TP 1 on an H100, pool 63,547,668,726 B: 30,272 blocks at 0.34.0, 30,301 at 0.33.0."""
    if applies(rules=rules, device=device, serve=serve):
        return extensible_num_blocks_for(available_bytes=available_bytes, layout=layout)
    return num_blocks_for(available_bytes=available_bytes, layout=layout)
