"""bench/data/perf/sources-r12/: what is particular to round 12's held-apart measured runs (the checks every
blind batch passes are tests/unit/test_perf_sources_blind.py's)."""

from __future__ import annotations

from bench import perf_sources as P
from tests.perf_blind import batch_rows


def test_the_round_12_lengths_are_the_printed_totals() -> None:
    # ROCm/vllm#375's block: 1,022,976 prompt tokens over 999 completed requests = 1,024 each (the default random
    # input length of the 0.6.x benchmark_serving.py); 123,252 generated / 999 = 123.4 -> 123 a request of the
    # 128 asked (no --ignore-eos), which the simulation runs (generated_len reads it from the printed totals)
    row = next(r for r in batch_rows("sources-r12") if r["source"].startswith("ROCm/vllm#375"))
    assert row["total_input_tokens"] == row["completed"] * row["random_input_len"] == 999 * 1024
    assert P.generated_len(row) == 123
    assert P.bench_args(row).random_output_len == 123


def test_the_vllm_47276_rows_ran_at_full_length() -> None:
    # vllm#47276 prints QPS, median TTFT and median TPOT only; the rows run every request at 1,024 output tokens
    # because the closed loop's time a request, C / QPS, equals TTFT + 1,023 TPOT: at 32 clients 32 / 1.13 = 28.32 s
    # against 0.975 + 1,023 x 0.02675 = 28.34 s (0.1 %); at 64, 37.87 s against 1.167 + 36.62 = 37.79 s; at 128,
    # 47.94 s against 1.321 + 46.57 = 47.89 s. A run that stopped early at EOS would finish sooner than that.
    rows = [r for r in batch_rows("sources-r12") if r["source"].startswith("vllm-project/vllm#47276")]
    assert sorted(r["max_concurrency"] for r in rows) == [32, 64, 128]
    for row in rows:
        m = row["measured"]
        per_request_s = row["max_concurrency"] / m["request_throughput"]
        full_length_s = (m["median_ttft_ms"] + (row["random_output_len"] - 1) * m["median_tpot_ms"]) / 1000
        assert abs(per_request_s / full_length_s - 1) < 0.01
        assert row["ignore_eos"] and P.generated_len(row) is None
