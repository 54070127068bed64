"""Compare two vLLM versions: one configuration through `estimate()` for each, side by side.

`GET /compare?<planner params>&a=0.19.0&b=0.33.0`. Rows whose values differ are flagged, each with a
one-line reason built from the `VersionRules` the two releases differ in (app/web/version_notes.py)
and from the rows it depends on. Bad inputs never fail the page: each is named in a banner and
replaced by its default, as on the planner.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from app.web.compare.views import build_view
from app.web.templating import render

router = APIRouter()


@router.get("/compare", name="compare", response_class=HTMLResponse)
def compare(request: Request) -> Response:
    view = build_view(request)
    return render(request, "compare.html", None, {"view": view}, status=422 if view.error else 200)
