"""One estimate under one release's rules: the flags after its defaults, the stages, vLLM's checks, then the
typed answer (the log it prints, the planner's warnings, the partitions, the groups and the bands)."""

from __future__ import annotations

from app.core import budget, extensible_kv, kv, situations, vllm_text_printed
from app.core.defaults import resolve, serve_as_run, validate_parallel
from app.core.estimate.checks import (
    MAX_MODEL_LEN_CEILING,
    Capacity,
    Refusal,
    Setup,
    capacity_of,
    first_refusal,
    verdict_of,
)
from app.core.estimate.stages import pipeline_stages
from app.core.result import ErrorKind, Estimate, KVGroup, Verdict
from app.core.specs import GIB, DeviceSpec, ModelSpec, ServeConfig
from app.core.text import Text
from app.core.uncertainty import ranges_for
from app.core.versions import V0_DEFAULT_SWAP_GIB, VersionRules, graphs_budgeted
from app.core.vllm_text_extensible import memory_lines


def _printed_lines(
    setup: Setup, capacity: Capacity, refusal: Refusal | None, backend_lines: list[str]
) -> list[str]:
    """The log of this start-up: refused before loading (only the error), dies loading (backend lines and
    the OOM), or profiles (the memory lines, then the error if the pool is too small)."""
    device, serve, rules, flags, binding = setup.device, setup.serve, setup.rules, setup.flags, setup.binding
    if refusal is not None and refusal.kind in (
        ErrorKind.MAX_LEN_ABOVE_DERIVED,
        ErrorKind.STARTUP_FREE_MEMORY,
    ):
        return [refusal.text]  # refused before any weight is loaded
    if refusal is not None and refusal.kind == ErrorKind.LOAD_OOM:
        # dies loading the weights, after vLLM's "Starting to load model" line: nothing is profiled
        return [*backend_lines, vllm_text_printed.load_start_line(model=setup.model.name), refusal.text]
    layout = binding.layout
    cpu_blocks = 0
    if rules.swap_space_used and layout.bytes_per_block:
        swap = serve.swap_space_gib if serve.swap_space_gib is not None else V0_DEFAULT_SWAP_GIB
        cpu_blocks = int(swap * GIB) // layout.bytes_per_block
    printed = vllm_text_printed.PrintedStage(
        parts=binding,
        device=device,
        utilization=flags.gpu_memory_utilization,
        requested_bytes=setup.requested,
        cpu_blocks=cpu_blocks,
        kv_tokens=capacity.kv_tokens,
        concurrency=capacity.concurrency,
        max_model_len=flags.max_model_len,
        graphs_captured=refusal is None or refusal.kind != ErrorKind.MAMBA_BLOCKS,
        bytes_per_block=layout.bytes_per_block,
        warmed_up=refusal is None or not refusal.before_warmup,
    )
    lines = [
        *backend_lines,
        *memory_lines(rules=rules, stage=printed, serve=setup.serve),
    ]
    return [*lines, refusal.text] if refusal is not None else lines


