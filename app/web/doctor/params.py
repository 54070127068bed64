"""The doctor's inputs: a body read with a hard limit, the API's JSON or text body, the page's form
(a pasted log, an uploaded file, metrics, the target and the device), each bad one a Problem naming its field."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.datastructures import UploadFile
from starlette.types import Message

from app.core import numbers
from app.core.catalog import find_device
from app.core.errors import PlannerError
from app.web.doctor.views import DoctorForm, device_options
from app.web.i18n import t
from app.web.inputs.problems import Problem

# The log parser refuses more than MAX_LOG_CHARS (5,000,000) characters; the body may carry that
# plus JSON escaping or multipart framing and a metrics scrape, so the body limit is 5 MiB.
MAX_BODY_BYTES = 5 * 2**20
MAX_TARGET_CONCURRENCY = 65_536  # the planner's own bound on target_concurrency

LOG_FIELD = "log"
LOG_FILE_FIELD = "log_file"


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


def replayed(request: Request, body: bytes) -> Request:
    """A request whose stream yields ``body`` again, so starlette's form parser can read it."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return Request(request.scope, receive)


class DiagnoseInput(BaseModel):
    """The API's JSON body (or, for a text/plain body, the query parameters plus the text as ``log``)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    log: str | None = None
    metrics: str | None = None
    target_concurrency: int | None = Field(default=None, ge=1, le=MAX_TARGET_CONCURRENCY)
    device: str | None = Field(default=None, max_length=100)


def _validation_problem(exc: ValidationError) -> Problem:
    first = exc.errors(include_url=False)[0]
    name = str(first["loc"][0]) if first["loc"] else LOG_FIELD
    return Problem(name, first["msg"])


def api_input(request: Request, body: bytes) -> DiagnoseInput | Problem:
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
class Submitted:
    form: DoctorForm
    data: DiagnoseInput | None
    problems: list[Problem]


async def read_form(request: Request, body: bytes) -> Submitted:
    content_type = request.headers.get("content-type", "")
    if "multipart/form-data" in content_type or "application/x-www-form-urlencoded" in content_type:
        form = await replayed(request, body).form(max_part_size=MAX_BODY_BYTES)
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
) -> Submitted:
    problems = [file_problem] if file_problem is not None else []
    log_text = fields.get(LOG_FIELD, "")
    if file_text.strip():
        log_text = file_text
    else:
        file_name = ""
    target, problem = _target(fields.get("target_concurrency", ""))
    if problem is not None:
        problems.append(problem)
    device = fields.get("device", "").strip()  # an unknown one stays in the form (its select keeps it)
    if device:
        try:
            find_device(device)
        except PlannerError as exc:
            problems.append(Problem(exc.field, exc.message))
    form = DoctorForm(
        log=fields.get(LOG_FIELD, ""),
        metrics=fields.get("metrics", ""),
        target_concurrency=fields.get("target_concurrency", ""),
        device=device,
        devices=device_options(),
        file_name=file_name,
    )
    if problems:
        return Submitted(form=form, data=None, problems=problems)
    data = DiagnoseInput(
        log=log_text, metrics=form.metrics or None, target_concurrency=target, device=device or None
    )
    return Submitted(form=form, data=data, problems=problems)
