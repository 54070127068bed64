"""The options each vLLM release's `vllm serve` has (vllm_flags.json, written by
scripts/gen_vllm_flags.py from each release's own argument parser): per flag, its runs among the releases
read, [first release read that has it, last release read that has it (None: the newest read)].

A leaf module: the flag table (serve_flags.py) writes a flag only where the release has it and the
command reader (command.py) refuses what the release lacks, naming the releases that have it; both import
this, which imports neither.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from app.core.text import Text
from app.core.version_parse import Version
from app.core.versions import parse_version, resolve_version

FLAGS_FILE = Path(__file__).with_name("vllm_flags.json")  # scripts/gen_vllm_flags.py, from vLLM's parser


@dataclass(frozen=True)
class FlagRun:
    """Releases read in a row that have one flag: ``first`` to ``last`` (None: to the newest read)."""

    first: str
    last: str | None


@cache
def _table() -> tuple[tuple[str, ...], dict[str, tuple[FlagRun, ...]]]:
    data = json.loads(FLAGS_FILE.read_text(encoding="utf-8"))
    runs = {
        flag: tuple(FlagRun(first=first, last=last) for first, last in spans)
        for flag, spans in data["flags"].items()
    }
    return tuple(data["releases_read"]), runs


def releases_read() -> tuple[str, ...]:
    """The releases whose parser was read, oldest first."""
    return _table()[0]


@cache
def _read_release(vllm_version: str | None) -> str:
    """The newest release read at or before ``vllm_version`` itself, not its rules' bracket (0.29.0 reads
    0.29.0's parser, though versions.py plans it with an older release's rules); the oldest read for anything
    older, DEFAULT_VERSION for None."""
    wanted = resolve_version(vllm_version).release
    read = releases_read()
    chosen = read[0]
    for version in read:
        if parse_version(version) <= wanted:
            chosen = version
    return chosen


def _within(release: Version, run: FlagRun) -> bool:
    return parse_version(run.first) <= release and (run.last is None or release <= parse_version(run.last))


@cache
def _release_set(release: str) -> frozenset[str]:
    at = parse_version(release)
    return frozenset(flag for flag, runs in _table()[1].items() if any(_within(at, run) for run in runs))


def release_flags(vllm_version: str | None) -> frozenset[str]:
    """The options `vllm serve` of this release has: those of the newest release read at or before it
    (the oldest read for anything older)."""
    return _release_set(_read_release(vllm_version))


def flag_runs(flag: str) -> tuple[FlagRun, ...]:
    """Where ``flag`` is among the releases read (empty: no release read has it)."""
    return _table()[1].get(flag, ())


def next_release_with(flag: str, vllm_version: str | None) -> str | None:
    """The first release read after ``vllm_version`` that has ``flag`` (None: none read after it has it)."""
    at = parse_version(_read_release(vllm_version))
    later = [run.first for run in flag_runs(flag) if parse_version(run.first) > at]
    return later[0] if later else None


def last_release_with(flag: str, vllm_version: str | None) -> str | None:
    """The newest release read before ``vllm_version`` that still has ``flag`` (None: none before it has it)."""
    at = parse_version(_read_release(vllm_version))
    ended = [run.last for run in flag_runs(flag) if run.last is not None and parse_version(run.last) < at]
    return ended[-1] if ended else None


def other_releases(flag: str, vllm_version: str | None) -> str | None:
    """Where a flag ``vllm_version`` lacks is: "vLLM 0.9.0 does not have it; 0.10.0 is the first release with it"
    for a flag that came after, "...; 0.18.0 was the last release with it" for one the release dropped; None for a
    flag no release read has (a typo) or no release given."""
    if vllm_version is None:
        return None
    later = next_release_with(flag, vllm_version)
    if later is not None:
        return Text(
            "vLLM {version} does not have it; {first} is the first release with it",
            version=vllm_version,
            first=later,
        )
    last = last_release_with(flag, vllm_version)
    if last is not None:
        return Text(
            "vLLM {version} does not have it; {last} was the last release with it",
            version=vllm_version,
            last=last,
        )
    return None
