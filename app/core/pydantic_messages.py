"""Pydantic's validation messages as catalog sentences, so a rejected input is named in the user's language.

Pydantic writes its messages in English. For the error types the planner's inputs produce, its English
template is a message id here (the English text is unchanged); the planner's own validators raise
``ValueError(Text(…))``, whose sentence travels in the error's context. Anything else keeps pydantic's
English. Core readers (a pasted run's benchmark arguments, app.core.perf.measured) and the web layer
(the page banner, the API's ``msg``, app.web.validation) use the same :func:`message_of`; the edge
renders the result with ``tr``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.text import N_, Message, Text

# error type -> pydantic's English template (pydantic-core 2.x wording; checked against the message
# pydantic actually produced, so a change of wording there falls back to pydantic's text, never a wrong one)
_TEMPLATES: dict[str, str] = {
    "greater_than": N_("Input should be greater than {gt}"),
    "greater_than_equal": N_("Input should be greater than or equal to {ge}"),
    "less_than": N_("Input should be less than {lt}"),
    "less_than_equal": N_("Input should be less than or equal to {le}"),
    "int_parsing": N_("Input should be a valid integer, unable to parse string as an integer"),
    "int_from_float": N_("Input should be a valid integer, got a number with a fractional part"),
    "int_type": N_("Input should be a valid integer"),
    "float_parsing": N_("Input should be a valid number, unable to parse string as a number"),
    "float_type": N_("Input should be a valid number"),
    "finite_number": N_("Input should be a finite number"),
    "bool_parsing": N_("Input should be a valid boolean, unable to interpret input"),
    "bool_type": N_("Input should be a valid boolean"),
    "string_type": N_("Input should be a valid string"),
    "literal_error": N_("Input should be {expected}"),
    "missing": N_("Field required"),
    "extra_forbidden": N_("Extra inputs are not permitted"),
    "json_invalid": N_("Invalid JSON: {error}"),
    "model_attributes_type": N_("Input should be a valid dictionary or object to extract fields from"),
}
# the two with a plural (pydantic writes "1 character" / "2 characters")
_LENGTH_TEMPLATES: dict[tuple[str, bool], str] = {
    ("string_too_short", False): N_("String should have at least {min_length} character"),
    ("string_too_short", True): N_("String should have at least {min_length} characters"),
    ("string_too_long", False): N_("String should have at most {max_length} character"),
    ("string_too_long", True): N_("String should have at most {max_length} characters"),
}


def _shown(value: object) -> object:
    """A bound as pydantic prints it: 1.0 -> 1, 0.5 stays."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


VALUE_ERROR_PREFIX = "Value error, "


def message_of(error: Mapping[str, Any]) -> str:
    """The message of one pydantic error: a translatable Text where possible, else pydantic's English.

    ``value_error`` loses pydantic's "Value error, " prefix either way (the field is named beside it).
    """
    kind = str(error.get("type", ""))
    english = str(error.get("msg", ""))
    ctx = error.get("ctx") or {}
    if kind == "value_error":
        original = ctx.get("error")
        if isinstance(original, ValueError) and original.args and isinstance(original.args[0], Message):
            return original.args[0]
        return english.removeprefix(VALUE_ERROR_PREFIX)
    if kind in ("string_too_short", "string_too_long"):
        bound = ctx.get("min_length" if kind == "string_too_short" else "max_length")
        template = _LENGTH_TEMPLATES[(kind, bound != 1)]
    else:
        template = _TEMPLATES.get(kind, "")
    if not template:
        return english
    params = {name: _shown(value) for name, value in ctx.items() if f"{{{name}}}" in template}
    try:
        text = Text(template, **params)
    except (KeyError, IndexError, ValueError):
        return english
    return text if text == english else english
