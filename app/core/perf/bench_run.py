"""The simulated `vllm bench serve` run of the Speed section: vLLM's length check on its longest request,
the simulation on the shipped coefficients, your cluster's factors and the bands at the clients it keeps
in flight; and the steady state's clients when the benchmark's arrivals, not a client count, decide them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from app.core import deadline
from app.core.errors import PlannerError
from app.core.perf.bench import BAND_OF_KEY, MS_PER_S, BenchPoint, BenchResult, banded, simulate_bench
from app.core.perf.bench_args import BenchArgs
from app.core.perf.cluster import ClusterFit
from app.core.perf.physics import StepPhysics
from app.core.perf.simulate import SimulationError
from app.core.perf.too_long import too_long
from app.core.result import Estimate
from app.core.specs import ServeConfig
from app.core.text import N_, Msg, Text

if TYPE_CHECKING:
    from app.core.perf.predict import FamilyFit

# what a simulated benchmark past the request's CPU budget should shrink (app.core.deadline)
FEWER_PROMPTS = N_("fewer prompts (num_prompts) or fewer clients (max_concurrency)")


def refuse_too_long(args: BenchArgs, *, max_model_len: int) -> None:
    """vLLM's length check (app.core.perf.too_long) on the benchmark's longest request."""
    prompt, output = args.longest_request()
    sharegpt = args.dataset_name == "sharegpt"  # its lengths are the dataset's: no length field to name
    refused = too_long(
        prompt_tokens=prompt,
        output_tokens=output,
        max_model_len=max_model_len,
        prompt_field="bench.dataset_name" if sharegpt else "bench.random_input_len",
        output_field="bench.dataset_name" if sharegpt else "bench.random_output_len",
        subject="benchmark",
    )
    if refused is not None:
        raise refused


def simulated(
    *,
    estimate: Estimate,
    physics: StepPhysics,
    fit: FamilyFit,
    serve: ServeConfig,
    args: BenchArgs,
    lengths: tuple[list[int], list[int]] | None = None,
) -> BenchPoint:
    """The run as the shipped coefficients simulate it: the server's prefix cache on unless turned off
    (vLLM V1's default), for the page's benchmark and for each of your measured runs alike; ``lengths``:
    a measured run's own requests (bench_args.printed_lengths)."""
    return simulate_bench(
        estimate=estimate,
        physics=physics,
        coefficients=fit.bench_coefficients(),
        args=args,
        prefix_cache=serve.enable_prefix_caching is not False,
        lengths=lengths,
    )


def whole_clients(point_clients: float) -> int:
    """A run's clients in flight as the whole count your runs' reach and the steady state take (>= 1)."""
    return max(1, round(point_clients))


def bench_serve(
    *,
    estimate: Estimate,
    physics: StepPhysics,
    fit: FamilyFit,
    serve: ServeConfig,
    args: BenchArgs,
    cluster: ClusterFit | None,
    bands_for: Callable[[ClusterFit | None], dict[str, tuple[float, float]]],
    widen: float,
    scale: dict[str, float],
) -> BenchResult:
    """The simulated `vllm bench serve` run with its bands and your cluster's factors: your runs' narrow
    band holds only at the clients they ran, so it applies where the benchmark keeps that many in flight."""
    refuse_too_long(args, max_model_len=estimate.max_model_len)
    try:
        with deadline.naming(field="bench.num_prompts", advice=Text(FEWER_PROMPTS)):
            point = simulated(estimate=estimate, physics=physics, fit=fit, serve=serve, args=args)
    except SimulationError:
        raise PlannerError(
            "bench.num_prompts",
            Text(
                "this benchmark is too large to simulate here (or never finishes on this pool): use fewer prompts"
            ),
        ) from None
    at = cluster if cluster is not None and cluster.reaches(whole_clients(point.clients_in_flight)) else None
    widens = {g: 1.0 if at is not None and at.measures(g) else widen for g in scale}
    scaled = {k: v * scale[BAND_OF_KEY[k]] for k, v in point.values.items()}
    # Little's law on the figures shown (your cluster's factors scale throughput and latency)
    in_flight = args.clients_in_flight(
        request_throughput=scaled["request_throughput"], mean_e2el_s=scaled["mean_e2el_ms"] / MS_PER_S
    )
    point = point.model_copy(update={"values": scaled, "clients_in_flight": in_flight})
    return banded(point, args=args, bands=bands_for(at), widen=widens)


def open_loop_note(result: BenchResult) -> Msg:
    """Why the steady state models the clients an open-loop benchmark keeps in flight."""
    args = result.args
    return Text(
        "The steady state models the {clients:,} clients this benchmark keeps in flight, not its "
        "{prompts:,} prompts: at --request-rate {rate:g} with no --max-concurrency, Little's law gives "
        "{done:.2f} requests/s x {e2el:.2f} s mean end-to-end latency = {in_flight:.1f}.",
        clients=whole_clients(result.clients_in_flight),
        prompts=args.num_prompts,
        rate=args.request_rate,
        done=result.request_throughput.expected,
        e2el=result.mean_e2el_ms.expected / MS_PER_S,
        in_flight=result.clients_in_flight,
    )


def bench_sets_clients(*, concurrency: int | None, bench: BenchArgs | None) -> bool:
    """Whether the benchmark decides the steady state's clients: no client count given and an open-loop
    benchmark (a finite --request-rate, no --max-concurrency), whose arrivals keep only so many in flight
    (with a cap, app.core.perf.workload.speed_clients takes it; a burst at inf keeps the Speed section's
    own clients, the run's are every prompt)."""
    return concurrency is None and bench is not None and bench.open_loop()
