"""The default block size agreed across all of a model's attention backends, by release (issue 22 item 1).

Read from the wheels:
- 0.31.0 / 0.33.0 platforms/interface.py Platform.update_block_size_for_backend, _find_non_ssm_backends and
  _preferred_block_size_for_backends: one backend keeps get_preferred_block_size; several take 16 when all support
  it, else the smallest lcm of one kernel block each that all support; "Setting kv cache block size to %d for %s
  backend(s)." with the names joined by "/";
- 0.18.0 / 0.19.0 / 0.30.0 platforms/interface.py update_block_size_for_backend: the first attention layer's
  backend only, "Setting kv cache block size to %d for %s backend.";
- 0.19.0-0.33.0 v1/attention/backend.py AttentionBackend.supports_block_size (any multiple of a kernel block) and
  get_preferred_block_size (16 if supported, else the smallest declared size);
- v1/attention/backends/mla/indexer.py DeepseekV32IndexerBackend.get_supported_kernel_block_sizes: [64] on CUDA;
  deepseek_v2.py DeepseekV2MLAAttention.__init__ builds the indexer (and registers its cache layer) before
  the MLA attention layer, so a sparse-MLA model's first attention layer is its indexer cache.
"""

from __future__ import annotations

import pytest

from app.core.backends import (
    CUTLASS_MLA,
    DEEPSEEK_V32_INDEXER,
    FLASH_ATTN,
    FLASHINFER,
    FLASHINFER_MLA_SPARSE,
    FLASHMLA_SPARSE,
    agreed_block_size,
)
from app.core.errors import InvalidServeConfigError
from tests.unit.test_current_configs_0_33 import _est


def test_kernel_blocks_accept_their_multiples() -> None:
    # supports_block_size: block % size == 0 for a declared size (fixed or MultipleOf)
    assert FLASHINFER_MLA_SPARSE.accepts_block(64) and FLASHINFER_MLA_SPARSE.accepts_block(128)
    assert not FLASHINFER_MLA_SPARSE.accepts_block(16)
    assert DEEPSEEK_V32_INDEXER.accepts_block(128) and not DEEPSEEK_V32_INDEXER.accepts_block(32)
    # CUTLASS_MLA declares 128 only: 256 is two kernel blocks (round 5 refused it and fell back)
    assert CUTLASS_MLA.accepts_block(256) and not CUTLASS_MLA.accepts_block(64)


def test_the_agreement_over_several_backends() -> None:
    # one backend: its own preference (FlashInfer sparse MLA: 16 unsupported -> min(32, 64) = 32)
    assert agreed_block_size([FLASHINFER_MLA_SPARSE]) == 32
    # all take 16 -> 16
    assert agreed_block_size([FLASH_ATTN, FLASHINFER]) == 16
    # FlashInfer sparse MLA (32, 64) + the indexer (64): lcm(32, 64) = 64, lcm(64, 64) = 64 -> 64
    assert agreed_block_size([FLASHINFER_MLA_SPARSE, DEEPSEEK_V32_INDEXER]) == 64
    # CUTLASS_MLA (128) + the indexer (64): lcm 128, which both take
    assert agreed_block_size([CUTLASS_MLA, DEEPSEEK_V32_INDEXER]) == 128
    assert agreed_block_size([FLASHMLA_SPARSE, DEEPSEEK_V32_INDEXER]) == 64


def test_sparse_mla_on_flashinfer_takes_the_indexers_64_at_every_release() -> None:
    # DeepSeek-V3.2 with an explicit fp8 cache on B200 runs FLASHINFER_MLA_SPARSE (0.19.0+ cuda.py: fp8 on SM100).
    # 0.19.0 / 0.30.0: the first layer's backend is the indexer -> its preference, 64 (not the MLA kernel's 32);
    # 0.33.0: both backends agree on 64. FlashInfer's sparse kernel keeps plain fp8 (not fp8_ds_mla): a page is
    # 64 x (576 latent x 1 B + the 132 B indexer entry) = 45,312 B
    for version, line in (
        ("0.19.0", "Setting kv cache block size to 64 for DEEPSEEK_V32_INDEXER backend."),
        ("0.30.0", "Setting kv cache block size to 64 for DEEPSEEK_V32_INDEXER backend."),
        (
            "0.33.0",
            "Setting kv cache block size to 64 for DEEPSEEK_V32_INDEXER/FLASHINFER_MLA_SPARSE backend(s).",
        ),
    ):
        est = _est("deepseek-ai--DeepSeek-V3.2", "b200", 8, version=version, kv_cache_dtype="fp8")
        assert (est.attention_backend, est.block_size) == ("FLASHINFER_MLA_SPARSE", 64)
        assert est.groups[0].page_size_bytes == 64 * (576 + 132)
        assert line in est.log_lines
    # GLM-5.2-FP8 on B200 at 0.33.0 (auto -> fp8_e4m3, layer 0 keeps its indexer) is the same 64: its row in
    # test_current_configs_0_33.CASES. A block the user gives is kept (update_block_size_for_backend skips phase 1)
    assert (
        _est("deepseek-ai--DeepSeek-V3.2", "b200", 8, kv_cache_dtype="fp8", block_size=128).block_size == 128
    )


def test_a_block_the_indexer_cannot_split_is_refused() -> None:
    # --block-size 32 with FlashInfer's sparse MLA (which takes 32) on a sparse-MLA model: the indexer's cache
    # layers sit in the same KV group, DEEPSEEK_V32_INDEXER declares the exact kernel block 64, and 32 neither is
    # it nor splits into it (v1/worker/utils.py select_common_block_size: "No common block size for 32")
    with pytest.raises(InvalidServeConfigError) as err:
        _est("deepseek-ai--DeepSeek-V3.2", "b200", 8, kv_cache_dtype="fp8", block_size=32)
    assert err.value.field == "block_size"
    assert "No common block size for 32" in str(err.value)
    # 128 splits into two 64-token kernel blocks: kept
    assert (
        _est("deepseek-ai--DeepSeek-V3.2", "b200", 8, kv_cache_dtype="fp8", block_size=128).block_size == 128
    )
