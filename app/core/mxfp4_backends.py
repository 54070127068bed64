"""Which MXFP4 MoE backend each vLLM release picks on each device, and the multiples it pads the experts to.

The experts of an MXFP4 checkpoint (gpt-oss) are allocated at the backend's padded shape before the weights
load, so the padding is part of what "Model loading took" measures (budget.mxfp4_expert_padding_bytes). Each
release's choice is a tuple of :class:`Mxfp4Row` (first row whose SM range holds the device wins), set per release
by versions_mxfp4.py's changelog rows into ``VersionRules.mxfp4_backends``. Read from the wheels, default env (no
VLLM_USE_FLASHINFER_MOE_MXFP4_* / VLLM_MXFP4_USE_MARLIN, all off or unset in envs.py), no LoRA:

- 0.10.2 / 0.11.0 / 0.12.0 model_executor/layers/quantization/mxfp4.py ``get_mxfp4_backend``: FlashInfer BF16 on
  ``is_device_capability(100)`` (SM100 only, flashinfer-python a wheel dependency); else Marlin when
  ``capability[0] < 9 or not has_triton_kernels()``. 0.10.2 and 0.11.0 ship no triton_kernels; 0.12.0 ships
  vllm/third_party/triton_kernels and also requires ``(9, 0) <= capability < (11, 0)`` for Triton.
- 0.13.0-0.18.0: the same function with ``is_device_capability_family(100)`` (SM100 and SM103).
- 0.19.0-0.34.0 model_executor/layers/fused_moe/oracle/mxfp4.py: the first supported backend of the priority list
  (``_get_priority_backends``, from 0.22 ``_get_priority_backends_for_gpt_oss``): FlashInfer TRT-LLM
  (experts/trtllm_mxfp4_moe.py: family 100), Triton (experts/gpt_oss_triton_kernels_moe.py: ``(9, 0) <= cap <
  (11, 0)``, widened to ``(13, 0)`` in 0.32.0), FlashInfer CUTLASS (BF16 activations only on
  ``is_device_capability(90)``, after Triton there), then Marlin. 0.32.0 moves Triton after Marlin on family 120,
  0.34.0 on family 110 too.
- ``mxfp4_round_up_hidden_size_and_intermediate_size`` (Mxfp4MoEMethod.create_weights before 0.19.0): Marlin hidden
  to 256, intermediate-per-rank to 128; TRT-LLM 256 / 256 through 0.26.0, intermediate to 128 from 0.27.1;
  Triton (the fall-through) intermediate to 64, hidden as is; any ROCm backend 256 / 256 (gpt-oss's SwiGLU-OAI
  activation is not the SiLU / SiTU that 0.30.0's AITER branch aligns to 128).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.specs import DeviceSpec


@dataclass(frozen=True)
class Mxfp4Backend:
    name: str
    hidden_multiple: int
    intermediate_multiple: int  # of the intermediate size per tensor-parallel rank


@dataclass(frozen=True)
class Mxfp4Row:
    """``backend`` on CUDA devices whose SM (10 x major + minor) is within [min_sm, max_sm]."""

    backend: Mxfp4Backend
    min_sm: int = 0
    max_sm: int = 999


MARLIN = Mxfp4Backend("marlin", 256, 128)
TRITON = Mxfp4Backend("triton", 1, 64)
TRTLLM_256 = Mxfp4Backend("flashinfer_trtllm", 256, 256)
TRTLLM_128 = Mxfp4Backend("flashinfer_trtllm", 256, 128)
ROCM = Mxfp4Backend("rocm", 256, 256)

SM100_ONLY = (100, 100)  # is_device_capability(100)
SM10X = (100, 109)  # is_device_capability_family(100): SM100, SM103
TRITON_SM9_SM10 = (90, 109)  # (9, 0) <= capability < (11, 0)
TRITON_SM9_SM11 = (90, 119)  # (9, 0) <= capability < (13, 0), family 120 sent after Marlin (0.32.0, 0.33.0)

# 0.10.2 / 0.11.0: no triton_kernels in the wheel, so every device but SM100 is Marlin (SM90 included)
MXFP4_0_10: tuple[Mxfp4Row, ...] = (Mxfp4Row(TRTLLM_256, *SM100_ONLY), Mxfp4Row(MARLIN))
# 0.12.0: triton_kernels bundled, Triton on SM90-SM10x (SM103 too: FlashInfer still asks for exactly 10.0)
MXFP4_0_12: tuple[Mxfp4Row, ...] = (
    Mxfp4Row(TRTLLM_256, *SM100_ONLY),
    Mxfp4Row(TRITON, *TRITON_SM9_SM10),
    Mxfp4Row(MARLIN),
)
# 0.13.0-0.26.0: FlashInfer on the SM10x family; SM110 and SM12x (RTX 50xx, RTX PRO 6000, GB10) Marlin
MXFP4_0_13: tuple[Mxfp4Row, ...] = (
    Mxfp4Row(TRTLLM_256, *SM10X),
    Mxfp4Row(TRITON, *TRITON_SM9_SM10),
    Mxfp4Row(MARLIN),
)
# 0.27.1-0.30.0 and 0.34.0: TRT-LLM's intermediate to 128
MXFP4_0_27: tuple[Mxfp4Row, ...] = (
    Mxfp4Row(TRTLLM_128, *SM10X),
    Mxfp4Row(TRITON, *TRITON_SM9_SM10),
    Mxfp4Row(MARLIN),
)
# 0.32.0 / 0.33.0: Triton admits SM110 (SM12x is admitted too but ordered after Marlin, which takes it)
MXFP4_0_32: tuple[Mxfp4Row, ...] = (
    Mxfp4Row(TRTLLM_128, *SM10X),
    Mxfp4Row(TRITON, *TRITON_SM9_SM11),
    Mxfp4Row(MARLIN),
)


def mxfp4_backend(*, device: DeviceSpec, rows: tuple[Mxfp4Row, ...]) -> Mxfp4Backend:
    """The backend ``rows`` (a release's VersionRules.mxfp4_backends) give ``device``; ROCm pads 256 / 256."""
    if device.platform == "rocm":
        return ROCM
    sm = device.sm or 0
    for row in rows:
        if row.min_sm <= sm <= row.max_sm:
            return row.backend
    return MARLIN
