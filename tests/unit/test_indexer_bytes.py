"""The lightning-indexer cache's bytes per token and its inverse, written once (app/core/kinds.py).

vLLM 0.33.0 models/deepseek_v2.py Indexer (DeepSeek-V3.2, GLM-5) and models/deepseek_v4/attention.py
DeepseekV4IndexerCache store, per token per layer, index_head_dim fp8 bytes plus one fp32 scale (4 B) per
quant block of 128 values. The config reader turns the head into bytes; the DeepSeek-V4 layouts (CUDA and
Ascend) need the head back from the bytes.
"""

from __future__ import annotations

import pytest

from app.core import kinds, kv_dsv4, kv_dsv4_ascend
from app.core.hf_config import geometry


@pytest.mark.parametrize(
    ("head", "stored"),
    [
        (128, 132),  # 128 + 128 // 128 x 4 (DeepSeek-V3.2 / V4 index_head_dim 128)
        (256, 264),  # 256 + 2 x 4
        (192, 196),  # 192 + 1 x 4: the tail of 64 values has no scale of its own
        (64, 64),  # no whole quant block, no scale
        (0, 0),
    ],
)
def test_indexer_bytes_and_back(head: int, stored: int) -> None:
    assert kinds.indexer_bytes_per_token(head) == stored
    assert kinds.index_head_dim(stored) == head


def test_the_inverse_is_exact_for_every_head() -> None:
    # the old inline inverse `bytes * 128 // 132` gave 62 for a head of 64 and 190 for 192
    assert all(kinds.index_head_dim(kinds.indexer_bytes_per_token(h)) == h for h in range(4097))


def test_no_module_keeps_its_own_copy_of_the_ratio() -> None:
    for module in (geometry, kv_dsv4, kv_dsv4_ascend):
        names = set(vars(module))
        assert not names & {"INDEXER_QUANT_BLOCK", "INDEXER_SCALE_BYTES", "INDEXER_BYTES_PER_128"}, module
