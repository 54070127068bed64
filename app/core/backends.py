"""Which attention backend vLLM picks, the block size it ends up with, and whether the KV dtype is
allowed — as data per backend (reference vllm-accounting.md §5, §9).

vLLM walks a priority list and takes the first backend that accepts the device, the KV dtype and
the block size. A user value a preferred backend rejects silently moves vLLM to the next one: we
report that as a fallback, which is step 5 of the seed's diagnosis.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from app.core import kv_dsv4_ascend
from app.core.attention_sinks import has_sinks
from app.core.backend_heads import FA4_SM_MAJORS, attention_head_sizes, forces_triton, head_size_rejected
from app.core.backends_diffkv import DIFFKV_KERNEL_BLOCK, diffkv_backend
from app.core.backends_sparse_mla import sparse_mla_order
from app.core.errors import InvalidServeConfigError
from app.core.forced_blocks import device_forcing, flashinfer_mla_refuses
from app.core.kv import HybridAlign
from app.core.kv_dsv4_ascend import ASCEND_DSV4_BACKEND, DSV4_BLOCK_SIZES
from app.core.layers import has_kind
from app.core.specs import DeviceSpec, LayerKind, MambaKind, ModelSpec, ServeConfig
from app.core.text import Text
from app.core.version_types import ForcedBlock
from app.core.versions import VersionRules

DEFAULT_BLOCK_SIZE = 16  # CacheConfig.DEFAULT_BLOCK_SIZE / CudaPlatform default (reference §5.1)
ASCEND_BLOCK_SIZE = 128  # vllm_ascend refresh_block_size (reference §9)
HPU_BLOCK_SIZE = 128  # vllm-gaudi default page size (not read in the reference; HPU is approximate)
FP8_E4M3 = frozenset({"fp8", "fp8_e4m3"})
FP8_ALL = frozenset({"fp8", "fp8_e4m3", "fp8_e5m2"})


@dataclass(frozen=True)
class Backend:
    name: str
    multiple_of: int | None = None  # block must be a multiple of this
    fixed_sizes: tuple[int, ...] = ()  # or one of these
    kv_dtypes: frozenset[str] = frozenset()  # quantized dtypes accepted (auto/bf16/fp16 always)
    min_sm: int = 0
    max_sm: int = 10_000
    fp8_min_sm: int = 0  # quantized KV only from this capability
    fp8_max_sm: int = 10_000  # and up to this one
    sm100_only_dtypes: frozenset[str] = frozenset()  # of kv_dtypes, those taken on SM10x only

    def accepts_block(self, block_size: int) -> bool:
        """AttentionBackend.supports_block_size (0.14.0-0.33.0 v1/attention/backend.py, "With hybrid_blocks
        feature"): any multiple of a declared kernel block, fixed or MultipleOf; e.g. FLASHMLA (64) takes 128."""
        sizes = self.fixed_sizes or ((self.multiple_of,) if self.multiple_of else ())
        return not sizes or any(block_size % size == 0 for size in sizes)

    def min_kernel_block(self) -> int:
        """The smallest kernel block it declares (`min(s.base if MultipleOf else s)`, interface.py)."""
        return min(self.fixed_sizes) if self.fixed_sizes else (self.multiple_of or 1)

    def preferred_block(self) -> int:
        if self.accepts_block(DEFAULT_BLOCK_SIZE):
            return DEFAULT_BLOCK_SIZE
        return min(self.fixed_sizes) if self.fixed_sizes else (self.multiple_of or DEFAULT_BLOCK_SIZE)

    def accepts_dtype(self, kv_cache_dtype: str, sm: int) -> bool:
        if kv_cache_dtype in ("auto", "bfloat16", "float16"):
            return True
        if kv_cache_dtype in self.sm100_only_dtypes and sm // 10 != 10:
            return False
        return kv_cache_dtype in self.kv_dtypes and self.fp8_min_sm <= sm <= self.fp8_max_sm


# 0.33.0 table (reference §5.2); capability limits from §5.2 notes and 0.11.0 is_kv_cache_dtype_supported.
# quantized KV with FA3 on 9.x (fa_utils.flash_attn_supports_fp8, 0.11.0-0.32.0) or FA4 on 10.x (0.33.0
# flash_attn_supports_kv_cache_dtype); 12.x runs FA2, which takes none
FLASH_ATTN = Backend(
    "FLASH_ATTN", multiple_of=16, kv_dtypes=FP8_E4M3, min_sm=80, fp8_min_sm=90, fp8_max_sm=109
)
FLASHINFER = Backend("FLASHINFER", fixed_sizes=(16, 32, 64), kv_dtypes=FP8_ALL, min_sm=80)
TRITON_ATTN = Backend("TRITON_ATTN", multiple_of=16, kv_dtypes=FP8_ALL, min_sm=0, fp8_min_sm=89)
FLEX_ATTENTION = Backend("FLEX_ATTENTION", multiple_of=16)
XFORMERS = Backend("XFORMERS", multiple_of=1, kv_dtypes=FP8_ALL)  # V0 fallback, fp8 KV via its own kernels
FLASH_ATTN_MLA = Backend("FLASH_ATTN_MLA", multiple_of=16, min_sm=90, max_sm=99)
FLASHMLA = Backend("FLASHMLA", fixed_sizes=(64,), kv_dtypes=FP8_E4M3, min_sm=90, max_sm=109)
FLASHINFER_MLA = Backend("FLASHINFER_MLA", fixed_sizes=(32, 64), kv_dtypes=FP8_E4M3, min_sm=100, max_sm=109)
CUTLASS_MLA = Backend("CUTLASS_MLA", fixed_sizes=(128,), kv_dtypes=FP8_E4M3, min_sm=100, max_sm=109)
TRITON_MLA = Backend("TRITON_MLA", multiple_of=16, kv_dtypes=FP8_E4M3)
# Sparse MLA (DeepSeek-V3.2 / GLM-5 indexer): only these accept is_sparse. FLASHMLA_SPARSE lists "fp8" as an alias
# for fp8_ds_mla (0.19.0 and 0.33.0 flashmla_sparse.py supported_kv_cache_dtypes) and the layer then runs the
# 656 B fp8_ds_mla layout (0.19.0 mla_attention.py; 0.33.0 _canonicalize_sparse_mla_kv_cache_dtype);
# FLASHINFER_MLA_SPARSE takes fp8 / fp8_e4m3 but not fp8_ds_mla (0.19.0 and 0.33.0 flashinfer_mla_sparse.py).
# 0.30.0+ it also takes nvfp4_ds_mla, on SM100 only (flashmla_sparse.py supports_combination), and keeps it.
FP8_DS_MLA = frozenset({"fp8_ds_mla"})
NVFP4_DS_MLA = frozenset({"nvfp4_ds_mla"})
FLASHMLA_SPARSE = Backend(
    "FLASHMLA_SPARSE",
    fixed_sizes=(64,),
    kv_dtypes=FP8_DS_MLA | NVFP4_DS_MLA | {"fp8"},
    min_sm=90,
    max_sm=109,
    sm100_only_dtypes=NVFP4_DS_MLA,
)
FLASHINFER_MLA_SPARSE = Backend(
    "FLASHINFER_MLA_SPARSE", fixed_sizes=(32, 64), kv_dtypes=FP8_E4M3, min_sm=100, max_sm=109
)
# 0.26.0+ flashattn_mla_sparse.py (SM90, 16-bit caches only) and 0.33.0's FA4 variant (SM100)
FLASH_ATTN_MLA_SPARSE = Backend("FLASH_ATTN_MLA_SPARSE", multiple_of=64, min_sm=90, max_sm=99)
FLASH_ATTN_MLA_SPARSE_FA4 = Backend("FLASH_ATTN_MLA_SPARSE_FA4", multiple_of=64, min_sm=100, max_sm=109)
# 0.30.0+ flashinfer_mla_sparse_sm90.py: MultipleOf(64), auto / bfloat16 / fp8 / fp8_e4m3
FLASHINFER_MLA_SPARSE_SM90 = Backend(
    "FLASHINFER_MLA_SPARSE_SM90", multiple_of=64, kv_dtypes=FP8_E4M3, min_sm=90, max_sm=99
)
# 0.30.0+ image-prefix composites (triton_flash_attn.py, triton_flashinfer.py): Triton for the image-mask route,
# FlashAttention (SM 9.x, FA3/FA4) or FlashInfer (SM 10.x) causal; KV dtypes and kernel blocks both take
TRITON_FLASH_ATTN = Backend(
    "TRITON_FLASH_ATTN", multiple_of=16, kv_dtypes=FP8_E4M3, min_sm=90, max_sm=99, fp8_min_sm=90
)
TRITON_FLASHINFER = Backend("TRITON_FLASHINFER", fixed_sizes=(64,), kv_dtypes=FP8_ALL, min_sm=100, max_sm=109)
ROCM_ATTN = Backend("ROCM_ATTN", multiple_of=16, kv_dtypes=FP8_ALL)
ROCM_AITER_MLA = Backend("ROCM_AITER_MLA", multiple_of=1, kv_dtypes=FP8_ALL)


# The sparse-MLA indexer's cache layer (deepseek_v2.py DeepseekV32IndexerCache.get_attn_backend; 0.19.0-0.33.0
# v1/attention/backends/mla/indexer.py DeepseekV32IndexerBackend.get_supported_kernel_block_sizes: [64] on CUDA)
DEEPSEEK_V32_INDEXER = Backend("DEEPSEEK_V32_INDEXER", fixed_sizes=(64,))


def agreed_block_size(backends: list[Backend]) -> int:
    """0.31.0+ Platform._preferred_block_size_for_backends: one backend keeps its preference; several take 16 when
    all support it, else the smallest lcm of one kernel block per backend that all support. E.g.
    [FLASHINFER_MLA_SPARSE (32, 64), DEEPSEEK_V32_INDEXER (64)]: 16 no; lcm(32, 64) = lcm(64, 64) = 64 -> 64."""
    if len(backends) == 1:
        return backends[0].preferred_block()
    if all(b.accepts_block(DEFAULT_BLOCK_SIZE) for b in backends):
        return DEFAULT_BLOCK_SIZE
    per_backend = [b.fixed_sizes or (b.multiple_of or 1,) for b in backends]
    candidates = sorted({math.lcm(*sizes) for sizes in itertools.product(*per_backend)})
    # every lcm is a multiple of one block per backend, so the first candidate is always taken here ("share no
    # supported KV cache block size" needs a backend that accepts exact sizes only, CPU_MLA, not planned)
    return next(c for c in candidates if all(b.accepts_block(c) for b in backends))


def _sparse_block_backends(*, model: ModelSpec, backend: Backend) -> list[Backend]:
    """The non-SSM backends of a sparse-MLA model in layer order (_find_non_ssm_backends): each layer builds its
    indexer before its MLA attention (deepseek_v2.py DeepseekV2MLAAttention.__init__, 0.19.0-0.33.0), so the
    indexer leads when the first layer carries one (DeepSeek-V3.2: every layer; GLM-5.2: layer 0 of its
    IndexCache pattern)."""
    first_indexed = model.indexer_layers is None or 0 in model.indexer_layers
    return [DEEPSEEK_V32_INDEXER, backend] if first_indexed else [backend, DEEPSEEK_V32_INDEXER]


@dataclass
class BackendChoice:
    name: str
    block_size: int
    min_kernel_block: int = DEFAULT_BLOCK_SIZE  # the chosen backend's smallest kernel block
    log_lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    kv_cache_dtype: str | None = (
        None  # the dtype the layers run when the backend changes it (fp8 -> fp8_ds_mla)
    )
    pads_pages: bool = (
        False  # a page that does not divide the largest is padded (VersionRules.attention_page_padding)
    )


# Every backend by the name vLLM gives it: the priority rows (VersionRules.backend_priorities) and the
# sparse MLA tail (VersionRules.sparse_mla_sm90) name their backends here.
BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in (
        FLASH_ATTN,
        FLASHINFER,
        TRITON_ATTN,
        FLEX_ATTENTION,
        XFORMERS,
        FLASH_ATTN_MLA,
        FLASHMLA,
        FLASHINFER_MLA,
        CUTLASS_MLA,
        TRITON_MLA,
        ROCM_ATTN,
        ROCM_AITER_MLA,
        FLASHMLA_SPARSE,
        FLASHINFER_MLA_SPARSE,
        FLASH_ATTN_MLA_SPARSE,
        FLASH_ATTN_MLA_SPARSE_FA4,
        FLASHINFER_MLA_SPARSE_SM90,
        TRITON_FLASH_ATTN,
        TRITON_FLASHINFER,
    )
}


