"""The planner's "Speed" section: TTFT, TPOT and throughput with bands, and the concurrency chart.

``GET /speed?<planner query>`` renders block ``speed`` of templates/speed.html (the results block loads
it right after it renders, like the recommendation; without JavaScript the same URL is a full page).
Everything the template shows is decided here; the chart is server-rendered SVG.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from app.core.errors import PlannerError
from app.core.perf.predict import Performance
from app.web.inputs.lenient import parse_lenient
from app.web.inputs.links import permalink, state_items
from app.web.inputs.params import PlannerParams
from app.web.inputs.problems import error_of, problems_of
from app.web.inputs.resolve import Resolved, computed, resolve_lenient
from app.web.measured_runs import PageRuns, page_bench_error
from app.web.speed.service import page_runs_lenient, performance_for
from app.web.speed.views import speed_view
from app.web.templating import render

router = APIRouter()


@router.get("/speed", name="speed_fragment", response_class=HTMLResponse)
@router.post("/speed", name="speed_fragment_post", response_class=HTMLResponse, include_in_schema=False)
async def speed_fragment(request: Request) -> Response:
    """The Speed section for the planner's inputs (block ``speed`` for htmx, a full page otherwise)."""
    # by POST the ``state`` field carries the inputs (app.web.inputs.links.state_items); computed in the thread pool
    items = await state_items(request)
    return await computed(items, _speed_fragment, request, items)


def _speed_fragment(request: Request, items: list[tuple[str, str]]) -> Response:
    params, problems = parse_lenient(PlannerParams, items)
    resolved, more = resolve_lenient(params, problems)
    context: dict[str, object] = {
        "problems": problems_of(problems + more),
        "back": permalink(request, resolved.params),
        "speed": None,
        "error": None,
    }
    status = 200
    # a bad argument or paste is shown beside the section, which still answers without it
    runs = page_runs_lenient(resolved.params)
    context["bench_error"] = error_of(runs.bench_error) if runs.bench_error else None
    context["runs_error"] = error_of(runs.runs_error) if runs.runs_error else None
    try:
        measured = frozenset(runs.cluster.log_spread) if runs.cluster is not None else frozenset()
        perf = _with_or_without_bench(resolved, runs, context)
        context["speed"] = speed_view(perf, measured, data_parallel_size=resolved.serve.data_parallel_size)
    except PlannerError as exc:
        context["error"] = error_of(exc)
        status = 422
    return render(request, "speed.html", "speed", context, status=status)


def _with_or_without_bench(resolved: Resolved, runs: PageRuns, context: dict[str, object]) -> Performance:
    """The speed with the page's benchmark; a benchmark vLLM refuses for itself (its longest request
    too long for max_model_len, too large to simulate) is named beside the section, under the page's
    field name, and the steady state answers without its run (at its mean request), as for a bad
    benchmark argument."""
    try:
        return performance_for(resolved, bench=runs.bench, cluster=runs.cluster)
    except PlannerError as exc:
        on_page = page_bench_error(exc)
        if runs.bench is None or on_page is None:
            raise
        context["bench_error"] = error_of(on_page)
        return performance_for(resolved, bench=runs.bench, cluster=runs.cluster, simulate=False)
