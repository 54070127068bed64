"""Predictive replay: for every calibration record with complete inputs, predict each partition from the
inputs alone and compare with what vLLM printed. Prints a table and a summary; `--write` also writes
docs/accuracy.md (committed, linked from the page footer).

    .venv/bin/python bench/accuracy.py [--write]
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import perf_accuracy  # bench/perf_accuracy.py (this script's folder is on sys.path)

from app import calibration
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.specs import GIB

FIELDS = (
    ("weights_gib", "weights_bytes"),
    ("activation_peak_gib", "activation_peak_bytes"),
    ("non_torch_gib", "non_torch_bytes"),
    ("cuda_graph_gib", "cuda_graph_bytes"),
    ("kv_cache_gib", "kv_cache_bytes"),
)


@dataclass
class Row:
    case: calibration.Case
    predicted: dict[str, float]
    reported: dict[str, float]

    def error(self, key: str) -> float | None:
        if key not in self.predicted or self.reported.get(key) is None:
            return None
        return self.predicted[key] - self.reported[key]

    def rel(self, key: str) -> float | None:
        err = self.error(key)
        rep = self.reported.get(key)
        if err is None or not rep:
            return None
        return err / rep


def family(model: str) -> str:
    name = model.lower().split("/")[-1]
    for key in ("llama", "qwen", "gemma", "granite", "phi", "mistral", "deepseek", "gpt-oss"):
        if key in name:
            return key
    return "other"


def rows() -> list[Row]:
    out = []
    for case in calibration.cases(require_version=True):
        try:
            est = estimate(
                model=case.model, device=case.device, serve=case.serve, vllm_version=case.vllm_version
            )
        except PlannerError as exc:
            print(f"skip {case.id}: {exc}", file=sys.stderr)
            continue
        predicted = {key: getattr(est, attr) / GIB for key, attr in FIELDS}
        band = est.ranges["kv_cache_bytes"]
        predicted["kv_low_gib"] = band.low / GIB
        predicted["kv_high_gib"] = band.high / GIB
        predicted["kv_tokens"] = float(est.kv_tokens)
        predicted["max_concurrency"] = est.max_concurrency
        rep = case.reported
        kv_rep = rep.get("kv_cache_gib_binding_rank") or rep.get("kv_cache_gib")
        reported = {key: rep.get(key) for key, _ in FIELDS}
        reported["kv_cache_gib"] = kv_rep
        reported["kv_tokens"] = rep.get("kv_tokens")
        reported["max_concurrency"] = rep.get("max_concurrency")
        out.append(
            Row(case=case, predicted=predicted, reported={k: v for k, v in reported.items() if v is not None})
        )
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def summary_lines(data: list[Row]) -> list[str]:
    lines = [
        "| quantity | records | median abs error | p90 abs error | median abs rel. error | p90 abs rel. error |",
        "|---|---|---|---|---|---|",
    ]
    for key in (
        "weights_gib",
        "activation_peak_gib",
        "non_torch_gib",
        "cuda_graph_gib",
        "kv_cache_gib",
        "kv_tokens",
        "max_concurrency",
    ):
        errs = [abs(e) for r in data if (e := r.error(key)) is not None]
        rels = [abs(e) for r in data if (e := r.rel(key)) is not None]
        if not errs:
            continue
        unit = " GiB" if key.endswith("_gib") else ""
        lines.append(
            f"| {key} | {len(errs)} | {statistics.median(errs):.3g}{unit} | {pct(errs, 0.9):.3g}{unit} | "
            f"{100 * statistics.median(rels):.1f} % | {100 * pct(rels, 0.9):.1f} % |"
        )
    return lines


def range_lines(data: list[Row]) -> list[str]:
    rows_with_kv = [r for r in data if r.reported.get("kv_cache_gib") is not None]
    inside = sum(
        1
        for r in rows_with_kv
        if r.predicted["kv_low_gib"] <= r.reported["kv_cache_gib"] <= r.predicted["kv_high_gib"]
    )
    widths = [r.predicted["kv_high_gib"] - r.predicted["kv_low_gib"] for r in rows_with_kv]
    if not rows_with_kv:
        return []
    return [
        f"KV-pool range (low…high) contains the printed value for {inside} of {len(rows_with_kv)} records "
        f"({100 * inside / len(rows_with_kv):.0f} %); median range width {statistics.median(widths):.2f} GiB.",
    ]


def grouped_lines(data: list[Row], label: str, key_fn) -> list[str]:  # type: ignore[no-untyped-def]
    groups: dict[str, list[Row]] = defaultdict(list)
    for row in data:
        groups[key_fn(row)].append(row)
    lines = [
        f"| {label} | records | median abs KV error (GiB) | max abs KV error (GiB) |",
        "|---|---|---|---|",
    ]
    for name, members in sorted(groups.items()):
        errs = [abs(e) for r in members if (e := r.error("kv_cache_gib")) is not None]
        if errs:
            lines.append(f"| {name} | {len(errs)} | {statistics.median(errs):.2f} | {max(errs):.2f} |")
    return lines


def table_lines(data: list[Row]) -> list[str]:
    lines = [
        "| record | version | weights pred/rep | activation pred/rep | non-torch pred/rep | KV GiB pred/rep | "
        "tokens pred/rep |",
        "|---|---|---|---|---|---|---|",
    ]

    def pair(row: Row, key: str, fmt: str = "{:.2f}") -> str:
        pred = row.predicted.get(key)
        rep = row.reported.get(key)
        if rep is None or pred is None:
            return "–"
        return f"{fmt.format(pred)} / {fmt.format(rep)}"

    for row in data:
        lines.append(
            f"| {row.case.id} | {row.case.vllm_version} | {pair(row, 'weights_gib')} | "
            f"{pair(row, 'activation_peak_gib')} | {pair(row, 'non_torch_gib')} | {pair(row, 'kv_cache_gib')} | "
            f"{pair(row, 'kv_tokens', '{:,.0f}')} |"
        )
    return lines


def report() -> str:
    data = rows()
    parts = [
        "# Accuracy against real vLLM start-up logs",
        "",
        "Generated by `bench/accuracy.py --write` from `../shared/calibration/vllm_logs.jsonl`: every record whose",
        "inputs are complete (model in the catalog, device memory known, vLLM version printed) is predicted from",
        "its inputs alone and compared with what vLLM printed. The constants of the activation, non-torch and",
        "CUDA-graph models were fitted on these same records (bench/calibrate.py), so this is an in-sample figure;",
        "the exact replay (tests/unit/test_replay_exact.py) checks the KV arithmetic separately, to the block.",
        "",
        f"Records predicted: {len(data)}.",
        "",
        "## Summary",
        "",
        *summary_lines(data),
        "",
        *range_lines(data),
        "",
        "## By model family",
        "",
        *grouped_lines(data, "family", lambda r: family(r.case.model.name)),
        "",
        "## By vLLM version",
        "",
        *grouped_lines(data, "version", lambda r: r.case.vllm_version),
        "",
        "## By parallelism",
        "",
        *grouped_lines(
            data,
            "TP×PP",
            lambda r: f"TP{r.case.serve.tensor_parallel_size}×PP{r.case.serve.pipeline_parallel_size}",
        ),
        "",
        perf_accuracy.section(),  # the performance model's held-out errors (bench/perf_accuracy.py)
        "## Every record",
        "",
        *table_lines(data),
        "",
    ]
    return "\n".join(parts)


def main() -> None:
    text = report()
    print(text)
    if "--write" in sys.argv:
        target = Path(__file__).resolve().parents[1] / "docs" / "accuracy.md"
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}", file=sys.stderr)


if __name__ == "__main__":
    main()
