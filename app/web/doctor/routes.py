"""The doctor: paste a vLLM start-up log and/or /metrics, get the seed's five-step diagnosis.

``GET /doctor`` is the form; ``POST /doctor`` (multipart, so a file can ride along) answers with
the whole page, or with just its ``results`` block for htmx; ``POST /api/diagnose`` is the JSON
twin (a text/plain log, or a JSON object). Bodies are read with a hard limit before any parsing,
and every bad input is a 4xx naming its field — never a 500.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from markupsafe import Markup, escape
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException
from starlette.types import Message

from app.core import numbers
from app.core.catalog import find_device, list_devices
from app.core.diagnose import ComparisonRow, Diagnosis, Step, diagnose
from app.core.errors import PlannerError
from app.core.logs import MAX_LOG_CHARS, Evidence, MetricsFacts
from app.core.text import N_, TextList
from app.core.text import Message as TextMessage
from app.core.verdicts import VERDICTS
from app.web.format import gib, integer, percent
from app.web.forms import Option, Problem
from app.web.i18n import _, page_lang, t, tr, tr_list
from app.web.planner.params import parse_lenient, to_query
from app.web.templating import url_path, wants_fragment

router = APIRouter()

# The log parser refuses more than MAX_LOG_CHARS (5,000,000) characters; the body may carry that
# plus JSON escaping or multipart framing and a metrics scrape, so the body limit is 5 MiB.
MAX_BODY_BYTES = 5 * 2**20
MAX_TARGET_CONCURRENCY = 65_536  # the planner's own bound on target_concurrency
EXCERPT_LINE_CHARS = 400  # a quoted log line is clipped to this on the page (the JSON keeps 2,000)
LOG_FIELD = "log"
LOG_FILE_FIELD = "log_file"


# --------------------------------------------------------------------------------------------
# bodies with a limit


class BodyTooLargeError(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


async def read_limited(request: Request, limit: int = MAX_BODY_BYTES) -> bytes:
    """The request body, refused as soon as it passes ``limit`` bytes (declared or streamed)."""
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise BodyTooLargeError(int(declared))
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLargeError(size)
        chunks.append(chunk)
    return b"".join(chunks)


def too_large_message(size: int) -> str:
    return t(
        "the body has {size:,} bytes or more; the limit is {max_body_bytes:,} bytes (5 MiB)",
        size=size,
        max_body_bytes=MAX_BODY_BYTES,
    )


def _replayed(request: Request, body: bytes) -> Request:
    """A request whose stream yields ``body`` again, so starlette's form parser can read it."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return Request(request.scope, receive)


# --------------------------------------------------------------------------------------------
# inputs


