"""The capacity chart (maximum concurrency against --max-model-len) and the exact half of an estimate that
the explorer and the chart reuse at other lengths (:func:`sizing_for`)."""

from __future__ import annotations

from dataclasses import dataclass

from app.core import kv
from app.core.defaults import (
    ResolvedFlags,
    batch_flags,
    checkpoint_kv_cache_dtype,
    resolve,
    serve_as_run,
    validate_parallel,
)
from app.core.estimate.entry import estimate
from app.core.estimate.stages import inflight_tokens, stage_layout
from app.core.result import ErrorKind, Estimate
from app.core.specs import DeviceSpec, ModelSpec, ServeConfig
from app.core.versions import VersionRules, rules_for

# the capacity chart's length axis: from 512 tokens to the model's maximum, and at least to 1,024
CURVE_SHORTEST_LEN = 512
CURVE_LONGEST_LEN_AT_LEAST = 1024
# failures that do not depend on max_model_len (the capacity curve cannot reuse one estimate's pool)
ALWAYS_FAILS = frozenset({ErrorKind.STARTUP_FREE_MEMORY, ErrorKind.LOAD_OOM})


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
    validate_parallel(model=model, serve=serve, device=device, rules=rules)
    resolved_kv = checkpoint_kv_cache_dtype(model=model, serve=serve, rules=rules, device=device)
    if resolved_kv is not None:
        serve = serve.model_copy(update={"kv_cache_dtype": resolved_kv[0]})
    flags, _, _ = resolve(model=model, device=device, serve=serve, rules=rules)
    serve = serve_as_run(serve=serve, flags=flags)
    ranges = kv.stage_layer_ranges(
        num_layers=model.num_layers, pipeline_parallel_size=serve.pipeline_parallel_size
    )
    layout, _ = stage_layout(
        model=model, serve=serve, rules=rules, flags=flags, layer_range=ranges[-1], index=len(ranges) - 1
    )
    inflight = inflight_tokens(
        rules=rules,
        max_num_batched_tokens=flags.max_num_batched_tokens,
        pipeline_parallel_size=serve.pipeline_parallel_size,
    )
    return Sizing(layout=layout, resolved=flags, inflight_tokens=inflight, rules=rules)
