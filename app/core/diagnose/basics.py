"""The doctor's small helpers: GiB figures, clipped excerpts, evidence lines and the estimator on what the log ran
(every module of app.core.diagnose reads them)."""

from __future__ import annotations

import functools

from app.core.diagnose.model import MAX_EXCERPT_ERROR_CHARS
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.logs import Evidence, LogFacts
from app.core.result import Estimate
from app.core.specs import GIB, DeviceSpec, ModelSpec, ServeConfig

_as_run = functools.partial(estimate, check_flags=False)  # the log ran its flags; no release check


def fmt_gib(num_bytes: float) -> str:
    return f"{num_bytes / GIB:,.2f} GiB"


def clip(text: str, limit: int = MAX_EXCERPT_ERROR_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def evidence_of(facts: LogFacts, *names: str) -> list[Evidence]:
    seen: dict[int, Evidence] = {}
    for name in names:
        ev = facts.evidence.get(name)
        if ev is not None:
            seen.setdefault(ev.line_no, ev)
    return [seen[no] for no in sorted(seen)]


def safe_estimate(
    *, model: ModelSpec, device: DeviceSpec, serve: ServeConfig, version: str | None, target: int | None
) -> Estimate | None:
    """The estimator on what the log ran, or None when it refuses this combination (or cannot model a value)."""
    try:
        return _as_run(
            model=model, device=device, serve=serve, vllm_version=version, target_concurrency=target
        )
    except (PlannerError, ValueError, ArithmeticError):
        return None