def allowed_block_sizes(rules: VersionRules) -> tuple[int, ...] | None:
    """`--block-size` choices of the CLI by version; None means any positive int (0.20+)."""
    return rules.block_size_choices


def cuda_candidates(*, mla: bool, sm: int, rules: VersionRules) -> list[Backend]:
    """This version's priority list for the model kind on a device of capability ``sm`` (versions.py)."""
    row = next(p for p in rules.backend_priorities if p.mla == mla and p.min_sm <= sm <= p.max_sm)
    return [BACKENDS[name] for name in row.backends]


# 0.33.0 transformers_utils/model_arch_config_convertor.py is_mm_prefix_lm MM_PREFIX_LM_MODELS (0.14.0 lists
# gemma3 and paligemma; the others were added with their models)
MM_PREFIX_LM_MODEL_TYPES = frozenset({"bagel", "gemma3", "molmo2", "moondream3", "paligemma"})
MM_PREFIX_BACKENDS = frozenset({"TRITON_ATTN", "FLEX_ATTENTION", "TRITON_FLASH_ATTN", "TRITON_FLASHINFER"})
MM_PREFIX_COMPOSITE_HEAD_SIZES = (256, 512)  # the composites' head_sizes


def uses_mm_prefix(*, model: ModelSpec, serve: ServeConfig, rules: VersionRules) -> bool:
    """ModelConfig.is_mm_prefix_lm as the attention layers read it: an image-prefix model type (0.14+) or a
    config that asks for it (Gemma-4, 0.20+), unless every --limit-mm-per-prompt modality is 0 (text-only)
    from 0.27."""
    asks = model.model_type in MM_PREFIX_LM_MODEL_TYPES or (rules.config_mm_prefix and model.mm_prefix_lm)
    if not (rules.mm_prefix_attention and asks):
        return False
    limits = serve.limit_mm_per_prompt
    text_only = bool(limits) and all(v == 0 for v in (limits or {}).values())
    return not (rules.mm_prefix_off_text_only and text_only)


