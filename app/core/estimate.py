"""One call from (model, device, `vllm serve` flags, vLLM version) to everything vLLM would print.

The estimate runs in vLLM's order: the flags after this release's defaults (:func:`resolve`), one
budget and KV layout per pipeline stage (:func:`_stages`), the capacity of the stage that binds
(:func:`_capacity`), the first of vLLM's refusals in the order it checks them (:func:`_first_refusal`),
the planner's warnings (:func:`_warnings`), and the typed answer (:func:`_assemble`). The sentences vLLM
prints are in :mod:`app.core.vllm_text`, beside the patterns that read them back.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core import budget, deadline, equations, extras, kv, layers, situations, stage_pool, vllm_text
from app.core.defaults import ResolvedFlags as ResolvedFlags
from app.core.defaults import batch_flags, checkpoint_kv_cache_dtype, serve_as_run
from app.core.defaults import batch_tier as batch_tier
from app.core.defaults import default_max_model_len as default_max_model_len
from app.core.defaults import default_max_num_batched_tokens as default_max_num_batched_tokens
from app.core.defaults import default_max_num_seqs as default_max_num_seqs
from app.core.defaults import model_for_release as model_for_release
from app.core.defaults import resolve as resolve
from app.core.defaults import validate_devices as validate_devices
from app.core.defaults import validate_parallel as validate_parallel
from app.core.extensible_kv import applies as extensible_applies
from app.core.graph_rules import mamba_blocks_error, rank_graph_bytes
from app.core.hf_config.registry import check_architecture, check_config_contract
from app.core.result import ErrorKind, Estimate, KVGroup, Verdict
from app.core.specs import DTYPE_BYTES, GIB, DeviceSpec, ModelSpec, ServeConfig
from app.core.text import Text
from app.core.uncertainty import ranges_for
from app.core.verdicts import classify
from app.core.versions import V0_CHUNKED_PREFILL_ABOVE as V0_CHUNKED_PREFILL_ABOVE  # recommend.py reads it
from app.core.versions import (
    V0_DEFAULT_SWAP_GIB,
    ResolvedVersion,
    VersionRules,
    graphs_budgeted,
    resolve_version,
    rules_for,
)
from app.core.vllm_text_extensible import extensible_refusal, memory_lines

MAX_MODEL_LEN_CEILING = 10_000_000
# the capacity chart's length axis: from 512 tokens to the model's maximum, and at least to 1,024
CURVE_SHORTEST_LEN = 512
CURVE_LONGEST_LEN_AT_LEAST = 1024
# failures that do not depend on max_model_len (the capacity curve cannot reuse one estimate's pool)
ALWAYS_FAILS = frozenset({ErrorKind.STARTUP_FREE_MEMORY, ErrorKind.LOAD_OOM})


@dataclass(frozen=True)
class Stage(budget.StageNumbers):
    """One pipeline stage: its partition (budget.StageNumbers) with its index, KV layout and extras."""

    index: int
    layout: kv.KVLayout
    extras: extras.StageExtras = extras.NO_EXTRAS


def _stages(
    *,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    rules: VersionRules,
    flags: ResolvedFlags,
    requested: int,
) -> list[Stage]:
    """Each pipeline stage's budget as vLLM profiles it on that stage's worker (reference §2), once per shape."""
    pipeline_size = serve.pipeline_parallel_size
    ranges = kv.stage_layer_ranges(num_layers=model.num_layers, pipeline_parallel_size=pipeline_size)
    stages = []
    fold = layers.StageFold(
        model=model, ranges=ranges
    )  # stages of one shape share a budget (app.core.layers)
    for index, layer_range in fold.new_stages():
        deadline.check()  # a request's CPU budget (app.core.deadline), checked once per stage
        is_first, is_last = index == 0, index == pipeline_size - 1
        layout, stage_extras = stage_pool.stage_layout(
            model=model, serve=serve, rules=rules, flags=flags, layer_range=layer_range, index=index
        )
        weights = stage_extras.weights_delta_bytes + budget.weights_bytes_for_stage(
            model=model,
            serve=serve,
            layer_range=layer_range,
            is_first=is_first,
            is_last=is_last,
            device=device,
        )
        activation = budget.activation_peak_bytes(
            model=model,
            serve=serve,
            max_num_batched_tokens=flags.max_num_batched_tokens,
            max_num_seqs=flags.max_num_seqs,
            is_last_stage=is_last,
            sampler_logit_copies=rules.sampler_logit_copies,
            act_dtype_bytes=DTYPE_BYTES[budget.serving_dtype(model=model, serve=serve)],
        )
        non_torch = budget.non_torch_bytes(
            tensor_parallel_size=serve.tensor_parallel_size,
            pipeline_parallel_size=pipeline_size,
            platform=device.platform,
        )
        graphs = rank_graph_bytes(
            serve=serve,
            flags=flags,
            rules=rules,
            device=device,
            num_layers_on_rank=layer_range[1] - layer_range[0],
        )
        kv_bytes = stage_pool.stage_pool_bytes(
            device=device,
            serve=serve,
            rules=rules,
            requested=requested,
            parts=(weights, activation, non_torch, graphs),
        )
        stages.append(
            Stage(
                index=index,
                layout=layout,
                weights_bytes=weights,
                activation_peak_bytes=activation,
                non_torch_bytes=non_torch,
                cuda_graph_bytes=graphs,
                kv_cache_bytes=kv_bytes,
                num_blocks=kv.num_blocks_for(available_bytes=kv_bytes, layout=layout),
                extras=stage_extras,
            )
        )
    return fold.expand(stages)


def _inflight_tokens(*, rules: VersionRules, max_num_batched_tokens: int, pipeline_parallel_size: int) -> int:
    if rules.inflight_uses_batches:
        # async scheduling + V2 runner: max_concurrent_batches = pp + 1 (reference §3.3)
        return (pipeline_parallel_size + 1) * max_num_batched_tokens
    return max_num_batched_tokens


def estimate(
    *,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    vllm_version: str | None = None,
    target_concurrency: int | None = None,
    max_model_len_auto: bool = False,
    devices: int | None = None,
    working: bool = True,  # False: no ``terms`` (the recommender's and the chart's probes show none)
) -> Estimate:
    """Predict vLLM's start-up numbers for one configuration (per device of the tightest rank).

    ``devices``: how many the user has (None: TP × PP); fewer than TP × PP is vLLM's refusal
    (:func:`validate_devices`, an InvalidServeConfigError naming ``devices``).

    ``max_model_len_auto`` is `--max-model-len auto` (0.14+): vLLM binary-searches the largest length
    that fits the KV pool, up to the model's own maximum, and logs what it did (reference §3.6, §4.3).
    """
    validate_devices(serve=serve, devices=devices)
    version = resolve_version(vllm_version)
    rules = version.rules
    # the registry at the release the user named, not its bracket's: 0.12.0 plans with 0.11.0's rules,
    # but an architecture first read in 0.14.0 and absent from 0.11.0 may be in 0.12.0 (a note, not a refusal)
    architecture = check_architecture(
        architecture=model.architecture,
        model_type=model.model_type,
        version=version.release,
        transformers_fallback_release=rules.version if rules.transformers_fallback else None,
        remote_code=model.remote_code,
        quant_method=model.quantization.source_name if model.quantization else None,
        quant_field="quantization" if serve.quantization else "quantization_config.quant_method",
    )
    check_config_contract(model=model, version=version.release)
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
    if working:  # the working of the numbers above (situations read only serve's --kv-cache-memory-bytes)
        terms = equations.working_terms(
            model=model, serve=serve, est=est, rules=rules, target=target_concurrency or 1, device=device
        )
        est = est.model_copy(update={"terms": terms})
    if resolved_kv is not None and resolved_kv[1]:
        est = est.model_copy(update={"kv_cache_dtype_from_checkpoint": True})
    if architecture:
        est = est.model_copy(update={"warnings": [*architecture, *est.warnings]})
    quant = model.quantization
    if quant is not None and quant.kv_cache_dtype == "nvfp4" and serve.kv_cache_dtype == "auto":
        note = Text(
            "The checkpoint declares an NVFP4 KV cache, which vLLM uses under --kv-cache-dtype auto where a "
            "backend takes it (FlashInfer on SM100); the planner does not size NVFP4 KV and shows the model dtype."
        )
        est = est.model_copy(update={"warnings": [*est.warnings, note]})
    if model.model_type in UNSIZED_CACHE_MODEL_TYPES and est.attention_backend not in SIZED_BACKENDS:
        note = Text(
            "{model_type}: vLLM {version} sizes this model's cache with rules the planner does not model yet "
            "({what}); the KV numbers shown are those of plain attention layers and are not exact.",
            model_type=model.model_type,
            version=rules.version,
            what=UNSIZED_CACHE_MODEL_TYPES[model.model_type],
        )
        est = est.model_copy(update={"warnings": [*est.warnings, note]})
    return _as_requested(est, version)


# Model types whose 0.33.0 cache the planner knows it does not size (vllm/models/deepseek_v4: compressed
# KV per compress_ratios with its own block sizes)
SIZED_BACKENDS = frozenset({"FLASHMLA_SPARSE_DSV4", "ASCEND_DSA"})  # kv_dsv4.py (0.33.0), kv_dsv4_ascend.py
UNSIZED_CACHE_MODEL_TYPES = {
    "deepseek_v4": Text("a compressed cache per layer (compress_ratios), not a sliding window"),
}


def _as_requested(est: Estimate, version: ResolvedVersion) -> Estimate:
    """The estimate under the version the user gave (its bracket's rules did the work)."""
    if version.requested == est.vllm_version and not version.note:
        return est
    warnings = [version.note, *est.warnings] if version.note else est.warnings
    return est.model_copy(update={"vllm_version": version.requested, "warnings": warnings})


def _auto_fit(
    *, model: ModelSpec, device: DeviceSpec, serve: ServeConfig, rules: VersionRules, target: int | None
) -> Estimate:
    """`--max-model-len auto`: probe the default length, then plan the largest one the pool holds.

    E.g. Llama-3.1-8B on one H100 (0.33.0): at utilization 0.92 the full 131,072 tokens fit (54.77 GiB of
    KV); at 0.3 the pool is 5.73 GiB and the length is reduced from 131,072 to 46,896.
    """

    def at(length: int) -> Estimate:
        changed = serve.model_copy(update={"max_model_len": length})
        return _estimate(model=model, device=device, serve=changed, rules=rules, target_concurrency=target)

    full = default_max_model_len(model=model, rules=rules)  # -1 starts from the default length
    probe = at(full)
    if probe.error_kind in (ErrorKind.STARTUP_FREE_MEMORY, ErrorKind.LOAD_OOM):
        return probe
    largest = probe.estimated_max_model_len or 0
    if largest <= 0:
        text = vllm_text.AUTOFIT_FAILED_TEXT
        return probe.model_copy(
            update={
                "fits": False,
                "error": text,
                "verdict": "load_oom" if probe.verdict == "load_oom" else "budget_bound",
                "log_lines": [*probe.log_lines[:-1], text] if probe.error else [*probe.log_lines, text],
            }
        )
    length = min(largest, full)
    line = vllm_text.autofit_line(rules=rules, full=full, length=length, kv_cache_bytes=probe.kv_cache_bytes)
    fitted = at(length)
    return fitted.model_copy(update={"log_lines": [line, *fitted.log_lines]})


@dataclass(frozen=True)
class Setup:
    """One estimate's inputs after vLLM's defaults, with every stage's budget and the one that binds."""

    model: ModelSpec
    device: DeviceSpec
    serve: ServeConfig
    rules: VersionRules
    flags: ResolvedFlags
    requested: int  # bytes: total x utilization as this release rounds it
    stages: list[Stage]
    binding: Stage  # fewest blocks (then smallest pool): the stage whose numbers vLLM prints


@dataclass(frozen=True)
class Capacity:
    """What the binding stage's KV pool holds at --max-model-len (reference §3.5-§3.7)."""

    inflight_tokens: int
    per_group: list[int]  # blocks one request of --max-model-len takes in each KV-cache group
    concurrency: float
    kv_tokens: int | None  # as the release prints it ("KV cache size"); None where it prints none
    check_bytes: int  # the pool the capacity check compares with (less the null block from 0.30)
    needed_bytes: int  # what one request of max_model_len needs
    largest_len: int  # vLLM's own estimate of the longest request that starts
    starts: bool


def _capacity(setup: Setup) -> Capacity:
    serve, rules, flags, binding = setup.serve, setup.rules, setup.flags, setup.binding
    layout, max_model_len = binding.layout, flags.max_model_len
    inflight = _inflight_tokens(
        rules=rules,
        max_num_batched_tokens=flags.max_num_batched_tokens,
        pipeline_parallel_size=serve.pipeline_parallel_size,
    )
    per_group = kv.request_blocks(
        layout=layout,
        max_model_len=max_model_len,
        inflight_tokens=inflight,
        prefix_caching=flags.prefix_caching,
    )
    concurrency = kv.concurrency_from_blocks(
        num_blocks=binding.num_blocks,
        layout=layout,
        per_group=per_group,
        max_model_len=max_model_len,
        rules=rules,
    )
    kv_tokens = kv.kv_tokens_for(
        num_blocks=binding.num_blocks,
        layout=layout,
        max_concurrency=concurrency,
        max_model_len=max_model_len,
        rules=rules,
    )
    check_bytes = binding.kv_cache_bytes - (layout.bytes_per_block if rules.null_block_in_check else 0)
    needed = kv.needed_from_blocks(
        layout=layout, per_group=per_group, max_model_len=max_model_len, rules=rules
    )
    largest = _largest_len(setup, inflight=inflight, available_bytes=check_bytes)
    starts = kv.one_request_starts(
        rules=rules,
        layout=layout,
        kv_cache_bytes=binding.kv_cache_bytes,
        needed=needed,
        max_model_len=max_model_len,
    )
    return Capacity(
        inflight_tokens=inflight,
        per_group=per_group,
        concurrency=concurrency,
        kv_tokens=kv_tokens,
        check_bytes=check_bytes,
        needed_bytes=needed,
        largest_len=largest,
        starts=starts,
    )


def _largest_len(setup: Setup, *, inflight: int, available_bytes: int) -> int:
    """vLLM's estimated maximum model length for ``available_bytes`` (kv.estimate_max_model_len)."""
    length, derived = setup.flags.max_model_len, setup.model.max_model_len_derived
    return kv.estimate_max_model_len(
        available_bytes=max(0, available_bytes),
        layout=setup.binding.layout,
        inflight_tokens=inflight,
        prefix_caching=setup.flags.prefix_caching,
        rules=setup.rules,
        upper=min(max(length, derived), MAX_MODEL_LEN_CEILING),
    )


def _extensible_refusal(setup: Setup, capacity: Capacity) -> Refusal:
    """0.34.0's two KV checks under the extensible cache (vllm_text_extensible.extensible_refusal)."""
    no_memory, text = extensible_refusal(
        rules=setup.rules,
        parts=setup.binding,
        bytes_per_block=setup.binding.layout.bytes_per_block,
        requested_bytes=setup.requested,
        needed_bytes=capacity.needed_bytes,
        final_check_bytes=capacity.check_bytes,
        max_model_len=setup.flags.max_model_len,
        utilization=setup.flags.gpu_memory_utilization,
        estimate_len=lambda available: _largest_len(
            setup, inflight=capacity.inflight_tokens, available_bytes=available
        ),
    )
    return Refusal(ErrorKind.NO_BLOCKS if no_memory else ErrorKind.MAX_LEN_TOO_LONG, text)


@dataclass(frozen=True)
class Refusal:
    """The first check vLLM fails, with the text it prints."""

    kind: ErrorKind
    text: str


def _first_refusal(setup: Setup, capacity: Capacity) -> Refusal | None:
    """vLLM's checks in the order it runs them: the engine config (a length above the model's maximum,
    unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1), the free memory when the worker starts (0.10.2+), loading
    the weights, then the KV capacity after profiling."""
    model, device, serve, rules, flags = setup.model, setup.device, setup.serve, setup.rules, setup.flags
    stages, binding, requested = setup.stages, setup.binding, setup.requested
    max_model_len, total = flags.max_model_len, device.memory_total_bytes
    if max_model_len > model.max_model_len_derived and not serve.allow_long_max_model_len:
        text = vllm_text.long_max_model_len_error(
            rules=rules, max_model_len=max_model_len, derived=model.max_model_len_derived
        )
        return Refusal(ErrorKind.MAX_LEN_ABOVE_DERIVED, text)
    free = total - budget.CUDA_CONTEXT_BYTES - situations.used_by_others_bytes(serve)
    runs, where = situations.startup_free_check(rules=rules, device=device, serve=serve)
    if runs and free < requested:
        text = vllm_text.free_memory_error(
            where=where,
            total_bytes=total,
            free_bytes=free,
            utilization=flags.gpu_memory_utilization,
            requested_bytes=requested,
        )
        return Refusal(ErrorKind.STARTUP_FREE_MEMORY, text)
    if max(stage.weights_bytes for stage in stages) > free:
        # PyTorch's allocator raises while vLLM loads the weights, before any profiling
        return Refusal(
            ErrorKind.LOAD_OOM, vllm_text.load_oom_error(platform=device.platform, total_bytes=total)
        )
    if capacity.starts:
        return _mamba_blocks_refusal(setup)
    v0 = rules.engine == "v0"
    # V1 checks the pool less the null block from 0.30 (kv_cache_planning.check_enough_kv_cache_memory):
    # "No available memory for the cache blocks" when that is ≤ 0, however the printed pool reads
    no_memory = binding.num_blocks <= 0 if v0 else capacity.check_bytes <= 0
    if extensible_applies(rules=rules, device=device, serve=serve):  # 0.34.0: checked before and after warmup
        return _extensible_refusal(setup, capacity)
    text = vllm_text.too_small_error(
        rules=rules,
        no_memory=no_memory,
        max_model_len=max_model_len,
        needed_bytes=capacity.needed_bytes,
        available_bytes=binding.kv_cache_bytes if v0 else capacity.check_bytes,
        # vLLM searches [1, L]; needed bytes grow with the length, so that answer is min(largest, L)
        estimated_len=0 if v0 else min(capacity.largest_len, max_model_len),
        tokens_capacity=binding.num_blocks * binding.layout.block_size,
    )
    return Refusal(ErrorKind.NO_BLOCKS if no_memory else ErrorKind.MAX_LEN_TOO_LONG, text)


def _mamba_blocks_refusal(setup: Setup) -> Refusal | None:
    """The Mamba-block check of a start-up with full CUDA graphs (graph_rules.mamba_blocks_error)."""
    text = mamba_blocks_error(
        rules=setup.rules,
        serve=setup.serve,
        model=setup.model,
        platform=setup.device.platform,
        max_num_seqs=setup.flags.max_num_seqs,
        num_blocks=setup.binding.num_blocks,
    )
    return None if text is None else Refusal(ErrorKind.MAMBA_BLOCKS, text)


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
        return [*backend_lines, vllm_text.load_start_line(model=setup.model.name), refusal.text]
    layout = binding.layout
    cpu_blocks = 0
    if rules.swap_space_used and layout.bytes_per_block:
        swap = serve.swap_space_gib if serve.swap_space_gib is not None else V0_DEFAULT_SWAP_GIB
        cpu_blocks = int(swap * GIB) // layout.bytes_per_block
    printed = vllm_text.PrintedStage(
        parts=binding,
        device=device,
        utilization=flags.gpu_memory_utilization,
        requested_bytes=setup.requested,
        cpu_blocks=cpu_blocks,
        kv_tokens=capacity.kv_tokens,
        concurrency=capacity.concurrency,
        max_model_len=flags.max_model_len,
        graphs_captured=refusal is None or refusal.kind != ErrorKind.MAMBA_BLOCKS,
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


def _verdict(
    *, capacity: Capacity, refusal: Refusal | None, binding: Stage, max_model_len: int, target: int
) -> Verdict:
    """The seed's verdict for this estimate: the one rule the doctor shares (verdicts.classify)."""
    error_kind = refusal.kind if refusal else None
    return classify(
        failure="load_oom" if error_kind == ErrorKind.LOAD_OOM else None,
        starts=refusal is None,
        reached=capacity.concurrency,
        target=target,
        length_refused=error_kind == ErrorKind.MAX_LEN_ABOVE_DERIVED,  # refused for the length alone
        sequences_refused=error_kind == ErrorKind.MAMBA_BLOCKS,  # max_num_seqs above the Mamba blocks
        largest_len=capacity.largest_len,
        max_model_len=max_model_len,
        budget_short=binding.kv_cache_bytes <= 0 or error_kind == ErrorKind.STARTUP_FREE_MEMORY,
    )


def _estimate(
    *,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    rules: VersionRules,
    target_concurrency: int | None,
) -> Estimate:
    validate_parallel(model=model, serve=serve)
    flags, backend_lines, backend_warnings = resolve(model=model, device=device, serve=serve, rules=rules)
    serve = serve_as_run(serve=serve, flags=flags)
    requested = budget.requested_bytes(
        total_bytes=device.memory_total_bytes,
        utilization=flags.gpu_memory_utilization,
        use_ceil=situations.requested_uses_ceil(rules=rules, device=device),
    )
    stages = _stages(model=model, device=device, serve=serve, rules=rules, flags=flags, requested=requested)
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
    capacity = _capacity(setup)
    refusal = _first_refusal(setup, capacity)
    target = target_concurrency or 1
    verdict = _verdict(
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
        pool_given=situations.kv_bytes_given(rules=rules, device=device, serve=serve) is not None,
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
        unused_bytes=total - requested,
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
    derived = model.max_model_len_for(yarn_scales_max_len=rules.yarn_scales_max_len)
    low, high = CURVE_SHORTEST_LEN, max(CURVE_LONGEST_LEN_AT_LEAST, derived)
    out: list[tuple[int, float]] = []
    for i in range(points):
        length = round(low * (high / low) ** (i / max(1, points - 1)))
        length = max(16, length // 16 * 16)
        if base.error_kind in ALWAYS_FAILS:  # the free memory and the weights do not depend on S
            out.append((length, 0.0))
            continue
        # only the batched-token default (V0 chunked-prefill switch, max_num_seqs x L cap) can move the budget
        _chunked, max_num_batched_tokens = batch_flags(
            serve=serve, device=device, rules=rules, max_model_len=length, max_num_seqs=base.max_num_seqs
        )
        if max_num_batched_tokens != base.max_num_batched_tokens:
            update = serve.model_copy(update={"max_model_len": length})
            est = estimate(model=model, device=device, serve=update, vllm_version=vllm_version, working=False)
            out.append((length, est.max_concurrency if est.fits else 0.0))
            continue
        out.append((length, _concurrency_at(sizing=sizing, base=base, length=length)))
    return out


def _concurrency_at(*, sizing: Sizing, base: Estimate, length: int) -> float:
    """Maximum concurrency of ``base``'s pool at another --max-model-len (0 where it would not start)."""
    layout, rules = sizing.layout, sizing.rules
    per_group = kv.request_blocks(
        layout=layout,
        max_model_len=length,
        inflight_tokens=sizing.inflight_tokens,
        prefix_caching=sizing.resolved.prefix_caching,  # the length does not change it
    )
    needed = kv.needed_from_blocks(layout=layout, per_group=per_group, max_model_len=length, rules=rules)
    starts = kv.one_request_starts(
        rules=rules, layout=layout, kv_cache_bytes=base.kv_cache_bytes, needed=needed, max_model_len=length
    )
    concurrency = kv.concurrency_from_blocks(
        num_blocks=base.num_gpu_blocks, layout=layout, per_group=per_group, max_model_len=length, rules=rules
    )
    return round(concurrency, 2) if starts else 0.0


@dataclass(frozen=True)
class Sizing:
    """The exact half of the estimate: layout of the binding stage and the resolved flags."""

    layout: kv.KVLayout
    resolved: ResolvedFlags
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
    flags, _, _ = resolve(model=model, device=device, serve=serve, rules=rules)
    serve = serve_as_run(serve=serve, flags=flags)
    ranges = kv.stage_layer_ranges(
        num_layers=model.num_layers, pipeline_parallel_size=serve.pipeline_parallel_size
    )
    layout, _ = stage_pool.stage_layout(
        model=model, serve=serve, rules=rules, flags=flags, layer_range=ranges[-1], index=len(ranges) - 1
    )
    inflight = _inflight_tokens(
        rules=rules,
        max_num_batched_tokens=flags.max_num_batched_tokens,
        pipeline_parallel_size=serve.pipeline_parallel_size,
    )
    return Sizing(layout=layout, resolved=flags, inflight_tokens=inflight, rules=rules)
