"""Print how the log and metrics parsers' time grows with the input (8x the input; linear ~8x).

The timing figures the unit tests used to assert (tests/unit/test_logs.py, test_diagnose_extras.py);
the tests now check the property without a clock (every pattern RE2 or a checked linear shape).
Run: ``.venv/bin/python bench/log_linearity.py``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from app.core.logs import RULES, parse_metrics, parse_startup_log

CHARACTER_CLASSES = ("7", "a", " ", ".", ",", "'", "1a.,= (\"'-")
OBJECT_PREFIXES = (
    "Initializing a V1 LLM engine (v0.19.0) with config: speculative_config=SpeculativeConfig(",
    "args: Namespace(limit_mm_per_prompt={",
    "non-default args: {'speculative_config': {",
)
SMALL, LARGE = 4_000, 32_000


def _best(call: Callable[[], object], repeats: int = 3) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def _ratio(make: Callable[[int], Callable[[], object]]) -> float:
    return _best(make(LARGE)) / _best(make(SMALL))


def main() -> None:
    print(
        f"time({LARGE:,} chars) / time({SMALL:,} chars); linear ~{LARGE // SMALL}, quadratic ~{(LARGE // SMALL) ** 2}"
    )
    for chars in CHARACTER_CLASSES:

        def rules(size: int, chars: str = chars) -> Callable[[], object]:
            texts = [rule.needle + " (" + chars * (size // len(chars)) for rule in RULES]
            return lambda: [parse_startup_log(text) for text in texts]

        print(f"every rule, run of {chars!r}: {_ratio(rules):.1f}")
    for prefix in OBJECT_PREFIXES:
        for chars in ("'", "speculative_config={", "SpeculativeConfig(method='x', model='"):

            def objects(size: int, prefix: str = prefix, chars: str = chars) -> Callable[[], object]:
                return lambda: parse_startup_log(prefix + chars * (size // len(chars)))

            print(f"object {prefix[:24]!r}… + {chars!r}: {_ratio(objects):.1f}")

    def label(size: int) -> Callable[[], object]:
        text = "vllm:cache_config_info{" + "a" * size + '="1"} 1\n'
        return lambda: parse_metrics(text)

    print(f"metrics label: {_ratio(label):.1f}")


if __name__ == "__main__":
    main()
