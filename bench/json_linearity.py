"""Linearity of the JSON-nesting pre-check (app/web/security.py): time per size for hostile inputs.

    .venv/bin/python bench/json_linearity.py

For each class of input — a prefix, then one character class repeated — the full scan runs at
60 kB, 600 kB and 6 MB (the body cap). A linear scan keeps its cost per MB roughly flat; the regex it
replaced restarted inside escaped quotes: 32 kB took 2.9 s (issue 19), so 6 MB would take hours.
The bound checked is generous, so a shared machine does not fail it: 6 MB within 1 s for every class,
and the cost per MB at 6 MB at most 20x that at 600 kB (a quadratic scan would show 10x per decade
on top of cache effects, and seconds at 600 kB already).
"""

from __future__ import annotations

import sys
import time

from app.web.security import json_depth

SIZES = (60_000, 600_000, 6_000_000)
CLASSES: dict[str, tuple[bytes, bytes]] = {
    # name: (prefix, repeated unit)
    "escaped quotes in a string": (b'["', b'\\"'),
    "unterminated escapes": (b'"', b'\\"'),
    "quotes only": (b"[", b'"'),
    "backslashes": (b'["', b"\\"),
    "open brackets in a string": (b'["', b"["),
    "bracket pairs": (b"", b"[]"),
    "open brackets": (b"", b"["),
    "mixed": (b'{"a":', b'["\\"{[' + b'"]'),
    "letters": (b'["', b"a"),
}


def _time(data: bytes) -> float:
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        json_depth(data)  # the full scan (json_depth_exceeds skips it when there are <= 64 brackets)
        runs.append(time.perf_counter() - start)
    return min(runs)  # the least disturbed run: the machine is shared


def main() -> None:
    print(f"{'input':<28}" + "".join(f"{size:>12,} B" for size in SIZES) + f"{'ms/MB at 6M':>13}")
    bad = 0
    for name, (prefix, unit) in CLASSES.items():
        times = [_time(prefix + unit * (size // len(unit))) for size in SIZES]
        per_mb = times[2] / (SIZES[2] / 1e6) * 1000
        per_byte_growth = (times[2] / SIZES[2]) / max(times[1] / SIZES[1], 1e-12)
        ok = times[-1] < 1.0 and per_byte_growth < 20
        bad += not ok
        cells = "".join(f"{t * 1000:>11.2f} ms" for t in times)
        print(f"{name:<28}{cells}{per_mb:>13.1f}{'' if ok else '  OVER THE BOUND'}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
