"""What the recommender returns: snapshots, steps, the bisection, the recommendation."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.core.perf.predict import Basis
from app.core.perf.schedule import Workload
from app.core.result import Range
from app.core.specs import ServeConfig
from app.core.text import Msg
from app.core.verdicts import VerdictKey

Preference = Literal["latency", "throughput"]
BisectionVerdict = VerdictKey  # the planner's verdict (app.core.verdicts), the probes its evidence
Search = Literal["always", "first_meeting", "monotone"]


# --- output ---------------------------------------------------------------------------------------------


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Snapshot(Frozen):
    """Where one configuration stands against the target (per device of the tightest rank)."""

    max_model_len: int
    kv_tokens: int
    max_concurrency: float  # at the configuration's own max_model_len
    concurrency_at_target_len: float  # at S*, 0.0 when one sequence of S* does not fit
    largest_len_at_target_concurrency: int  # longest max_model_len with N* sequences; 0 if none
    fits: bool  # starts at its own max_model_len
    meets_target: bool  # starts at S* with max concurrency >= N* and max_num_seqs >= N*
    kv_cache_bytes: int
    kv_bytes_per_token: int
    weights_bytes: int
    activation_peak_bytes: int


class SpeedPoint(Frozen):
    """performance() of one configuration at the planner's speed workload (app.core.perf.predict).

    A subset of :class:`~app.core.perf.predict.Performance`: each field has its name there and is read
    from it by name (``SpeedPoint.model_validate(perf, from_attributes=True)``), so no field is copied by
    hand. E.g. a Performance with tpot_ms 21.5 ms expected gives a SpeedPoint with tpot_ms 21.5 ms.
    """

    ttft_ms: Range
    tpot_ms: Range
    output_tokens_per_s: Range  # the whole replica
    kv_limited: bool
    basis: Basis
    calibrated_runs: int = 0  # > 0: scaled by your cluster's measured runs (measured_runs)
    regime: str = ""  # what binds it (compute, memory_bandwidth, host, kv_pool, queue)


class StepSpeed(Frozen):
    """The step's speed effect: before -> after at the speed workload (None: no speed, why in the note)."""

    before: SpeedPoint | None
    after: SpeedPoint | None  # the configuration the step chose or tried; ``before`` when it tried none
    basis: Basis | None  # "extrapolated" when either side is; None when neither side has a speed
    changed: bool  # the step changes the configuration (applied, or a candidate it tried and refused)
    before_note: Msg | None = None
    after_note: Msg | None = None


class LayoutCost(Frozen):
    """One configuration that meets the target, priced in device-hours for the same load."""

    serve: ServeConfig
    devices: int  # TP x PP x DP: one replica
    output_tokens_per_s: float  # expected, the whole replica, at the speed workload
    device_hours_per_million_output_tokens: float
    basis: Basis
    recommended: bool  # the recommendation's final configuration
    calibrated_runs: int = 0  # > 0: its throughput is scaled by your cluster's measured runs


class Cheapest(Frozen):
    """Which of the layouts that meet the target is cheapest to run (the final one and at most two others)."""

    layouts: list[LayoutCost]  # cheapest first
    serve: ServeConfig  # the cheapest's configuration
    recommended_is_cheapest: bool
    sentence: Msg


class Step(Frozen):
    key: str
    label: Msg
    applied: bool  # in the final configuration (False for a step the prune pass undid)
    reason: Msg
    effect: Msg
    cost: Msg
    before: Snapshot
    after: Snapshot
    serve: ServeConfig  # the configuration after this step
    # applied during the walk, then undone by the prune pass: a later step met the target without it
    undone: bool = False
    undone_reason: Msg | None = None
    speed: StepSpeed | None = None  # None when the recommendation ran without a speed workload


class BisectionProbe(Frozen):
    name: Literal["as_given", "half_len", "one_seq"]
    max_model_len: int
    max_num_seqs: int
    demand: int  # sequences it has to hold to count as running
    starts: bool
    runs: bool  # starts and holds `demand` sequences of max_model_len
    max_concurrency: float
    kv_tokens: int
    kv_cache_bytes: int
    estimated_max_model_len: int
    error: str | None


class Bisection(Frozen):
    verdict: BisectionVerdict
    target_concurrency: int
    explanation: Msg
    probes: list[BisectionProbe]


class Recommendation(Frozen):
    target_max_model_len: int
    target_concurrency: int
    preference: Preference
    steps: list[Step]
    final: ServeConfig
    meets_target: bool
    impossible_reason: Msg | None
    best_len_at_target_concurrency: int  # nearest reachable point: best S at N*
    best_concurrency_at_target_len: int  # and best N at S*
    command: str
    bisection: Bisection
    warnings: list[Msg]
    speed_workload: Workload | None = None  # the clients each step's speed is predicted for
    calibrated_runs: int = 0  # > 0: the speed figures of calibrated_figures are scaled by your runs
    calibrated_figures: list[str] = Field(default_factory=list)  # the kinds your runs measured (tpot, ...)
    cheapest: Cheapest | None = None  # when the final configuration and an alternative both meet the target

    def changes(self) -> list[Step]:
        """What to change, in order: the steps the final configuration keeps, in the walk's order (the
        planner's verdict box lists these labels; the recommendation shows the same steps applied)."""
        return [step for step in self.steps if step.applied and not step.undone]
