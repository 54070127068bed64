"""Held-out accuracy of the performance model on the measured runs (bench/data/perf).

    .venv/bin/python bench/perf_accuracy.py          # print the leave-one-out tables
    (bench/accuracy.py --write puts the same section into docs/accuracy.md)

Leave-one-model-out: for each model, refit every device family without that model's runs and predict
them. Leave-one-device-out: the same per GPU. A held-out run whose family has no other runs is answered
with the other family's coefficients (that is what the product does for an unmeasured device).
Errors are |predicted - measured| / measured; throughput is the README's formula on the measured TTFT/TPOT.
"""

from __future__ import annotations

import random
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fit_perf as F

TARGETS = {
    "answered": 0.90,
    "tpot_median": 0.15,
    "tpot_p90": 0.35,
    "ttft_median": 0.35,
    "throughput_median": 0.15,
}
FIT_ITERATIONS = 40  # Nelder-Mead iterations per refit (the shipped fit uses bench/fit_perf.py's default)


def _holdout(
    runs: Sequence[F.Run], key: Callable[[F.Run], str]
) -> tuple[dict[str, dict[str, list[float]]], dict[str, int]]:
    errors: dict[str, dict[str, list[float]]] = {}
    asked: dict[str, int] = {}
    for held in sorted({key(r) for r in runs}):
        train = [r for r in runs if key(r) != held]
        test = [r for r in runs if key(r) == held]
        fits = F.fit_all(train, FIT_ITERATIONS)
        for run in test:
            if run.family not in fits:  # no other runs of this family: borrow the nearest one
                base = run.family.split("@")[0]
                run_fits = {run.family: fits.get(base) or next(iter(fits.values()))}
            else:
                run_fits = fits
            part = F.errors([run], run_fits)
            bucket = errors.setdefault(held, {"tpot": [], "ttft": [], "throughput": []})
            for name, values in part.items():
                bucket[name].extend(values)
        asked[held] = len(test)
    return errors, asked


RANDOM_HOLDOUT_SHARE = 0.2  # closest to how the model is judged: other runs of the same kinds
RANDOM_HOLDOUT_SEEDS = (1, 2, 3)


def _random_holdout(runs: Sequence[F.Run]) -> dict[str, list[float]]:
    """Refit on a random 80 % of the runs and predict the other 20 % (three seeds, pooled)."""
    pooled: dict[str, list[float]] = {"tpot": [], "ttft": [], "throughput": []}
    for seed in RANDOM_HOLDOUT_SEEDS:
        rng = random.Random(seed)
        test_ids = {id(r) for r in rng.sample(list(runs), round(len(runs) * RANDOM_HOLDOUT_SHARE))}
        train = [r for r in runs if id(r) not in test_ids]
        fits = F.fit_all(train, FIT_ITERATIONS)
        for name, values in F.errors([r for r in runs if id(r) in test_ids], fits).items():
            pooled[name].extend(values)
    return pooled


def _stats(values: list[float]) -> tuple[float, float]:
    return (statistics.median(values), F.quantile(values, 0.9)) if values else (float("nan"), float("nan"))


def _table(title: str, errors: dict[str, dict[str, list[float]]], asked: dict[str, int]) -> list[str]:
    lines = [
        f"### {title}",
        "",
        "| held out | runs | answered | TPOT median | TPOT p90 | TTFT median | throughput median |",
        "|---|---|---|---|---|---|---|",
    ]
    pooled: dict[str, list[float]] = {"tpot": [], "ttft": [], "throughput": []}
    for held, bucket in errors.items():
        for name in pooled:
            pooled[name].extend(bucket[name])
        tpot_m, tpot_p90 = _stats(bucket["tpot"])
        lines.append(
            f"| {held} | {asked[held]} | {len(bucket['tpot'])} | {tpot_m:.0%} | {tpot_p90:.0%} | "
            f"{_stats(bucket['ttft'])[0]:.0%} | {_stats(bucket['throughput'])[0]:.0%} |"
        )
    tpot_m, tpot_p90 = _stats(pooled["tpot"])
    total = sum(asked.values())
    lines.append(
        f"| **all** | {total} | {len(pooled['tpot'])} ({len(pooled['tpot']) / total:.0%}) | **{tpot_m:.0%}** | "
        f"**{tpot_p90:.0%}** | **{_stats(pooled['ttft'])[0]:.0%}** | **{_stats(pooled['throughput'])[0]:.0%}** |"
    )
    return lines


