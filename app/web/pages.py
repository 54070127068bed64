"""HTML routes: the planner page (full or its results block for htmx) and the pasted-command form."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from markupsafe import escape
from pydantic import ValidationError

from app.core.command import parse_serve_command
from app.core.errors import PlannerError
from app.core.estimate import capacity_curve
from app.core.recommend import recommend
from app.core.result import Estimate
from app.core.specs import ServeConfig
from app.core.text import N_
from app.core.versions import default_gpu_memory_utilization
from app.resources import Data, directory
from app.web import compare, i18n, markdown, views
from app.web.i18n import _, t
from app.web.params import (
    FieldProblem,
    PlannerParams,
    parse_lenient,
    replace,
    serve_values,
    to_query,
    with_serve,
)
from app.web.perf_api import workload_of
from app.web.recommend_api import build_view as recommendation_view
from app.web.resolve import Resolved, estimate_for, prefetch_hub_model, resolve_lenient
from app.web.templating import url_path

router = APIRouter()
# The compare view lives in its own module; wiring it here keeps the planner's link to it valid
# wherever pages.router is mounted.
router.include_router(compare.router)
DOCS_DIR = directory(Data.DOCS)
# Generated reports served as pages: route name -> (file, page title).
DOC_PAGES = {
    "accuracy_report": ("accuracy.md", N_("Accuracy against real vLLM logs")),
    "model_notes": ("model.md", N_("How the planner models what vLLM measures")),
}
COMMAND_MAX_CHARS = 20_000
# Query keys that are messages for one page view, never part of the permalink.
NOTE_IGNORED_FLAGS = "ignored_flags"


def wants_fragment(request: Request) -> bool:
    """htmx asks for the block, except when restoring history (then it needs the whole page)."""
    return (
        request.headers.get("HX-Request") == "true"
        and request.headers.get("HX-History-Restore-Request") != "true"
    )


def permalink(request: Request, params: PlannerParams, query: str | None = None) -> str:
    """The planner URL for ``params`` (``query``: their ``to_query``, when the caller has it already)."""
    return f"{url_path(request, 'planner')}?{to_query(params) if query is None else query}"


def _estimate(resolved: Resolved) -> tuple[Estimate, list[tuple[int, float]]]:
    est = estimate_for(resolved)
    curve = capacity_curve(
        model=resolved.model,
        device=resolved.device,
        serve=resolved.serve,
        vllm_version=resolved.vllm_version,
        points=views.CURVE_POINTS,
        base=est,
    )
    return est, curve


def build_view(
    request: Request,
    params: PlannerParams,
    problems: list[FieldProblem],
    *,
    command_text: str = "",
    command_error: PlannerError | None = None,
    notices: tuple[str, ...] = (),
    lazy: bool = False,
) -> views.PlannerView:
    """``lazy``: the view for a fragment, whose closed <details> bodies load when opened."""
    resolved, more = resolve_lenient(params)
    problems = problems + more
    params = resolved.params
    query = to_query(params)
    link = permalink(request, params, query)
    result: views.ResultView | None = None
    error: views.Problem | None = None
    try:
        est, curve = _estimate(resolved)
        result = views.result_view(
            resolved, est, curve, link, compare_link=compare.compare_link(request, params), details=not lazy
        )
        effective_len = est.max_model_len
    except PlannerError as exc:
        error = views.error_of(exc)
        effective_len = params.max_model_len or resolved.model.max_model_len_derived
    form = views.form_state(
        params,
        derived_len=resolved.model.max_model_len_derived,
        effective_len=effective_len,
        default_util=default_gpu_memory_utilization(resolved.vllm_version),
    )
    return views.PlannerView(
        params=params,
        query=query,
        permalink=link,
        problems=views.problems_of(problems),
        form=form,
        result=result,
        error=error,
        command_text=command_text,
        command_error=views.error_of(command_error) if command_error else None,
        notices=notices,
        lazy=lazy,
    )


def render_planner(request: Request, view: views.PlannerView) -> Response:
    renderer = request.app.state.renderer
    context = {"view": view}
    if wants_fragment(request):
        body = renderer.block("planner.html", "results", request, context)
        headers = {"Vary": "HX-Request", "HX-Replace-Url": view.permalink}
    else:
        body = renderer.page("planner.html", request, context)
        headers = {"Vary": "HX-Request"}
    status = 422 if view.error or view.command_error else 200
    return HTMLResponse(body, status_code=status, headers=headers)


@router.get("/", name="planner", response_class=HTMLResponse)
async def planner(request: Request) -> Response:
    params, problems = parse_lenient(request.query_params.multi_items())
    await prefetch_hub_model(params)
    ignored = request.query_params.get(NOTE_IGNORED_FLAGS, "")
    notices = (
        (t("Flags of the pasted command that do not move memory were left out: {flags}", flags=ignored),)
        if ignored
        else ()
    )
    view = build_view(request, params, problems, notices=notices, lazy=wants_fragment(request))
    return render_planner(request, view)


@router.post("/", name="planner_post", response_class=HTMLResponse)
async def planner_post(request: Request) -> Response:
    """The planner form by POST: what a GET carries, in the body, so a pasted config.json of up to
    64 KiB travels whatever the URL limits (the permalink carries it deflated: ``params.pack_config_json``)."""
    form = await request.form()
    items = [(key, value) for key, value in form.multi_items() if isinstance(value, str)]
    params, problems = parse_lenient(items)
    await prefetch_hub_model(params)
    view = build_view(request, params, problems, lazy=wants_fragment(request))
    return render_planner(request, view)


# The bodies of the results' closed <details>: /part/<name> renders block part_<name> of _partials/results.html.
PARTS = ("curve", "versions", "terms")


@router.get("/part/{part}", name="planner_part", response_class=HTMLResponse)
async def planner_part(request: Request, part: str) -> Response:
    """One closed section of the results, fetched by htmx when the user opens it. Outside htmx the
    planner page itself has every section inline, so a browser is sent there."""
    if part not in PARTS:
        message = t("part: no such section {part!r} (one of {parts})", part=part[:40], parts=", ".join(PARTS))
        return HTMLResponse(f"<p>{escape(message)}</p>", status_code=404)
    params, problems = parse_lenient(request.query_params.multi_items())
    if not wants_fragment(request):
        return RedirectResponse(permalink(request, params), status_code=303)
    await prefetch_hub_model(params)
    view = build_view(request, params, problems)
    if view.result is None:
        return render_planner(request, view)  # the inputs no longer start: the verdict says why
    body = request.app.state.renderer.block("_partials/results.html", f"part_{part}", request, {"view": view})
    return HTMLResponse(body, headers={"Vary": "HX-Request"})


@router.post("/command", name="fill_from_command", response_class=HTMLResponse)
def fill_from_command(request: Request, command: str = Form(""), state: str = Form("")) -> Response:
    """Parse a pasted `vllm serve` command over the current inputs and redirect to the filled page."""
    params, problems = parse_lenient(parse_qsl(state, keep_blank_values=True))
    command = command[:COMMAND_MAX_CHARS]
    try:
        parsed = parse_serve_command(command, vllm_version=params.resolved_version)
        changes = serve_values(parsed.serve)
        if parsed.model:
            changes["model"] = parsed.model
        filled = replace(params, **changes)
    except ValidationError as exc:
        first = exc.errors()[0]
        error = PlannerError(str(first["loc"][0]) if first["loc"] else "command", first["msg"])
        view = build_view(request, params, problems, command_text=command, command_error=error)
        return render_planner(request, view)
    except PlannerError as exc:
        view = build_view(request, params, problems, command_text=command, command_error=exc)
        return render_planner(request, view)
    target = permalink(request, filled)
    if parsed.unknown_flags:
        target += "&" + urlencode({NOTE_IGNORED_FLAGS: " ".join(parsed.unknown_flags)})
    if request.headers.get("HX-Request") == "true":
        return Response(status_code=204, headers={"HX-Redirect": target})
    return RedirectResponse(target, status_code=303)


def _params_with(params: PlannerParams, serve: ServeConfig) -> PlannerParams:
    """The planner's inputs with a recommended configuration applied (what a step's permalink carries);
    a device count given by hand grows to hold the new TP × PP (blank follows TP × PP by itself)."""
    applied = with_serve(params, serve)
    ranks = serve.tensor_parallel_size * serve.pipeline_parallel_size
    return applied.model_copy(update={"devices": max(params.devices, ranks) if params.devices else None})


@router.get("/recommend", name="recommend_fragment", response_class=HTMLResponse)
def recommend_fragment(request: Request) -> Response:  # slow: thread pool, off the event loop
    """The remedy walk for the planner's inputs: target = its max_model_len and target concurrency.

    Loaded by the results block after it renders (so a slider move never waits for it); without
    JavaScript the same URL is a full page.
    """
    params, problems = parse_lenient(request.query_params.multi_items())
    resolved, more = resolve_lenient(params)
    params = resolved.params
    renderer = request.app.state.renderer
    target_len = params.max_model_len or resolved.model.max_model_len_derived
    context: dict[str, object] = {
        "problems": views.problems_of(problems + more),
        "back": permalink(request, params),
        "view": None,
        "error": None,
    }
    try:
        rec = recommend(
            model=resolved.model,
            device=resolved.device,
            serve=resolved.serve,
            vllm_version=resolved.vllm_version,
            target_max_model_len=target_len,
            target_concurrency=params.target_concurrency,
            devices_per_node=max(params.device_count, resolved.device.typical_node_devices),
            workload=workload_of(params),
        )
        context["view"] = recommendation_view(
            rec, lambda serve: permalink(request, _params_with(params, serve))
        )
        status = 200
    except PlannerError as exc:
        context["error"] = views.error_of(exc)
        status = 422
    if wants_fragment(request):
        body = renderer.block("recommend.html", "recommendation", request, context)
    else:
        body = renderer.page("recommend.html", request, context)
    return HTMLResponse(body, status_code=status, headers={"Vary": "HX-Request"})


def render_doc(request: Request, name: str) -> Response:
    filename, title_id = DOC_PAGES[name]
    title = _(title_id)
    # docs/<lang>/<file> when the page is shown in that language (docs/zh/model.md), else docs/<file>
    translated = DOCS_DIR / i18n.current() / filename
    path = translated if i18n.current() != i18n.DEFAULT and translated.is_file() else DOCS_DIR / filename
    renderer = request.app.state.renderer
    if not path.is_file():
        body = renderer.page("doc_page.html", request, {"title": title, "body": None, "source": filename})
        return HTMLResponse(body, status_code=404)
    source = path.relative_to(DOCS_DIR).as_posix()
    context = {"title": title, "body": markdown.render(path.read_text(encoding="utf-8")), "source": source}
    return HTMLResponse(renderer.page("doc_page.html", request, context))


@router.get("/accuracy", name="accuracy_report", response_class=HTMLResponse)
def accuracy_report(request: Request) -> Response:
    """docs/accuracy.md (generated by bench/accuracy.py --write) as a page."""
    return render_doc(request, "accuracy_report")


@router.get("/model", name="model_notes", response_class=HTMLResponse)
def model_notes(request: Request) -> Response:
    """docs/model.md: how each measured partition is modelled, and the bands."""
    return render_doc(request, "model_notes")
