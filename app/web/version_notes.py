"""What changes with the vLLM version, as sentences: read off `VersionRules`, never per version.

The planner lists the rules of the chosen release; the compare view lists the rules two releases
differ in and uses them as the reason for each differing row. Every sentence is built from a field
of `VersionRules`; "as in A – B" ranges are computed over `KNOWN_VERSIONS`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from operator import attrgetter
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # no types-PyYAML in the lock file
from pydantic import BaseModel, ConfigDict, field_validator

from app.core import equations as E
from app.core.text import Text
from app.core.versions import KNOWN_VERSIONS, VersionRules, rules_for

# The formula each release uses, worded once (app.core.equations), shown here and in the block math.
TOKENS_TEXT = E.TOKENS_FORMULA
CONCURRENCY_TEXT = E.CONCURRENCY_FORMULA
NEEDED_TEXT = E.NEEDED_FORMULA
BUDGET_TEXT = E.BUDGET_FORMULA
WEIGHTS_LOG_TEXT = {
    "took_gb": Text("“Loading model weights took X GB”"),
    "took_gib": Text("“Model loading took X GiB and … seconds”"),
    "took_gib_memory": Text("“Model loading took X GiB memory and … seconds”"),
}


@dataclass(frozen=True)
class VersionNote:
    key: str  # a VersionRules aspect, also used to link compare rows to their reasons
    topic: str
    value: str
    detail: str = ""


def _same_span(rules: VersionRules, value_of: Callable[[VersionRules], object]) -> str:
    """Known releases sharing this value, contiguous around the chosen one: "0.20.2 – 0.33.0"."""
    here = value_of(rules)
    values = [value_of(rules_for(v)) for v in KNOWN_VERSIONS]  # KNOWN_VERSIONS is oldest first
    position = KNOWN_VERSIONS.index(rules.version)  # rules are always a known release's (the bracket)
    lo = hi = position
    while lo > 0 and values[lo - 1] == here:
        lo -= 1
    while hi < len(values) - 1 and values[hi + 1] == here:
        hi += 1
    first, last = KNOWN_VERSIONS[lo], KNOWN_VERSIONS[hi]
    return f"{first} – {last}" if first != last else Text("only {first}", first=first)


def _swap_space(rules: VersionRules) -> str:
    if rules.swap_space_used:
        return Text("used: CPU swap space for V0 preemption")
    if not rules.has_swap_space_flag:
        return Text("removed (passing it is an error)")
    return Text("accepted but ignored by the V1 engine")


def _log_wording(rules: VersionRules) -> str:
    if rules.engine == "v0":
        return Text("“# GPU blocks: N, # CPU blocks: M” then “Maximum concurrency …”")
    if rules.merged_capacity_line:
        return Text(
            "one line: “GPU KV cache size: N tokens, Maximum concurrency for L tokens per request: Xx”"
        )
    return Text(
        "two lines: “GPU KV cache size: N tokens” and “Maximum concurrency for L tokens per request: Xx”"
    )


# (key, topic, value reader, sentence). The reader is what "differs" compares between two releases.
Aspect = tuple[str, str, Callable[[VersionRules], object], Callable[[VersionRules], str]]


class Switch(BaseModel):
    """A version_notes.yaml row: an aspect that one boolean field of VersionRules decides."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    topic: str
    field: str
    when_set: str
    when_unset: str

    @field_validator("field")
    @classmethod
    def _boolean_rule(cls, value: str) -> str:
        if value not in BOOLEAN_RULES:
            raise ValueError(f"{value!r} is not a boolean field of VersionRules")
        return value


BOOLEAN_RULES = frozenset(f.name for f in dataclasses.fields(VersionRules) if f.type in ("bool", bool))
SWITCHES_FILE = Path(__file__).with_name("version_notes.yaml")
SWITCHES: dict[str, Switch] = {
    key: Switch.model_validate(row)
    for key, row in yaml.safe_load(SWITCHES_FILE.read_text(encoding="utf-8")).items()
}


def _shown(text: str) -> str:
    """A flag (``--kv-offloading-size``) stays verbatim; any other text is a sentence in the page's language."""
    return text if text.startswith("--") else Text(text)


