"""DeepSeek-V4's KV cache as vLLM 0.33.0 lays it out (read from the wheel; versions.py ``dsv4_cache``).

Each decoder layer registers several caches (models/deepseek_v4/attention.py, compressor.py,
v1/attention/backends/mla/sparse_swa.py), all in the fp8_ds_mla layout of the FlashMLA path
(DeepseekV4FlashMLAAttention, the CUDA default on SM90 / SM100):

- every layer: a sliding-window cache (DeepseekV4SWACache: SlidingWindowMLASpec, window ``sliding_window``,
  64-token blocks, 584 B a token, the page rounded up to 576 B);
- a layer with compress ratio r > 1: the compressed latent cache (MLAAttentionSpec, tokens_per_state r:
  256 // r states of 584 B in a 256-token block, rounded up to 576 B) and the compressor's float32 state
  (CompressorStateCache: SlidingWindowMLASpec of 2 x coff x head_dim values, coff = 2 for r = 4 else 1,
  window coff x r, blocks of 4 (r = 4) or 8 (r = 128) tokens);
- a layer with r = 4 (CSA) also: the indexer's key cache (DeepseekV4IndexerCache: 64 states of index_head_dim
  + 4-byte scales per 128, uint8) and the indexer compressor's state (head index_head_dim, coff 2).

vLLM groups these for block-outermost packing (v1/core/kv_cache_planning.py _get_packed_kv_cache_groups):
layers bucket by spec type (same block size; sliding windows equal), a bucket whose page sizes come in equal
counts repeats one pattern and is split into groups of ``repeats_per_group`` pattern repeats
(``_approximate_gcd``), the rest stay whole; a block is as wide as the widest group
(_get_kv_cache_bytes_per_block), and every group's blocks come from that one pool.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from app.core.kinds import cdiv, index_head_dim
from app.core.specs import LayerKind

FP8_DS_MLA_STATE_BYTES = 584  # attention.py get_kv_cache_spec: 448 B NoPE + 128 B RoPE + 8 B scales
FP8_DS_MLA_PAGE_ALIGNMENT = 576  # _apply_alignment_padding: alignment 576 in the fp8_ds_mla layout
COMPRESSED_BLOCK_TOKENS = 256  # sparse_mla.py DeepseekV4SparseMLABackend.get_supported_kernel_block_sizes
SWA_BLOCK_TOKENS = 64  # sparse_swa.py DeepseekV4SWACache block_size default
COMPRESSOR_BLOCK_TOKENS = {4: 4, 128: 8}  # compressor.py CompressorStateCache
COMPRESSOR_STATE_BYTES = 4  # float32 kv_state + score_state
CSA_RATIO = 4  # only C4A layers build an indexer (attention.py: "Only C4A uses sparse attention")


def _round_up(value: int, step: int) -> int:
    return cdiv(value, step) * step


@dataclass(frozen=True)
class Bucket:
    """Layers of one spec type (a bucket, or a KV-cache group cut from one): kind, window, block tokens, pages."""

    kind: LayerKind
    window: int | None
    block_tokens: int
    pages: tuple[int, ...]

    @property
    def per_page(self) -> Counter[int]:
        return Counter(self.pages)

    @property
    def balanced(self) -> bool:
        return len(set(self.per_page.values())) == 1

    @property
    def repeats(self) -> int:
        """get_max_layers_per_page_size: the most layers sharing one page size."""
        return max(self.per_page.values())


def _buckets(
    *,
    ratios: tuple[int, ...],
    window: int,
    head_dim: int,
    indexer_bytes: int,
    index_head: int,
    block_tokens: int,
) -> list[Bucket]:
    swa: list[int] = []
    full: list[int] = []
    c4_state: list[int] = []
    c128_state: list[int] = []
    swa_page = _round_up(SWA_BLOCK_TOKENS * FP8_DS_MLA_STATE_BYTES, FP8_DS_MLA_PAGE_ALIGNMENT)
    for ratio in ratios:
        swa.append(swa_page)
        if ratio <= 1:
            continue
        states = block_tokens // ratio  # MLAAttentionSpec tokens_per_state: cache_config.block_size // r
        full.append(_round_up(states * FP8_DS_MLA_STATE_BYTES, FP8_DS_MLA_PAGE_ALIGNMENT))
        coff = 2 if ratio == CSA_RATIO else 1
        block = COMPRESSOR_BLOCK_TOKENS[ratio]
        state = _round_up(block * 2 * coff * head_dim * COMPRESSOR_STATE_BYTES, FP8_DS_MLA_PAGE_ALIGNMENT)
        (c4_state if ratio == CSA_RATIO else c128_state).append(state)
        if ratio == CSA_RATIO:
            full.append(_round_up(states * indexer_bytes, FP8_DS_MLA_PAGE_ALIGNMENT))
            index_state = block * 2 * coff * index_head * COMPRESSOR_STATE_BYTES
            c4_state.append(_round_up(index_state, FP8_DS_MLA_PAGE_ALIGNMENT))
    out = [Bucket(LayerKind.SLIDING, window, SWA_BLOCK_TOKENS, tuple(swa))]
    if full:
        out.append(Bucket(LayerKind.MLA, None, block_tokens, tuple(full)))
    if c4_state:
        out.append(
            Bucket(LayerKind.SLIDING, 2 * CSA_RATIO, COMPRESSOR_BLOCK_TOKENS[CSA_RATIO], tuple(c4_state))
        )
    if c128_state:
        out.append(Bucket(LayerKind.SLIDING, 128, COMPRESSOR_BLOCK_TOKENS[128], tuple(c128_state)))
    return out


def approximate_gcd(values: list[int], *, lower_bound: int) -> int:
    """kv_cache_planning._approximate_gcd: the d in [lower_bound, max] with the least upward padding
    sum((d - x % d) % d), ties to the larger d. E.g. [43, 21, 20] from 21 -> 22 (padding 1 + 1 + 2 = 4)."""
    best, best_pad = lower_bound, None
    for d in range(max(1, lower_bound), max(values) + 1):
        pad = sum((d - x % d) % d for x in values)
        if best_pad is None or pad <= best_pad:
            best, best_pad = d, pad
    return best


def _split(bucket: Bucket, groups: int) -> list[Bucket]:
    if groups == 1:
        return [bucket]
    by_page: dict[int, list[int]] = {}
    for page in bucket.pages:
        by_page.setdefault(page, []).append(page)
    repeats = list(zip(*by_page.values(), strict=False))
    return [
        Bucket(
            bucket.kind, bucket.window, bucket.block_tokens, tuple(p for r in repeats[i::groups] for p in r)
        )
        for i in range(groups)
    ]


def packed_groups(
    *,
    ratios: tuple[int, ...],
    window: int,
    head_dim: int,
    indexer_bytes: int,
    block_tokens: int = COMPRESSED_BLOCK_TOKENS,
) -> list[Bucket]:
    """The KV-cache groups of one pipeline stage's layers (``ratios``), as _get_packed_kv_cache_groups forms them;
    ``block_tokens``: cache_config.block_size, the block of the compressed and indexer caches (attention.py
    DeepseekV4Attention / DeepseekV4IndexerCache get_kv_cache_spec); the sliding-window and compressor-state
    caches keep their own fixed blocks."""
    index_head = index_head_dim(indexer_bytes)
    buckets = _buckets(
        ratios=ratios,
        window=window,
        head_dim=head_dim,
        indexer_bytes=indexer_bytes,
        index_head=index_head,
        block_tokens=block_tokens,
    )
    floor = max((b.repeats for b in buckets if b.balanced and len(b.per_page) > 1), default=0)
    repeats = (
        approximate_gcd([b.repeats for b in buckets if b.balanced], lower_bound=floor) if floor else None
    )

    def count(bucket: Bucket) -> int:
        return cdiv(bucket.repeats, repeats) if bucket.balanced and repeats is not None else 1

    def widest(bucket: Bucket, n: int) -> int:
        return sum(cdiv(k, n) * page for page, k in bucket.per_page.items())

    def is_state(bucket: Bucket) -> bool:  # sliding buckets may split to one state a group without a pattern
        return repeats is None and bucket.kind == LayerKind.SLIDING

    anchor = max(widest(b, len(b.pages) if is_state(b) else count(b)) for b in buckets)
    out: list[Bucket] = []
    for bucket in buckets:
        n = count(bucket)
        if is_state(bucket):
            n = max(n, cdiv(len(bucket.pages), max(anchor // bucket.pages[0], 1)))
        out += _split(bucket, n)
    return out
