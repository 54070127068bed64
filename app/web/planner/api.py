"""The JSON twin of the page: same parameters, strict validation, the Estimate as data."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import yaml  # type: ignore[import-untyped]  # no types-PyYAML in the lock file
from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError

from app.core import deploy
from app.core.catalog import list_devices, list_models
from app.core.fleet import MAX_DEVICES_TOTAL
from app.web.encoding import JsonBodyInThread, json_response
from app.web.i18n import gettext
from app.web.inputs.links import to_query
from app.web.inputs.params import StrictPlannerParams, parse_strict
from app.web.inputs.resolve import computed, estimate_for, resolve_strict
from app.web.planner.service import deploy_plan
from app.web.templating import render
from app.web.validation import query_error

# Query keys of the API routes themselves, not planner parameters (parse_strict refuses unknown keys).
FORMAT_KEY = "format"
DEPLOY_KEYS = ("target", "replicas")
Format = Literal["json", "yaml"]
FormatQuery = Annotated[Format, Query(description="json (default) or yaml")]
TargetQuery = Annotated[deploy.Target, Query(description="command, docker, compose, kubernetes or helm")]
ReplicasQuery = Annotated[int, Query(ge=1, le=MAX_DEVICES_TOTAL, description="replicas (the fleet's layout)")]

router = APIRouter(prefix="/api", tags=["api"], route_class=JsonBodyInThread)  # POST /api/estimate's body


def _estimate_payload(params: StrictPlannerParams) -> dict[str, Any]:
    """The answer as plain JSON data (pydantic's json-mode dump: Text and enums are plain str)."""
    resolved = resolve_strict(params)
    est = estimate_for(resolved)
    inputs = resolved.params.model_dump(mode="json", exclude={"config_json", "hf_quant_config_json", "lang"})
    inputs.update(
        vllm_version=resolved.vllm_version,
        model=resolved.model_label,
        model_source=resolved.model_source,
        query=to_query(resolved.params),
    )
    return {**est.model_dump(mode="json"), "inputs": inputs}


def _own_removed(request: Request, *own: str) -> list[tuple[str, str]]:
    """A GET's query items without the route's own keys (``own``): the planner's parameters, unparsed."""
    return [(k, v) for k, v in request.query_params.multi_items() if k not in own]


def _strict_query(request: Request, *own: str) -> StrictPlannerParams:
    """The planner's parameters of a GET, without the route's own keys (``own``)."""
    return _strict_items(_own_removed(request, *own))


def _strict_items(items: list[tuple[str, str]]) -> StrictPlannerParams:
    try:
        return parse_strict(items)
    except ValidationError as exc:
        raise query_error(exc) from exc


def as_yaml(plain: dict[str, Any]) -> Response:
    """The JSON answer (plain JSON data: no str subclasses, no enums) as YAML, the same keys and
    values, for a ticket or a GitOps repository."""
    text = yaml.safe_dump(plain, sort_keys=False, allow_unicode=True, width=4096)
    return Response(text, media_type="application/yaml")


def _estimate_response(params: StrictPlannerParams, format: Format) -> Response:
    """The answer, encoded where it is computed: FastAPI encodes a returned dict on the event loop
    (jsonable_encoder, ~0.7 ms for an estimate, 2/3 of the loop's time for the request), so a flood of
    estimates held /healthz behind it. The payload is pydantic's json-mode dump, plain data already, so
    neither jsonable_encoder nor a json round trip runs (app/web/encoding.py)."""
    payload = _estimate_payload(params)
    return as_yaml(payload) if format == "yaml" else json_response(payload)


def _query_response(items: list[tuple[str, str]], format: Format) -> Response:
    params = _strict_items(items)
    return _estimate_response(params, format)


@router.get("/estimate", name="api_estimate_get", response_model=None)
async def estimate_get(request: Request, format: FormatQuery = "json") -> dict[str, Any] | Response:
    """Query parameters as on the page (`/?…` permalinks work here unchanged); `format=yaml` for YAML."""
    items = _own_removed(request, FORMAT_KEY)
    return await computed(items, _query_response, items, format)  # parsed off the event loop too


@router.post("/estimate", name="api_estimate_post", response_model=None)
async def estimate_post(
    params: StrictPlannerParams, format: FormatQuery = "json"
) -> dict[str, Any] | Response:
    """The same parameters as a JSON object."""
    # the body decoded in the thread pool too (JsonBodyInThread); pydantic's validation runs here, ~1-5 ms
    return await computed(params, _estimate_response, params, format)  # off the event loop


@router.get(
    "/deploy",
    name="api_deploy",
    response_class=Response,
    responses={200: {"content": {"text/plain": {}, "application/yaml": {}}}},
)
async def deploy_get(
    request: Request,
    target: TargetQuery = "kubernetes",
    replicas: ReplicasQuery = 1,
) -> Response:
    """The planned configuration as a deployment: the command, `docker run`, compose, a Kubernetes
    Deployment + Service, or values for the vLLM production-stack Helm chart (the planner's parameters)."""
    params = _strict_query(request, *DEPLOY_KEYS)
    text = await computed(params, _deploy_text, params, target, replicas)  # off the event loop
    return Response(text, media_type=deploy.MEDIA_TYPES[target])


def _deploy_text(params: StrictPlannerParams, target: deploy.Target, replicas: int) -> str:
    resolved = resolve_strict(params)
    return deploy.render(target, deploy_plan(resolved, estimate_for(resolved), replicas=replicas))


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
