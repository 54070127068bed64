"""JSON answers serialised where they are computed, in the shape the planner owns.

FastAPI encodes a returned dict with ``jsonable_encoder`` (a generic walk in Python: ~0.7 ms for an
estimate, as much again as the estimate itself) and then ``json.dumps`` on the event loop. A payload
built from pydantic's ``model_dump(mode="json")`` (done in Rust) is already plain JSON data, so
:func:`json_response` only runs ``json.dumps`` with Starlette's JSONResponse settings: the bytes are
those JSONResponse(jsonable_encoder(payload)) gives (tests/web/test_fast_paths.py compares them on
every preset).
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import Response

JSON_MEDIA_TYPE = "application/json"


def json_bytes(data: Any) -> bytes:
    """Starlette's JSONResponse.render: compact, UTF-8, NaN refused."""
    return json.dumps(data, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode(
        "utf-8"
    )


def json_response(data: Any, *, status_code: int = 200) -> Response:
    """``data`` (plain JSON data: dicts, lists, str, int, float, bool, None) as a JSON response."""
    return Response(json_bytes(data), status_code=status_code, media_type=JSON_MEDIA_TYPE)
