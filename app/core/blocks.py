"""Block (page) arithmetic of a paged KV cache: tail waste, prefix-cache granularity, block size.

Everything here is pure integer arithmetic on tokens, blocks and bytes, following the seed's
"block 与 page：碎片与浪费来源" section and the reference's §3.5 (null block) and §6 (prefix caching).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from app.core.errors import PlannerError
from app.core.text import N_, Msg, Plural, Text

# vLLM's BlockPool permanently holds back one block as the "null block" (reference §3.5), so a pool
# of num_gpu_blocks serves num_gpu_blocks - 1 blocks to requests.
NULL_BLOCKS = 1

# One block-table entry is an int32 block id (vLLM's per-request block table is an int32 tensor,
# one row per request and KV-cache group), hence 4 bytes per entry per request per group.
BLOCK_TABLE_ENTRY_BYTES = 4

# Only full blocks are hashed for the prefix cache (reference §6, "We only hash full blocks"), and
# the last prompt token is always recomputed (hit capped at num_tokens - 1, rounded down to blocks).
LAST_TOKENS_ALWAYS_RECOMPUTED = 1

ExtraKey = Literal["lora", "mm", "cache_salt", "prompt_embeds"]
EXTRA_KEYS: tuple[ExtraKey, ...] = ("lora", "mm", "cache_salt", "prompt_embeds")


def _check_block_size(block_size: int) -> None:
    if block_size < 1:
        raise PlannerError(
            "block_size", Text("must be a positive number of tokens, got {block_size}", block_size=block_size)
        )


def _check_non_negative(field: str, value: int) -> None:
    if value < 0:
        raise PlannerError(field, Text("must be >= 0, got {value}", value=value))


def blocks_for_tokens(*, tokens: int, block_size: int) -> int:
    """Blocks a sequence of ``tokens`` occupies: ceil(tokens / block_size). E.g. 1,000 tokens, B 16 -> 63."""
    _check_non_negative("tokens", tokens)
    _check_block_size(block_size)
    return -(-tokens // block_size)


def full_blocks(*, tokens: int, block_size: int) -> int:
    """Whole blocks inside ``tokens`` (the ones the prefix cache can hash): floor(tokens / block_size).

    E.g. 1,000 tokens, B 16 -> 62 (the 63rd block holds 8 tokens and is not hashed).
    """
    _check_non_negative("tokens", tokens)
    _check_block_size(block_size)
    return tokens // block_size


def tail_waste_tokens(*, seq_tokens: int, block_size: int) -> int:
    """Exact internal fragmentation of one sequence: allocated slots minus tokens.

    S=1000, B=16: 63 blocks = 1008 slots, 8 of them unused.
    """
    return blocks_for_tokens(tokens=seq_tokens, block_size=block_size) * block_size - seq_tokens


def expected_tail_waste_fraction(*, seq_tokens: int, block_size: int) -> float:
    """The seed's approximation of internal fragmentation: B / (2S).

    The last block of a sequence is, on average, half used, so about B/2 slots of S are wasted.
    (Exactly, for lengths spread uniformly over a whole number of blocks, the mean waste is
    (B - 1) / 2 slots; tests/unit/test_blocks.py checks it.) S=8192, B=16 gives
    16 / 16384 = 0.098 %: large blocks cost little on long sequences and a lot on short ones.
    """
    _check_block_size(block_size)
    if seq_tokens < 1:
        raise PlannerError("seq_tokens", Text("must be >= 1, got {seq_tokens}", seq_tokens=seq_tokens))
    return block_size / (2 * seq_tokens)


class PrefixHit(BaseModel):
    """How much of a shared prefix the prefix cache serves, in tokens and blocks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    shared_prefix_tokens: int
    block_size: int
    tokens_hit: int  # served from cached blocks: whole blocks only
    tokens_recomputed: int  # of the shared prefix: shared_prefix_tokens - tokens_hit
    blocks_hit: int
    reason: Msg


