"""One call from (model, device, `vllm serve` flags, vLLM version) to everything vLLM would print."""

from __future__ import annotations

from dataclasses import dataclass

from app.core import budget as B
from app.core import equations as E
from app.core import extras as X
from app.core import kv as K
from app.core.backends import hybrid_align, resolve_backend
from app.core.errors import InvalidServeConfigError
from app.core.hf_config.registry import check_architecture
from app.core.result import ErrorKind, Estimate, KVGroup, Range, Term, Verdict
from app.core.specs import DTYPE_BYTES, GIB, KV_CACHE_DTYPES, DeviceSpec, LayerKind, ModelSpec, ServeConfig
from app.core.text import Text
from app.core.uncertainty import CUDA_GRAPH_BAND, bands_for
from app.core.versions import (
    SMALL_DEVICE_MAX_NUM_BATCHED_TOKENS,
    SMALL_DEVICE_MAX_NUM_SEQS,
    V0_DEFAULT_SWAP_GIB,
    BatchTier,
    ResolvedVersion,
    VersionRules,
    default_chunked_prefill,
    format_gib,
    resolve_version,
    rules_for,
)
from app.core.versions import V0_CHUNKED_PREFILL_ABOVE as V0_CHUNKED_PREFILL_ABOVE  # recommend.py reads it
from app.core.vllm_text import mamba_blocks_error

MAX_MODEL_LEN_CEILING = 10_000_000
DOCS_URL = "https://docs.vllm.ai/en/latest/configuration/conserving_memory/"
# The shortest context still worth serving: one prefill chunk at vLLM's smallest API-server default
# --max-num-batched-tokens (reference §7). A pool that holds less is "budget-bound", not "S-bound".
USEFUL_CONTEXT_TOKENS = 2048
# failures that do not depend on max_model_len (the capacity curve cannot reuse one estimate's pool)
ALWAYS_FAILS = frozenset({ErrorKind.STARTUP_FREE_MEMORY, ErrorKind.LOAD_OOM})


@dataclass(frozen=True)
class Resolved:
    """The flags after vLLM's defaults for this version and device have been applied."""

    max_model_len: int
    gpu_memory_utilization: float
    max_num_seqs: int
    max_num_batched_tokens: int
    prefix_caching: bool
    chunked_prefill: bool
    block_size: int
    backend: str
    hybrid: K.HybridAlign = K.DEFAULT_HYBRID_ALIGN  # a hybrid model's block alignment (backends.hybrid_align)


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
    tier = batch_tier(device=device, rules=rules)
    return tier.max_num_seqs if tier else SMALL_DEVICE_MAX_NUM_SEQS


def default_max_num_batched_tokens(
    *, device: DeviceSpec, rules: VersionRules, max_model_len: int, max_num_seqs: int, chunked_prefill: bool
) -> int:
    """`vllm serve` (API server) defaults, reference §7."""
    tier = batch_tier(device=device, rules=rules)
    value = tier.max_num_batched_tokens if tier else SMALL_DEVICE_MAX_NUM_BATCHED_TOKENS
    if not chunked_prefill:
        value = max(max_model_len, value)
    return min(max_num_seqs * max_model_len, value)


def validate_parallel(*, model: ModelSpec, serve: ServeConfig) -> None:
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
    if pp > model.num_layers:
        raise InvalidServeConfigError(
            "pipeline_parallel_size",
            Text("{pp} stages for {num_layers} layers", pp=pp, num_layers=model.num_layers),
        )


def model_for_release(*, model: ModelSpec, rules: VersionRules) -> ModelSpec:
    """The model with the derived maximum length of ``rules``' release (its yarn rule)."""
    derived = model.max_model_len_for(yarn_scales_max_len=rules.yarn_scales_max_len)
    if derived == model.max_model_len_derived:
        return model
    return model.model_copy(update={"max_model_len_derived": derived})


def default_max_model_len(*, model: ModelSpec, rules: VersionRules) -> int:
    """The length vLLM serves when --max-model-len is not given (LongRoPE: original, 0.14+)."""
    return model.default_max_model_len_for(
        yarn_scales_max_len=rules.yarn_scales_max_len,
        longrope_default_original=rules.longrope_default_original,
    )


def default_prefix_caching(*, model: ModelSpec, rules: VersionRules) -> bool:
    """`--enable-prefix-caching` when not given (ModelConfig.is_prefix_caching_supported): on in V1, but off
    for attention-free Mamba models, and for hybrids (attention + Mamba) before 0.26 (versions.py)."""
    if not rules.prefix_caching_default or LayerKind.MAMBA not in model.layer_kinds:
        return rules.prefix_caching_default
    if all(kind in (LayerKind.MAMBA, LayerKind.NONE) for kind in model.layer_kinds):
        return False  # "Attention free models do not support prefix caching"
    return rules.hybrid_prefix_caching_default


def resolve(
    *, model: ModelSpec, device: DeviceSpec, serve: ServeConfig, rules: VersionRules
) -> tuple[Resolved, list[str], list[str]]:
    max_model_len = serve.max_model_len or default_max_model_len(model=model, rules=rules)
    util = serve.gpu_memory_utilization or rules.default_gpu_memory_utilization
    chunked = serve.enable_chunked_prefill
    if chunked is None:
        chunked = default_chunked_prefill(rules, max_model_len=max_model_len)
    prefix = serve.enable_prefix_caching
    if prefix is None:
        prefix = default_prefix_caching(model=model, rules=rules)
    mns = serve.max_num_seqs or default_max_num_seqs(device=device, rules=rules)
    mnbt = serve.max_num_batched_tokens or default_max_num_batched_tokens(
        device=device, rules=rules, max_model_len=max_model_len, max_num_seqs=mns, chunked_prefill=chunked
    )
    backend = resolve_backend(
        model=model, device=device, serve=serve, rules=rules, prefix_caching=prefix, chunked_prefill=chunked
    )
    return (
        Resolved(
            max_model_len=max_model_len,
            gpu_memory_utilization=util,
            max_num_seqs=mns,
            max_num_batched_tokens=mnbt,
            prefix_caching=prefix,
            chunked_prefill=chunked,
            block_size=backend.block_size,
            backend=backend.name,
            hybrid=hybrid_align(
                model=model, device=device, rules=rules, choice=backend, prefix_caching=prefix
            ),
        ),
        backend.log_lines,
        backend.warnings,
    )