class DiagnoseInput(BaseModel):
    """The API's JSON body (or, for a text/plain body, the query parameters plus the text as ``log``)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    log: str | None = None
    metrics: str | None = None
    target_concurrency: int | None = Field(default=None, ge=1, le=MAX_TARGET_CONCURRENCY)
    device: str | None = Field(default=None, max_length=100)


def _check_sizes(data: DiagnoseInput) -> Problem | None:
    for name, text in ((LOG_FIELD, data.log), ("metrics", data.metrics)):
        if text is not None and len(text) > MAX_LOG_CHARS:
            return Problem(
                name,
                t(
                    "{text:,} characters; the limit is {max_log_chars:,}",
                    text=len(text),
                    max_log_chars=MAX_LOG_CHARS,
                ),
                413,
            )
    if not (data.log or "").strip() and not (data.metrics or "").strip():
        return Problem(LOG_FIELD, "empty: paste a vLLM start-up log (or a /metrics scrape)")
    return None


def _run(data: DiagnoseInput) -> tuple[Diagnosis | None, Problem | None]:
    problem = _check_sizes(data)
    if problem is not None:
        return None, problem
    try:
        return (
            diagnose(
                log_text=data.log,
                metrics_text=data.metrics,
                target_concurrency=data.target_concurrency,
                device_hint=data.device or None,
            ),
            None,
        )
    except PlannerError as exc:
        return None, Problem(exc.field, exc.message, 413 if exc.field == LOG_FIELD else 422)


def planner_url(request: Request, diagnosis: Diagnosis, lang: str | None = None) -> str | None:
    """A relative permalink to the planner prefilled with what the log says (None if it says nothing).

    ``lang``: the page's language for the link (the API's link is language-neutral)."""
    if not diagnosis.planner_inputs:
        return None
    params, _ = parse_lenient(diagnosis.planner_inputs)
    return f"{url_path(request, 'planner')}?{to_query(params.model_copy(update={'lang': lang}))}"


# --------------------------------------------------------------------------------------------
# the JSON API


def _error(problem: Problem) -> JSONResponse:
    kind = "too_large" if problem.status == 413 else "value_error"
    detail = [{"loc": ["body", problem.field], "msg": tr(problem.message), "type": kind}]
    return JSONResponse({"detail": detail}, status_code=problem.status)


def _validation_problem(exc: ValidationError) -> Problem:
    first = exc.errors(include_url=False)[0]
    name = str(first["loc"][0]) if first["loc"] else LOG_FIELD
    return Problem(name, first["msg"])


def _api_input(request: Request, body: bytes) -> DiagnoseInput | Problem:
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type == "application/json":
        try:
            return DiagnoseInput.model_validate_json(body)
        except ValidationError as exc:
            return _validation_problem(exc)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Problem(LOG_FIELD, t("not UTF-8 text (byte {start}); paste the log as text", start=exc.start))
    query = {k: v for k, v in request.query_params.items() if k in ("target_concurrency", "device")}
    try:
        return DiagnoseInput.model_validate({**query, "log": text})
    except ValidationError as exc:
        return _validation_problem(exc)


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
        return _error(Problem(LOG_FIELD, too_large_message(exc.size), 413))
    data = _api_input(request, body)
    if isinstance(data, Problem):
        return _error(data)
    diagnosis, problem = _run(data)
    if problem is not None or diagnosis is None:
        return _error(problem or Problem(LOG_FIELD, _("nothing to diagnose")))
    payload = diagnosis.model_dump(mode="json")
    payload["planner_url"] = planner_url(request, diagnosis)
    return JSONResponse(payload)


# --------------------------------------------------------------------------------------------
# the page: a typed view model, so the template holds no arithmetic


TONES = {"ok": "ok", "info": "info", "warn": "warn", "fail": "bad", "unknown": "unknown"}
SOURCE_LABELS = {
    "hint": N_("chosen"),
    "printed_name": N_("named in the log"),
    "printed_total": N_("matched to the printed total"),
    "replay": N_("inferred from the KV pool"),
    "custom": N_("custom, of the printed size"),
    "none": N_("unknown"),
}


# Who answered a step-4 trial (Trial.source), as the page words it.
TRIAL_SOURCES = {
    "log": N_("log"),
    "planner": N_("planner"),
    "arithmetic": N_("arithmetic"),
    "none": N_("none"),
}


@dataclass(frozen=True)
class ExcerptLine:
    line_no: str  # "" for a gap marker
    text: str
    gap: bool = False


@dataclass(frozen=True)
class TrialView:
    label: str
    outcome: str
    tone: str
    source: str
    detail: str
    verbatim: bool = False  # the detail is vLLM's own error text (quoted as printed, not translated)


@dataclass(frozen=True)
class StepView:
    number: int
    key: str
    title: str
    verdict: str
    tone: str
    explanation: str
    excerpt: list[ExcerptLine]
    trials: list[TrialView] = field(default_factory=list)


@dataclass(frozen=True)
class RowView:
    key: str
    label: str
    actual: str
    predicted: str
    gap: str
    note: str | None


@dataclass(frozen=True)
class MetricsView:
    verdict: str
    tone: str
    reading: str
    rows: list[tuple[str, str]]


@dataclass(frozen=True)
class ResultView:
    verdict: str
    tone: str
    title: str
    headline: Markup
    remedies: list[str]
    steps: list[StepView]
    comparison: list[RowView]
    metrics: MetricsView | None
    planner_url: str | None
    planner_note: str | None
    identity: list[tuple[str, str]]
    device_reasoning: list[str]
    notes: list[str]


@dataclass(frozen=True)
class DoctorForm:
    log: str = ""
    metrics: str = ""
    target_concurrency: str = ""
    device: str = ""
    devices: list[Option] = field(default_factory=list)
    file_name: str = ""


@dataclass(frozen=True)
class DoctorView:
    form: DoctorForm
    problems: list[Problem]
    result: ResultView | None


def excerpt(evidence: Iterable[Evidence]) -> list[ExcerptLine]:
    """Evidence lines in order, with a gap marker between lines that are not adjacent."""
    lines: list[ExcerptLine] = []
    previous: int | None = None
    for ev in sorted({e.line_no: e for e in evidence}.values(), key=lambda e: e.line_no):
        if previous is not None and ev.line_no > previous + 1:
            lines.append(ExcerptLine(line_no="", text="…", gap=True))
        text = ev.text if len(ev.text) <= EXCERPT_LINE_CHARS else ev.text[: EXCERPT_LINE_CHARS - 1] + "…"
        lines.append(ExcerptLine(line_no=str(ev.line_no), text=text))
        previous = ev.line_no
    return lines


def _value(unit: str, value: float | None, *, signed: bool = False) -> str:
    if value is None:
        return "—"
    if unit == "bytes" and round(value / 2**30, 2) == 0:
        value = 0  # no "-0.00 GiB"
    sign = "+" if signed and value > 0 else ""
    if unit == "bytes":
        return sign + gib(value)
    if unit == "ratio":
        return f"{sign}{value:.2f}x"
    return sign + integer(value)


def _row_view(row: ComparisonRow) -> RowView:
    return RowView(
        key=row.key,
        label=tr(row.label),
        actual=_value(row.unit, row.actual),
        predicted=_value(row.unit, row.predicted),
        gap=_value(row.unit, row.gap, signed=True),
        note=tr(row.note) if row.note is not None else None,
    )


def _metrics_view(metrics: MetricsFacts | None) -> MetricsView | None:
    if metrics is None:
        return None
    rows: list[tuple[str, str]] = []
    if metrics.kv_usage is not None:
        rows.append((t("KV cache usage"), percent(metrics.kv_usage)))
    for label, value in (
        (t("Requests running"), metrics.num_requests_running),
        (t("Requests waiting"), metrics.num_requests_waiting),
        (_("Preemptions"), metrics.preemptions),
    ):
        if value is not None:
            rows.append((label, integer(value)))
    if metrics.prefix_hit_rate is not None:
        rows.append((t("Prefix-cache hit rate"), percent(metrics.prefix_hit_rate)))
    if metrics.num_gpu_blocks is not None:
        rows.append((t("GPU blocks (cache_config_info)"), integer(metrics.num_gpu_blocks)))
    bound = metrics.verdict == "kv_bound"
    return MetricsView(
        verdict=t("bound by the KV pool") if bound else t("not bound by the KV pool"),
        tone="warn" if bound else "ok",
        reading=tr(metrics.reading),
        rows=rows,
    )


def _trial_views(diagnosis: Diagnosis) -> list[TrialView]:
    views = []
    for trial in diagnosis.trials:
        outcome, tone = {True: (_("starts"), "ok"), False: (_("fails"), "bad"), None: ("?", "unknown")}[
            trial.starts
        ]
        source = _(TRIAL_SOURCES.get(trial.source, trial.source))
        verbatim = bool(trial.detail) and not isinstance(trial.detail, TextMessage | TextList)
        views.append(TrialView(tr(trial.label), outcome, tone, source, tr(trial.detail), verbatim))
    return views


VLLM_ERROR_PARAM = "error"  # diagnose/verdict.py: the failure's own line, as vLLM printed it


def _quoting_vllm_error(headline: str) -> Markup:
    """The headline in the page's language, with vLLM's quoted error kept verbatim (not translated)."""
    if not isinstance(headline, TextMessage) or VLLM_ERROR_PARAM not in headline.params:
        return escape(tr(headline))
    marker = "\x00error\x00"
    params = {**headline.params, VLLM_ERROR_PARAM: marker}
    sentence = escape(tr(TextMessage(headline.msgid, **params)))
    quoted = Markup('<q translate="no">{}</q>').format(headline.params[VLLM_ERROR_PARAM])
    return Markup(sentence.replace(marker, quoted))


def _step_view(number: int, step: Step, diagnosis: Diagnosis) -> StepView:
    return StepView(
        number=number,
        key=step.key,
        title=tr(step.title),
        verdict=tr(step.verdict),
        tone=TONES[step.status],
        explanation=tr(step.explanation),
        excerpt=excerpt(step.evidence),
        trials=_trial_views(diagnosis) if step.key == "cause" else [],
    )


def result_view(request: Request, diagnosis: Diagnosis) -> ResultView:
    info = VERDICTS[diagnosis.verdict]
    tone, title = info.tone, _(info.label)
    url = planner_url(request, diagnosis, page_lang())
    planner_note = None
    if url is not None and "model" not in diagnosis.planner_inputs:
        planner_note = t("The log's model is not in the catalog: the planner opens with its default model.")
    identity = [
        (_("Model"), diagnosis.model_id or diagnosis.facts.model or "—"),
        (
            _("Device"),
            f"{diagnosis.device_id} ({_(SOURCE_LABELS[diagnosis.device_source])})"
            if diagnosis.device_id
            else "—",
        ),
        ("vLLM", diagnosis.facts.vllm_version or diagnosis.vllm_version_used or "—"),
        (
            t("Parallelism"),
            t(
                "TP {tp} × PP {pp}",
                tp=diagnosis.facts.tensor_parallel_size or 1,
                pp=diagnosis.facts.pipeline_parallel_size or 1,
            ),
        ),
        (t("KV cache dtype"), diagnosis.facts.kv_cache_dtype or "auto"),
        (t("Target concurrency N"), str(diagnosis.target_concurrency)),
    ]
    return ResultView(
        verdict=diagnosis.verdict,
        tone=tone,
        title=title,
        headline=_quoting_vllm_error(diagnosis.headline),
        remedies=tr_list(diagnosis.remedies),
        steps=[_step_view(i, step, diagnosis) for i, step in enumerate(diagnosis.steps, start=1)],
        comparison=[_row_view(row) for row in diagnosis.comparison],
        metrics=_metrics_view(diagnosis.metrics),
        planner_url=url,
        planner_note=planner_note,
        identity=identity,
        device_reasoning=tr_list(diagnosis.device_reasoning),
        notes=tr_list(diagnosis.notes),
    )


def device_options() -> list[Option]:
    return [Option("", t("detect from the log")), *(Option(d.id, d.name) for d in list_devices())]


def render(request: Request, view: DoctorView, status: int = 200) -> HTMLResponse:
    renderer = request.app.state.renderer
    context: dict[str, Any] = {"view": view}
    if wants_fragment(request):
        body = renderer.block("doctor.html", "results", request, context)
    else:
        body = renderer.page("doctor.html", request, context)
    return HTMLResponse(body, status_code=status, headers={"Vary": "HX-Request"})


@router.get("/doctor", name="doctor", response_class=HTMLResponse)
def doctor_page(request: Request) -> Response:
    view = DoctorView(form=DoctorForm(devices=device_options()), problems=[], result=None)
    return render(request, view)


# --------------------------------------------------------------------------------------------
# the page's POST


def _target(raw: str) -> tuple[int | None, Problem | None]:
    if not raw.strip():
        return None, None
    try:
        value = numbers.parse_int(raw)  # bounded, ASCII digits only ("²" is not 2)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_TARGET_CONCURRENCY:
        return None, Problem(
            "target_concurrency",
            t(
                "a whole number from 1 to {max_target_concurrency:,}",
                max_target_concurrency=MAX_TARGET_CONCURRENCY,
            ),
        )
    return value, None


async def _file_text(upload: UploadFile) -> tuple[str, Problem | None]:
    data = await upload.read(MAX_BODY_BYTES + 1)
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return "", Problem(
            LOG_FILE_FIELD,
            t("{filename}: not UTF-8 text (byte {start})", filename=upload.filename, start=exc.start),
        )


@dataclass
class _Submitted:
    form: DoctorForm
    data: DiagnoseInput | None
    problems: list[Problem]


async def _read_form(request: Request, body: bytes) -> _Submitted:
    content_type = request.headers.get("content-type", "")
    if "multipart/form-data" in content_type or "application/x-www-form-urlencoded" in content_type:
        form = await _replayed(request, body).form(max_part_size=MAX_BODY_BYTES)
        try:
            fields = {k: v for k, v in form.multi_items() if isinstance(v, str)}
            upload = form.get(LOG_FILE_FIELD)
            file_text, file_name, file_problem = "", "", None
            if isinstance(upload, UploadFile) and upload.filename:
                file_text, file_problem = await _file_text(upload)
                file_name = upload.filename
        finally:
            await form.close()  # uploads are spooled to temporary files
    else:
        fields = dict(parse_qsl(body.decode("utf-8", "replace")))
        file_text, file_name, file_problem = "", "", None
    return _submitted(fields, file_text, file_name, file_problem)


def _submitted(
    fields: dict[str, str], file_text: str, file_name: str, file_problem: Problem | None
) -> _Submitted:
    problems = [file_problem] if file_problem is not None else []
    log_text = fields.get(LOG_FIELD, "")
    if file_text.strip():
        log_text = file_text
    else:
        file_name = ""
    target, problem = _target(fields.get("target_concurrency", ""))
    if problem is not None:
        problems.append(problem)
    device = fields.get("device", "").strip()
    if device:
        try:
            find_device(device)
        except PlannerError as exc:
            problems.append(Problem(exc.field, exc.message))
            device = ""
    form = DoctorForm(
        log=fields.get(LOG_FIELD, ""),
        metrics=fields.get("metrics", ""),
        target_concurrency=fields.get("target_concurrency", ""),
        device=device,
        devices=device_options(),
        file_name=file_name,
    )
    data = DiagnoseInput(
        log=log_text, metrics=form.metrics or None, target_concurrency=target, device=device or None
    )
    return _Submitted(form=form, data=None if problems else data, problems=problems)


@router.post("/doctor", name="doctor_submit", response_class=HTMLResponse)
async def doctor_submit(request: Request) -> Response:
    """The form's POST (multipart for the file). htmx gets the results block, a browser the page."""
    empty_form = DoctorForm(devices=device_options())
    try:
        body = await read_limited(request)
    except BodyTooLargeError as exc:
        # htmx swaps only 2xx/422 (base.html), so its answer is a 422 carrying the same message
        status = 422 if wants_fragment(request) else 413
        view = DoctorView(empty_form, [Problem(LOG_FIELD, too_large_message(exc.size), 413)], None)
        return render(request, view, status)
    try:
        submitted = await _read_form(request, body)
    except (HTTPException, MultiPartException) as exc:
        message = str(getattr(exc, "detail", None) or getattr(exc, "message", "") or t("unreadable form"))
        return render(request, DoctorView(empty_form, [Problem(LOG_FIELD, message)], None), 422)
    if submitted.data is None:
        return render(request, DoctorView(submitted.form, submitted.problems, None), 422)
    diagnosis, problem = _run(submitted.data)
    if problem is not None or diagnosis is None:
        problems = [problem] if problem is not None else []
        status = 413 if problem is not None and problem.status == 413 and not wants_fragment(request) else 422
        return render(request, DoctorView(submitted.form, problems, None), status)
    view = DoctorView(form=submitted.form, problems=[], result=result_view(request, diagnosis))
    return render(request, view)
