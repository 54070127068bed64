"""Typed inputs of the estimator: a model, a device and the `vllm serve` flags.

Integer bytes everywhere, the unit in every name. These are frozen pydantic models with
``extra="forbid"`` so a spec file with a typo fails at load time instead of silently
producing a wrong number.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.core.compilation import normalize as compilation_normalize
from app.core.graph_mode import CudagraphMode
from app.core.json_reasons import json_reason
from app.core.serve_flags import bounds
from app.core.text import Text

GIB = 2**30
MIB = 2**20


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LayerKind(StrEnum):
    """How one decoder layer uses the KV cache (reference §3.1)."""

    FULL = "full"  # FullAttentionSpec: every token of the sequence is kept
    SLIDING = "sliding"  # SlidingWindowSpec: the last W tokens
    CHUNKED = "chunked"  # ChunkedLocalAttentionSpec (Llama-4 iRoPE local layers)
    MLA = "mla"  # MLAAttentionSpec: one latent "head" of kv_lora_rank + rope dims
    MAMBA = "mamba"  # MambaSpec: a fixed-size recurrent state per request
    SHARED = "shared"  # reuses another layer's cache (kv_sharing_target_layer_name): no spec
    NONE = "none"  # no attention at all in this entry (e.g. an MLP-only block)
    # bidirectional attention over the prompt only (BERT, XLM-R): 0.33.0 EncoderOnlyAttention.get_kv_cache_spec
    # returns None, so the layer has no KV cache spec and holds no cache
    ENCODER_ONLY = "encoder_only"


DType = Literal["bfloat16", "float16", "float32"]
Runner = Literal["generate", "pooling", "draft"]  # 0.33.0 config/model.py RunnerType (--runner auto: None)
Convert = Literal["none", "embed", "classify"]  # 0.33.0 config/model.py ConvertType (--convert auto: None)

DTYPE_BYTES: dict[str, int] = {"bfloat16": 2, "float16": 2, "float32": 4}


class MLASpec(Frozen):
    """Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2): cached latent per token per layer."""

    kv_lora_rank: int = Field(gt=0)
    qk_rope_head_dim: int = Field(ge=0)
    # not cached; 0.15-0.17 force FLASHINFER_MLA on Blackwell only at 128 (forced_blocks.py). None: not given
    qk_nope_head_dim: int | None = Field(default=None, ge=0)
    # the per-head value width of the up-projected (prefill) path; not cached. None: not given
    v_head_dim: int | None = Field(default=None, gt=0)

    @property
    def latent_size(self) -> int:
        return self.kv_lora_rank + self.qk_rope_head_dim


class MambaKind(StrEnum):
    MAMBA1 = "mamba1"
    MAMBA2 = "mamba2"
    GATED_DELTA_NET = "gated_delta_net"
    LINEAR_ATTENTION = "linear_attention"
    KDA = "kda"  # Kimi Delta Attention (Kimi-Linear, Kimi-K3): num_heads x head_dim, conv_kernel
    SHORT_CONV = "short_conv"  # LFM2 ShortConv: a conv state only, intermediate_size = conv_dim


class MambaSpec(Frozen):
    """Shape parameters of the recurrent state (reference §3.2, MambaStateShapeCalculator).

    Only the fields a kind needs are set; the rest stay 0.
    """

    kind: MambaKind
    intermediate_size: int = 0  # mamba1/mamba2 d_inner
    state_size: int = 0  # mamba1/mamba2 d_state
    conv_kernel: int = 0
    n_groups: int = 0  # mamba2
    num_heads: int = 0  # mamba2 heads / linear-attention heads
    head_dim: int = 0  # mamba2 / linear attention
    key_heads: int = 0  # gated delta net
    key_head_dim: int = 0
    value_heads: int = 0
    value_head_dim: int = 0
    bounded_gate: bool = False  # KDA: linear_attn_config.gate_lower_bound is set (FlashKDA needs it)


class AttentionShape(Frozen):
    """One attention layer's cached geometry, for models whose layers differ (Gemma-4 full vs sliding
    layers, MiMo-V2 SWA layers, Nemotron-NAS blocks): total KV heads and K/V head sizes."""

    kv_heads: int = Field(gt=0)
    head_size: int = Field(gt=0)
    head_size_v: int = Field(gt=0)


class QuantMethod(StrEnum):
    FP8 = "fp8"  # 8-bit float weights, per-tensor/channel or 128x128 block scales
    INT8 = "int8"  # w8a8 / w8a16 integer
    INT4 = "int4"  # w4a16 (GPTQ/AWQ/compressed-tensors), group scales
    MXFP4 = "mxfp4"  # 4-bit e2m1 + one e8m0 scale per 32 values
    NVFP4 = "nvfp4"  # 4-bit e2m1 + one fp8 scale per 16 values


class QuantSpec(Frozen):
    method: QuantMethod
    group_size: int = Field(default=128, gt=0)
    # Fraction of the non-embedding parameters that are quantized (gpt-oss quantizes only experts).
    quantized_fraction: float = Field(default=1.0, ge=0.0, le=1.0)
    source_name: str = ""  # as vLLM would name it: "fp8", "compressed-tensors", "gptq_marlin", ...
    # The KV cache dtype the checkpoint declares, which `--kv-cache-dtype auto` then uses (ModelOpt
    # kv_cache_quant_algo / kv_cache_scheme -> "fp8_e4m3" or "nvfp4"; compressed-tensors kv_cache_scheme
    # -> "fp8"); None when it declares none. Whether a release honours it is a rules field (versions.py).
    kv_cache_dtype: str | None = None
    # Routed experts stored in another format than the other linears (DeepSeek-V4: MXFP4 or NVFP4 experts
    # beside FP8 attention and shared experts); None: the experts are stored as `method`. expert_fraction
    # is the routed experts' share of the non-embedding parameters.
    expert_method: QuantMethod | None = None
    expert_fraction: float = Field(default=0.0, ge=0.0, le=1.0)
    # FP8 block quantization: (block_n, block_k), one scale per block_n output rows x block_k input columns
    # (quantization_config.weight_block_size, compressed-tensors block_structure); None: per-tensor/channel
    # scales. quant_shards.py checks the tensor-parallel shards against it.
    weight_block_size: tuple[int, int] | None = None
    # compressed-tensors weights "symmetric": false: a zero point per group (0.33.0 compressed_tensors_wNa16.py
    # WNA16_ZP_SUPPORTED_TYPES_MAP, uint4 not uint4b8), which Exllama does not take (quant_shards.check_wna16_shards)
    zero_points: bool = False


class ModelSpec(Frozen):
    """Everything about a model that moves a memory number."""

    name: str
    architecture: str = ""
    model_type: str = ""
    # the config asks for image-prefix (bidirectional) attention: Gemma-4's text_config
    # use_bidirectional_attention "vision" (transformers_utils/model_arch_config_convertor.py, 0.20+)
    mm_prefix_lm: bool = False
    remote_code: bool = False  # config.json has an auto_map (code vLLM runs with --trust-remote-code)
    # auto_map names an AutoConfig, the one remote code that makes an unknown model_type readable
    # (hf_config/remote_config.py); None: as remote_code (a spec built by hand)
    remote_config: bool | None = None
    # a config field gives every attention layer learned sinks (hf_config/sinks.py: Granite's attention_sinks /
    # layer_types); the release rule is attention_sinks.has_sinks
    attention_sinks: bool = False
    # the sparse-MLA layers carry a learnable sink that only FLASHMLA_SPARSE applies (hf_config/hy_v4.py: HY V4's
    # learnable_sink), so they bind it instead of the selected sparse backend when it takes the configuration
    sparse_mla_sink: bool = False
    num_layers: int = Field(gt=0)
    hidden_size: int = Field(gt=0)
    intermediate_size: int = Field(ge=0)
    moe_intermediate_size: int = Field(default=0, ge=0)
    num_experts: int = Field(default=0, ge=0)
    num_experts_per_tok: int = Field(default=0, ge=0)
    num_shared_experts: int = Field(default=0, ge=0)
    # the shared expert(s)' MLP width beside the routed experts, TP-split like a dense MLP (hf_config/params.py
    # _Moe.shared_size: DeepSeek n_shared x moe_intermediate_size, Qwen-MoE shared_expert_intermediate_size)
    shared_expert_size: int = Field(default=0, ge=0)
    # decoder layers whose MLP is the routed-expert block (config.json first_k_dense_replace, moe_layer_freq,
    # interleave_moe_layer_step, decoder_sparse_step, mlp_only_layers, expert_layer_period, a Nemotron-H
    # pattern's E blocks); None: not counted (every layer of an MoE model; the speed model then takes
    # what the routed-expert parameters hold, budget.routed_expert_params)
    moe_layers: int | None = Field(default=None, ge=0)
    # each layer is ONE block, a mixer or an MLP with its own residual (Nemotron-H's pattern letters, pure
    # Mamba), not attention + MLP: one TP all-reduce a layer instead of two, half a layer's kernels
    one_sublayer_blocks: bool = False
    num_attention_heads: int = Field(gt=0)
    num_kv_heads: int = Field(gt=0)
    head_size: int = Field(gt=0)  # K head size as vLLM caches it
    head_size_v: int = Field(gt=0)  # V head size (equal to head_size for almost all models)
    vocab_size: int = Field(gt=0)
    tie_word_embeddings: bool = False
    # vLLM runs the architecture with its pooling runner (embed / classify / reward: hf_config.registry
    # is_pooling_architecture): no LM head is built (0.33.0 model_executor/models/adapters.py
    # _create_pooling_model_cls builds the model under no_init_weights(ParallelLMHead, LogitsProcessor); the
    # native pooling classes have none) and the profile run pools instead of sampling (0.33.0
    # v1/worker/gpu/model_runner.py profile_run: _dummy_pooler_run, not _dummy_sampler_run)
    pooling: bool = False
    max_model_len_derived: int = Field(gt=0)  # vLLM's derived max length (rope factor rules)
    # the derived length under vLLM <= 0.27.1, where a yarn rope gives original_max_position_embeddings
    # x factor (None: the same as max_model_len_derived); see max_model_len_for
    max_model_len_yarn_scaled: int | None = Field(default=None, gt=0)
    # LongRoPE (Phi-3/Phi-4): the length vLLM 0.14+ serves when --max-model-len is not given
    # (original_max_position_embeddings); None: the derived maximum
    max_model_len_longrope_default: int | None = Field(default=None, gt=0)
    layer_kinds: tuple[LayerKind, ...]
    sliding_window_tokens: int | None = Field(default=None, gt=0)
    attention_chunk_tokens: int | None = Field(default=None, gt=0)
    mla: MLASpec | None = None
    mamba: MambaSpec | None = None
    # per layer, only when attention layers differ in KV heads or head size (None: all as above)
    layer_attention: tuple[AttentionShape, ...] | None = None
    # DeepSeek-V3.2 / GLM-5 sparse attention: the indexer's own cache, bytes per token per MLA layer
    indexer_bytes_per_token: int = Field(default=0, ge=0)
    # The layers that carry a sparse-attention indexer cache when only some do (GLM-5.2 index_topk_freq);
    # None: every MLA layer (the release rule is versions.py indexer_on_some_layers)
    indexer_layers: tuple[int, ...] | None = None
    # a block-sparse attention backend's one kernel block (MiniMax-M3 MSA, hf_config/minimax_m3.py: 128)
    sparse_kernel_block: int | None = Field(default=None, gt=0)
    # DeepSeek-V4: each layer's compress ratio (0 = sliding window only, 4 = CSA with an indexer, 128 = HCA);
    # config.json compress_ratios, as transformers' DeepseekV4Config maps it to layer_types
    compress_ratios: tuple[int, ...] | None = None
    # config.json's mamba_ssm_dtype / mamba_ssm_cache_dtype (the SSM state's dtype; None: not given)
    mamba_ssm_dtype: DType | None = None
    # the retrieval_attention_contract values config.json (and its text config) declare (ColQwen3.5; vLLM
    # 0.27+ refuses the config without one: hf_config/registry.py check_config_contract)
    retrieval_attention_contract: tuple[str, ...] = ()
    params_total: int = Field(gt=0)
    params_active: int | None = None
    torch_dtype: DType = "bfloat16"
    dtype_assumed: bool = False  # True when config.json had no torch_dtype
    quantization: QuantSpec | None = None
    weights_bytes_exact: int | None = None  # from model.safetensors.index.json total_size
    # vision tower + projector parameters (already inside params_total); vLLM skips loading them when
    # every --limit-mm-per-prompt modality is 0 (app/core/extras.py)
    vision_params: int = Field(default=0, ge=0)
    # towers vLLM builds from the config that the planner cannot count (hf_config/vision.py
    # uncounted_towers), e.g. ("vision_config (timm_wrapper)", "audio_config (gemma3n_audio)"); said on the page.
    # Not a per-layer field (layers.PER_LAYER_FIELDS names those)
    uncounted_towers: tuple[str, ...] = ()
    source: str = ""
    confidence: Literal["verified", "likely", "recalled", "user"] = "user"
    # another published revision of this checkpoint's config.json declares this many KV heads (the
    # catalog's figure is the current official one); the estimate warns, since KV per token scales with it
    other_revision_kv_heads: int | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _check(self) -> ModelSpec:
        if len(self.layer_kinds) != self.num_layers:
            raise ValueError(
                Text(
                    "layer_kinds has {layer_kinds} entries but num_layers is {num_layers}",
                    layer_kinds=len(self.layer_kinds),
                    num_layers=self.num_layers,
                )
            )
        kinds = set(self.layer_kinds)
        if LayerKind.SLIDING in kinds and self.sliding_window_tokens is None:
            raise ValueError(Text("sliding layers need sliding_window_tokens"))
        if LayerKind.CHUNKED in kinds and self.attention_chunk_tokens is None:
            raise ValueError(Text("chunked layers need attention_chunk_tokens"))
        if LayerKind.MLA in kinds and self.mla is None:
            raise ValueError(Text("MLA layers need the mla block"))
        if LayerKind.MAMBA in kinds and self.mamba is None:
            raise ValueError(Text("mamba layers need the mamba block"))
        if self.layer_attention is not None and len(self.layer_attention) != self.num_layers:
            raise ValueError(
                Text(
                    "layer_attention has {entries} entries but num_layers is {num_layers}",
                    entries=len(self.layer_attention),
                    num_layers=self.num_layers,
                )
            )
        return self

    @property
    def embedding_tensors(self) -> int:
        """vocab x hidden tensors vLLM loads: the input embedding, plus an LM head unless tied or pooling."""
        return 1 if self.tie_word_embeddings or self.pooling else 2

    @property
    def weight_dtype_bytes(self) -> int:
        return DTYPE_BYTES[self.torch_dtype]

    def max_model_len_for(self, *, yarn_scales_max_len: bool) -> int:
        """vLLM's derived maximum length under a release's rope rule (VersionRules.yarn_scales_max_len)."""
        if yarn_scales_max_len and self.max_model_len_yarn_scaled is not None:
            return self.max_model_len_yarn_scaled
        return self.max_model_len_derived

    def default_max_model_len_for(self, *, yarn_scales_max_len: bool, longrope_default_original: bool) -> int:
        """The length vLLM serves when --max-model-len is not given (LongRoPE: the original one, 0.14+)."""
        if longrope_default_original and self.max_model_len_longrope_default is not None:
            return self.max_model_len_longrope_default
        return self.max_model_len_for(yarn_scales_max_len=yarn_scales_max_len)


Platform = Literal["cuda", "rocm", "npu", "hpu", "tpu", "neuron", "cpu"]


class DeviceSpec(Frozen):
    id: str
    name: str
    vendor: str
    platform: Platform
    memory_total_bytes: int = Field(gt=0)  # what the runtime reports (mem_get_info()[1])
    memory_nominal_gib: float | None = None
    compute_capability: str | None = None  # "9.0"; None off CUDA
    fp8_kv: bool = False  # fp8 KV cache usable with the default backend of this device
    int8_kv: bool = False  # Ascend INT8 (C8) KV through the quantization description
    memory_bandwidth_tbps: float | None = None
    bf16_dense_tflops: float | None = None  # dense BF16 tensor TFLOPS (performance model)
    interconnect: str = ""
    interconnect_gbps: float | None = None  # per-device bidirectional bandwidth, GB/s
    typical_node_devices: int = Field(default=8, gt=0)
    # how the cards of one node reach each other: "fabric" (every card to every card over NVLink/NVSwitch,
    # xGMI, HCCS, ICI, NeuronLink, Gaudi RoCE), "nvlink_pairs" (NVLink bridges between pairs, PCIe beyond:
    # H100 NVL, GH200 NVL2), "pcie" (PCIe only; an optional bridge is not assumed); None: not stated
    peer_link: Literal["fabric", "nvlink_pairs", "pcie"] | None = None
    # CPU and GPU share one memory pool (GB10 / DGX Spark): the OS and its page cache live in the same
    # bytes, so gpu_memory_utilization is not a hard bound there (vllm#46307, #56824)
    unified_memory: bool = False
    aliases: tuple[str, ...] = ()
    notes: str = ""
    confidence: str = ""

    @property
    def sm(self) -> int | None:
        """Compute capability as an integer (9.0 -> 90), None off CUDA."""
        if not self.compute_capability:
            return None
        major, _, minor = self.compute_capability.partition(".")
        return int(major) * 10 + int(minor or 0)


KV_CACHE_DTYPES = (
    "auto",
    "bfloat16",
    "float16",
    "fp8",
    "fp8_e4m3",
    "fp8_e5m2",
    "fp8_ds_mla",
    "nvfp4_ds_mla",  # 0.30.0+ config/cache.py CacheDType: sparse MLA on SM100 (FlashMLA's NVFP4 layout)
    "int8",  # Ascend C8 via the ModelSlim quantization description
)
KVCacheDType = Literal[
    "auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_ds_mla", "nvfp4_ds_mla", "int8"
]


SpecMethod = Literal["draft_model", "eagle", "eagle3", "mtp", "ngram", "suffix"]
# `--speculative-config` keys vLLM 0.19.0 accepts (config/speculative.py SpeculativeConfig) that do not
# move memory here: accepted and ignored, so a real command is read whole
VLLM_SPEC_KEYS_WITHOUT_MEMORY = frozenset(
    {
        "enforce_eager",
        "tensor_parallel_size",
        "quantization",
        "moe_backend",
        "max_model_len",
        "revision",
        "code_revision",
        "disable_padded_drafter_batch",
        "use_local_argmax_reduction",
        "prompt_lookup_max",
        "prompt_lookup_min",
        "speculative_token_tree",
        "parallel_drafting",
        "suffix_decoding_max_tree_depth",
        "suffix_decoding_max_cached_requests",
        "suffix_decoding_max_spec_factor",
        "suffix_decoding_min_token_prob",
        "rejection_sample_method",
        "synthetic_acceptance_rate",
        "disable_by_batch_size",  # older releases (0.6-0.9) only
        "acceptance_method",  # older releases (0.6-0.9) only
    }
)
MTP_METHOD_SUFFIX = "_mtp"  # deepseek_mtp, mimo_mtp, qwen3_next_mtp, ... (0.19.0 MTPModelTypes)
NGRAM_GPU_METHOD = "ngram_gpu"  # 0.19.0 NgramGPUTypes: the same proposer on the GPU, no weights


def _json_object_text(value: object) -> object:
    """`--speculative-config '{...}'` / `--limit-mm-per-prompt '{...}'` arrive as JSON text."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(Text("not valid JSON: {reason}", reason=json_reason(exc.msg))) from exc
    return value


