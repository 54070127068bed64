"""The JSON twin of the page: same parameters, strict validation, the Estimate as data."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from app.core.catalog import list_devices, list_models
from app.web.i18n import gettext
from app.web.inputs.links import to_query
from app.web.inputs.params import StrictPlannerParams, parse_strict
from app.web.inputs.resolve import estimate_for, prefetch_hub_model, resolve_strict
from app.web.templating import render
from app.web.validation import query_error

router = APIRouter(prefix="/api", tags=["api"])


def _estimate_payload(params: StrictPlannerParams) -> dict[str, Any]:
    resolved = resolve_strict(params)
    est = estimate_for(resolved)
    inputs = resolved.params.model_dump(exclude={"config_json", "lang"})
    inputs.update(
        vllm_version=resolved.vllm_version,
        model=resolved.model_label,
        model_source=resolved.model_source,
        query=to_query(resolved.params),
    )
    return {**est.model_dump(), "inputs": inputs}


@router.get("/estimate", name="api_estimate_get")
async def estimate_get(request: Request) -> dict[str, Any]:
    """Query parameters as on the page (`/?…` permalinks work here unchanged)."""
    try:
        params = parse_strict(request.query_params.multi_items())
    except ValidationError as exc:
        raise query_error(exc) from exc
    await prefetch_hub_model(params)
    return await run_in_threadpool(_estimate_payload, params)  # off the event loop


@router.post("/estimate", name="api_estimate_post")
async def estimate_post(params: StrictPlannerParams) -> dict[str, Any]:
    """The same parameters as a JSON object."""
    await prefetch_hub_model(params)
    return await run_in_threadpool(_estimate_payload, params)


@router.get("/models", name="api_models")
def models() -> list[dict[str, Any]]:
    return [
        {
            "id": m.id,
            "aliases": list(m.aliases),
            "confidence": m.confidence,
            "params_total": m.params_total,
            "description": m.description,
        }
        for m in list_models()
    ]


@router.get("/devices", name="api_devices")
def devices() -> list[dict[str, Any]]:
    return [d.model_dump() for d in list_devices()]


docs_router = APIRouter()


@docs_router.get("/docs", name="api_docs", response_class=HTMLResponse, include_in_schema=False)
def api_docs(request: Request) -> HTMLResponse:
    """A self-hosted endpoint list (FastAPI's Swagger page would load its assets from a CDN)."""
    schema = request.app.openapi()
    endpoints = [
        {
            "method": method.upper(),
            "path": path,
            # translated through the catalog (scripts/extract_messages.py extracts them from the schema)
            "summary": gettext(op["summary"]) if op.get("summary") else "",
            "doc": gettext(op["description"]) if op.get("description") else "",
        }
        for path, ops in schema["paths"].items()
        for method, op in ops.items()
    ]
    return render(request, "docs.html", None, {"endpoints": endpoints})
