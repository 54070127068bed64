"""The `vllm bench serve` simulation, the paste reader, your cluster's factors and PP physics."""

from __future__ import annotations

import math

import pytest

from app.core.catalog import find_device, find_model
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.perf.bench import percentile, simulate_bench
from app.core.perf.bench_args import BenchArgs, request_lengths, send_times, sharegpt_lengths, sharegpt_rows
from app.core.perf.cluster import RunComparison, fit_cluster
from app.core.perf.paste import bench_fields, parse_paste
from app.core.perf.physics import step_physics
from app.core.perf.predict import Performance, fit_for, performance
from app.core.perf.rates import rates_of, stage_seconds
from app.core.perf.schedule import Workload
from app.core.specs import DeviceSpec, ModelSpec, ServeConfig
from tests.perf_steps import llama70_fp8_h100, step_both_ways

# vLLM issue 9722 (https://github.com/vllm-project/vllm/issues/9722), the first block as pasted there
ISSUE_9722 = """Traffic request rate: inf
Maximum request concurrency: 10
============ Serving Benchmark Result ============
Successful requests:                     100
Benchmark duration (s):                  15.90
Total input tokens:                      77700
Total generated tokens:                  746
Request throughput (req/s):              6.29
Output token throughput (tok/s):         46.93
Total Token throughput (tok/s):          4934.95
---------------Time to First Token----------------
Mean TTFT (ms):                          1073.16
Median TTFT (ms):                        1022.13
P99 TTFT (ms):                           1522.29
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          72.74
Median TPOT (ms):                        73.60
P99 TPOT (ms):                           79.29
---------------Inter-token Latency----------------
Mean ITL (ms):                           64.81
Median ITL (ms):                         63.35
P99 ITL (ms):                            87.79
=================================================="""


@pytest.fixture(scope="module")
def llama70() -> tuple:
    return tuple(llama70_fp8_h100())


def test_rates_give_the_step_model_seconds(llama70: tuple) -> None:
    # the simulation's folded rates must be the same physics as step_seconds (perf_steps: a mixed step of 40 decodes and a 2,000-token chunk)
    _, _, _, _, physics, coefficients = llama70
    cost, seconds = step_both_ways(physics=physics, coefficients=coefficients)
    assert seconds == pytest.approx(cost.seconds, rel=1e-12)


def test_one_request_of_two_tokens_is_its_prefill_and_one_decode_step(llama70: tuple) -> None:
    # 1 prompt of 1,000 tokens, 2 output tokens: TTFT = API overhead + one 1,000-token prefill step
    # (context 0..999, mean 500 per token); TPOT = E2EL - TTFT = one decode step at 1,000 tokens of context
    _, _, _, est, physics, coefficients = llama70
    args = BenchArgs(num_prompts=1, random_input_len=1000, random_output_len=2)
    point = simulate_bench(estimate=est, physics=physics, coefficients=coefficients, args=args)
    rates = rates_of(physics=physics, coefficients=coefficients)
    prefill = stage_seconds(
        rates, decode_tokens=0, decode_context_sum=0, prefill_tokens=1000, prefill_context_sum=1000 * 500
    )
    decode = stage_seconds(
        rates, decode_tokens=1, decode_context_sum=1000, prefill_tokens=0, prefill_context_sum=0
    )
    assert point.values["mean_ttft_ms"] == pytest.approx((coefficients.ttft_overhead_s + prefill) * 1000)
    assert point.values["mean_tpot_ms"] == pytest.approx(decode * 1000)
    assert point.values["output_throughput"] == pytest.approx(
        2 / (coefficients.ttft_overhead_s + prefill + decode)
    )
    assert point.preemptions == 0


def test_random_lengths_follow_vllm_bounds() -> None:
    # datasets.py: input uniform on [floor(1000 x (1 - 0.8)), ceil(1000 x 1.8)]; in floating point
    # 1 - 0.8 = 0.19999999999999996, so the floor is 199 (vLLM computes the same), prefix 50 added
    args = BenchArgs(
        num_prompts=2000,
        random_input_len=1000,
        random_output_len=10,
        random_range_ratio=0.8,
        random_prefix_len=50,
    )
    prompts, outputs = request_lengths(args)
    assert min(prompts) >= 249 and max(prompts) <= 1850
    assert (
        min(outputs) >= 1 and max(outputs) <= 18
    )  # floor(10 x 0.19999999999999996) = 1, ceil(10 x 1.8) = 18
    assert abs(sum(prompts) / len(prompts) - 1050) < 25


def test_send_times_rescale_to_n_over_rate() -> None:
    # serve.py: constant gaps when burstiness is inf, then rescaled so the last leaves at N / rate = 0.4 s
    args = BenchArgs(num_prompts=4, request_rate=10.0, burstiness=math.inf)
    assert send_times(args, count=4, rate=10.0) == pytest.approx([0.1, 0.2, 0.3, 0.4])
    assert send_times(BenchArgs(), count=3, rate=math.inf) == [0.0, 0.0, 0.0]


