"""A sweep that replays one prompt set on one server with prefix caching on (the row's ``warm_prefix_cache``):
every prompt's full blocks are cached before it arrives, so only the rest is prefilled.

vLLM v1/core/kv_cache_manager.py, KVCacheManager.get_computed_blocks: ``max_cache_hit_length =
request.num_tokens - 1`` (the last prompt token is always computed) and hits are whole blocks; v1/core/block_pool.py
evicts the least recently freed block first, so a replay in the same order keeps its hits only where the pool held
every request's blocks (IOG-Foundation's run_benchmark.sh and surajssd/llm-k8s's runner replay seed-fixed prompts
rate after rate: bench/data/perf/sources/README.md, sources-r15/SOURCES.md)."""

from __future__ import annotations

from dataclasses import replace

from app.core.perf.rates import rates_of
from app.core.perf.simulate import EngineLimits, SimResult, run
from tests.perf_steps import llama70_fp8_h100

# Two prompts of 100 tokens, 2 output tokens each, blocks of 16: a whole sequence is 102 tokens = 7 blocks, both 14.
# Warm, a prompt's hit is (100 - 1) // 16 * 16 = 96 tokens, so 4 are prefilled; cold, all 100 are, and with a
# 64-token budget the first prompt alone takes two steps (64, then 36) before its first token.
LIMITS = EngineLimits(
    max_num_seqs=8,
    max_num_batched_tokens=64,
    pool_blocks=14,
    block_size=16,
    growth_groups=1,
    fixed_blocks=0,
    prefix_cache=True,
    pipeline_stages=1,
    stage_hop_s=0.0,
)


def _run(limits: EngineLimits, *, warm: bool) -> SimResult:
    planned = llama70_fp8_h100()
    rates = rates_of(physics=planned.physics, coefficients=planned.coefficients)
    return run(
        rates=replace(rates, host_overlapped=False),
        limits=limits,
        prompts=[100, 100],
        outputs=[2, 2],
        send_at=[0.0, 0.0],
        max_concurrency=None,
        overhead_s=0.0,
        prefix_tokens=0,
        warm_prompts=warm,
    )


def test_warm_prompts_prefill_only_their_last_partial_block() -> None:
    cold, warm = _run(LIMITS, warm=False), _run(LIMITS, warm=True)
    # warm: both prompts' 4 + 4 tokens fit one 64-token step, so both first tokens come from the same first step
    assert warm.ttft_s[0] == warm.ttft_s[1]
    # cold: request 0 needs two steps (64 + 36 tokens) and request 1 a third, so its first token comes later
    assert cold.ttft_s[1] > cold.ttft_s[0] > warm.ttft_s[0]


def test_a_pool_that_cannot_hold_every_sequence_keeps_no_hits() -> None:
    # 13 blocks < 14: the replay evicts each block before its turn, and the run is the cold one exactly
    small = replace(LIMITS, pool_blocks=13)
    assert _run(small, warm=True).ttft_s == _run(small, warm=False).ttft_s
    assert _run(LIMITS, warm=True).ttft_s != _run(LIMITS, warm=False).ttft_s


def test_warm_needs_prefix_caching_on() -> None:
    off = replace(LIMITS, prefix_cache=False)
    assert _run(off, warm=True).ttft_s == _run(off, warm=False).ttft_s
