"""KV-cache sizing exactly as vLLM does it: pages, groups, blocks, tokens, concurrency.

Everything here is arithmetic vLLM itself performs once it knows the available KV memory
(reference vllm-accounting.md §3), so these numbers must match a real log to the block.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from app.core.errors import ConfigError
from app.core.kinds import KIND_SPECS as KIND_SPECS
from app.core.kinds import Group as Group
from app.core.kinds import KindSpec as KindSpec
from app.core.kinds import attention_layer_count as attention_layer_count
from app.core.kinds import cdiv as cdiv
from app.core.kinds import kind_spec as kind_spec
from app.core.kv_dsv4 import packed_groups
from app.core.kv_dsv4_ascend import A5_CACHE_DTYPE, ASCEND_DSV4_BACKEND, ascend_dsv4_groups
from app.core.layers import LayerSignature, signature_counts, stage_counts
from app.core.mamba_state import NEMOTRON_H_ARCHITECTURES as NEMOTRON_H_ARCHITECTURES
from app.core.mamba_state import mamba_ssm_dtype_bytes as mamba_ssm_dtype_bytes
from app.core.mamba_state import mamba_state_bytes as mamba_state_bytes
from app.core.specs import DTYPE_BYTES, AttentionShape, LayerKind, ModelSpec
from app.core.text import Text
from app.core.versions import VersionRules

KV_TENSORS_PER_LAYER = 2  # one K and one V cache per attention layer (seed: 2 x H_kv x D x S x b)
FP8_DS_MLA_BYTES_PER_TOKEN = 656  # 512 B quantized NoPE + 16 B scales + 128 B RoPE (reference §3.2)
# 0.30.0+ mla_attention.py MLAAttention.get_kv_cache_spec state_content_bytes: 256 B e2m1 NoPE + 64 B fp8 RoPE
# + 32 B fp8 scales (flashmla_sparse.py layout notes)
NVFP4_DS_MLA_BYTES_PER_TOKEN = 352
DS_MLA_BYTES_PER_TOKEN = {
    "fp8_ds_mla": FP8_DS_MLA_BYTES_PER_TOKEN,
    "nvfp4_ds_mla": NVFP4_DS_MLA_BYTES_PER_TOKEN,
}
V0_MLA_ALIGN_BYTES = 256  # VLLM_CUDA_MEM_ALIGN_KV_CACHE rounds an MLA key entry to 256 B (reference §2.4)
HYBRID_BLOCK_ALIGN_TOKENS = 16  # attention block size raised in steps of 16 for Mamba hybrids (§3.4)
ONE_BYTE_KV_DTYPES = frozenset({"fp8", "fp8_e4m3", "fp8_e5m2", "int8"})


def kv_dtype_bytes(*, kv_cache_dtype: str, model_dtype: str) -> int:
    """Bytes per cached element: `auto` follows the model (serving) dtype; fp8/int8 are one byte.

    E.g. ("auto", "bfloat16") -> 2; ("fp8", "bfloat16") -> 1; ("fp8_ds_mla", …) -> 1 (uint8 storage, as
    utils/torch_utils.py STR_DTYPE_TO_TORCH_DTYPE maps both DS-MLA layouts).
    """
    if kv_cache_dtype == "auto":
        return DTYPE_BYTES[model_dtype]
    if kv_cache_dtype in ONE_BYTE_KV_DTYPES or kv_cache_dtype in DS_MLA_BYTES_PER_TOKEN:
        return 1
    return DTYPE_BYTES[kv_cache_dtype]


def kv_heads_per_rank(*, total_kv_heads: int, tensor_parallel_size: int) -> int:
    """`max(1, H_kv // TP)`: heads are replicated when TP exceeds them (reference §3.1).

    E.g. 8 KV heads at TP 4 -> 2 per rank; at TP 16 -> 1 (each head held by two ranks).
    """
    return max(1, total_kv_heads // tensor_parallel_size)


def attention_page_bytes(
    *, block_size: int, kv_heads: int, head_size_k: int, head_size_v: int, dtype_bytes: int
) -> int:
    """One block of one layer: `B x heads x (hk + hv) x b` (reference §3.2).

    E.g. Llama-3.1-8B, B 16, 8 heads, hk = hv = 128, bf16: 16 x 8 x 256 x 2 = 65,536 B.
    """
    return block_size * kv_heads * (head_size_k + head_size_v) * dtype_bytes


def mla_page_bytes(*, block_size: int, latent_size: int, dtype_bytes: int, kv_cache_dtype: str) -> int:
    """MLA caches one latent per token (kv_lora_rank + rope dims), replicated on every TP rank.

    E.g. DeepSeek-V3, B 64, latent 512 + 64 = 576, bf16: 64 x 576 x 2 = 73,728 B; fp8_ds_mla packs a
    token in 656 B: 64 x 656 = 41,984 B; nvfp4_ds_mla in 352 B: 64 x 352 = 22,528 B.
    """
    if kv_cache_dtype in DS_MLA_BYTES_PER_TOKEN:
        return block_size * DS_MLA_BYTES_PER_TOKEN[kv_cache_dtype]
    return block_size * latent_size * dtype_bytes


@dataclass(frozen=True)
class HybridAlign:
    """How vLLM sizes the attention block of a hybrid (attention + Mamba) model, worked out per release and
    backend by :func:`app.core.backends.hybrid_align`.

    ``step_tokens``: the attention block is the smallest multiple of this whose page holds one Mamba state
    (0.19.0 models/config.py HybridAttentionMambaModelConfig: 16; 0.20+ platforms/interface.py
    Platform._align_hybrid_block_size: the backend's kernel alignment, lcm'd with the checkpoint grid in
    0.33). ``checkpoint_blocks``: MambaSpec.num_prefill_checkpoint_blocks, one more block a request holds
    per Mamba group in "align" mode (0.32+ Mamba-2, 0.33 Gated DeltaNet on FlashInfer).
    """

    step_tokens: int = HYBRID_BLOCK_ALIGN_TOKENS
    checkpoint_blocks: int = 0


DEFAULT_HYBRID_ALIGN = HybridAlign()


@dataclass(frozen=True)
class KVLayout:
    """How one rank's layers are laid out in blocks."""

    block_size: int
    groups: tuple[Group, ...]
    bytes_per_block: int
    kv_bytes_per_token: int  # sum over this rank's attention layers at full length
    num_kv_layers: int

    @property
    def page_size_bytes(self) -> int:
        return self.groups[0].page_size_bytes if self.groups else 0

    def block_tokens(self, group: Group) -> int:
        """Tokens in one of ``group``'s blocks: its own (page sizes unified, DSV4's 64 / 4 / 8) or the layout's."""
        return group.block_size_tokens or self.block_size


