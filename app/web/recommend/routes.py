"""``/recommend``: the remedy walk for the planner's inputs, as the planner's section or a page."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from app.core import regex
from app.core.errors import PlannerError
from app.web.i18n import tr
from app.web.inputs.lenient import parse_lenient
from app.web.inputs.links import permalink, state_items
from app.web.inputs.params import PlannerParams
from app.web.inputs.problems import error_of, problems_of
from app.web.inputs.resolve import computed, resolve_lenient
from app.web.recommend.params import params_with
from app.web.recommend.service import run_for_planner
from app.web.recommend.views import build_view
from app.web.templating import render

router = APIRouter()


@router.get("/recommend", name="recommend_fragment", response_class=HTMLResponse)
@router.post(
    "/recommend", name="recommend_fragment_post", response_class=HTMLResponse, include_in_schema=False
)
async def recommend_fragment(request: Request) -> Response:
    """The remedy walk for the planner's inputs: target = its max_model_len and target concurrency.

    Loaded by the results block after it renders (so a slider move never waits for it); without
    JavaScript the same URL is a full page.
    """
    # slow: the walk runs in the thread pool, off the event loop; by POST the inputs are ``state``
    items = await state_items(request)
    # the planner's verdict box asks for its "Change, in this order" list with it (swapped out of band),
    # naming the inputs it shows by a short tag the list carries back
    tag = (await request.form()).get("verdict_changes") if request.method == "POST" else None
    changes = tag if isinstance(tag, str) and regex.fullmatch(r"[0-9a-f]{1,16}", tag) else ""
    return await computed(items, _recommend_fragment, request, items, changes)


def _recommend_fragment(request: Request, items: list[tuple[str, str]], changes: str = "") -> Response:
    params, problems = parse_lenient(PlannerParams, items)
    resolved, more = resolve_lenient(params, problems)
    params = resolved.params
    context: dict[str, object] = {
        "problems": problems_of(problems + more),
        "back": permalink(request, params),
        "view": None,
        "error": None,
        "verdict_changes": changes,
        "runs_error": None,
        "bench_error": None,
        "runs_notes": [],
    }
    try:
        rec, runs = run_for_planner(resolved)
        context["view"] = build_view(rec, lambda serve: permalink(request, params_with(params, serve)))
        # both shown above the answer, which answers without them (uncalibrated, the default benchmark)
        context["runs_error"] = error_of(runs.runs_error) if runs.runs_error else None
        context["bench_error"] = error_of(runs.bench_error) if runs.bench_error else None
        context["runs_notes"] = [tr(n) for n in runs.notes]
        status = 200
    except PlannerError as exc:
        context["error"] = error_of(exc)
        status = 422
    return render(request, "recommend.html", "recommendation", context, status=status)
