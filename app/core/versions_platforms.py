"""versions_changelog.py's platform rows (ROCm, vllm-ascend), kept apart so both modules stay under the 800-line
cap, and the merged :data:`CHANGELOG` versions.py applies (core and platform rows in release order)."""

from __future__ import annotations

from app.core.version_parse import Version, release_numbers
from app.core.version_types import Change
from app.core.versions_0_34 import RELEASE_0_34_CHANGELOG
from app.core.versions_capture import CAPTURE_CHANGELOG
from app.core.versions_changelog import CHANGELOG as CORE_CHANGELOG
from app.core.versions_mxfp4 import MXFP4_CHANGELOG
from app.core.versions_quant import QUANT_CHANGELOG

# --- platforms (ROCm, vllm-ascend): rows kept in their own block, merged into CHANGELOG in release order -----
PLATFORM_CHANGELOG: tuple[Change, ...] = (
    Change(
        "0.10.0",
        "0.10.2 platforms/rocm.py RocmPlatform.get_attn_backend_cls: V1 takes TRITON_ATTN ('Using Triton Attention "
        "backend on V1 engine') unless VLLM_ROCM_USE_AITER and VLLM_ROCM_USE_AITER_MHA (envs.py: off by default), "
        "and MLA TRITON_MLA at any block unless AITER MLA is on or --block-size is 1 (ROCM_AITER_MLA, to 0.17.0); dense 0.11.0-"
        "0.18.0 the same (0.18.0 _get_backend_priorities: ROCM_ATTN only with use_prefill_decode_attention)",
        {
            "rocm_backends": ("TRITON_ATTN",),
            "rocm_mla_backends": ("TRITON_MLA",),
            "rocm_mla_block1_aiter": True,
        },
    ),
    Change(
        "0.18.0",
        "0.18.0 platforms/rocm.py _get_backend_priorities: with AITER MLA off an MLA model walks [TRITON_MLA] "
        "(triton_mla.py supports_block_size: a multiple of 16); get_attn_backend_cls's 'or block_size == 1' "
        "(0.10.1.1, 0.11.0, 0.17.0: ROCM_AITER_MLA at --block-size 1) is gone, as at 0.19.0 and 0.33.0",
        {"rocm_mla_block1_aiter": False},
    ),
    Change(
        "0.19.0",
        "0.19.0 platforms/rocm.py _get_backend_priorities: ROCM_ATTN first, then (AITER only) ROCM_AITER_FA / "
        "ROCM_AITER_UNIFIED_ATTN, then TRITON_ATTN; v1/attention/backends/rocm_attn.py RocmAttentionBackend: "
        "supports_sink False, head sizes 32-256 (get_supported_head_sizes), MultipleOf(16); 0.33.0 the same",
        {"rocm_backends": ("ROCM_ATTN", "TRITON_ATTN")},
    ),
    Change(
        "0.24.0",
        "vllm-ascend v0.23.0 and v0.25.1rc1 (the same code; put at 0.24.0, the first known release after 0.23.0: 0.23.x is "
        "planned with 0.22.1's rules): models/layer/attention/layer.py get_dsv4_block_sizes (DSV4_BLOCK_SIZES, "
        "_DSV4_BLOCK_SIZES_A5 on an A5: per cache_config.block_size the MLA / SWA / C4-state / C128-state blocks "
        "and two padded pages; fp8 caches of head_dim + 128 on an A5), models/deepseek_v4.py AscendDeepseekV4SWACache / AscendDeepseekV4IndexerCache / "
        "AscendCompressorStateCache get_kv_cache_spec, core/kv_cache_interface.py AscendMLAAttentionSpec, "
        "patch/platform/patch_kv_cache_utils.py group_and_unify_kv_cache_specs, _get_kv_cache_groups_uniform_groups "
        "and _get_kv_cache_config_deepseek_v4 (one block = layer tuples x the C4 group's page sizes)",
        {"ascend_dsv4_layout": True},
    ),
    Change(
        "0.26.0",
        "vllm-ascend main at 182b75ea84 (2026-08-22, after v0.25.1rc1): group_and_unify_kv_cache_specs buckets MLA "
        "specs by logical block size and AscendMLAAttentionSpec.storage_block_size divides by the compress ratio; "
        "no later vllm-ascend release was read, so DeepSeek-V4 on an NPU keeps the unsized-cache warning from 0.26.0",
        {"ascend_dsv4_layout": False},
    ),
    Change(
        "0.32.0",
        "0.32.0 v1/attention/backends/rocm_attn.py RocmAttentionBackend.supports_mm_prefix returns False ('Not "
        "implemented'; 0.31.0 True), so an image-prefix model (Gemma-3) falls to TRITON_ATTN",
        {"rocm_attn_mm_prefix": False},
    ),
)


def _since(change: Change) -> Version:
    return release_numbers(change.since)


# stable: rows of one release keep their order, the core rows first
CHANGELOG = tuple(
    sorted(
        CORE_CHANGELOG
        + QUANT_CHANGELOG
        + PLATFORM_CHANGELOG
        + CAPTURE_CHANGELOG
        + RELEASE_0_34_CHANGELOG
        + MXFP4_CHANGELOG,
        key=_since,
    )
)
