"""The simulator's work budget: refused before the run from its prefills, stopped during it, deadline last."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.workload import (
    WORKLOAD_PRESETS,
    EngineParams,
    WorkloadSpec,
    WorkloadTooLargeError,
    _Simulator,
    prefill_steps_needed,
    simulate,
)

ENGINE = EngineParams(
    num_gpu_blocks=40_001,  # 40,000 usable blocks of 16 tokens = 640,000 tokens
    block_size=16,
    max_num_seqs=1,
    max_model_len=500_000,
    max_num_batched_tokens=1,
    enable_prefix_caching=False,
)


def _spec(prompt: int, output: int, num_requests: int, **extra: Any) -> WorkloadSpec:
    return WorkloadSpec.model_validate(
        {
            "classes": [{"share": 1.0, "prompt_tokens": prompt, "output_tokens": output, **extra}],
            "num_requests": num_requests,
            "concurrency": 1,
        }
    )


def test_prefill_lower_bound_by_hand() -> None:
    # 3 prompts of 10 tokens at 4 tokens a step: 30 tokens need ceil(30 / 4) = 8 steps at least.
    assert prefill_steps_needed(uncached_prompt_tokens=[10, 10, 10], max_num_batched_tokens=4) == 8
    assert prefill_steps_needed(uncached_prompt_tokens=[], max_num_batched_tokens=4) == 0


def test_issue_workload_refused_before_the_first_step() -> None:
    # The issue's shape: 20,000 requests of 400,000 prompt tokens at 1 token a step = 8·10⁹ steps.
    spec = _spec(400_000, 1, 20_000)
    sim = _Simulator(spec, ENGINE, False)
    with pytest.raises(WorkloadTooLargeError) as caught:
        sim.check_work_needed()
    assert caught.value.needed == 8_000_000_000
    assert caught.value.limit == 600_000
    assert caught.value.field == "num_requests"
    assert "8,000,000,000" in caught.value.message and "600,000" in caught.value.message
    assert sim.work == 0  # nothing was stepped


def test_rejected_requests_do_not_count() -> None:
    # prompt + output = 600,001 > max_model_len 500,000: every request is rejected on arrival.
    result = simulate(workload=_spec(600_000, 1, 20_000), engine=ENGINE)
    assert result.rejected == 20_000 and result.rejected_by_reason == {"max_model_len": 20_000}


def test_cached_prefix_counts_only_once_per_request_tail() -> None:
    # 16-token blocks, 64-token shared prefix = 4 blocks; a 100-token prompt leaves 36 uncached tokens
    # for the lower bound: 10 requests -> 360 steps at 1 token a step.
    engine = ENGINE.model_copy(update={"enable_prefix_caching": True})
    sim = _Simulator(_spec(100, 1, 10, shared_prefix_tokens=64), engine, False)
    assert sim.check_work_needed() == 360


def test_run_stops_at_the_work_limit() -> None:
    # 1,000 requests of 1 prompt + 50 output tokens, one at a time: the prefill lower bound is
    # 1,000 steps, but each request costs 3 units (its prefill step, its decode span in closed form,
    # the step it finishes in) = 3,000. A 2,000 limit passes the pre-check and stops at the check
    # after 2,048 units (checks every 1,024).
    spec = _spec(1, 50, 1_000)
    with pytest.raises(WorkloadTooLargeError) as caught:
        simulate(workload=spec, engine=ENGINE, max_work=2_000, max_seconds=60)
    assert "more than 2,000" in caught.value.message
    assert caught.value.needed == 2_048
    # with room it runs: 1,000 x 50 steps (first output token with the prefill, 49 decodes)
    assert simulate(workload=spec, engine=ENGINE, max_work=3_000, max_seconds=60).steps == 50_000


def test_deadline_is_the_last_line_of_defence() -> None:
    with pytest.raises(WorkloadTooLargeError, match="did not finish within 0 s"):
        simulate(workload=_spec(100, 1, 1_000), engine=ENGINE, max_seconds=0)


def test_presets_at_the_page_cap_fit_the_budget() -> None:
    # The explorer's request cap (20,000) on every preset, on a mid-size pool: no refusal.
    engine = EngineParams(
        num_gpu_blocks=20_000,
        block_size=16,
        max_num_seqs=256,
        max_model_len=131_072,
        max_num_batched_tokens=8192,
    )
    for preset in WORKLOAD_PRESETS.values():
        spec = preset.spec.model_copy(update={"num_requests": 20_000})
        result = simulate(workload=spec, engine=engine, max_seconds=60)
        assert result.finished + result.rejected == 20_000


@settings(max_examples=40, deadline=None)
@given(
    block_size=st.sampled_from([1, 2, 4, 16]),
    decoders=st.lists(st.integers(0, 15), min_size=1, max_size=20),
    free=st.integers(0, 200),
    limit=st.integers(1, 300),
    step=st.integers(0, 1000),
)
def test_decode_span_closed_form_matches_stepping(
    block_size: int, decoders: list[int], free: int, limit: int, step: int
) -> None:
    # The closed form (limit > B) against stepping one step at a time over the same buckets.
    sim = _Simulator(_spec(10, 10, 1), ENGINE.model_copy(update={"block_size": block_size}), False)
    sim.bucket = [0] * block_size
    for residue in decoders:
        sim.bucket[residue % block_size] += 1
    sim.n_dec = len(decoders)
    span, allocated, total = sim._decode_span(step, limit, free)
    expect_span = expect_alloc = expect_total = 0
    for t in range(step, step + limit):
        need = sim.bucket[t % block_size]
        if expect_alloc + need > free:
            break
        expect_alloc += need
        expect_total += expect_alloc
        expect_span += 1
    assert (span, allocated, total) == (expect_span, expect_alloc, expect_total)
