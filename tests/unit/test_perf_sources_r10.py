"""bench/data/perf/sources-r10/: round 10's held-apart measured runs parse as every source row does, come from none of
the sources kept for evaluation nor from a source any fit reads (nor from the earlier blind batches), and every one
plans at its release, so the committed blind score (README.md there) covers all of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.specs import QuantMethod
from bench import perf_sources as P
from tests.unit.test_perf_sources_file import FORBIDDEN, check_row

R10 = Path(__file__).resolve().parents[2] / "bench" / "data" / "perf" / "sources-r10"
EARLIER_BLIND = tuple(R10.parent / name for name in ("sources-r7b", "sources-r8", "sources-r9"))
# runs per source, as README.md's table lists them
RUNS_PER_SOURCE = {
    "vllm-project/vllm-ascend#13557 (Qwen2.5-0.5B-Instruct on one Ascend NPU, Quenching Action report)": 1,
    "violet-quartz/vllm-serving-experiments": 12,
    "vllm-project/vllm-ascend@db0493cb (PR #3218's merged description: Qwen2.5-7B ShareGPT burst on the Atlas 800I A2)": 1,
}


def _rows(folder: Path) -> list[dict[str, Any]]:
    return P.read_rows(sorted(folder.glob("*.jsonl")))


def test_every_round_10_row_parses_with_its_provenance() -> None:
    counts: dict[str, int] = {}
    for row in _rows(R10):
        check_row(row)
        counts[row["source"]] = counts.get(row["source"], 0) + 1
        assert row["harness"] and row["vllm_version"]  # what was stated, and what was taken, is written down
    assert counts == RUNS_PER_SOURCE


def test_no_round_10_row_comes_from_a_source_kept_for_evaluation() -> None:
    for row in _rows(R10):
        text = f"{row['url']} {row['source']}".lower()
        kept = (*FORBIDDEN, "inferencex", "aiconfigurator", "vllm/pull/43232")
        assert not any(bad in text for bad in kept), row["url"]


def test_round_10_sources_are_new_to_every_fit_and_to_the_earlier_blind_batches() -> None:
    seen = P.source_rows() + [row for folder in EARLIER_BLIND for row in _rows(folder)]
    old_sources = {row["source"] for row in seen}
    old_urls = {row["url"] for row in seen}
    for row in _rows(R10):
        assert row["source"] not in old_sources, row["source"]
        assert row["url"] not in old_urls, row["url"]


def test_every_round_10_run_plans_at_its_release() -> None:
    # the blind score skips a run the planner refuses ("not scored"); none may be, or the README's counts lie
    for row in _rows(R10):
        run = P.plan_run(row)
        assert not isinstance(run, str), f"{row['run_id']}: {run}"
        assert run.version == P.run_version(row)


def test_a_quantization_flag_on_a_bf16_checkpoint_plans_online_fp8() -> None:
    # violet-quartz experiments/exp_quantized_model.md: `vllm serve qwen2_5-7b-instruct --quantization fp8
    # --no-enable-prefix-caching` on one RTX 4090 at 0.25.1 (vLLM's online dynamic FP8). The loader dropped the
    # flag (not in SERVE_FLAGS) and planned bf16 weights: 15,231,233,024 B for both runs. Read as the CLI reads
    # it (app/core/plan.apply_quantization_flag), the FP8 run's linear weights take one byte a parameter, so the
    # weights fall below 0.6 x bf16's (embedding and lm_head stay bf16) and the KV pool grows.
    rows = [r for r in _rows(R10) if r["source"] == "violet-quartz/vllm-serving-experiments"]
    bf16 = next(r for r in rows if "quantization" not in r["server"] and r["max_concurrency"] == 8)
    fp8 = next(r for r in rows if r["server"].get("quantization") == "fp8" and r["max_concurrency"] == 8)
    run_bf16, run_fp8 = P.plan_run(bf16), P.plan_run(fp8)
    assert not isinstance(run_bf16, str) and not isinstance(run_fp8, str)
    assert run_bf16.model.quantization is None and run_bf16.estimate.weights_bytes == 15_231_233_024
    assert run_fp8.serve.quantization == "fp8"
    assert run_fp8.model.quantization is not None and run_fp8.model.quantization.method is QuantMethod.FP8
    assert run_fp8.estimate.weights_bytes < 0.6 * run_bf16.estimate.weights_bytes
    assert run_fp8.estimate.num_gpu_blocks > run_bf16.estimate.num_gpu_blocks


def test_no_fitted_row_states_a_quantization_flag() -> None:
    # reading `server.quantization` moves no fitted run: none of the rows the fits read states one
    assert not [r["source"] for r in P.source_rows() if "quantization" in r.get("server", {})]
