"""What differs between vLLM releases, as data: one changelog that every module reads.

Each entry of :data:`CHANGELOG` says "from release X these rules change", with the vLLM source it was
read from (reference vllm-accounting.md §0-§9, or a release read with `pip download --no-deps vllm==X`).
The rules of a release are the base row (0.6) with every entry up to it applied, so "vLLM's default
batched tokens on an H200 in 0.33" is the ``batch_tiers`` of the newest entry at or before 0.33
(an H200 reports 141 GiB: the ">= 70 GiB, not A100" tier, 8192 for `vllm serve`).

A version string is parsed as PEP 440 (vLLM's own builds are PEP 440: ``0.10.1.1``, ``0.6.4.post1``,
``0.14.0rc2+cu130``, ``0.19.2rc1.dev8+g4b7f5ea1a``; a leading ``v`` is allowed) and planned with the
rules of its *bracket*: the newest release in :data:`KNOWN_VERSIONS` of the same or an older minor
series (0.23.0 -> 0.21.0, 0.12.1 -> 0.11.0). Every changelog entry sits at the minor series of a known
release (a test checks it), so a release and its bracket have the same rules. Pre-releases, dev
builds and local tags take the rules of the release they lead to (an rc is cut from that release's
branch). Boundaries the reference could only bracket ("changed between 0.14.0 and 0.20.2") are put
at the first known release that has the change, and say so.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, replace
from functools import cache
from typing import Literal

from packaging.version import Version as Pep440

from app.core.backend_lists import MLA_0_11
from app.core.graph_mode import CudagraphMode
from app.core.mxfp4_backends import MXFP4_0_10, MXFP4_0_12, Mxfp4Row
from app.core.text import Text
from app.core.version_parse import Version, parse_pep440
from app.core.version_types import BackendPriority, BatchTier, ForcedBlock, GraphSupport
from app.core.version_types import Change as Change
from app.core.versions_changelog import SAMPLER_COPIES
from app.core.versions_platforms import CHANGELOG as CHANGELOG

# Releases whose rules were read (reference §0) or calibrated on real logs, oldest first. They are
# the brackets: a version is planned with the newest of these in its minor series or an older one.
KNOWN_VERSIONS: tuple[str, ...] = (
    "0.6.6",
    "0.7.3",
    "0.8.5",
    "0.9.2",
    "0.10.2",
    "0.11.0",
    "0.13.0",
    "0.14.0",
    "0.15.0",
    "0.17.0",
    "0.18.0",  # vllm-ascend v0.18.0's 310P rule (its worker halves the KV pool); CUDA rules as 0.17.0
    "0.19.0",
    "0.20.2",
    "0.21.0",
    "0.22.1",
    "0.24.0",
    "0.26.0",
    "0.27.1",
    "0.30.0",
    "0.32.0",
    "0.33.0",
    "0.34.0",  # read from its wheel (docs/release-watch.md): the extensible KV cache, SM100's split capture grids
)
DEFAULT_VERSION = "0.33.0"  # newest release the reference covers (§0); 0.34.0 is known but not the default
NEWEST_KNOWN = KNOWN_VERSIONS[-1]

BudgetStyle = Literal["v0", "v1_peak", "v1_profile"]
TokensFormula = Literal["none", "blocks_x_block_size", "blocks_div_groups", "concurrency_x_len"]
ConcurrencyFormula = Literal["blocks_x_block_size_div_len", "one_cdiv_over_sum", "sum_of_cdivs"]
NeededFormula = Literal["v0", "sum_layers", "first_group", "all_groups"]
ErrorStyle = Literal["v0", "v1_073", "v1_085", "v1_010", "v1_014", "v1_027"]
WeightsLog = Literal["took_gb", "took_gib", "took_gib_memory"]
GibStyle = Literal["fixed2", "round2"]


V0_CHUNKED_PREFILL_ABOVE = 32768  # V0 0.6.6 turns chunked prefill on by itself above this max_model_len (§7)
V0_DEFAULT_SWAP_GIB = 4  # V0 --swap-space default, per GPU (§7)

# Below every tier (and V0 always): 256 sequences, 2048 batched tokens for `vllm serve`
# (0.6.6 SchedulerConfig / 0.8.5-0.33.0 arg_utils "TODO(woosuk): Tune the default values").
SMALL_DEVICE_MAX_NUM_SEQS = 256
SMALL_DEVICE_MAX_NUM_BATCHED_TOKENS = 2048


@dataclass(frozen=True)
class VersionRules:
    """The rules of one release. Each field's default is vLLM 0.6.6's (V0) behaviour, the base row
    :data:`BASE`; a :data:`CHANGELOG` entry changes fields from its release on.

    E.g. ``rules_for("0.33.0").default_gpu_memory_utilization`` is 0.92 (the 0.20.2 entry) and
    ``BASE.default_gpu_memory_utilization`` 0.9 (the default below, §7).
    """

    version: str = "0.6.6"  # the known release these rules are (the bracket)
    version_tuple: Version = (0, 6, 6)
    engine: Literal["v0", "v1"] = "v0"
    default_gpu_memory_utilization: float = 0.9  # §7: 0.9 through 0.14.0
    requested_uses_ceil: bool = False  # requested = ceil(T*u) (>=0.14) or the float product
    budget_style: BudgetStyle = "v0"
    cuda_graph_budgeted: bool = False  # CUDA-graph estimate subtracted before KV sizing
    hybrid_allocator: bool = False  # sliding/chunked/mamba layers get their own KV groups
    tokens_formula: TokensFormula = "none"
    concurrency_formula: ConcurrencyFormula = "blocks_x_block_size_div_len"
    needed_formula: NeededFormula = "v0"
    inflight_uses_batches: bool = False  # IF = max_concurrent_batches x MNBT (>=0.27) instead of MNBT
    null_block_in_check: bool = False  # capacity check uses available - bytes_per_block (>=0.30)
    merged_capacity_line: bool = False  # one "KV cache size ..., Maximum concurrency ..." line (>=0.30)
    format_gib_style: GibStyle = "fixed2"  # %.2f or str(round(x, 2)) (>=0.14)
    weights_log: WeightsLog = "took_gb"
    error_style: ErrorStyle = "v0"
    # profile-run sampler peak, in fp32 logits copies (see budget.py)
    sampler_logit_copies: float = SAMPLER_COPIES
    swap_space_used: bool = True  # V0 swap preemption; ignored by V1, removed in 0.20+
    # the MXFP4 MoE backend by device and its padding (mxfp4_backends.py; rows set by versions_mxfp4.py)
    mxfp4_backends: tuple[Mxfp4Row, ...] = MXFP4_0_10
    has_swap_space_flag: bool = True  # `--swap-space` still parsed (until 0.19)
    has_kv_offloading_flags: bool = False  # --kv-offloading-size (0.14+)
    has_auto_fit: bool = False  # --max-model-len auto / -1 (0.14+)
    has_kv_cache_memory_bytes_flag: bool = False  # --kv-cache-memory-bytes (0.10+)
    prefix_caching_default: bool = False  # --enable-prefix-caching when not given (V1: on, §6)
    # V0: on only above this max_model_len; None: always on (V1)
    chunked_prefill_auto_above: int | None = V0_CHUNKED_PREFILL_ABOVE
    # `vllm serve` defaults by device: first matching tier, else the SMALL_DEVICE_* values
    # V0 0.6.6: 256 sequences; 2048 tokens with chunked prefill, else max(L, 2048) (§7)
    batch_tiers: tuple[BatchTier, ...] = ()
    # `--block-size` choices; None = any positive int; 0.6.6 arg_utils --block-size choices (§5.1)
    block_size_choices: tuple[int, ...] | None = (8, 16, 32, 64, 128)
    backend_priorities: tuple[BackendPriority, ...] = (
        BackendPriority(mla=True, min_sm=0, backends=MLA_0_11),
        BackendPriority(mla=False, min_sm=0, backends=("FLASH_ATTN", "XFORMERS")),  # V0 selector
    )
    has_fp8_ds_mla: bool = False  # `--kv-cache-dtype fp8_ds_mla` (sparse MLA) exists
    has_nvfp4_ds_mla: bool = False  # `--kv-cache-dtype nvfp4_ds_mla` (sparse MLA on SM100) exists
    # the line when B != 16; 0.11.0 cuda.py "Forcing kv cache block size to 64 for FlashMLA backend."; 0.18.0
    # interface.py "Setting kv cache block size to %d for %s backend."; 0.31.0 "... for %s backend(s)."
    block_size_log: Literal["flashmla_forcing", "setting_for_backend", "setting_for_backends"] = (
        "flashmla_forcing"
    )
    # the MLA backends whose block platforms/cuda.py forces (0.8.0-0.17.0; none before 0.8 or from 0.18.0, when
    # update_block_size_for_backend keeps a --block-size): backends.forced_blocks
    forced_blocks: tuple[ForcedBlock, ...] = ()
    # the sparse-MLA indexer's exact 64-token kernel block (mla/indexer.py DeepseekV32IndexerBackend.
    # get_supported_kernel_block_sizes) refusing a block it cannot split ("No common block size"): 0.14.0+
    indexer_kernel_block: bool = False
    # Platform.update_block_size_for_backend: the block every non-SSM backend of the model accepts (0.31.0
    # _preferred_block_size_for_backends) instead of the first attention layer's backend's preference
    block_size_agreement: bool = False
    optimization_levels: bool = False  # -O0..-O3 set cudagraph_mode (config/vllm.py OptimizationLevel, 0.14+)
    # a --compilation-config mode (level) other than 3 (VLLM_COMPILE) can split no graph at attention, so no PIECEWISE
    # capture (graph_mode.effective_mode): "level" 0.10.2-0.13 (no cudagraph_mode given -> NONE; an explicit
    # piecewise mode trips VllmConfig's assert), "to_none" 0.14.0 (the piecewise mode is overridden to NONE),
    # "without_piecewise" 0.30.0 (_normalize_piecewise_cudagraph_mode: FULL_AND_PIECEWISE -> FULL_DECODE_ONLY)
    compile_mode_rule: Literal["level", "to_none", "without_piecewise"] = "level"
    # the backends whose CUDA-graph support can lower the mode (graph_rules.resolved_mode): read for 0.10.2-0.33.0
    # (those not listed take every mode the planner plans, as read); () before 0.10.2, which has no cudagraph_mode
    cudagraph_support: tuple[GraphSupport, ...] = ()
    # a pooling model's full graphs: 0.11.0 VllmConfig.__post_init__ defaults it to PIECEWISE (an explicit mode kept);
    # 0.14.0+ "Pooling models do not support full cudagraphs. Overriding cudagraph_mode to PIECEWISE." for any full mode
    pooling_overrides_full: bool = False
    # config/vllm.py _set_cudagraph_sizes: both capture keys given and max_cudagraph_capture_size != the largest listed
    # size within max_num_batched_tokens -> ValueError (0.13.0+; 0.11.0 has no max_cudagraph_capture_size)
    capture_size_consistency: bool = False
    # platforms/cuda.py check_and_update_config's MLA forcing (forced_blocks.device_forcing): by the backend picked
    # ("backend", 0.8-0.10 as the planner read them), or by the device as 0.11.0 / 0.14.0 / 0.15.0-0.17.0 decide it
    mla_forcing: Literal["backend", "device_0_11", "device_0_14", "device_0_15"] = "backend"
    # the qk_nope_head_dim values FLASHINFER_MLA takes (mla/flashinfer_mla.py supports_combination); None: no check
    flashinfer_mla_nope_dims: tuple[int, ...] | None = None
    # a model with learned attention sinks (attention_sinks.has_sinks): the capability majors on which each listed
    # backend takes them (AttentionBackend.supports_sink); a backend not listed takes them everywhere (TRITON_ATTN)
    sink_backends: tuple[tuple[str, tuple[int, ...]], ...] = ()
    # an fp8 KV cache takes the sinks' path too: 0.11.0 platforms/cuda.py get_attn_backend_cls "if (has_sink or
    # use_fp8_kv_cache) and not cls.is_device_capability(90)" -> TRITON_ATTN (FlashInfer first on 10.0 before it);
    # 0.10.1.1 tests has_sink alone; 0.13.0 walks _get_backend_priorities, each backend checking the dtype itself
    fp8_kv_as_sinks: bool = False
    # ModelSpec.attention_sinks (a config field's sinks on every layer) read: Granite's granite_layer_attn_params, 0.30.0+
    config_sinks: bool = False
    # MiMo-V2 with v_head_dim != head_dim takes FLASH_ATTN_DIFFKV / TRITON_ATTN_DIFFKV itself (backends_diffkv.py, 0.30.0+)
    diffkv_backends: bool = False
    # the default grid gains max_num_batched_tokens when it is within the largest capture size ("ensure
    # max_num_tokens is captured if within max capture size", 0.20.2+; absent in 0.19.0)
    capture_adds_batched_tokens: bool = False
    # graph_rules.default_capture_cap: (capability major, cap) pairs replacing the default 512 on that family
    # (0.30.0+: ((10, 1024),), is_device_capability_family(100)); ROCm / NPU (no CUDA capability) keep 512
    capture_cap_by_major: tuple[tuple[int, int], ...] = ()
    # the default grid's step above 256: 16 (0.13.0-0.33.0 config/vllm.py _set_cudagraph_sizes [1, 2, 4] + range(8,
    # 256, 8) + range(256, max + 1, 16): 51 sizes to 512) or 8 all the way (0.11.0 config/__init__.py VllmConfig.
    # _set_cudagraph_sizes [1, 2, 4] + range(8, max + 1, 8): 67 sizes to 512; 0.9.2 and 0.10.2 the same); releases before 0.9.2 not read
    capture_grid_16_from_256: bool = True
    # 0.9.2 config.py SchedulerConfig.cuda_graph_sizes = [512] whatever max_num_seqs (0.10.2 config/scheduler.py:
    # [min(max_num_seqs x 2, 512)]): the default grid always runs to 512
    capture_cap_ignores_seqs: bool = False
    # the default cap counts each request's 1 + num_speculative_tokens queries (decode_query_len, 0.13.0+)
    capture_spec_query_len: bool = False
    # the default grid gains the uniform decode sizes (graph_rules._decode_sizes): "speculative" with draft tokens
    # only (0.30.0), "always" also max_num_seqs itself without (0.31.0+ uniform_decode_sizes = [max_num_seqs])
    capture_decode_sizes: Literal["none", "speculative", "always"] = "none"
    # the cudagraph_mode a start-up runs when no flag names one (graph_mode.effective_mode): 0.10.2
    # config/__init__.py VllmConfig.__post_init__ PIECEWISE (V1 at compilation level PIECEWISE); FULL_AND_PIECEWISE
    # from 0.11.0 (changelog). Releases before 0.10.2 had no cudagraph_mode and were not read for it.
    default_cudagraph_mode: CudagraphMode = "PIECEWISE"
    # hybrid groups: largest bucket as group size if max < ratio x min
    group_size_max_ratio: float | None = None
    free_memory_check: bool = False  # start-up "Free memory on device ... is less than desired" check
    free_memory_device: str = "device "  # how that message names the device
    free_memory_check_with_kv_bytes: bool = False  # the check also runs under --kv-cache-memory-bytes
    # V0 "# GPU blocks" or "# cuda blocks"; 0.6.6 "# GPU blocks: %d, # CPU blocks: %d"
    v0_blocks_word: Literal["GPU", "platform"] = "GPU"
    autofit_log: Literal["gpu_memory", "kv_cache_memory"] = "gpu_memory"  # wording of the auto-fit line
    # wording of the ValueError for --max-model-len above the derived maximum (estimate._too_long_error)
    # 0.6.6 and 0.8.5 config.py _get_and_verify_max_len
    max_len_error_wording: Literal["incorrect_outputs", "caution"] = "incorrect_outputs"
    # sparse MLA (V3.2/GLM-5) prefers FlashInfer's kernel on SM100
    sparse_mla_flashinfer_on_sm100: bool = False
    # Mamba SSM state dtype overrides (kv.mamba_ssm_dtype_bytes): Nemotron-H's default when the config
    # names none (None: the model dtype), and whether Qwen3.5 reads `mamba_ssm_dtype` from its config
    nemotron_h_ssm_dtype_default: Literal["float16", "float32"] | None = None
    qwen3_5_reads_ssm_dtype: bool = False
    # The planner's own: activation/graph models were calibrated on logs of these releases (docs/model.md).
    measured_parts_calibrated: bool = False
    # --async-scheduling when not given: the scheduler prepares step N+1 while the device runs step N, so
    # the host's per-step work overlaps the device's instead of adding to it (app/core/perf/physics.py)
    async_scheduling_default: bool = False
    # --scheduler-reserve-full-isl when not given: a waiting (or preempted) request is admitted only when the
    # free blocks hold its whole sequence, not just its first prefill chunk (app/core/perf/simulate.py admit)
    scheduler_reserve_full_isl: bool = False
    # the API server gathers concurrent prompts into one batched tokenizer call (AsyncMicrobatchTokenizer), which
    # the Rust tokenizer spreads over the host's cores: no one-prompt-at-a-time queue (app/core/perf/simulate.py
    # tokenizer_queue applies only without it)
    tokenizer_microbatch: bool = False
    # vllm-ascend's worker (vllm_ascend/worker/worker.py NPUWorker, its releases track vLLM's): "peak" up to
    # v0.14 — KV = T x u - (torch peak + non-torch), non-torch = (T - free) - torch allocated, so other
    # processes' memory comes out of the pool, no start-up free-memory check, "Available memory: <bytes>,
    # total memory: <bytes>"; "profile" from v0.15.0rc1 — upstream's memory_profiling with the 0.11-style
    # sum, the free-memory check with the device-less 0.11 text, "Available KV cache memory: %.2f GiB".
    # Both take requested = T x u without ceil (reference §9).
    ascend_budget: Literal["peak", "profile"] = "peak"
    # vllm-ascend NPUWorker reads --kv-cache-memory-bytes from v0.19.1rc1; NPUWorker310 never, and halves its
    # pool from v0.18.0, printed "(halved for workspace)" from v0.21.0rc1 (changelog entries; situations.py)
    ascend_kv_memory_bytes: bool = False
    ascend_310p_halves_pool: bool = False
    ascend_310p_halved_log: bool = False
    # ROCm: the CUDA-graph (hipGraph) estimate is subtracted before KV sizing only from 0.26.0; before, the
    # graphs are captured after the pool is sized, in the 1 - u slack (v1/worker/gpu_worker.py, see 0.26.0)
    rocm_cuda_graph_budgeted: bool = False
    # ROCm's attention walk with vLLM's default environment (VLLM_ROCM_USE_AITER off, envs.py): the dense and
    # the MLA priority lists (platforms/rocm.py; backends._rocm_choice), and whether ROCM_ATTN takes an
    # image-prefix model (rocm_attn.py supports_mm_prefix). None: V0's one backend, not read per release.
    rocm_backends: tuple[str, ...] | None = None
    rocm_mla_backends: tuple[str, ...] | None = None
    # an MLA model at --block-size 1 takes ROCM_AITER_MLA with AITER off, any other TRITON_MLA (get_attn_backend_cls,
    # 0.10-0.17: TritonMLABackend had no kernel block sizes until 0.18.0's MultipleOf(16))
    rocm_mla_block1_aiter: bool = False
    rocm_attn_mm_prefix: bool = True
    # vllm-ascend's own DeepSeek-V4 cache (kv_dsv4_ascend.py): DSV4_BLOCK_SIZES and its layer-tuple packing
    ascend_dsv4_layout: bool = False
    # config/model.py _get_and_verify_max_len: a yarn rope derives original_max_position_embeddings x
    # factor (<= 0.27.1; 0.30.0+ leaves max_position_embeddings as it is), and with no --max-model-len
    # a LongRoPE model serves original_max_position_embeddings (0.14.0+; 0.11.0 served the derived one)
    yarn_scales_max_len: bool = True
    longrope_default_original: bool = False
    # Hybrid attention + Mamba models (kv.hybrid_block_size). "model_config": 0.19's
    # HybridAttentionMambaModelConfig raises the block in steps of 16 (MLA: 64, CUTLASS_MLA 128);
    # "platform": 0.20+ Platform._align_hybrid_block_size, steps of max(the backend's smallest kernel
    # block, the block size), at least ``hybrid_mla_min_block`` for MLA hybrids, and (0.33) the lcm with
    # the Mamba layers' prefill-checkpoint alignment when prefix caching puts Mamba in "align" mode.
    hybrid_align: Literal["model_config", "platform"] = "model_config"
    hybrid_mla_min_block: int = 0
    hybrid_checkpoint_lcm: bool = False
    # ModelConfig.is_prefix_caching_supported: hybrid (attention + Mamba) models default prefix caching
    # on (0.26+); before, off unless --enable-prefix-caching is given.
    hybrid_prefix_caching_default: bool = False
    # MambaSpec.num_prefill_checkpoint_blocks = 1 (one more block per request in "align" mode): Mamba-2
    # mixers from 0.32 (mamba_mixer2.get_kv_cache_spec), Gated DeltaNet with FlashInfer's prefill from
    # 0.33 (qwen_gdn_linear_attn.get_kv_cache_spec)
    mamba2_checkpoint_block: bool = False
    gdn_checkpoint_block: bool = False
    kda_checkpoint_block: bool = (
        False  # Kimi KDA on FlashKDA: kimi_k3/nvidia/kda.py get_kv_cache_spec (0.32+)
    )
    # CompilationConfig.resolve_cudagraph_mode_and_sizes (0.20.2+): with full CUDA graphs a Mamba model
    # refuses max_num_seqs above the pool's blocks ("max_num_seqs (N) exceeds available Mamba cache blocks")
    mamba_block_check: bool = False
    # `--kv-cache-dtype auto` takes the KV dtype a checkpoint declares (QuantSpec.kv_cache_dtype): ModelOpt
    # kv_cache_quant_algo / kv_cache_scheme from 0.14 (utils/torch_utils.py resolve_kv_cache_dtype_string,
    # absent in 0.11.0), compressed-tensors kv_cache_scheme from 0.22 (attention.py Attention.__init__)
    checkpoint_kv_dtype_modelopt: bool = False
    # deepseek_v2.py DeepseekV2MLAAttention (0.24+): layers IndexCache skips (index_topk_freq / pattern)
    # build no indexer, so only ModelSpec.indexer_layers carry its cache; 0.22.1 built one on every layer
    indexer_on_some_layers: bool = False
    # unify_kv_cache_spec_page_size pads a page that does not divide the largest (instead of refusing): 0.24.0
    # for backends that index KV by block stride, 0.29.0 for every non-MLA attention layer
    attention_page_padding: Literal["none", "block_stride", "non_mla"] = "none"
    # Image-prefix LMs (ModelConfig.is_mm_prefix_lm) skip backends without mm prefix (0.14.0); FLASH_ATTN takes
    # it with FA4 (0.24.0); text-only drops it (0.27.0); the Triton composites lead (0.30.0) - backends.py
    mm_prefix_attention: bool = False
    fa4_mm_prefix: bool = False
    mm_prefix_off_text_only: bool = False
    mm_prefix_composites: bool = False
    # models/config.py Gemma4Config (head 256 / 512): TRITON_ATTN forced (0.19.0), only without FA4 (0.24.0)
    gemma4_backend: Literal["none", "triton", "fa4_or_triton"] = "none"
    # v1/attention/backend.py validate_configuration "head_size not supported": each backend's head sizes
    # (backend_heads.py HEAD_SIZE_TABLE): checked from 0.19.0 (older releases not read: no check); FA up to 512 with
    # FA4 and FlashInfer's 512 from 0.24.0
    backend_head_sizes: bool = False
    large_attention_heads: bool = False
    config_mm_prefix: bool = False  # ModelSpec.mm_prefix_lm read (Gemma4ModelArchConfigConvertor, 0.20.0+)
    # models/config.py GlmMoeDsaForCausalLM.verify_and_update_config (0.32+): `auto` KV is fp8_e4m3 on SM10x
    glm_dsa_fp8_kv_on_sm100: bool = False
    checkpoint_kv_dtype_compressed_tensors: bool = False
    # compressed-tensors sparsity_config with targets (2:4) refused: _parse_sparsity_config raises (0.22.0+)
    ct_sparsity_removed: bool = False
    # GPTQ `sym: false` refused: auto_gptq.py AutoGPTQConfig TYPE_MAP is symmetric only (0.22.0+)
    gptq_symmetric_only: bool = False
    # group activation ordering refused (0.30.0+): GPTQ desc_act with groups (gptq_utils.py
    # normalize_and_validate_gptq_desc_act), compressed-tensors actorder group / dynamic
    act_order_groups_removed: bool = False
    # FP8 block quantization at a TP shard (quant_shards.check_fp8_block_shards): a merged column-parallel layer
    # (gate_up, QKV) of an Fp8Config checkpoint whose partitions are not whole blocks skips the check (0.14.0+,
    # linear.py _maybe_allow_fp8_block_shape_mismatch); Fp8MoEMethod refines the experts' scale blocks to
    # gcd(block_n, block_k, shard, hidden) >= 32 instead of refusing (0.30.0+, refine_fp8_moe_block_shape)
    fp8_merged_block_mismatch_allowed: bool = False
    fp8_moe_block_refine: bool = False
    # a GPTQ / W4A16 group split across ranks finds a kernel only with float16 activations or Machete on SM 9.0
    # (quant_shards.check_wna16_shards; 0.33.0 read, earlier releases not)
    wna16_split_group_needs_fp16: bool = False
    # Sparse MLA (DeepSeek-V3.2 / GLM-5 indexer) on SM90, platforms/cuda.py _get_backend_priorities: the sparse

    # tail of the MLA list (0.19.0: FLASHMLA_SPARSE; 0.26.0: FLASH_ATTN_MLA_SPARSE first; 0.30.0: then
    # FLASHINFER_MLA_SPARSE_SM90, the one that takes an fp8_e4m3 cache); on SM100 with a bf16 cache and
    # <= 16 heads, FLASH_ATTN_MLA_SPARSE_FA4 ahead of FlashInfer's sparse kernel (0.33.0)
    # model_executor/models/registry.py inspect_model_cls under --model-impl auto: an architecture outside vLLM's

    # registry falls back to the Transformers modeling backend when transformers has a compatible class
    # (_try_resolve_transformers); read for 0.30.0, 0.32.0 and 0.33.0 with their transformers (hf_config/transformers_fallback.json)

    transformers_fallback: bool = False
    # DeepSeek-V4's caches sized as 0.33.0 packs them (app/core/kv_dsv4.py); 0.20.2-0.32 were not read (warned)

    dsv4_cache: bool = False
    sparse_mla_sm90: tuple[str, ...] = ("FLASHMLA_SPARSE",)
    sparse_mla_fa4_small_heads: bool = False
    # 0.34.0's extensible KV cache (app/core/extensible_kv.py): on CUDA / ROCm without --kv-cache-memory-bytes the
    # pool is sized from the memory measured after warmup and capture, utilization 1.0 when not given
    extensible_kv_cache: bool = False
    # 0.34.0 config/vllm.py _split_cudagraph_capture_sizes on SM100: prefill and decode graphs from their own grids
    # (app/core/capture_split.py) unless a deprecated capture key is given
    capture_split_sm100: bool = False


# vLLM 0.6 (V0), the first release the planner models (reference §0: 0.6.6.post1): the defaults above.
BASE = VersionRules()


@dataclass(frozen=True)
class ResolvedVersion:
    """A version as the user gave it, and the release whose rules plan it."""

    requested: str  # normalized PEP 440 text, e.g. "0.19.2rc1.dev8+g4b7f5ea1a"
    release: Version  # its release numbers (pre/dev/post/local dropped; a 4th number dropped)
    rules: VersionRules
    newer_than_known: bool  # a newer minor series than NEWEST_KNOWN: planned with its rules

    @property
    def note(self) -> str:
        """A sentence for the page and the estimate's warnings, or "" when the version is a known one."""
        if self.newer_than_known:
            return Text(
                "vLLM {requested} is newer than {newest}, the newest release the planner knows; planned with {newest}'s rules, which may have changed since.",
                requested=self.requested,
                newest=self.rules.version,
            )
        return ""