def test_percentile_is_numpys_linear() -> None:
    # numpy.percentile([1, 2, 3, 4], 99) = 3 + 0.97 x 1 = 3.97
    assert percentile([4.0, 1.0, 3.0, 2.0], 99) == pytest.approx(3.97)
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == pytest.approx(2.5)


def test_paste_of_a_real_printed_block() -> None:
    args, measured = bench_fields(parse_paste(ISSUE_9722))
    assert measured["mean_ttft_ms"] == 1073.16 and measured["median_tpot_ms"] == 73.60
    assert measured["output_throughput"] == 46.93 and measured["total_token_throughput"] == 4934.95
    # 77,700 input tokens / 100 requests = 777; 746 generated / 100 = 7.46 -> 7
    assert args == {
        "num_prompts": 100,
        "random_input_len": 777,
        "random_output_len": 7,
        "max_concurrency": 10,
        "request_rate": math.inf,
    }


def test_bad_paste_names_the_line() -> None:
    with pytest.raises(PlannerError) as err:
        parse_paste("============ Serving Benchmark Result ============\nMean TPOT (ms):   twelve\n")
    assert err.value.field == "measured_runs" and "line 2" in err.value.message
    with pytest.raises(PlannerError, match="line 1"):
        parse_paste('{"mean_tpot_ms": 12,,}')


def test_cluster_factor_is_the_median_run_ratio() -> None:
    # two runs measured 11 and 12 ms against 10 ms predicted: log ratios 0.0953 and 0.1823, median of
    # two = their mean 0.1388 -> factor exp(0.1388) = 1.1489; throughput 900 vs 1,000 -> 0.9
    runs = [
        RunComparison(
            predicted={"mean_tpot_ms": 10.0, "output_throughput": 1000.0},
            measured={"mean_tpot_ms": 11.0, "output_throughput": 900.0},
        ),
        RunComparison(
            predicted={"mean_tpot_ms": 10.0, "output_throughput": 1000.0},
            measured={"mean_tpot_ms": 12.0, "output_throughput": 900.0},
        ),
    ]
    fit = fit_cluster(runs)
    assert fit.factor("tpot") == pytest.approx(math.sqrt(1.1 * 1.2))
    assert fit.factor("throughput") == pytest.approx(0.9)
    assert fit.factor("ttft") == 1.0  # nothing measured: no factor


def _steady(model: ModelSpec, device: DeviceSpec, serve: ServeConfig, workload: Workload) -> Performance:
    """The Speed section's steady state for this configuration at vLLM 0.19.0 (no capacity curve)."""
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.19.0")
    return performance(
        estimate=est, model=model, device=device, serve=serve, workload=workload, with_curve=False
    )


def test_pp_does_not_cut_tpot(llama70: tuple) -> None:
    # issue 23: Llama-3.1-70B fp8 TP 8 at 27 clients printed PP 1/2/4/8 TPOT 14.0/7.1/3.7/1.97 ms. A token
    # crosses the stages in turn and V1 does not reschedule a request in flight: PP 2 must not fall below
    # 0.9 x PP 1 (now 11.8 -> 12.0 ms: twice the per-step overhead, the same weights read)
    model, device, _, _, _, _ = llama70
    tpots = []
    for pp in (1, 2, 4):
        serve = ServeConfig(tensor_parallel_size=8, pipeline_parallel_size=pp, max_model_len=4096)
        perf = _steady(model, device, serve, Workload(input_tokens=1024, output_tokens=1024, concurrency=27))
        tpots.append(perf.tpot_ms.expected)
    assert tpots[1] >= 0.9 * tpots[0] and tpots[2] >= 0.9 * tpots[0]
    assert tpots[0] < tpots[1] < tpots[2]


def test_preemption_past_the_cliff(llama70: tuple) -> None:
    # a pool of ~N blocks and 512 clients of 1,800 + 2,000 tokens: more than the pool holds at full
    # length, so the simulated scheduler preempts (and recomputes) and the KV pool binds
    model, device, _, _, _, coefficients = llama70
    serve = ServeConfig(tensor_parallel_size=8, max_model_len=4096, gpu_memory_utilization=0.5)
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.19.0")
    physics = step_physics(estimate=est, model=model, device=device, serve=serve)
    args = BenchArgs(num_prompts=600, max_concurrency=512, random_input_len=1800, random_output_len=2000)
    point = simulate_bench(estimate=est, physics=physics, coefficients=coefficients, args=args)
    assert point.regime == "kv_pool" and point.preemptions > 0 and point.recomputed_tokens > 0


