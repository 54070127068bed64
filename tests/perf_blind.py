"""The held-apart measured-run batches under bench/data/perf (sources-r7b ... sources-r16), in the order they were
collected: each round's batch had to be new to every fit of its time and to every batch before it
(tests/unit/test_perf_sources_blind.py checks all of them the same way; each round's own file checks what is
particular to its sources)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench import perf_sources as P

PERF_DATA = Path(__file__).resolve().parents[1] / "bench" / "data" / "perf"
# the blind batches, oldest first (round 10 made sources-r7b, -r8 and -r9 fit sources: FIT_DIRS)
BLIND_ORDER = (
    "sources-r7b",
    "sources-r8",
    "sources-r9",
    "sources-r10",
    "sources-r11",
    "sources-r12",
    "sources-r13",
    "sources-r14",
    "sources-r15",
    "sources-r16",
)


def batch_rows(name: str) -> list[dict[str, Any]]:
    """Every row of one batch's *.jsonl files."""
    return P.read_rows(sorted((PERF_DATA / name).glob("*.jsonl")))


def rows_before(name: str) -> list[dict[str, Any]]:
    """What a batch had to be new to: the rows the fits read apart from this batch and the fit folders added after
    it, and every earlier blind batch."""
    folder = PERF_DATA / name
    later = set(P.FIT_DIRS[P.FIT_DIRS.index(folder) :]) if folder in P.FIT_DIRS else set()
    fitted = P.read_rows([path for path in P.fit_files() if path.parent not in later])
    earlier = BLIND_ORDER[: BLIND_ORDER.index(name)]
    return fitted + [row for batch in earlier for row in batch_rows(batch)]