def _warnings(setup: Setup, refusal: Refusal | None) -> list[str]:
    """The planner's own cautions (translated), after the backend's and the architecture registry's."""
    model, device, serve, rules, flags = setup.model, setup.device, setup.serve, setup.rules, setup.flags
    binding, requested = setup.binding, setup.requested
    out: list[str] = []
    total = device.memory_total_bytes
    if model.max_model_len_derived < flags.max_model_len and serve.allow_long_max_model_len:
        out.append(
            Text(
                "max_model_len {l:,} is above the model's derived maximum ({max_model_len_derived:,}): VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 lets vLLM start, but outputs past the trained context may be wrong.",
                l=flags.max_model_len,
                max_model_len_derived=model.max_model_len_derived,
            )
        )
    if refusal is not None and refusal.kind == ErrorKind.LOAD_OOM:
        out.append(
            Text(
                "The weights of one rank ({weights:.2f} GiB) are larger than the device ({total:.2f} GiB): vLLM runs out of memory while loading them, before it sizes any KV cache.",
                weights=binding.weights_bytes / GIB,
                total=total / GIB,
            )
        )
    slack = total - requested
    if (
        not graphs_budgeted(rules=rules, platform=device.platform)
        and binding.cuda_graph_bytes > slack - budget.CUDA_CONTEXT_BYTES
        and refusal is None
    ):
        out.append(
            Text(
                "vLLM {version} does not budget CUDA graphs: about {cuda_graph_bytes:.2f} GiB of graphs must fit in the {slack:.2f} GiB left outside gpu_memory_utilization; capture may OOM. Lower the utilization or use --enforce-eager.",
                version=rules.version,
                cuda_graph_bytes=binding.cuda_graph_bytes / GIB,
                slack=slack / GIB,
            )
        )
    if model.other_revision_kv_heads is not None and model.other_revision_kv_heads != model.num_kv_heads:
        out.append(
            Text(
                "Published copies of this model's config.json differ: this one declares {kv_heads} KV heads, others {other} (heads duplicated for model parallelism), which makes the KV cache per token {ratio:g}x as large. Check num_key_value_heads in the copy you serve, or paste its config.json.",
                kv_heads=model.num_kv_heads,
                other=model.other_revision_kv_heads,
                ratio=model.other_revision_kv_heads / model.num_kv_heads,
            )
        )
    out += situations.device_warnings(device=device, serve=serve, rules=rules, requested=requested)
    if model.dtype_assumed:
        out.append(
            Text("config.json has no torch_dtype: read as float32 and served in 16 bits under --dtype auto.")
        )
    return out


def single_estimate(
    *,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    rules: VersionRules,
    target_concurrency: int | None,
) -> Estimate:
    validate_parallel(model=model, serve=serve, device=device, rules=rules)
    flags, backend_lines, backend_warnings = resolve(model=model, device=device, serve=serve, rules=rules)
    serve = serve_as_run(serve=serve, flags=flags)
    requested = budget.requested_bytes(
        total_bytes=device.memory_total_bytes,
        utilization=flags.gpu_memory_utilization,
        use_ceil=situations.requested_uses_ceil(rules=rules, device=device),
    )
    stages = pipeline_stages(
        model=model, device=device, serve=serve, rules=rules, flags=flags, requested=requested
    )
    setup = Setup(
        model=model,
        device=device,
        serve=serve,
        rules=rules,
        flags=flags,
        requested=requested,
        stages=stages,
        binding=min(stages, key=lambda stage: (stage.num_blocks, stage.kv_cache_bytes)),
    )
    capacity = capacity_of(setup)
    refusal = first_refusal(setup, capacity)
    target = target_concurrency or 1
    verdict = verdict_of(
        capacity=capacity,
        refusal=refusal,
        binding=setup.binding,
        max_model_len=flags.max_model_len,
        target=target,
    )
    return _assemble(
        setup,
        capacity,
        refusal,
        verdict=verdict,
        lines=_printed_lines(setup, capacity, refusal, backend_lines),
        warnings=[*backend_warnings, *_warnings(setup, refusal)],
    )


def _groups(*, layout: kv.KVLayout, capacity: Capacity) -> list[KVGroup]:
    """The binding stage's KV-cache groups with the blocks one request of --max-model-len takes in each."""
    return [
        KVGroup(
            kind=str(group.kind),
            num_layers=group.num_layers,
            block_size=layout.block_tokens(group),  # a group's own block (DSV4 64 / 4 / 8)
            page_size_bytes=group.page_size_bytes,
            blocks_per_request=blocks,
        )
        for group, blocks in zip(layout.groups, capacity.per_group, strict=True)
    ]


