"""DeepSeek-V4's KV-cache groups each keep their own block size (vLLM 0.33.0), and the compressed caches follow
--block-size. Worked by hand from the 0.33.0 wheel:

- models/deepseek_v4/attention.py DeepseekV4Attention.get_kv_cache_spec (compressed cache) and
  DeepseekV4IndexerCache.get_kv_cache_spec: MLAAttentionSpec(block_size=cache_config.block_size, tokens_per_state=r);
- v1/attention/backends/mla/sparse_swa.py DeepseekV4SWACache: block_size=64;
- models/deepseek_v4/compressor.py CompressorStateCache: block_size 4 (r = 4) or 8 (r = 128), fixed;
- models/deepseek_v4/sparse_mla.py DeepseekV4SparseMLABackend.get_supported_kernel_block_sizes: [256], and
  v1/worker/utils.py select_common_block_size: a manager block no [256] kernel block divides is refused
  ("No common block size for 128");
- vllm#51041 ("same 5-group hybrid layout") and vllm#51163 (groups 256 / 64 / 8 / 4) for the group block sizes.
"""

from __future__ import annotations

import math

import pytest

from app.core.errors import InvalidServeConfigError
from tests.unit.test_current_configs_0_33 import _est


def test_each_dsv4_group_reports_its_own_block() -> None:
    # DeepSeek-V4-Flash at TP 8 on H100 (test_current_configs_0_33.test_deepseek_v4_flash_cache_at_0_33 has the
    # pages): two sliding-window groups of 64-token blocks, the compressed + indexer group of 256, the CSA
    # compressor states of 4, the HCA states of 8 (0.32's planner said 256 for all five)
    est = _est("deepseek-ai--DeepSeek-V4-Flash", "h100", 8)
    assert [(g.kind, g.num_layers, g.block_size) for g in est.groups] == [
        ("sliding", 22, 64),
        ("sliding", 21, 64),
        ("mla", 62, 256),
        ("sliding", 42, 4),
        ("sliding", 20, 8),
    ]
    # the scheduler's block is their lcm (kv_cache_utils.py "kv lcm block sizes"): lcm(64, 256, 4, 8) = 256
    assert math.lcm(*(g.block_size for g in est.groups)) == 256


def test_dsv4_compressed_caches_follow_the_block_size() -> None:
    # --block-size 512: CSA 512 / 4 = 128 states x 584 B = 74,752 -> 130 x 576 = 74,880; HCA 512 / 128 = 4 x 584 =
    # 2,336 -> 5 x 576 = 2,880; indexer 128 x 132 = 16,896 -> 30 x 576 = 17,280. The full group (21 CSA, 20 HCA,
    # 21 indexer) is 21 x 74,880 + 20 x 2,880 + 21 x 17,280 = 1,992,960 B, wider than the sliding (823,680) and
    # state (870,912) groups, so it is the block. One request of 8,192 tokens: cdiv(8,192, 512) = 16 blocks there;
    # the sliding-window and state groups keep 64 / 4 / 8 and their 129 / 2,049 / 1,025
    est = _est("deepseek-ai--DeepSeek-V4-Flash", "h100", 8, block_size=512)
    assert est.block_size == 512
    assert est.bytes_per_block == 1_992_960
    assert [(g.block_size, g.page_size_bytes, g.blocks_per_request) for g in est.groups] == [
        (64, 37_440, 129),
        (64, 37_440, 129),
        (512, 74_880, 16),
        (4, 32_832, 2_049),
        (8, 32_832, 1_025),
    ]
    # 128 is no multiple of the kernel's 256: refused, naming the field
    with pytest.raises(InvalidServeConfigError) as err:
        _est("deepseek-ai--DeepSeek-V4-Flash", "h100", 8, block_size=128)
    assert err.value.field == "block_size"
