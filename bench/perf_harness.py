"""Where the leave-one-source-out residuals have structure, by the client's settings (the harness) a source
states: arrivals (closed loop / burst at t = 0 / a finite rate), rounds (prompts per client), clients,
dataset, range ratio, ignore_eos, shared prefix, and by device family, MoE or dense, TP and engine.

    .venv/bin/python bench/perf_harness.py --cache /tmp/runs.pkl            # physics+prefill+v0 fits
    .venv/bin/python bench/perf_harness.py --cache /tmp/runs.pkl --mode none  # the shipped simulation
    .venv/bin/python bench/perf_harness.py --cache /tmp/runs.pkl --split arrivals  # that grouping by source

Every source is predicted by the fit made without it (perf_loso.fit), so every residual is out of source.
Residual: log(measured / predicted) for TPOT and TTFT, log(predicted / measured) for throughput, so that a
positive residual means the model is too fast (optimistic), as in bench/perf_misses.py. Each group prints
its runs and sources, the median over its sources of each source's median residual (each source one
vote, so the 685-run shared file does not decide a group alone) and the pooled median |error|.
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
DEFAULT_MODE = "physics+prefill+v0"


def _bucket(value: float, edges: tuple[float, ...]) -> str:
    for edge in edges:
        if value <= edge:
            return f"<={edge:g}"
    return f">{edges[-1]:g}"


def arrivals(ctx: P.RunContext) -> str:
    """closed (a client cap below the prompts), burst (every prompt at t = 0, no cap that binds) or rate."""
    a = ctx.args
    if a.max_concurrency and a.max_concurrency < a.num_prompts:
        return "closed" if math.isinf(a.request_rate) else "closed+rate"
    return "burst" if math.isinf(a.request_rate) else "rate"


def clients(ctx: P.RunContext) -> int:
    a = ctx.args
    return min(a.max_concurrency or a.num_prompts, a.num_prompts)


def rounds(ctx: P.RunContext) -> float:
    """Prompts per client: 1 is a single wave (all ramp-up and drain), 10 nearly a steady state."""
    return ctx.args.num_prompts / clients(ctx)


def device_family(ctx: P.RunContext) -> str:
    device = ctx.cluster.split()[0]
    return f"{ctx.platform} {L.arch_key(device) or device}" if ctx.platform == L.CUDA else f"{ctx.platform}"


GROUPS: dict[str, Callable[[P.RunContext], str]] = {
    "arrivals": arrivals,
    "rounds (prompts / client)": lambda c: _bucket(rounds(c), (1, 2, 5, 10, 50)),
    "clients": lambda c: _bucket(clients(c), (1, 4, 16, 64, 256)),
    "arrivals x clients": lambda c: f"{arrivals(c)} {_bucket(clients(c), (1, 16, 64))}",
    "dataset": lambda c: c.args.dataset_name,
    "range ratio": lambda c: _bucket(c.args.random_range_ratio, (0.0, 0.5)),
    "ignore_eos": lambda c: str(c.args.ignore_eos),
    "shared prefix": lambda c: "prefix" if c.args.random_prefix_len else "none",
    "prompt tokens": lambda c: _bucket(c.args.random_input_len, (256, 1024, 4096, 16384)),
    "device family": device_family,
    "moe": lambda c: "moe" if c.physics.num_experts else "dense",
    "tp": lambda c: f"tp{c.physics.tensor_parallel_size} pp{c.physics.pipeline_parallel_size}",
    "engine": lambda c: f"{c.engine} {'async' if c.physics.host_overlapped else 'serial'}",
}


def residual(kind: str, predicted: float, measured: float) -> float:
    """log residual, positive when the model is optimistic (too fast) whatever the kind."""
    ratio = math.log(measured / predicted)
    return -ratio if kind == "throughput" else ratio


Member = tuple[P.RunContext, dict[str, float]]


def row(label: str, members: list[Member]) -> str:
    sources = {ctx.source for ctx, _ in members}
    cells = []
    for kind in KINDS:
        key = L.KEYS[kind]
        by_source: dict[str, list[float]] = defaultdict(list)
        for ctx, pred in members:
            if key in ctx.measured and pred.get(key, 0) > 0 and ctx.measured[key] > 0:
                by_source[ctx.source].append(residual(kind, pred[key], ctx.measured[key]))
        if not by_source:
            cells.append(f"{'-':>12}")
            continue
        source_median = statistics.median(statistics.median(v) for v in by_source.values())
        pooled = [abs(math.expm1(-r if kind != "throughput" else r)) for v in by_source.values() for r in v]
        cells.append(f"{source_median:+6.2f} {statistics.median(pooled):5.0%}")
    return f"{label[:34]:34} {len(members):4d} {len(sources):3d}  " + "  ".join(cells)


def loso_predictions(by_source: dict[str, list[L.Run]], mode: str) -> list[Member]:
    """Every run predicted by the correction fitted on the other sources."""
    out: list[Member] = []
    for held, rows in sorted(by_source.items()):
        correction = L.fit(mode, {s: r for s, r in by_source.items() if s != held})
        out.extend((run.context, correction.predict(run)) for run in rows if run.context is not None)
    return out


def main(argv: list[str]) -> int:
    import __main__

    __main__.Run = L.Run  # type: ignore[attr-defined]  # perf_loso.py run as a script pickles __main__.Run
    mode = argv[argv.index("--mode") + 1] if "--mode" in argv else DEFAULT_MODE
    by_source = L.cached_load(argv)
    members = loso_predictions(by_source, mode)
    header = (
        f"{'group':34} {'n':>4} {'src':>3}  {'tpot res err':>12}  {'ttft res err':>12}  {'thr res err':>12}"
    )
    print(f"mode {mode}; residual > 0: too fast; median of source medians, pooled |error|")
    for name, key in GROUPS.items():
        groups: dict[str, list[Member]] = defaultdict(list)
        for ctx, pred in members:
            groups[key(ctx)].append((ctx, pred))
        print(f"== by {name}")
        print(header)
        for label, rows in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            print(row(label, rows))
            if "--split" in argv and argv[argv.index("--split") + 1] == name:
                by_source: dict[str, list[Member]] = defaultdict(list)
                for ctx, pred in rows:
                    by_source[ctx.source].append((ctx, pred))
                for source, members_of in sorted(by_source.items()):
                    print(row(f"  {source}", members_of))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