def mm_prefix_candidates(
    candidates: list[Backend], *, model: ModelSpec, sm: int, rules: VersionRules
) -> list[Backend]:
    """The priority list of an image-prefix model: the 0.30+ composite first (platforms/cuda.py
    _get_backend_priorities, for its head sizes), then the backends that support mm prefix (0.14.0
    AttentionBackend.validate_configuration drops the rest; FLASH_ATTN keeps it with FA4 from 0.24.0).

    E.g. Gemma-3-12B (head 256) on an H100: 0.19.0 TRITON_ATTN, 0.24.0 FLASH_ATTN, 0.30.0 TRITON_FLASH_ATTN.
    """
    lead: list[Backend] = []
    if rules.mm_prefix_composites and model.head_size in MM_PREFIX_COMPOSITE_HEAD_SIZES:
        lead = [TRITON_FLASH_ATTN] if sm // 10 == 9 else [TRITON_FLASHINFER] if sm // 10 == 10 else []
    fa4 = rules.fa4_mm_prefix and sm // 10 in FA4_SM_MAJORS
    kept = [b for b in candidates if b.name in MM_PREFIX_BACKENDS or (b is FLASH_ATTN and fa4)]
    return lead + kept


def sparse_kv_cache_dtype(*, backend: Backend, kv_cache_dtype: str) -> str:
    """The cache dtype the sparse MLA layer runs: FLASHMLA_SPARSE serves a quantized cache in DeepSeek's
    fp8_ds_mla layout (0.19.0 mla_attention.py MLAAttention.__init__ "Automatically convert fp8 kv-cache format
    to fp8_ds_mla"; 0.33.0 _canonicalize_sparse_mla_kv_cache_dtype); every other backend keeps the dtype."""
    if backend is FLASHMLA_SPARSE and kv_cache_dtype not in ("auto", "bfloat16", "float16", "nvfp4_ds_mla"):
        return "fp8_ds_mla"
    return kv_cache_dtype


