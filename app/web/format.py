"""Formatting at the edge: bytes become GiB strings only here (the core stays in integer bytes)."""

from __future__ import annotations

from app.core.specs import GIB


def gib(num_bytes: int | float, digits: int = 2) -> str:
    """``85028896768`` -> ``"79.19 GiB"``; negative values keep their sign (a budget overrun)."""
    return f"{num_bytes / GIB:,.{digits}f} GiB"


def integer(value: int | float) -> str:
    return f"{int(value):,}"


def percent(fraction: float, digits: int = 1) -> str:
    return f"{fraction * 100:.{digits}f}%"


def human_tokens(tokens: int) -> str:
    """Axis labels: 1024 -> "1K", 131072 -> "128K", 1048576 -> "1M" (vLLM's binary suffixes)."""
    for suffix, size in (("M", 2**20), ("K", 2**10)):
        if tokens >= size and tokens % size == 0:
            return f"{tokens // size}{suffix}"
    if tokens >= 10_000:
        return f"{tokens / 1000:.0f}k"
    return str(tokens)


def speed_number(value: float) -> str:
    """A speed figure as the Speed section shows it: 1,850 / 31.2 / 4.12 (ms, tokens/s, requests/s)."""
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"
