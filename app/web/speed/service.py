"""The speed for the planner's inputs: the exact pool from the shared estimate call, then app.core.perf."""

from __future__ import annotations

from app.core.perf.bench_args import BenchArgs
from app.core.perf.cluster import ClusterFit
from app.core.perf.predict import Performance, performance
from app.web.inputs.params import workload_of
from app.web.inputs.resolve import Resolved, estimate_for
from app.web.measured_runs import bench_of, page_cluster

__all__ = ["bench_of", "page_cluster", "performance_for"]


def performance_for(
    resolved: Resolved,
    *,
    with_curve: bool = True,
    bench: BenchArgs | None = None,
    cluster: ClusterFit | None = None,
) -> Performance:
    """The estimate (the exact pool) and the speed on top of it, at the workload the user set (blank
    lengths: the benchmark's, shortened to fit the pool's max_model_len); PlannerError propagates."""
    estimate = estimate_for(resolved)
    workload, note = workload_of(resolved.params, max_model_len=estimate.max_model_len, bench=bench)
    perf = performance(
        estimate=estimate,
        model=resolved.model,
        device=resolved.device,
        serve=resolved.serve,
        workload=workload,
        with_curve=with_curve,
        bench=bench,
        cluster=cluster,
    )
    return perf if note is None else perf.model_copy(update={"notes": [note, *perf.notes]})
