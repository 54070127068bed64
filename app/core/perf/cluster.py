"""Your own cluster: fit its factors on the `vllm bench serve` runs you measured there.

Each measured run is simulated with the shipped coefficients (bench.simulate_bench on the planner's
estimate of the configuration it ran); the cluster's factor for TPOT-like keys (TPOT, ITL, E2EL),
TTFT-like keys and throughput keys is the median of log(measured / predicted) over the keys the runs
report, and the band is the spread of what is left (at least MIN_LOG_SPREAD: a few runs cannot
promise more than 5 %). Every speed figure of a kind the runs measured then says "calibrated on your N
runs"; the kinds no run measured keep the model's figure and band, and the captions say which is which.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from app.core.perf.bench import BAND_OF_KEY, RESULT_KEYS
from app.core.perf.calibrated import BAND_GROUPS, RunsScope
from app.core.text import Msg

MIN_LOG_SPREAD = 0.05  # about 5 %: run-to-run noise of one benchmark on one cluster


class ClusterFit(BaseModel):
    """Multiplicative factors (measured / modelled) per kind of figure, and their log spread."""

    model_config = ConfigDict(frozen=True)

    runs: int
    factors: dict[str, float]
    log_spread: dict[str, float]
    notes: list[Msg] = Field(default_factory=list)  # how the runs were read (a rate they did not state)
    # the fewest and most clients your runs ran (None: not known); outside them a figure keeps your
    # factors but the model's band, which your runs did not narrow there (a KV cliff they never reached)
    clients: tuple[int, int] | None = None

    def factor(self, group: str) -> float:
        return self.factors.get(group, 1.0)

    def band(self, group: str) -> tuple[float, float]:
        spread = self.log_spread.get(group, MIN_LOG_SPREAD)
        return -spread, spread

    def measures(self, group: str) -> bool:
        """Whether your runs measured this kind of figure (a key of its band group): one that no run
        measured keeps the model's band, not a few runs' 5 % (a TPOT-only paste said nothing of TTFT)."""
        return group in self.log_spread

    def reaches(self, concurrency: int) -> bool:
        """Whether your runs ran at about this many clients (between their fewest and most)."""
        return self.clients is None or self.clients[0] <= concurrency <= self.clients[1]

    def measured_groups(self) -> list[str]:
        """The kinds of figure your runs measured, in BAND_GROUPS' order."""
        return [g for g in BAND_GROUPS if self.measures(g)]

    def scope(self) -> RunsScope:
        """How many runs and which kinds of figure they measured: what every caption says (one rule)."""
        return RunsScope.of(self.runs, self.measured_groups())

    def calibration_note(self) -> Msg:
        """The Speed section's note: which figures your runs scale (all of them, or the kinds measured)."""
        return self.scope().note()

    def bands_over(self, model: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
        """Your runs' band for each kind of figure they measured, the model's for the rest."""
        return {g: self.band(g) if self.measures(g) else model[g] for g in model}


@dataclass(frozen=True)
class RunComparison:
    """One measured run: what the model predicts for it and what was measured (vLLM's keys)."""

    predicted: dict[str, float]
    measured: dict[str, float]
    clients: int | None = None  # how many clients the run ran at most (its cap, else its prompts)


# A run's figure over 100 x, or under 1/100 of, what the shipped model predicts for the configuration it
# ran is not a measurement of it: the model's held-out error is a few tens of per cent (docs/accuracy.md),
# and a factor of 1e-300 (a pasted "Mean TPOT (ms): 1e-300") made every calibrated figure overflow (the
# fleet's cost per million tokens, its chart's log axis). A run off by more is refused, naming the key.
MAX_RUN_FACTOR = 100.0


def implausible_key(run: RunComparison) -> tuple[str, float, float] | None:
    """The first of vLLM's result keys whose measured / predicted ratio lies outside 1/MAX_RUN_FACTOR ..
    MAX_RUN_FACTOR, with its measured and predicted figures (None: every key is within)."""
    bound = math.log(MAX_RUN_FACTOR)
    for key in RESULT_KEYS:
        ratio = log_ratio(run, key)
        if ratio is not None and abs(ratio) > bound:
            return key, run.measured[key], run.predicted[key]
    return None


def log_ratio(run: RunComparison, key: str) -> float | None:
    """log(measured / predicted) of one key (None: either is missing, not positive or not finite)."""
    m, p = run.measured.get(key), run.predicted.get(key)
    if m is not None and p is not None and 0 < m < math.inf and 0 < p < math.inf:
        return math.log(m) - math.log(p)
    return None


def log_residuals(runs: list[RunComparison]) -> dict[str, list[list[float]]]:
    """Per band group, per run, log(measured / predicted) of each key both have."""
    out: dict[str, list[list[float]]] = {g: [] for g in BAND_GROUPS}
    for run in runs:
        per: dict[str, list[float]] = {g: [] for g in BAND_GROUPS}
        for key in RESULT_KEYS:
            ratio = log_ratio(run, key)
            if ratio is not None:
                per[BAND_OF_KEY[key]].append(ratio)
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
    clients = [run.clients for run in runs if run.clients is not None]
    reach = (min(clients), max(clients)) if clients and len(clients) == len(runs) else None
    return ClusterFit(runs=len(runs), factors=factors, log_spread=spread, clients=reach)


class MeasuredKeys(BaseModel):
    """What one `vllm bench serve` run printed, under vLLM's result keys (any subset)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mean_ttft_ms: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    median_ttft_ms: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    p99_ttft_ms: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    mean_tpot_ms: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    median_tpot_ms: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    p99_tpot_ms: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    mean_itl_ms: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    median_itl_ms: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    mean_e2el_ms: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    output_throughput: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    request_throughput: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    total_token_throughput: float | None = Field(default=None, gt=0, allow_inf_nan=False)

    def values(self) -> dict[str, float]:
        return {k: v for k, v in self.model_dump().items() if v is not None}
