"""An MLA model at --block-size 1 on ROCm: vLLM 0.10.1.1 / 0.11.0 / 0.17.0 platforms/rocm.py
RocmPlatform.get_attn_backend_cls picks ROCM_AITER_MLA "if is_aiter_mla_enabled() or block_size == 1" (AITER env
off included) and TRITON_MLA refuses block 1 ("does not support block size 1"); 0.18.0+ _get_backend_priorities
walks [TRITON_MLA] only when AITER MLA is off (0.33.0 the same), and triton_mla.py supports_block_size needs a
multiple of 16, so block 1 is refused there."""

from __future__ import annotations

import pytest

from app.core.catalog import find_device, find_model
from app.core.errors import InvalidServeConfigError
from app.core.estimate import estimate
from app.core.specs import ServeConfig


def _r1(version: str, **serve: object) -> object:
    return estimate(
        model=find_model("deepseek-ai/DeepSeek-R1"),
        device=find_device("amd-mi355x-288gb"),
        serve=ServeConfig(tensor_parallel_size=8, max_model_len=8_192, **serve),  # type: ignore[arg-type]
        vllm_version=version,
    )


@pytest.mark.parametrize("version", ["0.10.1", "0.11.0", "0.17.0"])
def test_block_size_1_takes_aiter_mla_before_0_18(version: str) -> None:
    # DeepSeek-R1: 61 MLA layers, kv_lora_rank 512 + rope 64 = 576 bf16 values a token a layer (replicated over
    # TP): one 1-token page 576 x 2 = 1,152 B, a block 61 x 1,152 = 70,272 B
    est = _r1(version, block_size=1)
    assert (est.attention_backend, est.block_size, est.bytes_per_block) == ("ROCM_AITER_MLA", 1, 70_272)  # type: ignore[attr-defined]
    # without --block-size the default 16 keeps TRITON_MLA; --block-size 8 too: TritonMLABackend (0.11.0 / 0.17.0
    # triton_mla.py) names no kernel block sizes (backend.py default MultipleOf(1)) and rocm.py checks only "!= 1"
    assert _r1(version).attention_backend == "TRITON_MLA"  # type: ignore[attr-defined]
    eight = _r1(version, block_size=8)
    assert (eight.attention_backend, eight.block_size, eight.bytes_per_block) == (
        "TRITON_MLA",
        8,
        61 * 8 * 1_152,
    )  # type: ignore[attr-defined]


@pytest.mark.parametrize("version", ["0.18.0", "0.33.0"])
def test_block_size_1_is_refused_from_0_18(version: str) -> None:
    # 0.18.0 triton_mla.py get_supported_kernel_block_sizes [MultipleOf(16)], supports_block_size: % 16
    for block in (1, 8):
        with pytest.raises(InvalidServeConfigError) as info:
            _r1(version, block_size=block)
        assert info.value.field == "block_size"
        assert "TRITON_MLA: [block_size not supported]" in info.value.message
