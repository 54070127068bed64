"""Permalinks: a page's inputs as the query string that reproduces them, and back.

Names are the `vllm serve` flags in snake_case so a permalink reads like the command it describes;
defaults are omitted and ``v`` (the link format) always comes first. The compare view's link, which
the planner shows, is built here too, so neither feature imports the other.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import parse_qsl, urlencode

from pydantic import BaseModel
from starlette.requests import Request

from app.core.versions import DEFAULT_VERSION
from app.web.inputs.params import (
    DEFAULTS,
    FIELD_NAMES,
    LINK_FORMAT_VERSION,
    PACKED_FIELDS,
    PlannerParams,
    pack_config_json,
    pack_quant_config_json,
    pack_text,
)
from app.web.inputs.problems import Problem
from app.web.templating import url_path

# The compare view's default partner: the release the calibration logs come from (docs/accuracy.md);
# when that is the version already chosen, the newest release.
COMPARE_PARTNER = "0.19.0"


def query_items(params: PlannerParams) -> list[tuple[str, str]]:
    """The non-default fields, in declaration order, as strings (``v`` always first); a field whose blank is not
    set (PlannerParams.unset_when_blank: the target N) is kept at its default when typed, since a typed N = 1 is
    a given N (the Speed section's clients) and a blank one is not."""
    items: list[tuple[str, str]] = [("v", str(LINK_FORMAT_VERSION))]
    typed = set(PlannerParams.unset_when_blank()) & params.model_fields_set
    for name in FIELD_NAMES:
        if name == "v":
            continue
        value = getattr(params, name)
        if value == getattr(DEFAULTS, name) and name not in typed:
            continue
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif name == "config_json":
            text = pack_config_json(value)
        elif name == "hf_quant_config_json":
            text = pack_quant_config_json(value)
        elif name in PACKED_FIELDS:
            text = pack_text(value)
        else:
            text = str(value)
        items.append((name, text))
    return items


def form_values(params: BaseModel) -> dict[str, str]:
    """Every field as its form input shows it: blank for None, true/false, lists comma-joined, floats %g."""
    out: dict[str, str] = {}
    for name, value in params.model_dump().items():
        if value is None:
            out[name] = ""
        elif isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, tuple | list):
            out[name] = ",".join(str(v) for v in value)
        elif isinstance(value, float):
            out[name] = f"{value:g}"
        else:
            out[name] = str(value)
    return out


def to_query(params: PlannerParams) -> str:
    """The permalink's query string: defaults omitted, ``v=1`` always present."""
    return urlencode(query_items(params))


def with_typed(query: str, problems: Iterable[Problem]) -> str:
    """``query`` plus each unusable input as the user typed it, so the permalink (and the address bar
    htmx sets to it) reopens the same error, never a result for the default standing in for it."""
    present = {key for key, _ in parse_qsl(query, keep_blank_values=True)}
    extra = [(p.field, p.value) for p in problems if p.stops and p.value and p.field not in present]
    return f"{query}&{urlencode(extra)}" if extra else query


def permalink(request: Request, params: PlannerParams, query: str | None = None) -> str:
    """The planner URL for ``params`` (``query``: their ``to_query``, when the caller has it already)."""
    return f"{url_path(request, 'planner')}?{to_query(params) if query is None else query}"


async def form_items(request: Request) -> list[tuple[str, str]]:
    """A POSTed form's text fields, in order (what a GET carries in its query)."""
    form = await request.form()
    return [(key, value) for key, value in form.multi_items() if isinstance(value, str)]


async def page_items(request: Request) -> list[tuple[str, str]]:
    """A page's inputs: the query of a GET (its permalink), the form fields of a POST."""
    if request.method == "GET":
        return list(request.query_params.multi_items())
    return await form_items(request)


async def state_items(request: Request) -> list[tuple[str, str]]:
    """The planner's inputs a section was asked for: the query of a GET, or the ``state`` field of a
    POST (the fragment's one copy of the permalink query, ``#planner-state``, sent by ``hx-include``
    so a pasted config.json is not repeated in every section's URL). A POST without ``state`` is read
    as the form's own fields: answering it with the defaults would show another model's figures."""
    if request.method == "GET":
        return request.query_params.multi_items()
    form = await request.form()
    state = form.get("state")
    if isinstance(state, str):
        return parse_qsl(state, keep_blank_values=True)
    return [(key, value) for key, value in form.multi_items() if isinstance(value, str)]


def compare_versions(params: PlannerParams) -> str:
    """The versions the planner's compare link names: the chosen one and its partner (``a=…&b=…``)."""
    chosen = params.resolved_version
    partner = COMPARE_PARTNER if chosen != COMPARE_PARTNER else DEFAULT_VERSION
    return urlencode({"a": chosen, "b": partner})


def compare_link(request: Request, params: PlannerParams) -> str:
    """The compare view for the same inputs, the chosen release against its partner."""
    without_version = to_query(params.model_copy(update={"vllm_version": None}))
    return f"{url_path(request, 'compare')}?{without_version}&{compare_versions(params)}"
