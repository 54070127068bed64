"""Schemathesis over every operation of /openapi.json, in process: the CPU of each request, 5xx and tracebacks.

    .venv/bin/python bench/fuzz_cpu.py                 # 300 generated requests per operation
    .venv/bin/python bench/fuzz_cpu.py --examples 50 --only /api/estimate

tests/web/test_fuzz_api.py runs the same generation, bounded, as a test (no 5xx, no traceback, the
security headers); this prints what it costs: per operation and mode (valid, then invalid requests) the requests sent, the statuses, the
slowest request's CPU (time.process_time: the app's threads and the client's) and how many took over
``--limit`` seconds. Exit status 1 on a 5xx, a traceback or a request over the limit. The requests are
generated from the app's own schema (hypothesis, derandomized: the same requests every run).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import time
import warnings
from collections import Counter
from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable

from app.web.app import create_app

# valid requests from the schema, then invalid ones (wrong types, out-of-bounds numbers, unknown keys)
MODES = (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE)


def sweep(operation: Any, mode: Any, *, examples: int, limit: float) -> tuple[Counter[int], float, int]:
    """One operation's generated requests in one mode: the statuses (-1 counts the 5xx and tracebacks),
    the slowest request's CPU and how many took over ``limit``."""
    statuses: Counter[int] = Counter()
    slowest, over = 0.0, 0

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def send(case: Any) -> None:
        nonlocal slowest, over
        start = time.process_time()
        response = case.call()
        cpu = time.process_time() - start
        statuses[response.status_code] += 1
        slowest, over = max(slowest, cpu), over + (cpu > limit)
        text = response.text if isinstance(response.text, str) else ""
        if response.status_code >= 500 or "Traceback" in text:
            print(f"  BAD {response.status_code} {case.method} {case.formatted_path} {text[:200]!r}")
            statuses[-1] += 1

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.suppress(Unsatisfiable):  # an operation without parameters has no invalid request
            send()
    return statuses, slowest, over


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--only", default="", help="only the operations whose path contains this")
    parser.add_argument("--limit", type=float, default=1.0, help="seconds of CPU a request may take")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        schema = schemathesis.openapi.from_asgi("/openapi.json", create_app())
    total, bad, worst = 0, 0, 0.0
    operations = [result.ok() for result in schema.get_all_operations()]
    for operation, mode in itertools.product(operations, MODES):
        if args.only not in operation.path:
            continue
        statuses, slowest, over = sweep(operation, mode, examples=args.examples, limit=args.limit)
        sent = sum(n for status, n in statuses.items() if status >= 0)
        broke = statuses[-1] + over
        total, bad, worst = total + sent, bad + broke, max(worst, slowest)
        shown = " ".join(f"{status}x{n}" for status, n in sorted(statuses.items()) if status >= 0)
        print(
            f"{operation.method.upper():6} {operation.path:24} {mode.value:8} {sent:5} requests"
            f"  slowest {slowest * 1000:7.1f} ms  over {args.limit:g} s: {over}  {shown}",
            flush=True,
        )
    print(f"{total:,} requests; slowest {worst * 1000:.1f} ms of CPU; {bad} broke the rule")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
