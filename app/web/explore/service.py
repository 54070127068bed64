"""Explore page computations: which block sizes the backend takes, prefix hits, the simulated engine — all through the core."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from app.core import backends
from app.core.blocks import (
    BlockSizeRow,
    PrefixHit,
    block_size_table,
    prefix_cache_hit,
    prefix_memory_saved_bytes,
)
from app.core.errors import InvalidServeConfigError, PlannerError
from app.core.estimate import sizing_for
from app.core.result import Estimate
from app.core.text import Text
from app.core.workload import (
    EngineParams,
    RequestClass,
    WorkloadPreset,
    WorkloadSpec,
)
from app.web.explore.params import (
    DEFAULT_CUSTOM_CONCURRENCY,
    DEFAULT_CUSTOM_NUM_REQUESTS,
    DISPLAY_BLOCK_SIZES,
    BlockFields,
    _first_message,
)
from app.web.inputs.params import same_named
from app.web.inputs.resolve import Resolved, estimate_for

# ---- computing ---------------------------------------------------------------------------------


def backend_rule(name: str) -> str:
    """What a CUDA attention backend accepts as block size, in words ("takes only 64")."""
    found = [b for b in vars(backends).values() if isinstance(b, backends.Backend) and b.name == name]
    if not found:
        return Text("does not take this size")
    backend = found[0]
    if backend.fixed_sizes:
        return Text("takes only ") + " / ".join(str(size) for size in backend.fixed_sizes)
    return Text("needs a multiple of {multiple_of}", multiple_of=backend.multiple_of)


@dataclass(frozen=True)
class BlockSizes:
    """The core's table plus what the backend does with each size (why rejected, which fallback)."""

    rows: list[BlockSizeRow]
    default_block_size: int
    current_block_size: int
    backend: str
    notes: dict[int, str]  # block size -> fallback / forcing note
    bytes_per_block_at: Callable[[int], int]


