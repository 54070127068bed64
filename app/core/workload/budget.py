"""How much work a simulation may do, and the lower bound on it known before the run.

The simulator's cost is the number of steps it *steps* (a step with a prefill chunk, an admission,
a finish or a preemption costs O(1) plus the requests it touches) plus one unit per decode-only span
it computes in closed form (``simulator._Simulator._fast_forward``). Steps with a prefill chunk
are always stepped, and one step prefills at most ``max_num_batched_tokens`` tokens, so

    stepped steps >= ceil(sum over servable requests of uncached prompt tokens / max_num_batched_tokens)

is known once the requests are drawn, before the first step: a workload above the limit is refused
then, naming both numbers. During the run the same counter is checked (preemptions recompute
prompts, so a run can need more than its lower bound), and a wall-clock deadline is the last line
of defence. Every refusal is a ``WorkloadTooLargeError``: a 422 on the API, an inline problem on
the page.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.core.errors import PlannerError
from app.core.text import Text

# ~1-3 µs per stepped step on the 2-core reference machine (bench/hostile.py, bench/workload.py):
# 600,000 units stay under ~2 s of server time even on the slowest stepped steps.
MAX_SIMULATION_WORK = 600_000
# The last line of defence, below the 4 s a simulation may take end to end (issue 19).
MAX_SIMULATION_SECONDS = 3.0
DEADLINE_CHECK_EVERY = 1024  # work units between two looks at the clock
WORKLOAD_FIELD = "num_requests"  # the input a user changes first to make a workload smaller


class WorkloadTooLargeError(PlannerError):
    """A simulation that would take (or took) more work than a request may cost."""

    def __init__(self, message: str, *, needed: int, limit: int) -> None:
        super().__init__(WORKLOAD_FIELD, message)
        self.needed = needed
        self.limit = limit


def too_much_work(*, needed: int, limit: int, at_least: bool) -> WorkloadTooLargeError:
    if at_least:
        message = Text(
            "this workload needs at least {needed:,} simulator steps; the limit is {limit:,} — fewer requests, shorter prompts or a larger max_num_batched_tokens",
            needed=needed,
            limit=limit,
        )
    else:
        message = Text(
            "this workload needs more than {limit:,} simulator steps (preemptions recompute prompts); the limit is {limit:,} — fewer requests or shorter lengths",
            limit=limit,
        )
    return WorkloadTooLargeError(message, needed=needed, limit=limit)


def out_of_time(*, seconds: float, work: int) -> WorkloadTooLargeError:
    return WorkloadTooLargeError(
        Text(
            "the simulation did not finish within {seconds:g} s of server time ({work:,} steps done) — fewer requests or shorter lengths",
            seconds=seconds,
            work=work,
        ),
        needed=work,
        limit=work,
    )


def prefill_steps_needed(*, uncached_prompt_tokens: Iterable[int], max_num_batched_tokens: int) -> int:
    """The fewest steps that can prefill these prompts: one step takes at most the token budget."""
    total = sum(uncached_prompt_tokens)
    return -(-total // max_num_batched_tokens)
