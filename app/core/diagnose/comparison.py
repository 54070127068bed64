"""The log's numbers beside the planner's prediction for the same configuration, gaps called out."""

from __future__ import annotations

from app.core.diagnose.case import (
    Case,
    fmt_gib,
)
from app.core.diagnose.model import (
    ACTIVATION_GAP_BYTES,
    DEVICE_TOTAL_GAP_BYTES,
    KV_GAP_BYTES,
    WEIGHTS_GAP_FRACTION,
    ComparisonRow,
    Unit,
)
from app.core.text import Text

# --------------------------------------------------------------------------------------------
# prediction beside the log


def _row(key: str, label: str, unit: Unit, actual: float | None, predicted: float | None) -> ComparisonRow:
    gap = actual - predicted if actual is not None and predicted is not None else None
    return ComparisonRow(key=key, label=label, unit=unit, actual=actual, predicted=predicted, gap=gap)


def _with_note(row: ComparisonRow, note: str | None) -> ComparisonRow:
    return row if note is None else row.model_copy(update={"note": note})


def comparison(case: Case) -> list[ComparisonRow]:
    est = case.prediction
    if est is None:
        return []
    f = case.facts
    rows: list[ComparisonRow] = []
    total = _row(
        "device_total_bytes", Text("Device total"), "bytes", f.device_total_bytes, est.device_total_bytes
    )
    if total.gap is not None and abs(total.gap) > DEVICE_TOTAL_GAP_BYTES:
        total = _with_note(total, Text("the card reports a different total than the catalog device"))
    rows.append(total)
    weights = _row("weights_bytes", "Weights", "bytes", f.weights_bytes, est.weights_bytes)
    if (
        weights.gap is not None
        and est.weights_bytes
        and abs(weights.gap) / est.weights_bytes > WEIGHTS_GAP_FRACTION
    ):
        weights = _with_note(
            weights, Text("check the dtype, the quantization, or that the catalog model is this one")
        )
    rows.append(weights)
    act = _row(
        "activation_peak_bytes",
        Text("Activation peak"),
        "bytes",
        f.activation_peak_bytes,
        est.activation_peak_bytes,
    )
    if act.gap is not None and abs(act.gap) > ACTIVATION_GAP_BYTES:
        act = _with_note(
            act, Text("the profile run peaked differently (max_num_batched_tokens, sampler, version)")
        )
    rows.append(act)
    rows.append(_row("non_torch_bytes", "Non-torch", "bytes", f.non_torch_bytes, est.non_torch_bytes))
    graphs = _row("cuda_graph_bytes", Text("CUDA graphs"), "bytes", f.cuda_graph_bytes, est.cuda_graph_bytes)
    if not est.cuda_graph_budgeted and (f.cuda_graph_bytes or est.cuda_graph_bytes):
        graphs = _with_note(
            graphs,
            Text(
                "before 0.20 the graphs are captured after KV sizing, outside the budget: they must fit in the {unused_bytes} left by gpu_memory_utilization",
                unused_bytes=fmt_gib(est.unused_bytes),
            ),
        )
    rows.append(graphs)
    kv = _row("kv_cache_bytes", Text("KV cache pool"), "bytes", case.printed_pool, est.kv_cache_bytes)
    if kv.gap is not None and kv.gap < -KV_GAP_BYTES:
        kv = _with_note(
            kv,
            Text(
                "KV lower than predicted by more than 1 GiB: another process may hold device memory, or this version's profiler measures more than the planner models"
            ),
        )
    elif kv.gap is not None and kv.gap > KV_GAP_BYTES:
        kv = _with_note(
            kv, Text("KV higher than predicted: the planner over-estimates activation or non-torch here")
        )
    rows.append(kv)
    rows.append(_row("num_gpu_blocks", Text("GPU blocks"), "count", f.num_gpu_blocks, est.num_gpu_blocks))
    rows.append(_row("kv_tokens", Text("KV cache tokens"), "tokens", f.kv_tokens, est.kv_tokens))
    rows.append(
        _row("max_concurrency", Text("Max concurrency at S"), "ratio", f.max_concurrency, est.max_concurrency)
    )
    return rows
