"""One problem type for every banner line, inline error and API detail the pages build.

A ``Problem`` names the field, says what is wrong (a core ``Text`` until :func:`problems_of`
translates it, or a sentence already in the request's language) and, when the page dropped a
value it could not use, which value that was.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from app.core.errors import PlannerError
from app.web.i18n import tr

SHOWN_VALUE_CHARS = 60  # a dropped value is echoed at most this long (…)


@dataclass(frozen=True)
class Problem:
    field: str
    message: str  # a core Text (translated by problems_of) or a sentence in the request's language
    value: str = ""  # the value that was dropped ("" when none was, or it is not worth echoing)
    status: int = 422  # 413 for a body over the limit (the doctor's paste)


def shown_value(value: object) -> str:
    """A dropped value as a banner echoes it: at most SHOWN_VALUE_CHARS characters."""
    text = str(value)
    return text if len(text) <= SHOWN_VALUE_CHARS else text[: SHOWN_VALUE_CHARS - 3] + "..."


def problems_of(items: Iterable[Problem]) -> tuple[Problem, ...]:
    """The problems with their messages in the request's language (what a template shows)."""
    return tuple(Problem(p.field, tr(p.message), p.value, p.status) for p in items)


def error_of(exc: PlannerError) -> Problem:
    return Problem(exc.field, tr(exc.message))
