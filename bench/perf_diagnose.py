"""Round 16b's diagnosis: per held-out source its device family, harness and ratios, and where the TTFT bias sits.

    .venv/bin/python bench/perf_diagnose.py --cache /tmp/r.pkl --with-dir bench/data/perf/sources-r16
    .venv/bin/python bench/perf_diagnose.py --cache /tmp/r.pkl --mode physics+prefill+v0+family
    .venv/bin/python bench/perf_diagnose.py --cache /tmp/r.pkl --markdown  # the per-source rows as a table
    .venv/bin/python bench/perf_diagnose.py --cache /tmp/r.pkl --parts     # and the TTFT split (slower)

Every run is predicted by the fit made without its source (perf_loso.fit, as bench/perf_harness.py does),
scored on the key perf_loso scores it on (the mean, else the median). Prints:

* one line per source: the device family (CUDA architecture, or the platform's device), the fitted family it
  borrows, the harness (arrivals, clients, prompts per client, engine), and the median predicted / measured
  of TPOT, TTFT and output throughput;
* the same by device family (median of the sources' medians, each source one vote);
* the TTFT split into its three simulated parts, per run: the API server's overhead (the fitted base plus
  its part per prompt token), the prompt's own prefill (one request of the run's mean prompt on an idle
  engine, minus that overhead) and the wait behind other requests (the run's mean TTFT minus both), and the
  TTFT ratio grouped by which part dominates, so the bias can be laid on the part that carries it.
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import perf_harness as H
import perf_loso as L
import perf_refit as R

KINDS = ("tpot", "ttft", "throughput")
TTFT_KEY = L.KEYS["ttft"]


def family_of(run: L.Run) -> tuple[str, str]:
    """(the device family, the fitted family whose coefficients it takes: own, or borrowed)."""
    key = run.device_key
    if not key.startswith(L.ARCH_PREFIX):
        return key, "platform"
    return key, "fitted" if key in R.fitted_arches() else f"borrows {R.base_family(key)}"


def harness(run: L.Run) -> str:
    ctx = run.context
    assert ctx is not None
    serial = "async" if ctx.physics.host_overlapped else "serial"
    return f"{H.arrivals(ctx)} c{H.clients(ctx)} r{H.rounds(ctx):.0f} {ctx.engine}-{serial}"


def ratio(run: L.Run, kind: str, pred: dict[str, float]) -> float | None:
    key = run.key(kind)
    if key is None or pred.get(key, 0.0) <= 0:
        return None
    return pred[key] / run.measured[key]


def ttft_parts(run: L.Run, correction: L.Correction, pred: dict[str, float]) -> tuple[float, float, float]:
    """(overhead, lone prefill, wait) of the run's simulated mean TTFT, ms."""
    ctx = run.context
    assert ctx is not None
    overhead = (
        correction.ttft_base_ms + correction.ttft_per_token_ms * run.prompt_tokens
        if correction.ttft_base_ms >= 0
        else run.shipped_ttft_overhead_ms + run.shipped_ttft_per_token_ms * run.prompt_tokens
    )
    prompt = max(1, round(run.prompt_tokens))
    alone = replace(
        ctx,
        args=ctx.args.model_copy(
            update={
                "num_prompts": 1,
                "max_concurrency": 1,
                "request_rate": float("inf"),
                "random_prefix_len": 0,
            }
        ),
        lengths=([prompt], [2]),
        warm_prompts=False,
    )
    lone = L.Run(run.source, alone.simulate(), run.measured, prompt_tokens=run.prompt_tokens, context=alone)
    lone_pred = correction.predict(replace(lone, shipped_ttft_overhead_ms=run.shipped_ttft_overhead_ms))
    lone_ttft = lone_pred.get(TTFT_KEY, 0.0)
    mean = pred.get(TTFT_KEY, 0.0)
    return overhead, max(0.0, lone_ttft - overhead), max(0.0, mean - lone_ttft)


