"""One bounded parser for every number a user types: ASCII digits only, a length cap, finite results.

Every surface (planner and explorer query parameters, ``wl=`` workload strings, the doctor's form,
``vllm serve`` flags) reads text numbers through here, so a 400-digit value, ``inf``, ``nan``, a
superscript or Arabic-Indic digit, or ``1e999`` is a ``ValueError`` naming the problem — which the
edges turn into a 422 naming the field — never an ``OverflowError`` or a silent conversion.
Integers are exact (``decimal``), so ``25.6k`` is 25,600 and not 25,600.000000000004.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation

from app.core import regex
from app.core.text import Text

# The longest number anyone means: 10^14 parameters is 15 digits, a float with its exponent ~25.
MAX_NUMBER_CHARS = 32
# Any float the planner takes (shares, rates, utilizations, GiB) is far inside this.
MAX_FLOAT_MAGNITUDE = 1e15

# vLLM's human_readable_int: lower-case suffixes are decimal, upper-case binary (reference §7)
DECIMAL_SUFFIXES = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
BINARY_SUFFIXES = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
# Parameter counts on a model card: "8B", "1.5b", "671B" (always decimal; b = billion).
COUNT_SUFFIXES = {"k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}

_PLAIN_INT = regex.compile(r"[+]?[0-9]+")
_HUMAN_INT = regex.compile(r"([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]?)")
_FLOAT = regex.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")


def _clean(text: str) -> str:
    value = text.strip().replace("_", "").replace(",", "")
    if len(value) > MAX_NUMBER_CHARS:
        raise ValueError(
            Text(
                "a number of at most {limit} characters, got {size:,}",
                limit=MAX_NUMBER_CHARS,
                size=len(value),
            )
        )
    return value


def parse_int(text: str) -> int:
    """A plain whole number (``8192``, ``8_192``, ``8,192``); ValueError otherwise."""
    value = _clean(text)
    if not _PLAIN_INT.fullmatch(value):
        raise ValueError(Text("not a whole number: {text!r}", text=value))
    return int(value)


def parse_scaled_int(text: str, *, suffixes: dict[str, int]) -> int:
    """``32k`` -> 32,000 with ``suffixes`` (the suffix letter -> its scale); exact; ValueError otherwise."""
    value = _clean(text)
    match = _HUMAN_INT.fullmatch(value)
    if not match or (match[2] and match[2] not in suffixes):
        raise ValueError(Text("not a whole number: {text!r} (examples: 8192, 32k, 128K)", text=value))
    number = Decimal(match[1]) * (suffixes[match[2]] if match[2] else 1)
    if number != number.to_integral_value():
        raise ValueError(Text("{text!r} is not a whole number", text=value))
    return int(number)


def parse_human_int(text: str) -> int:
    """vLLM's human-readable ints: ``32k`` = 32,000, ``32K`` = 32,768, ``25.6k`` = 25,600."""
    return parse_scaled_int(text, suffixes=DECIMAL_SUFFIXES | BINARY_SUFFIXES)


def parse_count(text: str) -> int:
    """A parameter count: ``8B`` = 8·10⁹, ``1.5b``, ``70b``, ``8000000000`` (suffixes always decimal)."""
    value = _clean(text)
    if value[-1:].isascii() and value[-1:].isalpha():
        value = value[:-1] + value[-1].lower()
    return parse_scaled_int(value, suffixes=COUNT_SUFFIXES)


def parse_float(text: str) -> float:
    """A finite decimal number (``0.9``, ``1e-3``); ``inf``, ``nan`` and overflow are ValueErrors."""
    value = _clean(text)
    if not _FLOAT.fullmatch(value):
        raise ValueError(Text("not a number: {text!r}", text=value))
    try:
        number = float(Decimal(value))
    except (InvalidOperation, OverflowError) as exc:  # pragma: no cover - the pattern keeps these out
        raise ValueError(Text("not a number: {text!r}", text=value)) from exc
    return finite(number)


def finite(number: float) -> float:
    """``number`` when finite and within ±MAX_FLOAT_MAGNITUDE; ValueError otherwise."""
    if not math.isfinite(number) or abs(number) > MAX_FLOAT_MAGNITUDE:
        raise ValueError(
            Text(
                "a finite number of magnitude at most {limit:g}, got {number}",
                limit=MAX_FLOAT_MAGNITUDE,
                number=number,
            )
        )
    return number
