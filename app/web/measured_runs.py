"""`measured_runs`: your cluster's `vllm bench serve` results, each a performance request (the planner's
fields and ``bench``) with the measured keys under vLLM's names, or a ``paste`` of the printed block /
--save-result JSON. Used by /api/performance; /api/fleet reads the same shape (app/web/inputs later)."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from app.core.errors import PlannerError
from app.core.perf.bench_args import BenchArgs
from app.core.perf.cluster import ClusterFit, MeasuredKeys, RunComparison, fit_cluster
from app.core.perf.paste import bench_fields, parse_paste
from app.core.perf.predict import compare_run
from app.core.perf.simulate import SimulationError
from app.core.text import Text
from app.web.inputs.params import StrictPlannerParams
from app.web.inputs.resolve import estimate_for, resolve_strict

MAX_MEASURED_RUNS = 64
MAX_PASTE_CHARS = 200_000


class MeasuredRun(StrictPlannerParams):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    bench: BenchArgs = Field(default_factory=BenchArgs)
    measured: MeasuredKeys = Field(default_factory=MeasuredKeys)
    paste: str | None = Field(default=None, max_length=MAX_PASTE_CHARS)


def _run_inputs(run: MeasuredRun, index: int) -> tuple[BenchArgs, dict[str, float]]:
    measured = run.measured.values()
    args = run.bench
    if run.paste:
        try:
            fields, pasted = bench_fields(parse_paste(run.paste))
        except PlannerError as exc:
            raise PlannerError(f"measured_runs[{index}].paste", exc.message) from None
        args = args.model_copy(update=fields)
        measured = {**pasted, **measured}
    if not measured:
        raise PlannerError(
            f"measured_runs[{index}]",
            Text("no measured figures: give measured keys (mean_tpot_ms, ...) or a paste"),
        )
    return args, measured


def cluster_of(runs: list[MeasuredRun]) -> ClusterFit | None:
    """Your cluster's factors from your runs (None without runs); errors name the run and field."""
    if not runs:
        return None
    if len(runs) > MAX_MEASURED_RUNS:
        raise PlannerError("measured_runs", Text("at most {n} measured runs", n=MAX_MEASURED_RUNS))
    comparisons: list[RunComparison] = []
    for i, run in enumerate(runs):
        args, measured = _run_inputs(run, i)
        resolved = resolve_strict(run)
        try:
            comparisons.append(
                compare_run(
                    estimate=estimate_for(resolved),
                    model=resolved.model,
                    device=resolved.device,
                    serve=resolved.serve,
                    args=args,
                    measured=measured,
                )
            )
        except SimulationError:
            raise PlannerError(
                f"measured_runs[{i}].bench", Text("this run cannot be simulated on the planned pool")
            ) from None
    return fit_cluster(comparisons)
