"""The speed for the planner's inputs: the exact pool from the shared estimate call, then app.core.perf."""

from __future__ import annotations

from pydantic import ValidationError

from app.core.errors import PlannerError
from app.core.perf.bench_args import BenchArgs
from app.core.perf.cluster import ClusterFit
from app.core.perf.predict import Performance, performance
from app.web.inputs.params import PlannerParams, StrictPlannerParams, workload_of
from app.web.inputs.resolve import Resolved, estimate_for
from app.web.measured_runs import PAGE_FIELD, cluster_of, page_runs
from app.web.validation import message_of

# the planner fields that are `vllm bench serve` arguments (same names as BenchArgs')
BENCH_FIELDS = (
    "num_prompts",
    "max_concurrency",
    "request_rate",
    "burstiness",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
    "random_prefix_len",
    "dataset_name",
)


def bench_of(params: PlannerParams) -> BenchArgs | None:
    """The page's `vllm bench serve` arguments (None: the fieldset is off and no argument is given);
    a bad argument is a PlannerError naming its field."""
    given = {name: getattr(params, name) for name in BENCH_FIELDS if getattr(params, name) is not None}
    if not (params.bench_serve or given or params.ignore_eos):
        return None
    try:
        return BenchArgs.model_validate({**given, "ignore_eos": params.ignore_eos})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise PlannerError(".".join(str(p) for p in first["loc"]), message_of(first)) from None


def page_cluster(params: PlannerParams, bench: BenchArgs | None) -> ClusterFit | None:
    """Your cluster's factors from the page's "Your own runs" box (None when it is empty)."""
    if not params.my_runs.strip():
        return None
    base = StrictPlannerParams.model_validate(params.model_dump())
    try:
        return cluster_of(page_runs(params.my_runs, base, bench))
    except PlannerError as exc:
        if exc.field.startswith("measured_runs"):  # one of the box's runs: name the box
            raise PlannerError(PAGE_FIELD, exc.message) from None
        raise


def performance_for(
    resolved: Resolved,
    *,
    with_curve: bool = True,
    bench: BenchArgs | None = None,
    cluster: ClusterFit | None = None,
) -> Performance:
    """The estimate (the exact pool) and the speed on top of it; PlannerError propagates."""
    return performance(
        estimate=estimate_for(resolved),
        model=resolved.model,
        device=resolved.device,
        serve=resolved.serve,
        workload=workload_of(resolved.params),
        with_curve=with_curve,
        bench=bench,
        cluster=cluster,
    )
