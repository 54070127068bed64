"""Every regular expression the app runs, linear in its input by construction (issue 27).

``compile`` puts a pattern on RE2 (``google-re2``: an automaton, time linear in the text for any
pattern, with a program size known at compile time). RE2 has no look-around and caps counted repeats
at 1,000; a pattern that needs those stays on Python's backtracking ``re`` only if its *shape* is
proven safe here, else ``compile`` raises at import (a test imports every module):

- no unbounded repeat nests another variable repeat (``(a+)*``, ``(?:\\w+\\s)*``: exponential or
  polynomial backtracking);
- no two unbounded repeats that can match the same character follow each other with only optional
  items between (``\\s*\\s+``, ``\\S+\\s*\\S+``: O(n²) per attempt, O(n³) per search);
- the first unbounded repeat of an unanchored pattern is guarded — a look-behind or a preceding item
  disjoint from it — so a search does not rescan a run from each of its positions (``\\d+x`` over a
  line of digits is O(n²)).

So every pattern is either RE2 (linear, its ``programsize`` the constant) or a checked ``re`` shape.
``PATTERNS`` records each compiled pattern with its engine, for tests/unit/test_regex_linear.py and
bench/hostile.py. RE2's pattern and match objects implement the part of ``re.Pattern`` / ``re.Match``
the app uses (``search``, ``match``, ``fullmatch``, ``finditer``, ``sub``, ``split``; ``group``,
``groups``, ``groupdict``, ``start``, ``end``, ``span``, ``string``), so they are typed as ``re``'s.
RE2's ``\\d``, ``\\w``, ``\\s`` and ``\\b`` are ASCII (Python's are Unicode): vLLM prints ASCII.
"""

from __future__ import annotations

import re
import re._constants as sre_constants  # type: ignore[import-not-found]  # CPython's own parser: no stubs
import re._parser as sre_parse  # type: ignore[import-not-found]
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, cast

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

Engine = Literal["re2", "re"]
MAXREPEAT = sre_constants.MAXREPEAT
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a pattern RE2 cannot take falls back quietly (and is checked)


@dataclass(frozen=True)
class Compiled:
    pattern: str
    engine: Engine
    program_size: int  # RE2's instruction count (its time is at most ~this x the text length); 0 for re


PATTERNS: dict[str, Compiled] = {}


class NonLinearPatternError(ValueError):
    """A pattern RE2 cannot take and whose shape can backtrack super-linearly."""


def compile(pattern: str) -> re.Pattern[str]:
    """``pattern`` on RE2, or on ``re`` when RE2 cannot take it and its shape is linear (module doc)."""
    try:
        compiled = re2.compile(pattern, _OPTIONS)
    except re2.error:
        problems = shape_problems(pattern)
        if problems:
            raise NonLinearPatternError(f"{pattern!r}: {'; '.join(problems)}") from None
        PATTERNS[pattern] = Compiled(pattern, "re", 0)
        return re.compile(pattern)
    PATTERNS[pattern] = Compiled(pattern, "re2", int(compiled.programsize))
    return cast("re.Pattern[str]", compiled)


@lru_cache(maxsize=512)
def cached(pattern: str) -> re.Pattern[str]:
    """``compile`` once per pattern string (for patterns built at the call site)."""
    return compile(pattern)


@lru_cache(maxsize=64)
def user_pattern(pattern: str) -> re.Pattern[str] | None:
    """A pattern a pasted config supplies (GPTQ ``dynamic`` keys), on RE2 only: linear for any text, never
    recorded in ``PATTERNS``; None when RE2 cannot take it (look-around, a program over its size limit, or text
    that is not UTF-8: a lone surrogate such as the JSON escape \\ud800, which RE2's encoder raises on)."""
    try:
        return cast("re.Pattern[str]", re2.compile(pattern, _OPTIONS))
    except (re2.error, UnicodeEncodeError):
        return None


def search(pattern: str, text: str) -> re.Match[str] | None:
    return cached(pattern).search(text)


def fullmatch(pattern: str, text: str) -> re.Match[str] | None:
    return cached(pattern).fullmatch(text)


def sub(pattern: str, repl: str | Callable[[re.Match[str]], str], text: str) -> str:
    return cached(pattern).sub(repl, text)


def split(pattern: str, text: str) -> list[str]:
    return cached(pattern).split(text)


# ----------------------------------------------------------------------------------------------
# The shape check for the patterns RE2 cannot take
# ----------------------------------------------------------------------------------------------

# Byte values 0-255, then four stand-ins for the non-ASCII characters a class can hold.
_NA_DIGIT, _NA_SPACE, _NA_LETTER, _NA_OTHER = 256, 257, 258, 259
_ALL = frozenset(range(260))
_NON_ASCII = frozenset((_NA_DIGIT, _NA_SPACE, _NA_LETTER, _NA_OTHER))
_DIGITS = frozenset(range(0x30, 0x3A)) | {_NA_DIGIT}
_SPACE = frozenset(b" \t\n\r\f\v") | {_NA_SPACE}
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") | {
    _NA_DIGIT,
    _NA_LETTER,
}
_CATEGORY = {
    sre_constants.CATEGORY_DIGIT: _DIGITS,
    sre_constants.CATEGORY_NOT_DIGIT: _ALL - _DIGITS,
    sre_constants.CATEGORY_SPACE: _SPACE,
    sre_constants.CATEGORY_NOT_SPACE: _ALL - _SPACE,
    sre_constants.CATEGORY_WORD: _WORD,
    sre_constants.CATEGORY_NOT_WORD: _ALL - _WORD,
}


def _code(value: int) -> int:
    return value if value < 256 else (_NA_LETTER if chr(value).isalpha() else _NA_OTHER)


