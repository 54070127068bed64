"""bench/perf_sources.py's reading of a source row: the lengths a run actually ran at."""

from __future__ import annotations

from typing import Any

from app.core.perf.bench_args import SHAREGPT_MAX_TOTAL, request_lengths
from bench import perf_sources as P

# IOG-Foundation's phi-4 on one H100 PCIe at 1 req/s (bench/data/perf/sources/
# iog-foundation-llm-inference-benchmarks.jsonl): ShareGPT, no --ignore-eos, printed totals
IOG_PHI4: dict[str, Any] = {
    "model": "microsoft/phi-4",
    "device": "nvidia-h100-pcie-80gb",
    "tp": 1,
    "dataset_name": "sharegpt",
    "num_prompts": 200,
    "request_rate": 1.0,
    "completed": 200,
    "total_input_tokens": 40_572,
    "total_output_tokens": 23_634,
}


def test_a_sharegpt_run_with_printed_totals_runs_at_its_own_means() -> None:
    # 40,572 / 200 = 202.86 -> 203 prompt tokens; 23,634 / 200 = 118.17 -> 118 generated (the model
    # stopped at its EOS well before the 198-token mean of the completions ShareGPT's rows ask for)
    assert P.sharegpt_means(IOG_PHI4) == (203, 118)
    args = P.bench_args(IOG_PHI4)
    assert args.dataset_name == "sharegpt"
    assert args.request_rate == 1.0 and args.num_prompts == 200 and not args.ignore_eos
    lengths = P.run_lengths(IOG_PHI4, args)
    assert lengths is not None
    prompts, outputs = lengths
    # the 200 requests vLLM draws at seed 0, each rescaled: means 203 / 118, ShareGPT's own spread
    assert len(prompts) == len(outputs) == 200
    assert abs(sum(prompts) / 200 - 203) < 1 and abs(sum(outputs) / 200 - 118) < 1
    raw_outputs = request_lengths(args)[1]
    assert raw_outputs.index(max(raw_outputs)) == outputs.index(max(outputs))  # the same request is longest
    # wider than the uniform range ratio 0.99 the loader used until round 10 (at most 1.99 x the mean)
    assert max(outputs) > 2.5 * 118 and max(prompts) > 2.5 * 203


def test_the_served_context_stays_what_a_sharegpt_run_needs() -> None:
    args = P.bench_args(IOG_PHI4)
    serve = P.serve_config(IOG_PHI4, args)
    assert serve.max_model_len == SHAREGPT_MAX_TOTAL + 64  # 2,048 + 64, as before the length fix


def test_a_sharegpt_run_without_totals_keeps_the_sharegpt_model() -> None:
    row = {k: v for k, v in IOG_PHI4.items() if not k.startswith("total_")}
    assert P.sharegpt_means(row) is None
    args = P.bench_args(row)
    assert args.dataset_name == "sharegpt" and args.random_range_ratio == 0.0
    assert P.run_lengths(row, args) is None  # the rows vLLM draws, as they are


def test_a_random_run_that_stopped_at_eos_runs_at_what_it_generated() -> None:
    # nerdalert's 80,945 generated tokens over 300 requests: 270 a request against the 500 asked for
    row = {
        "dataset_name": "random",
        "num_prompts": 300,
        "random_input_len": 1000,
        "random_output_len": 500,
        "completed": 300,
        "total_output_tokens": 80_945,
    }
    assert P.sharegpt_means(row) is None
    args = P.bench_args(row)
    assert (args.random_input_len, args.random_output_len) == (1000, 270)
    assert P.bench_args({**row, "ignore_eos": True}).random_output_len == 500


def test_a_random_run_without_totals_runs_at_its_throughputs_ratio() -> None:
    # mushfiqrahman.dev's RTX 4090 post, 4 clients (bench/data/perf/sources-r7/): 256 / 128 asked, no
    # totals printed, but 210 output tok/s over 2.09 req/s: both are divided by the same benchmark
    # duration in vLLM's serve.py, so the mean output is 210 / 2.09 = 100.48 -> 100 tokens a request
    row = P.read_rows([P.SOURCES_R7_DIR / "mushfiqrahman-mistral7b-rtx4090.jsonl"])[0]
    assert (row["max_concurrency"], row["random_output_len"], "total_output_tokens" in row) == (4, 128, False)
    assert P.generated_len(row) == 100
    assert P.bench_args(row).random_output_len == 100
    # the printed totals, where there are any, win: 300 requests and 30,600 tokens -> 102
    assert P.generated_len({**row, "completed": 300, "total_output_tokens": 30_600}) == 102
    # --ignore-eos runs the asked length, and one throughput alone says nothing
    assert P.bench_args({**row, "ignore_eos": True}).random_output_len == 128
    assert P.generated_len({**row, "measured": {"output_throughput": 210}}) is None
    # a ratio above the length asked is the printed figures' rounding (2 decimals of req/s): capped.
    # The Kimi-K2-Thinking tutorial's 2,048 / 2,048 run (bench/data/perf/sources/): 42.69 tok/s over 0.02 req/s
    # -> 2,134 > 2,048
    kimi = {
        **row,
        "random_output_len": 2048,
        "measured": {"request_throughput": 0.02, "output_throughput": 42.69},
    }
    assert P.generated_len(kimi) == 2048


