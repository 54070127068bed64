"""bench/data/perf/sources-r9/: round 9's held-apart measured runs parse as every source row does, come from none of
the sources kept for evaluation nor from a source any fit reads (nor from rounds 7b and 8's blind batches), and every
one plans at its release, so the committed blind score (README.md there) covers all of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench import perf_sources as P
from tests.unit.test_perf_sources_file import FORBIDDEN, check_row

R9 = Path(__file__).resolve().parents[2] / "bench" / "data" / "perf" / "sources-r9"
EARLIER_BLIND = (R9.parent / "sources-r7b", R9.parent / "sources-r8")
# runs per source, as README.md's table lists them
RUNS_PER_SOURCE = {
    "AI-Hypercomputer/tpu-recipes (Trillium vLLM Llama 3.x recipe)": 2,
    "vllm-project/vllm#16458 (Llama-3.1-8B on TPU v6e-1, PR description)": 1,
    "vllm-project/vllm#23696 (gpt-oss-120b on 8x B200, PR description)": 1,
}


def _rows(folder: Path) -> list[dict[str, Any]]:
    return P.read_rows(sorted(folder.glob("*.jsonl")))


def _rows_before(folder: Path) -> list[dict[str, Any]]:
    """What the fits read apart from this collection and the later ones (round 10 made them training sources):
    the collection had to be new to everything before it."""
    later = set(P.FIT_DIRS[P.FIT_DIRS.index(folder) :])
    return P.read_rows([path for path in P.fit_files() if path.parent not in later])


def test_every_round_9_row_parses_with_its_provenance() -> None:
    counts: dict[str, int] = {}
    for row in _rows(R9):
        check_row(row)
        counts[row["source"]] = counts.get(row["source"], 0) + 1
        assert row["harness"] and row["vllm_version"]  # what was stated, and what was taken, is written down
    assert counts == RUNS_PER_SOURCE


def test_no_round_9_row_comes_from_a_source_kept_for_evaluation() -> None:
    for row in _rows(R9):
        text = f"{row['url']} {row['source']}".lower()
        assert not any(bad in text for bad in (*FORBIDDEN, "inferencex", "aiconfigurator")), row["url"]


def test_round_9_sources_are_new_to_every_fit_and_to_the_earlier_blind_batches() -> None:
    seen = _rows_before(R9) + [row for folder in EARLIER_BLIND for row in _rows(folder)]
    old_sources = {row["source"] for row in seen}
    old_urls = {row["url"] for row in seen}
    for row in _rows(R9):
        assert row["source"] not in old_sources, row["source"]
        assert row["url"] not in old_urls, row["url"]


def test_every_round_9_run_plans_at_its_release() -> None:
    # the blind score skips a run the planner refuses ("not scored"); none may be, or the README's counts lie
    for row in _rows(R9):
        run = P.plan_run(row)
        assert not isinstance(run, str), f"{row['run_id']}: {run}"
        assert run.version == P.run_version(row)


def test_the_tpu_run_keeps_the_recipe_s_bench_arguments_and_server() -> None:
    # tpu-recipes inference/trillium/vLLM/Llama3.x/README.md, Step 11 at MAX_CONCURRENCY=64: 3,000 prompts, random
    # 1,000 / 1,000, --ignore-eos; 2,997,000 input tokens printed; mean TPOT 25.35 ms, duration 1,202.50 s;
    # served with --max-num-batched-tokens 512 --max-num-seqs 256 --max-model-len 2048 in vllm/vllm-tpu:v0.12.0
    row = next(r for r in _rows(R9) if r["device"] == "google-tpu-v6e" and r["max_concurrency"] == 64)
    args = P.bench_args(row)
    assert (args.num_prompts, args.max_concurrency, args.request_rate) == (3000, 64, float("inf"))
    assert (args.random_input_len, args.random_output_len, args.ignore_eos) == (1000, 1000, True)
    assert row["total_input_tokens"] == 2_997_000 and row["duration_s"] == 1202.50
    assert row["measured"]["mean_tpot_ms"] == 25.35
    serve = P.serve_config(row, args)
    assert (serve.max_num_batched_tokens, serve.max_num_seqs, serve.max_model_len) == (512, 256, 2048)
    assert P.run_version(row) == "0.12.0"


def test_the_b200_sharegpt_burst_runs_at_its_printed_means() -> None:
    # vllm#23696's FlashInfer block: 1,000 ShareGPT prompts, 215,312 in / 197,144 out -> 215 / 197 a request
    row = next(r for r in _rows(R9) if r["device"] == "nvidia-b200")
    args = P.bench_args(row)
    assert args.dataset_name == "sharegpt" and args.num_prompts == 1000
    lengths = P.run_lengths(row, args)
    assert (
        lengths is not None
        and abs(sum(lengths[0]) / 1000 - 215) < 1
        and abs(sum(lengths[1]) / 1000 - 197) < 1
    )
    assert args.max_concurrency is None and args.request_rate == float("inf")
