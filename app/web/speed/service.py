"""The speed for the planner's inputs: the exact pool from the shared estimate call, then app.core.perf."""

from __future__ import annotations

from app.core.perf.bench_args import BenchArgs
from app.core.perf.bench_run import bench_sets_clients
from app.core.perf.cluster import ClusterFit
from app.core.perf.predict import Performance, performance
from app.web.inputs.params import workload_of
from app.web.inputs.resolve import Resolved, estimate_for
from app.web.measured_runs import page_runs_lenient

__all__ = ["page_runs_lenient", "performance_for"]


def performance_for(
    resolved: Resolved,
    *,
    with_curve: bool = True,
    bench: BenchArgs | None = None,
    cluster: ClusterFit | None = None,
    simulate: bool = True,
) -> Performance:
    """The estimate (the exact pool) and the speed on top of it, at the workload the user set (blank
    lengths: the benchmark's, shortened to fit the pool's max_model_len); PlannerError propagates.
    ``simulate`` False: the benchmark gives the lengths but is not run (the page, when vLLM refuses it)."""
    estimate = estimate_for(resolved)
    workload, note = workload_of(resolved.params, max_model_len=estimate.max_model_len, bench=bench)
    perf = performance(
        estimate=estimate,
        model=resolved.model,
        device=resolved.device,
        serve=resolved.serve,
        workload=workload,
        with_curve=with_curve,
        bench=bench if simulate else None,
        cluster=cluster,
        clients_from_bench=simulate
        and bench_sets_clients(concurrency=resolved.params.concurrency, bench=bench),
    )
    # how your pasted runs were read (a run without a stated rate ran at inf) follows the model's notes
    extra = cluster.notes if cluster is not None else []
    if note is None and not extra:
        return perf
    return perf.model_copy(update={"notes": [*([note] if note else []), *perf.notes, *extra]})
