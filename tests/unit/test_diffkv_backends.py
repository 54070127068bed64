"""MiMo-V2's DiffKV backends (app/core/backends_diffkv.py), on the real XiaomiMiMo/MiMo-V2-Flash config.json
(tests/data/configs/current: head_dim 192, v_head_dim 128, swa_head_dim 192, add_swa_attention_sink_bias true).

0.30.0 and 0.33.0 model_executor/models/mimo_v2.py MiMoV2Attention.__init__: ``if self.v_head_dim != self.head_dim``
-> FLASH_ATTN_DIFFKV where get_flash_attn_version gives 3 or 4 (fa_utils.py: major 9 -> FA3, major 10 -> FA4),
else TRITON_ATTN_DIFFKV; both keep their parents' MultipleOf(16) kernel block: 16. 0.22.0's mimo_v2.py has no
DiffKV branch, so the platform's list decides there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.catalog import find_device
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.specs import ServeConfig

CONFIG = Path(__file__).parents[1] / "data/configs/current/XiaomiMiMo--MiMo-V2-Flash_config.json"


@pytest.mark.parametrize(
    ("device", "version", "backend"),
    [
        (
            "nvidia-h100-sxm-80gb",
            "0.33.0",
            "FLASH_ATTN_DIFFKV",
        ),  # 9.0: FA3 (FA4 upgrade for Diff-KV with sinks)
        ("nvidia-b200", "0.33.0", "FLASH_ATTN_DIFFKV"),  # 10.0: FA4
        ("nvidia-a100-sxm4-80gb", "0.33.0", "TRITON_ATTN_DIFFKV"),  # 8.0: FA2, not 3 or 4
        ("nvidia-rtx-5090-32gb", "0.33.0", "TRITON_ATTN_DIFFKV"),  # 12.0: FA2
        ("nvidia-h100-sxm-80gb", "0.30.0", "FLASH_ATTN_DIFFKV"),
        ("nvidia-h100-sxm-80gb", "0.22.1", "FLASH_ATTN"),  # no DiffKV branch yet
        # round 11: ROCm too - 0.33.0 fa_utils.get_flash_attn_version returns None on ROCm, so mimo_v2.py takes
        # TRITON_ATTN_DIFFKV itself, never asking platforms/rocm.py (whose ROCM_ATTN / TRITON_ATTN the plan gave)
        ("amd-mi300x-192gb", "0.33.0", "TRITON_ATTN_DIFFKV"),
        ("amd-mi300x-192gb", "0.30.0", "TRITON_ATTN_DIFFKV"),
    ],
)
def test_mimo_v2_takes_its_diffkv_backend(device: str, version: str, backend: str) -> None:
    model = model_spec_from_hf_config(json.loads(CONFIG.read_text()), name="mimo-v2-flash")
    assert (model.head_size, model.head_size_v) == (192, 128)
    serve = ServeConfig(max_model_len=8192, tensor_parallel_size=8)
    est = estimate(model=model, device=find_device(device), serve=serve, vllm_version=version)
    assert (est.attention_backend, est.block_size) == (backend, 16)


@pytest.mark.parametrize("block", [8, 1, 24])
def test_a_block_the_diffkv_kernels_cannot_split_is_refused(block: int) -> None:
    # review10: FLASH_ATTN_DIFFKV subclasses FlashAttention, whose get_supported_kernel_block_sizes is MultipleOf(16)
    # (v1/attention/backends/flash_attn.py, 0.33.0): --block-size 8, 1 or 24 has no common kernel block, as the
    # planner already refuses block 8 for a Llama on the same H100; 32 splits into 16 and stays
    from app.core.errors import PlannerError

    model = model_spec_from_hf_config(json.loads(CONFIG.read_text()), name="mimo-v2-flash")
    device = find_device("nvidia-h100-sxm-80gb")
    with pytest.raises(PlannerError) as err:
        estimate(
            model=model,
            device=device,
            serve=ServeConfig(max_model_len=8192, tensor_parallel_size=8, block_size=block),
            vllm_version="0.33.0",
        )
    assert err.value.field == "block_size" and "multiple of 16" in str(err.value.message)
    serve = ServeConfig(max_model_len=8192, tensor_parallel_size=8, block_size=32)
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.33.0")
    assert (est.attention_backend, est.block_size) == ("FLASH_ATTN_DIFFKV", 32)
