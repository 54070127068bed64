"""The API server takes a burst's requests one at a time (physics.Coefficients.frontend_request_s, round 11:
bench/perf_frontend.py says why): the k-th request of a burst reaches the scheduler k of them later."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.perf.bench import simulate_bench
from app.core.perf.bench_args import BenchArgs
from app.core.perf.physics import Coefficients, StepPhysics, slower_device, step_physics
from app.core.perf.predict import fit_for
from app.core.result import Estimate
from app.core.specs import ServeConfig
from bench import perf_frontend as PF


def _plan() -> tuple[Estimate, StepPhysics, Coefficients]:
    model, device = find_model("meta-llama/Llama-3.1-8B-Instruct"), find_device("nvidia-h100-sxm-80gb")
    serve = ServeConfig()
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.19.0")
    physics = step_physics(estimate=est, model=model, device=device, serve=serve)
    return est, physics, fit_for(family="hopper", vllm_version="0.19.0")[1].bench_coefficients()


def _mean_ttft_ms(args: BenchArgs, frontend_s: float) -> float:
    est, physics, base = _plan()
    coefficients = replace(base, frontend_request_s=frontend_s)
    point = simulate_bench(estimate=est, physics=physics, coefficients=coefficients, args=args)
    return point.values["mean_ttft_ms"]


def test_a_burst_reaches_the_engine_one_request_after_another() -> None:
    # 4 prompts of 512 tokens at t = 0, 32 output tokens each; the API server 1 s a request. An 8B model
    # decodes 32 tokens on an H100 in ~0.2 s, so each request is alone in the engine: the k-th (k = 1..4)
    # reaches it k s after the send, its TTFT is k s + the lone request's. Mean: (1+2+3+4)/4 = 2.5 s above
    # the lone TTFT (the 1-prompt run at frontend 0)
    burst = BenchArgs(num_prompts=4, random_input_len=512, random_output_len=32)
    lone = _mean_ttft_ms(burst.model_copy(update={"num_prompts": 1}), 0.0)
    assert _mean_ttft_ms(burst, 1.0) == pytest.approx(lone + 2500.0, abs=1.0)
    # and none of it without the serial front end: the 4 prefill together, a little slower than 1
    assert lone < _mean_ttft_ms(burst, 0.0) < lone + 100.0


def test_a_closed_loop_of_one_client_waits_only_its_own_turn() -> None:
    # one client: each request is sent when the previous completes, so the API server is always free and
    # each waits 1 s exactly once: the mean TTFT is the lone TTFT + 1,000 ms
    loop = BenchArgs(num_prompts=3, max_concurrency=1, random_input_len=512, random_output_len=32)
    assert _mean_ttft_ms(loop, 1.0) == pytest.approx(_mean_ttft_ms(loop, 0.0) + 1000.0, abs=1.0)


def test_the_front_end_is_cpu_work_a_slower_device_keeps() -> None:
    _, _, base = _plan()
    with_frontend = replace(base, frontend_request_s=0.004)
    assert slower_device(with_frontend, factor=2.0).frontend_request_s == 0.004


def test_only_the_frontend_option_tries_the_grid() -> None:
    assert PF.frontend_grid("physics+prefill+v0") == (0.0,)
    assert PF.frontend_grid("physics+prefill+v0+frontend") == PF.FRONTEND_GRID_S
