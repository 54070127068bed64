"""bench/data/perf/sources-r11/: round 11's held-apart measured runs stay out of every fit (speeddata11)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench import perf_sources as P

R11 = Path(__file__).resolve().parents[2] / "bench" / "data" / "perf" / "sources-r11"


def test_round_11_is_never_a_fit_directory(monkeypatch: Any) -> None:
    # FIT_DIRS names its folders one by one (never a glob): sources-r11/ is scored blind on the shipped
    # coefficients, so no fit (perf_loso.py, measured_runs_loo.py, perf_misses.py all read source_rows()) may see it
    assert R11.is_dir() and (R11 / "README.md").is_file()
    assert all(folder.resolve() != R11 for folder in P.FIT_DIRS)
    read: list[Path] = []
    monkeypatch.setattr(P, "read_rows", lambda files: read.extend(files) or [])
    P.source_rows()
    assert read and not [path for path in read if path.resolve().parent == R11]
