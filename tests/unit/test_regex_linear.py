"""Every regular expression in app/ is linear in its input by construction (issue 27, docs/security.md).

Deterministic, no clock: a pattern is either on RE2 (an automaton: time at most ~program size x text
length, the program size read from RE2 itself) or on Python's ``re`` with a shape that cannot backtrack
super-linearly (app/core/regex.py's check). bench/hostile.py times each pattern on adversarial strings
built from its own structure (every quantifier inflated, n vs 4n) and prints the growth ratios.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import app
from app.core import regex

ROOT = Path(__file__).resolve().parents[2]
MATCHING_FUNCTIONS = {
    "compile",
    "search",
    "match",
    "fullmatch",
    "sub",
    "subn",
    "split",
    "findall",
    "finditer",
}
# RE2's time is at most ~its program size per input character (its DFA, usually, one step). Counted
# repeats expand: the largest here, "serving model (\\S{1,512})", is 6,067 instructions.
MAX_PROGRAM_SIZE = 10_000


def _all_modules() -> list[str]:
    names = [m.name for m in pkgutil.walk_packages(app.__path__, "app.")]
    for name in names:
        importlib.import_module(name)
    return names


def test_no_module_calls_the_re_module_itself() -> None:
    """Every pattern goes through app.core.regex: a direct ``re.compile`` / ``re.search`` would skip it."""
    offenders = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        if path == ROOT / "app" / "core" / "regex.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.func.attr in MATCHING_FUNCTIONS
            ):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} re.{node.func.attr}")
    assert offenders == []


def test_every_compiled_pattern_is_re2_or_a_checked_linear_shape() -> None:
    modules = _all_modules()
    assert len(modules) > 80
    patterns = dict(regex.PATTERNS)
    assert len(patterns) > 60  # the log, metrics, command, number and hub patterns (97 when written)
    engines = {c.engine for c in patterns.values()}
    assert engines <= {"re2", "re"}
    on_re2 = [c for c in patterns.values() if c.engine == "re2"]
    assert len(on_re2) > len(patterns) // 2
    for compiled in on_re2:
        assert 0 < compiled.program_size <= MAX_PROGRAM_SIZE, compiled.pattern
        assert type(regex.cached(compiled.pattern)).__module__ == "re2"
    for compiled in patterns.values():
        if compiled.engine == "re":
            assert regex.shape_problems(compiled.pattern) == [], compiled.pattern


def test_the_metrics_sample_line_that_took_seconds_is_split_without_a_pattern() -> None:
    """N2: ``vllm:a`` + 8,000 spaces + ``b`` + 8,000 spaces + ``c`` took 1.9 s per line on ``re``. Round 10 splits a
    sample line with str methods (app.core.logs.metrics._sample), so no pattern sees it: three fields after the
    name are not a sample (value + integer timestamp at most)."""
    from app.core.logs import metrics

    assert not hasattr(metrics, "_SAMPLE")
    line = "vllm:a" + " " * 8000 + "b" + " " * 8000 + "c"
    assert metrics._sample(line) is None
    assert metrics._sample('vllm:num_requests_waiting{engine="0"} 3 1700000000') == (
        "vllm:num_requests_waiting",
        'engine="0"',
        "3",
    )


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        (r"(a+)+b", "a repeat nests a variable repeat"),
        (r"(?:\w+\s)*x", "a repeat nests a variable repeat"),
        (r"^x\s*\s+y", "two unbounded repeats can match the same characters in a row"),
        (r"^\S+\s*\S+$", "two unbounded repeats can match the same characters in a row"),
        (r"\d+x", "an unguarded unbounded repeat: a search would rescan its run from each position"),
        (r"a\w+b", "an unguarded unbounded repeat: a search would rescan its run from each position"),
    ],
)
def test_the_shape_check_refuses_backtracking_shapes(pattern: str, problem: str) -> None:
    assert problem in regex.shape_problems(pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        r"took (?<![\d.])(-?\d+(?:\.\d+)?)\s*GiB",  # a number at a number boundary, then a disjoint run
        r"(?<![\d,])(\d{1,3}(?:,\d{3})+|\d+) tokens",  # fixed-width groups inside the repeat
        r"^\S{0,200}x",  # bounded
        r"Graph capturing finished in \d+ secs?",  # the literal before the run cannot occur inside it
    ],
)
def test_the_shape_check_accepts_linear_shapes(pattern: str) -> None:
    assert regex.shape_problems(pattern) == []


def test_a_pattern_re2_refuses_and_the_check_refuses_cannot_be_compiled() -> None:
    with pytest.raises(regex.NonLinearPatternError, match="nests a variable repeat"):
        regex.compile(r"(?<!x)(a+)+b")  # the look-behind keeps it off RE2
    assert r"(?<!x)(a+)+b" not in regex.PATTERNS