def _parse(text: str) -> tuple[Pep440, Version]:
    return parse_pep440(text, example=DEFAULT_VERSION)


def parse_version(text: str) -> Version:
    """'0.19.0', 'v0.11.2', '0.14.0rc2+cu130', '0.10.1.1' -> (0, 19, 0) / (0, 11, 2) / (0, 14, 0) / (0, 10, 1).

    Raises PlannerError("vllm_version", …) for anything that is not a PEP 440 version of 0.6 or later;
    the length is checked first, so a string of any size costs the same.
    """
    return _parse(text or "")[1]


_KNOWN_PARSED: tuple[Version, ...] = tuple(parse_version(v) for v in KNOWN_VERSIONS)


def bracket_of(version: Version) -> str:
    """The newest known release in ``version``'s minor series or an older one (0.23.0 -> 0.21.0)."""
    series = [known[:2] for known in _KNOWN_PARSED]
    index = bisect.bisect_right(series, version[:2]) - 1
    return KNOWN_VERSIONS[max(index, 0)]


@cache  # keyed by a known release: at most len(KNOWN_VERSIONS) entries, whatever strings arrive
def _rules_of(release: str) -> VersionRules:
    version = parse_version(release)
    rules = BASE
    for change in CHANGELOG:
        if parse_version(change.since) <= version:
            rules = replace(rules, **change.fields)
    return replace(rules, version=release, version_tuple=version)