# The method vLLM reads from the draft's name when --speculative-config gives none, first match wins (0.19.0 and 0.33.0
# config/speculative.py SpeculativeConfig: "eagle-" -> eagle, then "eagle3" -> eagle3; otherwise draft_model here)
DRAFT_NAME_METHODS: tuple[tuple[str, str], ...] = (("eagle-", "eagle"), ("eagle3", "eagle3"))


class SpeculativeConfig(Frozen):
    """`--speculative-config` (vllm/config/speculative.py, 0.19.0): the fields that move memory."""

    method: SpecMethod | None = None  # None with a model = "draft_model" (vLLM infers it from the name)
    model: str | None = Field(default=None, max_length=300)
    num_speculative_tokens: int = Field(default=1, ge=1, le=64)
    draft_tensor_parallel_size: int | None = Field(default=None, ge=1, le=1024)

    @model_validator(mode="before")
    @classmethod
    def _vllm_keys(cls, value: Any) -> Any:
        """vLLM's own spellings: its other keys move no memory and are accepted (real commands carry
        prompt_lookup_max and friends); the per-model MTP method names are "mtp" (0.19.0 config/speculative.py
        `MTPModelTypes`, renamed in `__post_init__`), ngram_gpu is ngram."""
        if not isinstance(value, dict):
            return value
        out = {k: v for k, v in value.items() if k not in VLLM_SPEC_KEYS_WITHOUT_MEMORY}
        method = out.get("method")
        if isinstance(method, str):
            if method.endswith(MTP_METHOD_SUFFIX):
                out["method"] = "mtp"
            elif method == NGRAM_GPU_METHOD:
                out["method"] = "ngram"
        return out

    @model_validator(mode="after")
    def _needs_model(self) -> SpeculativeConfig:
        if self.method in (None, "draft_model", "eagle", "eagle3") and not self.model:
            raise ValueError(
                Text("speculative method {method} needs a model", method=self.method or "draft_model")
            )
        return self

    @property
    def resolved_method(self) -> str:
        if self.method is not None:
            return self.method
        name = (self.model or "").lower()
        return next((method for marker, method in DRAFT_NAME_METHODS if marker in name), "draft_model")