def _assemble(
    setup: Setup,
    capacity: Capacity,
    refusal: Refusal | None,
    *,
    verdict: Verdict,
    lines: list[str],
    warnings: list[str],
) -> Estimate:
    """The typed answer: partitions of the binding stage, its groups, the bands and the working."""
    model, device, serve, rules, flags = setup.model, setup.device, setup.serve, setup.rules, setup.flags
    binding, requested = setup.binding, setup.requested
    layout, max_model_len = binding.layout, flags.max_model_len
    total = device.memory_total_bytes
    groups = _groups(layout=layout, capacity=capacity)
    ranges, borderline, safe_len = ranges_for(
        layout=layout,
        rules=rules,
        parts=binding,
        quantized=model.quantization is not None,
        calibrated=device.platform == "cuda" and rules.measured_parts_calibrated,
        max_model_len=max_model_len,
        inflight_tokens=capacity.inflight_tokens,
        prefix_caching=flags.prefix_caching,
        needed_bytes=capacity.needed_bytes,
        upper=min(max(max_model_len, model.max_model_len_derived), MAX_MODEL_LEN_CEILING),
        graphs_budgeted=graphs_budgeted(rules=rules, platform=device.platform),
        host_band_bytes=situations.unified_memory_band_bytes(device),
        # no pool to band where no layer keeps a KV cache (stages: V1 never sizes one) or one is given
        pool_given=situations.kv_bytes_given(rules=rules, device=device, serve=serve) is not None
        or (not layout.groups and rules.engine != "v0"),
        peak_weight=extensible_kv.peak_sensitivity(
            requested_bytes=requested,
            free_at_start_bytes=situations.free_at_start_bytes(device=device, serve=serve),
            transient_peak_bytes=binding.activation_peak_bytes,
            platform=device.platform,
        )
        if extensible_kv.applies(rules=rules, device=device, serve=serve)
        else 1.0,
    )
    kv_dtype_bytes = kv.kv_dtype_bytes(
        kv_cache_dtype=serve.kv_cache_dtype, model_dtype=budget.serving_dtype(model=model, serve=serve)
    )
    num_blocks = binding.num_blocks
    est = Estimate(
        model=model.name,
        device=device.id,
        vllm_version=rules.version,
        vllm_rules_version=rules.version,
        tensor_parallel_size=serve.tensor_parallel_size,
        pipeline_parallel_size=serve.pipeline_parallel_size,
        gpu_memory_utilization=flags.gpu_memory_utilization,
        kv_cache_dtype=serve.kv_cache_dtype,
        kv_dtype_bytes_per_element=kv_dtype_bytes,
        max_num_seqs=flags.max_num_seqs,
        max_num_batched_tokens=flags.max_num_batched_tokens,
        attention_backend=flags.choice.name,
        device_total_bytes=total,
        budget_bytes=requested,
        weights_bytes=binding.weights_bytes,
        activation_peak_bytes=binding.activation_peak_bytes,
        non_torch_bytes=binding.non_torch_bytes,
        cuda_graph_bytes=binding.cuda_graph_bytes,
        cuda_graph_budgeted=graphs_budgeted(rules=rules, platform=device.platform),
        kv_cache_bytes=binding.kv_cache_bytes,
        held_at_start_bytes=binding.held_at_start_bytes,
        unused_bytes=total - requested,
        extensible_kv_cache=extensible_kv.applies(rules=rules, device=device, serve=serve),
        kv_bytes_per_token=layout.kv_bytes_per_token,
        block_size=layout.block_size,
        bytes_per_block=layout.bytes_per_block,
        num_gpu_blocks=num_blocks,
        kv_tokens=num_blocks * layout.block_size if capacity.kv_tokens is None else capacity.kv_tokens,
        max_concurrency=round(capacity.concurrency, 2),
        max_model_len=max_model_len,
        groups=groups,
        fits=refusal is None,
        verdict=verdict,
        error=refusal.text if refusal else None,
        error_kind=refusal.kind if refusal else None,
        estimated_max_model_len=capacity.largest_len,
        log_lines=lines,
        warnings=warnings,
        terms=[],
        ranges=ranges,
        borderline=borderline,
        safe_max_model_len=safe_len,
        extras=list(binding.extras.items),
        host_memory_bytes=binding.extras.host_memory_bytes,
    )
    return est
