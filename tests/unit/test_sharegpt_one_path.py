"""A ShareGPT run that printed its totals runs as the same requests in the app and in the scorer: the
rows vLLM draws at its seed rescaled to the printed means (bench_args.printed_lengths). Until round 11
bench/perf_sources.py rescaled them while a pasted run (measured.read_run -> compared) simulated the raw
draw, its printed means read into random_input_len / random_output_len that a ShareGPT run ignores.

Numbers: IOG-Foundation's phi-4 on one H100 PCIe at 1 req/s (bench/data/perf/sources/
iog-foundation-llm-inference-benchmarks.jsonl): 200 requests, 40,572 input and 23,634 generated tokens.
"""

from __future__ import annotations

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.perf.bench_args import BenchArgs, printed_lengths, request_lengths
from app.core.perf.measured import PastedRun, PlannedRun, compared, read_run
from app.core.specs import ServeConfig
from bench import perf_sources as P

IOG_BLOCK = """============ Serving Benchmark Result ============
Successful requests:                     200
Benchmark duration (s):                  210.00
Total input tokens:                      40572
Total generated tokens:                  23634
Request throughput (req/s):              0.95
Output token throughput (tok/s):         112.54
---------------Time to First Token----------------
Mean TTFT (ms):                          60.00
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          20.00
=================================================="""
ROW = {
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


def test_the_scorer_and_a_pasted_run_draw_the_same_requests() -> None:
    bench = BenchArgs(dataset_name="sharegpt", num_prompts=200, request_rate=1.0)
    read = read_run(PastedRun(None, 1, tuple(IOG_BLOCK.splitlines())), bench=bench, field="my_runs")
    # 40,572 / 200 = 202.86 -> 203 and 23,634 / 200 = 118.17 -> 118 tokens a request
    assert read.means == (203, 118)
    pasted = printed_lengths(read.bench, means=read.means)
    scorer = P.run_lengths(ROW, P.bench_args(ROW))
    assert pasted is not None and pasted == scorer
    # a random run's lengths are its arguments (no rescale); a ShareGPT run without totals, the raw draw
    assert printed_lengths(BenchArgs(), means=(203, 118)) is None
    assert printed_lengths(bench, means=None) is None


def test_a_pasted_sharegpt_run_is_simulated_at_its_printed_means() -> None:
    bench = BenchArgs(dataset_name="sharegpt", num_prompts=200, request_rate=1.0)
    read = read_run(PastedRun(None, 1, tuple(IOG_BLOCK.splitlines())), bench=bench, field="my_runs")
    model, device = find_model("microsoft/phi-4"), find_device("nvidia-h100-pcie-80gb")
    serve = ServeConfig(max_model_len=2112)
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.19.0")
    run = PlannedRun(est, model, device, serve, read, "my_runs")
    predicted = compared(run).predicted
    # output tokens per completed request = the simulated requests' mean output: the printed 118.17,
    # not the raw draw's mean (the ShareGPT rows ask for ~198 a request)
    per_request = predicted["output_throughput"] / predicted["request_throughput"]
    raw = sum(request_lengths(bench)[1]) / 200
    assert abs(per_request - 23_634 / 200) < 1.0 and raw > 150
