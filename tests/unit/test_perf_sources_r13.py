"""bench/data/perf/sources-r13/: round 13's held-apart measured runs (speed13) parse as every source row does,
come from none of the sources kept for evaluation nor from a source any fit reads (nor an earlier blind batch),
plan at their release, and stay out of every fit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench import perf_sources as P
from tests.unit.test_perf_sources_file import FORBIDDEN, check_row

R13 = Path(__file__).resolve().parents[2] / "bench" / "data" / "perf" / "sources-r13"
EARLIER_BLIND = tuple(
    R13.parent / name
    for name in ("sources-r7b", "sources-r8", "sources-r9", "sources-r10", "sources-r11", "sources-r12")
)
ADITHYA = "adithyaJRunpod/vllm_bench (Qwen3-8B on one H100 SXM, vLLM 0.18.0, RunPod)"
PR_34924 = "vllm-project/vllm#34924 (FlashInfer DeepGEMM swapAB default: MiniMax-M2.5 on 4x H100, the 'Before' block)"
# runs per source, as README.md's table lists them
RUNS_PER_SOURCE = {ADITHYA: 167, PR_34924: 1}


def _rows(folder: Path) -> list[dict[str, Any]]:
    return P.read_rows(sorted(folder.glob("*.jsonl")))


def test_round_13_is_never_a_fit_directory(monkeypatch: Any) -> None:
    # FIT_DIRS names its folders one by one: sources-r13/ is scored blind on the shipped coefficients
    assert R13.is_dir() and (R13 / "README.md").is_file() and list(R13.glob("*.jsonl"))
    assert all(folder.resolve() != R13 for folder in P.FIT_DIRS)
    read: list[Path] = []
    monkeypatch.setattr(P, "read_rows", lambda files: read.extend(files) or [])
    P.source_rows()
    assert read and not [path for path in read if path.resolve().parent == R13]


def test_every_round_13_row_parses_with_its_provenance() -> None:
    counts: dict[str, int] = {}
    for row in _rows(R13):
        check_row(row)
        counts[row["source"]] = counts.get(row["source"], 0) + 1
        assert row["harness"] and row["vllm_version"]
    assert counts == RUNS_PER_SOURCE


def test_no_round_13_row_comes_from_a_source_kept_for_evaluation() -> None:
    for row in _rows(R13):
        text = f"{row['url']} {row['source']} {row['harness']}".lower()
        kept = (*FORBIDDEN, "inferencex", "inferencemax", "aiconfigurator", "vllm/pull/43232", "gpustack")
        assert not any(bad in text for bad in kept), row["url"]


def test_round_13_sources_are_new_to_every_fit_and_to_the_earlier_blind_batches() -> None:
    seen = P.source_rows() + [row for folder in EARLIER_BLIND for row in _rows(folder)]
    old_sources = {row["source"] for row in seen}
    old_urls = {row["url"] for row in seen}
    old_blocks = {tuple(sorted(row["measured"].items())) for row in seen}
    for row in _rows(R13):
        assert row["source"] not in old_sources, row["source"]
        assert row["url"] not in old_urls, row["url"]
        assert tuple(sorted(row["measured"].items())) not in old_blocks, row["run_id"]


def test_every_round_13_run_plans_at_its_release() -> None:
    for row in _rows(R13):
        run = P.plan_run(row)
        assert not isinstance(run, str), f"{row['run_id']}: {run}"
        assert run.version == P.run_version(row)


def test_the_adithya_runs_generated_every_token_asked() -> None:
    # no --ignore-eos, yet every log prints num_prompts x random_output_len generated tokens (e.g. the
    # 2026-04-02 c32 concurrency run: 1,024 x 256 = 262,144), so generated_len runs them at the length asked;
    # and the prompt totals are 1,024 x 512 = 524,288 there (random prompts of exactly the length asked)
    rows = [r for r in _rows(R13) if r["source"] == ADITHYA]
    for row in rows:
        assert row["total_output_tokens"] == row["num_prompts"] * row["random_output_len"], row["run_id"]
        assert P.bench_args(row).random_output_len == row["random_output_len"]
    c32 = next(r for r in rows if r["run_id"] == "concurrency_sweep/2026-04-02_045032/c32")
    assert (c32["total_input_tokens"], c32["measured"]["mean_ttft_ms"], c32["measured"]["mean_itl_ms"]) == (
        524288,
        41.36,
        9.08,
    )
