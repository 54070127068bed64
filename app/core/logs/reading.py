"""Reading what vLLM prints: line splitting, ANSI clean-up, and printed numbers as exact integers.

Shared by the start-up parser and the metrics parser. A printed GiB figure becomes integer bytes
(``round(GiB × 2**30)``; the old "GB" lines are GiB too, reference §4.1); a count longer than
:data:`MAX_INT_DIGITS` digits is not vLLM output and is dropped, which also keeps ``int()`` clear of
its digit limit.
"""

from __future__ import annotations

import math
import re

GIB = 2**30
MAX_LOG_CHARS = 5_000_000  # a whole multi-rank DEBUG start-up log is ~1-2 MB; refuse anything larger
MAX_INT_DIGITS = 18  # counts above 10**18 are not vLLM output
MAX_ABS_GIB = 1e6  # a million GiB per device: anything larger is garbage, not memory

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
LINE_BREAK = re.compile(r"\r\n|\r|\n")


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
