"""What every feature's form and banner share: a choice in a <select> and a problem naming its field.

One ``Option`` for every select (rendered by the ``select`` macro of templates/_partials/forms.html)
and one ``Problem`` for every banner line, inline error and API detail the pages build.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from app.core.errors import PlannerError
from app.web.i18n import tr
from app.web.planner.params import FieldProblem


class Option(NamedTuple):
    """One choice of a <select> or <datalist>: a pair, so templates may pass literal (value, label) pairs too."""

    value: str
    label: str


@dataclass(frozen=True)
class Problem:
    field: str
    message: str
    status: int = 422  # 413 for a body over the limit (the doctor's paste)


def problems_of(items: list[FieldProblem]) -> tuple[Problem, ...]:
    return tuple(Problem(p.field, tr(p.message)) for p in items)


def error_of(exc: PlannerError) -> Problem:
    return Problem(exc.field, tr(exc.message))
