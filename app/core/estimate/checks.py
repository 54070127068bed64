"""vLLM's checks of one start-up: what the binding stage's KV pool holds at --max-model-len, the first
refusal in the order vLLM runs its checks, and the seed's verdict that follows (:func:`app.core.verdicts.classify`)."""

from __future__ import annotations

from dataclasses import dataclass

from app.core import kv, situations, vllm_text_printed
from app.core.defaults import ResolvedFlags
from app.core.estimate.stages import Stage, inflight_tokens
from app.core.extensible_kv import applies as extensible_applies
from app.core.graph_rules import mamba_blocks_error
from app.core.result import ErrorKind, Verdict
from app.core.specs import DeviceSpec, ModelSpec, ServeConfig
from app.core.verdicts import classify
from app.core.versions import VersionRules
from app.core.vllm_text_extensible import extensible_refusal

MAX_MODEL_LEN_CEILING = 10_000_000


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


def capacity_of(setup: Setup) -> Capacity:
    serve, rules, flags, binding = setup.serve, setup.rules, setup.flags, setup.binding
    layout, max_model_len = binding.layout, flags.max_model_len
    inflight = inflight_tokens(
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
    if not layout.groups:
        # no KV cache spec at all (encoder-only attention): no pool bounds the batch, only the scheduler's
        # --max-num-seqs (0.33.0 v1/engine/core.py _initialize_kv_caches, "Attention free models")
        concurrency = float(flags.max_num_seqs)
    kv_tokens = kv.kv_tokens_for(
        num_blocks=binding.num_blocks,
        layout=layout,
        max_concurrency=concurrency,
        max_model_len=max_model_len,
        rules=rules,
    )
    if not layout.groups:
        kv_tokens = 0  # nothing is cached
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
    if not layout.groups and rules.engine != "v0":
        # no KV cache groups: get_kv_cache_configs skips _check_enough_kv_cache_memory ("if not groups: continue",
        # 0.33.0 v1/core/kv_cache_planning.py), so no capacity refusal applies
        starts = True
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


@dataclass(frozen=True)
class Refusal:
    """The first check vLLM fails, with the text it prints."""

    kind: ErrorKind
    text: str
    # 0.34.0's extensible cache: refused on the tentative budget (get_kv_cache_configs), before warmup and capture
    before_warmup: bool = False


def first_refusal(setup: Setup, capacity: Capacity) -> Refusal | None:
    """vLLM's checks in the order it runs them: the engine config (a length above the model's maximum,
    unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1), the free memory when the worker starts (0.10.2+), loading
    the weights, then the KV capacity after profiling."""
    model, device, serve, rules, flags = setup.model, setup.device, setup.serve, setup.rules, setup.flags
    stages, binding, requested = setup.stages, setup.binding, setup.requested
    max_model_len, total = flags.max_model_len, device.memory_total_bytes
    if max_model_len > model.max_model_len_derived and not serve.allow_long_max_model_len:
        text = vllm_text_printed.long_max_model_len_error(
            rules=rules, max_model_len=max_model_len, derived=model.max_model_len_derived
        )
        return Refusal(ErrorKind.MAX_LEN_ABOVE_DERIVED, text)
    free = situations.free_at_start_bytes(device=device, serve=serve)
    runs, where = situations.startup_free_check(rules=rules, device=device, serve=serve)
    if runs and free < requested:
        text = vllm_text_printed.free_memory_error(
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
            ErrorKind.LOAD_OOM, vllm_text_printed.load_oom_error(platform=device.platform, total_bytes=total)
        )
    if capacity.starts:
        return _mamba_blocks_refusal(setup)
    v0 = rules.engine == "v0"
    # V1 checks the pool less the null block from 0.30 (kv_cache_planning.check_enough_kv_cache_memory):
    # "No available memory for the cache blocks" when that is ≤ 0, however the printed pool reads
    no_memory = binding.num_blocks <= 0 if v0 else capacity.check_bytes <= 0
    if extensible_applies(rules=rules, device=device, serve=serve):  # 0.34.0: checked before and after warmup
        return _extensible_refusal(setup, capacity)
    text = vllm_text_printed.too_small_error(
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


def _extensible_refusal(setup: Setup, capacity: Capacity) -> Refusal:
    """0.34.0's two KV checks under the extensible cache (vllm_text_extensible.extensible_refusal)."""
    no_memory, text, before = extensible_refusal(
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
    return Refusal(
        ErrorKind.NO_BLOCKS if no_memory else ErrorKind.MAX_LEN_TOO_LONG, text, before_warmup=before
    )


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


def verdict_of(
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
        budget_short=(binding.kv_cache_bytes <= 0 and bool(binding.layout.groups))
        or error_kind == ErrorKind.STARTUP_FREE_MEMORY,
    )
