"""A fleet's load stated as a `vllm bench serve` workload (``bench`` on /api/fleet, as on /api/performance).

The fleet sizes replicas for a request rate of one mean request (app.core.fleet.Target). From the
benchmark's arguments: its ``request_rate`` (requests/s, vLLM's name) is the load unless
``requests_per_s`` is given; its mean request (BenchArgs.mean_lengths: the random dataset's centres, the
mean of the ShareGPT requests it draws) stands for the lengths not given (app.core.perf.workload); and
its longest request must pass vLLM's length check (app.core.perf.too_long) on every layout's
max_model_len, as the simulated benchmark's must. A benchmark at ``--request-rate inf`` states no rate:
it is refused unless ``requests_per_s`` gives one.
"""

from __future__ import annotations

import math

from app.core.errors import PlannerError
from app.core.perf.bench_args import BenchArgs
from app.core.perf.bench_run import refuse_too_long
from app.core.text import N_, Msg, Text

# the load's note: the rate the user gave (the benchmark's --request-rate is not the load then), or its own
YOUR_RATE = N_(
    "The load is your {rate:g} requests/s of the benchmark's mean request ({prompt:,} + {output:,} tokens, "
    "{dataset}) unless you set the lengths."
)
BENCH_RATE = N_(
    "The load is the benchmark's: {rate:g} requests/s of its mean request ({prompt:,} + {output:,} tokens, "
    "{dataset}) unless you set the lengths."
)


def bench_rate(bench: BenchArgs, *, requests_per_s: float | None, max_model_len: int) -> tuple[float, Msg]:
    """(the load's requests/s, the note saying where it came from); ``requests_per_s`` is the one the
    user gave (None: not given). PlannerError on ``bench.request_rate`` or the benchmark's length field."""
    refuse_too_long(bench, max_model_len=max_model_len)
    if requests_per_s is not None:
        rate = requests_per_s
    elif math.isinf(bench.request_rate):
        raise PlannerError(
            "bench.request_rate",
            Text(
                "at --request-rate inf the benchmark sends every prompt at once and states no load: give it a "
                "request_rate, or give requests_per_s"
            ),
        )
    else:
        rate = bench.request_rate
    prompt, output = bench.mean_lengths()
    note = Text(
        YOUR_RATE if requests_per_s is not None else BENCH_RATE,  # whose rate the load is
        rate=rate,
        prompt=prompt,
        output=output,
        dataset=bench.dataset_name,
    )
    return rate, note
