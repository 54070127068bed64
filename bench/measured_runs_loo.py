"""`measured_runs` as a user gives them, one deployment at a time: leave one run out, calibrate on the
others of the same deployment, predict the left-out run (issue 23: TPOT median error <= 12 %).

    .venv/bin/python bench/measured_runs_loo.py [--http]

A "user's cluster" here is one deployment of one source: the same source, device, model, parallel
layout, vLLM release, dtype and stated server flags (bench/data/perf/sources*.jsonl), so runs against
another serve command of the same model are another cluster. (bench/perf_sources.py's within-cluster
figure groups by device, model and TP only, which mixes releases and server flags: dstackai's 405B
H100 runs hold 7 server configurations.)

Every run goes through the web API's own path (app.web.measured_runs.compared_run): the row becomes a
measured run (the planner's fields from its serve config, its bench arguments, its measured keys), is
resolved and estimated as /api/performance does, and is simulated with the shipped coefficients. The
left-out run's prediction is its own simulation times the factors fitted on the others (fit_cluster),
which is what /api/performance answers for it with the others as ``measured_runs``; ``--http`` checks
that with one real POST per deployment (TestClient) and prints the largest difference.

Prints, per deployment with at least MIN_RUNS runs: runs, then TPOT (mean_tpot_ms, else median), TTFT
(mean_ttft_ms, else median) and output_throughput: median |error| of the left-out run and the share
inside the calibrated band; then the median over deployments and the pooled median. Numbers, not
assertions.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import perf_sources as S

from app.core.errors import PlannerError
from app.core.perf.cluster import MeasuredKeys, RunComparison, fit_cluster
from app.core.perf.predict import source_bands
from app.core.perf.simulate import SimulationError
from app.web.inputs.params import serve_values
from app.web.measured_runs import MeasuredRun, compared_run

MIN_RUNS = 3
# the figure each kind is scored on, and the key it falls back to when a source printed only that one
KINDS = {
    "tpot": ("mean_tpot_ms", "median_tpot_ms"),
    "ttft": ("mean_ttft_ms", "median_ttft_ms"),
    "throughput": ("output_throughput", "request_throughput"),
}


def deployment(row: dict[str, Any]) -> str:
    """The row's deployment: what a user's one cluster and one serve command share."""
    same = {k: row.get(k) for k in ("device", "model", "tp", "pp", "dp", "vllm_version", "dtype", "engine")}
    return json.dumps(
        {**same, "server": row.get("server"), "server_other": row.get("server_other")}, sort_keys=True
    )


@dataclass(frozen=True)
class UserRun:
    """One source row as a user's measured run, and what the shipped model predicts for it."""

    source: str
    run: MeasuredRun
    comparison: RunComparison


def user_run(row: dict[str, Any]) -> MeasuredRun:
    args = S.bench_args(row)
    serve = S.serve_config(row, args)
    measured = {k: float(v) for k, v in dict(row["measured"]).items() if k in MeasuredKeys.model_fields}
    return MeasuredRun.model_validate(
        {
            "model": row["model"],
            "device": row["device"],
            "vllm_version": S.run_version(row),
            **serve_values(serve),
            "bench": args.model_dump(),
            "measured": measured,
        }
    )


def deployments() -> dict[tuple[str, str], list[UserRun]]:
    groups: dict[tuple[str, str], list[UserRun]] = defaultdict(list)
    for row in S.source_rows():
        try:
            run = user_run(row)
            comparison = compared_run(run, 0)
        except (
            PlannerError,
            SimulationError,
            ValueError,
        ) as exc:  # the planner refuses it: not a cluster run
            print(f"skipped: {row['source']}: {row['device']} {row['model']}: {exc}")
            continue
        groups[(str(row["source"]), deployment(row))].append(UserRun(str(row["source"]), run, comparison))
    return groups


def scored_key(kind: str, measured: dict[str, float]) -> str | None:
    return next((k for k in KINDS[kind] if k in measured), None)


# left-out runs at clients the others never ran: per kind, (inside the runs' band, inside the model's)
OUTSIDE: dict[str, list[tuple[bool, bool]]] = defaultdict(list)