# bench/perf_loso.py --markdown and bench/perf_sources.py print these figures (they simulate 711 runs: rerun to refresh)
SOURCES_SECTION = (
    "### Simulated `vllm bench serve` across sources (issue 23)",
    "",
    "`bench/perf_loso.py`: the simulated benchmark run (app/core/perf/simulate.py) against 711 measured runs from 4 sources, each source held out in turn. Shipped step coefficients (fitted on the shared file only). Sources: the shared file (685 runs, InferenceMAX client settings); `sariekr/gpu_conc` (12 runs, gpt-oss-20b on H200 / B200 / MI300X, 1-16 clients); tenstorrent's GPU reference runs (13 runs, Qwen2.5-72B on 2×H100; Qwen3-0.6B and Qwen3-1.7B on A100; 1 client); `vllm-ascend#1605` (1 run, Qwen3-30B-A3B on 4 Atlas A2 at 1 request/s). The issue's bar (≥ 150 runs from ≥ 5 sources, leave-one-source-out TPOT ≤ 20 %, TTFT ≤ 35 %, throughput ≤ 20 %, 80 % inside the band) is not met: 26 runs from 3 sources outside the shared file were collected.",
    "",
    "Candidate cross-source corrections, each fitted on the other sources with one vote per source: `per-kind` (one factor per result kind), `step` (one factor on the step time), `step+overhead` (and a per-request TTFT overhead), `step-cost` (a fixed cost added to every engine step). Bands: the 10th and 90th percentiles of nested out-of-source residuals. Each cell: median error (median predicted / measured, share inside the band).",
    "",
    "| correction | held-out source | runs | TPOT error (pred/meas, in band) | TTFT | output throughput |",
    "|---|---|---:|---|---|---|",
    "| `none` | `sariekr/gpu_conc` | 12 | 53 % (0.47×, 100 %) | 41 % (1.20×, 92 %) | 111 % (2.11×, 0 %) |",
    "| `none` | `shared file (aiconfigurator silicon_sample)` | 685 | 12 % (0.98×, 37 %) | 28 % (0.77×, 98 %) | 13 % (0.98×, 60 %) |",
    "| `none` | `tenstorrent/tt-inference-server GPU reference runs` | 13 | 8 % (0.92×, 100 %) | 73 % (1.73×, 38 %) | – |",
    "| `none` | `vllm-project/vllm-ascend#1605` | 1 | 73 % (0.27×, 0 %) | 92 % (0.08×, 0 %) | 6 % (0.94×, 100 %) |",
    "| `per-kind` | `sariekr/gpu_conc` | 12 | 49 % (0.51×, 100 %) | 57 % (1.57×, 100 %) | 120 % (2.20×, 0 %) |",
    "| `per-kind` | `shared file (aiconfigurator silicon_sample)` | 685 | 109 % (2.09×, 91 %) | 37 % (0.65×, 99 %) | 31 % (0.70×, 98 %) |",
    "| `per-kind` | `tenstorrent/tt-inference-server GPU reference runs` | 13 | 96 % (1.96×, 100 %) | 126 % (2.26×, 100 %) | – |",
    "| `per-kind` | `vllm-project/vllm-ascend#1605` | 1 | 71 % (0.29×, 0 %) | 93 % (0.07×, 0 %) | 35 % (0.65×, 100 %) |",
    "| `step` | `sariekr/gpu_conc` | 12 | 49 % (0.51×, 100 %) | 45 % (1.30×, 100 %) | 94 % (1.94×, 0 %) |",
    "| `step` | `shared file (aiconfigurator silicon_sample)` | 685 | 109 % (2.09×, 91 %) | 64 % (1.63×, 99 %) | 54 % (0.46×, 11 %) |",
    "| `step` | `tenstorrent/tt-inference-server GPU reference runs` | 13 | 96 % (1.96×, 100 %) | 268 % (3.68×, 54 %) | – |",
    "| `step` | `vllm-project/vllm-ascend#1605` | 1 | 71 % (0.29×, 0 %) | 92 % (0.08×, 0 %) | 14 % (0.86×, 100 %) |",
    "| `step+overhead` | `sariekr/gpu_conc` | 12 | 49 % (0.51×, 100 %) | 96 % (1.96×, 100 %) | 92 % (1.92×, 0 %) |",
    "| `step+overhead` | `shared file (aiconfigurator silicon_sample)` | 685 | 109 % (2.09×, 91 %) | 64 % (1.63×, 99 %) | 54 % (0.46×, 11 %) |",
    "| `step+overhead` | `tenstorrent/tt-inference-server GPU reference runs` | 13 | 96 % (1.96×, 100 %) | 268 % (3.68×, 100 %) | – |",
    "| `step+overhead` | `vllm-project/vllm-ascend#1605` | 1 | 71 % (0.29×, 0 %) | 92 % (0.08×, 0 %) | 14 % (0.86×, 100 %) |",
    "| `step-cost` | `sariekr/gpu_conc` | 12 | 20 % (0.80×, 100 %) | 43 % (1.24×, 92 %) | 22 % (1.22×, 0 %) |",
    "| `step-cost` | `shared file (aiconfigurator silicon_sample)` | 685 | 30 % (1.28×, 99 %) | 27 % (0.79×, 98 %) | 27 % (0.76×, 60 %) |",
    "| `step-cost` | `tenstorrent/tt-inference-server GPU reference runs` | 13 | 5 % (1.05×, 100 %) | 89 % (1.89×, 38 %) | – |",
    "| `step-cost` | `vllm-project/vllm-ascend#1605` | 1 | 63 % (0.37×, 0 %) | 92 % (0.08×, 0 %) | 31 % (0.69×, 100 %) |",
    "",
    "Averaged over the held-out sources (one vote per source):",
    "",
    "| correction | sources | TPOT median error | TTFT | throughput | TPOT in band | TTFT in band | throughput in band |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    "| `none` | 4 | 36 % | 59 % | 43 % | 59 % | 57 % | 53 % |",
    "| `per-kind` | 4 | 81 % | 78 % | 62 % | 73 % | 75 % | 66 % |",
    "| `step` | 4 | 81 % | 117 % | 54 % | 73 % | 63 % | 37 % |",
    "| `step+overhead` | 4 | 81 % | 130 % | 53 % | 73 % | 75 % | 37 % |",
    "| `step-cost` | 4 | 30 % | 63 % | 27 % | 75 % | 57 % | 53 % |",
    "",
    "`step-cost` (3.2 ms per step when fitted on all sources) lowers the source-averaged TPOT error from 36 % to 30 % and throughput from 43 % to 27 %, but it moves the shared file from 12 % to 30 % TPOT, above the 15 % that file must keep, and no candidate brings the held-out bands near 80 % in all three kinds. The sources disagree by a factor of four (Ascend 0.27×, gpt-oss-20b 0.47×, tenstorrent 0.92×), and three small sources cannot separate a harness term from a device or small-active-MoE term. No cross-source correction is shipped; the product's bands are unchanged.",
    "",
    "With `measured_runs` (calibrated on the other runs of the same cluster and model, one run left out each time, `bench/perf_sources.py`): TPOT median error 6.1 % (`sariekr/gpu_conc` alone: 9.8 %, tenstorrent alone: 0.2 %, target ≤ 12 %), TTFT 15.3 %, throughput 6.8 %; inside the band 94 % (`sariekr/gpu_conc`: 75 %).",
)


