"""Which attention backends take a model's head sizes, as data per release: each backend's supports_head_size /
get_supported_head_sizes (v1/attention/backends/*.py), and Gemma-4's forced Triton backend for its mixed heads.
backends.py walks the priority list with these."""

from __future__ import annotations

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


FLASH_ATTN_HEAD_MULTIPLE = 8  # flash_attn.py supports_head_size: head_size % 8 == 0
FLASHINFER_HEAD_SIZES = frozenset({64, 128, 256})  # 0.19.0 flashinfer.py get_supported_head_sizes
FLASHINFER_LARGE_HEAD = 512  # added to that list by 0.24.0
TRITON_MIN_HEAD = 32  # triton_attn.py supports_head_size: head_size >= 32


def head_size_rejected(backend: str, *, heads: frozenset[int], sm: int, rules: VersionRules) -> bool:
    """AttentionBackend.validate_configuration's "head_size not supported" for the non-MLA CUDA backends (0.19.0+;
    VersionRules.backend_head_sizes): FLASH_ATTN takes multiples of 8 up to 256, up to 512 with FA4 on SM 9.x /
    10.x / 11.x (0.24.0+); FLASHINFER 64 / 128 / 256 (and 512 from 0.24.0); TRITON_ATTN 32 and up; the others any.

    E.g. open_llama 3B (head 100) on an H100: FLASH_ATTN (100 % 8) and FLASHINFER refuse it, TRITON_ATTN runs;
    Phi-3-mini (96) on a B200: FLASHINFER refuses it, FLASH_ATTN runs."""
    if not rules.backend_head_sizes or not heads:
        return False
    if backend == "FLASH_ATTN":
        fa4 = rules.large_attention_heads and sm // 10 in FA4_SM_MAJORS
        limit = FA4_HEAD_LIMIT if fa4 else FA_HEAD_LIMIT
        return any(h % FLASH_ATTN_HEAD_MULTIPLE or h > limit for h in heads)
    if backend == "FLASHINFER":
        sizes = FLASHINFER_HEAD_SIZES | ({FLASHINFER_LARGE_HEAD} if rules.large_attention_heads else set())
        return not heads <= sizes
    if backend == "TRITON_ATTN":
        return min(heads) < TRITON_MIN_HEAD
    return False


def attention_head_sizes(model: ModelSpec) -> frozenset[int]:
    """The K head sizes of a model's attention layers (per-layer geometry where the config gives it); none for an
    MLA model, whose backends have their own checks."""
    if model.mla is not None:
        return frozenset()
    return frozenset({shape.head_size for shape in model.layer_attention or ()} | {model.head_size})
