"""Residual tables of the performance model: where its errors have structure.

    .venv/bin/python bench/perf_residuals.py            # shipped coefficients (in-sample)
    .venv/bin/python bench/perf_residuals.py --refit    # refit first (what fit_perf.py would write)
    .venv/bin/python bench/perf_residuals.py --rows     # also every run, worst TPOT first

For each grouping (model, device, family, vLLM version, precision, TP, concurrency, ISL, OSL, whether the
engine is KV-limited) prints runs, the signed median log residual log(measured / predicted) of TPOT,
TTFT and throughput (positive = the model is too fast / optimistic) and the median absolute TPOT error.
Only bench/data/perf/vllm_perf_measured.csv is read.
"""

from __future__ import annotations

import math
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fit_perf as F

from app.core.perf.predict import fitted_families


def _bucket(value: int, edges: Sequence[int]) -> str:
    for edge in edges:
        if value <= edge:
            return f"<={edge}"
    return f">{edges[-1]}"


GROUPINGS: dict[str, Callable[[F.Run], str]] = {
    "model": lambda r: r.model_path,
    "device": lambda r: r.system,
    "family": lambda r: r.family,
    "version": lambda r: r.version,
    "model x device": lambda r: f"{r.model_path.split('/')[-1]} {r.system} {r.precision or 'bf16'}",
    "tp x dp": lambda r: f"tp{r.tp} dp{r.dp}{' ep' if r.ep else ''}",
    "concurrency": lambda r: _bucket(r.concurrency, (1, 4, 16, 64, 256)),
    "isl": lambda r: str(r.isl),
    "osl": lambda r: str(r.osl),
    "limit": lambda r: str(r.extra.get("limit", "")),
}


def table(runs: Sequence[F.Run], name: str, key: Callable[[F.Run], str]) -> list[str]:
    groups: dict[str, list[F.Run]] = defaultdict(list)
    for run in runs:
        groups[key(run)].append(run)
    lines = [f"== by {name}", f"{'group':44} {'n':>4} {'tpot':>7} {'|tpot|':>7} {'ttft':>7} {'thr':>7}"]
    for group, members in sorted(groups.items()):
        med = {k: statistics.median(r.extra[k] for r in members) for k in ("tpot", "ttft", "thr")}
        abs_tpot = statistics.median(abs(math.expm1(-r.extra["tpot"])) for r in members)
        lines.append(
            f"{group[:44]:44} {len(members):4d} {med['tpot']:+7.2f} {abs_tpot:7.0%} {med['ttft']:+7.2f} {med['thr']:+7.2f}"
        )
    return lines


def main(argv: list[str]) -> int:
    runs = F.prepare(F.load_runs())
    if "--refit" in argv:
        fits = F.fit_all(runs)
    else:
        fits = {name: fit.coefficients() for name, fit in fitted_families().items()}
    for run in runs:
        coefficients = fits[run.family]
        ttft, tpot, thr = F.predict(run, coefficients)
        assert run.estimate is not None and run.physics is not None
        point = F.point_at(
            physics=run.physics,
            coefficients=coefficients,
            estimate=run.estimate,
            workload=F.Workload(input_tokens=run.isl, output_tokens=run.osl, concurrency=run.concurrency),
        )
        run.extra.update(
            tpot=math.log(run.tpot_ms / tpot),
            ttft=math.log(run.ttft_ms / max(ttft, 1e-3)),
            thr=math.log(run.throughput / thr),
            pred_tpot=tpot,
            pred_ttft=ttft,
            running=point.running,
        )
        run.extra["limit"] = point.limit  # type: ignore[assignment]
    for name, key in GROUPINGS.items():
        print("\n".join(table(runs, name, key)))
        print()
    if "--rows" in argv:
        for run in sorted(runs, key=lambda r: -abs(r.extra["tpot"])):
            print(
                f"{run.model_path.split('/')[-1][:22]:22} {run.system:8} {run.precision or 'bf16':5} v{run.version:7} "
                f"tp{run.tp} dp{run.dp} {run.isl:5}/{run.osl:5} c{run.concurrency:4} run{run.extra['running']:4} "
                f"{run.extra['limit']!s:12} tpot {run.tpot_ms:8.2f}/{run.extra['pred_tpot']:8.2f} "
                f"ttft {run.ttft_ms:9.1f}/{run.extra['pred_ttft']:9.1f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