@dataclass(frozen=True)
class Stage:
    index: int
    layout: K.KVLayout
    weights_bytes: int
    activation_peak_bytes: int
    non_torch_bytes: int
    cuda_graph_bytes: int
    kv_cache_bytes: int
    num_blocks: int
    extras: X.StageExtras = X.NO_EXTRAS


def _stages(
    *,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    rules: VersionRules,
    res: Resolved,
    requested: int,
) -> list[Stage]:
    pp = serve.pipeline_parallel_size
    dtype = B.serving_dtype(model=model, serve=serve)
    ranges = K.stage_layer_ranges(num_layers=model.num_layers, pipeline_parallel_size=pp)
    quant = model.quantization
    stages = []
    for i, layer_range in enumerate(ranges):
        is_first, is_last = i == 0, i == pp - 1
        layout = K.build_layout(
            model=model,
            layer_range=layer_range,
            tensor_parallel_size=serve.tensor_parallel_size,
            block_size=res.block_size,
            kv_cache_dtype=serve.kv_cache_dtype,
            model_dtype=dtype,
            rules=rules,
            hybrid=res.hybrid,
        )
        extra = X.stage_extras(
            model=model,
            serve=serve,
            rules=rules,
            layout=layout,
            layer_range=layer_range,
            is_first=is_first,
            is_last=is_last,
            model_dtype=dtype,
            max_num_batched_tokens=res.max_num_batched_tokens,
        )
        layout = X.with_draft_kv(layout, extra)
        weights = extra.weights_delta_bytes + B.weights_bytes_for_stage(
            model=model,
            serve=serve,
            layer_range=layer_range,
            is_first=is_first,
            is_last=is_last,
            quant=quant,
            device=device,
        )
        act = B.activation_peak_bytes(
            model=model,
            serve=serve,
            max_num_batched_tokens=res.max_num_batched_tokens,
            max_num_seqs=res.max_num_seqs,
            is_last_stage=is_last,
            sampler_logit_copies=rules.sampler_logit_copies,
            act_dtype_bytes=DTYPE_BYTES[dtype],
        )
        non_torch = B.non_torch_bytes(
            tensor_parallel_size=serve.tensor_parallel_size, pipeline_parallel_size=pp
        )
        graphs = B.cuda_graph_bytes(
            num_layers_on_rank=layer_range[1] - layer_range[0],
            max_num_seqs=res.max_num_seqs,
            enforce_eager=serve.enforce_eager or device.platform not in ("cuda", "rocm"),
        )
        if serve.kv_cache_memory_bytes is not None:
            kv_bytes = serve.kv_cache_memory_bytes
        else:
            kv_bytes = requested - weights - act - non_torch
            if rules.cuda_graph_budgeted and device.platform in ("cuda", "rocm"):
                kv_bytes -= graphs
        stages.append(
            Stage(
                index=i,
                layout=layout,
                weights_bytes=weights,
                activation_peak_bytes=act,
                non_torch_bytes=non_torch,
                cuda_graph_bytes=graphs,
                kv_cache_bytes=kv_bytes,
                num_blocks=K.num_blocks_for(available_bytes=kv_bytes, layout=layout),
                extras=extra,
            )
        )
    return stages


def _inflight_tokens(*, rules: VersionRules, max_num_batched_tokens: int, pipeline_parallel_size: int) -> int:
    if rules.inflight_uses_batches:
        # async scheduling + V2 runner: max_concurrent_batches = pp + 1 (reference §3.3)
        return (pipeline_parallel_size + 1) * max_num_batched_tokens
    return max_num_batched_tokens


def _error_text(
    *,
    rules: VersionRules,
    kind: str,
    max_model_len: int,
    needed: int,
    available: int,
    estimated: int,
    tokens_capacity: int,
) -> str:
    """The exact startup error text of this version (reference §4.4)."""
    gib = rules.format_gib_style
    style = rules.error_style
    if style == "v0":
        if kind == "no_memory":
            return (
                "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
                "initializing the engine."
            )
        return (
            f"The model's max seq len ({max_model_len}) is larger than the maximum number of tokens that can be "
            f"stored in KV cache ({tokens_capacity}). Try increasing `gpu_memory_utilization` or decreasing "
            "`max_model_len` when initializing the engine."
        )
    if kind == "no_memory":
        text = "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine"
        if style == "v1_027":
            return text + (
                " (this flag also controls CPU memory reservation on the CPU backend, despite its name). "
                f"See {DOCS_URL} for more details."
            )
        if style == "v1_014":
            return text + f". See {DOCS_URL} for more details."
        return text + "."
    models = "model's" if style == "v1_027" else "models's"
    head = (
        f"To serve at least one request with the {models} max seq len ({max_model_len}), "
        f"({format_gib(needed, gib)} GiB KV cache is needed, which is larger than the available KV cache memory "
        f"({format_gib(available, gib)} GiB)."
    )
    if style == "v1_085":
        middle = " Based on the available memory,  Try increasing" if estimated > 0 else "  Try increasing"
        return (
            head
            + middle
            + " `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."
        )
    est = (
        f" Based on the available memory, the estimated maximum model length is {estimated}."
        if estimated > 0
        else " "
    )
    if style == "v1_010":
        return (
            head
            + est
            + " Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."
        )
    if style == "v1_014":
        return (
            head
            + est
            + " Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing "
            f"the engine. See {DOCS_URL} for more details."
        )
    return (
        head
        + est
        + " Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) "
        f"or decreasing `max_model_len` when initializing the engine. See {DOCS_URL} for more details."
    )


