"""bench/data/perf/sources-r8/: what is particular to round 8's held-apart measured runs (the checks every
blind batch passes are tests/unit/test_perf_sources_blind.py's)."""

from __future__ import annotations

import json

from bench import perf_sources as P
from tests.perf_blind import batch_rows


def test_a_scicom_run_keeps_the_bench_arguments_its_result_file_printed() -> None:
    # runpod_h100sxm/Qwen3-32B/run_1_TP8_DP1_CTX1024_C100_P100_O128.json (the Namespace in the .txt beside it):
    # 100 prompts at --max-concurrency 100, --request-rate inf, random 1,024 / 128, range ratio 0, --ignore-eos;
    # 102,400 input tokens = 100 x 1,024, mean TPOT 16.54 ms, mean TTFT 1,296.4655 ms in the JSON (printed 1296.47)
    row = next(
        r
        for r in batch_rows("sources-r8")
        if r["run_id"] == "runpod_h100sxm/Qwen3-32B/run_1_TP8_DP1_CTX1024_C100_P100_O128"
    )
    args = P.bench_args(row)
    assert (args.num_prompts, args.max_concurrency, args.request_rate) == (100, 100, float("inf"))
    assert (args.random_input_len, args.random_output_len, args.ignore_eos) == (1024, 128, True)
    assert row["total_input_tokens"] == 100 * 1024
    assert row["measured"]["mean_tpot_ms"] == 16.54 and row["measured"]["mean_ttft_ms"] == 1296.465
    # the tool's launcher default and nothing else (benchmaq/vllm/core/server.py)
    assert json.dumps(row["server"]) == '{"gpu_memory_utilization": 0.9}'
