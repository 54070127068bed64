"""JSON answers serialised where they are computed (the route's thread), not on the event loop.

FastAPI serialises what a sync route returns after the route's thread has finished: for a ``dict``
it validates the dict again (in the thread pool: a copy) and dumps it with pydantic on the event loop,
where every other request waits behind it. A route that returns a :class:`Response` skips both, so:

* :func:`json_response` is Starlette's JSONResponse of plain JSON data (a json-mode dump: /api/estimate);
* :func:`dumped_response` is the bytes FastAPI's own ``dict[str, Any]`` response field would give (the
  same pydantic ``dump_json``: str subclasses, models, tuples and inf handled exactly as before) for the
  answers that hold models and translated sentences (/api/performance, /api/fleet, /api/recommend);
  tests/web/test_fast_paths.py compares the bytes with FastAPI's.

Declare ``response_model=dict[str, Any]`` on such a route so its OpenAPI schema stays the same.
"""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse, Response
from pydantic import TypeAdapter

JSON_MEDIA_TYPE = "application/json"
_ANSWER = TypeAdapter(dict[str, Any])  # what FastAPI builds for a route annotated ``-> dict[str, Any]``


def json_response(data: Any, *, status_code: int = 200) -> Response:
    """``data`` (plain JSON data: dicts, lists, str, int, float, bool, None) as a JSON response."""
    return JSONResponse(data, status_code=status_code)


def dumped_response(answer: dict[str, Any]) -> Response:
    """``answer`` as FastAPI answers a route returning it (pydantic's dump_json, by alias), made here."""
    return Response(_ANSWER.dump_json(answer, by_alias=True), media_type=JSON_MEDIA_TYPE)