def _starts(
    *, rules: VersionRules, layout: K.KVLayout, kv_cache_bytes: int, needed: int, max_model_len: int
) -> bool:
    """This version's start-up capacity check for one request of max_model_len (reference §3.6, §4.4):
    V0 compares tokens (blocks x B) with the length; V1 compares the bytes a request needs with the pool,
    less the null block from 0.30."""
    if rules.engine == "v0":
        blocks = K.num_blocks_for(available_bytes=kv_cache_bytes, layout=layout)
        return blocks > 0 and blocks * layout.block_size >= max_model_len
    null_block = layout.bytes_per_block if rules.null_block_in_check else 0
    return kv_cache_bytes > 0 and needed <= kv_cache_bytes - null_block


def _mamba_blocks_error(
    *,
    rules: VersionRules,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    res: Resolved,
    num_blocks: int,
) -> str | None:
    """0.20.2+ CompilationConfig.resolve_cudagraph_mode_and_sizes, at CUDA-graph capture (after the KV pool is
    allocated): with full CUDA graphs (the default FULL_AND_PIECEWISE; none under --enforce-eager) a model with
    Mamba layers needs one block per decode sequence, so max_num_seqs above the pool's num_blocks is refused."""
    if not rules.mamba_block_check or serve.enforce_eager or device.platform not in ("cuda", "rocm"):
        return None
    if LayerKind.MAMBA not in model.layer_kinds or res.max_num_seqs <= num_blocks:
        return None
    return mamba_blocks_error(max_num_seqs=res.max_num_seqs, num_blocks=num_blocks)


def _free_memory_error(*, rules: VersionRules, device: DeviceSpec, util: float, requested: int) -> str | None:
    """The 0.10.2+ start-up check: free memory at the snapshot must cover total x utilization."""
    if not rules.free_memory_check:
        return None
    total = device.memory_total_bytes
    free = total - B.CUDA_CONTEXT_BYTES
    if free >= requested:
        return None
    where = rules.free_memory_device
    return (
        f"Free memory on {where}({free / GIB:.2f}/{total / GIB:.2f} GiB) on startup is less than desired GPU memory "
        f"utilization ({util}, {requested / GIB:.2f} GiB). Decrease GPU memory utilization or reduce GPU memory used "
        "by other processes."
    )


def _log_lines(
    *,
    rules: VersionRules,
    device: DeviceSpec,
    stage: Stage,
    res: Resolved,
    requested: int,
    num_blocks: int,
    kv_tokens: int | None,
    concurrency: float,
    cpu_blocks: int,
    backend_lines: list[str],
) -> list[str]:
    gib = rules.format_gib_style
    lines = list(backend_lines)
    w = stage.weights_bytes
    if rules.weights_log == "took_gb":
        lines.append(f"Loading model weights took {w / GIB:.4f} GB")
    elif rules.weights_log == "took_gib":
        lines.append(f"Model loading took {w / GIB:.4f} GiB and … seconds")
    else:
        lines.append(f"Model loading took {format_gib(w, gib)} GiB memory and … seconds")
    L = res.max_model_len
    if rules.engine == "v0":
        total = device.memory_total_bytes
        lines.append(
            "Memory profiling takes … seconds\n"
            f"the current vLLM instance can use total_gpu_memory ({total / GIB:.2f}GiB) x gpu_memory_utilization "
            f"({res.gpu_memory_utilization:.2f}) = {requested / GIB:.2f}GiB\n"
            f"model weights take {w / GIB:.2f}GiB; non_torch_memory takes {stage.non_torch_bytes / GIB:.2f}GiB; "
            f"PyTorch activation peak memory takes {stage.activation_peak_bytes / GIB:.2f}GiB; the rest of the memory "
            f"reserved for KV Cache is {stage.kv_cache_bytes / GIB:.2f}GiB."
        )
        word = "GPU" if rules.v0_blocks_word == "GPU" else device.platform
        lines.append(f"# {word} blocks: {num_blocks}, # CPU blocks: {cpu_blocks}")
        lines.append(f"Maximum concurrency for {L} tokens per request: {concurrency:.2f}x")
        return lines
    if rules.cuda_graph_budgeted and stage.cuda_graph_bytes > 0:
        total = device.memory_total_bytes
        u = res.gpu_memory_utilization
        ratio = stage.cuda_graph_bytes / total
        lines.append(f"Estimated CUDA graph memory: {stage.cuda_graph_bytes / GIB:.2f} GiB total")
        lines.append(
            "CUDA graph memory profiling is enabled (default since v0.21.0). The current "
            f"--gpu-memory-utilization={u:.4f} is equivalent to --gpu-memory-utilization={round(u - ratio, 4):.4f} "
            "without CUDA graph memory profiling. To maintain the same effective KV cache size as before, increase "
            f"--gpu-memory-utilization to {min(round(u + ratio, 4), 1.0):.4f}. To disable, set "
            "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0."
        )
    if rules.budget_style == "v1_profile":
        if rules.format_gib_style == "fixed2":
            lines.append(f"Available KV cache memory: {stage.kv_cache_bytes / GIB:.2f} GiB")
        else:
            lines.append(f"Available KV cache memory: {format_gib(stage.kv_cache_bytes, gib)} GiB")
    if kv_tokens is not None:
        prefix = (
            "NPU"
            if device.platform == "npu"
            else ("GPU" if device.platform in ("cuda", "rocm") else device.platform.upper())
        )
        if rules.merged_capacity_line:
            lines.append(
                f"{prefix} KV cache size: {kv_tokens:,} tokens, Maximum concurrency for {L:,} tokens per request: "
                f"{concurrency:.2f}x"
            )
        else:
            lines.append(f"GPU KV cache size: {kv_tokens:,} tokens")
            lines.append(f"Maximum concurrency for {L:,} tokens per request: {concurrency:.2f}x")
    if stage.cuda_graph_bytes > 0:
        lines.append(f"Graph capturing finished in … secs, took {stage.cuda_graph_bytes / GIB:.2f} GiB")
    return lines


