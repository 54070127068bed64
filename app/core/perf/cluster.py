"""Your own cluster: fit its factors on the `vllm bench serve` runs you measured there.

Each measured run is simulated with the shipped coefficients (bench.simulate_bench on the planner's
estimate of the configuration it ran); the cluster's factor for TPOT-like keys (TPOT, ITL, E2EL),
TTFT-like keys and throughput keys is the median of log(measured / predicted) over the keys the runs
report, and the band is the spread of what is left (at least MIN_LOG_SPREAD: a few runs cannot
promise more than 5 %). Every speed figure then says "calibrated on your N runs".
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from app.core.perf.bench import BAND_OF_KEY, RESULT_KEYS

MIN_LOG_SPREAD = 0.05  # about 5 %: run-to-run noise of one benchmark on one cluster
BAND_GROUPS = ("tpot", "ttft", "throughput")


class ClusterFit(BaseModel):
    """Multiplicative factors (measured / modelled) per kind of figure, and their log spread."""

    model_config = ConfigDict(frozen=True)

    runs: int
    factors: dict[str, float]
    log_spread: dict[str, float]

    def factor(self, group: str) -> float:
        return self.factors.get(group, 1.0)

    def band(self, group: str) -> tuple[float, float]:
        spread = self.log_spread.get(group, MIN_LOG_SPREAD)
        return -spread, spread


@dataclass(frozen=True)
class RunComparison:
    """One measured run: what the model predicts for it and what was measured (vLLM's keys)."""

    predicted: dict[str, float]
    measured: dict[str, float]


def log_residuals(runs: list[RunComparison]) -> dict[str, list[list[float]]]:
    """Per band group, per run, log(measured / predicted) of each key both have."""
    out: dict[str, list[list[float]]] = {g: [] for g in BAND_GROUPS}
    for run in runs:
        per: dict[str, list[float]] = {g: [] for g in BAND_GROUPS}
        for key in RESULT_KEYS:
            m, p = run.measured.get(key), run.predicted.get(key)
            if m is not None and p is not None and m > 0 and p > 0:
                per[BAND_OF_KEY[key]].append(math.log(m / p))
        for group, values in per.items():
            if values:
                out[group].append(values)
    return out


def fit_cluster(runs: list[RunComparison]) -> ClusterFit:
    residuals = log_residuals(runs)
    factors: dict[str, float] = {}
    spread: dict[str, float] = {}
    for group, per_run in residuals.items():
        if not per_run:
            continue
        run_means = [statistics.fmean(v) for v in per_run]
        centre = statistics.median(run_means)
        factors[group] = math.exp(centre)
        left = [abs(v - centre) for v in run_means]
        # a single run has no spread of its own: the band stays at the floor, widened for few runs
        width = max(left) if len(left) > 1 else 0.0
        spread[group] = max(MIN_LOG_SPREAD, width) * (1 + 1 / math.sqrt(len(per_run)))
    return ClusterFit(runs=len(runs), factors=factors, log_spread=spread)