def test_sharegpt_lengths_are_the_requests_vllm_draws() -> None:
    # vLLM's ShareGPT sampler at its default seed 0 (random.seed(0); shuffle; keep prompts of 4..1,024
    # tokens, completions >= 4, prompt + completion <= 2,048) takes the first 1,000 rows of
    # sharegpt_v3_lengths.csv: 215,196 prompt tokens (Llama-3.1 tokenizer), where vllm#23696 printed
    # 215,312 "Total input tokens" (gpt-oss tokenizer) and vllm#7062 213,987 for their 1,000 prompts
    prompts, outputs = request_lengths(BenchArgs(dataset_name="sharegpt", num_prompts=1000))
    assert (sum(prompts), sum(outputs)) == (215_196, 198_343)
    assert abs(sum(prompts) - 215_312) / 215_312 < 0.001
    assert (prompts[:3], outputs[:3]) == ([13, 25, 27], [120, 770, 233])  # the file's first rows
    assert (
        min(prompts) >= 4
        and max(prompts) <= 1024
        and min(outputs) >= 4
        and max(p + o for p, o in zip(prompts, outputs, strict=True)) <= 2048
    )
    # the long tail a burst's duration waits for: the longest of the 1,000 completions, 863 tokens, is
    # 4.35x the mean (198.3); the uniform spread it replaces (range ratio 0.99) stopped at 1.99x
    assert max(outputs) == 863


def test_sharegpt_rescaled_to_a_runs_printed_means_keeps_the_shape() -> None:
    # IOG's phi-4 run printed 203 prompt and 118 generated tokens a request over 200 ShareGPT prompts:
    # the same 200 rows, each scaled (at least one token), so the means are the run's and the spread is
    # ShareGPT's (the longest output stays the same multiple of the mean)
    raw = sharegpt_lengths(200)
    prompts, outputs = sharegpt_lengths(200, means=(203, 118))
    assert abs(sum(prompts) / 200 - 203) < 1 and abs(sum(outputs) / 200 - 118) < 1
    raw_ratio = max(raw[1]) / (sum(raw[1]) / 200)
    assert abs(max(outputs) / (sum(outputs) / 200) - raw_ratio) < 0.05 * raw_ratio


def test_sharegpt_past_the_file_and_at_another_seed() -> None:
    rows = len(sharegpt_rows())
    assert rows == 16_384
    prompts, _ = sharegpt_lengths(rows + 10)  # vLLM oversamples: the file's rows, then drawn from them
    assert len(prompts) == rows + 10 and prompts[:3] == [13, 25, 27]
    other, _ = sharegpt_lengths(1000, seed=7)
    assert len(other) == 1000 and other[:3] != [13, 25, 27]
    assert sharegpt_lengths(1000, seed=7) == sharegpt_lengths(1000, seed=7)  # deterministic


def test_fewer_clients_than_dp_ranks_keep_only_that_many_ranks_busy() -> None:
    # Llama-3.1-8B bf16 (dense: no lockstep) on H100, DP 8 against DP 1. vLLM's DP front end gives each
    # request to the least-loaded engine, so 1 client keeps 1 rank busy: the same run as DP 1 (before the
    # fix every rank got ceil(1/8) = 1 client and throughput x 8, 8.2x the moreh MI355X DP8 run at 1
    # client). 16 clients over 8 ranks: each rank runs 2 prompts of the 16 at 2 clients, so throughput is
    # 8 x DP 1's throughput for 2 prompts at 2 clients.
    model = find_model("meta-llama/Llama-3.1-8B")
    device = find_device("h100")
    coefficients = fit_for(family="hopper", vllm_version="0.19.0")[1].coefficients()

    def point(dp: int, clients: int, prompts: int) -> dict[str, float]:
        serve = ServeConfig(data_parallel_size=dp, max_model_len=4096)
        est = estimate(model=model, device=device, serve=serve, vllm_version="0.19.0")
        physics = step_physics(estimate=est, model=model, device=device, serve=serve)
        args = BenchArgs(
            num_prompts=prompts, max_concurrency=clients, random_input_len=512, random_output_len=64
        )
        return simulate_bench(estimate=est, physics=physics, coefficients=coefficients, args=args).values

    one_client_dp8, one_client_dp1 = point(8, 1, 8), point(1, 1, 8)
    assert one_client_dp8["output_throughput"] == pytest.approx(one_client_dp1["output_throughput"])
    assert one_client_dp8["mean_tpot_ms"] == pytest.approx(one_client_dp1["mean_tpot_ms"])
    busy = point(8, 16, 16)
    assert busy["output_throughput"] == pytest.approx(8 * point(1, 2, 2)["output_throughput"])


def test_steady_state_counts_busy_dp_ranks_only() -> None:
    # the Speed section's closed loop: 1 client over DP 8 serves what 1 client on one rank serves
    model = find_model("meta-llama/Llama-3.1-8B")
    device = find_device("h100")
    rows = {}
    for dp in (1, 8):
        serve = ServeConfig(data_parallel_size=dp, max_model_len=4096)
        perf = _steady(model, device, serve, Workload(input_tokens=512, output_tokens=64, concurrency=1))
        rows[dp] = perf.output_tokens_per_s
    assert rows[8] == pytest.approx(rows[1])
