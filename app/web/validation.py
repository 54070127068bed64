"""Pydantic's validation messages as catalog sentences, so a rejected input is named in the user's language.

Pydantic writes its messages in English. For the error types these forms produce, its English template
is a message id here (the English text is unchanged); the planner's own validators raise
``ValueError(Text(…))``, whose sentence travels in the error's context. Anything else keeps pydantic's
English. The page banner and the API's ``msg`` render the result with ``tr``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from app.core.text import N_, Message, Text
from app.web.i18n import tr

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


# A 422 lists at most this many errors, then one line saying how many more: 7,500 unknown keys used
# to answer a 764 KB 422 (an amplification of the request ~10x); now ~2 KB whatever the request.
ECHO_MAX_ERRORS = 8


def _more(rest: list[Any]) -> dict[str, Any]:
    unknown = sum(1 for error in rest if error.get("type") == "extra_forbidden")
    if unknown == len(rest):
        text = Text("and {count} more unknown parameters (not listed)", count=format(unknown, ","))
    else:
        text = Text("and {count} more errors (not listed)", count=format(len(rest), ","))
    root = rest[0].get("loc", ())[:1] if rest else ()
    return {"loc": list(root), "msg": tr(text), "type": "too_many_errors", "ctx": {"more": len(rest)}}


def localized(errors: list[Any]) -> list[dict[str, Any]]:
    """Pydantic errors for a JSON body: ``msg`` in the request's language, and the original exception
    in ``ctx`` (not JSON) reduced to its text. At most ``ECHO_MAX_ERRORS`` are listed, then how many more."""
    out: list[dict[str, Any]] = []
    if len(errors) > ECHO_MAX_ERRORS:
        rest = errors[ECHO_MAX_ERRORS:]
        return [*localized(errors[:ECHO_MAX_ERRORS]), _more(rest)]
    for error in errors:
        item = {**error, "msg": tr(message_of(error))}
        ctx = error.get("ctx")
        if ctx and "error" in ctx:
            item["ctx"] = {**ctx, "error": str(ctx["error"])}
        out.append(item)
    return out


def query_error(exc: ValidationError) -> RequestValidationError:
    """A query string's validation errors as FastAPI's own (``loc`` starting at "query"): the one
    path every JSON route's bad query takes, answered by the app's handler through ``localized``."""
    return RequestValidationError(
        [{**err, "loc": ("query", *err["loc"])} for err in exc.errors(include_url=False)]
    )
