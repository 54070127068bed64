"""Layer kinds on their specs, as vLLM's KVCacheSpec classes carry them (v1/kv_cache_interface.py).

Each kind says whether it holds KV at all, how its layers bucket into KV-cache groups, its page, and the
blocks one request takes; app/core/kv.py dispatches on these instead of on `LayerKind` literals. A new
kind (a compressed cache, an indexer, a new linear attention) is one subclass registered in
:data:`KIND_SPECS` plus its ``LayerKind`` value.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import cast

from app.core.specs import LayerKind, ModelSpec


def cdiv(a: int, b: int) -> int:
    """Ceiling division, vLLM's `cdiv`: cdiv(131072, 16) = 8192, cdiv(8193, 16) = 513."""
    return -(-a // b)


# The DeepSeek-V3.2 / GLM-5 / DeepSeek-V4 lightning-indexer cache, per token per layer (0.33.0
# models/deepseek_v2.py Indexer, v4 attention.py DeepseekV4IndexerCache): index_head_dim fp8 bytes plus one
# fp32 scale (4 B) per quant block of 128 values, stored as uint8. ModelSpec keeps the bytes; the DSV4
# layouts need the head back.
INDEXER_QUANT_BLOCK = 128
INDEXER_SCALE_BYTES = 4


def indexer_bytes_per_token(index_head_dim: int) -> int:
    """index_head_dim 128 -> 128 + 1 x 4 = 132 B; 256 -> 264 B; 64 (no whole quant block) -> 64 B."""
    return index_head_dim + index_head_dim // INDEXER_QUANT_BLOCK * INDEXER_SCALE_BYTES


def index_head_dim(indexer_bytes: int) -> int:
    """The inverse of :func:`indexer_bytes_per_token`: 132 -> 128, 264 -> 256, 64 -> 64, 0 -> 0.

    A head of 128q + r (r < 128) stores 132q + r bytes, and (132q + r) // 132 = q, so the scales come off exactly.
    """
    return indexer_bytes - indexer_bytes // (INDEXER_QUANT_BLOCK + INDEXER_SCALE_BYTES) * INDEXER_SCALE_BYTES


class KindSpec:
    """What one layer kind caches, as vLLM's KVCacheSpec classes say it (v1/kv_cache_interface.py):
    whether it holds KV at all, how its layers are bucketed into groups, its page, and the blocks one
    request of a given length takes (``max_memory_usage_bytes`` / page, reference §3.3).

    A new kind is one subclass registered in :data:`KIND_SPECS` (and its ``LayerKind`` value).
    """

    kind: LayerKind
    holds_kv = True  # has a spec of its own (SHARED reuses another layer's, NONE has no attention)
    attention = True  # pages of K and V (or an MLA latent) per token, not a recurrent state
    per_head_pages = True  # the page is KV heads x head sizes (False: MLA's one latent)
    whole_sequence = False  # keeps every token of the sequence (the seed's S tokens per layer)

    def bucket(self, model: ModelSpec) -> tuple[LayerKind, int | None, int | None]:
        """(kind, window, chunk): layers with the same key may share a group (§3.4)."""
        return (self.kind, None, None)

    def page_bytes(self, *, attention_page: int, mamba_page: int) -> int:
        """One block of one layer, given the model's attention page and its (padded) recurrent state."""
        return attention_page

    def blocks_per_request(
        self, *, group: Group, max_model_len: int, block_size: int, inflight_tokens: int, prefix_caching: bool
    ) -> int:
        """E.g. full attention at 8,192 tokens in blocks of 16: cdiv(8192, 16) = 512 blocks."""
        return cdiv(max_model_len, block_size)


class FullAttention(KindSpec):
    kind = LayerKind.FULL
    whole_sequence = True


class MLAAttention(KindSpec):
    kind = LayerKind.MLA
    per_head_pages = False
    whole_sequence = True


class SlidingWindow(KindSpec):
    kind = LayerKind.SLIDING

    def bucket(self, model: ModelSpec) -> tuple[LayerKind, int | None, int | None]:
        return (self.kind, model.sliding_window_tokens, None)

    def blocks_per_request(
        self, *, group: Group, max_model_len: int, block_size: int, inflight_tokens: int, prefix_caching: bool
    ) -> int:
        """SlidingWindowSpec: cdiv(min(W - 1 + in-flight, L), B) + 1, e.g. W 128, 16,384 in flight, L 131,072,
        B 16 -> cdiv(16,511, 16) + 1 = 1,033 blocks."""
        if group.window_tokens is None:
            return cdiv(max_model_len, block_size)
        return cdiv(min(group.window_tokens - 1 + inflight_tokens, max_model_len), block_size) + 1


class ChunkedLocal(KindSpec):
    kind = LayerKind.CHUNKED

    def bucket(self, model: ModelSpec) -> tuple[LayerKind, int | None, int | None]:
        return (self.kind, None, model.attention_chunk_tokens)

    def blocks_per_request(
        self, *, group: Group, max_model_len: int, block_size: int, inflight_tokens: int, prefix_caching: bool
    ) -> int:
        """ChunkedLocalAttentionSpec: cdiv(min(chunk + in-flight, L), B), e.g. chunk 8,192, 8,192 in flight,
        L 131,072, B 16 -> 1,024 blocks."""
        if group.chunk_tokens is None:
            return cdiv(max_model_len, block_size)
        return cdiv(min(group.chunk_tokens + inflight_tokens, max_model_len), block_size)


class Mamba(KindSpec):
    kind = LayerKind.MAMBA
    attention = False
    per_head_pages = False

    def page_bytes(self, *, attention_page: int, mamba_page: int) -> int:
        return mamba_page

    def blocks_per_request(
        self, *, group: Group, max_model_len: int, block_size: int, inflight_tokens: int, prefix_caching: bool
    ) -> int:
        # MambaSpec.max_memory_usage_bytes: "align" mode 2 + checkpoint blocks (0.32+), "none" one state
        return 2 + group.checkpoint_blocks if prefix_caching else 1


class SharedCache(KindSpec):
    kind = LayerKind.SHARED
    holds_kv = attention = per_head_pages = False


class NoCache(KindSpec):
    kind = LayerKind.NONE
    holds_kv = attention = per_head_pages = False


class EncoderOnly(KindSpec):
    """0.33.0 layers/attention/encoder_only_attention.py: attention over the prompt, nothing kept for decode
    (get_kv_cache_spec returns None; the runner's EncoderOnlyAttentionSpec has max_memory_usage_bytes 0)."""

    kind = LayerKind.ENCODER_ONLY
    holds_kv = attention = per_head_pages = False


KIND_SPECS: dict[LayerKind, KindSpec] = {
    spec.kind: spec
    for spec in (
        FullAttention(),
        MLAAttention(),
        SlidingWindow(),
        ChunkedLocal(),
        Mamba(),
        SharedCache(),
        NoCache(),
        EncoderOnly(),
    )
}


def kind_spec(kind: LayerKind | str) -> KindSpec:
    # a StrEnum member hashes as its value, so a kind's string finds its spec without the enum call (a
    # 10,000-layer config looks one up per layer); an unknown string still raises LayerKind's ValueError
    spec = cast("dict[str, KindSpec]", KIND_SPECS).get(kind)
    return spec if spec is not None else KIND_SPECS[LayerKind(kind)]


def attention_layer_count(kinds: list[LayerKind]) -> int:
    """Layers that cache K and V per token (the seed's L): e.g. 12 full + 12 sliding + 4 Mamba -> 24."""
    counts = Counter(kinds)  # per kind, not per layer: a pasted config may have 10,000 layers
    return sum(n for kind, n in counts.items() if KIND_SPECS[kind].attention and KIND_SPECS[kind].holds_kv)


@dataclass(frozen=True)
class Group:
    """A KV-cache group: layers of one kind sharing a block table."""

    kind: LayerKind
    num_layers: int
    page_size_bytes: int  # per layer per block
    window_tokens: int | None = None
    chunk_tokens: int | None = None
    # when this group's block holds more tokens than the layout's (page sizes unified, §3.4)
    block_size_tokens: int | None = None
    # when the group's layers differ (UniformTypeKVCacheSpecs: a page per layer), its distinct pages as
    # (page bytes, layers with it) in order of first appearance; () when all are page_size_bytes
    layer_pages: tuple[tuple[int, int], ...] = ()
    checkpoint_blocks: int = 0  # Mamba groups: MambaSpec.num_prefill_checkpoint_blocks ("align" mode)

    @property
    def bytes_per_block(self) -> int:
        """One block of every layer of the group."""
        if self.layer_pages:
            return sum(page * layers for page, layers in self.layer_pages)
        return self.page_size_bytes * self.num_layers

    @property
    def spec(self) -> KindSpec:
        return KIND_SPECS[self.kind]

    @property
    def holds_kv(self) -> bool:
        return self.spec.holds_kv

    def blocks_per_request(
        self, *, max_model_len: int, block_size: int, inflight_tokens: int, prefix_caching: bool
    ) -> int:
        """`cdiv(max_memory_usage_bytes(spec), page)` for one request at max_model_len (reference §3.3)."""
        return self.spec.blocks_per_request(
            group=self,
            max_model_len=max_model_len,
            block_size=block_size,
            inflight_tokens=inflight_tokens,
            prefix_caching=prefix_caching,
        )
