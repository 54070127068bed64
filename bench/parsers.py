"""Worst-case time of every log / metrics parser rule (issue 19: linear parsers).

    .venv/bin/python bench/parsers.py [--kb 30]

Each rule of app.core.logs.RULES gets one line: its own needle, then ``--kb`` kB of one character
class (digits, letters, spaces, dots, commas, quotes, a mixed run). The Prometheus parser gets a
``vllm:cache_config_info{…}`` label of the same size, and the whole start-up parser a 5 MB paste of
short lines. Prints the slowest cases in milliseconds; a rule that is quadratic shows up here as
seconds (before the fix: 8 kB after "Memory profiling results:" took ~0.5 s, a 20 kB label ~2 s).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.logs import RULES, parse_metrics, parse_startup_log

CHARACTER_CLASSES = {
    "digits": "7",
    "letters": "a",
    "spaces": " ",
    "dots": ".",
    "commas": ",",
    "quotes": "'",
    "mixed": "1a.,= (\"'-",
}
SHORT_LINES_BYTES = 5_000_000


def _time(call: object, text: str) -> float:
    start = time.perf_counter()
    call(text)  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=int, default=30)
    size = parser.parse_args().kb * 1000
    rows: list[tuple[float, str, str]] = []
    for rule in RULES:
        for name, chars in CHARACTER_CLASSES.items():
            line = rule.needle + " (" + chars * (size // len(chars))
            rows.append((_time(parse_startup_log, line), rule.needle, name))
    for name, chars in CHARACTER_CLASSES.items():
        label = "vllm:cache_config_info{" + chars * (size // len(chars)) + "} 1"
        rows.append((_time(parse_metrics, label), "vllm:cache_config_info{", name))
    rows.sort(reverse=True)
    total = sum(seconds for seconds, _, _ in rows)
    print(f"{len(rows)} rule × character-class lines of {size:,} characters: total {total * 1000:,.0f} ms")
    print("slowest ten:")
    for seconds, needle, name in rows[:10]:
        print(f"  {seconds * 1000:8.2f} ms  {needle!r:45} {name}")
    paste = "INFO 01-01 00:00:00 [x.py:1] a short line\n" * (SHORT_LINES_BYTES // 42)
    print(f"5 MB paste of short lines: {_time(parse_startup_log, paste[:SHORT_LINES_BYTES]) * 1000:,.0f} ms")


if __name__ == "__main__":
    main()