def stage_layer_ranges(*, num_layers: int, pipeline_parallel_size: int) -> list[tuple[int, int]]:
    """vLLM's `get_pp_indices`: even split, the remainder to the stages before the last one.

    E.g. 61 layers over 4 stages: [(0, 15), (15, 30), (30, 46), (46, 61)] (15, 15, 16, 15 layers).
    """
    pp = pipeline_parallel_size
    sizes = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        sizes[-i] += 1
    ranges, start = [], 0
    for size in sizes:
        ranges.append((start, start + size))
        start += size
    return ranges


def _attention_layer_page(
    model: ModelSpec, *, block_size: int, tp: int, kv_dtype: str, dtype_bytes: int, with_indexer: bool = True
) -> int:
    """One attention layer's page at ``block_size``: the K/V (or MLA latent) page, plus, ``with_indexer``, the
    sparse-attention indexer's cache, which shares the layer's block table (one UniformType group). Without
    it, the attention spec alone, as Platform._align_hybrid_block_size sizes its one-token page (0.33.0
    platforms/interface.py: an MLAAttentionSpec of the latent or a FullAttentionSpec, no indexer spec).

    E.g. GLM-5.3-Flash (latent 512, bf16; indexer 33 B a token) at one token: 1,057 B, 1,024 B without."""
    index_bytes = block_size * model.indexer_bytes_per_token if with_indexer else 0
    if model.mla is not None:
        return (
            mla_page_bytes(
                block_size=block_size,
                latent_size=model.mla.latent_size,
                dtype_bytes=dtype_bytes,
                kv_cache_dtype=kv_dtype,
            )
            + index_bytes
        )
    heads = kv_heads_per_rank(total_kv_heads=model.num_kv_heads, tensor_parallel_size=tp)
    return (
        attention_page_bytes(
            block_size=block_size,
            kv_heads=heads,
            head_size_k=model.head_size,
            head_size_v=model.head_size_v,
            dtype_bytes=dtype_bytes,
        )
        + index_bytes
    )  # MiniMax-M3's bf16 index keys, as for MLA above