def estimate(
    *,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    vllm_version: str | None = None,
    target_concurrency: int | None = None,
    max_model_len_auto: bool = False,
) -> Estimate:
    """Predict vLLM's start-up numbers for one configuration (per device of the tightest rank).

    ``max_model_len_auto`` is `--max-model-len auto` (0.14+): vLLM binary-searches the largest length
    that fits the KV pool, up to the model's own maximum, and logs what it did (reference §3.6, §4.3).
    """
    version = resolve_version(vllm_version)
    rules = version.rules
    model = model_for_release(model=model, rules=rules)
    resolved_kv = checkpoint_kv_cache_dtype(model=model, serve=serve, rules=rules, device=device)
    if resolved_kv is not None:
        serve = serve.model_copy(update={"kv_cache_dtype": resolved_kv[0]})
    if max_model_len_auto and rules.has_auto_fit:
        est = _auto_fit(model=model, device=device, serve=serve, rules=rules, target=target_concurrency)
    else:
        est = _estimate(
            model=model, device=device, serve=serve, rules=rules, target_concurrency=target_concurrency
        )
    if resolved_kv is not None and resolved_kv[1]:
        est = est.model_copy(update={"kv_cache_dtype_from_checkpoint": True})
    quant = model.quantization
    if quant is not None and quant.kv_cache_dtype == "nvfp4" and serve.kv_cache_dtype == "auto":
        note = Text(
            "The checkpoint declares an NVFP4 KV cache, which vLLM uses under --kv-cache-dtype auto where a "
            "backend takes it (FlashInfer on SM100); the planner does not size NVFP4 KV and shows the model dtype."
        )
        est = est.model_copy(update={"warnings": [*est.warnings, note]})
    return _as_requested(est, version)


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


def _as_requested(est: Estimate, version: ResolvedVersion) -> Estimate:
    """The estimate under the version the user gave (its bracket's rules did the work)."""
    if version.requested == est.vllm_version and not version.note:
        return est
    warnings = [version.note, *est.warnings] if version.note else est.warnings
    return est.model_copy(update={"vllm_version": version.requested, "warnings": warnings})


def _auto_fit(
    *, model: ModelSpec, device: DeviceSpec, serve: ServeConfig, rules: VersionRules, target: int | None
) -> Estimate:
    full = default_max_model_len(model=model, rules=rules)  # -1 starts from the default length
    probe = _estimate(
        model=model,
        device=device,
        serve=serve.model_copy(update={"max_model_len": full}),
        rules=rules,
        target_concurrency=target,
    )
    if probe.error_kind in (ErrorKind.STARTUP_FREE_MEMORY, ErrorKind.LOAD_OOM):
        return probe
    largest = probe.estimated_max_model_len or 0
    gib = format_gib(probe.kv_cache_bytes, rules.format_gib_style)
    new_style = rules.autofit_log == "kv_cache_memory"
    if largest <= 0:
        text = (
            "Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single token. "
            "Try increasing `gpu_memory_utilization`."
        )
        return probe.model_copy(
            update={
                "fits": False,
                "error": text,
                "verdict": "budget_bound",
                "log_lines": [*probe.log_lines[:-1], text] if probe.error else [*probe.log_lines, text],
            }
        )
    length = min(largest, full)
    if length >= full:
        line = (
            (
                f"Auto-fit max_model_len: full model context length {full} fits in available KV cache memory "
                f"({gib} GiB GPU)"
            )
            if new_style
            else (f"Auto-fit max_model_len: full model context length {full} fits in available GPU memory")
        )
    else:
        line = (
            (
                f"Auto-fit max_model_len: reduced from {full} to {length} to fit in available KV cache memory "
                f"({gib} GiB GPU)"
            )
            if new_style
            else (
                f"Auto-fit max_model_len: reduced from {full} to {length} to fit in available GPU memory "
                f"({gib} GiB available for KV cache)"
            )
        )
    fitted = _estimate(
        model=model,
        device=device,
        serve=serve.model_copy(update={"max_model_len": length}),
        rules=rules,
        target_concurrency=target,
    )
    return fitted.model_copy(update={"log_lines": [line, *fitted.log_lines]})


