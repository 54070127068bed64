"""DeepSeek-V4's KV cache as vllm-ascend lays it out on Atlas A2 / A3 (v0.23.0 and v0.25.1rc1, the same code;
versions.py ``ascend_dsv4_layout``).

Per layer (vllm_ascend/models/deepseek_v4.py, models/layer/attention/layer.py), with B = cache_config.block_size
and DSV4_BLOCK_SIZES[B] = ((mla, swa, c4 state, c128 state) blocks, (t1, t2) padded pages):

- every layer: a sliding-window cache (AscendDeepseekV4SWACache: AscendSlidingWindowMLASpec, head_dim values in
  the model dtype, ``swa`` tokens a block, window ``sliding_window``);
- a layer with compress ratio r > 1: the compressed latent (DSAAttention.get_kv_cache_spec: AscendMLAAttentionSpec,
  ``mla`` compressed entries a block, i.e. mla x r tokens, head_dim values) and its compressor's float32 state
  (AscendCompressorStateCache: 2 x coff x head_dim values, coff = 2 for r = 4, window coff x r, padded to t2);
- a C4 layer (r = 4) also: the indexer's keys (AscendDeepseekV4IndexerCache: int8 index_head_dim values + one
  fp16 scale, ``mla`` entries a block) and the indexer compressor's state (state_dim 512, padded to t1).

Grouping (patch/platform/patch_kv_cache_utils.py): the MLA specs by compress ratio (C4 first, then C128), the
sliding specs by block size; ``_approximate_gcd`` of every group's layer tuples (from the C4 group's count) gives
T; each sliding group is split into cdiv(layers a page, T) groups; one block id is T layer tuples of the C4
group's page sizes (_get_kv_cache_config_deepseek_v4), shared by every group.

On an A5 (Ascend 950, get_ascend_device_type() A5) the same code takes _DSV4_BLOCK_SIZES_A5 (C128 state blocks
half as long, smaller pads) and an fp8 cache: the latent and SWA caches store float8_e4m3fn entries of head_dim +
128 (DSAAttention / AscendDeepseekV4SWACache.get_kv_cache_spec: ``cached_head_size``), the indexer fp8 keys with a
float32 scale, and cache_config.cache_dtype becomes "float8_e4m3fn" whatever --kv-cache-dtype said.
"""

from __future__ import annotations

from collections import Counter

from app.core import kinds
from app.core.kinds import Group, cdiv
from app.core.kv_dsv4 import CSA_RATIO, approximate_gcd
from app.core.specs import LayerKind, ModelSpec

ASCEND_DSV4_BACKEND = "ASCEND_DSA"  # vllm_ascend/attention/dsa_v1.py AscendDSABackend.get_name (V1 runner)
# layer.py get_dsv4_block_sizes, non-A5 devices: block_size -> ((mla, swa, c4 state, c128 state), (t1, t2))
DSV4_BLOCK_SIZES: dict[int, tuple[tuple[int, int, int, int], tuple[int, int]]] = {
    128: ((128, 128, 8, 32), (16640, 131072)),
    64: ((64, 64, 4, 16), (8320, 65536)),
    32: ((32, 32, 2, 8), (4160, 32768)),
}
HCA_RATIO = 128
STATE_BYTES = 4  # float32 kv_state + score_state
INDEX_KEY_BYTES = 1  # int8 keys on A2 / A3, float8_e4m3fn on an A5
INDEX_SCALE_BYTES = 2  # one fp16 scale per token (scale_dim 1 when index_head_dim is 128)
INDEX_SCALED_HEAD = 128
# layer.py get_dsv4_block_sizes on an A5 (_DSV4_BLOCK_SIZES_A5), the same keys
DSV4_BLOCK_SIZES_A5: dict[int, tuple[tuple[int, int, int, int], tuple[int, int]]] = {
    128: ((128, 128, 8, 16), (16896, 81920)),
    64: ((64, 64, 4, 8), (8448, 40960)),
    32: ((32, 32, 2, 4), (4224, 20480)),
}
# the catalog's A5 devices (device_specs/devices_added.yaml): vllm-ascend's AscendDeviceType.A5 (soc_version 260)
ASCEND_A5_DEVICE_IDS = frozenset({"huawei-ascend-950pr"})
A5_CACHE_DTYPE = "fp8_e4m3"  # float8_e4m3fn, which the A5 specs write into cache_config.cache_dtype
A5_EXTRA_HEAD = 128  # cached_head_size = head_dim + 128 (latent and SWA caches) on an A5
A5_INDEX_SCALE_BYTES = 4  # AscendDeepseekV4IndexerCache: scale_dtype torch.float on an A5, float16 elsewhere


def _pad_to(page: int, pages: set[int]) -> int:
    """_get_kv_cache_groups_uniform_groups: a sliding page is padded to the nearest C4-group page not below it."""
    return min((p for p in pages if p >= page), default=page)


