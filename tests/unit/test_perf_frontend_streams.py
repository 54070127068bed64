"""A new request waits behind the API server's work for the streams already running
(physics.Coefficients.frontend_stream_s, round 13b: bench/perf_frontend.py says why): the event loop that
takes it also turns every engine step's outputs into each running stream's SSE chunk (vLLM 0.33.0
v1/engine/async_llm.py, AsyncLLM._run_output_handler), so its admission is delayed by the per-stream cost
times the streams in flight when it is sent; the running streams' own steps are not."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.core.perf.physics import slower_device
from app.core.perf.predict import fit_for
from app.core.perf.simulate import SimResult
from bench import perf_frontend as PF
from tests.perf_steps import serial_run

# every step costs 10 ms whatever it carries, the host's work in series (tests.perf_steps.FLAT_SERIAL)


def _third_request(*, second_output: int, stream_s: float) -> SimResult:
    # requests 0 and 1 sent at 0: both 100-token prompts are prefilled in the step [0, 10] ms, then decode
    # (steps end at 20, 30, ...). Request 1 has `second_output` tokens: 100 keeps it running past 25 ms, 2
    # ends it at 20 ms. Request 2 is sent at 25 ms, during the step [20, 30].
    return serial_run(
        prompts=[100, 100, 100],
        outputs=[100, second_output, 2],
        send_at=[0.0, 0.0, 0.025],
        frontend_stream_s=stream_s,
    )


def test_without_the_term_the_new_request_waits_only_for_the_step_in_flight() -> None:
    # it reaches the scheduler at 25 ms, joins the queue when [20, 30] ends and is prefilled in [30, 40]:
    # TTFT 40 - 25 = 15 ms, whatever is running
    assert _third_request(second_output=100, stream_s=0.0).ttft_s[2] == pytest.approx(0.015)
    assert _third_request(second_output=2, stream_s=0.0).ttft_s[2] == pytest.approx(0.015)


def test_the_wait_grows_with_the_streams_running() -> None:
    # 8 ms a running stream. One stream (request 0; request 1 ended at 20 ms): it reaches the scheduler at
    # 25 + 8 = 33 ms, after [30, 40] began, so it is prefilled in [40, 50]: TTFT 50 - 25 = 25 ms.
    # Two streams: 25 + 16 = 41 ms, during [40, 50]: prefilled in [50, 60], TTFT 35 ms
    assert _third_request(second_output=2, stream_s=0.008).ttft_s[2] == pytest.approx(0.025)
    assert _third_request(second_output=100, stream_s=0.008).ttft_s[2] == pytest.approx(0.035)


def test_the_running_streams_keep_their_pace() -> None:
    # request 0's TPOT: 99 gaps of one 10 ms step each, with or without the front end's backlog (a flat
    # step: the late prefill of request 2 takes no longer than a decode step)
    for stream_s in (0.0, 0.008):
        assert _third_request(second_output=100, stream_s=stream_s).tpot_s[0] == pytest.approx(0.010)


def test_a_burst_finds_nothing_running() -> None:
    # every request sent at t = 0, before the engine's first step: no stream runs yet, so no backlog
    res = serial_run(
        prompts=[100, 100, 100],
        outputs=[3, 3, 3],
        send_at=[0.0, 0.0, 0.0],
        frontend_stream_s=0.008,
    )
    assert res.ttft_s == [pytest.approx(0.010)] * 3


def test_the_stream_cost_is_cpu_work_a_slower_device_keeps() -> None:
    base = fit_for(family="hopper", vllm_version="0.19.0")[1].bench_coefficients()
    assert slower_device(replace(base, frontend_stream_s=1e-4), factor=2.0).frontend_stream_s == 1e-4


def test_only_the_streams_option_tries_the_grid() -> None:
    assert PF.streams_grid("physics+prefill+v0") == (0.0,)
    assert PF.streams_grid("physics+prefill+v0+streams") == PF.STREAMS_GRID_S