def test_blind_dir_scores_every_file_of_a_held_apart_directory(tmp_path: Any) -> None:
    # --blind --dir DIR takes each *.jsonl of DIR (sorted) beside the files named; flags are skipped
    for name in ("b.jsonl", "a.jsonl", "notes.md"):
        (tmp_path / name).write_text("")
    argv = ["perf_sources.py", "--blind", "x.jsonl", "--dir", str(tmp_path), "--rows"]
    assert [p.name for p in P.blind_files(argv)] == ["x.jsonl", "a.jsonl", "b.jsonl"]


def test_source_medians_give_each_source_one_vote() -> None:
    # source A: ratios 1.2, 1.2, 1.2 (median |error| 20 %, all inside); source B: one run at 0.9 (10 %, outside).
    # Pooled the median error would be 20 % (3 of 4 runs); per source it is median(20 %, 10 %) = 15 %,
    # ratio median(1.2, 0.9) = 1.05, coverage median(100 %, 0 %) = 50 %.
    a = [{"mean_tpot_ms": P.BlindCell(1.2, True)} for _ in range(3)]
    b = [{"mean_tpot_ms": P.BlindCell(0.9, False)}]
    assert "mean_tpot_ms: 15% (1.05x, 50%; 2 sources)" in P.source_medians({"A": a, "B": b})


def test_source_rows_reads_every_scored_collection_and_never_round_10(monkeypatch: Any) -> None:
    # round 10 (speedfit10): sources-r7b/, sources-r8/ and sources-r9/, each scored blind in its README before,
    # are training sources now; sources-r10/ (speeddata10's never-fit batch, scored after the merge) must stay
    # out of every fit: source_rows() is what perf_loso.py, measured_runs_loo.py and perf_misses.py read, so no
    # file of a folder outside FIT_DIRS may reach it, and a new folder is never picked up by a glob
    read: list[Any] = []
    monkeypatch.setattr(P, "read_rows", lambda files: read.extend(files) or [])
    P.source_rows()
    folders = {path.parent.name for path in read}
    assert folders == {
        "perf",
        "sources",
        "sources-r6",
        "sources-r7",
        "sources-r7b",
        "sources-r8",
        "sources-r9",
    }
    for name in ("sources-r7b", "sources-r8", "sources-r9"):
        assert set((P.SOURCES_DIR.parent / name).glob("*.jsonl")) <= set(read)
    never_fit = P.SOURCES_DIR.parent / "sources-r10"
    assert never_fit.is_dir() and (never_fit / "README.md").is_file() and list(never_fit.glob("*.jsonl"))
    assert not {path for path in read if path.parent == never_fit}
    assert all(folder.name != "sources-r10" for folder in P.FIT_DIRS)


def test_a_server_the_planner_refuses_is_skipped_with_the_reason_not_raised() -> None:
    # moreh-dev/mi355_benchmark's DeepSeek-R1 rows (bench/data/perf/sources/): --block-size 1 on an MI355X
    # at 0.10.1 / 0.11.1. Those releases serve it with ROCM_AITER_MLA (platforms/rocm.py get_attn_backend_cls:
    # "is_aiter_mla_enabled() or block_size == 1"; test_rocm_block1_aiter_mla.py), so the rows now plan. The same
    # row at 0.18.0, where only TRITON_MLA (a multiple of 16) is walked with AITER off, is refused with an
    # InvalidServeConfigError; the loader reported a PlannerError that is not a ConfigError by crashing
    # bench/perf_loso.py's whole load, and must report it as a reason
    row = next(
        r
        for r in P.source_rows()
        if r["source"] == "moreh-dev/mi355_benchmark" and r["model"] == "deepseek-ai/DeepSeek-R1"
    )
    assert row["server"]["block_size"] == 1
    planned = P.plan_run(row)
    assert not isinstance(planned, str) and planned.estimate.attention_backend == "ROCM_AITER_MLA"
    outcome = P.plan_run({**row, "vllm_version": "0.18.0"})
    assert isinstance(outcome, str)
    assert outcome.startswith("refused at 0.18.0") and ": block_size: no attention backend on ROCm" in outcome