def section() -> str:
    runs = F.prepare(F.load_runs())
    fits = F.fit_all(runs, FIT_ITERATIONS)
    inside = F.errors(runs, fits)
    lomo = _holdout(runs, lambda r: r.model_path)
    lodo = _holdout(runs, lambda r: r.system)
    rand = _random_holdout(runs)
    lines = [
        "## Performance model (TTFT, TPOT, throughput)",
        "",
        "Generated by `bench/perf_accuracy.py` (also part of `bench/accuracy.py --write`) from",
        "`bench/data/perf/vllm_perf_measured.csv` (aiconfigurator's measured vLLM runs, Apache-2.0): "
        f"{len(runs)} aggregated runs after averaging duplicates, fitted per device family by `bench/fit_perf.py`.",
        "Each held-out group is predicted by coefficients refitted without it. Targets on held-out runs: "
        "≥ 90 % answered, TPOT median ≤ 15 % and p90 ≤ 35 %, TTFT median ≤ 35 %, throughput median ≤ 15 %.",
        "",
        f"In-sample (all runs fitted): TPOT median {_stats(inside['tpot'])[0]:.0%}, p90 {_stats(inside['tpot'])[1]:.0%}; "
        f"TTFT median {_stats(inside['ttft'])[0]:.0%}; throughput median {_stats(inside['throughput'])[0]:.0%}.",
        "",
        f"Random {RANDOM_HOLDOUT_SHARE:.0%} of the runs held out (refit on the rest; seeds "
        f"{', '.join(map(str, RANDOM_HOLDOUT_SEEDS))}; {len(rand['tpot'])} predictions pooled; closest to how the "
        f"model is judged — other runs of the same kinds): TPOT median {_stats(rand['tpot'])[0]:.0%}, "
        f"p90 {_stats(rand['tpot'])[1]:.0%}; TTFT median {_stats(rand['ttft'])[0]:.0%}; "
        f"throughput median {_stats(rand['throughput'])[0]:.0%}.",
        "",
        *_table("Leave one model out", *lomo),
        "",
        *_table("Leave one device out", *lodo),
        "",
        "What is not calibrated: AMD, Ascend and other accelerators (NVIDIA Hopper coefficients with the",
        "device's data-sheet bandwidth and TFLOPS, bands widened 3×); NVIDIA parts other than Hopper and",
        "datacenter Blackwell (bands 2×); bf16 weights on vLLM ≥ 0.15 and fp8/NVFP4 on other families (no",
        "measured run); pipeline parallel; speculative decoding; prefix-cache hits; preemption's recomputation",
        "past the KV cliff (the model queues clients instead, so latency there is a lower bound).",
        "",
        *SOURCES_SECTION,
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(section())
