"""vLLM 0.34.0's rules, read from its wheel (pip download --no-deps vllm==0.34.0; docs/release-watch.md).

The extensible KV cache (config/vllm.py VllmConfig._resolve_extensible_kv_cache, config/cache.py
CacheConfig.resolved_gpu_memory_utilization, v1/worker/extensible_kv_cache.py measure_kv_cache_bytes,
v1/worker/utils.py request_memory): numbers worked by hand below on tests.specs_factory.dense() (32 layers:
weights 16,060,522,496 B, non-torch 268,435,456 B, the default 51 graph sizes 978,006,999 B; the planner's
activation peak 2,023,699,251 B on an H100, 2,234,725,171 B on an MI300X; budget.CUDA_CONTEXT_BYTES 0.5 GiB).
"""

from __future__ import annotations

import pytest

from app.core import capture_split, extensible_kv
from app.core.catalog import find_device
from app.core.command import parse_pasted
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.recommend import recommend, utilization_ceiling
from app.core.result import ErrorKind, Estimate
from app.core.serve_flags import render_flags
from app.core.specs import ServeConfig
from app.core.versions import resolve_version, rules_for
from tests.specs_factory import dense

H100 = find_device("h100")  # 84,932,978,278 B
MI300X = find_device("mi300x")  # 206,051,056,026 B
NON_KV = 16_060_522_496 + 268_435_456 + 978_006_999  # weights + non-torch + graphs = 17,306,964,951 B


def _plan(command: str, version: str, device=H100, **update: object) -> Estimate:  # type: ignore[no-untyped-def]
    serve = parse_pasted(command, vllm_version=version).serve.model_copy(update=update)
    return estimate(model=dense(), device=device, serve=serve, vllm_version=version)


def test_0_34_0_is_a_known_release_with_the_extensible_cache() -> None:
    assert not resolve_version("0.34.0").newer_than_known
    assert rules_for("0.34.0").extensible_kv_cache and not rules_for("0.33.0").extensible_kv_cache
    assert rules_for("0.34.1").version == "0.34.0"


def test_unset_utilization_is_1_0_and_the_pool_is_measured_after_capture_on_an_h100() -> None:
    # requested = ceil(84,932,978,278 x 1.0); requested - non_kv = 67,626,013,327
    # free at start 84,932,978,278 - 536,870,912 = 84,396,107,366; margin max(1 GiB, 0.75 x 2,023,699,251 =
    # 1,517,774,438) = 1,517,774,438; free - non_kv - margin = 65,571,367,977 (binds) - peak 2,023,699,251
    # = 63,547,668,726 B (0.33.0: 0.92 x total - all parts = 58,807,675,814)
    est = _plan("vllm serve m", "0.34.0")
    assert est.activation_peak_bytes == 2_023_699_251
    assert est.kv_cache_bytes == 63_547_668_726
    assert _plan("vllm serve m", "0.33.0").kv_cache_bytes == 58_807_675_814


def test_an_explicit_0_92_binds_on_the_requested_budget_as_before() -> None:
    # requested ceil(0.92 x 84,932,978,278) = 78,138,340,016 - non_kv = 60,831,375,065 < 65,571,367,977:
    # 60,831,375,065 - 2,023,699,251 = 58,807,675,814, the 0.33.0 pool; and the command keeps the 0.92 that
    # 0.34.0 would otherwise replace by 1.0
    est = _plan("vllm serve m --gpu-memory-utilization 0.92", "0.34.0")
    assert est.kv_cache_bytes == 58_807_675_814
    serve = parse_pasted("vllm serve m --gpu-memory-utilization 0.92", vllm_version="0.34.0").serve
    assert "--gpu-memory-utilization 0.92" in render_flags(serve, rules_for("0.34.0"))
    assert "--gpu-memory-utilization 0.92" not in render_flags(serve, rules_for("0.33.0"))


def test_rocm_keeps_a_3_gib_margin() -> None:
    # MI300X: hipGraphs 394,600,120 + 84,449 x 32 x (51 + 51) = 670,241,656 B (budget.rocm_graph_bytes), non_kv
    # 16,060,522,496 + 268,435,456 + 670,241,656 = 16,999,199,608; free 206,051,056,026 - 536,870,912 =
    # 205,514,185,114; margin max(3 GiB = 3,221,225,472, 0.75 x 2,234,725,171) = 3,221,225,472:
    # 205,514,185,114 - 16,999,199,608 - 3,221,225,472 = 185,293,760,034 (below requested - non_kv) - 2,234,725,171
    # = 183,059,034,863 B
    assert _plan("vllm serve m", "0.34.0", device=MI300X).kv_cache_bytes == 183_059_034_863
    assert extensible_kv.margin_bytes(platform="cuda", transient_peak_bytes=0) == 1 << 30