def resolve_version(text: str | None) -> ResolvedVersion:
    """The one entry point for a version from any surface (page, permalink, API, CLI, doctor)."""
    if text is None:
        text = DEFAULT_VERSION
    known = _KNOWN_RESOLVED.get(text)  # the releases the form offers: no parse on the hot path
    if known is not None:
        return known
    if not text.strip():
        return _KNOWN_RESOLVED[DEFAULT_VERSION]
    parsed, version = _parse(text)
    return ResolvedVersion(
        requested=str(parsed),
        release=version,
        rules=_patched(_rules_of(bracket_of(version)), version),
        newer_than_known=version[:2] > _KNOWN_PARSED[-1][:2],
    )


# Changes that landed in a release of a bracket's minor series after the bracket's own release, or in a minor
# series no known release stands for (0.12), and that the bracket's rules would get wrong: applied to the
# versions from ``since`` up to the next known release. Kept few: a release worth more is a known release.
PATCH_CHANGES: tuple[Change, ...] = (
    Change(
        "0.11.1",
        "0.11.1 and 0.12.0 config/vllm.py VllmConfig._set_cudagraph_sizes already step by 16 from 256 (51 sizes to "
        "512, both wheels), as 0.13.0 does; only 0.11.0 steps by 8 (67 sizes). And their platforms/cuda.py has no "
        "'(has_sink or use_fp8_kv_cache) and not 9.0' branch (0.11.0's only): an fp8 cache is not sent to the sinks' "
        "backends",
        {"capture_grid_16_from_256": True, "fp8_kv_as_sinks": False},
    ),
    Change(
        "0.12.0",
        "0.12.0 ships vllm/third_party/triton_kernels (the 0.11.1 wheel does not), so quantization/mxfp4.py "
        "get_mxfp4_backend takes Triton on (9, 0) <= capability < (11, 0) (SM90, and SM103, FlashInfer asking for "
        "exactly 10.0 there), Marlin on SM110 / SM12x (read from the 0.12.0 wheel)",
        {"mxfp4_backends": MXFP4_0_12},
    ),
)


