"""bench/data/perf/sources-r11/: round 11's held-apart measured runs (speeddata11) parse as every source row does,
come from none of the sources kept for evaluation nor from a source any fit reads (nor an earlier blind batch),
plan at their release, and stay out of every fit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench import perf_sources as P
from tests.unit.test_perf_sources_file import FORBIDDEN, check_row

R11 = Path(__file__).resolve().parents[2] / "bench" / "data" / "perf" / "sources-r11"
EARLIER_BLIND = tuple(
    R11.parent / name for name in ("sources-r7b", "sources-r8", "sources-r9", "sources-r10")
)
# runs per source, as README.md's table lists them
RUNS_PER_SOURCE = {
    "vllm-project/recipes#58 (Qwen3-Next B200 outputs, PR head 1bc2b47)": 1,
    "llm-d/llm-d docs/accelerators/amd-mi355x-perf.md (PR #1233: Llama-3.3-70B FP8 on 8x MI355X)": 12,
    "vllm-project/recipes#431 (MI300X verified tag for Qwen3Guard: Qwen3Guard-Gen-8B on one MI300X)": 1,
    "llm-d/llm-d-benchmark collected/data/openshift/exp-7 (standalone vLLM replicas, Llama-3.1-8B)": 9,
    # half D (round 11b, speeddata11b)
    "vllm-project/recipes#127 (Llama 3.1-405B / 3.3-70B ROCm recipes on one MI355X, PR head be7e1c5)": 1,
    "kvcache-ai/Mooncake doc/en/vllm-benchmark-results (v0.1, Nov 2024): non-disaggregated vLLM baselines on one A10": 10,
}


def _rows(folder: Path) -> list[dict[str, Any]]:
    return P.read_rows(sorted(folder.glob("*.jsonl")))


def test_round_11_is_never_a_fit_directory(monkeypatch: Any) -> None:
    # FIT_DIRS names its folders one by one (never a glob): sources-r11/ is scored blind on the shipped
    # coefficients, so no fit (perf_loso.py, measured_runs_loo.py, perf_misses.py all read source_rows()) may see it
    assert R11.is_dir() and (R11 / "README.md").is_file() and list(R11.glob("*.jsonl"))
    assert all(folder.resolve() != R11 for folder in P.FIT_DIRS)
    read: list[Path] = []
    monkeypatch.setattr(P, "read_rows", lambda files: read.extend(files) or [])
    P.source_rows()
    assert read and not [path for path in read if path.resolve().parent == R11]


def test_every_round_11_row_parses_with_its_provenance() -> None:
    counts: dict[str, int] = {}
    for row in _rows(R11):
        check_row(row)
        counts[row["source"]] = counts.get(row["source"], 0) + 1
        assert row["harness"] and row["vllm_version"]  # what was stated, and what was taken, is written down
    assert counts == RUNS_PER_SOURCE


def test_no_round_11_row_comes_from_a_source_kept_for_evaluation() -> None:
    for row in _rows(R11):
        text = f"{row['url']} {row['source']} {row['harness']}".lower()
        kept = (*FORBIDDEN, "inferencex", "inferencemax", "aiconfigurator", "vllm/pull/43232")
        assert not any(bad in text for bad in kept), row["url"]


def test_round_11_sources_are_new_to_every_fit_and_to_the_earlier_blind_batches() -> None:
    seen = P.source_rows() + [row for folder in EARLIER_BLIND for row in _rows(folder)]
    old_sources = {row["source"] for row in seen}
    old_urls = {row["url"] for row in seen}
    for row in _rows(R11):
        assert row["source"] not in old_sources, row["source"]
        assert row["url"] not in old_urls, row["url"]


def test_every_round_11_run_plans_at_its_release() -> None:
    # the blind score skips a run the planner refuses ("not scored"); none may be, or the README's counts lie
    for row in _rows(R11):
        run = P.plan_run(row)
        assert not isinstance(run, str), f"{row['run_id']}: {run}"
        assert run.version == P.run_version(row)


def test_a_random_run_with_only_output_and_total_throughput_runs_at_what_it_generated() -> None:
    # llm-d's docs/accelerators/amd-mi355x-perf.md prints output and total tok/s but neither totals nor req/s.
    # At a fixed prompt length the input tok/s (total - output) over the prompt length is the request rate, so
    # the mean output is 1,024 x 1,519.2 / (25,820.6 - 1,519.2) = 1,555,660.8 / 24,301.4 = 64.02 -> 64 tokens at
    # 64 clients, not the 256 asked (no --ignore-eos); 1,024 x 2,985.0 / 23,868.0 = 128.06 -> 128 at 128 clients;
    # 1,024 x 1,320.8 / 5,278.0 = 256.25 -> 256 (capped at the 256 asked) at 16 clients. Before this rule all
    # three ran at 256.
    rows = {r["max_concurrency"]: r for r in _rows(R11) if r["run_id"].startswith("short context")}
    assert {c: P.generated_len(rows[c]) for c in (16, 64, 128, 256)} == {16: 256, 64: 64, 128: 128, 256: 128}
    assert P.bench_args(rows[64]).random_output_len == 64
    # a long row is full length: 4,096 x 2,230.0 / (4,459 - 2,230.0) = 4,097.8 -> capped at the 4,096 asked
    decode = next(
        r for r in _rows(R11) if r["run_id"].startswith("decode-heavy") and r["max_concurrency"] == 32
    )
    assert P.generated_len(decode) == 4096
    # a prefix counts in the prompt: 512 + 512 prompt tokens give the 64 of the 1,024-token prompt above
    prefixed = {**rows[64], "random_input_len": 512, "random_prefix_len": 512}
    assert P.generated_len(prefixed) == 64
    # --ignore-eos runs what was asked, and a total below the output throughput says nothing
    assert P.generated_len({**rows[64], "ignore_eos": True}) is None
    broken = {**rows[64], "measured": {"output_throughput": 100.0, "total_token_throughput": 90.0}}
    assert P.generated_len(broken) is None
