"""`vllm serve`'s flags after this release's defaults for the device (reference §7), and the parallel
layout checks vLLM's engine config runs before anything is loaded."""

from __future__ import annotations

from dataclasses import dataclass

from app.core import extensible_kv, layers
from app.core.backends import BackendChoice, hybrid_align, resolve_backend
from app.core.budget import serving_dtype
from app.core.errors import InvalidServeConfigError
from app.core.graph_mode import CudagraphMode
from app.core.graph_rules import check_compilation, downgrade_warning, resolved_mode
from app.core.hf_config.registry import is_pooling_architecture, unnamed_architecture
from app.core.kv import DEFAULT_HYBRID_ALIGN, HybridAlign
from app.core.quant_shards import (
    activation_dtype,
    check_awq_shards,
    check_fp8_block_shards,
    check_wna16_shards,
)
from app.core.specs import GIB, KV_CACHE_DTYPES, DeviceSpec, LayerKind, ModelSpec, ServeConfig
from app.core.text import Text
from app.core.version_types import BatchTier
from app.core.versions import (
    SMALL_DEVICE_MAX_NUM_BATCHED_TOKENS,
    SMALL_DEVICE_MAX_NUM_SEQS,
    VersionRules,
    default_chunked_prefill,
)


@dataclass(frozen=True)
class ResolvedFlags:
    """The flags after vLLM's defaults for this version and device have been applied."""

    max_model_len: int
    gpu_memory_utilization: float
    max_num_seqs: int
    max_num_batched_tokens: int
    prefix_caching: bool
    chunked_prefill: bool
    choice: BackendChoice  # the attention backend vLLM picks: its name, block size and the KV dtype it runs
    hybrid: HybridAlign = DEFAULT_HYBRID_ALIGN  # a hybrid model's block alignment (backends.hybrid_align)
    # the cudagraph_mode the start-up captures, after vLLM lowers what a backend cannot take (graph_rules)
    cudagraph_mode: CudagraphMode | None = None


def serve_as_run(*, serve: ServeConfig, flags: ResolvedFlags) -> ServeConfig:
    """``serve`` with the KV cache dtype the chosen backend actually runs (BackendChoice.kv_cache_dtype)."""
    update: dict[str, object] = {}
    runs = flags.choice.kv_cache_dtype
    if runs is not None and runs != serve.kv_cache_dtype:
        update["kv_cache_dtype"] = runs
    if flags.cudagraph_mode is not None and flags.cudagraph_mode != serve.cudagraph_mode:
        update["cudagraph_mode"] = (
            flags.cudagraph_mode
        )  # the mode vLLM lowered it to (graph_rules.resolved_mode)
    return serve.model_copy(update=update) if update else serve


def batch_tier(*, device: DeviceSpec, rules: VersionRules) -> BatchTier | None:
    """The first of this version's `get_batch_defaults` tiers the device falls in (versions.py)."""
    for tier in rules.batch_tiers:
        if device.memory_total_bytes < tier.min_device_gib * GIB:
            continue
        if tier.excluded_names and any(word in device.name.lower() for word in tier.excluded_names):
            continue
        if device.compute_capability in tier.excluded_capabilities:
            continue
        return tier
    return None


def default_max_num_seqs(*, device: DeviceSpec, rules: VersionRules) -> int:
    """`vllm serve`'s --max-num-seqs when not given: the device's batch tier, else 256 (reference §7).

    E.g. under 0.33.0 an H100 80 GB (79.10 GiB reported) is in the >= 70 GiB tier: 1,024; an A100 80 GB
    is excluded from it by name: 256; under 0.6.6 (no tiers) every device: 256.
    """
    tier = batch_tier(device=device, rules=rules)
    return tier.max_num_seqs if tier else SMALL_DEVICE_MAX_NUM_SEQS


def default_max_num_batched_tokens(
    *, device: DeviceSpec, rules: VersionRules, max_model_len: int, max_num_seqs: int, chunked_prefill: bool
) -> int:
    """`vllm serve` (API server) defaults, reference §7: the tier's tokens (else 2,048); without chunked
    prefill at least max_model_len (a whole prompt is one batch); never above max_num_seqs x max_model_len.

    E.g. an H100 under 0.33.0 (1,024 sequences) at max_model_len 32,768: 8,192 with chunked prefill,
    max(32,768, 8,192) = 32,768 without.
    """
    tier = batch_tier(device=device, rules=rules)
    value = tier.max_num_batched_tokens if tier else SMALL_DEVICE_MAX_NUM_BATCHED_TOKENS
    if not chunked_prefill:
        value = max(max_model_len, value)
    return min(max_num_seqs * max_model_len, value)


