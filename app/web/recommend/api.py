"""`POST /api/recommend`: the remedy table of app.core.recommend as JSON, plus its view model.

The body is the /api/estimate parameters plus the target (S*, N*) and what the recommender may use
(devices per node, nodes, fp8 KV, latency or throughput). Every domain error is a 422 naming the body
field; pydantic errors are 422 too; nothing here turns bad input into a 500.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import Response

from app.core.errors import PlannerError
from app.web.encoding import dumped_response
from app.web.inputs.problems import api_message
from app.web.recommend.params import RecommendRequest
from app.web.recommend.service import payload, run

router = APIRouter(prefix="/api", tags=["api"])


def _unprocessable(field: str, message: str) -> HTTPException:
    return HTTPException(status_code=422, detail=[{"loc": ["body", field], "msg": message}])


@router.post("/recommend", name="api_recommend", response_model=dict[str, Any])
def recommend_post(body: RecommendRequest) -> Response:
    """Which flags to change, in the seed's order, to hold N* sequences of S* tokens."""
    try:
        resolved, rec = run(body)
    except PlannerError as exc:
        raise _unprocessable(exc.field, api_message(exc)) from exc
    return dumped_response(payload(resolved, rec))  # encoded here, not on the event loop
