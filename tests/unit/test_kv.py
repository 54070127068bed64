"""Golden numbers worked by hand from the seed and the reference's worked examples (§1)."""

from __future__ import annotations

import pytest

from app.core import kv as K
from app.core.specs import GIB, ServeConfig
from app.core.versions import rules_for
from tests.specs_factory import deepseek_v3_like, dense, gpt_oss_like, layout


def test_seed_example_one_gib_per_sequence() -> None:
    # seed: L=32, H_kv=8, D=128, b=2, S=8192: 2 x 32 x 8 x 128 x 8192 x 2 = 1,073,741,824 B = 1 GiB;
    # 64 sequences -> 64 GiB
    lay = layout(dense(), version="0.33.0")
    assert lay.kv_bytes_per_token == 2 * 32 * 8 * 128 * 2 == 131_072
    assert lay.kv_bytes_per_token * 8192 == GIB
    assert lay.kv_bytes_per_token * 8192 * 64 == 64 * GIB


def test_reference_dense_worked_example() -> None:
    # page = 16*8*256*2 = 65,536 B/layer; bytes_per_block = 32 * 65,536 = 2,097,152; 60 GiB -> 30,720 blocks;
    # L=8192 -> 512 blocks/request -> 60.00x; tokens int(60 x 8192) = 491,520 (0.20+) = 30,720 x 16 (0.19)
    for version in ("0.19.0", "0.33.0"):
        rules = rules_for(version)
        lay = layout(dense(), version=version)
        assert lay.page_size_bytes == 65_536
        assert lay.bytes_per_block == 2_097_152
        blocks = K.num_blocks_for(available_bytes=60 * GIB, layout=lay)
        assert blocks == 30_720
        conc = K.max_concurrency_for(
            num_blocks=blocks,
            layout=lay,
            max_model_len=8192,
            inflight_tokens=8192,
            prefix_caching=True,
            rules=rules,
        )
        assert conc == pytest.approx(60.0)
        assert (
            K.kv_tokens_for(
                num_blocks=blocks, layout=lay, max_concurrency=conc, max_model_len=8192, rules=rules
            )
            == 491_520
        )


def test_reference_sliding_window_worked_example() -> None:
    # 12 full + 12 SWA (W=128), 8 KV heads, head 64: page 16*8*128*2 = 32,768; two groups of 12 layers:
    # bytes_per_block 393,216; 40 GiB // 393,216 = 109,226 blocks.
    lay = layout(gpt_oss_like(), version="0.33.0")
    assert lay.page_size_bytes == 32_768
    assert len(lay.groups) == 2
    assert lay.bytes_per_block == 393_216
    blocks = K.num_blocks_for(available_bytes=40 * GIB, layout=lay)
    assert blocks == 109_226
    # 0.33.0, IF = 2 x 8192: SWA cdiv(min(127 + 16384, 131072), 16) + 1 = 1033; full 8192 -> 9225 blocks
    rules = rules_for("0.33.0")
    conc = K.max_concurrency_for(
        num_blocks=blocks,
        layout=lay,
        max_model_len=131_072,
        inflight_tokens=16_384,
        prefix_caching=True,
        rules=rules,
    )
    assert f"{conc:.2f}" == "11.84"
    assert (
        K.kv_tokens_for(
            num_blocks=blocks, layout=lay, max_concurrency=conc, max_model_len=131_072, rules=rules
        )
        == 1_551_920
    )
    # 0.11.0, IF = 8192: SWA cdiv(8319, 16) + 1 = 521 -> 8713 blocks -> 12.54x; tokens 109,226 // 2 x 16
    old = rules_for("0.11.0")
    lay_old = layout(gpt_oss_like(), version="0.11.0")
    conc_old = K.max_concurrency_for(
        num_blocks=blocks,
        layout=lay_old,
        max_model_len=131_072,
        inflight_tokens=8192,
        prefix_caching=True,
        rules=old,
    )
    assert f"{conc_old:.2f}" == "12.54"
    assert (
        K.kv_tokens_for(
            num_blocks=blocks, layout=lay_old, max_concurrency=conc_old, max_model_len=131_072, rules=old
        )
        == 873_808
    )