class ReleaseDefaultFlags(Frozen):
    """The `vllm serve` flags whose unset value (``None``) is vLLM's default for the release, declared once.

    :class:`ServeConfig` inherits them, and so do the log reader's facts (``LogFacts``: ``None`` = the
    log does not say) and the web's parameters (``PlannerParams``, which reads them leniently by the
    flag table's kind). A new flag of this shape is one field here (its bounds from its row in
    app/core/serve_flags.py), that row, and its rule: the command parser, the renderer, the log reader
    and the permalinks follow from them.
    """

    gpu_memory_utilization: Annotated[float | None, bounds("gpu_memory_utilization")] = None
    block_size: Annotated[int | None, bounds("block_size")] = None
    max_num_batched_tokens: Annotated[int | None, bounds("max_num_batched_tokens")] = None
    enable_prefix_caching: bool | None = None
    enable_chunked_prefill: bool | None = None
    # --async-scheduling / --no-async-scheduling: moves no memory, only speed (perf/physics.py); None = the
    # release's default (versions.py: on from 0.14.0)
    async_scheduling: bool | None = None
    # --enable-extensible-kv-cache / --no-enable-extensible-kv-cache (0.34.0, a BooleanOptionalAction): False sizes
    # the pool from the profiled budget as before 0.34 (app/core/extensible_kv.py); None = on where supported
    enable_extensible_kv_cache: bool | None = None
    quantization: str | None = None
    swap_space_gib: Annotated[float | None, bounds("swap_space_gib")] = None  # V0 --swap-space (GiB)
    kv_offloading_size_gib: Annotated[float | None, bounds("kv_offloading_size_gib")] = None  # GiB
    max_cpu_loras: Annotated[int | None, bounds("max_cpu_loras")] = None
    # --compilation-config / -cc cudagraph_mode, or the -O level's (app/core/graph_mode.py); None: the default
    cudagraph_mode: CudagraphMode | None = None
    # the other --compilation-config / -cc keys as canonical JSON text (app/core/compilation.py); None: none
    compilation_config: str | None = None  # at most compilation.COMPILATION_CONFIG_MAX_CHARS, checked below
    # --runner (0.10.1+, vllm_flags.json): the runner vLLM builds the model for; None = auto, the architecture's
    # own (ModelSpec.pooling); "pooling" converts a generative model (hf_config.registry.apply_runner)
    runner: Runner | None = None
    # --convert (0.10.1+): embed / classify adapt a generative model into a pooling one; under --runner auto either
    # makes the runner pooling (0.33.0 config/model.py _get_runner_type); None = auto
    convert: Convert | None = None

    @field_validator("runner", "convert", mode="before")
    @classmethod
    def _runner_auto(cls, value: Any) -> Any:
        return None if value == "auto" else value  # --runner auto / --convert auto: vLLM's default

    @property
    def resolved_runner(self) -> Runner | None:
        """The runner vLLM resolves: --runner when given, else pooling under --convert embed / classify
        (0.33.0 config/model.py ModelConfig._get_runner_type), else None (the architecture's own)."""
        if self.runner is None and self.convert in ("embed", "classify"):
            return "pooling"
        return self.runner

    @field_validator("compilation_config", mode="before")
    @classmethod
    def _compilation_keys(cls, value: Any) -> Any:
        return compilation_normalize(value)


