"""MiMo-V2's own attention backends for K and V heads of different sizes (issue 22 item 1; closing note r9: the
sinks a config field turns on, MiMo-V2's add_swa_attention_sink_bias).

0.30.0-0.33.0 model_executor/models/mimo_v2.py MiMoV2Attention.__init__: when ``v_head_dim != head_dim`` the layer
does not ask the platform's priority list; it takes FLASH_ATTN_DIFFKV when
``FlashAttentionDiffKVBackend.is_supported_on_current_device`` (v1/attention/backends/flash_attn_diffkv.py:
get_flash_attn_version returns 3 or 4: FA3 on capability 9.x, FA4 on 10.x, sinks or not — 9.x upgrades to FA4 for
"Diff-KV with sinks"; FA2 elsewhere), else TRITON_ATTN_DIFFKV (triton_attn_diffkv.py). Both subclass their
FlashAttention / Triton parents, whose kernel blocks are MultipleOf(16) (flash_attn.py, triton_attn.py
get_supported_kernel_block_sizes), so the block stays 16. 0.22.0's mimo_v2.py has no DiffKV branch.
"""

from __future__ import annotations

from app.core.specs import ModelSpec
from app.core.versions import VersionRules

# 0.33.0 registry.py: MiMoV2FlashForCausalLM and MiMoV2ForCausalLM (mimo_v2.py)
MIMO_V2_ARCHITECTURES = frozenset({"MiMoV2FlashForCausalLM", "MiMoV2ForCausalLM"})
FA_3_OR_4_MAJORS = (9, 10)  # fa_utils.get_flash_attn_version: major 9 -> FA3, major 10 -> FA4, else FA2
DIFFKV_KERNEL_BLOCK = 16


def diffkv_backend(*, model: ModelSpec, sm: int | None, rules: VersionRules) -> str | None:
    """The backend MiMo-V2 forces on a CUDA or ROCm device (``sm`` None: no CUDA capability), or None when the
    priority list decides.

    E.g. MiMo-V2-Flash (head_dim 192, v_head_dim 128) at 0.33.0: FLASH_ATTN_DIFFKV on an H100 (9.0) or a B200
    (10.0), TRITON_ATTN_DIFFKV on an A100 (8.0) or an RTX 5090 (12.0); at 0.22.1 None. On ROCm TRITON_ATTN_DIFFKV:
    0.33.0 v1/attention/backends/fa_utils.py get_flash_attn_version returns None there ("ROCm doesn't use
    vllm_flash_attn"), so is_supported_on_current_device is False, and the layer never asks platforms/rocm.py.
    """
    if not rules.diffkv_backends or model.architecture not in MIMO_V2_ARCHITECTURES or model.mla is not None:
        return None
    if model.head_size == model.head_size_v:
        return None
    return "FLASH_ATTN_DIFFKV" if sm is not None and sm // 10 in FA_3_OR_4_MAJORS else "TRITON_ATTN_DIFFKV"