def _estimate(
    *,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    rules: VersionRules,
    target_concurrency: int | None,
) -> Estimate:
    validate_parallel(model=model, serve=serve)
    res, backend_lines, warnings = resolve(model=model, device=device, serve=serve, rules=rules)
    warnings = list(warnings) + check_architecture(
        architecture=model.architecture, model_type=model.model_type, version=rules.version_tuple
    )
    L = res.max_model_len
    too_long_error = long_max_model_len_error(
        rules=rules,
        max_model_len=L,
        derived=model.max_model_len_derived,
        allowed=serve.allow_long_max_model_len,
    )
    if model.max_model_len_derived < L and too_long_error is None:
        warnings.append(
            Text(
                "max_model_len {l:,} is above the model's derived maximum ({max_model_len_derived:,}): VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 lets vLLM start, but outputs past the trained context may be wrong.",
                l=L,
                max_model_len_derived=model.max_model_len_derived,
            )
        )
    total = device.memory_total_bytes
    requested = B.requested_bytes(
        total_bytes=total, utilization=res.gpu_memory_utilization, use_ceil=rules.requested_uses_ceil
    )
    stages = _stages(model=model, device=device, serve=serve, rules=rules, res=res, requested=requested)
    binding = min(stages, key=lambda s: (s.num_blocks, s.kv_cache_bytes))
    layout = binding.layout
    num_blocks = binding.num_blocks
    inflight = _inflight_tokens(
        rules=rules,
        max_num_batched_tokens=res.max_num_batched_tokens,
        pipeline_parallel_size=serve.pipeline_parallel_size,
    )

    concurrency = K.max_concurrency_for(
        num_blocks=num_blocks,
        layout=layout,
        max_model_len=L,
        inflight_tokens=inflight,
        prefix_caching=res.prefix_caching,
        rules=rules,
    )
    kv_tokens = K.kv_tokens_for(
        num_blocks=num_blocks, layout=layout, max_concurrency=concurrency, max_model_len=L, rules=rules
    )
    kv_tokens_value = num_blocks * layout.block_size if kv_tokens is None else kv_tokens

    # capacity check, as each version performs it on the binding worker
    check_memory = binding.kv_cache_bytes - (layout.bytes_per_block if rules.null_block_in_check else 0)
    needed = K.needed_bytes(
        layout=layout,
        max_model_len=L,
        inflight_tokens=inflight,
        prefix_caching=res.prefix_caching,
        rules=rules,
    )
    search_upper = max(L, model.max_model_len_derived)
    largest = K.estimate_max_model_len(
        available_bytes=max(0, check_memory),
        layout=layout,
        inflight_tokens=inflight,
        prefix_caching=res.prefix_caching,
        rules=rules,
        upper=min(search_upper, MAX_MODEL_LEN_CEILING),
    )
    # vLLM's checks in the order it runs them: the engine config, the free memory when the worker starts,
    # loading the weights, then the KV capacity after profiling
    error: str | None = too_long_error
    error_kind: ErrorKind | None = ErrorKind.MAX_LEN_ABOVE_DERIVED if error else None
    if error is None and (serve.kv_cache_memory_bytes is None or rules.free_memory_check_with_kv_bytes):
        error = _free_memory_error(
            rules=rules, device=device, util=res.gpu_memory_utilization, requested=requested
        )
        error_kind = ErrorKind.STARTUP_FREE_MEMORY if error else None
    if error is None:
        error = _load_oom_error(device=device, weights_bytes=max(s.weights_bytes for s in stages))
        error_kind = ErrorKind.LOAD_OOM if error else None
    fits_now = _starts(
        rules=rules, layout=layout, kv_cache_bytes=binding.kv_cache_bytes, needed=needed, max_model_len=L
    )
    if error is None and not fits_now:
        tokens_capacity = num_blocks * layout.block_size
        no_memory = num_blocks <= 0 if rules.engine == "v0" else binding.kv_cache_bytes <= 0
        error_kind = ErrorKind.NO_BLOCKS if no_memory else ErrorKind.MAX_LEN_TOO_LONG
        error = _error_text(
            rules=rules,
            kind="no_memory" if no_memory else "too_long",
            max_model_len=L,
            needed=needed,
            available=binding.kv_cache_bytes if rules.engine == "v0" else check_memory,
            # vLLM searches [1, L]; needed bytes grow with the length, so that answer is min(largest, L)
            estimated=0 if rules.engine == "v0" else min(largest, L),
            tokens_capacity=tokens_capacity,
        )

    if error is None:
        error = _mamba_blocks_error(
            rules=rules, model=model, device=device, serve=serve, res=res, num_blocks=num_blocks
        )
        error_kind = ErrorKind.MAMBA_BLOCKS if error else None

    cpu_blocks = 0
    if rules.swap_space_used and layout.bytes_per_block:
        swap = serve.swap_space_gib if serve.swap_space_gib is not None else V0_DEFAULT_SWAP_GIB
        cpu_blocks = int(swap * GIB) // layout.bytes_per_block
    lines = _log_lines(
        rules=rules,
        device=device,
        stage=binding,
        res=res,
        requested=requested,
        num_blocks=num_blocks,
        kv_tokens=kv_tokens,
        concurrency=concurrency,
        cpu_blocks=cpu_blocks,
        backend_lines=backend_lines,
    )
    if error_kind in (ErrorKind.MAX_LEN_ABOVE_DERIVED, ErrorKind.STARTUP_FREE_MEMORY):
        lines = [error or ""]  # refused before any weight is loaded
    elif error_kind == ErrorKind.LOAD_OOM:
        lines = [*backend_lines, error or ""]  # dies loading the weights: nothing is profiled
        warnings.append(
            Text(
                "The weights of one rank ({weights:.2f} GiB) are larger than the device ({total:.2f} GiB): vLLM runs out of memory while loading them, before it sizes any KV cache.",
                weights=binding.weights_bytes / GIB,
                total=total / GIB,
            )
        )
    elif error:
        lines.append(error)

    slack = total - requested
    if (
        not rules.cuda_graph_budgeted
        and binding.cuda_graph_bytes > slack - B.CUDA_CONTEXT_BYTES
        and not error
    ):
        warnings.append(
            Text(
                "vLLM {version} does not budget CUDA graphs: about {cuda_graph_bytes:.2f} GiB of graphs must fit in the {slack:.2f} GiB left outside gpu_memory_utilization; capture may OOM. Lower the utilization or use --enforce-eager.",
                version=rules.version,
                cuda_graph_bytes=binding.cuda_graph_bytes / GIB,
                slack=slack / GIB,
            )
        )
    if model.other_revision_kv_heads is not None and model.other_revision_kv_heads != model.num_kv_heads:
        warnings.append(
            Text(
                "Published copies of this model's config.json differ: this one declares {kv_heads} KV heads, others {other} (heads duplicated for model parallelism), which makes the KV cache per token {ratio:g}x as large. Check num_key_value_heads in the copy you serve, or paste its config.json.",
                kv_heads=model.num_kv_heads,
                other=model.other_revision_kv_heads,
                ratio=model.other_revision_kv_heads / model.num_kv_heads,
            )
        )
    if model.dtype_assumed:
        warnings.append(
            Text("config.json has no torch_dtype: read as float32 and served in 16 bits under --dtype auto.")
        )

    target = target_concurrency or 1
    verdict: Verdict
    if error is None and concurrency >= target:
        verdict = "fits"
    elif error is None:
        verdict = "n_bound"
    elif error_kind == ErrorKind.MAX_LEN_ABOVE_DERIVED:
        verdict = "s_bound"  # refused for the length alone
    elif error_kind == ErrorKind.MAMBA_BLOCKS:
        verdict = "n_bound"  # refused for the number of sequences: max_num_seqs above the Mamba blocks
    elif (
        binding.kv_cache_bytes > 0
        and largest >= min(L // 2, USEFUL_CONTEXT_TOKENS)
        and error_kind not in (ErrorKind.STARTUP_FREE_MEMORY, ErrorKind.LOAD_OOM)
    ):
        # the seed's step 4: the length binds when a shorter one worth serving starts (halving
        # --max-model-len is the quick test, vLLM's own estimate the exact one); the budget binds
        # only when the pool holds next to nothing
        verdict = "s_bound"
    else:
        verdict = "budget_bound"

    groups = [
        KVGroup(
            kind=str(g.kind),
            num_layers=g.num_layers,
            block_size=layout.block_size,
            page_size_bytes=g.page_size_bytes,
            blocks_per_request=b,
        )
        for g, b in zip(
            layout.groups,
            K.request_blocks(
                layout=layout, max_model_len=L, inflight_tokens=inflight, prefix_caching=res.prefix_caching
            ),
            strict=True,
        )
    ]
    ranges, borderline, safe_len = _ranges(
        model=model,
        device=device,
        rules=rules,
        res=res,
        stage=binding,
        inflight=inflight,
        fits=error is None,
        needed=needed,
        upper=min(search_upper, MAX_MODEL_LEN_CEILING),
    )
    kv_dtype_b = K.kv_dtype_bytes(
        kv_cache_dtype=serve.kv_cache_dtype, model_dtype=B.serving_dtype(model=model, serve=serve)
    )
    est = Estimate(
        model=model.name,
        device=device.id,
        vllm_version=rules.version,
        vllm_rules_version=rules.version,
        tensor_parallel_size=serve.tensor_parallel_size,
        pipeline_parallel_size=serve.pipeline_parallel_size,
        gpu_memory_utilization=res.gpu_memory_utilization,
        kv_cache_dtype=serve.kv_cache_dtype,
        kv_dtype_bytes_per_element=kv_dtype_b,
        max_num_seqs=res.max_num_seqs,
        max_num_batched_tokens=res.max_num_batched_tokens,
        attention_backend=res.backend,
        device_total_bytes=total,
        budget_bytes=requested,
        weights_bytes=binding.weights_bytes,
        activation_peak_bytes=binding.activation_peak_bytes,
        non_torch_bytes=binding.non_torch_bytes,
        cuda_graph_bytes=binding.cuda_graph_bytes,
        cuda_graph_budgeted=rules.cuda_graph_budgeted and device.platform in ("cuda", "rocm"),
        kv_cache_bytes=binding.kv_cache_bytes,
        unused_bytes=slack,
        kv_bytes_per_token=layout.kv_bytes_per_token,
        block_size=layout.block_size,
        bytes_per_block=layout.bytes_per_block,
        num_gpu_blocks=num_blocks,
        kv_tokens=kv_tokens_value,
        max_concurrency=round(concurrency, 2),
        max_model_len=L,
        groups=groups,
        fits=error is None,
        verdict=verdict,
        error=error,
        error_kind=error_kind,
        estimated_max_model_len=largest,
        log_lines=lines,
        warnings=warnings,
        terms=[],
        ranges=ranges,
        borderline=borderline,
        safe_max_model_len=safe_len,
        extras=list(binding.extras.items),
        host_memory_bytes=binding.extras.host_memory_bytes,
    )
    return est.model_copy(
        update={"terms": _terms(model=model, serve=serve, est=est, rules=rules, target=target)}
    )


def _ranges(
    *,
    model: ModelSpec,
    device: DeviceSpec,
    rules: VersionRules,
    res: Resolved,
    stage: Stage,
    inflight: int,
    fits: bool,
    needed: int,
    upper: int,
) -> tuple[dict[str, Range], bool, int]:
    """Low / expected / high for the modelled parts and for the exact numbers that follow from them."""
    calibrated = device.platform == "cuda" and rules.measured_parts_calibrated
    bands = bands_for(
        weights_bytes=stage.weights_bytes,
        activation_bytes=stage.activation_peak_bytes,
        cuda_graph_bytes=stage.cuda_graph_bytes,
        quantized=model.quantization is not None,
        calibrated=calibrated,
        cuda_graph_budgeted=rules.cuda_graph_budgeted,
    )
    layout = stage.layout

    def span(value: int, width: int) -> Range:
        return Range(low=max(0, value - width), expected=value, high=value + width)

    kv = stage.kv_cache_bytes
    kv_low, kv_high = kv - bands.kv_delta, kv + bands.kv_delta
    out = {
        "weights_bytes": span(stage.weights_bytes, bands.weights),
        "activation_peak_bytes": span(stage.activation_peak_bytes, bands.activation),
        "non_torch_bytes": span(stage.non_torch_bytes, bands.non_torch),
        "cuda_graph_bytes": span(stage.cuda_graph_bytes, CUDA_GRAPH_BAND.width(stage.cuda_graph_bytes)),
        "kv_cache_bytes": Range(low=kv_low, expected=kv, high=kv_high),
    }
    L = res.max_model_len
    per_group = K.request_blocks(
        layout=layout, max_model_len=L, inflight_tokens=inflight, prefix_caching=res.prefix_caching
    )
    for name, source in (("kv_tokens", "tokens"), ("max_concurrency", "concurrency")):
        values = []
        for pool in (kv_low, kv, kv_high):
            blocks = K.num_blocks_for(available_bytes=pool, layout=layout)
            conc = K.concurrency_from_blocks(
                num_blocks=blocks, layout=layout, per_group=per_group, max_model_len=L, rules=rules
            )
            if source == "tokens":
                tokens = K.kv_tokens_for(
                    num_blocks=blocks, layout=layout, max_concurrency=conc, max_model_len=L, rules=rules
                )
                values.append(float(tokens if tokens is not None else blocks * layout.block_size))
            else:
                values.append(round(conc, 2))
        out[name] = Range(low=values[0], expected=values[1], high=values[2])
    null_block = layout.bytes_per_block if rules.null_block_in_check else 0
    fits_low = _starts(rules=rules, layout=layout, kv_cache_bytes=kv_low, needed=needed, max_model_len=L)
    fits_high = _starts(rules=rules, layout=layout, kv_cache_bytes=kv_high, needed=needed, max_model_len=L)
    borderline = fits_low != fits_high
    safe = K.estimate_max_model_len(
        available_bytes=max(0, kv_low - null_block),
        layout=layout,
        inflight_tokens=inflight,
        prefix_caching=res.prefix_caching,
        rules=rules,
        upper=upper,
    )
    return out, borderline, safe


def _terms(
    *, model: ModelSpec, serve: ServeConfig, est: Estimate, rules: VersionRules, target: int
) -> list[Term]:
    """The working, with the user's numbers substituted (seed formula, then vLLM's block math)."""
    per_token = E.per_token_equation(
        model=model,
        groups=est.groups,
        tensor_parallel_size=serve.tensor_parallel_size,
        kv_dtype_bytes=est.kv_dtype_bytes_per_element,
        block_size=est.block_size,
        kv_bytes_per_token=est.kv_bytes_per_token,
    )
    demand = E.demand_equation(
        kv_bytes_per_token=est.kv_bytes_per_token, max_model_len=est.max_model_len, concurrency=target
    )
    pool = E.pool_equation(
        total_bytes=est.device_total_bytes,
        utilization=est.gpu_memory_utilization,
        budget_bytes=est.budget_bytes,
        weights_bytes=est.weights_bytes,
        activation_bytes=est.activation_peak_bytes,
        non_torch_bytes=est.non_torch_bytes,
        cuda_graph_bytes=est.cuda_graph_bytes,
        graphs_budgeted=est.cuda_graph_budgeted,
        kv_cache_bytes=est.kv_cache_bytes,
        kv_cache_memory_flag=serve.kv_cache_memory_bytes is not None,
    )
    if est.error_kind == ErrorKind.LOAD_OOM:
        return [per_token.term(), demand.term()]  # vLLM dies loading the weights: no pool, no blocks
    block = [eq for eq in E.block_equations(est, rules) if not eq.approximate]
    return [eq.term() for eq in (per_token, demand, pool, *block)]


def capacity_curve(
    *,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    vllm_version: str | None = None,
    points: int = 24,
    base: Estimate | None = None,  # the estimate at serve's own length, when the caller has it already
) -> list[tuple[int, float]]:
    """Maximum concurrency against max_model_len on a log grid from 512 to the model's maximum (0 where it
    would not start). The budget does not depend on the length unless the batched-token default does, so
    one estimate plus vLLM's block arithmetic per point gives the same numbers as a full estimate each."""
    rules = rules_for(vllm_version)
    if base is None:
        base = estimate(model=model, device=device, serve=serve, vllm_version=vllm_version)
    sizing = sizing_for(model=model, device=device, serve=serve, vllm_version=vllm_version)
    layout = sizing.layout
    prefix_caching = sizing.resolved.prefix_caching  # the length does not change it
    derived = model.max_model_len_for(yarn_scales_max_len=rules.yarn_scales_max_len)
    low, high = 512, max(1024, derived)
    out: list[tuple[int, float]] = []
    for i in range(points):
        length = round(low * (high / low) ** (i / max(1, points - 1)))
        length = max(16, length // 16 * 16)
        # only the batched-token default (V0 chunked-prefill switch, max_num_seqs x L cap) can move the budget
        chunked = serve.enable_chunked_prefill
        if chunked is None:
            chunked = default_chunked_prefill(rules, max_model_len=length)
        mnbt = serve.max_num_batched_tokens or default_max_num_batched_tokens(
            device=device,
            rules=rules,
            max_model_len=length,
            max_num_seqs=base.max_num_seqs,
            chunked_prefill=chunked,
        )
        if mnbt != base.max_num_batched_tokens or base.error_kind in ALWAYS_FAILS:
            update = serve.model_copy(update={"max_model_len": length})
            est = estimate(model=model, device=device, serve=update, vllm_version=vllm_version)
            out.append((length, est.max_concurrency if est.fits else 0.0))
            continue
        inflight = _inflight_tokens(
            rules=rules, max_num_batched_tokens=mnbt, pipeline_parallel_size=serve.pipeline_parallel_size
        )
        per_group = K.request_blocks(
            layout=layout, max_model_len=length, inflight_tokens=inflight, prefix_caching=prefix_caching
        )
        needed = K.needed_from_blocks(layout=layout, per_group=per_group, max_model_len=length, rules=rules)
        starts = _starts(
            rules=rules,
            layout=layout,
            kv_cache_bytes=base.kv_cache_bytes,
            needed=needed,
            max_model_len=length,
        )
        conc = K.concurrency_from_blocks(
            num_blocks=base.num_gpu_blocks,
            layout=layout,
            per_group=per_group,
            max_model_len=length,
            rules=rules,
        )
        out.append((length, round(conc, 2) if starts else 0.0))
    return out


@dataclass(frozen=True)
class Sizing:
    """The exact half of the estimate: layout of the binding stage and the resolved flags."""

    layout: K.KVLayout
    resolved: Resolved
    inflight_tokens: int
    rules: VersionRules


def sizing_for(
    *, model: ModelSpec, device: DeviceSpec, serve: ServeConfig, vllm_version: str | None
) -> Sizing:
    """KV layout of the last pipeline stage (the one that binds: it also holds lm_head and the sampler)."""
    rules = rules_for(vllm_version)
    validate_parallel(model=model, serve=serve)
    resolved_kv = checkpoint_kv_cache_dtype(model=model, serve=serve, rules=rules, device=device)
    if resolved_kv is not None:
        serve = serve.model_copy(update={"kv_cache_dtype": resolved_kv[0]})
    res, _, _ = resolve(model=model, device=device, serve=serve, rules=rules)
    ranges = K.stage_layer_ranges(
        num_layers=model.num_layers, pipeline_parallel_size=serve.pipeline_parallel_size
    )
    layout = K.build_layout(
        model=model,
        layer_range=ranges[-1],
        tensor_parallel_size=serve.tensor_parallel_size,
        block_size=res.block_size,
        kv_cache_dtype=serve.kv_cache_dtype,
        model_dtype=B.serving_dtype(model=model, serve=serve),
        rules=rules,
        hybrid=res.hybrid,
    )
    last = len(ranges) - 1
    layout = X.with_draft_kv(
        layout,
        X.stage_extras(
            model=model,
            serve=serve,
            rules=rules,
            layout=layout,
            layer_range=ranges[-1],
            is_first=last == 0,
            is_last=True,
            model_dtype=B.serving_dtype(model=model, serve=serve),
            max_num_batched_tokens=res.max_num_batched_tokens,
        ),
    )
    inflight = _inflight_tokens(
        rules=rules,
        max_num_batched_tokens=res.max_num_batched_tokens,
        pipeline_parallel_size=serve.pipeline_parallel_size,
    )
    return Sizing(layout=layout, resolved=res, inflight_tokens=inflight, rules=rules)


# vLLM's `_get_and_verify_max_len` names the config key it derived the maximum from; almost every model
# declares max_position_embeddings (the printed value is after any RoPE factor).
MAX_LEN_KEY = "max_position_embeddings"
# 0.6.6 and 0.8.5 (vllm/config.py) append "This may lead to incorrect model outputs or CUDA errors."; 0.10.2
# to 0.19.0 (vllm/config/model.py) the RoPE / absolute-position caution (rules.max_len_error_wording).
LONG_LEN_CAUTION = (
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the model uses relative position "
    "encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If the model uses absolute "
    "position encoding, positions exceeding derived_max_model_len will cause a CUDA array out-of-bounds error."
)


def long_max_model_len_error(
    *, rules: VersionRules, max_model_len: int, derived: int, allowed: bool
) -> str | None:
    """The ValueError vLLM's engine config raises for --max-model-len above the model's derived maximum,
    unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (then it only warns). Text read from each release's source."""
    if max_model_len <= derived or allowed:
        return None
    msg = (
        f"User-specified max_model_len ({max_model_len}) is greater than the derived max_model_len "
        f"({MAX_LEN_KEY}={derived} or model_max_length=None in model's config.json)."
    )
    if rules.max_len_error_wording == "incorrect_outputs":
        return (
            f"ValueError: {msg} This may lead to incorrect model outputs or CUDA errors. To allow overriding "
            "this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
        )
    return (
        f"ValueError: {msg} To allow overriding this maximum, set the env var "
        f"VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. {LONG_LEN_CAUTION}"
    )


def _load_oom_error(*, device: DeviceSpec, weights_bytes: int) -> str | None:
    """The weights of one rank do not fit the device: PyTorch's allocator raises while vLLM loads them,
    before any profiling (so vLLM never prints an "Available KV cache memory" line). The size of the
    tensor that fails and the free memory at that moment depend on the load order: left as "…"."""
    total = device.memory_total_bytes
    if weights_bytes <= total - B.CUDA_CONTEXT_BYTES:
        return None
    kind = {"cuda": "CUDA", "rocm": "HIP", "npu": "NPU"}.get(device.platform, device.platform.upper())
    exc = "RuntimeError" if device.platform == "npu" else "torch.OutOfMemoryError"
    return (
        f"{exc}: {kind} out of memory. Tried to allocate … GiB. GPU 0 has a total capacity of "
        f"{total / GIB:.2f} GiB of which … MiB is free."
    )
