"""bench/data/perf/sources-r13/: what is particular to round 13's held-apart measured runs (the checks every
blind batch passes are tests/unit/test_perf_sources_blind.py's)."""

from __future__ import annotations

from bench import perf_sources as P
from tests.perf_blind import batch_rows

ADITHYA = "adithyaJRunpod/vllm_bench (Qwen3-8B on one H100 SXM, vLLM 0.18.0, RunPod)"


def test_the_adithya_runs_generated_every_token_asked() -> None:
    # no --ignore-eos, yet every log prints num_prompts x random_output_len generated tokens (e.g. the
    # 2026-04-02 c32 concurrency run: 1,024 x 256 = 262,144), so generated_len runs them at the length asked;
    # and the prompt totals are 1,024 x 512 = 524,288 there (random prompts of exactly the length asked)
    rows = [r for r in batch_rows("sources-r13") if r["source"] == ADITHYA]
    for row in rows:
        assert row["total_output_tokens"] == row["num_prompts"] * row["random_output_len"], row["run_id"]
        assert P.bench_args(row).random_output_len == row["random_output_len"]
    c32 = next(r for r in rows if r["run_id"] == "concurrency_sweep/2026-04-02_045032/c32")
    assert (c32["total_input_tokens"], c32["measured"]["mean_ttft_ms"], c32["measured"]["mean_itl_ms"]) == (
        524288,
        41.36,
        9.08,
    )
