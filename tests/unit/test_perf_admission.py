"""Admission at a full KV pool: vLLM 0.19.0's scheduler_reserve_full_isl gate, simulated.

vLLM 0.19.0 config/scheduler.py: ``scheduler_reserve_full_isl: bool = True`` -- "the scheduler checks whether
the full input sequence length fits in the KV cache before admitting a new request, rather than only checking
the first chunk". Its v1/core/sched/scheduler.py waiting loop calls ``kv_cache_manager.can_fit_full_sequence``
(blocks for ``request.num_tokens`` against the free blocks) before ``allocate_slots`` of the first chunk;
0.18.0 has neither, and admits on the first chunk's blocks alone.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.core.perf.bench import engine_limits
from app.core.perf.rates import StepRates, rates_of
from app.core.perf.simulate import EngineLimits, run
from app.core.versions import rules_for
from tests.perf_steps import llama70_fp8_h100


@pytest.fixture(scope="module")
def rates_and_coefficients() -> tuple:
    planned = llama70_fp8_h100()
    rates = rates_of(physics=planned.physics, coefficients=planned.coefficients)
    return planned.estimate, rates, planned.coefficients


# A pool of 10 blocks of 16 tokens, a 64-token budget, two prompts of 96 tokens (6 blocks each) and 2 output
# tokens, both waiting at t = 0:
#   step 1: request 0's first chunk, 64 tokens = 4 blocks (free 6); the budget is spent.
#   step 2: request 0's last 32 tokens = 2 blocks (free 4); 32 tokens of budget are left for request 1.
#     first chunk only (0.18.0): request 1's 32 tokens need 2 blocks <= 4: admitted (free 2); two run.
#       step 3: request 0's decode token 97 needs a 7th block (free 1), request 1's next 32 tokens 2 blocks:
#       short, so the last admitted (request 1) is preempted and recomputed later.
#     whole sequence (0.19.0): request 1's 96 tokens need 6 blocks > 4 free: it waits; one runs at a time and
#       request 1 is admitted when request 0 finishes (after its one decode step): no preemption.
LIMITS = EngineLimits(
    max_num_seqs=8,
    max_num_batched_tokens=64,
    pool_blocks=10,
    block_size=16,
    growth_groups=1,
    fixed_blocks=0,
    prefix_cache=False,
    pipeline_stages=1,
    stage_hop_s=0.0,
)


def _two_requests(rates: StepRates, limits: EngineLimits) -> tuple[int, int]:
    res = run(
        rates=replace(rates, host_overlapped=False),
        limits=limits,
        prompts=[96, 96],
        outputs=[2, 2],
        send_at=[0.0, 0.0],
        max_concurrency=None,
        overhead_s=0.0,
        prefix_tokens=0,
    )
    return res.max_running, res.preemptions


def test_first_chunk_admission_overcommits_and_preempts(rates_and_coefficients: tuple) -> None:
    _, rates, _ = rates_and_coefficients
    max_running, preemptions = _two_requests(rates, LIMITS)
    assert max_running == 2
    assert preemptions >= 1


def test_whole_sequence_admission_waits_instead(rates_and_coefficients: tuple) -> None:
    _, rates, _ = rates_and_coefficients
    max_running, preemptions = _two_requests(rates, replace(LIMITS, admit_full_sequence=True))
    assert (max_running, preemptions) == (1, 0)


def test_the_gate_is_the_releases_default() -> None:
    assert rules_for("0.18.0").scheduler_reserve_full_isl is False
    assert rules_for("0.19.0").scheduler_reserve_full_isl is True
    assert rules_for("0.33.0").scheduler_reserve_full_isl is True


def test_engine_limits_read_the_gate_from_the_estimates_release(rates_and_coefficients: tuple) -> None:
    est, _, coefficients = rates_and_coefficients
    assert engine_limits(estimate=est, coefficients=coefficients, prefix_cache=True).admit_full_sequence
    old = est.model_copy(update={"vllm_version": "0.18.0"})
    assert not engine_limits(estimate=old, coefficients=coefficients, prefix_cache=True).admit_full_sequence
