"""One pipeline stage's KV layout, and its KV pool from its measured parts, as the release sizes it (reference
§2; 0.34.0's extensible cache in app/core/extensible_kv.py), kept apart from estimate.py (800-line cap)."""

from __future__ import annotations

from app.core import budget, extensible_kv, extras, kv, situations
from app.core.defaults import ResolvedFlags
from app.core.specs import DeviceSpec, ModelSpec, ServeConfig
from app.core.versions import VersionRules, graphs_budgeted


def stage_pool_bytes(
    *,
    device: DeviceSpec,
    serve: ServeConfig,
    rules: VersionRules,
    requested: int,
    parts: tuple[int, int, int, int],
) -> int:
    """One stage's KV pool from its (weights, activation peak, non-torch, graphs) bytes: --kv-cache-memory-bytes,
    0.34.0's extensible cache (extensible_kv.pool_bytes), else the profiled budget's remainder (reference §2)."""
    weights, activation, non_torch, graphs = parts
    given = situations.kv_bytes_given(rules=rules, device=device, serve=serve)
    if given is not None:
        return given
    if extensible_kv.applies(rules=rules, device=device, serve=serve):
        return extensible_kv.pool_bytes(
            requested_bytes=requested,
            free_at_start_bytes=device.memory_total_bytes
            - budget.CUDA_CONTEXT_BYTES
            - situations.used_by_others_bytes(serve),
            non_kv_bytes=weights + non_torch + graphs,
            transient_peak_bytes=activation,
            platform=device.platform,
        )
    kv_bytes = requested - weights - activation - non_torch
    if graphs_budgeted(rules=rules, platform=device.platform):
        kv_bytes -= graphs
    if situations.others_in_pool(rules=rules, device=device):
        # non-torch = (T - free) - torch allocated, other processes included (§2.4, §9)
        kv_bytes -= situations.used_by_others_bytes(serve)
    kv_bytes -= situations.cleared_before_halving_bytes(rules=rules, device=device, serve=serve)
    return kv_bytes // situations.pool_divisor(rules=rules, device=device)


def stage_layout(
    *,
    model: ModelSpec,
    serve: ServeConfig,
    rules: VersionRules,
    flags: ResolvedFlags,
    layer_range: tuple[int, int],
    index: int,
) -> tuple[kv.KVLayout, extras.StageExtras]:
    """One pipeline stage's KV layout with the extras that change it (a draft's KV layers join it)."""
    model_dtype = budget.serving_dtype(model=model, serve=serve)
    layout = kv.build_layout(
        model=model,
        layer_range=layer_range,
        tensor_parallel_size=serve.tensor_parallel_size,
        block_size=flags.choice.block_size,
        kv_cache_dtype=serve.kv_cache_dtype,
        model_dtype=model_dtype,
        rules=rules,
        hybrid=flags.hybrid,
        pad_pages=flags.choice.pads_pages,
        backend=flags.choice.name,
    )
    stage_extras = extras.stage_extras(
        model=model,
        serve=serve,
        rules=rules,
        layout=layout,
        layer_range=layer_range,
        is_first=index == 0,
        is_last=index == serve.pipeline_parallel_size - 1,
        model_dtype=model_dtype,
        max_num_batched_tokens=flags.max_num_batched_tokens,
    )
    return extras.with_draft_kv(layout, stage_extras), stage_extras