def _first_accepting(
    candidates: list[Backend],
    *,
    sm: int,
    kv_cache_dtype: str,
    block_size: int | None,
    heads: frozenset[int] = frozenset(),
    rules: VersionRules | None = None,
) -> tuple[Backend | None, list[str]]:
    rejected: list[str] = []
    for backend in candidates:
        if not backend.min_sm <= sm <= backend.max_sm:
            continue
        if rules is not None and head_size_rejected(backend.name, heads=heads, sm=sm, rules=rules):
            continue  # not a fallback the user caused: vLLM never offers it for this model
        if not backend.accepts_dtype(kv_cache_dtype, sm):
            rejected.append(f"{backend.name} (no {kv_cache_dtype} KV cache here)")
            continue
        if block_size is not None and not backend.accepts_block(block_size):
            rejected.append(f"{backend.name} (block size {block_size})")
            continue
        return backend, rejected
    return None, rejected


def _check_flags(*, model: ModelSpec, serve: ServeConfig, rules: VersionRules) -> None:
    """The CLI's own refusals: --block-size outside this release's choices, fp8_ds_mla on a model without it."""
    user_block = serve.block_size
    choices = allowed_block_sizes(rules)
    if user_block is not None and choices is not None and user_block not in choices:
        raise InvalidServeConfigError(
            "block_size",
            Text(
                "vLLM {version} accepts --block-size only from {choices}",
                version=rules.version,
                choices=list(choices),
            ),
        )
    if serve.kv_cache_dtype == "fp8_ds_mla" and (model.mla is None or not rules.has_fp8_ds_mla):
        raise InvalidServeConfigError(
            "kv_cache_dtype",
            Text("fp8_ds_mla is only for sparse-MLA models (DeepSeek-V3.2 style) on vLLM >= 0.14"),
        )
    sparse = model.mla is not None and bool(model.indexer_bytes_per_token)
    if serve.kv_cache_dtype == "nvfp4_ds_mla" and not (sparse and rules.has_nvfp4_ds_mla):
        raise InvalidServeConfigError(
            "kv_cache_dtype",
            Text("nvfp4_ds_mla is only for sparse-MLA models (DeepSeek-V3.2 style) on vLLM >= 0.30"),
        )


def _npu_choice(
    *, model: ModelSpec, serve: ServeConfig, rules: VersionRules, a5: bool, flags: tuple[bool, bool]
) -> BackendChoice:
    """vllm-ascend: 128-token blocks, forced when prefix caching or chunked prefill is on (``flags``; reference
    §9). DeepSeek-V4 runs AscendDSABackend (models/layer/attention/layer.py DSAAttention), sized by
    kv_dsv4_ascend.py (ascend_dsv4_layout releases): a 16-bit cache, fp8 on an A5 (``a5``: its specs set
    cache_config.cache_dtype to float8_e4m3fn)."""
    prefix_caching, chunked_prefill = flags
    kv_dtype, user_block = serve.kv_cache_dtype, serve.block_size
    if kv_dtype.startswith("fp8"):
        raise InvalidServeConfigError(
            "kv_cache_dtype",
            Text(
                "vllm-ascend has no fp8 --kv-cache-dtype path; INT8 (C8) KV comes from the ModelSlim quantization description (choose int8)"
            ),
        )
    name = "ASCEND_MLA" if model.mla else "ASCEND"
    if model.compress_ratios is not None and rules.ascend_dsv4_layout and kv_dtype != "int8":
        name = ASCEND_DSV4_BACKEND
    choice = BackendChoice(name=name, block_size=ASCEND_BLOCK_SIZE)
    if name == ASCEND_DSV4_BACKEND and a5:
        choice.kv_cache_dtype = kv_dsv4_ascend.A5_CACHE_DTYPE
        choice.warnings.append(
            Text("On an A5 vllm-ascend keeps DeepSeek-V4's KV cache in fp8 (float8_e4m3fn).")
        )
    if user_block is not None and user_block != ASCEND_BLOCK_SIZE:
        if prefix_caching or chunked_prefill:
            choice.log_lines.append("Block size is set to 128 if prefix cache or chunked prefill is enabled.")
            choice.warnings.append(
                Text("--block-size {user_block} is forced to 128 by vllm-ascend.", user_block=user_block)
            )
        else:
            choice.block_size = user_block
            choice.warnings.append(
                Text("Ascend attention kernels take 128-token blocks; other sizes are untested.")
            )
    if name == ASCEND_DSV4_BACKEND and choice.block_size not in DSV4_BLOCK_SIZES:
        raise InvalidServeConfigError(
            "block_size",
            Text(
                "vllm-ascend sizes DeepSeek-V4's cache only for --block-size {sizes} (DSV4_BLOCK_SIZES), got {block_size}",
                sizes=", ".join(str(b) for b in sorted(DSV4_BLOCK_SIZES)),
                block_size=choice.block_size,
            ),
        )
    return choice


# models with learned sinks on every layer (attention_sinks.has_sinks): ROCM_ATTN refuses them (supports_sink False:
# "attention sinks not supported"), CUDA backends take them by device (VersionRules.sink_backends)


def _rocm_rejects(
    backend: Backend, *, model: ModelSpec, serve: ServeConfig, rules: VersionRules
) -> str | None:
    """Why AttentionBackend.validate_configuration turns this ROCm backend down for the model, or None."""
    if backend is not ROCM_ATTN:
        return None
    if head_size_rejected(backend.name, heads=attention_head_sizes(model), sm=0, rules=rules):
        return "head_size not supported"
    if has_sinks(model=model, rules=rules):
        return "attention sinks not supported"
    if not rules.rocm_attn_mm_prefix and uses_mm_prefix(model=model, serve=serve, rules=rules):
        return "partial multimodal token full attention not supported"
    return None


