"""bench/data/perf/sources-r14/: round 14's held-apart measured runs (speed14) parse as every source row does,
come from none of the sources kept for evaluation nor from a source any fit reads (nor an earlier blind batch),
plan at their release, and stay out of every fit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench import perf_sources as P
from tests.perf_blind import BLIND_ORDER
from tests.unit.test_perf_sources_file import FORBIDDEN, check_row

R14 = Path(__file__).resolve().parents[2] / "bench" / "data" / "perf" / "sources-r14"
EARLIER_BLIND = tuple(R14.parent / name for name in BLIND_ORDER)  # every blind batch before this one
PEGAINFER = "pegainfer-project/pegainfer (vLLM reference runs on one RTX 5090: Qwen3-4B bf16 TP1)"
RUNS_PER_SOURCE = {PEGAINFER: 8}  # SOURCES.md's table


def _rows(folder: Path) -> list[dict[str, Any]]:
    return P.read_rows(sorted(folder.glob("*.jsonl")))


def test_round_14_is_never_a_fit_directory(monkeypatch: Any) -> None:
    assert R14.is_dir() and (R14 / "SOURCES.md").is_file() and list(R14.glob("*.jsonl"))
    assert all(folder.resolve() != R14 for folder in P.FIT_DIRS)
    read: list[Path] = []
    monkeypatch.setattr(P, "read_rows", lambda files: read.extend(files) or [])
    P.source_rows()
    assert read and not [path for path in read if path.resolve().parent == R14]


def test_every_round_14_row_parses_with_its_provenance() -> None:
    counts: dict[str, int] = {}
    for row in _rows(R14):
        check_row(row)
        counts[row["source"]] = counts.get(row["source"], 0) + 1
        assert row["harness"] and row["vllm_version"]
    assert counts == RUNS_PER_SOURCE


def test_no_round_14_row_comes_from_a_source_kept_for_evaluation() -> None:
    for row in _rows(R14):
        text = f"{row['url']} {row['source']} {row['harness']}".lower()
        kept = (*FORBIDDEN, "inferencex", "inferencemax", "aiconfigurator", "vllm/pull/43232", "gpustack")
        assert not any(bad in text for bad in kept), row["url"]


def test_round_14_sources_are_new_to_every_fit_and_to_the_earlier_blind_batches() -> None:
    seen = P.source_rows() + [row for folder in EARLIER_BLIND for row in _rows(folder)]
    old_sources = {row["source"] for row in seen}
    old_urls = {row["url"] for row in seen}
    old_blocks = {tuple(sorted(row["measured"].items())) for row in seen}
    for row in _rows(R14):
        assert row["source"] not in old_sources, row["source"]
        assert row["url"] not in old_urls, row["url"]
        assert tuple(sorted(row["measured"].items())) not in old_blocks, row["run_id"]


def test_every_round_14_run_plans_at_its_release() -> None:
    for row in _rows(R14):
        run = P.plan_run(row)
        assert not isinstance(run, str), f"{row['run_id']}: {run}"
        assert run.version == P.run_version(row)


def test_the_qps_sweep_sends_sixty_seconds_of_arrivals() -> None:
    # qps_sweep.sh at 414b6476: NUM_PROMPTS = int(QPS * SECONDS_PER_RUN), SECONDS_PER_RUN = 60, Poisson (burstiness
    # 1.0), no --max-concurrency; e.g. 16 req/s -> 960 prompts, and the run completed 13.20 req/s (overloaded)
    sweep = [r for r in _rows(R14) if r["run_id"].startswith("qps-sweep")]
    assert [r["num_prompts"] for r in sweep] == [60, 120, 240, 480, 600, 720, 960]
    for row in sweep:
        assert row["max_concurrency"] is None and row["burstiness"] == 1.0
        assert row["num_prompts"] == 60 * row["request_rate"]
    assert next(r for r in sweep if r["request_rate"] == 16.0)["measured"]["request_throughput"] == 13.20