def batch_flags(
    *, serve: ServeConfig, device: DeviceSpec, rules: VersionRules, max_model_len: int, max_num_seqs: int
) -> tuple[bool, int]:
    """--enable-chunked-prefill and --max-num-batched-tokens as vLLM runs them at ``max_model_len``: the
    user's values, else this release's defaults (the batched tokens depend on the chunking).

    E.g. an H100 with no flags: under 0.33.0 at 32,768 tokens and 1,024 sequences (True, 8,192); under
    0.6.6 at 8,192 tokens and 256 sequences (False, 8,192): no chunking, so one whole prompt per batch.
    """
    chunked = serve.enable_chunked_prefill
    if chunked is None:
        chunked = default_chunked_prefill(rules, max_model_len=max_model_len)
    tokens = serve.max_num_batched_tokens or default_max_num_batched_tokens(
        device=device,
        rules=rules,
        max_model_len=max_model_len,
        max_num_seqs=max_num_seqs,
        chunked_prefill=chunked,
    )
    return chunked, tokens


def validate_devices(*, serve: ServeConfig, devices: int | None) -> None:
    """TP × PP ranks need as many devices: with fewer, vLLM refuses before loading anything
    (config/parallel.py, 0.19.0–0.33.0: "World size (8) is larger than the number of available GPUs
    (4) in this node."). ``devices`` None: one replica's worth is assumed, nothing to check."""
    ranks = serve.ranks
    if devices is not None and devices < ranks:
        raise InvalidServeConfigError(
            "devices",
            Text(
                "TP × PP = {ranks} ranks need {ranks} devices and {devices} are given: vLLM refuses to start (World size ({ranks}) is larger than the number of available GPUs ({devices}) in this node). Lower --tensor-parallel-size or --pipeline-parallel-size, or give more devices.",
                ranks=ranks,
                devices=devices,
            ),
        )


def validate_parallel(
    *, model: ModelSpec, serve: ServeConfig, device: DeviceSpec, rules: VersionRules
) -> None:
    """vLLM's refusals of a TP / PP size for this model under ``rules``' release (heads, KV heads, quantized
    weights it cannot split: quant_shards.py); the planner and the recommender share it."""
    tp, pp = serve.tensor_parallel_size, serve.pipeline_parallel_size
    if model.num_attention_heads % tp:
        raise InvalidServeConfigError(
            "tensor_parallel_size",
            Text(
                "{tp} does not divide the {num_attention_heads} attention heads of {name}",
                tp=tp,
                num_attention_heads=model.num_attention_heads,
                name=model.name,
            ),
        )
    if model.mla is None:
        kv = model.num_kv_heads
        if (kv >= tp and kv % tp) or (kv < tp and tp % kv):
            raise InvalidServeConfigError(
                "tensor_parallel_size",
                Text(
                    "{tp} and the {kv} KV heads of {name} do not divide each other",
                    tp=tp,
                    kv=kv,
                    name=model.name,
                ),
            )
    check_awq_shards(model=model, tensor_parallel_size=tp, rules=rules)
    check_fp8_block_shards(
        model=model, tensor_parallel_size=tp, expert_parallel=serve.enable_expert_parallel, rules=rules
    )
    act_dtype = activation_dtype(
        act_dtype=serving_dtype(model=model, serve=serve), dtype_flag=serve.dtype, device=device
    )
    check_wna16_shards(model=model, tensor_parallel_size=tp, act_dtype=act_dtype, device=device, rules=rules)
    if pp > model.num_layers:
        raise InvalidServeConfigError(
            "pipeline_parallel_size",
            Text("{pp} stages for {num_layers} layers", pp=pp, num_layers=model.num_layers),
        )


def model_for_release(*, model: ModelSpec, rules: VersionRules) -> ModelSpec:
    """The model with the derived maximum length of ``rules``' release (its yarn rule), and the architecture the
    release gives a config.json without one (registry.unnamed_architecture: "llama" -> "LlamaModel", 0.30+)."""
    derived = model.max_model_len_for(yarn_scales_max_len=rules.yarn_scales_max_len)
    update: dict[str, object] = (
        {} if derived == model.max_model_len_derived else {"max_model_len_derived": derived}
    )
    if not model.architecture and rules.transformers_fallback:
        named = unnamed_architecture(model_type=model.model_type, release=rules.version)
        update |= {"architecture": named} if named else {}
    return model.model_copy(update=update) if update else model


def default_max_model_len(*, model: ModelSpec, rules: VersionRules) -> int:
    """The length vLLM serves when --max-model-len is not given (LongRoPE: original, 0.14+)."""
    return model.default_max_model_len_for(
        yarn_scales_max_len=rules.yarn_scales_max_len,
        longrope_default_original=rules.longrope_default_original,
    )