@pytest.mark.parametrize(
    ("kv_dtype", "per_token"), [("auto", 70_272), ("fp8", 35_136), ("fp8_ds_mla", 40_016)]
)
@pytest.mark.parametrize("tp", [1, 8, 16])
def test_reference_mla_bytes_per_token_any_tp(kv_dtype: str, per_token: int, tp: int) -> None:
    # 61 layers x (512 + 64) x 2 B = 70,272 (bf16); x 1 B = 35,136 (fp8); 61 x 656 = 40,016 (fp8_ds_mla).
    # The latent is replicated on every TP rank, so TP does not change it.
    lay = layout(deepseek_v3_like(), version="0.33.0", tp=tp, kv_dtype=kv_dtype)
    assert lay.bytes_per_block // lay.block_size == per_token


def test_tp_larger_than_kv_heads_replicates() -> None:
    # H_kv = 8, TP = 16: each rank keeps max(1, 8 // 16) = 1 head, not half a head:
    # per token 2 x 32 x 1 x 128 x 2 = 16,384 B instead of 131,072 / 16 = 8,192
    assert K.kv_heads_per_rank(total_kv_heads=8, tensor_parallel_size=16) == 1
    lay = layout(dense(heads=64), version="0.33.0", tp=16)
    assert lay.kv_bytes_per_token == 16_384


def test_pp_stage_split_gives_remainder_to_earlier_stages() -> None:
    # vLLM get_pp_indices: 30 layers over 4 stages = [7, 7, 7, 7] plus the remainder 2 given to the stages
    # before the last one (-2 and -3) -> [7, 8, 8, 7]
    assert K.stage_layer_ranges(num_layers=30, pipeline_parallel_size=4) == [
        (0, 7),
        (7, 15),
        (15, 23),
        (23, 30),
    ]
    assert K.stage_layer_ranges(num_layers=32, pipeline_parallel_size=2) == [(0, 16), (16, 32)]


def test_fp8_halves_the_page() -> None:
    # seed: fp8 takes b from 2 to 1, occupancy roughly halves: page 65,536 -> 32,768
    assert layout(dense(), version="0.33.0", kv_dtype="fp8").page_size_bytes == 32_768


def _bisect_max_model_len(*, available_bytes: int, layout: K.KVLayout, upper: int, **kw: object) -> int:
    """The plain bisection over [0, upper] that vLLM runs (the reference for the guessed search)."""
    lo, hi = 0, upper
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if K.needed_bytes(layout=layout, max_model_len=mid, **kw) <= available_bytes:  # type: ignore[arg-type]
            lo = mid
        else:
            hi = mid - 1
    return lo


@pytest.mark.parametrize(
    "model_name",
    [
        "meta-llama/Llama-3.1-8B",
        "google/gemma-3-27b-it",  # sliding-window groups
        "openai/gpt-oss-20b",  # sliding + full hybrid
        "deepseek-ai/DeepSeek-V2-Lite",  # MLA
        "Qwen/Qwen3-Next-80B-A3B-Instruct",  # gated-delta-net hybrid (mamba-like state)
        "meta-llama/Llama-4-Scout-17B-16E-Instruct",  # chunked-local attention
    ],
)
def test_guessed_search_equals_vllms_bisection(model_name: str) -> None:
    from app.core.catalog import find_device, find_model
    from app.core.estimate import sizing_for

    model = find_model(model_name)
    checked = 0
    for version in ("0.6.6", "0.11.0", "0.19.0", "0.33.0"):
        sizing = sizing_for(
            model=model, device=find_device("h100"), serve=ServeConfig(), vllm_version=version
        )
        rules = rules_for(version)
        layout = sizing.layout
        for inflight in (1, 2048, 8192):
            for prefix in (False, True):
                kw = {"inflight_tokens": inflight, "prefix_caching": prefix, "rules": rules}
                # pools from nothing to many GiB, including exact page multiples and off-by-one bytes
                for pool in (
                    0,
                    1,
                    layout.bytes_per_block,
                    7 * layout.bytes_per_block - 1,
                    3 * GIB,
                    41 * GIB + 5,
                ):
                    for upper in (1, 17, 4096, model.max_model_len_derived, 10_000_000):
                        got = K.estimate_max_model_len(available_bytes=pool, layout=layout, upper=upper, **kw)  # type: ignore[arg-type]
                        want = _bisect_max_model_len(available_bytes=pool, layout=layout, upper=upper, **kw)
                        assert got == want, (version, inflight, prefix, pool, upper)
                        checked += 1
    assert checked == 4 * 3 * 2 * 6 * 5