def prefix_cache_hit(
    *,
    shared_prefix_tokens: int,
    block_size: int,
    request_tokens: int | None = None,
    extra_keys_differ: Sequence[str] = (),
    mm_item_start_token: int | None = None,
) -> PrefixHit:
    """Tokens of a shared prefix that a second request finds in vLLM's prefix cache.

    A block's hash is hash(parent hash, its tokens, extra keys) (reference §6), so:

    * only full blocks hit: 10 shared tokens with B=4 hit 8 (two blocks), the third block matches
      only 2/4 and is recomputed;
    * with ``request_tokens`` the hit is capped at request_tokens - 1 rounded down to whole blocks
      (vLLM always recomputes the last token to get logits);
    * ``extra_keys_differ`` lists extra keys that differ between the two requests:
      ``"lora"`` and ``"prompt_embeds"`` enter every block's hash, so nothing hits;
      ``"cache_salt"`` enters only the first block's hash, but every later hash chains on it,
      so nothing hits either; ``"mm"`` (a different multimodal item) changes the hash of the block
      holding the item and, through the chain, every later one: the hit stops at the block
      holding token ``mm_item_start_token`` (unknown position: assumed to be in the first block).
    """
    _check_non_negative("shared_prefix_tokens", shared_prefix_tokens)
    _check_block_size(block_size)
    unknown = [key for key in extra_keys_differ if key not in EXTRA_KEYS]
    if unknown:
        raise PlannerError(
            "extra_keys_differ",
            Text(
                "unknown extra keys {unknown}; known: {extra_keys}",
                unknown=unknown,
                extra_keys=list(EXTRA_KEYS),
            ),
        )

    hit_blocks = shared_prefix_tokens // block_size
    reason = Plural(
        hit_blocks,
        N_("{hit_blocks} full block of {block_size} tokens"),
        N_("{hit_blocks} full blocks of {block_size} tokens"),
        hit_blocks=hit_blocks,
        block_size=block_size,
    )
    if shared_prefix_tokens % block_size:
        reason += Plural(
            shared_prefix_tokens % block_size,
            N_("; the partial block of {shared_prefix_tokens} token is never hashed"),
            N_("; the partial block of {shared_prefix_tokens} tokens is never hashed"),
            shared_prefix_tokens=shared_prefix_tokens % block_size,
        )
    if request_tokens is not None:
        if request_tokens < max(shared_prefix_tokens, 1):
            raise PlannerError("request_tokens", Text("must be >= shared_prefix_tokens and >= 1"))
        cap_blocks = (request_tokens - LAST_TOKENS_ALWAYS_RECOMPUTED) // block_size
        if cap_blocks < hit_blocks:
            hit_blocks = cap_blocks
            reason = Plural(
                cap_blocks,
                N_("capped at {cap_blocks} block: the last token of the request is always recomputed"),
                N_("capped at {cap_blocks} blocks: the last token of the request is always recomputed"),
                cap_blocks=cap_blocks,
            )

    if "lora" in extra_keys_differ:
        hit_blocks, reason = 0, Text("LoRA differs: the adapter is in every block's hash")
    elif "prompt_embeds" in extra_keys_differ:
        hit_blocks, reason = 0, Text("prompt embeddings differ: they are in every block's hash")
    elif "cache_salt" in extra_keys_differ:
        hit_blocks, reason = (
            0,
            Text("cache_salt differs: it is in the first block's hash and the chain breaks there"),
        )
    elif "mm" in extra_keys_differ:
        item_block = 0 if mm_item_start_token is None else mm_item_start_token // block_size
        if item_block < hit_blocks:
            hit_blocks = item_block
            reason = Text(
                "multimodal item differs in block {item_block}: the chain breaks there", item_block=item_block
            )

    tokens_hit = hit_blocks * block_size
    return PrefixHit(
        shared_prefix_tokens=shared_prefix_tokens,
        block_size=block_size,
        tokens_hit=tokens_hit,
        tokens_recomputed=shared_prefix_tokens - tokens_hit,
        blocks_hit=hit_blocks,
        reason=reason,
    )


def prefix_memory_saved_bytes(
    *, shared_prefix_tokens: int, block_size: int, num_requests: int, bytes_per_block: int
) -> int:
    """KV bytes saved when N concurrent requests share the full blocks of one prefix.

    The full blocks are held once instead of N times: saved = full_blocks x (N - 1) x bytes_per_block.
    Assumes every request has at least one token beyond the prefix (else the last-token cap of
    :func:`prefix_cache_hit` removes one more block from the sharing).

    E.g. a 1,000-token prefix, B 16 (62 full blocks), 8 requests, 2 MiB a block: 62 x 7 x 2,097,152 =
    910,163,968 B.
    """
    _check_non_negative("num_requests", num_requests)
    _check_non_negative("bytes_per_block", bytes_per_block)
    shared = full_blocks(tokens=shared_prefix_tokens, block_size=block_size)
    return shared * max(num_requests - 1, 0) * bytes_per_block


