"""vLLM's attention-backend priority lists as :class:`BackendPriority` rows, shared by several changelog rows.

Order inside a list = vLLM's priority; a release's ``backend_priorities`` row tuple is walked first match wins
(``min_sm <= capability <= max_sm``, backends.py ``cuda_candidates``). Kept apart from versions_changelog.py so
that module stays under the 800-line cap.
"""

from __future__ import annotations

from app.core.version_types import BackendPriority

MLA_0_11 = ("CUTLASS_MLA", "FLASHMLA", "TRITON_MLA")
FLASHINFER_FIRST = ("FLASHINFER", "FLASH_ATTN", "TRITON_ATTN", "FLEX_ATTENTION")
FLASH_ATTN_FIRST = ("FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION")
# 0.13.0-0.33.0 _get_backend_priorities "if device_capability.major == 10": FlashInfer leads on the 10.x family
V1_ATTENTION = (
    BackendPriority(mla=False, min_sm=100, backends=FLASHINFER_FIRST),
    BackendPriority(mla=False, min_sm=0, backends=FLASH_ATTN_FIRST),
)
# 0.10.1.1 and 0.11.0 platforms/cuda.py get_attn_backend_cls test "cls.is_device_capability(100)": 10.0 exactly.
# FlashInfer leads there only; another 10.x (B300 / GB300 are 10.3) takes FlashAttention, Triton for a model with
# sinks ("has_sink ... and not cls.is_device_capability(90)"), never FlashInfer by default. MLA: CUTLASS_MLA and
# FlashInfer-MLA need 10.0, FlashMLA is_flashmla_supported (ops/flashmla.py: capability major 9), FA-MLA
# flash_attn_supports_mla (fa_utils.py: major 9): 10.3 runs TRITON_MLA.
V1_ATTENTION_0_11 = (
    BackendPriority(mla=False, min_sm=100, max_sm=100, backends=FLASHINFER_FIRST),
    BackendPriority(
        mla=False, min_sm=101, max_sm=109, backends=("FLASH_ATTN", "TRITON_ATTN", "FLEX_ATTENTION")
    ),
    BackendPriority(mla=False, min_sm=0, backends=FLASH_ATTN_FIRST),
)
MLA_0_11_ROWS = (
    BackendPriority(mla=True, min_sm=101, max_sm=109, backends=("TRITON_MLA",)),
    BackendPriority(mla=True, min_sm=0, backends=MLA_0_11),
)
MLA_SM90 = BackendPriority(
    mla=True, min_sm=0, backends=("FLASH_ATTN_MLA", "FLASHMLA", "FLASHINFER_MLA", "TRITON_MLA")
)
# 11.x / 12.x (RTX 50, RTX PRO 6000, GB10) take the FlashAttention-first list (0.11.0 too: not 10.0), and MLA the
# non-Blackwell one (0.24.0+: TRITON_MLA for 12.x, where that list's other backends refuse the device anyway)
V1_ATTENTION_SM12 = BackendPriority(mla=False, min_sm=110, backends=FLASH_ATTN_FIRST)
MLA_SM12 = BackendPriority(mla=True, min_sm=110, backends=MLA_SM90.backends)
# 0.15.0-0.33.0 _get_backend_priorities, capability 10.x (TOKENSPEED_MLA, 0.22+, FP8 R1 dims only, not planned)
MLA_SM100 = BackendPriority(
    mla=True,
    min_sm=100,
    backends=("FLASHINFER_MLA", "CUTLASS_MLA", "FLASH_ATTN_MLA", "FLASHMLA", "TRITON_MLA"),
)