def block_sizes(resolved: Resolved, est: Estimate, fields: BlockFields) -> BlockSizes:
    """Each candidate --block-size through the estimator: refused, forced, fallen back, or accepted."""
    default = est if resolved.serve.block_size is None else estimate_for(resolved, block_size=None)
    candidates = sorted({*DISPLAY_BLOCK_SIZES, default.block_size, est.block_size})
    per_size: dict[int, int] = {}
    notes: dict[int, str] = {}
    for size in candidates:
        try:
            at = estimate_for(resolved, block_size=size)
        except InvalidServeConfigError as exc:
            notes[size] = exc.message
            if exc.message.startswith("no attention backend"):  # name the rule, not the whole search
                rule = backend_rule(default.attention_backend)
                notes[size] = Text(
                    "{attention_backend} {rule}; no other backend here takes {size}",
                    attention_backend=default.attention_backend,
                    rule=rule,
                    size=size,
                )
            continue
        if at.block_size != size:
            notes[size] = (
                at.warnings[0]
                if at.warnings
                else Text("vLLM runs B = {block_size} instead", block_size=at.block_size)
            )
            continue
        per_size[size] = at.bytes_per_block
        if at.attention_backend != default.attention_backend:
            notes[size] = Text(
                "{attention_backend} {attention_backend2}: vLLM falls back to {attention_backend3}",
                attention_backend=default.attention_backend,
                attention_backend2=backend_rule(default.attention_backend),
                attention_backend3=at.attention_backend,
            )

    def bytes_per_block_at(size: int) -> int:
        # Sizes the backend refuses still get a number (attention pages are linear in B).
        return per_size.get(size) or max(1, est.bytes_per_block * size // max(est.block_size, 1))

    rows = block_size_table(
        allowed_block_sizes=sorted(per_size),
        seq_tokens_typical=fields.typical_lengths,
        kv_cache_bytes=max(0, est.kv_cache_bytes),
        bytes_per_block_at=bytes_per_block_at,
        shared_prefix_tokens=fields.shared_prefix_tokens,
        default_block_size=default.block_size,
        max_model_len=est.max_model_len,
        candidate_block_sizes=candidates,
    )
    return BlockSizes(
        rows, default.block_size, est.block_size, default.attention_backend, notes, bytes_per_block_at
    )


@dataclass(frozen=True)
class PrefixResult:
    hit: PrefixHit
    num_requests: int
    bytes_per_block: int
    saved_bytes: int
    saved_tokens: int
    caching_enabled: bool


def prefix_caching(resolved: Resolved) -> bool:
    """Whether vLLM caches prefixes for these inputs: the flag, else this release's default for them."""
    sizing = sizing_for(
        model=resolved.model, device=resolved.device, serve=resolved.serve, vllm_version=resolved.vllm_version
    )
    return sizing.resolved.prefix_caching


def prefix_for(resolved: Resolved, fields: BlockFields, est: Estimate, sizes: BlockSizes) -> PrefixResult:
    """The core's calculator at the prefix block size asked for (else the engine's); memory saved counts
    only the blocks that actually hit. A PlannerError names the field (request_tokens below the prefix)."""
    block_size = fields.prefix_block_size or est.block_size
    bytes_per_block = sizes.bytes_per_block_at(block_size)
    hit = prefix_cache_hit(
        shared_prefix_tokens=fields.shared_prefix_tokens,
        block_size=block_size,
        request_tokens=fields.request_tokens,
        extra_keys_differ=fields.extra_keys_differ,
        mm_item_start_token=fields.mm_item_start_token,
    )
    n = fields.num_requests_sharing
    saved = prefix_memory_saved_bytes(
        shared_prefix_tokens=hit.tokens_hit,
        block_size=block_size,
        num_requests=n,
        bytes_per_block=bytes_per_block,
    )
    return PrefixResult(
        hit, n, bytes_per_block, saved, hit.tokens_hit * max(n - 1, 0), prefix_caching(resolved)
    )


def engine_for(resolved: Resolved, est: Estimate) -> EngineParams:
    """The simulator's engine from the estimate; a PlannerError naming the field when vLLM would not start."""
    if not est.fits or est.num_gpu_blocks < 2:
        # the planner's verdict (app.core.verdicts.classify) names the field: S-bound points at the length
        field = "max_model_len" if est.verdict == "s_bound" else "gpu_memory_utilization"
        raise PlannerError(
            field, Text("vLLM would not start, so there is nothing to simulate: {error}", error=est.error)
        )
    try:  # the estimate's engine numbers under their own names, and the release's prefix caching
        return same_named(EngineParams, est, enable_prefix_caching=prefix_caching(resolved))
    except ValidationError as exc:
        raise PlannerError("max_num_batched_tokens", _first_message(exc)) from exc


def workload_spec(
    *,
    preset: WorkloadPreset | None,
    classes: Sequence[RequestClass] | None,
    num_requests: int | None,
    concurrency: int | None,
    arrival_rate: float | None,
    seed: int,
) -> WorkloadSpec:
    """A preset's spec (or the custom classes) with the overrides given; PlannerError names the field."""
    data: dict[str, Any]
    if preset is not None:
        data = preset.spec.model_dump()
    else:
        data = {"num_requests": DEFAULT_CUSTOM_NUM_REQUESTS, "concurrency": DEFAULT_CUSTOM_CONCURRENCY}
    if classes is not None:
        data["classes"] = [c.model_dump() for c in classes]
    if num_requests is not None:
        data["num_requests"] = num_requests
    if arrival_rate is not None:
        data["arrival_rate"] = arrival_rate
        data["concurrency"] = concurrency  # both given: WorkloadSpec refuses, as it should
    elif concurrency is not None:
        data["concurrency"] = concurrency
        data["arrival_rate"] = None
    data["seed"] = seed
    try:
        return WorkloadSpec.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else "concurrency"
        raise PlannerError(field, _first_message(exc)) from exc