def _rocm_choice(*, model: ModelSpec, serve: ServeConfig, rules: VersionRules) -> BackendChoice:
    """ROCm with vLLM's default environment (AITER off): the release's priority list, first backend that takes
    the model, the KV dtype and the block (platforms/rocm.py; VersionRules.rocm_backends). E.g. Llama-3.1-8B
    on an MI300X: TRITON_ATTN at 0.18.0, ROCM_ATTN at 0.19.0; gpt-oss (sinks) TRITON_ATTN; DeepSeek-V3
    TRITON_MLA. A sparse-MLA model (ROCM_AITER_MLA_SPARSE), V0 releases and, 0.10-0.17, an MLA model at
    --block-size 1 (ROCM_AITER_MLA, VersionRules.rocm_mla_block1_aiter; TRITON_MLA any other) keep one backend."""
    kv_dtype, user_block = serve.kv_cache_dtype, serve.block_size
    sparse = model.mla is not None and bool(model.indexer_bytes_per_token)
    names = rules.rocm_mla_backends if model.mla else rules.rocm_backends
    if names is None or sparse or (model.mla and user_block == 1 and rules.rocm_mla_block1_aiter):
        candidates = [ROCM_AITER_MLA if model.mla else ROCM_ATTN]
    elif model.mla is None and forces_triton(model=model, sm=0, rules=rules):  # no FA4 build on ROCm
        candidates = [TRITON_ATTN]
    else:
        candidates = [BACKENDS[name] for name in names]
    rejected: list[str] = []
    for backend in candidates:
        reason = _rocm_rejects(backend, model=model, serve=serve, rules=rules)
        if (
            reason is None
            and kv_dtype not in ("auto", "bfloat16", "float16")
            and kv_dtype not in backend.kv_dtypes
        ):
            reason = "kv_cache_dtype not supported"
        unchecked = model.mla is not None and rules.rocm_mla_block1_aiter  # 0.10-0.17 checks only block 1
        if reason is None and user_block is not None and not (unchecked or backend.accepts_block(user_block)):
            reason = "block_size not supported"
        if reason is None:
            return BackendChoice(
                name=backend.name,
                block_size=user_block or backend.preferred_block(),
                min_kernel_block=backend.min_kernel_block(),
            )
        rejected.append(f"{backend.name}: [{reason}]")
    raise InvalidServeConfigError(
        "kv_cache_dtype" if any("kv_cache_dtype" in r for r in rejected) else "block_size",
        Text(
            "no attention backend on ROCm takes kv_cache_dtype={kv_dtype}{block} (vLLM: 'No valid attention "
            "backend found for rocm'; {reasons})",
            kv_dtype=kv_dtype,
            block=", block_size=" + str(user_block) if user_block else "",
            reasons=", ".join(rejected),
        ),
    )


def _non_cuda_choice(*, model: ModelSpec, device: DeviceSpec, serve: ServeConfig) -> BackendChoice:
    """Gaudi and the other platforms: one backend each, no fallback walk."""
    kv_dtype, user_block = serve.kv_cache_dtype, serve.block_size
    if device.platform == "hpu":
        if kv_dtype != "auto":
            raise InvalidServeConfigError(
                "kv_cache_dtype", Text("Gaudi uses fp8_inc for quantized KV, not modelled here")
            )
        return BackendChoice(name="HPU_ATTN", block_size=user_block or HPU_BLOCK_SIZE)
    if kv_dtype != "auto":
        raise InvalidServeConfigError(
            "kv_cache_dtype", Text("quantized KV is not modelled on {platform}", platform=device.platform)
        )
    return BackendChoice(name=device.platform.upper(), block_size=user_block or DEFAULT_BLOCK_SIZE)


def _no_backend_error(
    *, device: DeviceSpec, sm: int, kv_dtype: str, user_block: int | None, candidates: list[Backend]
) -> InvalidServeConfigError:
    return InvalidServeConfigError(
        "kv_cache_dtype" if kv_dtype != "auto" else "block_size",
        Text(
            "no attention backend on {name} (sm {sm}) accepts kv_cache_dtype={kv_dtype}",
            name=device.name,
            sm=sm,
            kv_dtype=kv_dtype,
        )
        + (Text(" with block_size={user_block}", user_block=user_block) if user_block else "")
        + Text("; tried {join}", join=", ".join(c.name for c in candidates)),
    )


MINIMAX_M3_SPARSE_BACKEND = "MINIMAX_M3_SPARSE"  # MiniMaxM3SparseBackend.get_name (MSA subclasses keep it)
DSV4_BLOCK_SIZE = 256  # models/deepseek_v4/sparse_mla.py DeepseekV4SparseMLABackend kernel block
DSV4_FLASHMLA_SM_MAJORS = (
    9,
    10,
)  # nvidia/model.py _select_dsv4_attn_cls: FlashMLA off SM12 (FlashInfer there)


def _kernel_block_refusal(*, backend: str, kernel: int, block_size: int) -> InvalidServeConfigError:
    """v1/worker/utils.py select_common_block_size (0.19.0-0.33.0): a backend that declares an exact kernel block
    takes the manager's block only when that block is it or splits into it; none here -> "No common block size"."""
    return InvalidServeConfigError(
        "block_size",
        Text(
            "{backend} takes kernel blocks of {kernel} tokens: --block-size must be a multiple of {kernel}, got "
            "{block_size} (vLLM: 'No common block size for {block_size}')",
            backend=backend,
            kernel=kernel,
            block_size=block_size,
        ),
    )


