"""Reading a vLLM version string (PEP 440) into its release numbers, with the field-named refusals; the
rules of each release are app/core/versions.py's."""

from __future__ import annotations

from packaging.version import InvalidVersion
from packaging.version import Version as Pep440

from app.core.errors import PlannerError
from app.core.text import Text

Version = tuple[int, int, int]

OLDEST_SUPPORTED: Version = (0, 6, 0)  # the reference starts at 0.6.6; 0.6.x shares its rules
MAX_VERSION_CHARS = (
    64  # longest real form seen is ~30 ("0.19.2rc1.dev8+g4b7f5ea1a.d20260101"); bounds the parse
)
ECHO_CHARS = 40  # how much of a rejected version string an error message repeats


def _shown(text: str) -> str:
    return text if len(text) <= ECHO_CHARS else text[:ECHO_CHARS] + "…"


def parse_pep440(text: str, *, example: str) -> tuple[Pep440, Version]:
    """The PEP 440 version and its (major, minor, micro), or PlannerError("vllm_version") naming ``example``."""
    stripped = text.strip()
    if len(stripped) > MAX_VERSION_CHARS:
        raise PlannerError(
            "vllm_version",
            Text(
                "not a vLLM version: {text!r} is too long (expected e.g. {example})",
                text=_shown(stripped),
                example=example,
            ),
        )
    try:
        parsed = Pep440(stripped)
    except InvalidVersion:
        parsed = None
    if parsed is None or parsed.epoch:
        raise PlannerError(
            "vllm_version",
            Text(
                "not a vLLM version: {text!r} (expected e.g. {example})",
                text=_shown(stripped),
                example=example,
            ),
        )
    numbers = (*parsed.release, 0, 0)
    version: Version = (numbers[0], numbers[1], numbers[2])
    if version < OLDEST_SUPPORTED:
        raise PlannerError(
            "vllm_version",
            Text(
                "vLLM {text} is older than 0.6, the oldest release the planner models", text=_shown(stripped)
            ),
        )
    return parsed, version


def release_numbers(text: str) -> Version:
    """(major, minor, micro) of a release the project's own tables name ("0.28.0", "0.10.1.1" -> (0, 10, 1)), read as
    :func:`parse_pep440` reads a user's version (for modules below app/core/versions.py, which cannot import it)."""
    return parse_pep440(text, example=text)[1]
