"""bench/perf_harness.py: the client settings (harness) by which the leave-one-source-out residuals are
grouped. The arrival classes follow `vllm bench serve`'s semantics (app/core/perf/bench_args.py: a
max_concurrency semaphore below num_prompts is a closed loop; request_rate inf sends every prompt at t = 0)."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import pytest

from app.core.perf.bench_args import BenchArgs
from bench import perf_harness as H


def _ctx(**kwargs: Any) -> Any:
    return SimpleNamespace(args=BenchArgs(**kwargs))


@pytest.mark.parametrize(
    ("kwargs", "arrivals", "clients", "rounds"),
    [
        # 160 prompts through 16 clients: a closed loop of 10 prompts a client
        ({"num_prompts": 160, "max_concurrency": 16}, "closed", 16, 10.0),
        # every prompt at t = 0 and no cap: one wave of 100
        ({"num_prompts": 100}, "burst", 100, 1.0),
        # a cap at the prompt count does not bind: still a burst
        ({"num_prompts": 64, "max_concurrency": 64}, "burst", 64, 1.0),
        ({"num_prompts": 200, "request_rate": 4.0}, "rate", 200, 1.0),
        ({"num_prompts": 200, "max_concurrency": 8, "request_rate": 4.0}, "closed+rate", 8, 25.0),
    ],
)
def test_arrival_class_clients_and_rounds(
    kwargs: dict[str, Any], arrivals: str, clients: int, rounds: float
) -> None:
    ctx = _ctx(**kwargs)
    assert H.arrivals(ctx) == arrivals
    assert H.clients(ctx) == clients
    assert H.rounds(ctx) == rounds


def test_residual_is_positive_when_the_model_is_too_fast() -> None:
    # TPOT predicted 10 ms, measured 20 ms: log(20 / 10) = +0.693; throughput predicted 200, measured 100
    # tok/s: too fast too, the same +0.693
    assert H.residual("tpot", 10.0, 20.0) == pytest.approx(math.log(2))
    assert H.residual("throughput", 200.0, 100.0) == pytest.approx(math.log(2))
    assert H.residual("ttft", 30.0, 15.0) == pytest.approx(-math.log(2))
