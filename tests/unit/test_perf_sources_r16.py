"""bench/data/perf/sources-r16/: what is particular to round 16's held-apart runs (speed16); that they parse, are new
to every fit and earlier batch, plan at their release and stay out of every fit is checked with every other blind
batch in tests/unit/test_perf_sources_blind.py (tests/perf_blind.py's BLIND_ORDER)."""

from __future__ import annotations

from bench import perf_sources as P
from tests.perf_blind import batch_rows


def _rows(prefix: str) -> list[dict[str, object]]:
    return [row for row in batch_rows("sources-r16") if str(row["source"]).startswith(prefix)]


def test_the_h20_runs_are_five_lengths_three_times_each() -> None:
    # nv-11/tools/run.sh at 340eae17 with runtime.config's PROMPTS_NUM=20, RANDOM_REPEAT=3, OUTPUT_LEN=10: each of the
    # five default lengths three times, 20 prompts at 16 clients; the printed input totals are 20 x (L - 1) except at
    # 10,000 tokens, where two prompts re-tokenized shorter (9,962 and 9,943: 199,887 in all)
    rows = _rows("muma378/")
    lengths = sorted({int(str(r["random_input_len"])) for r in rows})
    assert lengths == [100, 1000, 10000, 50000, 100000] and len(rows) == 15
    for row in rows:
        length = int(str(row["random_input_len"]))
        expected = 199887 if length == 10000 else 20 * (length - 1)
        assert row["total_input_tokens"] == expected
        assert (row["num_prompts"], row["max_concurrency"], row["random_output_len"]) == (20, 16, 10)


def test_the_h20_device_is_the_141_gb_card_from_its_own_log() -> None:
    # gpu_usage.log: 'NVIDIA H20-3e, ... 143771 MiB'; 143,771 MiB = 150.8 GB, the 141 GB (HBM3e) card, not the 96 GB H20
    assert round(143771 * 2**20 / 1e9, 1) == 150.8
    assert {r["device"] for r in _rows("muma378/")} == {"nvidia-h20-3e-141gb"}


def test_the_100k_prompts_queue_for_the_kv_pool() -> None:
    # SOURCES.md's reading: the planner's pool at 0.11.0 is 7,496 blocks of 64 tokens = 479,744 tokens on every rank
    # (MLA keeps the whole latent KV on each), so at most 4 of the 16 clients' 100,000-token prompts fit at once
    row = next(r for r in _rows("muma378/") if r["run_id"] == "input_len=100000 iteration=1")
    run = P.plan_run(row)
    assert not isinstance(run, str)
    tokens = run.estimate.num_gpu_blocks * 64
    assert tokens == 479744 and tokens // 100000 == 4


def test_the_t4_decode_rate_becomes_a_median_tpot() -> None:
    # vllm-t4-fp16.json, level 1: decode_tps_p50 57.1300 tok/s -> 1000 / 57.13 = 17.504 ms; level 32: 37.638 -> 26.569
    rows = {r["max_concurrency"]: r for r in _rows("HamzahTariq11/")}
    assert sorted(rows) == [1, 2, 4, 8, 16, 32]
    assert rows[1]["measured"]["median_tpot_ms"] == 17.504
    assert rows[32]["measured"]["median_tpot_ms"] == 26.569
    # every level sends the same 40 prompts for 256 tokens each: 10,240 output tokens, and output tok/s = 10,240 / wall (wall rounded to 1 ms)
    for row in rows.values():
        assert row["total_output_tokens"] == 10240 and row["ignore_eos"] is True
        assert abs(10240 / float(str(row["duration_s"])) / row["measured"]["output_throughput"] - 1) < 1e-4


def test_the_rtx3090_block_is_self_consistent() -> None:
    # the printed block: 1,005,075 output tokens / 102.57 s = 9,799 tok/s; 2,000 / 102.57 = 19.50 req/s
    (row,) = _rows("mystous/")
    assert round(1005075 / 102.57) == 9799 and round(2000 / 102.57, 2) == 19.50
    assert row["measured"]["output_throughput"] == 9799.19 and P.run_version(row) == "0.10.1"
