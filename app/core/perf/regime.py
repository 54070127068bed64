"""Which regime binds a speed figure: one rule for the steady state (predict.steady_regime) and the
simulated benchmark (bench.simulate_bench), so the two answers of one Speed section name the same cause.

In order: the KV pool (requests wait for blocks or are preempted), the queue (more requests in flight per
rank than ``max_num_seqs`` runs at once: the rest wait for a running slot), the host (vLLM's per-step CPU
work outlasts the device's step for at least half the decode time), memory bandwidth (the decode steps'
memory-bound part is at least half their time), else compute.
"""

from __future__ import annotations

from typing import Literal

Regime = Literal["compute", "memory_bandwidth", "host", "kv_pool", "queue"]
MEMORY_BOUND_SHARE = 0.5  # decode steps whose memory-bound part is at least this share: bandwidth binds
HOST_BOUND_SHARE = 0.5  # decode time whose steps the host's work paces, at least this share: the host binds


def binding_regime(
    *,
    kv_limited: bool,
    clients_per_rank: float,
    max_num_seqs: int,
    host_share: float,
    memory_share: float,
) -> Regime:
    """The regime that binds (module docstring): ``clients_per_rank`` is the requests in flight on one
    busy data-parallel rank (the closed loop's clients, an open loop's Little's-law count)."""
    if kv_limited:
        return "kv_pool"
    if clients_per_rank > max_num_seqs:
        return "queue"
    if host_share >= HOST_BOUND_SHARE:
        return "host"
    if memory_share >= MEMORY_BOUND_SHARE:
        return "memory_bandwidth"
    return "compute"
