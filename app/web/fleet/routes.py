"""Fleet routes: `GET /fleet` (page, or the results block for htmx), `POST /fleet` (the form), and
`POST /api/fleet` (JSON: the planner's parameters plus the load, the SLO, the devices and the price)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from app.core.errors import PlannerError
from app.core.fleet import Candidate
from app.core.pareto import ParetoPoint
from app.core.perf.calibrated import RunsScope
from app.web.encoding import dumped_response
from app.web.fleet.params import FleetParams, StrictFleetParams, fleet_query, parse_fleet_lenient
from app.web.fleet.service import fleet_for, planner_params, point_params
from app.web.fleet.views import build_view
from app.web.inputs.links import page_items, to_query
from app.web.inputs.resolve import computed
from app.web.measured_runs import api_runs, page_bench_error
from app.web.templating import render_view, url_path

router = APIRouter()
api_router = APIRouter(prefix="/api", tags=["api"])


@router.get("/fleet", name="fleet", response_class=HTMLResponse)
@router.post("/fleet", name="fleet_post", response_class=HTMLResponse)
async def fleet_page(request: Request) -> Response:
    """The fleet page: by GET its permalink, by POST its form (a pasted config.json rides along; the permalink packs it)."""
    items = await page_items(request)
    return await computed(items, _fleet, request, items)  # the search: off the event loop


def _fleet(request: Request, items: list[tuple[str, str]]) -> Response:
    params, problems = parse_fleet_lenient(items)
    return render_view(request, "fleet.html", build_view(request, params, problems))


def _runs_fields(runs: int, figures: list[str]) -> dict[str, Any]:
    """Which of a figure's kinds your measured runs scale (TTFT, TPOT, throughput), and the caption
    saying so ("" without runs); the answer, each candidate and each frontier point carry them."""
    return {
        "calibrated_runs": runs,
        "calibrated_figures": figures,
        "speed_caption": RunsScope.of(runs, figures).caption(),  # English, as the notes are
    }


def candidate_json(
    request: Request, params: FleetParams, c: Candidate, calibration: dict[str, Any]
) -> dict[str, Any]:
    """``calibration``: :func:`_runs_fields` of the answer."""
    query = to_query(planner_params(params, c))
    return {
        **c.model_dump(),
        **calibration,
        "permalink": f"{url_path(request, 'planner')}?{query}",
        # the layout's manifests with its replicas (target=command|docker|compose|kubernetes|helm)
        "deploy": deploy_link(request, query, c.replicas),
    }


def deploy_link(request: Request, planner_query: str, replicas: int, target: str = "kubernetes") -> str:
    return f"{url_path(request, 'api_deploy')}?{planner_query}&replicas={replicas}&target={target}"


def pareto_json(
    request: Request, params: FleetParams, p: ParetoPoint, calibration: dict[str, Any]
) -> dict[str, Any]:
    """A frontier point with its planner view (the Speed section at that point's clients)."""
    planner = point_params(params, p.serve, p.concurrency)
    return {
        **p.model_dump(),
        "permalink": f"{url_path(request, 'planner')}?{to_query(planner)}",
        **calibration,
    }


@api_router.post("/fleet", name="api_fleet", response_model=dict[str, Any])
def fleet_api(request: Request, params: StrictFleetParams) -> Response:
    """Every layout that starts, sized for the load and ranked by cost; ``best`` meets the SLO if any does."""
    runs = api_runs(params, params.measured_runs, params.bench)  # bench: the object, else the flat fields
    try:
        result = fleet_for(params, cluster=runs.cluster, bench=runs.bench)
    except PlannerError as exc:  # the flat fields' refusal names the field the body gave
        flat = page_bench_error(exc) if params.bench is None else None
        raise flat or exc from None
    plan, searched = result.plan, result.params  # searched: the load as modelled (its planner links)
    calibration = _runs_fields(result.calibrated_runs, result.calibrated_figures)
    answer = {
        **calibration,
        "candidates": [candidate_json(request, searched, c, calibration) for c in plan.candidates],
        "best": candidate_json(request, searched, plan.best, calibration) if plan.best is not None else None,
        "best_meets_slo": plan.best_meets_slo,
        # the best layout at the load asked (its share a replica, the clients that send it, the latencies there);
        # "best" holds its sizing point, the busiest within the SLO
        "best_at_load": plan.best_at_load.model_dump() if plan.best_at_load is not None else None,
        "why_none": plan.why_none,
        "notes": plan.notes,
        "layouts_tried": plan.layouts_tried,
        "layouts_started": plan.layouts_started,
        "pareto": [pareto_json(request, searched, p, calibration) for p in plan.pareto],
        "pareto_slo_tokens_per_s_per_user": plan.pareto_slo_tokens_per_s_per_user,
        # the request as modelled (a length nobody set shortened to fit max_model_len), as
        # /api/performance returns its workload's
        "input_tokens": searched.input_tokens,
        "output_tokens": searched.output_tokens,
        "inputs": {
            "model": result.resolved.model_label,
            "device": result.resolved.device.id,
            "vllm_version": result.resolved.vllm_version,
            # with a benchmark, the load it stated (its rate and mean lengths), so the link reopens it
            "query": fleet_query(searched if params.bench is not None else params),
            # the load the layouts were sized for (a benchmark's rate and mean request when it gave them)
            "requests_per_s": searched.requests_per_s,
        },
    }
    return dumped_response(answer)  # encoded here, not on the event loop (app/web/encoding.py)