def test_no_free_memory_refusal_and_other_processes_come_out_of_the_pool() -> None:
    # 10 GiB held by another process: 0.33.0 refuses (free 73.66 GiB < 0.92 x 79.1 GiB); 0.34.0 skips the check
    # (request_memory: "the budget is only a cap") and the headroom term loses the 10 GiB:
    # 63,547,668,726 - 10,737,418,240 = 52,810,250,486 B
    assert (
        _plan("vllm serve m", "0.33.0", device_memory_used_gib=10.0).error_kind
        == ErrorKind.STARTUP_FREE_MEMORY
    )
    est = _plan("vllm serve m", "0.34.0", device_memory_used_gib=10.0)
    assert est.error_kind is None and est.kv_cache_bytes == 52_810_250_486


def test_kv_cache_memory_bytes_turns_the_extensible_cache_off() -> None:
    # _resolve_extensible_kv_cache: "kv_cache_memory_bytes overrides" -> estimate-based sizing, the pool as given
    assert _plan("vllm serve m --kv-cache-memory-bytes 20G", "0.34.0").kv_cache_bytes == 20 * 2**30


def test_the_log_prints_the_tentative_budget_and_no_graph_estimate() -> None:
    # gpu_worker.py determine_available_memory under the extensible cache: no "Estimated CUDA graph memory"
    # (profile_cudagraph_memory returns 0), "Available KV cache memory" = requested - (weights + non-torch + peak)
    # = 84,932,978,278 - 16,060,522,496 - 268,435,456 - 2,023,699,251 = 66,580,321,075 B = 62.008 GiB -> "62.01";
    # the KV size line (finalize_extensible_kv_cache) comes after the graph line
    lines = _plan("vllm serve m", "0.34.0").log_lines
    assert not any("Estimated CUDA graph memory" in line for line in lines)
    assert "Available KV cache memory: 62.01 GiB" in lines
    graph = next(i for i, line in enumerate(lines) if line.startswith("Graph capturing finished"))
    size = next(i for i, line in enumerate(lines) if line.startswith("GPU KV cache size"))
    assert graph < size


def test_a_length_the_tentative_budget_refuses_is_refused_before_warmup() -> None:
    # dense() at 2,000,000 tokens on an H100: one request needs 2,000,000 x 131,072 B = 244.14 GiB, more than the
    # tentative 66,580,321,075 B less one 16-token block (2,097,152 B): refused before warmup, with the hint that
    # names only the model and its activations (kv_cache_planning.py _more_kv_cache_memory_hint, utilization 1.0)
    err = _plan("vllm serve m", "0.34.0", max_model_len=2_000_000, allow_long_max_model_len=True).error or ""
    assert "larger than the available KV cache memory (62.01 GiB)" in err
    assert "already takes all device memory left after the model and its activations;" in err
    assert "Decreasing `max_model_len` also reduces what is needed." in err


B200 = find_device("b200")


def test_sm100_splits_its_capture_grids() -> None:
    # 0.34.0 config/compilation.py: prefill_cudagraph_capture_grid(8192) has 54 sizes and
    # decode_cudagraph_capture_grid(1024) 64 ("54 sizes at 8192", "64 sizes at 1024", their docstrings); the
    # walk 1, 2, 4, 8, 16, 24 ... (stride the largest power of two <= min(t, max(8, t / 4), 0.07 x max(t, 4096)))
    assert len(capture_split.prefill_grid(8192)) == 54 and capture_split.prefill_grid(8192)[:8] == [
        1,
        2,
        4,
        8,
        16,
        24,
        32,
        40,
    ]
    assert len(capture_split.decode_grid(1024)) == 64 and capture_split.decode_grid(1024)[:8] == [
        1,
        2,
        3,
        4,
        5,
        6,
        8,
        10,
    ]
    # a B200's defaults (1,024 sequences, 8,192 tokens): 54 prefill + 64 decode graphs, one graph a size each:
    # 0.5 x 118 / 51 x 978,006,999 = 1,131,419,861.6 B; 0.33.0: the 83-size grid to 1,024, 83 / 51 x 978,006,999
    assert _plan("vllm serve m", "0.34.0", device=B200).cuda_graph_bytes == 1_131_419_861
    assert _plan("vllm serve m", "0.33.0", device=B200).cuda_graph_bytes == 1_591_658_449
    # a deprecated key keeps the shared grid (legacy_sizes): max_cudagraph_capture_size 512 -> the 51 sizes
    cc = "vllm serve m -cc '{\"max_cudagraph_capture_size\": 512}'"
    assert _plan(cc, "0.34.0", device=B200).cuda_graph_bytes == 978_006_999
    # off SM100 (an H100) the decode sizes are the shared grid's: the 51-size figure, as at 0.33.0
    assert _plan("vllm serve m", "0.34.0").cuda_graph_bytes == 978_006_999


