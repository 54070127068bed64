"""The changelog rows read from the vLLM 0.34.0 wheel (`pip download --no-deps vllm==0.34.0`, 2026-12-03), merged
into versions_platforms.CHANGELOG in release order; bench/release_watch.py 0.33.0 -> 0.34.0 named the cited
functions that changed (docs/release-watch.md) and each row says what of it the planner follows.
"""

from __future__ import annotations

from app.core.version_types import Change

RELEASE_0_34_CHANGELOG: tuple[Change, ...] = (
    Change(
        "0.34.0",
        "0.34.0 config/vllm.py VllmConfig._resolve_extensible_kv_cache: enable_extensible_kv_cache defaults on on CUDA "
        "and ROCm unless kv_cache_memory_bytes or num_gpu_blocks_override is set; config/cache.py CacheConfig."
        "resolved_gpu_memory_utilization: an unset --gpu-memory-utilization is 1.0 then (0.92 otherwise); v1/worker/"
        "utils.py request_memory skips the free-memory check under it; v1/worker/extensible_kv_cache.py "
        "measure_kv_cache_bytes sizes the pool after warmup and capture: min(requested - non_kv, headroom - margin) - "
        "transient peak, margin max(1 GiB (3 GiB on ROCm), 0.75 x peak) (app/core/extensible_kv.py)",
        {"extensible_kv_cache": True},
    ),
    Change(
        "0.34.0",
        "0.34.0 config/vllm.py VllmConfig._split_cudagraph_capture_sizes: on is_device_capability_family(100) with no "
        "cudagraph_capture_sizes / max_cudagraph_capture_size given, prefill graphs take config/compilation.py "
        "prefill_cudagraph_capture_grid(min(8192, max_num_batched_tokens)) (54 sizes at 8192) and decode graphs "
        "decode_cudagraph_capture_grid(max_num_seqs) (64 at 1024) within max_decode_cudagraph_capture_tokens 8192 "
        "(decode_cudagraph_capture_shapes); elsewhere the decode sizes are the shared grid's (app/core/capture_split.py)",
        {"capture_split_sm100": True},
    ),
)
