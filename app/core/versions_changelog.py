"""The data of versions.py's changelog: one :class:`Change` row per release whose rules differ, oldest first.

Each row says "from release ``since`` on, these :class:`~app.core.versions.VersionRules` fields take these
values", with the vLLM source it was read from (reference vllm-accounting.md, or a wheel read with
`pip download --no-deps vllm==X`). app/core/versions.py applies the rows up to a release (``_rules_of``) and
checks nothing else; tests/unit/test_versions.py checks every row names real fields, sits at a known
release's minor series, and that the rows are in release order. Kept apart from versions.py so the resolver
and the rules' field list stay under the 800-line module cap.
"""

from __future__ import annotations

from dataclasses import replace

from app.core.backend_lists import (
    MLA_0_11_ROWS,
    MLA_SM12,
    MLA_SM90,
    MLA_SM100,
    V1_ATTENTION,
    V1_ATTENTION_0_11,
    V1_ATTENTION_SM12,
)
from app.core.graph_support import CG_ALWAYS as CG_ALWAYS
from app.core.graph_support import CG_NEVER as CG_NEVER
from app.core.graph_support import CG_UNIFORM as CG_UNIFORM
from app.core.graph_support import (
    GRAPHS_0_10,
    GRAPHS_0_11,
    GRAPHS_0_14,
    GRAPHS_0_17,
    GRAPHS_0_20,
    GRAPHS_0_22,
    GRAPHS_0_26,
    GRAPHS_0_30,
    GRAPHS_0_32,
    GRAPHS_0_33,
    graph_support,
)
from app.core.version_types import BackendPriority, BatchTier, Change, ForcedBlock

# Sampler peak in fp32-logit copies, fitted by bench/calibrate.py (docs/model.md): 3.75 on 39 real
# 0.19.0 H100 logs; 9.6 = (5.64 GiB - 0.05 GiB base) / 0.58 GiB of logits for Qwen3-14B on 0.15/0.16,
# the only older-era evidence (so the forward-pass constants are shared, not refitted).
SAMPLER_COPIES = 3.75
SAMPLER_COPIES_OLD = 9.6

# platforms/cuda.py check_and_update_config's forced MLA blocks, as each release prints them (rows below)
FORCED_FLASHMLA = ForcedBlock("FLASHMLA", "FlashMLA", 64, exact=True)
FORCED_0_10 = (
    FORCED_FLASHMLA,
    ForcedBlock("CUTLASS_MLA", "CUTLASS_MLA", 128, exact=True),
    ForcedBlock("FLASHINFER_MLA", "FlashInferMLA", 64, exact=True),
)
FORCED_SPARSE = ForcedBlock("FLASHMLA_SPARSE", "FlashMLASparse", 64, exact=True)
# 0.14.0: the same three backends and blocks, now kept when the block is a multiple (exact=False), then the sparse one
FORCED_0_14 = (*(replace(row, exact=False) for row in FORCED_0_10), FORCED_SPARSE)