Bucket = tuple[LayerKind, int | None, int | None]  # (kind, window, chunk): see KindSpec.bucket


def _group_size(counts: list[int], rules: VersionRules) -> int:
    """Layers per group (§3.4): the smallest bucket, or the largest where buckets are close (0.33.0's
    "12 sw + 13 full -> pad to (13, 13)"; 12 sw + 36 full -> 12 a group, so 1 + 3 groups)."""
    group_size = min(counts)
    ratio = rules.group_size_max_ratio
    if ratio is not None and max(counts) < ratio * min(counts):
        group_size = max(counts)
    return group_size


def _split_bucket(
    *,
    bucket: Bucket,
    count: int,
    group_size: int,
    page_size_bytes: int,
    block_size_tokens: int | None = None,
    checkpoint_blocks: int = 0,
) -> list[Group]:
    """One bucket's layers split into cdiv(count, group_size) groups as even as vLLM makes them."""
    kind, window, chunk = bucket
    n_groups = cdiv(count, group_size)
    base, extra = divmod(count, n_groups)
    return [
        Group(
            kind=kind,
            num_layers=base + (1 if i < extra else 0),
            page_size_bytes=page_size_bytes,
            window_tokens=window,
            chunk_tokens=chunk,
            block_size_tokens=block_size_tokens,
            checkpoint_blocks=checkpoint_blocks if kind == LayerKind.MAMBA else 0,
        )
        for i in range(n_groups)
    ]


def _mamba_page(
    *,
    model: ModelSpec,
    rules: VersionRules,
    tp: int,
    model_dtype: str,
    attention_page_per_token: int,
    step_tokens: int = HYBRID_BLOCK_ALIGN_TOKENS,
) -> tuple[int, int]:
    """(Mamba state bytes, the smallest attention block that holds one): a hybrid's attention block is
    raised in steps of ``step_tokens`` (:class:`HybridAlign`) until one attention page holds a Mamba state
    (§3.4): ``step x cdiv(mamba_page, step x page_1_token)`` (0.33.0 Platform._align_hybrid_block_size)."""
    assert model.mamba is not None
    state = mamba_state_bytes(
        mamba=model.mamba,
        tensor_parallel_size=tp,
        dtype_bytes=DTYPE_BYTES[model_dtype],  # mamba_cache_dtype auto -> model dtype
        ssm_dtype_bytes=mamba_ssm_dtype_bytes(model=model, rules=rules),
    )
    per_token = max(1, attention_page_per_token)
    return state, step_tokens * cdiv(state, step_tokens * per_token)


