"""HTML routes: the planner page (full or its results block for htmx) and the pasted-command form."""

from __future__ import annotations

import dataclasses
from urllib.parse import parse_qsl, urlencode

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from markupsafe import escape

from app.core.errors import PlannerError
from app.core.versions import default_gpu_memory_utilization
from app.web.i18n import t
from app.web.inputs.lenient import parse_lenient
from app.web.inputs.links import (
    compare_link,
    compare_versions,
    form_items,
    permalink,
    state_items,
    to_query,
    with_typed,
)
from app.web.inputs.params import PlannerParams
from app.web.inputs.problems import Problem, error_of, problems_of, typed_values
from app.web.inputs.resolve import capacity_curve_for, computed, estimate_for, resolve_lenient
from app.web.planner import paste, views
from app.web.templating import render, render_view, wants_fragment

router = APIRouter()
COMMAND_MAX_CHARS = 20_000
CURVE_POINTS = 24  # the capacity chart: max_model_len from 512 to the model's limit


def build_view(
    request: Request,
    params: PlannerParams,
    problems: list[Problem],
    *,
    command_text: str = "",
    command_error: PlannerError | None = None,
    notices: tuple[str, ...] = (),
    lazy: bool = False,
) -> views.PlannerView:
    """``lazy``: the view for a fragment, whose closed <details> bodies load when opened. With a
    ``command_error`` (a refused paste) nothing is estimated: the page shows the paste's problems where
    the verdict would be, never a verdict for the inputs the paste did not change."""
    resolved, more = resolve_lenient(params, problems)  # unusable inputs: estimate_for refuses them
    problems = problems + more
    params = resolved.params
    query = with_typed(to_query(params), problems)  # a reload shows the same error, not the default
    link = permalink(request, params, query)
    result: views.ResultView | None = None
    error: Problem | None = None
    effective_len: int | None = None  # the length the estimate served (its default filled in)
    served_util: float | None = None  # the utilization it served (the release's default filled in)
    if command_error is None:  # a refused paste: no verdict for inputs other than the paste's
        try:
            est = estimate_for(resolved)
            curve = capacity_curve_for(resolved, est, points=CURVE_POINTS)
            result = views.result_view(
                resolved,
                est,
                curve,
                compare_link=compare_link(request, params),
                compare_versions=compare_versions(params),
                details=not lazy,
            )
            effective_len = est.max_model_len
            served_util = est.gpu_memory_utilization  # 1.0 under 0.34.0's extensible cache when unset
        except PlannerError as exc:
            error = error_of(exc)
    form = views.form_state(
        params,
        derived_len=resolved.derived_len,
        # without an estimate: the length asked for, else this release's default for the model
        effective_len=effective_len or params.max_model_len or resolved.default_len,
        default_util=served_util or default_gpu_memory_utilization(resolved.vllm_version),
    )
    form = dataclasses.replace(form, values=typed_values(form.values, problems))  # "thirty" stays in its box
    if resolved.unusable:  # the default model's length is no hint for a model the page could not use
        form = dataclasses.replace(form, placeholders={**form.placeholders, "max_model_len": ""})
    return views.PlannerView(
        params=params,
        query=query,
        permalink=link,
        problems=problems_of(problems),
        form=form,
        result=result,
        error=error,
        command_text=command_text,
        command_error=error_of(command_error) if command_error else None,
        command_problems=paste.problems_of_paste(command_error, params) if command_error else (),
        notices=notices,
        lazy=lazy,
    )


def render_planner(request: Request, view: views.PlannerView) -> Response:
    return render_view(request, "planner.html", view, status=422 if view.command_error else None)


@router.get("/", name="planner", response_class=HTMLResponse)
async def planner(request: Request) -> Response:
    items = request.query_params.multi_items()
    return await computed(items, _planner_get, request, items)  # the query is parsed off the event loop