_REPEATS = {
    sre_constants.MAX_REPEAT,
    sre_constants.MIN_REPEAT,
    getattr(sre_constants, "POSSESSIVE_REPEAT", None),
}
_ASSERTIONS = {sre_constants.ASSERT, sre_constants.ASSERT_NOT, sre_constants.AT}


def _chars(items: Any) -> frozenset[int]:
    """Every character a (sub)pattern can match anywhere (over-approximated)."""
    out: set[int] = set()
    for op, av in items:
        if op is sre_constants.LITERAL:
            out.add(_code(av))
        elif op is sre_constants.NOT_LITERAL or op is sre_constants.ANY:
            out |= _ALL
        elif op is sre_constants.IN:
            out |= _class(av)
        elif op in _REPEATS:
            out |= _chars(av[2])
        elif op is sre_constants.SUBPATTERN:
            out |= _chars(av[-1])
        elif op is sre_constants.BRANCH:
            for alt in av[1]:
                out |= _chars(alt)
        elif op not in _ASSERTIONS:
            out |= _ALL  # anything else (a back-reference…): assume the worst
    return frozenset(out)


def _class(av: Any) -> frozenset[int]:
    chars: set[int] = set()
    negate = False
    for op, value in av:
        if op is sre_constants.NEGATE:
            negate = True
        elif op is sre_constants.LITERAL:
            chars.add(_code(value))
        elif op is sre_constants.RANGE:
            low, high = value
            chars |= set(range(min(low, 256), min(high, 255) + 1))
            if high >= 256:
                chars |= _NON_ASCII
        elif op is sre_constants.CATEGORY:
            chars |= _CATEGORY.get(value, _ALL)
    return frozenset(_ALL - chars) if negate else frozenset(chars)


def _variable(op: Any, av: Any) -> bool:
    return op in _REPEATS and av[0] != av[1]


def _unbounded(op: Any, av: Any) -> bool:
    return op in _REPEATS and av[1] == MAXREPEAT


def _any_inside(items: Any, found: Callable[[Any, Any], bool], *, into_assertions: bool) -> bool:
    """Whether ``found(op, av)`` holds for an item of ``items`` or of a repeat, group or branch inside
    it (and of a look-around when ``into_assertions``)."""
    for op, av in items:
        if found(op, av):
            return True
        if op in _REPEATS:
            inner = [av[2]]
        elif op is sre_constants.SUBPATTERN:
            inner = [av[-1]]
        elif op is sre_constants.BRANCH:
            inner = list(av[1])
        elif into_assertions and op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            inner = [av[1]]
        else:
            continue
        if any(_any_inside(part, found, into_assertions=into_assertions) for part in inner):
            return True
    return False


def _contains_variable_repeat(items: Any) -> bool:
    return _any_inside(items, _variable, into_assertions=True)


def _nullable(op: Any, av: Any) -> bool:
    if op in _REPEATS:
        return bool(av[0] == 0)
    if op in _ASSERTIONS:
        return True
    if op is sre_constants.SUBPATTERN:
        return all(_nullable(o, a) for o, a in av[-1])
    if op is sre_constants.BRANCH:
        return any(all(_nullable(o, a) for o, a in alt) for alt in av[1])
    return False


@dataclass
class _Scan:
    """Where a sequence check stands: unbounded repeats still open, and whether a search is guarded."""

    open_runs: list[frozenset[int]]
    guarded: bool
    previous: Any = None


def _check_sequence(items: Any, problems: list[str], scan: _Scan) -> None:
    """Nested and adjacent unbounded repeats in one sequence; a group continues its sequence."""
    for op, av in items:
        if op is sre_constants.SUBPATTERN:
            _check_sequence(av[-1], problems, scan)
            continue
        if op in _REPEATS:
            body = av[2]
            if (av[1] == MAXREPEAT and _contains_variable_repeat(body)) or (
                av[1] > 1 and _unbounded_inside(body)
            ):
                problems.append("a repeat nests a variable repeat")
            _check_sequence(body, problems, _Scan([], True))
        elif op is sre_constants.BRANCH:
            for alt in av[1]:
                _check_sequence(alt, problems, _Scan([], True))
        if _unbounded(op, av):
            chars = _chars(av[2])
            if any(run & chars for run in scan.open_runs):
                problems.append("two unbounded repeats can match the same characters in a row")
            if not scan.guarded and not _guards(scan.previous, chars):
                problems.append(
                    "an unguarded unbounded repeat: a search would rescan its run from each position"
                )
            scan.open_runs.append(chars)
            scan.guarded = True
        elif not _nullable(op, av):
            scan.open_runs = []
        if op is sre_constants.AT and av is sre_constants.AT_BEGINNING:
            scan.guarded = True
        if not (op in _REPEATS and av[0] == 0 and av[1] != MAXREPEAT):
            scan.previous = (op, av)  # an optional bounded item (``-?``) does not hide the guard before it


def _guards(previous: Any, chars: frozenset[int]) -> bool:
    """A search tries the pattern at each position; a run of ``chars`` is scanned once if the item
    before it is a look-behind (a number boundary) or cannot match inside the run."""
    if previous is None:
        return False
    op, _ = previous
    if op is sre_constants.ASSERT_NOT:
        return True
    return op not in _REPEATS and op is not sre_constants.AT and not (_chars([previous]) & chars)


def _unbounded_inside(items: Any) -> bool:
    return _any_inside(items, _unbounded, into_assertions=False)


def shape_problems(pattern: str) -> list[str]:
    """Why ``pattern`` could backtrack super-linearly on Python's ``re`` (module doc); [] when safe."""
    parsed = sre_parse.parse(pattern)
    problems: list[str] = []
    _check_sequence(list(parsed), problems, _Scan([], False))
    return sorted(set(problems))
