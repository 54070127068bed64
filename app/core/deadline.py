"""A CPU deadline for one request's computation (issue 27: a work budget on every endpoint that computes).

The searches (recommend, fleet), the speed model, the planner's sections and the doctor each bound
their search space (powers of two for TP, PP and nodes; a fixed number of layouts); this is the last
line of defence for what cannot be bounded in advance — a pasted config of 10,000 layers makes every
estimate cost its layer count. An entry point opens a budget::

    with cpu_budget(seconds=3.0, field="nodes", advice=Text("fewer nodes or devices per node")):
        ...  # every pipeline stage app.core.estimate computes checks it

and a computation still running past it raises :class:`WorkBudgetError` (a 4xx naming ``field`` and
saying what to shrink). The clock is ``time.thread_time``: the CPU of the
request's own thread, so other requests running at the same time do not count against it. Without
an open budget (the CLI, the tests of the core) ``check`` does nothing. The web opens one per request
(``app.web.security.SecurityMiddleware``, by path); a thread is timed from its first check, so the
parsing before the first estimate (bounded by its own limits) is not counted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from app.core.text import Text


class _Budget:
    """One request's budget; each thread that computes for it is timed from its first check."""

    def __init__(
        self, seconds: float, field: str, advice: str, started: dict[int, float] | None = None
    ) -> None:
        self.seconds = seconds
        self.field = field
        self.advice = advice
        self.started: dict[int, float] = {} if started is None else started


_current: ContextVar[_Budget | None] = ContextVar("kvplan_cpu_budget", default=None)


class WorkBudgetError(Exception):
    """The computation needed more CPU than its budget: the message names what to shrink.

    Not a PlannerError on purpose: the core catches PlannerError to mean "vLLM refuses this candidate"
    (the recommender and the fleet search try the next one), which would turn a spent budget into a
    wrong answer. The web answers it as a 422 naming ``field`` (app.web.app)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@contextmanager
def cpu_budget(*, seconds: float, field: str, advice: str) -> Iterator[None]:
    """Open a budget of ``seconds`` of CPU for what runs in this context (threads started from it with
    the context copied, as Starlette's thread pool does, included); an inner budget replaces none."""
    if _current.get() is not None:
        yield
        return
    token = _current.set(_Budget(seconds, field, advice))
    try:
        yield
    finally:
        _current.reset(token)


@contextmanager
def naming(*, field: str, advice: str) -> Iterator[None]:
    """Within this block a spent budget names ``field`` and says ``advice``: the part of the request
    that is computing (a simulated benchmark names ``bench.num_prompts``, not the path's default
    ``config_json``). The clock is the open budget's own, so relabelling never grants more time; a
    no-op without an open budget."""
    budget = _current.get()
    if budget is None:
        yield
        return
    token = _current.set(_Budget(budget.seconds, field, advice, started=budget.started))
    try:
        yield
    finally:
        _current.reset(token)


def check() -> None:
    """Raise WorkBudgetError when the open budget is spent in this thread (a no-op without one)."""
    budget = _current.get()
    if budget is None:
        return
    now = time.thread_time()
    started = budget.started.setdefault(threading.get_ident(), now)
    if now - started > budget.seconds:
        raise WorkBudgetError(
            budget.field,
            Text(
                "this needs more than {seconds} s of computing, the limit for one request: {advice}",
                seconds=format(budget.seconds, "g"),
                advice=budget.advice,
            ),
        )