CHANGELOG: tuple[Change, ...] = (
    Change(
        "0.7.0",
        "0.7.3 V0 executor: '# cuda blocks: %d' (device type name) instead of '# GPU blocks'",
        {"v0_blocks_word": "platform"},
    ),
    Change(
        "0.8.0",
        "V1 default engine from 0.8.0 (reference §1, §2.4); 0.8.5 arg_utils.py: >= 70 GiB -> 1024 seqs / "
        "8192 API-server tokens, no A100 exclusion yet; 0.8.5 --block-size Literal[1, 8, ..., 128] (§5.1); 0.10.1.1 "
        "get_attn_backend_cls: FlashInfer / CUTLASS_MLA 'if cls.is_device_capability(100)' (0.8.5 / 0.9.2 not read)",
        {
            "engine": "v1",
            "budget_style": "v1_peak",  # 0.7.3/0.8.5: T*u - (torch peak + non-torch)
            "tokens_formula": "blocks_x_block_size",
            "needed_formula": "sum_layers",
            "error_style": "v1_085",
            "weights_log": "took_gib",
            "swap_space_used": False,  # V1 preemption recomputes (§7)
            "prefix_caching_default": True,  # 0.8.5 V1: None -> True (§6)
            "chunked_prefill_auto_above": None,  # V1 always chunks prefill (§7)
            "batch_tiers": (BatchTier(min_device_gib=70, max_num_seqs=1024, max_num_batched_tokens=8192),),
            "block_size_choices": (1, 8, 16, 32, 64, 128),
            "backend_priorities": (*MLA_0_11_ROWS, *V1_ATTENTION_0_11),  # 10.0 exactly: backend_lists.py
        },
    ),
    Change(
        "0.8.0",
        "0.8.5 platforms/cuda.py CudaPlatform.check_and_update_config: an MLA model on FlashMLA (no "
        "VLLM_ATTENTION_BACKEND, is_flashmla_supported) gets block_size 64 whenever it is not 64, a --block-size "
        "included: 'Forcing kv cache block size to 64 for FlashMLA backend.' (absent in 0.7.3)",
        {"forced_blocks": (FORCED_FLASHMLA,)},
    ),
    Change(
        "0.10.0",
        "0.10.1.1 platforms/cuda.py get_attn_backend_cls 'if has_sink and not cls.is_device_capability(90)', 0.11.0 "
        "'if (has_sink or use_fp8_kv_cache) and not ...(90)': TRITON_ATTN, FlashInfer on 10.0 before it; 0.14.0-0.19.0 flash_attn.py "
        "supports_sink = flash_attn_supports_sinks() (get_flash_attn_version() == 3: 9.x), flashinfer.py "
        "supports_sink with TRTLLM attention (10.x); triton_attn.py True",
        {"sink_backends": (("FLASH_ATTN", (9,)), ("FLASHINFER", (10,)))},
    ),
    Change(
        "0.10.0",
        "0.10.2 gpu_worker determine_available_memory profile (§2.4), hybrid allocator and per-group "
        "tokens (§3.4, §3.7), free-memory start-up check (§2.2), --kv-cache-memory-bytes (§7); "
        "arg_utils.py excludes 'a100' from the large tier (PR #17885; absent in 0.8.5, present in 0.10.2)",
        {
            "budget_style": "v1_profile",
            "hybrid_allocator": True,
            "tokens_formula": "blocks_div_groups",  # 0.10.2-0.19.0 (0.19.0: real gemma-2/3, gpt-oss, Llama-4 logs)
            "concurrency_formula": "one_cdiv_over_sum",
            "error_style": "v1_010",
            "sampler_logit_copies": SAMPLER_COPIES_OLD,
            "has_kv_cache_memory_bytes_flag": True,
            "free_memory_check": True,
            "max_len_error_wording": "caution",  # 0.10.2 config _get_and_verify_max_len (0.9.2 unchecked)
            "batch_tiers": (
                BatchTier(
                    min_device_gib=70,
                    max_num_seqs=1024,
                    max_num_batched_tokens=8192,
                    excluded_names=("a100",),
                ),
            ),
        },
    ),
    Change(
        "0.10.0",
        "0.10.2 platforms/cuda.py check_and_update_config: also CUTLASS_MLA (Blackwell's default) 'Forcing kv cache "
        "block size to 128 for CUTLASS_MLA backend.' when not 128 and FlashInferMLA to 64 when not in [32, 64] "
        "(0.9.2: FlashMLA only)",
        {"forced_blocks": FORCED_0_10},
    ),
    Change(
        "0.10.0",
        "0.10.2 v1/worker/gpu_model_runner.py GPUModelRunner._check_and_update_cudagraph_mode takes the lowest "
        "AttentionCGSupport of the model's backends and lowers the mode (a decode FULL graph with NEVER -> PIECEWISE "
        "when attention is split, else NONE; spec decode below UNIFORM_BATCH -> PIECEWISE; FULL below ALWAYS -> "
        "FULL_AND_PIECEWISE); the levels: mla/common.py (TritonMLA: none, NEVER), flex_attention.py (none, NEVER), "
        "cutlass_mla.py and mamba_attn.py UNIFORM_SINGLE_TOKEN_DECODE, gdn_attn.py UNIFORM_BATCH, short_conv_attn.py "
        "and linear_attn.py (none, NEVER)",
        {"cudagraph_support": graph_support(GRAPHS_0_10)},
    ),
    Change(
        "0.11.0",
        "0.11.0 config/__init__.py VllmConfig.__post_init__: with no cudagraph_mode given, V1 at compilation level "
        "PIECEWISE defaults to FULL_AND_PIECEWISE (PIECEWISE for pooling and encoder-decoder models); 0.10.2's "
        "same branch set PIECEWISE",
        {"default_cudagraph_mode": "FULL_AND_PIECEWISE"},
    ),
    Change(
        "0.11.0",
        "0.11.0 v1/attention/backends: the default backends' cudagraph_support (graph_support.GRAPHS_0_11): "
        "flash_attn.py ALWAYS with FA3 (capability 9.x) else UNIFORM_BATCH, flashinfer.py UNIFORM_SINGLE_TOKEN_DECODE, "
        "mla/flashmla.py, flashattn_mla.py, flashmla_sparse.py UNIFORM_BATCH, mla/flashinfer_mla.py NEVER, "
        "mla/indexer.py UNIFORM_SINGLE_TOKEN_DECODE, triton_attn.py ALWAYS (0.10.2 not read)",
        {"cudagraph_support": graph_support(GRAPHS_0_11)},
    ),
    Change(
        "0.11.0",
        "0.11.0 platforms/cuda.py check_and_update_config: 'if use_sparse and cache_config.block_size != 64' "
        "(model_config.hf_config has index_topk: DeepSeek-V3.2): 'Forcing kv cache block size to 64 for "
        "FlashMLASparse backend.' (absent in 0.10.2)",
        {"forced_blocks": (*FORCED_0_10, FORCED_SPARSE)},
    ),
    Change(
        "0.11.0",
        "0.11.0 platforms/cuda.py get_attn_backend_cls: FlashInfer first only 'if cls.is_device_capability(100)' (10.0 "
        "exactly: 10.3 takes FlashAttention, MLA TRITON_MLA; backend_lists.py), FlashAttention otherwise, 12.x included",
        {"backend_priorities": (*MLA_0_11_ROWS, V1_ATTENTION_SM12, *V1_ATTENTION_0_11)},
    ),
    Change(
        "0.11.0",
        "0.11.0 platforms/cuda.py get_attn_backend_cls (V1, no VLLM_ATTENTION_BACKEND): 'if (has_sink or "
        "use_fp8_kv_cache) and not cls.is_device_capability(90)' returns TRITON_ATTN on any 8.0+ device but 9.0 once "
        "10.0's FlashInfer is passed (0.10.1.1: has_sink only); 0.13.0 _get_backend_priorities has no such branch",
        {"fp8_kv_as_sinks": True},
    ),
    Change(
        "0.11.0",
        "0.11.0 platforms/cuda.py check_and_update_config (no VLLM_ATTENTION_BACKEND): is_device_capability(100) -> "
        "use_cutlass_mla, else use_flashmla (forced when is_flashmla_supported): the device decides the forcing, "
        "not the backend later selected (forced_blocks.py; 0.10.2 not read)",
        {"mla_forcing": "device_0_11"},
    ),
    Change(
        "0.13.0",
        "0.13.0: 'Model loading took %.4f GiB memory' (gpu_model_runner.load_model), --kv-offloading-size "
        "(arg_utils.py), --block-size adds 256 and fp8_ds_mla (config/cache.py BlockSize / CacheDType), the 'See "
        "…conserving_memory/ for more details.' tail on both KV errors (kv_cache_utils.py), config/vllm.py "
        "OptimizationLevel -O0 NONE / -O1 PIECEWISE / -O2 (default) / -O3, models/config.py "
        "NemotronHForCausalLMConfig; still 0.11.0's float T*u, %.2f GiB, the summed per-layer need and 'Free memory "
        "on device (' (gpu_worker.py, kv_cache_utils.py check_enough_kv_cache_memory)",
        {
            "optimization_levels": True,
            "fp8_kv_as_sinks": False,  # platforms/cuda.py: the priority walk (the 0.11.0 row above)
            "error_style": "v1_014",
            "weights_log": "took_gib_memory",
            "has_kv_offloading_flags": True,
            "block_size_choices": (1, 8, 16, 32, 64, 128, 256),
            "has_fp8_ds_mla": True,
            "nemotron_h_ssm_dtype_default": "float16",  # NemotronHForCausalLMConfig (absent in 0.11.0)
        },
    ),
    Change(
        "0.13.0",
        "0.13.0 and 0.14.0 platforms/cuda.py check_and_update_config: FlashMLA keeps a block with 'block_size % 64 == 0', "
        "CUTLASS_MLA '% 128', FlashInferMLA 32 or '% 64' (0.11.0: != 64, != 128, not in [32, 64]); FlashMLASparse "
        "still != 64. v1/attention/backends/mla/indexer.py DeepseekV32IndexerBackend.get_supported_kernel_block_sizes "
        "[64] on CUDA and v1/worker/gpu_model_runner.py _select_common_block_size 'No common block size for %d' "
        "(neither in 0.11.0)",
        {"forced_blocks": FORCED_0_14, "indexer_kernel_block": True},
    ),
    Change(
        "0.13.0",
        "0.13.0 and 0.14.0 platforms/cuda.py _get_backend_priorities: MLA on 10.x CUTLASS_MLA, FLASHINFER_MLA, "
        "FLASH_ATTN_MLA, FLASHMLA, TRITON_MLA; elsewhere FLASH_ATTN_MLA, FLASHMLA, FLASHINFER_MLA, TRITON_MLA "
        "(mla/flashinfer_mla.py: no qk_nope_head_dim check yet)",
        {
            "backend_priorities": (
                MLA_SM12,
                BackendPriority(
                    mla=True,
                    min_sm=100,
                    backends=("CUTLASS_MLA", "FLASHINFER_MLA", "FLASH_ATTN_MLA", "FLASHMLA", "TRITON_MLA"),
                ),
                MLA_SM90,
                V1_ATTENTION_SM12,
                *V1_ATTENTION,
            )
        },
    ),
    Change(
        "0.13.0",
        "0.13.0 and 0.14.0 platforms/cuda.py check_and_update_config: is_device_capability_family(100) and not use_sparse -> "
        "CUTLASS_MLA, set as attention_config.backend; else use_flashmla, forced when is_flashmla_dense_supported "
        "(9.x), whichever MLA backend _get_backend_priorities then picks",
        {"mla_forcing": "device_0_14"},
    ),
    Change(
        "0.13.0",
        "0.13.0 and 0.14.0 config/vllm.py VllmConfig.__post_init__: 'Cudagraph mode %s is not compatible with compilation mode "
        "%s.Overriding to NONE.' when cudagraph_mode.requires_piecewise_compilation() and compilation_config.mode != "
        "VLLM_COMPILE (0.11.0: with no cudagraph_mode a level other than PIECEWISE set NONE, and a piecewise mode "
        "with such a level failed the 'Compilation level should be CompilationLevel.PIECEWISE' assert)",
        {"compile_mode_rule": "to_none"},
    ),
    Change(
        "0.13.0",
        "0.13.0 and 0.14.0 v1/attention/backends/short_conv_attn.py builds on BaseMambaAttentionMetadataBuilder and "
        "linear_attn.py sets UNIFORM_SINGLE_TOKEN_DECODE (0.11.0: both AttentionMetadataBuilder's NEVER); flashinfer.py "
        "get_cudagraph_support UNIFORM_BATCH with TRTLLM decode (capability 10.x), mla/flashinfer_mla.py UNIFORM_BATCH "
        "(0.13.0 read too)",
        {"cudagraph_support": graph_support(GRAPHS_0_14)},
    ),
    Change(
        "0.13.0",
        "0.13.0 and 0.14.0 config/vllm.py VllmConfig.__post_init__: cudagraph_mode.has_full_cudagraphs() and "
        "model_config.pooler_config is not None -> 'Pooling models do not support full cudagraphs. Overriding "
        "cudagraph_mode to PIECEWISE.' (0.11.0 config/__init__.py: only the default became PIECEWISE)",
        {"pooling_overrides_full": True},
    ),
    Change(
        "0.13.0",
        "0.13.0 and 0.14.0 v1/core/kv_cache_utils.py _get_kv_cache_groups_uniform_page_size: buckets within 1.25 x the "
        "smallest take the largest as the group size ('12 sw + 13 full' -> groups of 13; 0.11.0: the smallest)",
        {"group_size_max_ratio": 1.25},
    ),
    Change(
        "0.13.0",
        "0.13.0 and 0.14.0 config/model.py _get_and_verify_max_len: with no --max-model-len (or -1) a LongRoPE model "
        "(Phi-3/Phi-4) serves original_max_position_embeddings, not the derived maximum (absent in 0.11.0)",
        {"longrope_default_original": True},
    ),
    Change(
        "0.13.0",
        "0.13.0 attention/backends/abstract.py and 0.14.0 v1/attention/backend.py AttentionBackend.validate_configuration: 'partial multimodal token full "
        "attention not supported' for a backend without supports_mm_prefix when ModelConfig.is_mm_prefix_lm "
        "(model_type gemma3 / paligemma): on CUDA only triton_attn.py and flex_attention.py declare it (0.11.0: "
        "no such check)",
        {"mm_prefix_attention": True},
    ),
    Change(
        "0.14.0",
        "0.14.0: requested = ceil(T*u) (§2.1, gpu_worker.py request_memory), format_gib (§0), first-group capacity "
        "(§3.6, _max_memory_usage_bytes_from_groups), --max-model-len auto (human_readable_int_or_auto), 'Free "
        "memory on device cuda:0' (§4.2); none of these in 0.13.0",
        {
            "requested_uses_ceil": True,
            "needed_formula": "first_group",
            "format_gib_style": "round2",
            "has_auto_fit": True,
            "free_memory_device": "device cuda:0 ",
            # engine/arg_utils.py create_engine_config: resolve_kv_cache_dtype_string (absent in 0.11.0 and 0.13.0)
            "checkpoint_kv_dtype_modelopt": True,
        },
    ),
    Change(
        "0.14.0",
        "0.14.0 config/scheduler.py SchedulerConfig.async_scheduling default None, resolved in config/vllm.py "
        "VllmConfig.__post_init__ to on unless pipeline_parallel_size > 1 or a non-EAGLE/MTP draft (0.11.0: "
        "async_scheduling: bool = False, 'EXPERIMENTAL')",
        {"async_scheduling_default": True},
    ),
    Change(
        "0.15.0",
        "MLA priorities of the V1 selector after 0.14 (§5.2, confirmed on 0.19.0 DeepSeek logs: FLASH_ATTN_MLA "
        "on SM90; 0.15.0-0.32.0 platforms/cuda.py _get_backend_priorities read: FLASHINFER_MLA leads on 10.x, as in "
        "0.33.0); the planner's activation and graph models are calibrated on 0.15+ logs (docs/model.md)",
        {
            "backend_priorities": (MLA_SM12, MLA_SM100, MLA_SM90, V1_ATTENTION_SM12, *V1_ATTENTION),
            "measured_parts_calibrated": True,
        },
    ),
    Change(
        "0.15.0",
        "0.15.0 and 0.17.0 v1/attention/backends/mla/flashinfer_mla.py supports_combination: 'FlashInfer MLA kernel "
        "requires qk_nope_head_dim == 128'; 0.18.0 in [64, 128]; 0.19.0-0.33.0 in [64, 128, 192]",
        {"flashinfer_mla_nope_dims": (128,)},
    ),
    Change(
        "0.15.0",
        "0.15.0 and 0.17.0 platforms/cuda.py check_and_update_config: 10.x, not sparse and qk_nope_head_dim == 128 -> "
        "FLASHINFER_MLA set as attention_config.backend ('Blackwell => Force FlashInfer MLA'); other 10.x -> "
        "CUTLASS_MLA; 'Non-Blackwell with FlashMLA support' (is_flashmla_dense_supported: 9.x) -> FlashMLA's 64 "
        "whichever backend runs (FLASH_ATTN_MLA leads 0.15's SM90 list)",
        {"mla_forcing": "device_0_15"},
    ),
    Change(
        "0.15.0",
        "vllm-ascend v0.15.0rc1 vllm_ascend/worker/worker.py NPUWorker._init_device: MemorySnapshot, "
        "requested_memory = total x utilization and the 'Free memory on device (…) is less than desired GPU "
        "memory utilization' check; NPUWorker.determine_available_memory prints 'Available KV cache memory: "
        "%.2f GiB' (v0.14.0rc1 printed 'Available memory: …, total memory: …' and subtracted other processes)",
        {"ascend_budget": "profile"},
    ),
    Change(
        "0.17.0",
        "calibration llmd-versionsweep-*: Qwen3-14B activation 5.64 GiB on 0.15/0.16, 2.23 GiB on 0.17/0.18",
        {
            "sampler_logit_copies": SAMPLER_COPIES,
            "qwen3_5_reads_ssm_dtype": True,  # Qwen3_5ForConditionalGenerationConfig reads mamba_ssm_dtype
        },
    ),
    Change(
        "0.17.0",
        "0.17.0 platforms/cuda.py check_and_update_config: use_flashinfer_mla_sparse (--attention-backend "
        "FLASHINFER_MLA_SPARSE) keeps 32 or 64, else 'Forcing kv cache block size to 64 for FlashInferMLASparse "
        "backend.' (absent in 0.15.0)",
        {
            "forced_blocks": (
                *FORCED_0_14,
                ForcedBlock("FLASHINFER_MLA_SPARSE", "FlashInferMLASparse", 64, exact=True),
            )
        },
    ),
    Change(
        "0.17.0",
        "0.17.0 v1/attention/backends/mamba_attn.py BaseMambaAttentionMetadataBuilder._cudagraph_support "
        "UNIFORM_BATCH (0.15.0: UNIFORM_SINGLE_TOKEN_DECODE): Mamba-1/2 and short-conv layers take spec-decode "
        "full graphs; mla/indexer.py UNIFORM_BATCH (0.15.0: UNIFORM_SINGLE_TOKEN_DECODE), flashinfer_mla_sparse.py "
        "(new) UNIFORM_BATCH",
        {"cudagraph_support": graph_support(GRAPHS_0_17)},
    ),
    Change(
        "0.18.0",
        "0.18.0 mla/flashinfer_mla.py supports_combination: qk_nope_head_dim in [64, 128] (0.17.0: == 128)",
        {"flashinfer_mla_nope_dims": (64, 128)},
    ),
    Change(
        "0.18.0",
        "0.18.0 v1/core/kv_cache_utils.py _get_kv_cache_groups_uniform_page_size: the ratio becomes 1.5 (0.17.0: "
        "1.25); 0.33.0 v1/core/kv_cache_planning.py keeps it",
        {"group_size_max_ratio": 1.5},
    ),
    Change(
        "0.18.0",
        "vllm-ascend v0.18.0 vllm_ascend/_310p/worker_310p.py NPUWorker310.determine_available_memory: the KV pool "
        "is (requested - non-KV memory - non-torch memory cleared by empty_cache) // 2 (absent in v0.17.0rc1)",
        {"ascend_310p_halves_pool": True},
    ),
    Change(
        "0.18.0",
        "0.18.0 platforms/interface.py Platform.update_block_size_for_backend (new): with no --block-size, the first "
        "attention layer's backend's get_preferred_block_size, logged 'Setting kv cache block size to %d for %s "
        "backend.' (0.17.0 platforms/cuda.py forced it per backend: 'Forcing kv cache block size to 64 for ...')",
        {"block_size_log": "setting_for_backend"},
    ),
    Change(
        "0.18.0",
        "0.18.0 platforms/cuda.py check_and_update_config forces no MLA block any more: "
        "Platform.update_block_size_for_backend sets it only when no --block-size was given",
        {"forced_blocks": (), "mla_forcing": "backend"},
    ),
    Change(
        "0.19.0",
        "vllm-ascend v0.19.1rc1 vllm_ascend/worker/worker.py NPUWorker.determine_available_memory: with "
        "--kv-cache-memory-bytes it runs profile_run and returns that size ('reserved %.2f GiB for KV Cache as "
        "specified by kv_cache_memory_bytes'; #8289, commit 65289ca80d; v0.18.0 never reads the flag)",
        {"ascend_kv_memory_bytes": True},
    ),
    Change(
        "0.10.0",
        "0.10.2 vllm/entrypoints/openai/serving_engine.py OpenAIServing._get_async_tokenizer: prompts are tokenized "
        "by AsyncMicrobatchTokenizer (vllm/utils/__init__.py; 0.19.0-0.23.0 vllm/utils/async_utils.py, used by "
        "renderers/base.py), which gathers up to 32 encode calls within 2 ms into one batched tokenizer call on its "
        "one-thread executor; 0.7.3 calls the tokenizer once a prompt on that executor (vllm-project/vllm PR 19334 "
        "added the microbatcher in 2025)",
        {"tokenizer_microbatch": True},
    ),
    Change(
        "0.24.0",
        "0.24.0 vllm/renderers/base.py BaseRenderer: _tokenize_prompt_async is the one-prompt tokenizer call on the "
        "renderer_num_workers thread pool (default 1); AsyncMicrobatchTokenizer is gone (present in 0.23.0; "
        "vllm-project/vllm PR 45759 removed it: batching gained only from the tokenizer's own threads)",
        {"tokenizer_microbatch": False},
    ),
    Change(
        "0.19.0",
        "0.19.0 config/scheduler.py SchedulerConfig.scheduler_reserve_full_isl = True ('checks whether the full "
        "input sequence length fits in the KV cache before admitting a new request, rather than only checking "
        "the first chunk'); v1/core/sched/scheduler.py's waiting loop calls kv_cache_manager."
        "can_fit_full_sequence before allocate_slots (0.33.0: allocate_slots(full_sequence_must_fit=...)); "
        "absent in 0.18.0",
        {"scheduler_reserve_full_isl": True},
    ),
    Change(
        "0.19.0",
        "0.19.0 mla/flashinfer_mla.py supports_combination: qk_nope_head_dim in [64, 128, 192] (0.33.0 the same)",
        {"flashinfer_mla_nope_dims": (64, 128, 192)},
    ),
    Change(
        "0.19.0",
        "0.19.0 models/config.py Gemma4Config: heterogeneous head dims above 256 force TRITON_ATTN for every layer",
        {"gemma4_backend": "triton"},
    ),
    Change(
        "0.19.0",
        "0.19.0 platforms/cuda.py: sparse MLA (DeepSeek-V3.2, GLM-5) takes FLASHINFER_MLA_SPARSE first on SM100 "
        "for an fp8 KV cache or <= 16 heads",
        {"sparse_mla_flashinfer_on_sm100": True},
    ),
    Change(
        "0.20.0",
        "0.20.0 model_arch_config_convertor.py Gemma4ModelArchConfigConvertor.is_mm_prefix_lm: "
        "use_bidirectional_attention == 'vision' (absent in 0.19.0)",
        {"config_mm_prefix": True},
    ),
    Change(
        "0.20.0",
        "0.20.0 v1/attention/backends/flex_attention.py FlexAttentionMetadataBuilder._cudagraph_support ALWAYS "
        "(0.19.0: none, NEVER)",
        {"cudagraph_support": graph_support(GRAPHS_0_20)},
    ),
    Change(
        "0.20.0",
        "0.20.2: default utilization 0.92 (§2.1; 0.19.0 logs ran an explicit 0.95), CUDA graphs budgeted by "
        "default (§2.6; off by default in 0.19.0 logs), tokens = concurrency x L and all-groups capacity "
        "(§3.6, §3.7), any positive --block-size (§5.1), --swap-space removed (§7)",
        {
            "default_gpu_memory_utilization": 0.92,
            "cuda_graph_budgeted": True,
            "tokens_formula": "concurrency_x_len",
            "needed_formula": "all_groups",
            "block_size_choices": None,
            "has_swap_space_flag": False,
            "nemotron_h_ssm_dtype_default": "float32",  # DEFAULT_MAMBA_SSM_CACHE_DTYPE (0.20.2 read)
        },
    ),
    Change(
        "0.20.0",
        "0.20.2 platforms/interface.py Platform._align_hybrid_block_size (new; runs from "
        "update_block_size_for_backend after the model is built): a hybrid's attention block is raised in steps "
        "of max(the first backend's smallest kernel block, block_size), not 0.19.0's fixed 16 "
        "(models/config.py HybridAttentionMambaModelConfig); config/compilation.py "
        "CompilationConfig.resolve_cudagraph_mode_and_sizes: 'max_num_seqs (%d) exceeds available Mamba cache "
        "blocks (%d)' with full CUDA graphs (absent in 0.19.0)",
        {"hybrid_align": "platform", "mamba_block_check": True},
    ),
    Change(
        "0.21.0",
        "vllm-ascend v0.21.0rc1 vllm_ascend/_310p/worker_310p.py: 'Available KV cache memory: %.2f GiB (halved for "
        "workspace)' (v0.20.2rc1 printed it without the note)",
        {"ascend_310p_halved_log": True},
    ),
    Change(
        "0.22.0",
        "0.22.0 v1/attention/backends/fa_utils.py flash_attn_supports_sinks: get_flash_attn_version() in (3, 4), so "
        "FA4 on 10.x takes sinks too (0.19.0: == 3; 0.20.x / 0.21.x not read)",
        {"sink_backends": (("FLASH_ATTN", (9, 10)), ("FLASHINFER", (10,)))},
    ),
    Change(
        "0.22.0",
        "0.22.0 v1/attention/backends/mla/triton_mla.py TritonMLAMetadataBuilder._cudagraph_support UNIFORM_BATCH "
        "(0.21.0: MLACommonMetadataBuilder's NEVER, so FULL_AND_PIECEWISE ran PIECEWISE)",
        {"cudagraph_support": graph_support(GRAPHS_0_22)},
    ),
    Change(
        "0.24.0",
        "0.24.0 model_executor/models/deepseek_v2.py DeepseekV2MLAAttention: 'if self.is_v32 and (not _skip_topk "
        "or is_mtp_layer)' builds the indexer (and its cache) only on the layers index_topk_freq / "
        "index_topk_pattern keep, index_skip_topk_offset default 2 (0.23.0: an indexer on every layer)",
        {"indexer_on_some_layers": True},
    ),
    Change(
        "0.24.0",
        "0.24.0 v1/core/kv_cache_utils.py unify_kv_cache_spec_page_size: a smaller attention page that does not "
        "divide the largest is padded to it when AttentionSpec.indexes_kv_by_block_stride (v1/attention/backend.py "
        "AttentionBackend.indexes_kv_by_block_stride: FLASH_ATTN, FLASHINFER, TRITON_ATTN, FLEX_ATTENTION lay "
        "num_blocks first; ROCM_ATTN has no stride order); 0.23.0 raised 'not divisible by the maximum page size'",
        {"attention_page_padding": "block_stride"},
    ),
    Change(
        "0.24.0",
        "0.24.0 v1/attention/backends/flash_attn.py FlashAttentionBackend.supports_mm_prefix: "
        "is_fa_version_supported(4) (vllm_flash_attn/flash_attn_interface.py _is_fa4_supported: the wheel's cute/ "
        "FA4, SM 9.x / 10.x / 11.x); 0.23.0 FLASH_ATTN has no supports_mm_prefix. models/config.py Gemma4Config: "
        "FA4 for all layers where available, TRITON_ATTN forced only elsewhere (0.23.0: forced everywhere)",
        {"fa4_mm_prefix": True, "gemma4_backend": "fa4_or_triton"},
    ),
    Change(
        "0.26.0",
        "0.26.0 config/model.py ModelConfig.is_prefix_caching_supported: 'Generative hybrid models support prefix "
        "caching.' (0.25.1: 'Hybrid models do not support prefix caching'), so hybrids default to Mamba 'align' "
        "mode (models/config.py MambaModelConfig). "
        "0.26.0 v1/worker/gpu_worker.py Worker.determine_available_memory: profile_cudagraph_memory() runs when "
        "current_platform.is_cuda_alike() (CUDA and ROCm); 0.21.0-0.25.1 required is_cuda(), 0.19.0-0.20.2 "
        "skipped ROCm ('graph pool handles and mem_get_info behave differently'). Read from the wheels.",
        {"hybrid_prefix_caching_default": True, "rocm_cuda_graph_budgeted": True},
    ),
    Change(
        "0.26.0",
        "0.26.0 platforms/cuda.py _get_backend_priorities: on SM90 the sparse-MLA tail is FLASH_ATTN_MLA_SPARSE, "
        "FLASHMLA_SPARSE (0.24.0: FLASHMLA_SPARSE alone); v1/attention/backends/mla/flashattn_mla_sparse.py "
        "FlashAttnMLASparseBackend: auto / float16 / bfloat16 caches only, kernel block 64",
        {"sparse_mla_sm90": ("FLASH_ATTN_MLA_SPARSE", "FLASHMLA_SPARSE")},
    ),
    Change(
        "0.26.0",
        "0.26.0 v1/attention/backends/mla/triton_mla.py: _cudagraph_support UNIFORM_SINGLE_TOKEN_DECODE "
        "(0.25.0: UNIFORM_BATCH), so spec decode on TRITON_MLA runs PIECEWISE",
        {"cudagraph_support": graph_support(GRAPHS_0_26)},
    ),
    Change(
        "0.27.0",
        "0.27.1 transformers_utils/model_arch_config_convertor.py is_mm_prefix_lm(supports_multimodal): False when "
        "multimodal inputs are configuration-disabled (every --limit-mm-per-prompt modality 0), so backends "
        "without mm_prefix support may be selected (absent in 0.26.0)",
        {"mm_prefix_off_text_only": True},
    ),
    Change(
        "0.27.0",
        "0.27.1 platforms/interface.py Platform._align_hybrid_block_size: MLA hybrids align to at least 128 "
        "('TRTLLM/FlashInfer MLA decode kernels require ... 128'); absent in 0.26.0",
        {"hybrid_mla_min_block": 128},
    ),
    Change(
        "0.27.0",
        "0.27.1: max_concurrent_batches x MNBT in-flight tokens (§3.3), sum-of-cdivs concurrency (§3.7), "
        "error text 'model's' and the CPU-backend note (§4.4); absent in 0.24.0",
        {
            "concurrency_formula": "sum_of_cdivs",
            "inflight_uses_batches": True,
            "error_style": "v1_027",
        },
    ),
    Change(
        "0.30.0",
        "0.30.0 model_executor/models/granite.py granite_layer_attn_params: has_sink = getattr(config, "
        "'attention_sinks', layer_types is not None) for every layer of GraniteForCausalLM / GraniteSWAForCausalLM and "
        "(granitemoe.py, granitemoeshared.py) the MoE Granites; 0.22.0 granite.py has no sinks (0.24.0-0.27.1 not "
        "read); 0.31.0-0.33.0 the same",
        {"config_sinks": True},
    ),
    Change(
        "0.30.0",
        "0.30.0 model_executor/models/mimo_v2.py MiMoV2Attention.__init__: v_head_dim != head_dim -> FLASH_ATTN_DIFFKV "
        "when FlashAttentionDiffKVBackend.is_supported_on_current_device (FA3 / FA4: capability 9.x / 10.x, "
        "fa_utils.get_flash_attn_version), else TRITON_ATTN_DIFFKV (backends_diffkv.py); 0.22.0's mimo_v2.py has no "
        "such branch (0.24.0-0.27.1 not read); 0.31.0-0.33.0 the same",
        {"diffkv_backends": True},
    ),
    Change(
        "0.30.0",
        "0.29.0 v1/core/kv_cache_utils.py unify_kv_cache_spec_page_size: any non-MLA attention layer is padded "
        "('Padding is only supported for non-MLA attention layers'; 0.28.0 asked indexes_kv_by_block_stride). "
        "Put at 0.30.0, the first known release with it: 0.29.x is planned with 0.27.1's rules",
        {"attention_page_padding": "non_mla"},
    ),
    Change(
        "0.30.0",
        "0.30.0 platforms/cuda.py _get_backend_priorities: with use_mm_prefix TRITON_FLASH_ATTN leads on SM 9.x and "
        "TRITON_FLASHINFER on SM 10.x (v1/attention/backends/triton_flash_attn.py / triton_flashinfer.py composites: "
        "head sizes 256 / 512; TRITON_FLASHINFER kernel block 64); absent in 0.27.1",
        {"mm_prefix_composites": True},
    ),
    Change(
        "0.30.0",
        "0.30.0 v1/attention/backends/flashinfer.py FlashInferBackend.supports_sink: on 9.0 and 12.x with XQA decode "
        "(supports_trtllm_attention(is_prefill=False)) as on 10.x (0.27.1: 10.x only)",
        {"sink_backends": (("FLASH_ATTN", (9, 10)), ("FLASHINFER", (9, 10, 12)))},
    ),
    Change(
        "0.30.0",
        "0.30.0: null block left out of the capacity check (§3.6), merged capacity line (§4.3)",
        {"null_block_in_check": True, "merged_capacity_line": True},
    ),
    Change(
        "0.30.0",
        "0.30.0 v1/attention/backends (graph_support.GRAPHS_0_30; 0.27.1 as 0.26.0): mla/indexer.py ALWAYS, "
        "FlashInferMLASparseTRTLLMMetadataBuilder ALWAYS, flashinfer.py get_cudagraph_support UNIFORM_BATCH on the "
        "XQA decode devices (capability 9.0 and 12.x) as on 10.x",
        {"cudagraph_support": graph_support(GRAPHS_0_30)},
    ),
    Change(
        "0.30.0",
        "0.30.0 config/vllm.py VllmConfig._normalize_piecewise_cudagraph_mode: a piecewise mode under a compilation "
        "mode other than VLLM_COMPILE falls back to cudagraph_mode.without_piecewise() (config/compilation.py: "
        "FULL_AND_PIECEWISE -> FULL_DECODE_ONLY, PIECEWISE -> NONE), 'Overriding to %s.' (0.29.0: NONE)",
        {"compile_mode_rule": "without_piecewise"},
    ),
    Change(
        "0.30.0",
        "0.30.0 config/model.py _get_and_verify_max_len: yarn joins the rope types whose factor does not "
        "scale the derived length (0.27.1 and older: original_max_position_embeddings x factor)",
        {"yarn_scales_max_len": False},
    ),
    Change(
        "0.30.0",
        "0.30.0 platforms/cuda.py _get_backend_priorities: FLASHINFER_MLA_SPARSE_SM90 after FLASHMLA_SPARSE on SM90 "
        "(head size 576); flashinfer_mla_sparse_sm90.py FlashInferMLASparseSM90Backend takes auto / bfloat16 / fp8 / "
        "fp8_e4m3, MultipleOf(64) (absent in 0.27.1), so a checkpoint's fp8_e4m3 KV (NVFP4 GLM-5, DeepSeek-V3.2) "
        "runs there: FLASHMLA_SPARSE lists fp8 (its alias for fp8_ds_mla) but not fp8_e4m3; a head of 512 (NoPE, "
        "GLM-5.3-Flash) moves it to the front of the tail (backends_sparse_mla.sparse_mla_order; 0.33.0 and 0.34.0 the same)",
        {"sparse_mla_sm90": ("FLASH_ATTN_MLA_SPARSE", "FLASHMLA_SPARSE", "FLASHINFER_MLA_SPARSE_SM90")},
    ),
    Change(
        "0.30.0",
        "0.30.0 config/cache.py CacheDType adds 'nvfp4_ds_mla' (absent in 0.29.0); mla_attention.py "
        "MLAAttention.get_kv_cache_spec packs a token in 352 B (state_content_bytes; fp8_ds_mla 656); "
        "v1/attention/backends/mla/flashmla_sparse.py FlashMLASparseBackend takes it on SM100 only "
        "(supports_combination), FlashInfer's sparse MLA does not list it",
        {"has_nvfp4_ds_mla": True},
    ),
    Change(
        "0.30.0",
        "0.30.0, 0.32.0 and 0.33.0 model_executor/models/registry.py _ModelRegistry.inspect_model_cls / "
        "_try_resolve_transformers and transformers_utils/config.py HFConfigParser.parse (the same code; 0.31.0's "
        "_try_resolve_transformers too), each with its transformers (0.30.0 requires >=5.10.4, no upper bound: 5.17.0, "
        "the newest when its wheel was built on 2026-09-22, also the newest 0.31.0 allows; 0.32.0: 5.19.0, <5.20.0; "
        "0.33.0: 5.20.2, <5.21.0): a config whose model_type neither vLLM's _CONFIG_REGISTRY nor transformers' "
        "CONFIG_MAPPING knows fails to parse; an unregistered architecture that transformers exports with a "
        "backend-compatible attention is served by the Transformers backend; any other is 'Model architectures [...] "
        "are not supported for now' (scripts/gen_transformers_fallback.py, hf_config/transformers_fallback.json; "
        "0.27.1 and older: not read, refused as before)",
        {"transformers_fallback": True},
    ),
    Change(
        "0.32.0",
        "0.31.0 platforms/interface.py Platform.update_block_size_for_backend / _preferred_block_size_for_backends: "
        "with no --block-size, one backend keeps its preference; several (_find_non_ssm_backends, e.g. a sparse MLA "
        "kernel and DEEPSEEK_V32_INDEXER) take 16 if all support it, else the smallest lcm of one kernel block each "
        "that all support ('The attention backends share no supported KV cache block size' if none); logged "
        "'Setting kv cache block size to %d for %s backend(s).' with the names joined by '/' (0.30.0: the first "
        "layer's backend alone). Put at 0.32.0, the first known release with it: 0.31.x is planned with 0.30.0's",
        {"block_size_agreement": True, "block_size_log": "setting_for_backends"},
    ),
    Change(
        "0.32.0",
        "0.32.0 model_executor/layers/mamba/mamba_mixer2.py MambaMixer2.get_kv_cache_spec: "
        "num_prefill_checkpoint_blocks=1, so v1/kv_cache_interface.py MambaSpec.max_memory_usage_bytes in 'align' "
        "mode is 3 pages (2 + spec + checkpoint; 0.29.0 added the term, no Mamba-2 layer set it before 0.32.0); "
        "models/config.py GlmMoeDsaForCausalLM: 'Using fp8 kv-cache for GlmMoeDsaForCausalLM on SM10x' under auto "
        "(absent in 0.31.0)",
        {"mamba2_checkpoint_block": True, "glm_dsa_fp8_kv_on_sm100": True},
    ),
    Change(
        "0.32.0",
        "0.32.0 kimi_k3/nvidia/kda.py KimiK3DeltaAttention.get_kv_cache_spec: num_prefill_checkpoint_blocks = 1 and "
        "prefill_checkpoint_alignment 16 (model_executor/layers/mamba/kda_checkpoint.py, new) when the KDA prefill "
        "runs on FlashKDA (is_flashkda_supported: SM9x/10x/12x, head_dim 128, bf16, a bounded gate); absent in 0.30.0",
        {"kda_checkpoint_block": True},
    ),
    Change(
        "0.32.0",
        "0.31.0 v1/attention/backends/mla/triton_mla.py: _cudagraph_support UNIFORM_BATCH again (0.30.0: "
        "UNIFORM_SINGLE_TOKEN_DECODE), mla/flashinfer_mla.py ALWAYS (0.30.0: UNIFORM_BATCH); 0.32.0 "
        "FlashInferMLASparseTRTLLMMetadataBuilder UNIFORM_BATCH; put at 0.32.0, the first known release with it (0.31.x "
        "is planned with 0.30.0's)",
        {"cudagraph_support": graph_support(GRAPHS_0_32)},
    ),
    Change(
        "0.33.0",
        "0.33.0 platforms/interface.py Platform._align_hybrid_block_size: in 'align' mode the alignment is the lcm "
        "with get_mamba_prefill_checkpoint_alignment (FLASHINFER_GDN_CHECKPOINT_ALIGNMENT = 64 for Gated DeltaNet "
        "on FlashInfer's prefill: SM90, or SM100/SM120 with linear_key_head_dim 128); qwen_gdn_linear_attn.py "
        "GatedDeltaNetAttention.get_kv_cache_spec adds one checkpoint block per request",
        {"hybrid_checkpoint_lcm": True, "gdn_checkpoint_block": True},
    ),
    Change(
        "0.33.0",
        "0.33.0 v1/attention/backends/flash_attn.py 'ALWAYS if get_flash_attn_version() in (3, 4)' (FA4 on capability "
        "10.x; 0.32.0: == 3) and flashinfer.py _use_fa2_native_decode: UNIFORM_BATCH below capability 9.0 "
        "(graph_support.GRAPHS_0_33)",
        {"cudagraph_support": graph_support(GRAPHS_0_33)},
    ),
    Change(
        "0.33.0",
        "0.33.0 platforms/cuda.py _get_backend_priorities: sparse MLA on SM100 with a bf16 cache and <= 16 heads "
        "tries FLASH_ATTN_MLA_SPARSE_FA4 (flashattn_mla_sparse.py: auto / bfloat16, head 576, MultipleOf(64)) "
        "before FLASHINFER_MLA_SPARSE (absent in 0.32.0)",
        {"sparse_mla_fa4_small_heads": True},
    ),
    Change(
        "0.33.0",
        "0.33.0 models/deepseek_v4 (attention.py, compressor.py, nvidia/model.py _select_dsv4_attn_cls), "
        "v1/attention/backends/mla/sparse_swa.py DeepseekV4SWACache, v1/kv_cache_interface.py (MLAAttentionSpec "
        "tokens_per_state, SlidingWindowMLASpec, _apply_alignment_padding) and v1/core/kv_cache_planning.py "
        "_get_packed_kv_cache_groups / _get_kv_cache_bytes_per_block: DeepSeek-V4 on SM90/SM100 runs "
        "FLASHMLA_SPARSE_DSV4 in the fp8_ds_mla layout (auto -> fp8_ds_mla), per-layer sliding-window, compressed, "
        "indexer and compressor-state caches packed block-outermost (the releases 0.20.2-0.32.0 that serve V4 were "
        "not read: their estimates keep the warning)",
        {"dsv4_cache": True},
    ),
    Change(
        "0.33.0",
        "0.33.0 arg_utils.get_batch_defaults: >= 160 GiB -> 16384 / 1024; >= 70 GiB and not a100 and not GB10 "
        "(capability 12.1) -> 8192 / 1024 (absent in 0.19.0); FLASHINFER_MLA first on SM100 (§5.2); "
        "free-memory check also under --kv-cache-memory-bytes; auto-fit wording (§4.3)",
        {
            "batch_tiers": (
                BatchTier(min_device_gib=160, max_num_seqs=1024, max_num_batched_tokens=16384),
                BatchTier(
                    min_device_gib=70,
                    max_num_seqs=1024,
                    max_num_batched_tokens=8192,
                    excluded_names=("a100",),
                    excluded_capabilities=("12.1",),
                ),
            ),
            "backend_priorities": (MLA_SM12, MLA_SM100, MLA_SM90, V1_ATTENTION_SM12, *V1_ATTENTION),
            "free_memory_check_with_kv_bytes": True,
            "autofit_log": "kv_cache_memory",
        },
    ),
    Change(
        "0.19.0",
        "0.19.0 v1/attention/backend.py AttentionBackend.validate_configuration: 'head_size not supported' drops a "
        "backend from the priority walk (platforms/cuda.py); flash_attn.py supports_head_size: head % 8 == 0 and "
        "<= 256; flashinfer.py get_supported_head_sizes [64, 128, 256]; triton_attn.py supports_head_size >= 32 "
        "(releases before 0.19.0 not read for it: no head check planned there)",
        {"backend_head_sizes": True},
    ),
    Change(
        "0.24.0",
        "0.24.0 flash_attn.py supports_head_size: <= 512 when is_fa_version_supported(4) (SM 9.x / 10.x / 11.x); "
        "flashinfer.py get_supported_head_sizes [64, 128, 256, 512] (0.30.0 and 0.33.0 the same; 0.20.2-0.22.1 "
        "not read, put at the first release read that has it)",
        {"large_attention_heads": True},
    ),
)
