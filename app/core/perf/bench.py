"""What `vllm bench serve` prints, simulated: its result keys with bands, and which regime binds.

:func:`bench_serve` draws the benchmark's requests (bench_args), simulates one data-parallel rank's
share on the exact pool (simulate.run) and turns the per-request times into vLLM's metrics
(serve.py calculate_metrics: numpy means, medians and linear-interpolated percentiles).
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from app.core.perf.bench_args import BenchArgs, request_lengths, send_times
from app.core.perf.physics import (
    Coefficients,
    StepPhysics,
    busy_ranks,
    context_cv,
    lockstep_ranks,
    on_busy_ranks,
)
from app.core.perf.rates import rates_of
from app.core.perf.regime import Regime, binding_regime
from app.core.perf.schedule import KINDS_BOUNDED_BY_WINDOW, KINDS_FIXED_STATE, NULL_BLOCKS
from app.core.perf.simulate import EngineLimits, SimResult, run
from app.core.result import Estimate, Range
from app.core.versions import rules_for

MS_PER_S = 1000.0
P99 = 99.0
# vLLM's result keys this answers, in serve.py's order (bench/ and the API use the same names)
LATENCY_KEYS = (
    "mean_ttft_ms",
    "median_ttft_ms",
    "p99_ttft_ms",
    "mean_tpot_ms",
    "median_tpot_ms",
    "p99_tpot_ms",
    "mean_itl_ms",
    "median_itl_ms",
    "mean_e2el_ms",
)
THROUGHPUT_KEYS = ("output_throughput", "request_throughput", "total_token_throughput")
RESULT_KEYS = LATENCY_KEYS + THROUGHPUT_KEYS
# which fitted residual band each key takes (TTFT-like, TPOT-like, throughput-like)
BAND_OF_KEY = {
    **{k: "ttft" for k in ("mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms")},
    **{k: "tpot" for k in ("mean_tpot_ms", "median_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "median_itl_ms")},
    "mean_e2el_ms": "tpot",
    **{k: "throughput" for k in THROUGHPUT_KEYS},
}


class BenchPoint(BaseModel):
    """The simulated run's expected figures (one number per vLLM result key) and what bound it."""

    model_config = ConfigDict(frozen=True)

    values: dict[str, float]
    regime: Regime
    preemptions: int
    recomputed_tokens: int
    max_running: int  # per rank, the most requests the engine ran at once
    duration_s: float
    clients_in_flight: float  # BenchArgs.clients_in_flight: the cap, every prompt at inf, or Little's law


class BenchResult(BaseModel):
    """`vllm bench serve`'s result keys, each {low, expected, high}."""

    model_config = ConfigDict(frozen=True)

    args: BenchArgs
    mean_ttft_ms: Range
    median_ttft_ms: Range
    p99_ttft_ms: Range
    mean_tpot_ms: Range
    median_tpot_ms: Range
    p99_tpot_ms: Range
    mean_itl_ms: Range
    median_itl_ms: Range
    mean_e2el_ms: Range
    output_throughput: Range
    request_throughput: Range
    total_token_throughput: Range
    regime: Regime
    preemptions: int
    recomputed_tokens: int
    max_running: int
    duration_s: float
    clients_in_flight: float  # BenchArgs.clients_in_flight over the simulated run


def percentile(values: list[float], q: float) -> float:
    """numpy.percentile's default (linear interpolation between the closest ranks)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = q / 100 * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _weighted_mean_median(samples: list[tuple[float, float]]) -> tuple[float, float]:
    total = sum(w for _, w in samples)
    if total <= 0:
        return 0.0, 0.0
    mean = sum(v * w for v, w in samples) / total
    acc = 0.0
    for value, weight in sorted(samples):
        acc += weight
        if acc >= total / 2:
            return mean, value
    return mean, samples[-1][0]


def engine_limits(
    *,
    estimate: Estimate,
    coefficients: Coefficients,
    prefix_cache: bool,
    lockstep_ranks: int = 1,
    context_cv: float = 0.0,
) -> EngineLimits:
    growth = sum(1 for g in estimate.groups if g.kind not in (*KINDS_BOUNDED_BY_WINDOW, *KINDS_FIXED_STATE))
    fixed = sum(
        g.blocks_per_request
        for g in estimate.groups
        if g.kind in (*KINDS_BOUNDED_BY_WINDOW, *KINDS_FIXED_STATE)
    )
    return EngineLimits(
        max_num_seqs=estimate.max_num_seqs,
        max_num_batched_tokens=estimate.max_num_batched_tokens,
        pool_blocks=max(0, estimate.num_gpu_blocks - NULL_BLOCKS),
        block_size=estimate.block_size,
        growth_groups=max(growth, 1 if not estimate.groups else growth),
        fixed_blocks=fixed,
        prefix_cache=prefix_cache,
        pipeline_stages=estimate.pipeline_parallel_size,
        stage_hop_s=coefficients.collective_latency_s,
        lockstep_ranks=lockstep_ranks,
        context_cv=context_cv,
        admit_full_sequence=rules_for(estimate.vllm_version).scheduler_reserve_full_isl,
    )


def _regime(res: SimResult, *, clients_per_rank: float, max_num_seqs: int) -> Regime:
    """The one rule (app.core.perf.regime) on the simulated run's own counts."""
    busy = res.busy_s if res.busy_s > 0 else 1.0
    return binding_regime(
        kv_limited=bool(res.preemptions or res.kv_full_steps),
        clients_per_rank=clients_per_rank,
        max_num_seqs=max_num_seqs,
        host_share=res.host_s / busy,
        memory_share=res.memory_s / busy,
    )