def test_sm100_prefill_graphs_do_not_shrink_with_max_num_seqs() -> None:
    # --max-num-seqs 64: the prefill grid still runs to 8,192 tokens (54), decode_cudagraph_capture_grid(64) has 21
    # sizes (1 ... 6, 8, 10 ... 16 by 2, 20 ... 48 by 4, 56, 64): 0.5 x 75 / 51 x 978,006,999 = 719,122,793.4 B
    assert len(capture_split.decode_grid(64)) == 21
    assert _plan("vllm serve m --max-num-seqs 64", "0.34.0", device=B200).cuda_graph_bytes == 719_122_793


def test_the_pool_equation_is_the_extensible_cache_s_binding_term() -> None:
    # the page's KV pool equation must be the arithmetic that gave the pool (review11): at u = 1.0 the headroom term
    # binds (test above): 79.10 - 0.50 (context) - 14.96 - 0.25 - 0.91 (weights, non-torch, graphs)
    # - 1.41 (margin 1,517,774,438 B) - 1.88 (peak) = 59.19 ~ 59.18 GiB (63,547,668,726 B); as T x u - ... it read
    # 79.10 x 1 - 14.96 - 1.88 - 0.25 - 0.91 = 61.10 GiB. At 0.92 the requested term binds: 79.10 x 0.92 - 14.96
    # - 0.25 - 0.91 - 1.88 = 54.77 GiB (58,807,675,814 B)
    pool = next(
        t for t in _plan("vllm serve m", "0.34.0").terms if t.name == "KV pool (available KV cache memory)"
    )
    assert (
        pool.formula.endswith("= 79.10 − 0.50 − 14.96 − 0.25 − 0.91 − 1.41 − 1.88")
        and pool.value == "59.18 GiB"
    )
    est = _plan("vllm serve m --gpu-memory-utilization 0.92", "0.34.0")
    pool = next(t for t in est.terms if t.name == "KV pool (available KV cache memory)")
    assert pool.formula.endswith("= 79.10 × 0.92 − 14.96 − 0.25 − 0.91 − 1.88") and pool.value == "54.77 GiB"
    # 10 GiB held by another process comes off the headroom: 59.18 - 10.00 = 49.18 GiB (52,810,250,486 B)
    est = _plan("vllm serve m", "0.34.0", device_memory_used_gib=10.0)
    pool = next(t for t in est.terms if t.name == "KV pool (available KV cache memory)")
    assert "79.10 − 0.50 − 10.00 − 14.96" in pool.formula and pool.value == "49.18 GiB"


def test_the_recommended_utilization_ceiling_is_1_0_under_the_extensible_cache() -> None:
    # 0.34.0's unset utilization is 1.0 (config/cache.py resolved_gpu_memory_utilization) and measure_kv_cache_bytes
    # keeps its own margin (>= 1 GiB) free: the recommender said "gpu_memory_utilization is 1, already at or above
    # the safe ceiling (... ceiling 0.95)" of vLLM's own default (review11). Without the cache (an explicit
    # --kv-cache-memory-bytes) the 0.95 ceiling of 0.33.0 stands.
    est = _plan("vllm serve m", "0.34.0")
    assert est.extensible_kv_cache and est.gpu_memory_utilization == 1.0
    assert utilization_ceiling(est)[0] == 1.0
    assert utilization_ceiling(_plan("vllm serve m", "0.33.0"))[0] == 0.95
    fixed = _plan("vllm serve m --kv-cache-memory-bytes 20G", "0.34.0")
    assert not fixed.extensible_kv_cache and utilization_ceiling(fixed)[0] == 0.95
    # a target the pool cannot reach (dense() at 131,072 tokens needs 16 GiB a request; 59.18 GiB holds 3): the
    # utilization step names vLLM's own default as safe, not as over a 0.95 ceiling
    rec = recommend(
        model=dense(),
        device=H100,
        serve=ServeConfig(max_model_len=131_072),
        vllm_version="0.34.0",
        target_max_model_len=131_072,
        target_concurrency=16,
    )
    step = next(s for s in rec.steps if s.key == "gpu_memory_utilization")
    assert "ceiling 0.95" not in step.reason and "ceiling 1.00" in step.reason


