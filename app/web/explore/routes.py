"""Explore page routes: `GET /explore` (page or htmx fragment), `GET /api/blocks`, `POST /api/workload`."""

from __future__ import annotations

import dataclasses
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError

from app.core.errors import PlannerError
from app.core.plan import apply_quantization_flag
from app.core.text import Text
from app.core.workload import (
    WORKLOAD_PRESETS,
    simulate,
)
from app.web.explore.params import (
    BlocksQuery,
    WorkloadRequest,
    parse_explore_lenient,
)
from app.web.explore.service import (
    block_sizes,
    engine_for,
    prefix_for,
    workload_spec,
)
from app.web.explore.views import (
    build_view,
    hidden_inputs,
)
from app.web.inputs.links import page_items
from app.web.inputs.params import StrictPlannerParams
from app.web.inputs.resolve import Resolved, computed, estimate_for, resolve_strict
from app.web.templating import render_view
from app.web.validation import query_error

router = APIRouter()
api_router = APIRouter(prefix="/api", tags=["api"])


# ---- routes ------------------------------------------------------------------------------------


@router.get("/explore", name="explore", response_class=HTMLResponse)
@router.post("/explore", name="explore_post", response_class=HTMLResponse)
async def explore_page(request: Request) -> Response:
    """The explorer: by GET its permalink, by POST its form (a pasted config.json rides along; the permalink packs it)."""
    items = await page_items(request)
    return await computed(items, _explore, request, items)  # a simulation: off the event loop


def _explore(request: Request, items: list[tuple[str, str]]) -> Response:
    params, problems = parse_explore_lenient(items)
    view = build_view(request, params, problems)
    return render_view(request, "explore.html", view, hidden=hidden_inputs(view.params))


def _resolve_api(params: StrictPlannerParams, quantization: str | None = None) -> Resolved:
    resolved = resolve_strict(params)
    if quantization:
        resolved = dataclasses.replace(resolved, model=apply_quantization_flag(resolved.model, quantization))
    return resolved


@api_router.get("/blocks", name="api_blocks")
def blocks_api(request: Request) -> dict[str, Any]:
    """The block-size table and the prefix-cache calculator for the /explore query parameters."""
    try:
        query = BlocksQuery.model_validate(dict(request.query_params.multi_items()))
    except ValidationError as exc:
        raise query_error(exc) from exc
    resolved = _resolve_api(query)
    est = estimate_for(resolved)
    sizes = block_sizes(resolved, est, query)
    prefix = prefix_for(resolved, query, est, sizes)
    return {
        "attention_backend": sizes.backend,
        "default_block_size": sizes.default_block_size,
        "block_size": sizes.current_block_size,
        "kv_cache_bytes": est.kv_cache_bytes,
        "max_model_len": est.max_model_len,
        "typical_lengths": list(query.typical_lengths),
        "block_sizes": [
            {**row.model_dump(), "note": sizes.notes.get(row.block_size) or row.rejected_reason}
            for row in sizes.rows
        ],
        "prefix": {
            **prefix.hit.model_dump(),
            "extra_keys_differ": list(query.extra_keys_differ),
            "num_requests": prefix.num_requests,
            "bytes_per_block": prefix.bytes_per_block,
            "memory_saved_bytes": prefix.saved_bytes,
            "tokens_saved": prefix.saved_tokens,
            "prefix_caching_enabled": prefix.caching_enabled,
        },
    }


@api_router.post("/workload", name="api_workload")
def workload_api(body: WorkloadRequest) -> dict[str, Any]:
    """Simulate a workload on the engine /api/estimate predicts for the same parameters."""
    if (body.classes is None) == (body.preset is None):
        raise PlannerError(
            "classes", Text("give exactly one of classes (a list of request classes) or preset")
        )
    resolved = _resolve_api(body, body.quantization)
    est = estimate_for(resolved)
    engine = engine_for(resolved, est)
    spec = workload_spec(
        preset=WORKLOAD_PRESETS[body.preset] if body.preset else None,
        classes=body.classes,
        num_requests=body.num_requests,
        concurrency=body.concurrency,
        arrival_rate=body.arrival_rate,
        seed=body.seed,
    )
    result = simulate(workload=spec, engine=engine)
    return {
        **result.model_dump(),
        "preset": body.preset,
        "engine": engine.model_dump(),
        "workload": spec.model_dump(),
        "attention_backend": est.attention_backend,
        "vllm_version": est.vllm_version,
    }