def simulate_bench(
    *,
    estimate: Estimate,
    physics: StepPhysics,
    coefficients: Coefficients,
    args: BenchArgs,
    prefix_cache: bool = True,
    lengths: tuple[list[int], list[int]] | None = None,
    warm_prompts: bool = False,
) -> BenchPoint:
    """The expected figures of one `vllm bench serve` run against this configuration; ``lengths`` (prompt,
    output tokens per request) stand in for the ones ``args`` draws where a run printed its own."""
    prompts, outputs = lengths if lengths is not None else request_lengths(args)
    sends = send_times(args, count=len(prompts), rate=args.request_rate)
    # one busy rank's share: every dp-th request (vLLM's DP front end spreads them evenly); fewer
    # clients than ranks keep only that many ranks busy
    dp = busy_ranks(data_parallel_size=physics.data_parallel_size, clients=args.max_concurrency)
    dp = min(dp, len(prompts))
    physics = on_busy_ranks(physics, busy=dp)
    prompts, outputs, sends = prompts[::dp], outputs[::dp], sends[::dp]
    concurrency = math.ceil(args.max_concurrency / dp) if args.max_concurrency else None
    limits = engine_limits(
        estimate=estimate,
        coefficients=coefficients,
        prefix_cache=prefix_cache,
        lockstep_ranks=lockstep_ranks(physics),
        context_cv=context_cv(
            input_tokens=sum(prompts) / max(1, len(prompts)),
            output_tokens=sum(outputs) / max(1, len(outputs)),
        ),
    )
    rates = rates_of(physics=physics, coefficients=coefficients)
    res = run(
        rates=rates,
        limits=limits,
        prompts=prompts,
        outputs=outputs,
        send_at=sends,
        max_concurrency=concurrency,
        overhead_s=coefficients.ttft_overhead_s,
        overhead_per_prompt_token_s=coefficients.ttft_per_prompt_token_s,
        # one API server for every rank: a rank's requests (every dp-th) leave it dp requests apart
        frontend_request_s=coefficients.frontend_request_s * dp,
        # and streams every rank's running requests: a rank's running set times dp
        frontend_stream_s=coefficients.frontend_stream_s * dp,
        # and tokenizes every rank's prompts: a rank's take turns with the other dp - 1 ranks'
        # (releases that microbatch the tokenizer calls spread a burst's prompts over the host's cores: no queue)
        tokenizer_workers=0
        if rules_for(estimate.vllm_version).tokenizer_microbatch
        else coefficients.tokenizer_workers,
        tokenizer_ranks=dp,
        prefix_tokens=args.random_prefix_len if args.dataset_name == "random" else 0,
        warm_prompts=warm_prompts,
    )
    itl_mean, itl_median = _weighted_mean_median(res.itl_samples)
    done = len(res.e2el_s)
    mean_e2el_s = sum(res.e2el_s) / max(1, done)
    values = {
        "mean_ttft_ms": sum(res.ttft_s) / max(1, len(res.ttft_s)) * MS_PER_S,
        "median_ttft_ms": percentile(res.ttft_s, 50) * MS_PER_S,
        "p99_ttft_ms": percentile(res.ttft_s, P99) * MS_PER_S,
        "mean_tpot_ms": sum(res.tpot_s) / max(1, len(res.tpot_s)) * MS_PER_S,
        "median_tpot_ms": percentile(res.tpot_s, 50) * MS_PER_S,
        "p99_tpot_ms": percentile(res.tpot_s, P99) * MS_PER_S,
        "mean_itl_ms": itl_mean * MS_PER_S,
        "median_itl_ms": itl_median * MS_PER_S,
        "mean_e2el_ms": mean_e2el_s * MS_PER_S,
        "output_throughput": dp * res.output_tokens / res.duration_s,
        "request_throughput": dp * done / res.duration_s,
        "total_token_throughput": dp * (res.input_tokens + res.output_tokens) / res.duration_s,
    }
    in_flight = args.clients_in_flight(
        request_throughput=values["request_throughput"], mean_e2el_s=mean_e2el_s
    )
    return BenchPoint(
        values=values,
        regime=_regime(res, clients_per_rank=in_flight / dp, max_num_seqs=limits.max_num_seqs),
        preemptions=res.preemptions * dp,
        recomputed_tokens=res.recomputed_tokens * dp,
        max_running=res.max_running,
        duration_s=res.duration_s,
        clients_in_flight=in_flight,
    )


def banded(
    point: BenchPoint,
    *,
    args: BenchArgs,
    bands: dict[str, tuple[float, float]],
    widen: dict[str, float],
) -> BenchResult:
    """Each expected figure with its band: exp(p10 x widen) .. exp(p90 x widen) of the log residuals
    (measured / predicted) on runs from sources the fit did not see; ``widen`` by band group."""
    ranges = {}
    for key in RESULT_KEYS:
        low_log, high_log = bands[BAND_OF_KEY[key]]
        v = point.values[key]
        w = widen[BAND_OF_KEY[key]]
        ranges[key] = Range(
            low=v * math.exp(min(0.0, low_log) * w),
            expected=v,
            high=v * math.exp(max(0.0, high_log) * w),
        )
    return BenchResult(
        args=args,
        **ranges,
        regime=point.regime,
        preemptions=point.preemptions,
        recomputed_tokens=point.recomputed_tokens,
        max_running=point.max_running,
        duration_s=point.duration_s,
        clients_in_flight=point.clients_in_flight,
    )
