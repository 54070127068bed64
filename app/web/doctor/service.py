"""The diagnosis of the doctor's inputs (app.core.diagnose) and the planner link it leads to."""

from __future__ import annotations

from app.core.diagnose import Diagnosis, diagnose
from app.core.errors import PlannerError
from app.core.logs import over_limit
from app.web.doctor.params import LOG_FIELD, DiagnoseInput
from app.web.i18n import tr
from app.web.inputs.problems import Problem


def check_sizes(data: DiagnoseInput) -> Problem | None:
    for name, text in ((LOG_FIELD, data.log), ("metrics", data.metrics)):
        too_long = over_limit(text)
        if too_long is not None:
            return Problem(name, tr(too_long), status=413)  # the page's language
    if not (data.log or "").strip() and not (data.metrics or "").strip():
        return Problem(LOG_FIELD, "empty: paste a vLLM start-up log (or a /metrics scrape)")
    return None


def run(data: DiagnoseInput) -> tuple[Diagnosis | None, Problem | None]:
    problem = check_sizes(data)
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
        return None, Problem(exc.field, exc.message, status=413 if exc.field == LOG_FIELD else 422)
