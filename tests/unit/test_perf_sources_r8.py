"""bench/data/perf/sources-r8/: round 8's held-apart measured runs parse as every source row does, come from none of
the sources kept for evaluation nor from a source any fit reads, and every one plans at its release, so the committed
blind score (README.md there) covers all of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench import perf_sources as P
from tests.unit.test_perf_sources_file import FORBIDDEN, check_row

R8 = Path(__file__).resolve().parents[2] / "bench" / "data" / "perf" / "sources-r8"
R7B = R8.parent / "sources-r7b"
# runs per source, as README.md's table lists them
RUNS_PER_SOURCE = {
    "Scicom-AI-Enterprise-Organization/llm-benchmaxxing": 86,
    "wmx ai-platform L4 baseline (ai.wmx.dev)": 6,
    "vllm-project/vllm#39168 (GLM-5.1-FP8 on MI300X, comment)": 1,
    "djangodevreng/dgx-spark-benchmarks": 100,
}


def _rows(folder: Path) -> list[dict[str, Any]]:
    return P.read_rows(sorted(folder.glob("*.jsonl")))


def _rows_before(folder: Path) -> list[dict[str, Any]]:
    """What the fits read apart from this collection and the later ones (round 10 made them training sources):
    the collection had to be new to everything before it."""
    later = set(P.FIT_DIRS[P.FIT_DIRS.index(folder) :])
    return P.read_rows([path for path in P.fit_files() if path.parent not in later])


def test_every_round_8_row_parses_with_its_provenance() -> None:
    rows = _rows(R8)
    counts: dict[str, int] = {}
    for row in rows:
        check_row(row)
        counts[row["source"]] = counts.get(row["source"], 0) + 1
        assert row["harness"] and row["vllm_version"]  # what was stated, and what was taken, is written down
    assert counts == RUNS_PER_SOURCE
    assert sum(counts.values()) == 193


def test_no_round_8_row_comes_from_a_source_kept_for_evaluation() -> None:
    for row in _rows(R8):
        assert not any(bad in f"{row['url']} {row['source']}".lower() for bad in FORBIDDEN), row["url"]


def test_round_8_sources_are_new_to_every_fit_and_to_round_7b() -> None:
    # a source the fits read (source_rows) or round 7b's blind batch would not be out of sample
    seen = _rows_before(R8) + _rows(R7B)
    old_sources = {row["source"] for row in seen}
    old_urls = {row["url"] for row in seen}
    for row in _rows(R8):
        assert row["source"] not in old_sources, row["source"]
        assert row["url"] not in old_urls, row["url"]


def test_every_round_8_run_plans_at_its_release() -> None:
    # the blind score skips a run the planner refuses ("not scored"); none may be, or the README's counts lie
    for row in _rows(R8):
        run = P.plan_run(row)
        assert not isinstance(run, str), f"{row['run_id']}: {run}"
        assert run.version == P.run_version(row)


def test_a_scicom_run_keeps_the_bench_arguments_its_result_file_printed() -> None:
    # runpod_h100sxm/Qwen3-32B/run_1_TP8_DP1_CTX1024_C100_P100_O128.json (the Namespace in the .txt beside it):
    # 100 prompts at --max-concurrency 100, --request-rate inf, random 1,024 / 128, range ratio 0, --ignore-eos;
    # 102,400 input tokens = 100 x 1,024, mean TPOT 16.54 ms, mean TTFT 1,296.4655 ms in the JSON (printed 1296.47)
    row = next(
        r for r in _rows(R8) if r["run_id"] == "runpod_h100sxm/Qwen3-32B/run_1_TP8_DP1_CTX1024_C100_P100_O128"
    )
    args = P.bench_args(row)
    assert (args.num_prompts, args.max_concurrency, args.request_rate) == (100, 100, float("inf"))
    assert (args.random_input_len, args.random_output_len, args.ignore_eos) == (1024, 128, True)
    assert row["total_input_tokens"] == 100 * 1024
    assert row["measured"]["mean_tpot_ms"] == 16.54 and row["measured"]["mean_ttft_ms"] == 1296.465
    # the tool's launcher default and nothing else (benchmaq/vllm/core/server.py)
    assert json.dumps(row["server"]) == '{"gpu_memory_utilization": 0.9}'
