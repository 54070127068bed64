"""One problem type for every banner line, inline error and API detail the pages build.

A ``Problem`` names the field, says what is wrong (a core ``Text`` until :func:`problems_of`
translates it, or a sentence already in the request's language) and, when the page dropped a
value it could not use, which value that was.

The rule every feature shares (issue 24 item 1): an input the page cannot use (a model it does not
know, a number it cannot read) ``stops`` the page. Nothing is computed for a substitute: the resolve
marks the inputs unusable and the one estimate call refuses them (:class:`UnusableInputs`), so no
verdict, command or deploy text can name another model. Only presentation inputs (the language) fall
back to their default.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache

from app import hub
from app.core.catalog import list_models
from app.core.errors import PlannerError, UnknownModelError
from app.core.text import SEMICOLON, SPACE, Text, TextList
from app.web.i18n import tr

SHOWN_VALUE_CHARS = 60  # a dropped value is echoed at most this long (…)
# Inputs whose unusable value only changes how the page is shown: they fall back and do not stop it.
PRESENTATION_FIELDS = frozenset({"lang", "v"})
# "Did you mean": at most this many catalog ids, each at least this similar (difflib's own default
# cutoff, 0.6: "Qwen3-30B-A3B-Instruct-2507" against "Qwen3-30B-A3B" is 2 × 13 / 40 = 0.65).
SUGGESTIONS = 3
SUGGESTION_CUTOFF = 0.6
VARIANT_SEPARATORS = "-_."  # "Qwen3-30B-A3B" + "-Instruct-2507": a variant of a catalog model
# Only this much of a typed id is compared: twice the longest catalog name (46 characters), so a
# 300-character id costs what a plausible one does (difflib's ratio is quadratic in the lengths).
SUGGESTION_QUERY_CHARS = 96


@dataclass(frozen=True)
class Problem:
    field: str
    message: str  # a core Text (translated by problems_of) or a sentence in the request's language
    value: str = ""  # the value that was dropped ("" when none was, or it is not worth echoing)
    status: int = 422  # 413 for a body over the limit (the doctor's paste)
    stops: bool = True  # nothing is computed while this input is unusable (False: presentation only)


class UnusableInputs(PlannerError):
    """Raised by the one estimate call for inputs a page could not use: its error path shows them
    (every one, in the verdict's place) instead of a result for a substitute."""

    def __init__(self, problems: tuple[Problem, ...]) -> None:
        super().__init__(problems[0].field, problems[0].message)
        self.problems = problems


def shown_value(value: object) -> str:
    """A dropped value as a banner echoes it: at most SHOWN_VALUE_CHARS characters."""
    text = str(value)
    return text if len(text) <= SHOWN_VALUE_CHARS else text[: SHOWN_VALUE_CHARS - 3] + "..."


def problems_of(items: Iterable[Problem]) -> tuple[Problem, ...]:
    """The problems with their messages in the request's language (what a template shows)."""
    return tuple(Problem(p.field, tr(p.message), p.value, p.status, p.stops) for p in items)


def stopping(items: Iterable[Problem]) -> tuple[Problem, ...]:
    """The problems that stop the page (everything but presentation inputs)."""
    return tuple(p for p in items if p.stops)


def error_of(exc: PlannerError) -> Problem:
    """A page's problem for ``exc`` (translated); an unknown model gets the page's "did you mean"."""
    if isinstance(exc, UnusableInputs):
        return problems_of(exc.problems[:1])[0]
    if isinstance(exc, UnknownModelError):
        return Problem(exc.field, tr(unknown_model_message(exc.model_id)), value=shown_value(exc.model_id))
    return Problem(exc.field, tr(exc.message))


def api_message(exc: PlannerError) -> str:
    """The API's ``msg`` for ``exc`` (translated); an unknown model gets the API's "did you mean"."""
    if isinstance(exc, UnknownModelError):
        return tr(unknown_model_message(exc.model_id, api=True))
    return tr(exc.message)


def errors_of(exc: PlannerError) -> tuple[Problem, ...]:
    """Every problem behind ``exc``: all unusable inputs, or the one refusal."""
    if isinstance(exc, UnusableInputs):
        return problems_of(exc.problems)
    return (error_of(exc),)


def typed_values(values: Mapping[str, str], problems: Iterable[Problem]) -> dict[str, str]:
    """A form's values with each unusable input put back as the user typed it (the box keeps "thirty")."""
    typed = dict(values)
    for p in problems:
        if p.stops and p.value and p.field in typed:
            typed[p.field] = p.value
    return typed


# --- an unknown model: "did you mean", and how to give the model instead ------------------------------


@cache
def _catalog_names() -> tuple[tuple[str, str, str], ...]:
    """(lowercased full name, lowercased short name, name as written) for every catalog id and alias."""
    rows = []
    for entry in list_models():
        for name in (entry.id, *entry.aliases):
            low = name.lower()
            rows.append((low, low.rsplit("/", 1)[-1], name))
    return tuple(rows)


def _is_variant(query: str, base: str) -> bool:
    """``query`` is ``base`` plus a suffix ("qwen3-30b-a3b" + "-instruct-2507")."""
    return len(query) > len(base) and query.startswith(base) and query[len(base)] in VARIANT_SEPARATORS


def _similarity(matcher: difflib.SequenceMatcher[str], candidate: str) -> float:
    """difflib's ratio of ``candidate`` to the matcher's query, 0 when its cheap upper bounds already
    fall below the cut-off (as difflib.get_close_matches does)."""
    matcher.set_seq1(candidate)
    if matcher.real_quick_ratio() < SUGGESTION_CUTOFF or matcher.quick_ratio() < SUGGESTION_CUTOFF:
        return 0.0
    return matcher.ratio()


def close_models(name: str) -> tuple[str, ...]:
    """The catalog ids (as written) closest to ``name``: catalog models it is a variant of (longest
    first), then by difflib similarity of the full names and of the short names (after the "/")."""
    full = name.strip().lower()[:SUGGESTION_QUERY_CHARS]
    short = full.rsplit("/", 1)[-1]
    # the query is difflib's second sequence: its index is built once, each catalog name is the first
    by_full, by_short = difflib.SequenceMatcher(None), difflib.SequenceMatcher(None)
    by_full.set_seq2(full)
    by_short.set_seq2(short)
    scored: dict[str, tuple[int, float, str]] = {}  # shown name's model key -> (variant length, ratio, shown)
    for low_full, low_short, shown in _catalog_names():
        variant = len(low_short) if _is_variant(short, low_short) else 0
        ratio = max(_similarity(by_full, low_full), _similarity(by_short, low_short))
        if not variant and ratio < SUGGESTION_CUTOFF:
            continue
        best = scored.get(low_short)
        if best is None or (variant, ratio) > best[:2]:
            scored[low_short] = (variant, ratio, shown)
    ranked = sorted(scored.values(), key=lambda row: (-row[0], -row[1], row[2]))
    out: list[str] = []
    for _, _, shown in ranked:
        if shown not in out:
            out.append(shown)
    return tuple(out[:SUGGESTIONS])


def unknown_model_message(model_id: str, *, api: bool = False) -> str:
    """What to say about a model id the catalog lacks (and the hub, if on, does not fetch): that nothing
    is computed for it, the closest catalog ids, and how to give the model instead."""
    near = close_models(model_id)
    if api:
        named = (
            Text(
                "unknown model {model_id!r} (did you mean {models}?)",
                model_id=model_id,
                models=", ".join(near),
            )
            if near
            else Text("unknown model {model_id!r}", model_id=model_id)
        )
        how = (
            Text("send its config.json as config_json")
            if hub.enabled()
            else Text(
                "send its config.json as config_json, or start the server with KVPLAN_ALLOW_HUB=1 to read it from the Hugging Face hub"
            )
        )
        return TextList(SEMICOLON, (named, how))
    parts = [
        Text(
            "unknown model {model_id!r}: it is not in the catalog, so nothing is computed for it.",
            model_id=model_id,
        )
    ]
    if near:
        parts.append(Text("Did you mean {models}?", models=", ".join(near)))
    parts.append(
        Text(
            "Otherwise give its Hugging Face id (org/name), or paste its config.json under “Paste config.json”."
        )
        if hub.enabled()
        else Text(
            "Otherwise paste its config.json under “Paste config.json” among the inputs, or start the planner with KVPLAN_ALLOW_HUB=1 to read it from the Hugging Face hub."
        )
    )
    return TextList(SPACE, parts)