def default_prefix_caching(*, model: ModelSpec, rules: VersionRules) -> bool:
    """`--enable-prefix-caching` when not given (ModelConfig.is_prefix_caching_supported): on in V1, but off
    for attention-free Mamba models, and for hybrids (attention + Mamba) before 0.26 (versions.py).

    E.g. AI21-Jamba-1.5-Mini (attention + Mamba): off in 0.6.6 (V0) and 0.24.0, on in 0.26.0 and 0.33.0;
    a pooling model on a hybrid (ColQwen3_5 on Qwen3.5) off in every release (config/model.py
    is_prefix_caching_supported: pooling models only when decoder-only).
    """
    if not rules.prefix_caching_default or not layers.has_kind(model, LayerKind.MAMBA):
        return rules.prefix_caching_default
    if layers.fold(model).kinds() <= {LayerKind.MAMBA, LayerKind.NONE}:
        return False  # "Attention free models do not support prefix caching"
    if is_pooling_architecture(model.architecture):
        # "vllm currently does not have pooling models using hybrid ... attn types": False (0.26.0-0.33.0)
        return False
    return rules.hybrid_prefix_caching_default


def resolve(
    *, model: ModelSpec, device: DeviceSpec, serve: ServeConfig, rules: VersionRules
) -> tuple[ResolvedFlags, list[str], list[str]]:
    """The flags as vLLM runs them, with the backend's log lines and warnings.

    E.g. Llama-3.1-8B on one H100 with no flags: under 0.33.0 max_model_len 131,072, utilization 0.92,
    1,024 sequences, 8,192 batched tokens, prefix caching and chunked prefill on, FLASH_ATTN with 16-token
    blocks; under 0.6.6 utilization 0.9, 256 sequences, 2,048 tokens, prefix caching off, chunked prefill
    on (131,072 > 32,768).
    """
    extensible_kv.check_requested(rules=rules, device=device, serve=serve)
    max_model_len = serve.max_model_len or default_max_model_len(model=model, rules=rules)
    util = serve.gpu_memory_utilization or extensible_kv.default_utilization(
        rules=rules, device=device, serve=serve, fallback=rules.default_gpu_memory_utilization
    )
    prefix = serve.enable_prefix_caching
    if prefix is None:
        prefix = default_prefix_caching(model=model, rules=rules)
    max_num_seqs = serve.max_num_seqs or default_max_num_seqs(device=device, rules=rules)
    chunked, max_num_batched_tokens = batch_flags(
        serve=serve, device=device, rules=rules, max_model_len=max_model_len, max_num_seqs=max_num_seqs
    )
    check_compilation(serve=serve, rules=rules, max_num_batched_tokens=max_num_batched_tokens)
    backend = resolve_backend(
        model=model, device=device, serve=serve, rules=rules, prefix_caching=prefix, chunked_prefill=chunked
    )
    graphs = resolved_mode(
        serve=serve, rules=rules, model=model, backend=backend.name, platform=device.platform, sm=device.sm
    )
    note = downgrade_warning(graphs, rules=rules)
    return (
        ResolvedFlags(
            cudagraph_mode=graphs.mode if graphs.mode != graphs.asked else None,
            max_model_len=max_model_len,
            gpu_memory_utilization=util,
            max_num_seqs=max_num_seqs,
            max_num_batched_tokens=max_num_batched_tokens,
            prefix_caching=prefix,
            chunked_prefill=chunked,
            choice=backend,
            hybrid=hybrid_align(
                model=model, device=device, rules=rules, choice=backend, prefix_caching=prefix
            ),
        ),
        [*backend.log_lines, *graphs.log_lines],
        [*backend.warnings, *([note] if note else [])],
    )


GLM_DSA_ARCHITECTURES = frozenset({"GlmMoeDsaForCausalLM"})
SM100_FAMILY = 10  # is_device_capability_family(100): capability 10.x


def checkpoint_kv_cache_dtype(
    *, model: ModelSpec, serve: ServeConfig, rules: VersionRules, device: DeviceSpec | None = None
) -> tuple[str, bool] | None:
    """(the KV dtype `--kv-cache-dtype auto` resolves to, whether it came from the checkpoint's quantization
    config) when this release changes it (versions.py), else None: the checkpoint's declared dtype, or a
    model's own default (GLM-MoE-DSA on SM10x). An NVFP4 KV cache is not sized here: None (the caller warns)."""
    quant = model.quantization
    if serve.kv_cache_dtype != "auto":
        return None
    if (
        model.architecture in GLM_DSA_ARCHITECTURES
        and rules.glm_dsa_fp8_kv_on_sm100
        and device is not None
        and device.platform == "cuda"
        and (device.sm or 0) // 10 == SM100_FAMILY
    ):
        return "fp8_e4m3", False  # models/config.py GlmMoeDsaForCausalLM (0.32+)
    if quant is None or quant.kv_cache_dtype is None:
        return None
    if quant.source_name == "compressed-tensors":
        honoured = rules.checkpoint_kv_dtype_compressed_tensors
    else:
        honoured = rules.checkpoint_kv_dtype_modelopt
    if not honoured or quant.kv_cache_dtype not in KV_CACHE_DTYPES:
        return None
    return quant.kv_cache_dtype, True
