"""bench/perf_loso.py's ``+tokq``: the prompts a burst sends together queue for the API server's one tokenizer
worker (vLLM 0.33.0 vllm/renderers/base.py, renderer_num_workers = 1), worked by hand."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from tests.unit.test_perf_loso_bands import _perf_loso


def _run(prompt_tokens: float, *, prompts: int, cap: int | None, rate: float = math.inf) -> object:
    L = _perf_loso()
    args = SimpleNamespace(num_prompts=prompts, max_concurrency=cap, request_rate=rate)
    return L.Run("s", {}, {}, prompt_tokens=prompt_tokens, context=SimpleNamespace(args=args))


def test_a_burst_queues_for_the_tokenizer_and_a_closed_loop_only_its_first_wave() -> None:
    L = _perf_loso()
    # 1,000 ShareGPT-like prompts at once (230 tokens each) at 0.004 ms a token: 0.92 ms apiece, the k-th waits
    # k - 1 of them, 999 / 2 x 0.92 = 459.54 ms on average
    assert L.tokenizer_queue_ms(_run(230, prompts=1000, cap=None), 0.004) == pytest.approx(459.54)
    # 64 clients, 640 prompts of 1,024 tokens: only the first wave of 64 queues, 63 / 2 x 4.096 ms x 64 / 640
    assert L.tokenizer_queue_ms(_run(1024, prompts=640, cap=64), 0.004) == pytest.approx(12.9024)
    # one client, or a finite rate: nothing arrives together
    assert L.tokenizer_queue_ms(_run(1024, prompts=20, cap=1), 0.004) == 0.0
    assert L.tokenizer_queue_ms(_run(1024, prompts=480, cap=None, rate=8.0), 0.004) == 0.0
