"""The changelog rows of vLLM's CUDA-graph capture sizes (config/vllm.py VllmConfig._set_cudagraph_sizes), read by
graph_rules.capture_sizes / default_capture_cap / check_compilation; merged into versions_changelog.CHANGELOG in
release order (kept apart so that module stays under the 800-line cap).
"""

from __future__ import annotations

from app.core.version_types import Change

CAPTURE_CHANGELOG: tuple[Change, ...] = (
    Change(
        "0.9.0",  # the 0.9 series, planned with 0.9.2's rules (entries sit at a minor series' .0)
        "0.9.2 config.py VllmConfig._set_cudagraph_sizes (V1): [1, 2, 4] + range(8, cuda_graph_sizes[0] + 1, 8) with "
        "SchedulerConfig.cuda_graph_sizes = [512] whatever max_num_seqs: 67 sizes, as a ROCm 0.9.2rc2.dev build "
        "prints '(mixed prefill-decode, PIECEWISE): 67/67' (tests/data/logs/heldout-2026-12i); releases before "
        "0.9.2 not read",
        {"capture_grid_16_from_256": False, "capture_cap_ignores_seqs": True},
    ),
    Change(
        "0.10.0",  # the 0.10 series, planned with 0.10.2's rules
        "0.10.2 config/scheduler.py SchedulerConfig.__post_init__: cuda_graph_sizes = [min(max_num_seqs x 2, 512)]; "
        "config/__init__.py _set_cudagraph_sizes still steps by 8 (67 sizes to 512). 0.11.0 config/__init__.py the "
        "same, [1, 2, 4] + range(8, cuda_graph_sizes[0] + 1, 8): a real 0.11.0rc2 ROCm start prints 'Capturing CUDA "
        "graphs (decode, FULL): 67/67' (tests/data/logs/heldout-2026-12j). 0.11.1's config/vllm.py already steps by "
        "16 from 256 (0.11.1 wheel): 0.11.1-0.12.x take 51 sizes from versions.PATCH_CHANGES",
        {"capture_cap_ignores_seqs": False},
    ),
    Change(
        "0.13.0",
        "0.13.0 config/vllm.py VllmConfig._set_cudagraph_sizes: [1, 2, 4] + range(8, 256, 8) + range(256, "
        "max_graph_size + 1, 16), 51 sizes to 512; 0.14.0-0.33.0 the same",
        {"capture_grid_16_from_256": True},
    ),
    Change(
        "0.13.0",
        "0.13.0 and 0.14.0 config/vllm.py VllmConfig._set_cudagraph_sizes: with both max_cudagraph_capture_size and "
        "cudagraph_capture_sizes given, 'customized max_cudagraph_capture_size(=%d) should be consistent with the max "
        "value of cudagraph_capture_sizes(=%d)' unless they agree (the sizes cut at max_num_batched_tokens); 0.11.0 "
        "has no max_cudagraph_capture_size",
        {"capture_size_consistency": True},
    ),
    Change(
        "0.13.0",
        "0.13.0 and 0.14.0 config/vllm.py VllmConfig._set_cudagraph_sizes: the default cap is min(max_num_seqs x "
        "decode_query_len x 2, 512), decode_query_len = 1 + speculative_config.num_speculative_tokens (0.11.0 "
        "config/__init__.py: min(max_num_seqs x 2, 512)); 0.19.0-0.33.0 the same",
        {"capture_spec_query_len": True},
    ),
    Change(
        "0.20.0",
        "0.20.2 config/vllm.py VllmConfig._set_cudagraph_sizes: 'ensure max_num_tokens is captured if within max "
        "capture size' appends max_num_batched_tokens to the default grid (0.19.0: the grid alone); 0.33.0 the same",
        {"capture_adds_batched_tokens": True},
    ),
    Change(
        "0.30.0",
        "0.30.0 config/vllm.py VllmConfig._set_cudagraph_sizes: 'default_max_graph_size = 1024 if "
        "current_platform.is_device_capability_family(100) else 512' (platforms/interface.py: capability // 10 == 10, "
        "any 10.x), so the default cap is min(2 x max_num_seqs, 1024) on B200 / B300; 0.27.1: 512 on every device "
        "(0.28.x-0.29.x are planned with 0.27.1's rules); 0.32.0 and 0.33.0 the same. With draft tokens "
        "uniform_decode_sizes: decode_query_len x request_counts(min(max_num_seqs, default)) within the cap (absent "
        "in 0.27.1)",
        {"capture_cap_by_major": ((10, 1024),), "capture_decode_sizes": "speculative"},
    ),
    Change(
        "0.32.0",
        "0.31.0 config/vllm.py VllmConfig._set_cudagraph_sizes: with one token a request and the default cap, "
        "'uniform_decode_sizes = [max_num_seqs]' when max_num_seqs is within the cap, appended to the grid when within "
        "max_num_batched_tokens (0.30.0: decode sizes only with speculative tokens). Put at 0.32.0, the first known "
        "release with it: 0.31.x is planned with 0.30.0's rules; 0.33.0 the same",
        {"capture_decode_sizes": "always"},
    ),
)