def test_the_extensible_cache_can_be_switched_off_by_its_flag() -> None:
    # 0.34.0 engine/arg_utils.py EngineArgs.enable_extensible_kv_cache: bool | None, a BooleanOptionalAction, so
    # --no-enable-extensible-kv-cache is a 0.34.0 flag (it was refused as "unrecognized arguments": the flag table
    # stopped at 0.19.0). Off, unset u is 0.92 again and the pool is 0.33.0's 58,807,675,814 B (test above).
    command = "vllm serve m --no-enable-extensible-kv-cache --host 0.0.0.0 --port 8000"
    est = _plan(command, "0.34.0")
    assert not est.extensible_kv_cache and est.gpu_memory_utilization == 0.92
    assert est.kv_cache_bytes == 58_807_675_814
    serve = parse_pasted(command, vllm_version="0.34.0").serve
    assert serve.enable_extensible_kv_cache is False
    assert "--no-enable-extensible-kv-cache" in render_flags(serve, rules_for("0.34.0"))
    assert _plan("vllm serve m --enable-extensible-kv-cache", "0.34.0").kv_cache_bytes == 63_547_668_726
    # before 0.34.0 no release has the flag (vllm_flags.json, every minor's .0 read): 0.33.0's parser exits on it
    with pytest.raises(PlannerError, match=r"0\.34\.0 is the first release with it"):
        _plan("vllm serve m --no-enable-extensible-kv-cache", "0.33.0")
    # --calculate-kv-scales is gone from EngineArgs since 0.28.0 (0.27.0 engine/arg_utils.py has the field and its
    # add_argument, 0.28.0's neither), so 0.33.0 and 0.34.0 both refuse it, naming 0.27.0 the last release with it
    for release in ("0.33.0", "0.34.0"):
        with pytest.raises(
            PlannerError, match=r"unrecognized arguments: --calculate-kv-scales .*0\.27\.0 was the last"
        ):
            parse_pasted("vllm serve m --calculate-kv-scales", vllm_version=release)
    assert (
        "--calculate-kv-scales"
        in parse_pasted("vllm serve m --calculate-kv-scales", vllm_version="0.27.0").unknown_flags
    )


def test_the_pool_band_counts_the_peak_where_the_margin_follows_it() -> None:
    # 0.34.0 extensible_kv_cache.py measure_kv_cache_bytes: min(requested - non_kv, headroom - margin) - peak with
    # margin max(1 GiB, 0.75 x peak). Unset u (1.0) on an H100: the headroom term binds and 0.75 x 2,023,699,251 =
    # 1,517,774,438 > 1 GiB, so a byte of peak error is 1.75 bytes of pool. The activation band is
    # max(0.13 GiB, 6 %) = 139,586,437 B (uncertainty.ACTIVATION_BAND): the pool band grows by
    # int(0.75 x 139,586,437) = 104,689,827 B over the 769,460,411 B of the profiled path (0.33.0, or u 0.9 where
    # the requested term binds and the margin does not move the pool). Before: 769,460,411 B at 0.34.0 too.
    def band(version: str, utilization: float | None) -> int:
        est = estimate(
            model=dense(),
            device=H100,
            serve=ServeConfig(gpu_memory_utilization=utilization),
            vllm_version=version,
        )
        kv = est.ranges["kv_cache_bytes"]
        return int(kv.expected - kv.low)

    assert band("0.33.0", None) == 769_460_411 == band("0.34.0", 0.9)
    assert band("0.34.0", None) == 769_460_411 + 104_689_827
    assert (
        extensible_kv.peak_sensitivity(
            requested_bytes=84_932_978_278,
            free_at_start_bytes=84_932_978_278 - 536_870_912,
            transient_peak_bytes=1_000_000_000,  # 0.75 x 1e9 < 1 GiB: the floor, which the peak does not move
            platform="cuda",
        )
        == 1.0
    )


