"""bench/perf_loso.py's TTFT overhead shift and ``+tokq`` (round 14b): the simulation carries the shipped overhead
(5 ms + 0.008 ms a prompt token, side by side), so a correction's shift replaces both parts; with ``+tokq`` the
per-token part is simulated in the API server's tokenizer queue and only the base is shifted. Worked by hand."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.unit.test_perf_loso_bands import _perf_loso

HOST = (0.0, 0.0)
SHIPPED_KEY = (0.0, 0.0, 1.0, 0.0, 1.0)  # host point, device factor, eager time, compute factor
QUEUED_KEY = (*SHIPPED_KEY, "tokq", 0.004)


def _run(prompt_tokens: float) -> object:
    L = _perf_loso()
    context = SimpleNamespace(
        physics=SimpleNamespace(eager=False),
        coefficients=SimpleNamespace(ttft_overhead_s=0.005, ttft_per_prompt_token_s=8e-6),
        cluster="unknown-device model tp1",
        engine="v1",
    )
    run = L.Run(
        "s",
        {"mean_ttft_ms": 100.0},
        {},
        prompt_tokens=prompt_tokens,
        shipped_ttft_overhead_ms=5.0,
        context=context,
    )
    # the shipped simulation (100 ms) and the queued one at 0.004 ms a token (120 ms), as if simulated
    run.variants[SHIPPED_KEY] = {"mean_ttft_ms": 100.0}
    run.variants[QUEUED_KEY] = {"mean_ttft_ms": 120.0}
    return run


def test_the_shipped_overhead_shifts_nothing() -> None:
    L = _perf_loso()
    run = _run(1000)
    assert run.shipped_ttft_per_token_ms == pytest.approx(0.008)
    # 5 ms + 0.008 ms a token is what the simulation already carries: 100 ms stays (before round 14b the
    # shift added the correction's per-token part on top of the shipped one: 100 + 8 = 108 ms)
    same = L.Correction(mode="physics", host=HOST, ttft_base_ms=5.0, ttft_per_token_ms=0.008)
    assert same.predict(run)["mean_ttft_ms"] == pytest.approx(100.0)


def test_a_correction_replaces_both_parts() -> None:
    L = _perf_loso()
    run = _run(1000)
    # 10 ms + 0.004 ms a token instead of 5 + 0.008: 100 + (10 - 5) + (0.004 - 0.008) x 1,000 = 101 ms
    other = L.Correction(mode="physics", host=HOST, ttft_base_ms=10.0, ttft_per_token_ms=0.004)
    assert other.predict(run)["mean_ttft_ms"] == pytest.approx(101.0)


def test_the_queue_simulates_the_per_token_part_and_shifts_the_base() -> None:
    L = _perf_loso()
    run = _run(1000)
    # the queued simulation at 0.004 ms a token (120 ms) already carries the tokenisation: only the base
    # moves, 120 + (10 - 5) = 125 ms
    queued = L.Correction(
        mode="physics+prefill+v0+tokq",
        host=HOST,
        ttft_base_ms=10.0,
        ttft_per_token_ms=0.004,
        tokenizer_queue=True,
    )
    assert queued.predict(run)["mean_ttft_ms"] == pytest.approx(125.0)
