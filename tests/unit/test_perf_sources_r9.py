"""bench/data/perf/sources-r9/: what is particular to round 9's held-apart measured runs (the checks every
blind batch passes are tests/unit/test_perf_sources_blind.py's)."""

from __future__ import annotations

from bench import perf_sources as P
from tests.perf_blind import batch_rows


def test_the_tpu_run_keeps_the_recipe_s_bench_arguments_and_server() -> None:
    # tpu-recipes inference/trillium/vLLM/Llama3.x/README.md, Step 11 at MAX_CONCURRENCY=64: 3,000 prompts, random
    # 1,000 / 1,000, --ignore-eos; 2,997,000 input tokens printed; mean TPOT 25.35 ms, duration 1,202.50 s;
    # served with --max-num-batched-tokens 512 --max-num-seqs 256 --max-model-len 2048 in vllm/vllm-tpu:v0.12.0
    row = next(
        r for r in batch_rows("sources-r9") if r["device"] == "google-tpu-v6e" and r["max_concurrency"] == 64
    )
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
    row = next(r for r in batch_rows("sources-r9") if r["device"] == "nvidia-b200")
    args = P.bench_args(row)
    assert args.dataset_name == "sharegpt" and args.num_prompts == 1000
    lengths = P.run_lengths(row, args)
    assert (
        lengths is not None
        and abs(sum(lengths[0]) / 1000 - 215) < 1
        and abs(sum(lengths[1]) / 1000 - 197) < 1
    )
    assert args.max_concurrency is None and args.request_rate == float("inf")
