"""The sparse-MLA attention backends' priority order on CUDA (DeepSeek-V3.2, GLM-5, GLM-5.3-Flash, hy_v4), as backend
names: platforms/cuda.py _get_backend_priorities and, for a model with learnable sinks, hy_v4's own rule.
backends.py walks the order with each backend's checks."""

from __future__ import annotations

from app.core.specs import ModelSpec
from app.core.versions import VersionRules

SPARSE_MLA_FLASHINFER_MAX_HEADS = 16  # 0.19.0 platforms/cuda.py: FlashInfer sparse MLA for <= 16 heads
# platforms/cuda.py (0.30.0-0.34.0): an SM90 sparse head of 512 (NoPE, GLM-5.3-Flash) puts SM90 FlashInfer first
SPARSE_MLA_SM90_FLASHINFER_FIRST_HEAD = 512
SIXTEEN_BIT_KV = ("auto", "bfloat16", "float16")
# hy_v4 _resolve_sink_backend (0.33.0 models/hy_v4): FLASHMLA_SPARSE is the one sparse kernel that takes sinks
SINK_BACKEND = "FLASHMLA_SPARSE"


def sparse_mla_order(*, sm: int, rules: VersionRules, kv_cache_dtype: str, model: ModelSpec) -> list[str]:
    """SM100 (0.19.0+): FlashInfer's sparse kernel first for a quantized cache or at most 16 heads, FlashMLA's
    otherwise; 0.33.0 puts FLASH_ATTN_MLA_SPARSE_FA4 first for a 16-bit cache at <= 16 heads. SM90: this
    release's sparse tail (``rules.sparse_mla_sm90``), FLASHINFER_MLA_SPARSE_SM90 moved to its front for a head
    of 512, then FLASHINFER_MLA_SPARSE. A learnable sink puts FLASHMLA_SPARSE first."""
    order = _device_order(sm=sm, rules=rules, kv_cache_dtype=kv_cache_dtype, model=model)
    if model.sparse_mla_sink:
        return [SINK_BACKEND, *(name for name in order if name != SINK_BACKEND)]
    return order


def _device_order(*, sm: int, rules: VersionRules, kv_cache_dtype: str, model: ModelSpec) -> list[str]:
    if rules.sparse_mla_flashinfer_on_sm100 and sm >= 100:
        small = model.num_attention_heads <= SPARSE_MLA_FLASHINFER_MAX_HEADS
        if kv_cache_dtype not in SIXTEEN_BIT_KV:
            return ["FLASHINFER_MLA_SPARSE", "FLASHMLA_SPARSE"]
        if small and rules.sparse_mla_fa4_small_heads:
            return ["FLASH_ATTN_MLA_SPARSE_FA4", "FLASHINFER_MLA_SPARSE", "FLASHMLA_SPARSE"]
        if small:
            return ["FLASHINFER_MLA_SPARSE", "FLASHMLA_SPARSE"]
        return ["FLASHMLA_SPARSE", "FLASHINFER_MLA_SPARSE"]
    tail = list(rules.sparse_mla_sm90)
    head_size = model.mla.latent_size if model.mla is not None else 0
    first = "FLASHINFER_MLA_SPARSE_SM90"
    if head_size == SPARSE_MLA_SM90_FLASHINFER_FIRST_HEAD and first in tail:
        tail.remove(first)
        tail.insert(0, first)
    return [*tail, "FLASHINFER_MLA_SPARSE"]