def test_the_predicted_log_prints_the_warmup_line_vllm_prints() -> None:
    # 0.34.0 v1/worker/extensible_kv_cache.py measure_kv_cache_blocks logs after capture, before the KV size line:
    # the peak kept free (reserved_headroom_bytes: 2,023,699,251 B = 1.88 GiB), the blocks that fit (the pool
    # 63,547,668,726 B: ExtensibleKVCache.blocks_within maps each of the 32 layer segments (65,536 B a block) in
    # whole 2 MiB granules, at most 63,547,668,726 // (32 x 2,097,152) = 946 each, so 946 x 2,097,152 / 65,536 =
    # 30,272 blocks, not the floor's 30,301), their bytes (30,272 x 2,097,152 = 63,484,985,344 B = 59.12 GiB) and
    # the requested 84,932,978,278 B (79.1 GiB); the
    # doctor's pattern (WARMUP_KV) needs a free-memory figure, which the planner leaves "…". Before: no such line.
    lines = estimate(model=dense(), device=H100, serve=ServeConfig(), vllm_version="0.34.0").log_lines
    warmup = [line for line in lines if line.startswith("Memory after warmup")]
    assert warmup == [
        "Memory after warmup: … GiB free, … GiB committed to the KV cache, … GiB kept for transient activations "
        "(1.88 GiB allocated at peak, … GiB of torch reservation growth); 30272 KV cache blocks (59.12 GiB) fit "
        "within the requested 79.1 GiB. Torch may reserve up to … GiB."
    ]
    assert lines.index(warmup[0]) == len(lines) - 2  # just before "GPU KV cache size: 484,352 tokens, …"
    assert lines[-1].startswith("GPU KV cache size: 484,352 tokens")  # 30,272 x 16
    assert not [
        line
        for line in estimate(model=dense(), device=H100, serve=ServeConfig(), vllm_version="0.33.0").log_lines
        if line.startswith("Memory after warmup")
    ]


def _dense32():  # type: ignore[no-untyped-def]
    """Llama-3.1-8B's TP 1 layout: 32 full-attention layers of 65,536 B a block (2,097,152 B)."""
    from app.core.kinds import Group
    from app.core.kv import KVLayout
    from app.core.specs import LayerKind

    return KVLayout(
        block_size=16,
        groups=(Group(kind=LayerKind.FULL, num_layers=32, page_size_bytes=65_536),),
        bytes_per_block=32 * 65_536,
        kv_bytes_per_token=32 * 4_096,
        num_kv_layers=32,
    )


def test_the_extensible_cache_counts_blocks_in_whole_granules() -> None:
    # 0.34.0 v1/worker/extensible_kv_cache.py ExtensibleKVCache.blocks_within: the most blocks n whose footprint,
    # sum over segments of cdiv(n x stride, 2 MiB) x 2 MiB (physical_bytes_for; utils/extensible_tensor.py
    # _MIN_GRANULARITY 2 MiB), fits the pool
    from app.core.extensible_kv import extensible_num_blocks_for
    from app.core.kinds import Group
    from app.core.kv import KVLayout
    from app.core.specs import LayerKind

    mib2 = 2 << 20
    dense32 = _dense32()
    # 32 segments x 10 granules + 31 granules: the floor gives 351 blocks, but 10 whole granules a segment hold
    # 10 x 2 MiB / 65,536 = 320 blocks each
    assert extensible_num_blocks_for(available_bytes=32 * mib2 * 10 + 31 * mib2, layout=dense32) == 320
    # two layers of different pages (65,536 and 131,072 B: 196,608 B a block), 3 granules less one byte: the floor
    # gives 31 blocks, whose segments map cdiv(31 x 65,536, 2 MiB) + cdiv(31 x 131,072, 2 MiB) = 1 + 2 granules,
    # one byte too many; down to 16 blocks (1 + 1 granules = 4 MiB)
    mixed = KVLayout(
        block_size=16,
        groups=(
            Group(
                kind=LayerKind.FULL,
                num_layers=2,
                page_size_bytes=65_536,
                layer_pages=((65_536, 1), (131_072, 1)),
            ),
        ),
        bytes_per_block=196_608,
        kv_bytes_per_token=12_288,
        num_kv_layers=2,
    )
    assert extensible_num_blocks_for(available_bytes=3 * mib2 - 1, layout=mixed) == 16