class BlockSizeRow(BaseModel):
    """One candidate --block-size and what it costs and buys (the seed's block-size trade-off)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    block_size: int
    bytes_per_block: int
    num_gpu_blocks: int  # kv_cache_bytes // bytes_per_block, including the null block
    usable_tokens: int  # (num_gpu_blocks - NULL_BLOCKS) x block_size
    mean_tail_waste_tokens: float  # over the typical lengths
    tail_waste_fraction: float  # wasted slots / allocated slots over the typical lengths
    prefix_tokens_hit: int  # of shared_prefix_tokens, whole blocks only
    block_table_entries_per_max_seq: int  # ceil(max_model_len / B) int32 entries per request per group
    block_table_bytes_per_max_seq: int  # x BLOCK_TABLE_ENTRY_BYTES
    is_default: bool
    rejected: bool
    rejected_reason: str | None


def block_size_table(
    *,
    allowed_block_sizes: Sequence[int],
    seq_tokens_typical: Sequence[int],
    kv_cache_bytes: int,
    bytes_per_block_at: Callable[[int], int],
    shared_prefix_tokens: int,
    default_block_size: int,
    max_model_len: int,
    candidate_block_sizes: Sequence[int] | None = None,
) -> list[BlockSizeRow]:
    """One row per candidate block size (default: the allowed ones), smallest first.

    ``bytes_per_block_at(B)`` gives the pool bytes of one block at block size B (all layers, K and
    V). A row is rejected when the attention backend does not allow that size, or when the pool
    cannot hold one ``max_model_len`` sequence after the null block is held back (vLLM's
    start-up check uses available - bytes_per_block, reference §3.5). Metadata cost is the block
    table: one int32 entry per block, per request, per KV-cache group.
    """
    if not seq_tokens_typical or min(seq_tokens_typical) < 1:
        raise PlannerError("seq_tokens_typical", Text("give at least one typical length, each >= 1 token"))
    _check_non_negative("kv_cache_bytes", kv_cache_bytes)
    if max_model_len < 1:
        raise PlannerError(
            "max_model_len", Text("must be >= 1, got {max_model_len}", max_model_len=max_model_len)
        )
    allowed = set(allowed_block_sizes)
    candidates = sorted(set(allowed_block_sizes if candidate_block_sizes is None else candidate_block_sizes))
    rows: list[BlockSizeRow] = []
    for block_size in candidates:
        _check_block_size(block_size)
        bytes_per_block = bytes_per_block_at(block_size)
        if bytes_per_block < 1:
            raise PlannerError(
                "bytes_per_block_at",
                Text(
                    "gave {bytes_per_block} bytes for B={block_size}",
                    bytes_per_block=bytes_per_block,
                    block_size=block_size,
                ),
            )
        num_gpu_blocks = kv_cache_bytes // bytes_per_block
        usable_blocks = max(num_gpu_blocks - NULL_BLOCKS, 0)
        wastes = [tail_waste_tokens(seq_tokens=s, block_size=block_size) for s in seq_tokens_typical]
        allocated = sum(seq_tokens_typical) + sum(wastes)
        entries = blocks_for_tokens(tokens=max_model_len, block_size=block_size)
        reason: str | None = None
        if block_size not in allowed:
            reason = f"block size {block_size} is not supported by the attention backend"
        elif usable_blocks < entries:
            reason = (
                f"{usable_blocks} usable blocks (null block held back) < {entries} needed "
                f"for one {max_model_len}-token sequence"
            )
        rows.append(
            BlockSizeRow(
                block_size=block_size,
                bytes_per_block=bytes_per_block,
                num_gpu_blocks=num_gpu_blocks,
                usable_tokens=usable_blocks * block_size,
                mean_tail_waste_tokens=sum(wastes) / len(wastes),
                tail_waste_fraction=sum(wastes) / allocated,
                prefix_tokens_hit=prefix_cache_hit(
                    shared_prefix_tokens=shared_prefix_tokens, block_size=block_size
                ).tokens_hit,
                block_table_entries_per_max_seq=entries,
                block_table_bytes_per_max_seq=entries * BLOCK_TABLE_ENTRY_BYTES,
                is_default=block_size == default_block_size,
                rejected=reason is not None,
                rejected_reason=reason,
            )
        )
    return rows