def leave_one_out(members: list[UserRun]) -> dict[str, list[tuple[float, bool]]]:
    """Per kind, each left-out run's |error| and whether the calibrated band holds it. A left-out run at
    clients outside the others' (ClusterFit.reaches: round 9) also records, in OUTSIDE, whether the
    runs' band (round 8's answer there) and the model's out-of-source band (round 9's,
    predict.source_bands, unwidened) hold it."""
    out: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for i, left in enumerate(members):
        fit = fit_cluster([m.comparison for j, m in enumerate(members) if j != i])
        clients = left.comparison.clients
        reached = clients is None or fit.reaches(clients)
        for kind in KINDS:
            key = scored_key(kind, left.comparison.measured)
            if key is None or kind not in fit.factors:
                continue
            expected = left.comparison.predicted[key] * fit.factor(kind)
            measured = left.comparison.measured[key]

            def holds(
                band: tuple[float, float], expected: float = expected, measured: float = measured
            ) -> bool:
                return (
                    expected * math.exp(min(0.0, band[0]))
                    <= measured
                    <= expected * math.exp(max(0.0, band[1]))
                )

            out[kind].append((abs(expected - measured) / measured, holds(fit.band(kind))))
            if not reached:
                OUTSIDE[kind].append((holds(fit.band(kind)), holds(source_bands()[kind])))
    return out


def http_check(members: list[UserRun]) -> float:
    """The largest relative difference between this bench's left-out prediction and /api/performance's
    answer for the first run with the others as measured_runs (0 when they agree)."""
    from fastapi.testclient import TestClient

    from app.web.app import create_app

    left, others = members[0], members[1:]
    body = {
        **left.run.model_dump(exclude_unset=True, exclude={"measured", "paste"}),
        "measured_runs": [m.run.model_dump(exclude_unset=True, exclude={"paste"}) for m in others],
    }
    answer = TestClient(create_app()).post("/api/performance", json=body)
    if answer.status_code != 200:
        print(f"    http {answer.status_code}: {answer.text[:300]}")
        return math.nan
    fit = fit_cluster([m.comparison for m in others])
    worst = 0.0
    for kind, keys in KINDS.items():
        for key in keys:
            mine = left.comparison.predicted[key] * fit.factor(kind)
            theirs = answer.json()["bench"][key]["expected"]
            worst = max(worst, abs(mine - theirs) / theirs)
    return worst


def main() -> int:
    http = "--http" in sys.argv
    groups = {k: v for k, v in deployments().items() if len(v) >= MIN_RUNS}
    per_deployment: dict[str, list[float]] = defaultdict(list)
    pooled: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    print(
        f"{len(groups)} deployments with >= {MIN_RUNS} runs (leave one run out, the others as measured_runs)"
    )
    for (source, key), members in sorted(groups.items()):
        scores = leave_one_out(members)
        d = json.loads(key)
        label = f"{source}: {d['device']} {d['model']} tp{d['tp']} dp{d['dp']} {str(d['vllm_version'])[:24]}"
        cells = []
        for kind in KINDS:
            if scores.get(kind):
                errors = [e for e, _ in scores[kind]]
                per_deployment[kind].append(statistics.median(errors))
                pooled[kind].extend(scores[kind])
                inside = sum(i for _, i in scores[kind]) / len(scores[kind])
                cells.append(f"{kind} {statistics.median(errors):5.1%} (band {inside:4.0%})")
        check = f"  [http diff {http_check(members):.1e}]" if http else ""
        print(f"  {label} — {len(members)} runs: " + "; ".join(cells) + check)
    for kind in KINDS:
        if per_deployment[kind]:
            errors = [e for e, _ in pooled[kind]]
            inside = sum(i for _, i in pooled[kind]) / len(pooled[kind])
            print(
                f"{kind}: median over {len(per_deployment[kind])} deployments "
                f"{statistics.median(per_deployment[kind]):.1%}, pooled over {len(errors)} runs "
                f"{statistics.median(errors):.1%}, inside the band {inside:.0%}; deployments <= 12 %: "
                f"{sum(e <= 0.12 for e in per_deployment[kind])} of {len(per_deployment[kind])}"
            )
    for kind, held in OUTSIDE.items():
        runs_band = sum(a for a, _ in held) / len(held)
        model_band = sum(b for _, b in held) / len(held)
        print(
            f"{kind}: {len(held)} left-out runs at clients the others never ran: inside the runs' band "
            f"(round 8) {runs_band:.0%}, inside the model's band (round 9) {model_band:.0%}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
