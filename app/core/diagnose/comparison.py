"""The log's numbers beside the planner's prediction for the same configuration, gaps called out."""

from __future__ import annotations

import math

from app.core.diagnose.basics import fmt_gib
from app.core.diagnose.case import Case
from app.core.diagnose.model import (
    ACTIVATION_GAP_BYTES,
    DEVICE_TOTAL_GAP_BYTES,
    KV_GAP_BYTES,
    WEIGHTS_GAP_FRACTION,
    ComparisonRow,
    Unit,
)
from app.core.result import KVGroup
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
    band = est.ranges.get("kv_cache_bytes")
    unified = case.device is not None and case.device.unified_memory
    if case.device_source == "replay" and case.device is not None and kv.gap is not None:
        # no card name, no total in the paste: device._replay_device chose the catalog card whose predicted pool
        # is nearest this printed one, so the gap is what is left after that fit, not a test of the prediction
        kv = _with_note(
            kv,
            Text(
                "the log prints no device: {id} was chosen because its predicted pool is the nearest to this one, so this gap does not test the prediction; pass the device to compare",
                id=case.device.id,
            ),
        )
    elif unified and band is not None and kv.actual is not None and band.low <= kv.actual <= band.high:
        # a unified-memory device: the planner's pool range carries the host side's share (situations.
        # UMA_HOST_BAND_BYTES), which varies start to start; a printed pool inside it is no gap to call out
        kv = _with_note(
            kv,
            Text(
                "inside the planner's range on this unified-memory device ({low} to {high}): the host side's share of the memory varies from one start to the next",
                low=fmt_gib(band.low),
                high=fmt_gib(band.high),
            ),
        )
    elif kv.gap is not None and kv.gap < -KV_GAP_BYTES:
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
    if f.scheduler_block_size is not None and len(est.groups) > 1:
        rows.append(_scheduler_block_row(f.scheduler_block_size, f.kv_group_block_sizes, est.groups))
    rows.append(_row("kv_tokens", Text("KV cache tokens"), "tokens", f.kv_tokens, est.kv_tokens))
    rows.append(
        _row("max_concurrency", Text("Max concurrency at S"), "ratio", f.max_concurrency, est.max_concurrency)
    )
    return rows


def _scheduler_block_row(
    printed: int, printed_sizes: list[int] | None, groups: list[KVGroup]
) -> ComparisonRow:
    """0.30+ "kv lcm block sizes N" (the LCM of the groups' block sizes) beside the planner's groups' LCM; when
    the printed "kv cache group sizes" differ from the planner's groups, the row says both."""
    planned_sizes = [group.block_size for group in groups]
    row = _row(
        "scheduler_block_size",
        Text("Scheduler block (LCM of the groups)"),
        "tokens",
        printed,
        math.lcm(*planned_sizes),
    )
    if printed_sizes is not None and sorted(printed_sizes) != sorted(planned_sizes):
        row = _with_note(
            row,
            Text(
                "the log's KV groups have block sizes {printed}; the planner's have {planned}",
                printed=", ".join(map(str, printed_sizes)),
                planned=", ".join(map(str, planned_sizes)),
            ),
        )
    return row
