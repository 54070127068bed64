"""bench/data/perf/sources-r12/: round 12's held-apart measured runs (speeddata12) parse as every source row does,
come from none of the sources kept for evaluation nor from a source any fit reads (nor an earlier blind batch),
plan at their release, and stay out of every fit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench import perf_sources as P
from tests.unit.test_perf_sources_file import FORBIDDEN, check_row

R12 = Path(__file__).resolve().parents[2] / "bench" / "data" / "perf" / "sources-r12"
EARLIER_BLIND = tuple(
    R12.parent / name for name in ("sources-r7b", "sources-r8", "sources-r9", "sources-r10", "sources-r11")
)
# runs per source, as README.md's table lists them
RUNS_PER_SOURCE = {
    "ROCm/vllm#375 (DeepSeek-R1 on 8x MI300X, comment of 2025-01-23)": 1,
    # half B
    "vllm-project/vllm#47276 (AITER MLA fix for DPA + FP8 KV: TP8 perf check on MI300, v0.23.0 image rows)": 3,
}


def _rows(folder: Path) -> list[dict[str, Any]]:
    return P.read_rows(sorted(folder.glob("*.jsonl")))


def test_round_12_is_never_a_fit_directory(monkeypatch: Any) -> None:
    # FIT_DIRS names its folders one by one (never a glob): sources-r12/ is scored blind on the shipped
    # coefficients, so no fit (perf_loso.py, measured_runs_loo.py, perf_misses.py all read source_rows()) may see it
    assert R12.is_dir() and (R12 / "README.md").is_file() and list(R12.glob("*.jsonl"))
    assert all(folder.resolve() != R12 for folder in P.FIT_DIRS)
    read: list[Path] = []
    monkeypatch.setattr(P, "read_rows", lambda files: read.extend(files) or [])
    P.source_rows()
    assert read and not [path for path in read if path.resolve().parent == R12]


def test_every_round_12_row_parses_with_its_provenance() -> None:
    counts: dict[str, int] = {}
    for row in _rows(R12):
        check_row(row)
        counts[row["source"]] = counts.get(row["source"], 0) + 1
        assert row["harness"] and row["vllm_version"]  # what was stated, and what was taken, is written down
    assert counts == RUNS_PER_SOURCE


def test_no_round_12_row_comes_from_a_source_kept_for_evaluation() -> None:
    for row in _rows(R12):
        text = f"{row['url']} {row['source']} {row['harness']}".lower()
        kept = (*FORBIDDEN, "inferencex", "inferencemax", "aiconfigurator", "vllm/pull/43232", "gpustack")
        assert not any(bad in text for bad in kept), row["url"]


def test_round_12_sources_are_new_to_every_fit_and_to_the_earlier_blind_batches() -> None:
    seen = P.source_rows() + [row for folder in EARLIER_BLIND for row in _rows(folder)]
    old_sources = {row["source"] for row in seen}
    old_urls = {row["url"] for row in seen}
    # the same printed block under another name would slip past the URL check: compare the measured keys too
    old_blocks = {tuple(sorted(row["measured"].items())) for row in seen}
    for row in _rows(R12):
        assert row["source"] not in old_sources, row["source"]
        assert row["url"] not in old_urls, row["url"]
        assert tuple(sorted(row["measured"].items())) not in old_blocks, row["run_id"]


def test_every_round_12_run_plans_at_its_release() -> None:
    # the blind score skips a run the planner refuses ("not scored"); none may be, or the README's counts lie
    for row in _rows(R12):
        run = P.plan_run(row)
        assert not isinstance(run, str), f"{row['run_id']}: {run}"
        assert run.version == P.run_version(row)


def test_the_round_12_lengths_are_the_printed_totals() -> None:
    # ROCm/vllm#375's block: 1,022,976 prompt tokens over 999 completed requests = 1,024 each (the default random
    # input length of the 0.6.x benchmark_serving.py); 123,252 generated / 999 = 123.4 -> 123 a request of the
    # 128 asked (no --ignore-eos), which the simulation runs (generated_len reads it from the printed totals)
    row = next(r for r in _rows(R12) if r["source"].startswith("ROCm/vllm#375"))
    assert row["total_input_tokens"] == row["completed"] * row["random_input_len"] == 999 * 1024
    assert P.generated_len(row) == 123
    assert P.bench_args(row).random_output_len == 123


def test_the_vllm_47276_rows_ran_at_full_length() -> None:
    # vllm#47276 prints QPS, median TTFT and median TPOT only; the rows run every request at 1,024 output tokens
    # because the closed loop's time a request, C / QPS, equals TTFT + 1,023 TPOT: at 32 clients 32 / 1.13 = 28.32 s
    # against 0.975 + 1,023 x 0.02675 = 28.34 s (0.1 %); at 64, 37.87 s against 1.167 + 36.62 = 37.79 s; at 128,
    # 47.94 s against 1.321 + 46.57 = 47.89 s. A run that stopped early at EOS would finish sooner than that.
    rows = [r for r in _rows(R12) if r["source"].startswith("vllm-project/vllm#47276")]
    assert sorted(r["max_concurrency"] for r in rows) == [32, 64, 128]
    for row in rows:
        m = row["measured"]
        per_request_s = row["max_concurrency"] / m["request_throughput"]
        full_length_s = (m["median_ttft_ms"] + (row["random_output_len"] - 1) * m["median_tpot_ms"]) / 1000
        assert abs(per_request_s / full_length_s - 1) < 0.01
        assert row["ignore_eos"] and P.generated_len(row) is None
