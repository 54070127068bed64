"""DeepSeek-V4 on an A5 (Ascend 950PR) as vllm-ascend v0.23.0 / v0.25.1rc1 lays it out (the same code in both):
models/layer/attention/layer.py get_dsv4_block_sizes returns _DSV4_BLOCK_SIZES_A5 when get_ascend_device_type()
is A5, and the A5 specs store fp8 (DSAAttention.get_kv_cache_spec, models/deepseek_v4.py
AscendDeepseekV4SWACache / AscendDeepseekV4IndexerCache.get_kv_cache_spec)."""

from __future__ import annotations

import pytest

from app.core import kv_dsv4_ascend
from app.core.catalog import find_device, find_model
from app.core.errors import InvalidServeConfigError
from app.core.estimate import estimate
from app.core.specs import GIB, ServeConfig

V4_FLASH = "deepseek-ai/DeepSeek-V4-Flash"  # 43 layers: 21 C4, 20 C128, head_dim 512, index_head_dim 128


def _v4(device: str, **serve: object) -> object:
    return estimate(
        model=find_model(V4_FLASH),
        device=find_device(device),
        serve=ServeConfig(**serve),  # type: ignore[arg-type]
        vllm_version="0.25.0",
    )


def test_a5_pages_follow_the_a5_table_and_the_fp8_specs() -> None:
    # _DSV4_BLOCK_SIZES_A5[128] = ((128, 128, 8, 16), (16,896, 81,920)); [64] = ((64, 64, 4, 8), (8,448, 40,960)).
    # A5: cached_head_size = 512 + 128 = 640 in float8_e4m3fn (1 B); indexer keys fp8, scale_dim 1 of torch.float.
    # B 128: latent 128 x 640 x 1 = 81,920; indexer 128 x (128 x 1 + 1 x 4) = 16,896; SWA 128 x 640 = 81,920;
    # C4 kv state 8 x (2 x 2 x 512) x 4 = 65,536 -> padded t2 81,920; C4 index state 8 x (2 x 2 x 128) x 4 =
    # 16,384 -> t1 16,896 (AscendCompressorStateCache: state_dim 512 and ratio 4 take pads[0]); C128 state
    # 16 x (2 x 512) x 4 = 65,536 -> t2 81,920 (A2 / A3: 32 x 1,024 x 4 = 131,072).
    # Layer tuples [21, 20, 43, 21, 20] -> T 22 (patch_kv_cache_utils _approximate_gcd from 21, as on A2):
    # one block id 22 x (81,920 + 16,896) = 2,173,952 B. Growing caches a token: 21 x 98,816 / 512 = 4,053 (C4)
    # + 20 x 81,920 / 16,384 = 100 (C128) = 4,153.
    model = find_model(V4_FLASH)
    out = kv_dsv4_ascend.ascend_dsv4_groups(stage=(model, (0, 43)), dtype_bytes=1, block_size=128, a5=True)
    assert out is not None
    groups, per_block, per_token = out
    assert (per_block, per_token) == (2_173_952, 4_153)
    pages = [sorted({p for p, _ in g.layer_pages}) for g in groups]
    assert pages == [[16_896, 81_920], [81_920], [81_920], [81_920], [16_896, 81_920], [81_920]]
    assert [g.block_size_tokens for g in groups] == [512, 16_384, 128, 128, 8, 16]
    # B 64 (prefix caching and chunked prefill off): latent 64 x 640 = 40,960 = t2, indexer 64 x 132 = 8,448 = t1;
    # 22 x (40,960 + 8,448) = 22 x 49,408 = 1,086,976 B; state blocks 4 (C4) and 8 (C128)
    half = kv_dsv4_ascend.ascend_dsv4_groups(stage=(model, (0, 43)), dtype_bytes=1, block_size=64, a5=True)
    assert half is not None and half[1] == 1_086_976
    assert [g.block_size_tokens for g in half[0]][-2:] == [4, 8]


def test_deepseek_v4_on_the_950pr_plans_the_a5_cache() -> None:
    # TP 8, 65,536 tokens, 8,192 batched, --kv-cache-memory-bytes 20 GiB, --kv-cache-dtype auto.
    # 21,474,836,480 // 2,173,952 = 9,878 blocks. A request: C4 cdiv(65,536, 512) = 128, C128 cdiv(65,536,
    # 16,384) = 4, SWA cdiv(127 + 8,192, 128) + 1 = 66 (x 2), C4 state cdiv(7 + 8,192, 8) + 1 = 1,026, C128 state
    # cdiv(127 + 8,192, 16) + 1 = 521 (A2 / A3: 261). vLLM get_max_concurrency_for_kv_cache_config: cdiv(128 x
    # 2,075,136 + 4 x 1,638,400 + 66 x 1,802,240 + 66 x 1,720,320 + 1,026 x 2,075,136 + 521 x 1,638,400 =
    # 3,487,355,904, 2,075,136) = 1,681; 9,878 / 1,681 = 5.876 -> int(5.87626 x 65,536) = 385,106 tokens
    serve = {"tensor_parallel_size": 8, "max_model_len": 65_536, "max_num_batched_tokens": 8_192}
    est = _v4("huawei-ascend-950pr", kv_cache_memory_bytes=20 * GIB, **serve)
    assert (est.attention_backend, est.kv_cache_dtype, est.kv_dtype_bytes_per_element) == (
        "ASCEND_DSA",
        "fp8_e4m3",
        1,
    )  # type: ignore[attr-defined]
    assert (est.bytes_per_block, est.num_gpu_blocks, est.kv_bytes_per_token) == (2_173_952, 9_878, 4_153)  # type: ignore[attr-defined]
    groups = est.groups  # type: ignore[attr-defined]
    assert [g.kind for g in groups] == ["mla"] * 2 + ["sliding"] * 4
    assert [g.num_layers for g in groups] == [42, 20, 22, 21, 42, 20]
    assert [g.block_size for g in groups] == [512, 16_384, 128, 128, 8, 16]
    assert [g.blocks_per_request for g in groups] == [128, 4, 66, 66, 1_026, 521]
    assert (round(est.max_concurrency, 2), est.kv_tokens) == (5.88, 385_106)  # type: ignore[attr-defined]
    assert any("float8_e4m3fn" in str(w) for w in est.warnings)  # type: ignore[attr-defined]
    # an A3 die keeps the 16-bit table (test_platforms_round8: 3,249,664 B a block id, C128 state 32 tokens)
    a3 = _v4("huawei-ascend-910c", kv_cache_memory_bytes=20 * GIB, **serve)
    assert (a3.kv_cache_dtype, a3.bytes_per_block, a3.groups[-1].block_size) == ("auto", 3_249_664, 32)  # type: ignore[attr-defined]
    assert not any("float8_e4m3fn" in str(w) for w in a3.warnings)  # type: ignore[attr-defined]


def test_the_a5_table_refuses_what_the_a2_table_refuses() -> None:
    # _DSV4_BLOCK_SIZES_A5 has the keys 128, 64, 32, as _DSV4_BLOCK_SIZES: --block-size 96 is a KeyError there too
    assert set(kv_dsv4_ascend.DSV4_BLOCK_SIZES_A5) == set(kv_dsv4_ascend.DSV4_BLOCK_SIZES)
    off = {"enable_prefix_caching": False, "enable_chunked_prefill": False}
    with pytest.raises(InvalidServeConfigError) as info:
        _v4("huawei-ascend-950pr", tensor_parallel_size=8, max_model_len=8_192, block_size=96, **off)
    assert info.value.field == "block_size"
