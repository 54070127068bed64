"""Which MLA backends' blocks vLLM forces, decided by the device as 0.11.0-0.17.0 decide it (issue 22 rules9 item 2).

platforms/cuda.py CudaPlatform.check_and_update_config, with no attention backend chosen by the user, picks the
"use_*" flags from the device alone and forces their block before any backend is selected -- whichever MLA backend
then runs (read from the 0.11.0, 0.13.0, 0.14.0, 0.15.0 and 0.17.0 wheels):

- 0.11.0: ``is_device_capability(100)`` -> CUTLASS_MLA (block 128, and VLLM_ATTENTION_BACKEND set); else FlashMLA
  (64) when ``is_flashmla_supported()`` (Hopper);
- 0.14.0: ``is_device_capability_family(100) and not use_sparse`` -> CUTLASS_MLA; else FlashMLA, forced only when
  ``is_flashmla_dense_supported()`` (capability 9.x);
- 0.15.0-0.17.0: capability 10.x, not sparse and ``qk_nope_head_dim == 128`` -> FLASHINFER_MLA, set as the
  attention backend (block 32 or a multiple of 64); 10.x otherwise (not sparse) -> CUTLASS_MLA; else FlashMLA on
  9.x ("Non-Blackwell with FlashMLA support");
- every release: a sparse model (``index_topk``) then forces FlashMLASparse's 64 ("if use_sparse and block_size !=
  64"; 0.17.0: FlashMLASparse unless FlashInferMLASparse was chosen by the user).

So DeepSeek-V3 on an H100 at 0.15.0 runs FLASH_ATTN_MLA (the first of 0.15's SM90 priorities) at block 64; on a
B200 it runs FLASHINFER_MLA at 64, not CUTLASS_MLA at 128. 0.10.2 and older were not read: their forcing follows the
backend the planner picks (versions.py ``mla_forcing``).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.specs import ModelSpec
from app.core.versions import VersionRules

# getattr(hf_text_config, "qk_nope_head_dim", 1): the dim vLLM reads for a config without one (0.15.0 / 0.17.0
# platforms/cuda.py check_and_update_config, 0.15.0-0.33.0 mla/flashinfer_mla.py supports_combination)
NOPE_DIM_ABSENT = 1


def flashinfer_mla_refuses(*, model: ModelSpec, rules: VersionRules) -> bool:
    """FlashInfer-MLA's qk_nope_head_dim check (rules.flashinfer_mla_nope_dims: (128,) at 0.15-0.17, the forcing's
    "== 128" too; None before 0.15). A spec without the dim is vLLM's 1, refused (not taken as DeepSeek's 128)."""
    dims = rules.flashinfer_mla_nope_dims
    if dims is None or model.mla is None:
        return False
    nope = model.mla.qk_nope_head_dim
    return (NOPE_DIM_ABSENT if nope is None else nope) not in dims


@dataclass(frozen=True)
class DeviceForcing:
    """The MLA backends whose forcing runs, in vLLM's order, and the backend vLLM sets (None: its priorities)."""

    backends: tuple[str, ...]
    sets_backend: str | None = None


def device_forcing(*, model: ModelSpec, sm: int, sparse: bool, rules: VersionRules) -> DeviceForcing | None:
    """None when this release forces by the backend the planner picks (rules.mla_forcing == "backend")."""
    if rules.mla_forcing == "backend" or model.mla is None:
        return None
    family = sm // 10
    steps: list[str] = []
    sets: str | None = None
    if rules.mla_forcing == "device_0_11":
        if (
            sm == 100
        ):  # is_device_capability(100): 10.0 only (its VLLM_ATTENTION_BACKEND write "does not work")
            steps.append("CUTLASS_MLA")
        elif family == 9:  # is_flashmla_supported: Hopper
            steps.append("FLASHMLA")
    else:
        if (
            family == 10
            and not sparse
            and rules.mla_forcing == "device_0_15"
            and not flashinfer_mla_refuses(model=model, rules=rules)
        ):
            steps.append("FLASHINFER_MLA")
            sets = "FLASHINFER_MLA"
        elif family == 10 and not sparse:
            steps.append("CUTLASS_MLA")
            sets = "CUTLASS_MLA" if rules.mla_forcing == "device_0_14" else None
        elif family == 9:  # is_flashmla_dense_supported: capability family 90
            steps.append("FLASHMLA")
    if sparse:
        steps.append("FLASHMLA_SPARSE")
    return DeviceForcing(backends=tuple(steps), sets_backend=sets)
