"""One pipeline stage's KV pool from its measured parts, as the release sizes it (reference
§2; 0.34.0's extensible cache in app/core/extensible_kv.py), called by app.core.estimate.stages for each stage."""

from __future__ import annotations

from app.core import extensible_kv, situations
from app.core.specs import DeviceSpec, ServeConfig
from app.core.versions import VersionRules, graphs_budgeted


def stage_pool_bytes(
    *,
    device: DeviceSpec,
    serve: ServeConfig,
    rules: VersionRules,
    requested: int,
    parts: tuple[int, int, int, int],
) -> tuple[int, int]:
    """One stage's KV pool from its (weights, activation peak, non-torch, graphs) bytes: --kv-cache-memory-bytes,
    0.34.0's extensible cache (extensible_kv.pool_bytes), else the profiled budget's remainder (reference §2);
    with what the 310P worker holds at start-up and takes off before halving (situations.cleared_before_halving_bytes,
    computed here only; 0 on the other paths), which Estimate.held_at_start_bytes carries."""
    weights, activation, non_torch, graphs = parts
    given = situations.kv_bytes_given(rules=rules, device=device, serve=serve)
    if given is not None:
        return given, 0
    if extensible_kv.applies(rules=rules, device=device, serve=serve):
        pool = extensible_kv.pool_bytes(
            requested_bytes=requested,
            free_at_start_bytes=situations.free_at_start_bytes(device=device, serve=serve),
            non_kv_bytes=weights + non_torch + graphs,
            transient_peak_bytes=activation,
            platform=device.platform,
        )
        return pool, 0
    kv_bytes = requested - weights - activation - non_torch
    if graphs_budgeted(rules=rules, platform=device.platform):
        kv_bytes -= graphs
    if situations.others_in_pool(rules=rules, device=device):
        # non-torch = (T - free) - torch allocated, other processes included (§2.4, §9)
        kv_bytes -= situations.used_by_others_bytes(serve)
    held = situations.cleared_before_halving_bytes(rules=rules, device=device, serve=serve)
    return (kv_bytes - held) // situations.pool_divisor(rules=rules, device=device), held