def message_ids() -> list[tuple[tuple[str, int], str]]:
    """Every sentence of version_notes.yaml, for scripts/extract_messages.py (where, message id)."""
    where = ("app/web/version_notes.yaml", 0)
    texts = (text for row in SWITCHES.values() for text in (row.topic, row.when_set, row.when_unset))
    return [(where, text) for text in texts if not text.startswith("--")]


def _switch(key: str) -> Aspect:
    """The aspect ``key`` of version_notes.yaml: its ``when_set`` sentence when the field is set, else ``when_unset``."""
    row = SWITCHES[key]
    read = attrgetter(row.field)
    on, off = _shown(row.when_set), _shown(row.when_unset)
    return (key, _shown(row.topic), read, lambda r: on if read(r) else off)


def _worded(key: str, topic: str, field: str, wording: Mapping[Any, str]) -> Aspect:
    """An aspect read off one field of VersionRules whose every value has its sentence in ``wording``."""
    read = attrgetter(field)
    return (key, topic, read, lambda r: wording[read(r)])


ASPECTS: tuple[Aspect, ...] = (
    ("engine", Text("Engine"), lambda r: r.engine, lambda r: r.engine.upper()),
    (
        "default_util",
        Text("Default --gpu-memory-utilization"),
        lambda r: r.default_gpu_memory_utilization,
        lambda r: f"{r.default_gpu_memory_utilization:g}",
    ),
    (
        "budget",
        Text("KV budget"),
        lambda r: (r.budget_style, r.requested_uses_ceil),
        lambda r: (
            BUDGET_TEXT[r.budget_style]
            + (
                Text("; requested = ⌈total × utilization⌉")
                if r.requested_uses_ceil
                else Text("; requested = total × utilization")
            )
        ),
    ),
    _switch("cuda_graphs"),
    (
        "sampler",
        Text("Profile-run sampler peak"),
        lambda r: r.sampler_logit_copies,
        lambda r: Text(
            "{sampler_logit_copies:g} fp32 logits copies (modelled)",
            sampler_logit_copies=r.sampler_logit_copies,
        ),
    ),
    _switch("inflight"),
    _worded("tokens", Text("“GPU KV cache size” tokens"), "tokens_formula", TOKENS_TEXT),
    _worded("concurrency", Text("“Maximum concurrency”"), "concurrency_formula", CONCURRENCY_TEXT),
    (
        "needed",
        Text("Memory one request needs (sliding-window capacity)"),
        lambda r: (r.needed_formula, r.hybrid_allocator),
        lambda r: (
            NEEDED_TEXT[r.needed_formula]
            + (Text("; sliding/chunked layers get their own KV groups") if r.hybrid_allocator else "")
        ),
    ),
    _switch("null_block"),
    _worded("weights_log", Text("Weights log line"), "weights_log", WEIGHTS_LOG_TEXT),
    ("capacity_log", Text("Capacity log line"), _log_wording, _log_wording),
    (
        "gib_format",
        Text("GiB in the log"),
        lambda r: r.format_gib_style,
        lambda r: "%.2f (54.10)" if r.format_gib_style == "fixed2" else "round(x, 2) (54.1)",
    ),
    ("swap_space", "--swap-space", lambda r: _swap_space(r), _swap_space),
    _switch("offloading"),
    _switch("auto_fit"),
)


@cache
def version_notes(rules: VersionRules) -> tuple[VersionNote, ...]:
    """Every aspect of the chosen release, with the span of known releases that share it."""
    return tuple(
        VersionNote(key, topic, sentence(rules), _same_span(rules, read))
        for key, topic, read, sentence in ASPECTS
    )


@dataclass(frozen=True)
class RuleDifference:
    key: str
    topic: str
    a: str
    b: str


def rule_differences(a: VersionRules, b: VersionRules) -> tuple[RuleDifference, ...]:
    return tuple(
        RuleDifference(key, topic, sentence(a), sentence(b))
        for key, topic, read, sentence in ASPECTS
        if read(a) != read(b)
    )
