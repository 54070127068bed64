"""Pydantic's validation errors for the web layer: each message a catalog sentence (``message_of``, in
app.core.pydantic_messages, shared with the core's readers), a 422 listing at most a few of them, and a
query string's errors as FastAPI's own. The page banner and the API's ``msg`` render with ``tr``.
"""

from __future__ import annotations

from typing import Any

from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from app.core.pydantic_messages import message_of
from app.core.text import Text
from app.web.i18n import tr

__all__ = ["ECHO_MAX_ERRORS", "localized", "message_of", "query_error"]

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
