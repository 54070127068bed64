"""The compare view's inputs: the planner's parameters plus the two releases (``a``, ``b``); the link
to it the planner shows is app.web.inputs.links.compare_link."""

from __future__ import annotations

from fastapi import Request

from app.core.errors import PlannerError
from app.core.versions import DEFAULT_VERSION, resolve_version
from app.web.inputs.links import COMPARE_PARTNER
from app.web.inputs.problems import Problem, shown_value

VERSION_KEYS = ("a", "b")


def parse_versions(request: Request) -> tuple[str, str, list[Problem]]:
    problems: list[Problem] = []
    chosen = {"a": COMPARE_PARTNER, "b": DEFAULT_VERSION}
    for key in VERSION_KEYS:
        value = request.query_params.get(key, "").strip()
        if not value:
            continue
        try:
            chosen[key] = resolve_version(value).requested  # any release, as on the planner
        except PlannerError as exc:
            problems.append(Problem(key, exc.message, value=shown_value(value)))
    return chosen["a"], chosen["b"], problems