def _median_ratio(runs: list[L.Run], preds: list[dict[str, float]], kind: str) -> float | None:
    rs = [q for r, p in zip(runs, preds, strict=True) if (q := ratio(r, kind, p)) is not None]
    return statistics.median(rs) if rs else None


def _cell(runs: list[L.Run], preds: list[dict[str, float]], kind: str) -> str:
    q = _median_ratio(runs, preds, kind)
    return f"{q:4.2f}" if q is not None else "   -"


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):5.2f}" if values else "    -"


def main(argv: list[str]) -> int:
    import __main__

    __main__.Run = L.Run  # type: ignore[attr-defined]  # perf_loso.py run as a script pickles __main__.Run
    L.SCORE_MEDIANS[0] = "--mean-only" not in argv
    mode = argv[argv.index("--mode") + 1] if "--mode" in argv else H.DEFAULT_MODE
    by_source = L.cached_load(argv)
    fits = {s: L.fit(mode, {t: r for t, r in by_source.items() if t != s}) for s in sorted(by_source)}
    print(f"mode {mode}; median predicted / measured per source, each run predicted without its source")
    print(f"{'source':46} {'family':12} {'takes':16} {'harness (most runs)':28} {'n':>4}  tpot  ttft  thr")
    fam_rows: dict[str, list[list[float | None]]] = defaultdict(list)
    parts_rows: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for source, runs in sorted(by_source.items()):
        correction = fits[source]
        preds = [correction.predict(r) for r in runs]
        families = sorted({family_of(r) for r in runs})
        family, takes = families[0] if len(families) == 1 else ("mixed", f"{len(families)} families")
        common = statistics.mode(harness(r) for r in runs)
        if "--markdown" in argv:  # the row docs/accuracy.md carries (round 16b's diagnosis table)
            cells = " | ".join(_cell(runs, preds, kind).strip().replace("-", "–") for kind in KINDS)
            print(f"| {source} | {family} | {takes} | {common} | {len(runs)} | {cells} |")
        else:
            shown = "  ".join(_cell(runs, preds, kind) for kind in KINDS)
            print(f"{source[:46]:46} {family:12} {takes:16} {common[:28]:28} {len(runs):4d}  {shown}")
        for fam in families:  # a source with runs on several families votes once in each
            mine = [(r, p) for r, p in zip(runs, preds, strict=True) if family_of(r) == fam]
            fam_rows[f"{fam[0]} ({fam[1]})"].append(
                [_median_ratio([r for r, _ in mine], [p for _, p in mine], kind) for kind in KINDS]
            )
        if "--parts" in argv:
            for run, pred in zip(runs, preds, strict=True):
                q = ratio(run, "ttft", pred)
                if q is None or run.key("ttft") != TTFT_KEY:
                    continue
                over, lone, wait = ttft_parts(run, correction, pred)
                part = max((("overhead", over), ("prefill", lone), ("wait", wait)), key=lambda kv: kv[1])[0]
                parts_rows[part][source].append(q)
    print("\nby device family: sources, median of the sources' median predicted / measured")
    for label, rows in sorted(fam_rows.items()):
        meds = []
        for i in range(len(KINDS)):
            vals = [r[i] for r in rows if r[i] is not None]
            meds.append(_median([v for v in vals if v is not None]))
        print(f"  {label:36} {len(rows):3d}  " + "  ".join(meds))
    if "--parts" in argv:
        print(
            "\nTTFT (mean-TTFT runs) by the simulated part that dominates: runs, sources, median of source medians"
        )
        for part in ("overhead", "prefill", "wait"):
            per = parts_rows[part]
            n = sum(len(v) for v in per.values())
            meds = [statistics.median(v) for v in per.values()]
            print(f"  {part:10} {n:5d} {len(per):3d}  {_median(meds)}")
            for source, v in sorted(per.items()):
                print(f"      {source[:60]:60} {len(v):4d}  {statistics.median(v):5.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
