"""Where the simulated `vllm bench serve` runs miss, across sources: signed median log residuals by
source, device, engine, model, regime and harness (closed loop / burst / rate, ignore_eos).

    .venv/bin/python bench/perf_misses.py                      # every run simulated as shipped
    .venv/bin/python bench/perf_misses.py --cache /tmp/runs.pkl  # reuse bench/perf_loso.py's saved runs
    .venv/bin/python bench/perf_misses.py --rows               # also every run outside the shared file

Residual: log(measured / predicted) for TPOT and TTFT, log(predicted / measured) for throughput, so that
a positive residual always means the model is too fast (optimistic). Each group prints runs, the median signed residual of TPOT, TTFT and
output throughput, and the median |error| of each. Everything here is in-sample for the shared file's
step coefficients and out-of-sample for the other sources (their runs never fitted a step coefficient).
"""

from __future__ import annotations

import math
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import perf_loso as L
import perf_sources as P

KINDS = ("tpot", "ttft", "throughput")


def _too_fast(kind: str, predicted: float, measured: float) -> float:
    """log residual, positive when the model is optimistic (too fast) whatever the kind."""
    ratio = math.log(measured / predicted)
    return -ratio if kind == "throughput" else ratio


def _engine(ctx: P.RunContext) -> str:
    return f"{ctx.engine} {'async' if ctx.physics.host_overlapped else 'serial'}"


def _harness(ctx: P.RunContext) -> str:
    a = ctx.args
    loop = f"closed C={a.max_concurrency}" if a.max_concurrency else "open"
    rate = "inf" if math.isinf(a.request_rate) else "rate"
    return f"{loop.split('=')[0]} {rate}{' eos' if a.ignore_eos else ''}"


def _regime(ctx: P.RunContext) -> str:
    return ctx.point().regime


GROUPS: dict[str, Callable[[P.RunContext], str]] = {
    "source": lambda c: c.source,
    "device": lambda c: c.cluster.split()[0] if c.source != P.SHARED else c.cluster.split()[0] + " (shared)",
    "engine": _engine,
    "model": lambda c: c.cluster.split()[1],
    "harness": _harness,
    "regime": _regime,
}


def _row(label: str, members: list[tuple[P.RunContext, dict[str, float]]]) -> str:
    cells = []
    for kind in KINDS:
        key = L.KEYS[kind]
        res = [
            _too_fast(kind, pred[key], ctx.measured[key])
            for ctx, pred in members
            if key in ctx.measured and pred.get(key, 0) > 0 and ctx.measured[key] > 0
        ]
        if res:
            err = statistics.median(abs(math.expm1(-r if kind != "throughput" else r)) for r in res)
            cells.append(f"{statistics.median(res):+6.2f} {err:5.0%}")
        else:
            cells.append(f"{'–':>12}")
    return f"{label[:52]:52} {len(members):4d}  " + "  ".join(cells)


def main(argv: list[str]) -> int:
    import __main__

    __main__.Run = L.Run  # type: ignore[attr-defined]  # perf_loso.py run as a script pickles __main__.Run
    by_source = L.cached_load(argv)
    runs = [(r.context, r.predicted) for rows in by_source.values() for r in rows if r.context is not None]
    header = f"{'group':52} {'n':>4}  {'tpot res err':>12}  {'ttft res err':>12}  {'thr res err':>12}"
    for name, key in GROUPS.items():
        groups: dict[str, list[tuple[P.RunContext, dict[str, float]]]] = defaultdict(list)
        for ctx, pred in runs:
            if name == "regime" and ctx.source == P.SHARED:
                continue  # 685 more simulations for a table about the other sources
            groups[key(ctx)].append((ctx, pred))
        print(f"== by {name} (residual > 0: the model is too fast)")
        print(header)
        for label, members in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            print(_row(label, members))
    if "--rows" in argv:
        print("== runs outside the shared file")
        for ctx, pred in runs:
            if ctx.source == P.SHARED:
                continue
            cells = " ".join(
                f"{k} {pred.get(L.KEYS[k], 0):.4g}/{ctx.measured[L.KEYS[k]]:.4g}"
                for k in KINDS
                if L.KEYS[k] in ctx.measured
            )
            print(f"{ctx.source[:28]:28} {ctx.cluster[:60]:60} {_harness(ctx):14} {cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