RELEASE_DEFAULT_FLAGS: tuple[str, ...] = tuple(ReleaseDefaultFlags.model_fields)


class ServeConfig(ReleaseDefaultFlags):
    """The `vllm serve` flags that move memory. ``None`` means "vLLM's default for this version"."""

    @property
    def ranks(self) -> int:
        """Devices one replica spans: TP x PP (e.g. TP 4, PP 2 -> 8); data parallelism multiplies it."""
        return self.tensor_parallel_size * self.pipeline_parallel_size

    # bounds: one row each in app/core/serve_flags.py (the flag table the parser, renderer and log reader share)
    max_model_len: Annotated[int | None, bounds("max_model_len")] = None
    tensor_parallel_size: Annotated[int, bounds("tensor_parallel_size")] = 1
    pipeline_parallel_size: Annotated[int, bounds("pipeline_parallel_size")] = 1
    kv_cache_dtype: KVCacheDType = "auto"
    max_num_seqs: Annotated[int | None, bounds("max_num_seqs")] = None
    enforce_eager: bool = False
    dtype: Literal["auto", "bfloat16", "float16", "float32", "half"] = "auto"
    kv_cache_memory_bytes: Annotated[int | None, bounds("kv_cache_memory_bytes")] = None
    cpu_offload_gb: Annotated[float, bounds("cpu_offload_gb")] = 0.0
    # memory other processes already hold on each device when vLLM starts (nvidia-smi / npu-smi "used"),
    # not a vLLM flag: vLLM 0.10.2+ refuses to start when free < total x utilization (reference §2.1)
    device_memory_used_gib: float = Field(default=0.0, ge=0.0, le=100_000.0)
    # --data-parallel-size: replicas of the attention (each with its own KV pool); the routed experts are
    # split over data x tensor ranks (whole experts with --enable-expert-parallel, budget.py / extras/)
    data_parallel_size: Annotated[int, bounds("data_parallel_size")] = 1
    enable_expert_parallel: bool = False
    # extras (app/core/extras/): speculative decoding, LoRA slots, multimodal limits
    speculative_config: SpeculativeConfig | None = None
    enable_lora: bool = False
    max_loras: Annotated[int, bounds("max_loras")] = 1
    max_lora_rank: Annotated[int, bounds("max_lora_rank")] = 16
    fully_sharded_loras: bool = False
    limit_mm_per_prompt: dict[str, int] | None = None
    # --mm-processor-cache-gb: the multimodal processor cache on the host, per API process and per engine
    # core (vllm/config/multimodal.py mm_processor_cache_gb, default 4 GiB since 0.10; 0 disables it)
    mm_processor_cache_gb: Annotated[float, bounds("mm_processor_cache_gb")] = 4.0

    @field_validator("speculative_config", mode="before")
    @classmethod
    def _from_json_text(cls, value: Any) -> Any:
        return _json_object_text(value)

    @field_validator("limit_mm_per_prompt", mode="before")
    @classmethod
    def _limits_text(cls, value: Any) -> Any:
        """JSON (`{"image": 0}`) or the older `image=0,video=0` form of `--limit-mm-per-prompt`."""
        if isinstance(value, str) and "=" in value and not value.strip().startswith("{"):
            pairs = [part.partition("=") for part in value.split(",") if part.strip()]
            try:
                return {key.strip(): int(number) for key, _, number in pairs}
            except ValueError as exc:
                raise ValueError(Text("expected modality=count pairs like image=0,video=0")) from exc
        return _json_object_text(value)

    @field_validator("limit_mm_per_prompt")
    @classmethod
    def _limits(cls, value: dict[str, int] | None) -> dict[str, int] | None:
        if value is not None and any(v < 0 for v in value.values()):
            raise ValueError(Text("limits per prompt cannot be negative"))
        return value

    # the environment variable VLLM_ALLOW_LONG_MAX_MODEL_LEN=1: accept --max-model-len above the model's
    # derived maximum (vLLM refuses it otherwise)
    allow_long_max_model_len: bool = False

    def __hash__(self) -> int:
        """Frozen and hashable like every spec (the recommender caches estimates by configuration): the
        one dict field, ``limit_mm_per_prompt``, hashes as its sorted items."""
        limits = self.limit_mm_per_prompt
        items = tuple(sorted(limits.items())) if limits is not None else None
        return hash(
            tuple(items if name == "limit_mm_per_prompt" else value for name, value in self.__dict__.items())
        )