def _step_down(available_bytes: int, strides: tuple[int, ...], floor_blocks: int) -> int:
    """0.34.0 ExtensibleKVCache.blocks_within as the release runs it: from the floor, one block at a time, down to
    the first count whose segments, each rounded up to whole 2 MiB granules, fit (the reference the closed form
    must equal)."""
    granule = 2 << 20
    blocks = floor_blocks
    while blocks > 0 and sum(-(-blocks * s // granule) * granule for s in strides) > available_bytes:
        blocks -= 1
    return blocks


def test_the_granule_count_at_a_large_pool_is_the_releases_step_down() -> None:
    from app.core.extensible_kv import extensible_num_blocks_for
    from app.core.kinds import Group
    from app.core.kv import KVLayout
    from app.core.specs import LayerKind

    def layout(pages: tuple[tuple[int, int], ...]) -> KVLayout:
        per_block = sum(page * layers for page, layers in pages)
        layers = sum(n for _, n in pages)
        return KVLayout(
            block_size=16,
            groups=(
                Group(kind=LayerKind.FULL, num_layers=layers, page_size_bytes=pages[0][0], layer_pages=pages),
            ),
            bytes_per_block=per_block,
            kv_bytes_per_token=per_block // 16,
            num_kv_layers=layers,
        )

    # one segment of 65,536 B a block and one of 131,072 B in 80,000,000,000 B: 38,146 granules; 32 and 16 blocks
    # a granule, so n = 16k needs ceil(k / 2) + k granules: k = 2 x 12,715 gives 3 x 12,715 = 38,145, and the next
    # 16 blocks 38,147, over: 406,880 blocks, where the floor gives 80,000,000,000 // 196,608 = 406,901
    two = layout(((65_536, 1), (131_072, 1)))
    assert extensible_num_blocks_for(available_bytes=80_000_000_000, layout=two) == 406_880
    # one stride, 2^40 - 1 B over 32 segments of 65,536 B: 16,383 whole granules a segment (16,384 x 32 x 2 MiB is
    # 2^40, one byte too many), 16,383 x 32 = 524,256 blocks, where the floor gives 524,287
    dense32 = _dense32()
    assert extensible_num_blocks_for(available_bytes=(1 << 40) - 1, layout=dense32) == 524_256
    # the release's own loop over pools up to 80 GB and layouts whose strides differ (an indexer's small page
    # beside attention pages, GLM-5.2's shape; 4 KiB pages that take hundreds of steps down): the same counts
    shapes = (
        ((65_536, 1), (131_072, 1)),
        ((4_096, 3), (61_440, 2)),
        ((8_192, 78), (1_152, 78)),
        ((40_960, 7),),
    )
    for pages in shapes:
        shape = layout(pages)
        strides = tuple(page for page, n in pages for _ in range(n))
        for pool in (0, 1, 2 << 20, 3 * (2 << 20) - 1, 10**9 + 7, 63_547_668_726, 80_000_000_000):
            floor = pool // shape.bytes_per_block
            assert extensible_num_blocks_for(available_bytes=pool, layout=shape) == _step_down(
                pool, strides, floor
            )


def test_the_block_equation_shows_the_granule_count() -> None:
    # Llama-3.1-8B on an H100 at 0.34.0 (the warm-up line above): 946 whole granules a segment, 30,272 blocks
    from app.core.equations import block_equations

    est = estimate(model=dense(), device=H100, serve=ServeConfig(), vllm_version="0.34.0")
    num_blocks = next(eq for eq in block_equations(est, rules_for("0.34.0")) if eq.key == "num_blocks")
    assert (num_blocks.expression, num_blocks.value) == (
        "⌊⌊63,547,668,726 ÷ (32 × 2,097,152)⌋ × 2,097,152 ÷ 65,536⌋",
        "30,272",
    )
    at_033 = estimate(model=dense(), device=H100, serve=ServeConfig(), vllm_version="0.33.0")
    floor = next(eq for eq in block_equations(at_033, rules_for("0.33.0")) if eq.key == "num_blocks")
    assert floor.expression == f"⌊{at_033.kv_cache_bytes:,} ÷ 2,097,152⌋"
    assert floor.value == f"{at_033.kv_cache_bytes // 2_097_152:,}"