def _patched(rules: VersionRules, version: Version) -> VersionRules:
    """``rules`` (a bracket's) with the PATCH_CHANGES at or before ``version`` in the bracket's range."""
    for change in PATCH_CHANGES:
        since = parse_version(change.since)
        if rules.version_tuple < since <= version:
            rules = replace(rules, **change.fields)
    return rules


_KNOWN_RESOLVED: dict[str, ResolvedVersion] = {}  # fixed: one entry per known release, filled below
_KNOWN_RESOLVED.update((v, resolve_version(v)) for v in KNOWN_VERSIONS)


# For logs that show the V0 engine: the newest known release whose default engine is V0 ("0.7.3").
LAST_V0_RELEASE = next(v for v in reversed(KNOWN_VERSIONS) if _rules_of(v).engine == "v0")


def rules_for(version: str | None) -> VersionRules:
    """The rules that plan ``version`` (its bracket's); None means DEFAULT_VERSION.

    E.g. ``rules_for("0.23.1").version`` is "0.22.1" (its bracket) and ``rules_for(None).version`` "0.33.0".
    """
    return resolve_version(version).rules


def graphs_budgeted(*, rules: VersionRules, platform: str) -> bool:
    """The CUDA-graph estimate comes out of the budget before KV sizing: CUDA from 0.20 (§2.6), ROCm's
    hipGraphs from 0.26.0; never on other platforms (vllm-ascend captures ACL graphs after sizing).

    E.g. CUDA: False on 0.19.0, True on 0.33.0; ROCm: False on 0.24.0, True on 0.33.0; "npu": False.
    """
    if platform == "cuda":
        return rules.cuda_graph_budgeted
    if platform == "rocm":
        return rules.cuda_graph_budgeted and rules.rocm_cuda_graph_budgeted
    return False


def default_chunked_prefill(rules: VersionRules, *, max_model_len: int) -> bool:
    """`--enable-chunked-prefill` when not given: always on in V1, above 32,768 tokens in V0 (§7).

    E.g. 0.6.6 (V0): off at max_model_len 8,192, on at 65,536; 0.33.0: on at 8,192.
    """
    above = rules.chunked_prefill_auto_above
    return True if above is None else max_model_len > above


def default_gpu_memory_utilization(version: str | None) -> float:
    return rules_for(version).default_gpu_memory_utilization


def format_gib(num_bytes: float, style: GibStyle) -> str:
    """How vLLM prints GiB: `%.2f` before 0.14, `str(round(x / 2**30, 2))` after (reference §0).

    E.g. 54 GiB prints "54.00" (fixed2) and "54.0" (round2); 54.7734 GiB "54.77" in both.
    """
    gib = num_bytes / 2**30
    if style == "fixed2":
        return f"{gib:.2f}"
    return str(round(gib, 2))