def _dsv4_choice(*, serve: ServeConfig) -> BackendChoice:
    """DeepSeek-V4 on SM90/SM100 (0.33.0 nvidia/model.py _select_dsv4_attn_cls -> DeepseekV4FlashMLAAttention):
    its fp8_ds_mla layout takes `auto` and any fp8 dtype as fp8_ds_mla (attention.py
    _resolve_dsv4_kv_cache_dtype) and refuses a 16-bit cache."""
    kv_dtype = serve.kv_cache_dtype
    if kv_dtype != "auto" and not kv_dtype.startswith("fp8"):
        raise InvalidServeConfigError(
            "kv_cache_dtype",
            Text(
                "DeepseekV4 fp8_ds_mla layout only supports fp8 kv-cache, got {kv_dtype}. Please set "
                "`--kv-cache-dtype fp8` or select a backend that supports bfloat16 KV cache.",
                kv_dtype=kv_dtype,
            ),
        )
    if serve.block_size is not None and serve.block_size % DSV4_BLOCK_SIZE:
        raise _kernel_block_refusal(
            backend="FLASHMLA_SPARSE_DSV4", kernel=DSV4_BLOCK_SIZE, block_size=serve.block_size
        )
    return BackendChoice(
        name="FLASHMLA_SPARSE_DSV4",
        block_size=serve.block_size or DSV4_BLOCK_SIZE,
        min_kernel_block=DSV4_BLOCK_SIZE,
        kv_cache_dtype="fp8_ds_mla",
    )


