"""The compare view's inputs: the planner's parameters plus the two releases (``a``, ``b``), and the
link to it the planner shows."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import Request

from app.core.errors import PlannerError
from app.core.versions import DEFAULT_VERSION, resolve_version
from app.web.planner.params import FieldProblem, PlannerParams, to_query
from app.web.templating import url_path

# The default partner: the release the calibration logs come from (docs/accuracy.md); when that is
# the version already chosen, the newest release.
COMPARE_PARTNER = "0.19.0"
VERSION_KEYS = ("a", "b")


def compare_versions(params: PlannerParams) -> str:
    """The versions the planner's compare link names: the chosen one and its partner (``a=…&b=…``)."""
    chosen = params.resolved_version
    partner = COMPARE_PARTNER if chosen != COMPARE_PARTNER else DEFAULT_VERSION
    return urlencode({"a": chosen, "b": partner})


def compare_link(request: Request, params: PlannerParams) -> str:
    without_version = to_query(params.model_copy(update={"vllm_version": None}))
    return f"{url_path(request, 'compare')}?{without_version}&{compare_versions(params)}"


def parse_versions(request: Request) -> tuple[str, str, list[FieldProblem]]:
    problems: list[FieldProblem] = []
    chosen = {"a": COMPARE_PARTNER, "b": DEFAULT_VERSION}
    for key in VERSION_KEYS:
        value = request.query_params.get(key, "").strip()
        if not value:
            continue
        try:
            chosen[key] = resolve_version(value).requested  # any release, as on the planner
        except PlannerError as exc:
            shown = value if len(value) <= 60 else value[:57] + "..."
            problems.append(FieldProblem(key, shown, exc.message))
    return chosen["a"], chosen["b"], problems
