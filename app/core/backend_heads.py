"""Which attention backends take a model's head sizes, as data per release: each backend's supports_head_size /
get_supported_head_sizes (v1/attention/backends/*.py), and Gemma-4's forced Triton backend for its mixed heads.
backends.py walks the priority list with these."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.specs import ModelSpec
from app.core.versions import VersionRules

FA4_SM_MAJORS = (9, 10, 11)  # flash_attn_interface.py _is_fa4_supported
# models/config.py MODELS_CONFIG_MAP: the architectures Gemma4Config.verify_and_update_config runs for
GEMMA4_ARCHITECTURES = frozenset(
    {"Gemma4ForCausalLM", "Gemma4ForConditionalGeneration", "Gemma4UnifiedForConditionalGeneration"}
)
FA_HEAD_LIMIT = 256  # flash_attn.py supports_head_size (FA2/FA3): head_size <= 256
FA4_HEAD_LIMIT = 512  # Gemma4Config: FA4 for all layers when the larger head is <= 512


def forces_triton(*, model: ModelSpec, sm: int, rules: VersionRules) -> bool:
    """Gemma4Config.verify_and_update_config sets --attention-backend TRITON_ATTN for a Gemma-4 whose sliding
    and global layers differ in head size: 0.19.0 when the larger is above 256; 0.24.0+ only where FA4 is
    unavailable (not SM 9.x / 10.x / 11.x) or the larger head is above 512.

    E.g. gemma-4-26B-A4B (256 / 512): TRITON_ATTN at 0.19.0 on an H100; at 0.33.0 on an A100 only.
    """
    if rules.gemma4_backend == "none" or model.architecture not in GEMMA4_ARCHITECTURES:
        return False
    heads = attention_head_sizes(model)
    if len(heads) < 2:
        return False
    if rules.gemma4_backend == "triton":
        return max(heads) > FA_HEAD_LIMIT
    return not (sm // 10 in FA4_SM_MAJORS and max(heads) <= FA4_HEAD_LIMIT)


@dataclass(frozen=True)
class HeadSizes:
    """The head sizes one backend takes at a release: its get_supported_head_sizes list (``sizes``), or what its
    supports_head_size bounds allow (a ``multiple`` of, from ``minimum`` up to ``maximum``)."""

    sizes: frozenset[int] = frozenset()
    multiple: int = 1
    minimum: int = 1
    maximum: int | None = None

    def takes(self, head: int) -> bool:
        if self.sizes:
            return head in self.sizes
        return (
            head % self.multiple == 0
            and head >= self.minimum
            and (self.maximum is None or head <= self.maximum)
        )


@dataclass(frozen=True)
class HeadRow:
    """From the releases where VersionRules ``flag`` is on ("": every release the planner walks the backend in),
    and where ``fa4_only``, on an SM with FA4 (FA4_SM_MAJORS), the backend takes ``heads``."""

    flag: str
    heads: HeadSizes
    fa4_only: bool = False


FLASHINFER_HEADS = frozenset({64, 128, 256})
# AttentionBackend.validate_configuration's "head_size not supported" (v1/attention/backend.py), backend by backend,
# release by release: the last row that applies is the backend's; a backend not listed takes any head size.
HEAD_SIZE_TABLE: dict[str, tuple[HeadRow, ...]] = {
    "FLASH_ATTN": (
        # 0.19.0 flash_attn.py supports_head_size: head_size % 8 == 0 and head_size <= 256
        HeadRow("backend_head_sizes", HeadSizes(multiple=8, maximum=FA_HEAD_LIMIT)),
        # 0.24.0 (0.33.0 the same): <= 512 when is_fa_version_supported(4)
        HeadRow("large_attention_heads", HeadSizes(multiple=8, maximum=FA4_HEAD_LIMIT), fa4_only=True),
    ),
    "FLASHINFER": (
        # 0.19.0 flashinfer.py get_supported_head_sizes [64, 128, 256]; 0.24.0 (0.30.0, 0.33.0) adds 512
        HeadRow("backend_head_sizes", HeadSizes(sizes=FLASHINFER_HEADS)),
        HeadRow("large_attention_heads", HeadSizes(sizes=FLASHINFER_HEADS | {512})),
    ),
    # 0.19.0-0.33.0 triton_attn.py supports_head_size: head_size >= 32
    "TRITON_ATTN": (HeadRow("backend_head_sizes", HeadSizes(minimum=32)),),
    # 0.19.0-0.33.0 v1/attention/backends/rocm_attn.py RocmAttentionBackend.get_supported_head_sizes (ROCm's walk,
    # backends._rocm_rejects, checks it wherever ROCM_ATTN is a candidate, V0's one ROCm backend included)
    "ROCM_ATTN": (HeadRow("", HeadSizes(sizes=frozenset({32, 64, 80, 96, 128, 160, 192, 224, 256}))),),
}


def supported_heads(backend: str, *, sm: int, rules: VersionRules) -> HeadSizes | None:
    """The backend's head sizes at this release and SM (HEAD_SIZE_TABLE), or None where it takes any."""
    found = None
    for row in HEAD_SIZE_TABLE.get(backend, ()):
        if (not row.flag or getattr(rules, row.flag)) and (not row.fa4_only or sm // 10 in FA4_SM_MAJORS):
            found = row.heads
    return found


def head_size_rejected(backend: str, *, heads: frozenset[int], sm: int, rules: VersionRules) -> bool:
    """AttentionBackend.validate_configuration's "head_size not supported" (HEAD_SIZE_TABLE): FLASH_ATTN takes
    multiples of 8 up to 256, up to 512 with FA4 on SM 9.x / 10.x / 11.x (0.24.0+); FLASHINFER 64 / 128 / 256 (and
    512 from 0.24.0); TRITON_ATTN 32 and up (those three from 0.19.0, VersionRules.backend_head_sizes: older
    releases not read); ROCM_ATTN 32 / 64 / 80 / 96 / 128 / 160 / 192 / 224 / 256; the others any.

    E.g. open_llama 3B (head 100) on an H100: FLASH_ATTN (100 % 8) and FLASHINFER refuse it, TRITON_ATTN runs;
    Phi-3-mini (96) on a B200: FLASHINFER refuses it, FLASH_ATTN runs; head 112 on an MI300X: ROCM_ATTN refuses it."""
    allowed = supported_heads(backend, sm=sm, rules=rules)
    return allowed is not None and not all(allowed.takes(h) for h in heads)


def attention_head_sizes(model: ModelSpec) -> frozenset[int]:
    """The K head sizes of a model's attention layers (per-layer geometry where the config gives it); none for an
    MLA model, whose backends have their own checks."""
    if model.mla is not None:
        return frozenset()
    return frozenset({shape.head_size for shape in model.layer_attention or ()} | {model.head_size})