def _cuda_choice(
    *, model: ModelSpec, device: DeviceSpec, serve: ServeConfig, rules: VersionRules
) -> BackendChoice:
    """The first backend of this release's priority list that takes the device, the KV dtype and the block."""
    kv_dtype, user_block = serve.kv_cache_dtype, serve.block_size
    sm = device.sm or 80
    if model.compress_ratios is not None and rules.dsv4_cache and sm // 10 in DSV4_FLASHMLA_SM_MAJORS:
        return _dsv4_choice(serve=serve)
    if model.sparse_kernel_block is not None:
        # MiniMax-M3 (models/minimax_m3/common/sparse_attention.py): MINIMAX_M3_SPARSE on every CUDA device
        # (the SM100 MSA impl keeps its name), its one kernel block for every layer
        return BackendChoice(
            name=MINIMAX_M3_SPARSE_BACKEND,
            block_size=serve.block_size or model.sparse_kernel_block,
            min_kernel_block=model.sparse_kernel_block,
        )
    sparse = model.mla is not None and bool(model.indexer_bytes_per_token)
    if sparse:
        order = sparse_mla_order(sm=sm, rules=rules, kv_cache_dtype=kv_dtype, model=model)
        candidates = [BACKENDS[name] for name in order]
    else:
        candidates = cuda_candidates(mla=model.mla is not None, sm=sm, rules=rules)
        fp8_sink_path = rules.fp8_kv_as_sinks and model.mla is None and kv_dtype.startswith("fp8")
        if has_sinks(model=model, rules=rules) or fp8_sink_path:  # "attention sinks not supported"
            takes = dict(rules.sink_backends)
            candidates = [b for b in candidates if b.name not in takes or sm // 10 in takes[b.name]]
        if flashinfer_mla_refuses(model=model, rules=rules):
            candidates = [b for b in candidates if b is not FLASHINFER_MLA]  # supports_combination refuses it
        if model.mla is None and uses_mm_prefix(model=model, serve=serve, rules=rules):
            candidates = mm_prefix_candidates(candidates, model=model, sm=sm, rules=rules)
        if forces_triton(model=model, sm=sm, rules=rules):
            candidates = [TRITON_ATTN]
    forced, candidates = forced_blocks(
        candidates, model=model, sm=sm, kv_cache_dtype=kv_dtype, block_size=user_block, rules=rules
    )
    if forced:  # 0.8-0.17: vLLM writes the backends' blocks over cache_config.block_size
        user_block = forced[-1].block
    heads = attention_head_sizes(model)
    backend, rejected = _first_accepting(
        candidates, sm=sm, kv_cache_dtype=kv_dtype, block_size=user_block, heads=heads, rules=rules
    )
    if backend is None:
        raise _no_backend_error(
            device=device, sm=sm, kv_dtype=kv_dtype, user_block=user_block, candidates=candidates
        )
    if (
        sparse
        and user_block is not None
        and rules.indexer_kernel_block
        and not DEEPSEEK_V32_INDEXER.accepts_block(user_block)
    ):
        # the indexer's cache layers share the MLA layers' KV group: [64] must split the block too
        kernel = DEEPSEEK_V32_INDEXER.min_kernel_block()
        raise _kernel_block_refusal(backend=DEEPSEEK_V32_INDEXER.name, kernel=kernel, block_size=user_block)
    # update_block_size_for_backend with no --block-size: the first layer's backend (0.18-0.30), all of them (0.31+;
    # 0.14-0.17 cuda.py forced FlashInferMLASparse outside (32, 64) to 64 -- the same 64 for these models)
    in_layer_order = _sparse_block_backends(model=model, backend=backend) if sparse else [backend]
    agreed = (
        agreed_block_size(in_layer_order)
        if rules.block_size_agreement
        else in_layer_order[0].preferred_block()
    )
    choice = BackendChoice(
        name=backend.name,
        block_size=user_block or agreed,
        min_kernel_block=backend.min_kernel_block(),
        kv_cache_dtype=sparse_kv_cache_dtype(backend=backend, kv_cache_dtype=kv_dtype) if sparse else None,
    )
    preferred, _ = _first_accepting(
        candidates, sm=sm, kv_cache_dtype="auto", block_size=None, heads=heads, rules=rules
    )
    if preferred is not None and preferred.name != backend.name:
        choice.warnings.append(
            Text(
                "Fallback: vLLM would normally use {name} here but it rejects {value}, so {name2} runs instead. Check the 'Using … backend' line of the start-up log.",
                name=preferred.name,
                value="; ".join(rejected) or Text("this configuration"),
                name2=backend.name,
            )
        )
    if forced:  # 0.8.0-0.17.0 platforms/cuda.py check_and_update_config
        choice.log_lines.extend(
            f"Forcing kv cache block size to {row.block} for {row.log_name} backend." for row in forced
        )
    elif user_block is None and choice.block_size != DEFAULT_BLOCK_SIZE:
        if rules.block_size_log == "setting_for_backends":
            names = "/".join(b.name for b in in_layer_order)
            choice.log_lines.append(
                f"Setting kv cache block size to {choice.block_size} for {names} backend(s)."
            )
        elif rules.block_size_log == "setting_for_backend":
            choice.log_lines.append(
                f"Setting kv cache block size to {choice.block_size} for {in_layer_order[0].name} backend."
            )
    return choice


def forced_blocks(
    candidates: list[Backend],
    *,
    model: ModelSpec,
    sm: int,
    kv_cache_dtype: str,
    block_size: int | None,
    rules: VersionRules,
) -> tuple[list[ForcedBlock], list[Backend]]:
    """0.8.0-0.17.0 platforms/cuda.py CudaPlatform.check_and_update_config: MLA backends write their block over
    cache_config.block_size (16, or a --block-size) unless they keep it (rules.forced_blocks), in vLLM's order; and
    the candidates left (0.14-0.17 set the attention backend on Blackwell). 0.11.0-0.17.0 decide the backends by
    the device (forced_blocks.device_forcing), older releases by the backend the planner picks.

    E.g. DeepSeek-V3 on an H100 at 0.11.0 with --block-size 16: FLASHMLA, 16 != 64 -> 64, "Forcing kv cache block
    size to 64 for FlashMLA backend."; at 0.14.0 --block-size 128 is kept (128 % 64 == 0); at 0.18.0 none.
    """
    if not rules.forced_blocks:
        return [], candidates
    sparse = model.mla is not None and bool(model.indexer_bytes_per_token)
    by_device = device_forcing(model=model, sm=sm, sparse=sparse, rules=rules)
    if by_device is None:
        backend, _ = _first_accepting(
            candidates,
            sm=sm,
            kv_cache_dtype=kv_cache_dtype,
            block_size=None,
            heads=attention_head_sizes(model),
            rules=rules,
        )
        names: tuple[str, ...] = () if backend is None else (backend.name,)
    else:
        names = by_device.backends
        if by_device.sets_backend is not None:
            candidates = [BACKENDS[by_device.sets_backend]]
    rows = {row.backend: row for row in rules.forced_blocks}
    block = block_size or DEFAULT_BLOCK_SIZE
    applied: list[ForcedBlock] = []
    for name in names:
        row = rows.get(name)
        if row is None:
            continue
        kept = block in BACKENDS[name].fixed_sizes if row.exact else BACKENDS[name].accepts_block(block)
        if not kept:
            block = row.block
            applied.append(row)
    return applied, candidates


def resolve_backend(
    *,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    rules: VersionRules,
    prefix_caching: bool,
    chunked_prefill: bool,
) -> BackendChoice:
    """Backend and effective block size; raises InvalidServeConfigError where vLLM would refuse.

    E.g. under 0.33.0 with no flags: Llama-3.1-8B on an H100 (SM90) gets FLASH_ATTN with 16-token blocks,
    on a B200 (SM100) FLASHINFER with 16; DeepSeek-V3 (MLA) at TP 8 on H100s FLASH_ATTN_MLA with 16.
    """
    _check_flags(model=model, serve=serve, rules=rules)
    if device.platform == "npu":
        flags, a5 = (prefix_caching, chunked_prefill), device.id in kv_dsv4_ascend.ASCEND_A5_DEVICE_IDS
        return _npu_choice(model=model, serve=serve, rules=rules, a5=a5, flags=flags)
    if serve.kv_cache_dtype == "int8":
        raise InvalidServeConfigError(
            "kv_cache_dtype", Text("INT8 KV cache is the Ascend (vllm-ascend C8) path only")
        )
    block = serve.block_size
    if (
        diffkv := diffkv_backend(model=model, sm=device.sm, rules=rules)
    ) is not None:  # mimo_v2.py picks it itself
        if block is not None and block % DIFFKV_KERNEL_BLOCK:  # its parents' MultipleOf(16) kernels
            raise _kernel_block_refusal(backend=diffkv, kernel=DIFFKV_KERNEL_BLOCK, block_size=block)
        choice = BackendChoice(name=diffkv, block_size=block or DIFFKV_KERNEL_BLOCK, min_kernel_block=16)
    elif device.platform == "rocm":
        choice = _rocm_choice(model=model, serve=serve, rules=rules)
    elif device.platform != "cuda":
        choice = _non_cuda_choice(model=model, device=device, serve=serve)
    else:
        choice = _cuda_choice(model=model, device=device, serve=serve, rules=rules)
    choice.pads_pages = rules.attention_page_padding == "non_mla" or (
        rules.attention_page_padding == "block_stride" and choice.name in BLOCK_STRIDE_BACKENDS
    )
    return choice


# 0.24.0-0.28.0 v1/attention/backend.py indexes_kv_by_block_stride: backends whose layered stride order puts
# num_blocks outermost (flash_attn.py, flashinfer.py, triton_attn.py, flex_attention.py get_kv_cache_stride_order)
BLOCK_STRIDE_BACKENDS = frozenset({"FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION"})


# 0.19.0 models/config.py HybridAttentionMambaModelConfig: the step an MLA hybrid's block is raised in
# (64; 128 with CUTLASS_MLA); other hybrids 16
V0_19_MLA_HYBRID_STEP = 64
V0_19_CUTLASS_MLA_HYBRID_STEP = 128
# 0.33.0 v1/attention/backends/gdn_attn.py FLASHINFER_GDN_CHECKPOINT_ALIGNMENT: FlashInfer's GDN prefill
# emits states on a 64-token grid
FLASHINFER_GDN_CHECKPOINT_ALIGNMENT = 64
FLASHINFER_GDN_HEAD_K_DIM = 128  # Blackwell (SM10x / SM12x) needs linear_key_head_dim 128 (and CUDA >= 13)


def gdn_uses_flashinfer_prefill(*, model: ModelSpec, device: DeviceSpec) -> bool:
    """0.33.0 qwen_gdn_linear_attn._resolve_gdn_prefill_backend ("auto"): FlashInfer's GDN prefill on SM90,
    or on SM10x / SM12x with linear_key_head_dim 128 (the CUDA >= 13 condition is assumed met: the PyPI
    wheels of 0.33.0 pin torch 2.14); Triton/FLA elsewhere (ROCm, XPU, older GPUs)."""
    mamba = model.mamba
    if device.platform != "cuda" or mamba is None or mamba.kind != MambaKind.GATED_DELTA_NET:
        return False
    sm = device.sm or 0
    if sm == 90:
        return True
    return sm // 10 in (10, 12) and mamba.key_head_dim == FLASHINFER_GDN_HEAD_K_DIM


# 0.32.0+ model_executor/layers/mamba/kda_checkpoint.py kda_prefill_checkpoint_alignment: FlashKDA's prefill
# exports states every 16 tokens; kimi_k3/nvidia/kda.py is_flashkda_supported: CUDA SM9x / SM10x / SM12x,
# head_dim 128, bf16 activations, a bounded gate (resolve_kda_prefill_backend "auto" takes it then)
FLASHKDA_CHECKPOINT_ALIGNMENT = 16
FLASHKDA_HEAD_DIM = 128
FLASHKDA_SM_MAJORS = (9, 10, 12)


def kda_uses_flashkda(*, model: ModelSpec, device: DeviceSpec) -> bool:
    """Whether Kimi's KDA layers prefill with FlashKDA (and so export prefill checkpoints)."""
    mamba = model.mamba
    if device.platform != "cuda" or mamba is None or mamba.kind != MambaKind.KDA:
        return False
    return (
        (device.sm or 0) // 10 in FLASHKDA_SM_MAJORS
        and mamba.head_dim == FLASHKDA_HEAD_DIM
        and model.torch_dtype in ("bfloat16", "float32")  # served in bf16 under --dtype auto
        and mamba.bounded_gate
    )


def hybrid_align(
    *, model: ModelSpec, device: DeviceSpec, rules: VersionRules, choice: BackendChoice, prefix_caching: bool
) -> HybridAlign:
    """How this release aligns a hybrid (attention + Mamba) model's block on this backend (kv.HybridAlign).

    0.19.0 (models/config.py HybridAttentionMambaModelConfig): steps of 16, MLA 64 (CUTLASS_MLA 128).
    0.20+ (platforms/interface.py Platform._align_hybrid_block_size): steps of max(the backend's smallest
    kernel block, block_size); MLA hybrids at least 128 (0.27+); in "align" mode (prefix caching on) the
    lcm with the Mamba layers' checkpoint alignment (0.33: 64 for Gated DeltaNet on FlashInfer's prefill,
    none for other Mamba layers, which declare no alignment).
    """
    if model.mamba is None or not has_kind(model, LayerKind.MAMBA):  # the fold: no scan of every layer
        return HybridAlign()
    flashinfer_gdn = gdn_uses_flashinfer_prefill(model=model, device=device)
    flashkda = rules.kda_checkpoint_block and kda_uses_flashkda(model=model, device=device)
    checkpoint_blocks = 0
    if (
        (rules.mamba2_checkpoint_block and model.mamba.kind == MambaKind.MAMBA2)
        or (rules.gdn_checkpoint_block and flashinfer_gdn)
        or flashkda
    ):
        checkpoint_blocks = 1
    if device.platform == "npu":
        return HybridAlign(checkpoint_blocks=checkpoint_blocks)  # vllm-ascend sizes its own (not read here)
    if rules.hybrid_align == "model_config":
        step = DEFAULT_BLOCK_SIZE
        if model.mla is not None:
            step = V0_19_CUTLASS_MLA_HYBRID_STEP if choice.name == "CUTLASS_MLA" else V0_19_MLA_HYBRID_STEP
        return HybridAlign(step_tokens=step, checkpoint_blocks=checkpoint_blocks)
    step = max(choice.min_kernel_block, choice.block_size)
    if model.mla is not None and rules.hybrid_mla_min_block:
        step = max(step, rules.hybrid_mla_min_block)
    if prefix_caching and rules.hybrid_checkpoint_lcm and flashinfer_gdn:
        step = math.lcm(step, FLASHINFER_GDN_CHECKPOINT_ALIGNMENT)
    if prefix_caching and rules.hybrid_checkpoint_lcm and flashkda:
        step = math.lcm(step, FLASHKDA_CHECKPOINT_ALIGNMENT)
    return HybridAlign(step_tokens=step, checkpoint_blocks=checkpoint_blocks)