def _planner_get(request: Request, items: list[tuple[str, str]]) -> Response:
    params, problems = parse_lenient(PlannerParams, items)
    command = request.query_params.get(paste.PASTE_KEY)
    if command is not None:  # a refused paste's own permalink (or a paste shared as a link)
        return _pasted(request, params, problems, command[:COMMAND_MAX_CHARS])
    return _planner_page(request, params, problems, paste.paste_notes(dict(request.query_params)))


def _planner_page(
    request: Request, params: PlannerParams, problems: list[Problem], notices: tuple[str, ...] = ()
) -> Response:
    view = build_view(request, params, problems, notices=notices, lazy=wants_fragment(request))
    return render_planner(request, view)


@router.post("/", name="planner_post", response_class=HTMLResponse)
async def planner_post(request: Request) -> Response:
    """The planner form by POST: what a GET carries, in the body, so a pasted config.json of up to
    64 KiB travels whatever the URL limits (the permalink carries it deflated: ``params.pack_config_json``)."""
    items = await form_items(request)
    return await computed(items, _planner_form, request, items)  # the form is parsed off the event loop


def _planner_form(request: Request, items: list[tuple[str, str]]) -> Response:
    params, problems = parse_lenient(PlannerParams, items)
    return _planner_page(request, params, problems)


# The bodies of the results' closed <details>: /part/<name> renders block part_<name> of _partials/results.html.
PARTS = ("curve", "versions", "terms")


@router.get("/part/{part}", name="planner_part", response_class=HTMLResponse)
@router.post("/part/{part}", name="planner_part_post", response_class=HTMLResponse, include_in_schema=False)
async def planner_part(request: Request, part: str) -> Response:
    """One closed section of the results, fetched by htmx when the user opens it. Outside htmx the
    planner page itself has every section inline, so a browser is sent there."""
    if part not in PARTS:
        message = t("part: no such section {part!r} (one of {parts})", part=part[:40], parts=", ".join(PARTS))
        return HTMLResponse(f"<p>{escape(message)}</p>", status_code=404)
    items = list(await state_items(request))
    if not wants_fragment(request):
        params, _ = parse_lenient(PlannerParams, items)
        return RedirectResponse(permalink(request, params), status_code=303)
    return await computed(items, _planner_part, request, part, items)  # parsed off the event loop


def _planner_part(request: Request, part: str, items: list[tuple[str, str]]) -> Response:
    params, problems = parse_lenient(PlannerParams, items)
    view = build_view(request, params, problems)
    if view.result is None:
        return render_planner(request, view)  # the inputs no longer start: the verdict says why
    return render(request, "_partials/results.html", f"part_{part}", {"view": view})


@router.post("/command", name="fill_from_command", response_class=HTMLResponse)
def fill_from_command(request: Request, command: str = Form(""), state: str = Form("")) -> Response:
    """Read a pasted command over the current inputs; the browser lands on a shareable URL either way:
    the filled permalink, or (refused) the inputs' permalink with the paste, whose page shows every
    problem where the verdict would be."""
    params, problems = parse_lenient(PlannerParams, parse_qsl(state, keep_blank_values=True))
    return _pasted(request, params, problems, command[:COMMAND_MAX_CHARS], posted=True)


def _pasted(
    request: Request, params: PlannerParams, problems: list[Problem], command: str, *, posted: bool = False
) -> Response:
    try:
        read = paste.read_paste(params, command)
    except PlannerError as exc:
        carried = paste.url_copy(command)
        if posted and carried is not None:
            target = f"{permalink(request, params)}&{urlencode({paste.PASTE_KEY: carried})}"
            return _go(request, target + paste.RESULT_ANCHOR)
        view = build_view(request, params, problems, command_text=command, command_error=exc)
        return render_planner(request, view)
    target = permalink(request, read.params)
    return _go(request, (f"{target}&{read.notes}" if read.notes else target) + paste.RESULT_ANCHOR)


def _go(request: Request, target: str) -> Response:
    if request.headers.get("HX-Request") == "true":
        return Response(status_code=204, headers={"HX-Redirect": target})
    return RedirectResponse(target, status_code=303)
