"""The pages' reading of their inputs: never fails; each field that does not validate is dropped
and reported as a :class:`Problem` naming it and echoing the value. One loop for every feature's
parameter model (the planner's, the explorer's, the fleet's). A dropped field stops the page (nothing
is computed with its default standing in: ``resolve_lenient`` / ``estimate_for``), except the
presentation fields (``problems.PRESENTATION_FIELDS``: the language), which fall back."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from app.web.inputs.problems import PRESENTATION_FIELDS, Problem, shown_value
from app.web.validation import message_of

Model = TypeVar("Model", bound=BaseModel)
Query = Mapping[str, str] | Iterable[tuple[str, str]]


def known_values(model: type[BaseModel], query: Query) -> dict[str, Any]:
    """The query's values for ``model``'s fields; a repeated key: the last one wins, as with argparse (a blank
    one too: the model's validator then drops a blank its ``unset_when_blank`` names, app/web/inputs/unset.py)."""
    fields = model.model_fields
    pairs = query.items() if isinstance(query, Mapping) else query
    return {key: value for key, value in pairs if key in fields}


def parse_lenient(model: type[Model], query: Query) -> tuple[Model, list[Problem]]:
    """``model`` from ``query``, dropping (and reporting) each field that does not validate."""
    raw = known_values(model, query)
    problems: list[Problem] = []
    for _ in range(len(model.model_fields) + 1):
        try:
            return model.model_validate(raw), problems
        except ValidationError as exc:
            for error in exc.errors():
                name = str(error["loc"][0]) if error["loc"] else ""
                if name in raw:
                    value = shown_value(raw.pop(name))
                    stops = name not in PRESENTATION_FIELDS
                    problems.append(Problem(name, message_of(error), value=value, stops=stops))
    return model(), problems  # unreachable in practice: each round removes a field
