"""The options each vLLM release's `vllm serve` has (vllm_flags.json, written by
scripts/gen_vllm_flags.py from each release's own argument parser).

A leaf module: the flag table (serve_flags.py) writes a flag only where the release has it and the
command reader (command.py) refuses what the release lacks; both import this, which imports neither.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from app.core.version_parse import Version
from app.core.versions import parse_version, rules_for

FLAGS_FILE = Path(__file__).with_name("vllm_flags.json")  # scripts/gen_vllm_flags.py, from vLLM's parser


@cache
def _flag_releases() -> tuple[tuple[Version, frozenset[str]], ...]:
    data = json.loads(FLAGS_FILE.read_text(encoding="utf-8"))
    return tuple((parse_version(version), frozenset(flags)) for version, flags in data["releases"].items())


def release_flags(vllm_version: str | None) -> frozenset[str]:
    """The options `vllm serve` of this release has: those of the newest release read at or before it
    (the oldest read for anything older)."""
    wanted = rules_for(vllm_version).version_tuple
    releases = _flag_releases()
    chosen = releases[0][1]
    for version, flags in releases:
        if version <= wanted:
            chosen = flags
    return chosen
