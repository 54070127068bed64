"""The doctor: paste a vLLM start-up log and/or /metrics, get the seed's five-step diagnosis.

``GET /doctor`` is the form; ``POST /doctor`` (multipart, so a file can ride along) answers with
the whole page, or with just its ``results`` block for htmx; ``POST /api/diagnose`` is the JSON
twin (a text/plain log, or a JSON object). Bodies are read with a hard limit before any parsing,
and every bad input is a 4xx naming its field — never a 500.
"""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.formparsers import MultiPartException

from app.core import deadline
from app.web.doctor.params import (
    LOG_FIELD,
    BodyTooLargeError,
    Submitted,
    api_input,
    read_form,
    read_limited,
    too_large_message,
)
from app.web.doctor.service import run
from app.web.doctor.views import DoctorForm, DoctorView, device_options, planner_link, result_view
from app.web.i18n import _, t, tr
from app.web.inputs.problems import Problem
from app.web.templating import render, wants_fragment

router = APIRouter()


def _error(problem: Problem) -> JSONResponse:
    kind = "too_large" if problem.status == 413 else "value_error"
    detail = [{"loc": ["body", problem.field], "msg": tr(problem.message), "type": kind}]
    return JSONResponse({"detail": detail}, status_code=problem.status)


@router.post(
    "/api/diagnose",
    name="api_diagnose",
    tags=["api"],
    summary="Five-step diagnosis of a vLLM start-up log and/or /metrics scrape",
)
async def api_diagnose(request: Request) -> Response:
    """Body: the log as text/plain (``?target_concurrency=&device=`` optional), or JSON
    ``{"log", "metrics", "target_concurrency", "device"}``. At most 5 MiB."""
    try:
        body = await read_limited(request)
    except BodyTooLargeError as exc:
        return _error(Problem(LOG_FIELD, too_large_message(exc.size), status=413))
    return await run_in_threadpool(_api_diagnose, request, body)  # parsing 5 MiB: off the event loop


def _api_diagnose(request: Request, body: bytes) -> Response:
    deadline.check()  # this thread's CPU counts from here: the JSON decoding of a 5 MiB body included
    data = api_input(request, body)
    if isinstance(data, Problem):
        return _error(data)
    diagnosis, problem = run(data)
    if problem is not None or diagnosis is None:
        return _error(problem or Problem(LOG_FIELD, _("nothing to diagnose")))
    payload = diagnosis.model_dump(mode="json")
    payload.update(planner_link(request, diagnosis))
    return JSONResponse(payload)


def render_doctor(request: Request, view: DoctorView, status: int = 200) -> HTMLResponse:
    return render(request, "doctor.html", "results", {"view": view}, status=status)


@router.get("/doctor", name="doctor", response_class=HTMLResponse)
def doctor_page(request: Request) -> Response:
    view = DoctorView(form=DoctorForm(devices=device_options()), problems=[], result=None)
    return render_doctor(request, view)


@router.post("/doctor", name="doctor_submit", response_class=HTMLResponse)
async def doctor_submit(request: Request) -> Response:
    """The form's POST (multipart for the file). htmx gets the results block, a browser the page."""
    empty_form = DoctorForm(devices=device_options())
    try:
        body = await read_limited(request)
    except BodyTooLargeError as exc:
        # htmx swaps only 2xx/422 (base.html), so its answer is a 422 carrying the same message
        status = 422 if wants_fragment(request) else 413
        view = DoctorView(empty_form, [Problem(LOG_FIELD, too_large_message(exc.size), status=413)], None)
        return render_doctor(request, view, status)
    try:
        submitted = await read_form(request, body)
    except (HTTPException, MultiPartException) as exc:
        message = str(getattr(exc, "detail", None) or getattr(exc, "message", "") or t("unreadable form"))
        return render_doctor(request, DoctorView(empty_form, [Problem(LOG_FIELD, message)], None), 422)
    return await run_in_threadpool(_doctor_result, request, submitted)  # parsing: off the event loop


def _doctor_result(request: Request, submitted: Submitted) -> Response:
    deadline.check()  # this thread's CPU counts from here (app.core.deadline)
    if submitted.data is None:
        return render_doctor(request, DoctorView(submitted.form, submitted.problems, None), 422)
    diagnosis, problem = run(submitted.data)
    if problem is not None or diagnosis is None:
        problems = [problem] if problem is not None else []
        status = 413 if problem is not None and problem.status == 413 and not wants_fragment(request) else 422
        return render_doctor(request, DoctorView(submitted.form, problems, None), status)
    view = DoctorView(form=submitted.form, problems=[], result=result_view(request, diagnosis))
    return render_doctor(request, view)
