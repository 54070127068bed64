"""Reading what vLLM prints: line splitting, ANSI clean-up, and printed numbers as exact integers.

Shared by the start-up parser and the metrics parser. A printed GiB figure becomes integer bytes
(``round(GiB × 2**30)``; the old "GB" lines are GiB too, reference §4.1); a count longer than
:data:`MAX_INT_DIGITS` digits is not vLLM output and is dropped, which also keeps ``int()`` clear of
its digit limit.
"""

from __future__ import annotations

import math

from app.core import regex
from app.core.specs import GIB
from app.core.text import Text

MAX_LOG_CHARS = 5_000_000  # a whole multi-rank DEBUG start-up log is ~1-2 MB; refuse anything larger
MAX_INT_DIGITS = 18  # counts above 10**18 are not vLLM output
MAX_ABS_GIB = 1e6  # a million GiB per device: anything larger is garbage, not memory


def over_limit(text: str | None) -> str | None:
    """What to say of a paste over :data:`MAX_LOG_CHARS` (None within it): the one limit of a start-up
    log and of a /metrics scrape, in the parser and in the doctor's form alike."""
    if text is None or len(text) <= MAX_LOG_CHARS:
        return None
    return Text(
        "{text:,} characters; the limit is {max_log_chars:,}", text=len(text), max_log_chars=MAX_LOG_CHARS
    )


ANSI = regex.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")


def split_lines(text: str, maxsplit: int = -1) -> list[str]:
    """``text`` split at CRLF, CR or LF (not at the other breaks ``str.splitlines`` knows): string
    methods, linear and in C — a 5 MB paste of 2.5 million lines is split in ~0.1 s."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n", maxsplit)


# Real multi-rank DEBUG start-up logs are ~20,000 lines; 5 MB of "y\n" is 2.5 million. Beyond this
# many lines only the first and the last half are read (the start-up's head and the error at its end).
MAX_LOG_LINES = 200_000


def numbered_lines(text: str, max_lines: int = MAX_LOG_LINES) -> list[tuple[int, str]]:
    """(0-based line number, line) of ``text``: all of them, or the first and last ``max_lines // 2``."""
    lines = split_lines(text)
    if len(lines) <= max_lines:
        return list(enumerate(lines))
    half = max_lines // 2
    return [*enumerate(lines[:half]), *enumerate(lines[-half:], start=len(lines) - half)]


def strip_ansi(line: str) -> str:
    """``line`` without ANSI colour and cursor codes (most lines have none: no regex for them)."""
    return ANSI.sub("", line) if "\x1b" in line else line


def int_of(text: str) -> int | None:
    digits = text.replace(",", "").replace("_", "").strip()
    if not digits.isascii() or not digits.isdigit() or len(digits) > MAX_INT_DIGITS:
        return None
    return int(digits)


def float_of(text: str) -> float | None:
    try:
        value = float(text.replace(",", "").strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def gib_bytes(text: str) -> int | None:
    """A printed GiB (or old "GB", which vLLM computes as bytes / 2**30) figure as integer bytes."""
    gib = float_of(text)
    if gib is None or abs(gib) > MAX_ABS_GIB:
        return None
    return round(gib * GIB)
