"""Formatting at the edge: bytes become GiB strings only here (the core stays in integer bytes)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.core.result import Range
from app.core.specs import GIB
from app.core.text import Text
from app.web.i18n import tr


@dataclass(frozen=True)
class Figure:
    """One number as a page shows it: its key (an element id, a formula's symbol), its label and its
    text; ``kind`` (exact / exact-given-pool / modelled / input: the badge), ``band`` and ``range_text`` for a modelled one.
    The planner's headline, its formula symbols and terms, the Speed numbers and the explorer's
    simulation metrics are all figures."""

    key: str
    label: str
    value: str
    kind: str = ""
    band: str = ""  # "±0.13 GiB"
    range_text: str = ""  # "1.75 – 2.01 GiB"


def gib(num_bytes: int | float, digits: int = 2) -> str:
    """``85028896768`` -> ``"79.19 GiB"``; negative values keep their sign (a budget overrun)."""
    return f"{num_bytes / GIB:,.{digits}f} GiB"


def integer(value: int | float) -> str:
    return f"{int(value):,}"


def money(value: float) -> str:
    """A price: ``1234.5`` -> ``"1,234.50"``."""
    return f"{value:,.2f}"


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


def speed_band(r: Range) -> str:
    """A speed figure's band as "5.20–18.4" (the Speed section's, the fleet's, the recommender's)."""
    return f"{speed_number(r.low)}–{speed_number(r.high)}"


# What binds a speed figure (app.core.perf.bench.Regime) in a few words, for a table cell or a line
REGIME_NAMES = {
    "compute": Text("compute"),
    "memory_bandwidth": Text("memory bandwidth"),
    "host": Text("the host's per-step work"),
    "kv_pool": Text("the KV pool"),
    "queue": Text("the queue"),
}
# ... and as the Speed section explains it ("Binding regime: ...")
REGIME_EXPLAINED = {
    "compute": Text("compute: the batches' matrix work binds"),
    "memory_bandwidth": Text("memory bandwidth: reading weights and KV each step binds"),
    "host": Text(
        "the host: vLLM's per-step CPU work (scheduling, input preparation, sampling) outlasts the device's step"
    ),
    "kv_pool": Text("the KV pool: requests wait for blocks or are preempted"),
    "queue": Text("the queue: prompts wait for the running ones"),
}


def regime_text(regime: str, *, explained: bool = False) -> str:
    """What binds a speed figure (app.core.perf.bench.Regime) in the page's language: its few words for a
    table cell or a line (the fleet, its frontier, the recommender), or ``explained``, the Speed
    section's sentence; "" when there is none (a candidate without a speed). The one place the pages
    turn a regime into words."""
    table = REGIME_EXPLAINED if explained else REGIME_NAMES
    return tr(table[regime]) if regime in table else ""


def axis_ticks(top: float, count: int) -> list[float]:
    """A chart axis from 0 past ``top`` in steps of 1, 2, 5 or 10 x 10^k, at most ``count`` steps to ``top``
    (the Speed section's and the fleet chart's); an all-zero axis still gets a 0-1 scale."""
    if top <= 0:
        return [0.0, 1.0]
    step = 10 ** math.floor(math.log10(top / count))
    for factor in (1, 2, 5, 10):
        if top / (step * factor) <= count:
            step *= factor
            break
    return [step * i for i in range(int(top / step) + 2)]


def gib_range(r: Range) -> str:
    """A band as "1.20 – 1.46 GiB"."""
    return f"{r.low / GIB:,.2f} – {gib(r.high)}"
