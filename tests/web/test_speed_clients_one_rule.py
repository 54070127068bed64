"""The Speed section's clients follow one rule everywhere (issue 23, round 8 page fault 6).

app.core.perf.workload.speed_clients: the clients given, else the benchmark's --max-concurrency, else
the target concurrency N when given, else 16. The planner form's placeholder and slider used
PlannerParams.speed_concurrency whenever the lengths could not give a workload, a copy of that rule
without the benchmark's --max-concurrency: with a 4-client benchmark and an input of 1,024 tokens on
--max-model-len 1024 (no room for output: the Speed section names input_tokens) the box said 16.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from app.core.perf.bench_args import BenchArgs
from app.core.perf.workload import DEFAULT_SPEED_CONCURRENCY, speed_clients

PAGE = {"v": "1", "model": "meta-llama/Llama-3.1-8B-Instruct", "max_model_len": "1024"}
BENCH = {"bench_serve": "true", "max_concurrency": "4"}


def _placeholder(html: str) -> str:
    tag = re.search(r'<input[^>]*name="concurrency"[^>]*>', html)
    assert tag
    found = re.search(r'placeholder="([^"]*)"', tag.group(0))
    assert found
    return found.group(1)


@pytest.mark.parametrize(
    "lengths", [{}, {"input_tokens": "1024"}, {"input_tokens": "900", "output_tokens": "900"}]
)
def test_the_placeholder_is_the_benchmarks_cap_whatever_the_lengths(
    client: Any, lengths: dict[str, str]
) -> None:
    page = client.get("/", params={**PAGE, **BENCH, **lengths})
    assert page.status_code == 200
    assert _placeholder(page.text) == "4"


def test_the_rule() -> None:
    capped = BenchArgs(max_concurrency=4)
    assert speed_clients(concurrency=8, target_concurrency=64, bench=capped) == 8
    assert speed_clients(concurrency=None, target_concurrency=64, bench=capped) == 4
    assert speed_clients(concurrency=None, target_concurrency=64, bench=BenchArgs()) == 64  # no cap
    assert speed_clients(concurrency=None, target_concurrency=None, bench=None) == DEFAULT_SPEED_CONCURRENCY
