"""A set of real start-up logs kept with a ``sources.json`` of what each one prints (its thread's URL,
the verdict and the facts read by hand from the log): loaded, checked and read the same way for every
set (tests/unit/test_collected_logs.py, tests/unit/test_heldout_2026_12.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.core.diagnose import Diagnosis, diagnose
from app.core.logs import LogFacts, parse_startup_log
from app.core.specs import GIB

LOGS_DIR = Path(__file__).resolve().parent / "data" / "logs"


def sources(directory: Path) -> dict[str, dict[str, Any]]:
    """``sources.json`` without its ``_``-prefixed notes."""
    raw = json.loads((directory / "sources.json").read_text(encoding="utf-8"))
    return {name: entry for name, entry in raw.items() if name[0] != "_"}


def expected_value(value: object) -> object:
    """A fact as sources.json writes it: ``"3.5 GiB"`` is bytes (rounded), anything else as is."""
    if isinstance(value, str) and value.endswith(" GiB"):
        return round(float(value.removesuffix(" GiB")) * GIB)
    return value


def read(directory: Path, name: str) -> tuple[LogFacts, Diagnosis]:
    text = (directory / name).read_text(encoding="utf-8")
    return parse_startup_log(text), diagnose(log_text=text, metrics_text=None)


def check_log(directory: Path, name: str, expect: dict[str, Any]) -> None:
    """The verdict, every fact the log prints, and nothing claimed that it does not (``absent``)."""
    facts, diagnosis = read(directory, name)
    found = facts.model_dump()
    assert diagnosis.verdict == expect["verdict"]
    for field, value in expect["facts"].items():
        assert found[field] == expected_value(value), field
    for field in expect.get("absent", []):
        assert found[field] is None, field


def check_set(directory: Path, count: int, platforms: dict[str, int]) -> None:
    """The set holds ``count`` logs, each with its thread's URL, ``platforms`` by file-name prefix (nv, ascend, …)."""
    entries = sources(directory)
    assert len(entries) == count == len(list(directory.glob("*.log")))
    # a thread's URL, or a repository file the search index stores without naming its repository (its id)
    assert all(
        entry["url"].startswith(("https://github.com/", "public GitHub repository file (search index id "))
        for entry in entries.values()
    )
    prefixes = [name.split("_")[0] for name in entries]
    assert {p: prefixes.count(p) for p in platforms} == platforms