def _split(group: Group, *, window: int, block: int, tuples: int) -> list[Group]:
    """A sliding group cut into cdiv(layers a page, T) groups, layer tuples dealt round-robin."""
    per_page = group.layer_pages[0][1]
    n = cdiv(per_page, tuples)
    counts = [len(range(i, per_page, n)) for i in range(n)]
    return [
        Group(
            kind=LayerKind.SLIDING,
            num_layers=k * len(group.layer_pages),
            page_size_bytes=group.page_size_bytes,
            window_tokens=window,
            block_size_tokens=block,
            layer_pages=tuple((page, k) for page, _ in group.layer_pages),
        )
        for k in counts
    ]


def ascend_dsv4_groups(
    *, stage: tuple[ModelSpec, tuple[int, int]], dtype_bytes: int, block_size: int, a5: bool = False
) -> tuple[list[Group], int, int] | None:
    """(groups, bytes per block id, bytes a token of the growing caches) of one stage's layers (the model and its
    layer range), None when the
    block size is not in DSV4_BLOCK_SIZES or the stage lacks C4 or C128 layers (vllm-ascend indexes its first
    two groups as those).

    E.g. DeepSeek-V4-Flash (21 C4, 20 C128, 43 layers), B 128, bf16: pages 131,072 (latent, SWA, padded states)
    and 16,640 (indexer, its padded state); tuples [21, 20, 43, 21, 20] -> T 22 (padding 7); the SWA group splits
    into 22 + 21; a block id is 22 x (131,072 + 16,640) = 3,249,664 B. ``a5`` (dtype_bytes 1, fp8): pages 81,920
    (latent and SWA 128 x 640 x 1, states padded to t2) and 16,896 (indexer 128 x (128 + 4)); 22 x 98,816 =
    2,173,952 B a block id.
    """
    model, (first, last) = stage
    ratios, window, head_dim = model.compress_ratios or (), model.sliding_window_tokens or 0, model.head_size
    head_dim_index = kinds.index_head_dim(model.indexer_bytes_per_token)
    ratios = ratios[first:last]
    sizes = (DSV4_BLOCK_SIZES_A5 if a5 else DSV4_BLOCK_SIZES).get(block_size)
    counts = Counter(ratios)
    n4, n128, n_all = counts[CSA_RATIO], counts[HCA_RATIO], len(ratios)
    if sizes is None or not n4 or not n128:
        return None
    (mla_block, swa_block, c4_block, c128_block), (t1, t2) = sizes
    cached_head = head_dim + (A5_EXTRA_HEAD if a5 else 0)
    latent = mla_block * cached_head * dtype_bytes
    scale_bytes = A5_INDEX_SCALE_BYTES if a5 else INDEX_SCALE_BYTES
    scale = scale_bytes if head_dim_index == INDEX_SCALED_HEAD else 0
    index = mla_block * (head_dim_index * INDEX_KEY_BYTES + scale)
    c4_pages = {latent, index}
    swa = _pad_to(swa_block * cached_head * dtype_bytes, c4_pages)
    c4_kv_state = _pad_to(max(t2, c4_block * 2 * 2 * head_dim * STATE_BYTES), c4_pages)
    c4_index_state = _pad_to(max(t1, c4_block * 2 * 2 * head_dim_index * STATE_BYTES), c4_pages)
    c128_state = _pad_to(max(t2, c128_block * 2 * head_dim * STATE_BYTES), c4_pages)
    c4 = Group(
        LayerKind.MLA,
        2 * n4,
        latent,
        block_size_tokens=mla_block * CSA_RATIO,
        layer_pages=((latent, n4), (index, n4)),
    )
    c128 = Group(
        LayerKind.MLA, n128, latent, block_size_tokens=mla_block * HCA_RATIO, layer_pages=((latent, n128),)
    )
    sliding = [
        (Group(LayerKind.SLIDING, n_all, swa, layer_pages=((swa, n_all),)), window, swa_block),
        (
            Group(
                LayerKind.SLIDING, 2 * n4, c4_kv_state, layer_pages=((c4_kv_state, n4), (c4_index_state, n4))
            ),
            2 * CSA_RATIO,
            c4_block,
        ),
        (
            Group(LayerKind.SLIDING, n128, c128_state, layer_pages=((c128_state, n128),)),
            HCA_RATIO,
            c128_block,
        ),
    ]
    tuples = approximate_gcd([n4, n128, n_all, n4, n128], lower_bound=n4)
    groups = [c4, c128]
    for group, group_window, block in sliding:
        groups += _split(group, window=group_window, block=block, tuples=tuples)
    slots = max(k for g in groups for _, k in g.layer_pages)
    per_token = sum(g.bytes_per_block // (g.block_size_tokens or 1) for g in (c4, c128))
    return groups, slots * sum(c4_pages), per_token
