"""Async scheduling's one-step lag for a new request (vLLM 0.33.0 v1/engine/core.py
EngineCore.step_with_batch_queue: with --async-scheduling the batch queue holds 2 steps; step N+1 is
scheduled as soon as step N is launched, and the input queue is read only after N's result, so a
request that arrives while N runs is first scheduled in step N+2)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.core.perf.simulate import run
from tests.perf_steps import FLAT_10MS, ROOMY_LIMITS


def _two_requests(*, overlapped: bool) -> list[float]:
    # request 0 sent at 0: its 100-token prompt is the 10 ms step [0, 10], then it decodes 99 tokens
    # (steps end at 20, 30, ...). Request 1 is sent at 25 ms, during the step [20, 30].
    res = run(
        rates=replace(FLAT_10MS, host_overlapped=overlapped),
        limits=ROOMY_LIMITS,
        prompts=[100, 100],
        outputs=[100, 2],
        send_at=[0.0, 0.025],
        max_concurrency=None,
        overhead_s=0.0,
        prefix_tokens=0,
    )
    return res.ttft_s


def test_without_async_scheduling_a_new_request_waits_for_the_step_in_flight() -> None:
    # in series: it joins the queue when [20, 30] ends and is prefilled in [30, 40]: TTFT 40 - 25 = 15 ms
    ttft = _two_requests(overlapped=False)
    assert ttft[0] == pytest.approx(0.010)
    assert ttft[1] == pytest.approx(0.015)


def test_with_async_scheduling_it_waits_one_step_more() -> None:
    # step [30, 40] was scheduled when [20, 30] was launched: it is prefilled in [40, 50], TTFT 25 ms
    ttft = _two_requests(overlapped=True)
    assert ttft[0] == pytest.approx(0.010)
    assert ttft[1] == pytest.approx(0.025)


def test_an_idle_engine_schedules_at_once() -> None:
    # nothing in flight when the request arrives (C = 1 closed loop): no lag either way
    res = run(
        rates=FLAT_10MS,
        limits=ROOMY_LIMITS,
        prompts=[100],
        outputs=[3],
        send_at=[0.0],
        max_concurrency=None,
        overhead_s=0.0,
        prefix_tokens=0,
    )
    assert res.ttft_s == [pytest.approx(0.010)]
