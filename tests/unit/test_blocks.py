"""Block arithmetic against values worked by hand from the seed and the reference (§3.5, §6)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.blocks import (
    BLOCK_TABLE_ENTRY_BYTES,
    block_size_table,
    blocks_for_tokens,
    expected_tail_waste_fraction,
    full_blocks,
    prefix_cache_hit,
    prefix_memory_saved_bytes,
    tail_waste_tokens,
)
from app.core.errors import PlannerError

# Llama-3-8B-like KV bytes per token: 2 (K,V) x 32 layers x 8 KV heads x 128 dims x 2 bytes = 131,072
BYTES_PER_TOKEN = 2 * 32 * 8 * 128 * 2
GIB = 2**30


def test_blocks_for_tokens_rounds_up() -> None:
    # 1000 / 16 = 62.5 -> 63 blocks; 1008 / 16 = 63 exactly; 0 tokens need no block
    assert blocks_for_tokens(tokens=1000, block_size=16) == 63
    assert blocks_for_tokens(tokens=1008, block_size=16) == 63
    assert blocks_for_tokens(tokens=0, block_size=16) == 0
    assert full_blocks(tokens=14, block_size=4) == 3


def test_tail_waste_seed_example() -> None:
    # S=1000, B=16: 63 blocks = 1008 slots, 1008 - 1000 = 8 wasted
    assert tail_waste_tokens(seq_tokens=1000, block_size=16) == 8
    assert tail_waste_tokens(seq_tokens=1008, block_size=16) == 0


def test_expected_tail_waste_fraction_is_b_over_2s() -> None:
    # seed: B / (2S) with S=8192, B=16 -> 16 / 16384 = 0.0009765625, i.e. 0.098 %
    assert expected_tail_waste_fraction(seq_tokens=8192, block_size=16) == 16 / 16384
    assert f"{expected_tail_waste_fraction(seq_tokens=8192, block_size=16):.3%}" == "0.098%"


def mean_tail_waste_tokens_uniform(*, low_tokens: int, high_tokens: int, block_size: int) -> float:
    """Exact mean tail waste over sequence lengths uniformly distributed on [low, high] (integers).

    The waste (-S) mod B repeats with period B and sums to 0 + 1 + ... + (B-1) = B(B-1)/2 over
    each period, so only the partial period is summed term by term (at most B - 1 terms). The check
    of the seed's B / (2S): (B - 1) / 2 slots exactly over whole periods.
    """
    count = high_tokens - low_tokens + 1
    periods, rest = divmod(count, block_size)
    total = periods * block_size * (block_size - 1) // 2
    total += sum((-s) % block_size for s in range(high_tokens - rest + 1, high_tokens + 1))
    return total / count


def test_mean_tail_waste_over_uniform_lengths() -> None:
    # lengths 1..16, B=16: wastes 15, 14, ..., 1, 0 -> sum 120 / 16 = 7.5 = (B - 1) / 2
    assert mean_tail_waste_tokens_uniform(low_tokens=1, high_tokens=16, block_size=16) == 7.5
    # one length, 1000: the single-sequence waste, 8
    assert mean_tail_waste_tokens_uniform(low_tokens=1000, high_tokens=1000, block_size=16) == 8.0
    # lengths 1..5, B=4: wastes 3, 2, 1, 0, 3 -> 9 / 5
    assert mean_tail_waste_tokens_uniform(low_tokens=1, high_tokens=5, block_size=4) == 9 / 5


@settings(deadline=None)  # a shared machine's scheduling is not what this checks
@given(
    low=st.integers(min_value=0, max_value=500),
    span=st.integers(min_value=0, max_value=300),
    block_size=st.integers(min_value=1, max_value=64),
)
def test_mean_tail_waste_matches_brute_force(low: int, span: int, block_size: int) -> None:
    high = low + span
    brute = sum(tail_waste_tokens(seq_tokens=s, block_size=block_size) for s in range(low, high + 1))
    exact = mean_tail_waste_tokens_uniform(low_tokens=low, high_tokens=high, block_size=block_size)
    assert exact == pytest.approx(brute / (span + 1))


def test_prefix_hit_seed_example_full_blocks_only() -> None:
    # The seed's mechanism: "only the first 8 tokens (two full blocks) hit, the third block matches
    # only 2/4 and is lost entirely". Two full blocks plus 2/4 of a third is 10 shared tokens:
    hit = prefix_cache_hit(shared_prefix_tokens=10, block_size=4)
    assert (hit.tokens_hit, hit.blocks_hit, hit.tokens_recomputed) == (8, 2, 2)
    assert "partial block of 2" in hit.reason
    # The seed also says "14 shared tokens", but 14 = 3 x 4 + 2: three full blocks (12 tokens) hit
    # and the fourth block matches 2/4. We keep the arithmetic, not the misprint.
    hit = prefix_cache_hit(shared_prefix_tokens=14, block_size=4)
    assert (hit.tokens_hit, hit.blocks_hit, hit.tokens_recomputed) == (12, 3, 2)


def test_prefix_hit_cache_salt_breaks_the_chain() -> None:
    # cache_salt is only in the first block's hash, but every later block chains on it -> 0 hit
    hit = prefix_cache_hit(shared_prefix_tokens=10, block_size=4, extra_keys_differ=["cache_salt"])
    assert (hit.tokens_hit, hit.tokens_recomputed) == (0, 10)
    assert "cache_salt" in hit.reason


def test_prefix_hit_lora_and_prompt_embeds_give_nothing() -> None:
    assert (
        prefix_cache_hit(shared_prefix_tokens=64, block_size=16, extra_keys_differ=["lora"]).tokens_hit == 0
    )
    assert (
        prefix_cache_hit(
            shared_prefix_tokens=64, block_size=16, extra_keys_differ=["prompt_embeds"]
        ).tokens_hit
        == 0
    )


def test_prefix_hit_multimodal_item_stops_the_chain_at_its_block() -> None:
    # 14 shared, item starting at token 9, B=4: it sits in block 2 (tokens 8..11) -> blocks 0, 1 hit = 8
    hit = prefix_cache_hit(
        shared_prefix_tokens=14, block_size=4, extra_keys_differ=["mm"], mm_item_start_token=9
    )
    assert hit.tokens_hit == 8
    # item at token 5 -> block 1 -> only block 0 hits = 4 tokens
    assert (
        prefix_cache_hit(
            shared_prefix_tokens=14, block_size=4, extra_keys_differ=["mm"], mm_item_start_token=5
        ).tokens_hit
        == 4
    )
    # position unknown: assumed in the first block -> nothing
    assert prefix_cache_hit(shared_prefix_tokens=14, block_size=4, extra_keys_differ=["mm"]).tokens_hit == 0


def test_prefix_hit_capped_by_last_token() -> None:
    # the request is exactly the 8-token prefix: cap = (8 - 1) // 4 = 1 block -> 4 tokens, not 8
    hit = prefix_cache_hit(shared_prefix_tokens=8, block_size=4, request_tokens=8)
    assert (hit.tokens_hit, hit.blocks_hit, hit.tokens_recomputed) == (4, 1, 4)
    assert "last token" in hit.reason
    # with one more token the cap is (9 - 1) // 4 = 2 blocks -> the full 8 hit
    assert prefix_cache_hit(shared_prefix_tokens=8, block_size=4, request_tokens=9).tokens_hit == 8


def test_prefix_hit_rejects_bad_input() -> None:
    with pytest.raises(PlannerError) as err:
        prefix_cache_hit(shared_prefix_tokens=8, block_size=4, extra_keys_differ=["tenant"])
    assert err.value.field == "extra_keys_differ"
    with pytest.raises(PlannerError):
        prefix_cache_hit(shared_prefix_tokens=8, block_size=0)
    with pytest.raises(PlannerError):
        prefix_cache_hit(shared_prefix_tokens=8, block_size=4, request_tokens=7)


def test_prefix_memory_saved() -> None:
    # 10 shared tokens, B=4 -> 2 full blocks held once instead of 10 times: 2 x 9 x 1000 bytes
    saved = prefix_memory_saved_bytes(
        shared_prefix_tokens=10, block_size=4, num_requests=10, bytes_per_block=1000
    )
    assert saved == 18_000
    # 14 shared -> 3 full blocks: 3 x 9 x 1000
    saved = prefix_memory_saved_bytes(
        shared_prefix_tokens=14, block_size=4, num_requests=10, bytes_per_block=1000
    )
    assert saved == 27_000
    assert (
        prefix_memory_saved_bytes(shared_prefix_tokens=14, block_size=4, num_requests=1, bytes_per_block=1000)
        == 0
    )


def _bytes_per_block(block_size: int) -> int:
    return block_size * BYTES_PER_TOKEN


def test_block_size_table_rows() -> None:
    rows = block_size_table(
        allowed_block_sizes=[16, 32, 64],
        candidate_block_sizes=[16, 32, 48, 64],
        seq_tokens_typical=[1000, 100],
        kv_cache_bytes=GIB,
        bytes_per_block_at=_bytes_per_block,
        shared_prefix_tokens=40,
        default_block_size=16,
        max_model_len=4096,
    )
    by_size = {r.block_size: r for r in rows}
    assert [r.block_size for r in rows] == [16, 32, 48, 64]
    b16, b32, b48, b64 = by_size[16], by_size[32], by_size[48], by_size[64]
    # 1 GiB / (16 x 131072 = 2 MiB) = 512 blocks; usable (511) x 16 = 8176 tokens
    assert (b16.num_gpu_blocks, b16.usable_tokens) == (512, 8176)
    assert b32.num_gpu_blocks == 256
    # B=16: 1000 -> 1008 (8 wasted), 100 -> 112 (12) -> mean 10, fraction 20 / 1120
    assert b16.mean_tail_waste_tokens == 10.0
    assert b16.tail_waste_fraction == 20 / 1120
    # B=32: 1000 -> 1024 (24), 100 -> 128 (28) -> mean 26, fraction 52 / 1152
    assert b32.mean_tail_waste_tokens == 26.0
    assert b32.tail_waste_fraction == 52 / 1152
    # 40-token prefix: B=16 -> 2 blocks = 32; B=32 -> 1 block = 32; B=64 -> none
    assert (b16.prefix_tokens_hit, b32.prefix_tokens_hit, b64.prefix_tokens_hit) == (32, 32, 0)
    # block table: 4096 / 16 = 256 int32 entries = 1024 bytes per request per group
    assert b16.block_table_entries_per_max_seq == 256
    assert b16.block_table_bytes_per_max_seq == 256 * BLOCK_TABLE_ENTRY_BYTES == 1024
    assert b16.is_default and not b32.is_default
    assert not b16.rejected and not b64.rejected
    assert b48.rejected and b48.rejected_reason is not None and "not supported" in b48.rejected_reason


def test_block_size_table_rejects_a_pool_that_cannot_hold_one_sequence_after_the_null_block() -> None:
    # 1 GiB at B=16 is 512 blocks = 8192 tokens exactly, but one block is the null block:
    # 511 usable < 512 needed for max_model_len 8192 -> rejected (vLLM's check uses available - 1 block)
    (row,) = block_size_table(
        allowed_block_sizes=[16],
        seq_tokens_typical=[8192],
        kv_cache_bytes=GIB,
        bytes_per_block_at=_bytes_per_block,
        shared_prefix_tokens=0,
        default_block_size=16,
        max_model_len=8192,
    )
    assert row.rejected
    assert row.rejected_reason is not None and "511 usable" in row.rejected_reason