def build_layout(
    *,
    model: ModelSpec,
    layer_range: tuple[int, int],
    tensor_parallel_size: int,
    block_size: int,
    kv_cache_dtype: str,
    model_dtype: str,
    rules: VersionRules,
    hybrid: HybridAlign = DEFAULT_HYBRID_ALIGN,
    pad_pages: bool = False,
    backend: str = "",
) -> KVLayout:
    """Page sizes and hybrid grouping for the layers of one pipeline stage (reference §3.2-§3.5);
    ``hybrid``: the block alignment of an attention + Mamba model (:class:`HybridAlign`); ``pad_pages``:
    pages that do not divide the largest are padded to it (BackendChoice.pads_pages) rather than refused.

    E.g. 32 full-attention layers, 8 KV heads of 128, bf16, B = 16: page 16 x 8 x 256 x 2 = 65,536 B,
    one group, 32 x 65,536 = 2,097,152 B a block, 131,072 B a token; 12 full + 12 sliding (W = 128,
    8 heads of 64): two groups of 12, page 32,768 B, 393,216 B a block.
    """
    if model.compress_ratios is not None and kv_cache_dtype == "fp8_ds_mla" and rules.dsv4_cache:
        return _layout_dsv4(model=model, layer_range=layer_range, block_size=block_size)
    dtype_bytes = kv_dtype_bytes(kv_cache_dtype=kv_cache_dtype, model_dtype=model_dtype)
    if model.compress_ratios is not None and backend == ASCEND_DSV4_BACKEND:  # vllm-ascend's own V4 layout
        stage, a5 = (model, layer_range), kv_cache_dtype == A5_CACHE_DTYPE  # fp8 only on an A5 (backends.py)
        ascend = ascend_dsv4_groups(stage=stage, dtype_bytes=dtype_bytes, block_size=block_size, a5=a5)
        if ascend is not None:
            groups, per_block, per_token = ascend
            return KVLayout(block_size, tuple(groups), per_block, per_token, layer_range[1] - layer_range[0])
    tp = tensor_parallel_size
    counts, n_attn, n_mamba = stage_counts(model=model, layer_range=layer_range)  # O(kinds), not O(layers)

    page_at = partial(_attention_layer_page, model, tp=tp, kv_dtype=kv_cache_dtype, dtype_bytes=dtype_bytes)

    if rules.engine == "v0" and model.mla is not None:
        # V0 CUDA aligns the MLA key entry to 256 bytes: 576 bf16 elements -> 640 (reference §2.4)
        entry = cdiv(model.mla.latent_size * dtype_bytes, V0_MLA_ALIGN_BYTES) * V0_MLA_ALIGN_BYTES
        page = block_size * entry
    else:
        page = page_at(block_size=block_size)
    per_token_bytes = (page // block_size) * n_attn if block_size else 0
    if (
        model.indexer_layers is not None
        and model.indexer_bytes_per_token
        and (rules.indexer_on_some_layers or model.mla is None)
        and rules.hybrid_allocator
        and len(set(counts) - {LayerKind.NONE}) == 1
        and set(counts) <= {LayerKind.MLA, LayerKind.FULL, LayerKind.NONE}
    ):
        signatures = signature_counts(model=model, layer_range=layer_range)  # this and the next: O(distinct)
        return _layout_indexer_on_some_layers(
            model=model,
            signatures=signatures,
            block_size=block_size,
            latent_page=page_at(block_size=block_size, with_indexer=False),
        )
    if model.layer_attention is not None and n_attn and not n_mamba:
        return _layout_per_layer(
            model=model,
            signatures=signature_counts(model=model, layer_range=layer_range),
            block_size=block_size,
            rules=rules,
            tp=tp,
            dtype_bytes=dtype_bytes,
            pad_pages=pad_pages,
        )
    mamba_page = 0
    if n_mamba and model.mamba is not None:
        mamba_page, needed_block = _mamba_page(
            model=model,
            rules=rules,
            tp=tp,
            model_dtype=model_dtype,
            attention_page_per_token=page_at(block_size=1, with_indexer=False) if n_attn else 1,
            step_tokens=hybrid.step_tokens,
        )
        if n_attn:
            if needed_block > block_size:
                block_size = needed_block
                page = page_at(block_size=block_size)
            mamba_page = page  # padded to the attention page
    return _grouped_layout(
        model=model,
        counts=counts,
        rules=rules,
        block_size=block_size,
        page=page,
        mamba_page=mamba_page,
        n_attn=n_attn,
        per_token_bytes=per_token_bytes,
        checkpoint_blocks=hybrid.checkpoint_blocks,
    )


def _grouped_layout(
    *,
    model: ModelSpec,
    counts: dict[LayerKind, int],
    rules: VersionRules,
    block_size: int,
    page: int,
    mamba_page: int,
    n_attn: int,
    per_token_bytes: int,
    checkpoint_blocks: int = 0,
) -> KVLayout:
    """The layers (``counts``: folded by kind) bucketed by kind (window, chunk), split into groups of one size (§3.4)."""
    if not rules.hybrid_allocator:
        # Before the hybrid allocator every attention layer is sized as full attention.
        groups: tuple[Group, ...] = (Group(kind=LayerKind.FULL, num_layers=n_attn, page_size_bytes=page),)
        return KVLayout(
            block_size=block_size,
            groups=groups if n_attn else (),
            bytes_per_block=page * n_attn,
            kv_bytes_per_token=per_token_bytes,
            num_kv_layers=n_attn,
        )
    buckets: dict[Bucket, int] = {}
    for kind, count in counts.items():
        if KIND_SPECS[kind].holds_kv:
            key = KIND_SPECS[kind].bucket(model)
            buckets[key] = buckets.get(key, 0) + count
    if not buckets:
        return KVLayout(
            block_size=block_size, groups=(), bytes_per_block=0, kv_bytes_per_token=0, num_kv_layers=0
        )

    def page_of(kind: LayerKind) -> int:
        return KIND_SPECS[kind].page_bytes(attention_page=page, mamba_page=mamba_page)

    if len(buckets) == 1:
        ((bucket, count),) = buckets.items()
        return KVLayout(
            block_size=block_size,
            groups=tuple(
                _split_bucket(
                    bucket=bucket,
                    count=count,
                    group_size=count,
                    page_size_bytes=page_of(bucket[0]),
                    checkpoint_blocks=checkpoint_blocks,
                )
            ),
            bytes_per_block=page_of(bucket[0]) * count,
            kv_bytes_per_token=per_token_bytes,
            num_kv_layers=count,
        )
    group_size = _group_size(list(buckets.values()), rules)
    out = [
        group
        for bucket, count in buckets.items()
        for group in _split_bucket(
            bucket=bucket,
            count=count,
            group_size=group_size,
            page_size_bytes=page_of(bucket[0]),
            checkpoint_blocks=checkpoint_blocks,
        )
    ]
    return KVLayout(
        block_size=block_size,
        groups=tuple(out),
        bytes_per_block=group_size * page,
        kv_bytes_per_token=per_token_bytes,
        num_kv_layers=sum(buckets.values()),
    )


def _unified_pages(
    buckets: dict[Bucket, dict[AttentionShape, int]],
    page: Callable[[AttentionShape, int], int],
    block_size: int,
    *,
    pad: bool,
) -> dict[Bucket, int]:
    """Each bucket's one page; vLLM's unify_kv_cache_spec_page_size needs every page to divide the largest,
    or (``pad``, 0.24+: VersionRules.attention_page_padding) pads the others to it."""
    bucket_pages: dict[Bucket, int] = {}
    for key, shapes in buckets.items():
        distinct = {page(shape, block_size) for shape in shapes}
        if len(distinct) > 1:
            raise ConfigError(
                "config",
                Text("layers of one attention type with different KV shapes next to another type: not sized"),
            )
        bucket_pages[key] = distinct.pop()
    max_page = max(bucket_pages.values())
    for key, bucket_page in bucket_pages.items():
        if max_page % bucket_page and not pad:
            # vLLM: NotImplementedError "The page size of the layer is not divisible by the maximum page size"
            raise ConfigError(
                "config",
                Text(
                    "{kind} layers' page ({page:,} B) does not divide the largest page ({max_page:,} B); "
                    "vLLM cannot unify the page sizes",
                    kind=key[0].value,
                    page=bucket_page,
                    max_page=max_page,
                ),
            )
    return bucket_pages


def _layout_per_layer(
    *,
    model: ModelSpec,
    signatures: dict[LayerSignature, int],
    block_size: int,
    rules: VersionRules,
    tp: int,
    dtype_bytes: int,
    pad_pages: bool,
) -> KVLayout:
    """Attention layers whose KV heads / head sizes differ (``ModelSpec.layer_attention``), folded by
    signature (app.core.layers.signature_counts): one page per distinct shape, not per layer.

    vLLM (v1/core/kv_cache_utils.get_kv_cache_groups): layers of one type with different pages form
    one group of per-layer pages (UniformTypeKVCacheSpecs, 0.11+); several types with different pages
    are unified by raising the block size of the smaller pages (unify_kv_cache_spec_page_size), which
    must divide the largest, then grouped as usual. E.g. 8 full layers of 8 KV heads and 24 sliding
    layers of 2 heads (head 128, bf16, B 16): pages 65,536 and 16,384 B, the sliding block raised to
    64 tokens so both pages are 65,536 B.
    """

    def page(shape: AttentionShape, bs: int) -> int:
        return attention_page_bytes(
            block_size=bs,
            kv_heads=kv_heads_per_rank(total_kv_heads=shape.kv_heads, tensor_parallel_size=tp),
            head_size_k=shape.head_size,
            head_size_v=shape.head_size_v,
            dtype_bytes=dtype_bytes,
        )

    buckets: dict[Bucket, dict[AttentionShape, int]] = {}  # bucket -> {shape: layers}, in layer order
    bucket_of: dict[LayerKind, Bucket] = {}
    for (kind, shape, _), count in signatures.items():
        if shape is None or not (KIND_SPECS[kind].holds_kv and KIND_SPECS[kind].per_head_pages):
            continue
        if kind not in bucket_of:  # before the hybrid allocator every attention layer is full
            bucket_of[kind] = KIND_SPECS[kind if rules.hybrid_allocator else LayerKind.FULL].bucket(model)
        shapes = buckets.setdefault(bucket_of[kind], {})
        shapes[shape] = shapes.get(shape, 0) + count
    per_token = sum(page(shape, 1) * n for shapes in buckets.values() for shape, n in shapes.items())
    layers_in = {key: sum(shapes.values()) for key, shapes in buckets.items()}
    num_layers = sum(layers_in.values())
    if len(buckets) == 1:
        (((kind, window, chunk), shapes),) = buckets.items()
        pages: dict[int, int] = {}
        for shape, n in shapes.items():
            shape_page = page(shape, block_size)
            pages[shape_page] = pages.get(shape_page, 0) + n
        group = Group(
            kind=kind,
            num_layers=num_layers,
            page_size_bytes=max(pages),
            window_tokens=window,
            chunk_tokens=chunk,
            layer_pages=() if len(pages) == 1 else tuple(pages.items()),
        )
        return KVLayout(
            block_size=block_size,
            groups=(group,),
            bytes_per_block=group.bytes_per_block,
            kv_bytes_per_token=per_token,
            num_kv_layers=num_layers,
        )
    bucket_pages = _unified_pages(buckets, page, block_size, pad=pad_pages)
    max_page = max(bucket_pages.values())
    group_size = _group_size(list(layers_in.values()), rules)
    out: list[Group] = []
    for bucket in buckets:
        # a page that divides the largest takes a longer block; one that does not is padded (ratio 1)
        ratio = 1 if max_page % bucket_pages[bucket] else max_page // bucket_pages[bucket]
        out += _split_bucket(
            bucket=bucket,
            count=layers_in[bucket],
            group_size=group_size,
            page_size_bytes=max_page,
            block_size_tokens=block_size * ratio if ratio > 1 else None,
        )
    return KVLayout(
        block_size=block_size,
        groups=tuple(out),
        bytes_per_block=group_size * max_page,
        kv_bytes_per_token=per_token,
        num_kv_layers=num_layers,
    )


def _layout_dsv4(*, model: ModelSpec, layer_range: tuple[int, int], block_size: int) -> KVLayout:
    """DeepSeek-V4 in the fp8_ds_mla layout (app/core/kv_dsv4.py): packed groups of one block pool, a block
    as wide as the widest group; the compressed caches' block (cache_config.block_size: 256 unless
    --block-size gives another multiple of 256) is the layout's block size."""
    assert model.compress_ratios is not None
    ratios = model.compress_ratios[layer_range[0] : layer_range[1]]
    packed = packed_groups(
        ratios=ratios,
        window=model.sliding_window_tokens or 0,
        head_dim=model.head_size,
        indexer_bytes=model.indexer_bytes_per_token,
        block_tokens=block_size,
    )
    groups = tuple(
        Group(
            kind=g.kind,
            num_layers=len(g.pages),
            page_size_bytes=max(g.pages),
            window_tokens=g.window,
            block_size_tokens=g.block_tokens,
            layer_pages=tuple(Counter(g.pages).items()) if len(set(g.pages)) > 1 else (),
        )
        for g in packed
    )
    full = sum(g.bytes_per_block for g in groups if g.kind == LayerKind.MLA)
    return KVLayout(
        block_size=block_size,
        groups=groups,
        bytes_per_block=max(g.bytes_per_block for g in groups),
        kv_bytes_per_token=full // block_size,  # the caches that grow with the sequence
        num_kv_layers=len(ratios),
    )


def _layout_indexer_on_some_layers(
    *, model: ModelSpec, signatures: dict[LayerSignature, int], block_size: int, latent_page: int
) -> KVLayout:
    """MLA layers, an indexer cache on some (GLM-5.2): the MLA and indexer specs are both MLAAttentionSpec
    of one block size, so vLLM puts them in one UniformTypeKVCacheSpecs group whose block is the sum of
    every layer's page (kv_cache_utils.get_kv_cache_groups, 0.24+); folded by signature, so two pages
    (with and without the indexer) whatever the layer count."""
    index_page = block_size * model.indexer_bytes_per_token  # on the layers that build an indexer only
    attention = LayerKind.MLA if model.mla is not None else LayerKind.FULL
    pages: dict[int, int] = {}
    for (kind, _, indexed), count in signatures.items():
        if kind == attention:
            layer_page = latent_page + (index_page if indexed else 0)
            pages[layer_page] = pages.get(layer_page, 0) + count
    group = Group(
        kind=attention,
        num_layers=sum(pages.values()),
        page_size_bytes=max(pages),
        layer_pages=tuple(pages.items()) if len(pages) > 1 else (),
    )
    return KVLayout(
        block_size=block_size,
        groups=(group,),
        bytes_per_block=group.bytes_per_block,
        kv_bytes_per_token=group.bytes_per_block // block_size,
        num_kv_layers=group.num_layers,
    )


def blocks_per_request(
    *, group: Group, max_model_len: int, block_size: int, inflight_tokens: int, prefix_caching: bool
) -> int:
    """`cdiv(max_memory_usage_bytes(spec), page)` for one request at max_model_len (reference §3.3), by the
    group's kind (:class:`KindSpec`): e.g. full attention at 8,192 tokens in blocks of 16 -> 512."""
    return group.blocks_per_request(
        max_model_len=max_model_len,
        block_size=block_size,
        inflight_tokens=inflight_tokens,
        prefix_caching=prefix_caching,
    )


def request_blocks(
    *, layout: KVLayout, max_model_len: int, inflight_tokens: int, prefix_caching: bool
) -> list[int]:
    return [
        blocks_per_request(
            group=g,
            max_model_len=max_model_len,
            block_size=layout.block_tokens(g),
            inflight_tokens=inflight_tokens,
            prefix_caching=prefix_caching,
        )
        for g in layout.groups
    ]


def num_blocks_for(*, available_bytes: int, layout: KVLayout) -> int:
    """`available // bytes_per_block`, clamped at zero (reference §3.5).

    E.g. 60 GiB over 2,097,152 B a block (32 layers x 65,536 B) -> 30,720 blocks; a negative pool -> 0.
    """
    if layout.bytes_per_block <= 0 or available_bytes <= 0:
        return 0
    return available_bytes // layout.bytes_per_block


def max_concurrency_for(
    *,
    num_blocks: int,
    layout: KVLayout,
    max_model_len: int,
    inflight_tokens: int,
    prefix_caching: bool,
    rules: VersionRules,
) -> float:
    """What "Maximum concurrency for L tokens per request: X x" prints (reference §3.7).

    E.g. 30,720 blocks of 16 tokens, one full-attention group, L 8,192 (512 blocks a request): 60.00x.
    """
    if not layout.groups or max_model_len <= 0:
        return 0.0
    per_group = request_blocks(
        layout=layout,
        max_model_len=max_model_len,
        inflight_tokens=inflight_tokens,
        prefix_caching=prefix_caching,
    )
    return concurrency_from_blocks(
        num_blocks=num_blocks, layout=layout, per_group=per_group, max_model_len=max_model_len, rules=rules
    )


def concurrency_from_blocks(
    *, num_blocks: int, layout: KVLayout, per_group: list[int], max_model_len: int, rules: VersionRules
) -> float:
    """:func:`max_concurrency_for` given the blocks one request needs per group (``request_blocks``)."""
    if not layout.groups or max_model_len <= 0:
        return 0.0
    if rules.concurrency_formula == "blocks_x_block_size_div_len":
        return num_blocks * layout.block_size / max_model_len
    if rules.concurrency_formula == "one_cdiv_over_sum":
        # cdiv(sum_g max_mem(g), page(g0)): with one page size this is the sum of the per-group blocks
        # (a UniformTypeKVCacheSpecs group, layer_pages set, has the sum of its layers' pages as its spec's page)
        def spec_page(g: Group) -> int:
            return g.bytes_per_block if g.layer_pages else g.page_size_bytes

        total = sum(b * spec_page(g) for b, g in zip(per_group, layout.groups, strict=True))
        return num_blocks / cdiv(total, spec_page(layout.groups[0]))
    return num_blocks / sum(per_group)


def kv_tokens_for(
    *, num_blocks: int, layout: KVLayout, max_concurrency: float, max_model_len: int, rules: VersionRules
) -> int | None:
    """What "GPU KV cache size: N tokens" prints; None for versions that print no such line.

    E.g. 30,720 blocks of 16 at 60.00x and L 8,192: int(60.0 x 8,192) = 491,520 (0.20+); 30,720 x 16 =
    491,520 in 0.19 (the same here; they differ for sliding-window groups).
    """
    if rules.tokens_formula == "none":
        return None
    if rules.tokens_formula == "blocks_x_block_size":
        return num_blocks * layout.block_size
    if rules.tokens_formula == "blocks_div_groups":
        groups = max(1, len(layout.groups))
        return num_blocks // groups * layout.block_size
    return int(max_concurrency * max_model_len)


def needed_bytes(
    *, layout: KVLayout, max_model_len: int, inflight_tokens: int, prefix_caching: bool, rules: VersionRules
) -> int:
    """Memory one request of max_model_len needs, as each version's capacity check computes it (§3.6).

    E.g. Llama-3.1-8B at 131,072 tokens, B 16: 8,192 blocks x 2,097,152 B = 16 GiB (0.33.0 prints
    "16.0 GiB KV cache is needed").
    """
    per_group = request_blocks(
        layout=layout,
        max_model_len=max_model_len,
        inflight_tokens=inflight_tokens,
        prefix_caching=prefix_caching,
    )
    return needed_from_blocks(layout=layout, per_group=per_group, max_model_len=max_model_len, rules=rules)


def needed_from_blocks(
    *, layout: KVLayout, per_group: list[int], max_model_len: int, rules: VersionRules
) -> int:
    """:func:`needed_bytes` given the blocks one request needs per group (``request_blocks``)."""
    if not per_group:
        return 0
    if rules.needed_formula == "v0":
        return cdiv(max_model_len, layout.block_size) * layout.bytes_per_block
    if rules.needed_formula == "sum_layers":
        return sum(b * g.bytes_per_block for b, g in zip(per_group, layout.groups, strict=True))
    if rules.needed_formula == "first_group":
        return layout.bytes_per_block * per_group[0]
    return layout.bytes_per_block * sum(per_group)


def estimate_max_model_len(
    *,
    available_bytes: int,
    layout: KVLayout,
    inflight_tokens: int,
    prefix_caching: bool,
    rules: VersionRules,
    upper: int,
) -> int:
    """Largest L in [1, upper] with needed(L) <= available (vLLM's binary search); 0 if none fits.

    The answer is vLLM's; the search starts from a proportional guess (needed bytes grow about linearly
    in L) and brackets it by doubling steps before bisecting, so it takes ~6-10 evaluations of
    ``needed_bytes`` instead of ~log2(upper). Exact because needed(L) never decreases with L.

    E.g. 0.33.0, Llama-3.1-8B on an L4 with a 3.6 GiB pool: 29,504 (the length vLLM's error names).
    """

    def need(length: int) -> int:
        return needed_bytes(
            layout=layout,
            max_model_len=length,
            inflight_tokens=inflight_tokens,
            prefix_caching=prefix_caching,
            rules=rules,
        )

    if upper < 1 or need(1) > available_bytes:
        return 0
    at_upper = need(upper)
    if at_upper <= available_bytes:
        return upper
    # now need(lo) <= available < need(hi)
    guess = min(upper - 1, max(1, upper * available_bytes // max(1, at_upper)))
    step = max(1, layout.block_size)
    if need(guess) <= available_bytes:
        lo, hi = guess, upper
        while lo + step < hi and need(lo + step) <= available_bytes:
            lo, step = lo + step, step * 2
        hi = min(hi, lo + step)
    else:
        lo, hi = 1, guess
        while hi - step > lo and need(hi - step) > available_bytes:
            hi, step = hi - step, step * 2
        lo = max(lo, hi - step)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if need(mid) <= available_bytes:
            lo = mid
        else:
            hi = mid
    return lo


def one_request_starts(
    *, rules: VersionRules, layout: KVLayout, kv_cache_bytes: int, needed: int, max_model_len: int
) -> bool:
    """This version's start-up capacity check for one request of max_model_len (reference §3.6, §4.4):
    V0 compares tokens (blocks x B) with the length; V1 compares the bytes a request needs with the pool,
    less the null block from 0.30.

    E.g. 0.33.0, Llama-3.1-8B on an L4: a pool of about 3.6 GiB; one request of 131,072 tokens
    needs 8,192 blocks x 2 MiB = 16 GiB -> False; at 8,192 tokens it needs 1 GiB -> True.
    """
    if rules.engine == "v0":
        blocks = num_blocks_for(available_bytes=kv_cache_bytes, layout=layout)
        return blocks > 0 and blocks * layout.block_size >= max_model_len
    null_block = layout.bytes_per_block if rules.null_block_in_check else 0
    return kv_cache_bytes > 0 and needed <= kv_cache_bytes - null_block
