"""The verdict vocabulary: one row per verdict — its short label, its tone and its remedies in order.

The planner (``Estimate.verdict``) and the doctor (``Diagnosis.verdict``) answer in the same words:
the planner uses the first four keys, the doctor all of them (a start-up log can also fail while
loading weights, while capturing CUDA graphs, or for a reason the log does not name).

Remedy order follows the seed's 处置 table (先压 S，再考虑 KV 数据类型，再考虑 TP，最后才动利用率) for the
KV-bound verdicts; the failure verdicts' order is: the cheapest change that removes the cause first.
A remedy may name ``{largest}`` (the largest max_model_len that starts); :func:`remedies` uses its
``without`` wording when that number is not known.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.core.text import N_, Text

VerdictKey = Literal[
    "fits", "s_bound", "n_bound", "budget_bound", "load_oom", "graph_oom", "failed", "unknown"
]
Tone = Literal["ok", "warn", "bad", "unknown"]


@dataclass(frozen=True)
class Remedy:
    text: str  # msgid; may use {largest}
    without: str = ""  # msgid used when {largest} is not known ("" = the same as text)


@dataclass(frozen=True)
class VerdictInfo:
    key: VerdictKey
    tone: Tone
    label: str  # msgid: the verdict as a title
    badge: str  # msgid: one or two words for a badge (the doctor's step 4)
    cause: str  # msgid: one sentence saying what the verdict means (the doctor's step 4)
    remedies: tuple[Remedy, ...]
    starts: bool | None  # does vLLM start under this verdict (None: not known)


VERDICTS: dict[VerdictKey, VerdictInfo] = {
    "fits": VerdictInfo(
        "fits",
        "ok",
        N_("Fits"),
        N_("fits"),
        N_("It starts and the pool holds the target concurrency at S."),
        (),
        True,
    ),
    "s_bound": VerdictInfo(
        "s_bound",
        "bad",
        N_("S-side: one sequence is too long"),
        N_("S-side"),
        N_("A shorter --max-model-len starts: one sequence of S tokens is too long for the pool."),
        (
            Remedy(
                N_("Lower --max-model-len to {largest} or less"),
                N_("Lower --max-model-len (the most direct fix)"),
            ),
            Remedy(N_("--kv-cache-dtype fp8 (b: 2 → 1 byte)")),
            Remedy(N_("Raise --tensor-parallel-size")),
            Remedy(N_("Raise --gpu-memory-utilization")),
        ),
        False,
    ),
    "n_bound": VerdictInfo(
        "n_bound",
        "warn",
        N_("N-side: the concurrency does not fit"),
        N_("N-side"),
        N_("It starts with one sequence; the concurrency is what the pool cannot hold."),
        (
            Remedy(N_("Lower the target concurrency or --max-num-seqs")),
            Remedy(N_("Lower --max-model-len")),
            Remedy(N_("--kv-cache-dtype fp8")),
            Remedy(N_("Raise --tensor-parallel-size or add replicas")),
        ),
        True,
    ),
    "budget_bound": VerdictInfo(
        "budget_bound",
        "bad",
        N_("Budget: no room for a KV pool"),
        N_("budget"),
        N_("No useful max_model_len starts, not even for one sequence: the budget itself is short."),
        (
            Remedy(N_("Raise --gpu-memory-utilization (keep room for the prefill peak)")),
            Remedy(N_("Raise --tensor-parallel-size so each device holds fewer weights")),
            Remedy(N_("Lower --max-num-batched-tokens to flatten the prefill peak")),
            Remedy(N_("Use a quantized checkpoint")),
        ),
        False,
    ),
    "load_oom": VerdictInfo(
        "load_oom",
        "bad",
        N_("Load OOM: the weights do not fit"),
        N_("load OOM"),
        N_("The device ran out of memory while loading the weights, before any KV sizing."),
        (
            Remedy(
                N_(
                    "Raise --tensor-parallel-size (or --pipeline-parallel-size) so each device loads fewer weights"
                )
            ),
            Remedy(N_("Use a quantized checkpoint")),
            Remedy(N_("Free the device from other processes")),
        ),
        False,
    ),
    "graph_oom": VerdictInfo(
        "graph_oom",
        "bad",
        N_("Graph-capture OOM: no room for CUDA graphs"),
        N_("graph-capture OOM"),
        N_("The device ran out of memory while capturing CUDA graphs, after the KV pool was sized."),
        (
            Remedy(
                N_(
                    "Lower --gpu-memory-utilization to leave room for the graphs (before 0.20 they are captured outside the budget)"
                )
            ),
            Remedy(N_("Capture fewer graphs: lower --max-num-seqs or max_cudagraph_capture_size")),
            Remedy(N_("--enforce-eager (no CUDA graphs; slower decode)")),
        ),
        False,
    ),
    "failed": VerdictInfo(
        "failed",
        "bad",
        N_("Failed to start: cause not recognised"),
        N_("failed"),
        N_("The start-up failed with an error that is not about the KV pool, the weights or the graphs."),
        (
            Remedy(
                N_("Read the first error of the traceback; paste the whole log from the start to that error")
            ),
        ),
        False,
    ),
    "unknown": VerdictInfo(
        "unknown",
        "unknown",
        N_("Nothing to diagnose"),
        N_("unknown"),
        N_("The paste does not answer the trials."),
        (),
        None,
    ),
}


# A cause the doctor reads from the log's error can need other remedies than its verdict's: vLLM
# refuses to start when the device's free memory is below the requested share (another process holds
# it), so raising --gpu-memory-utilization, the budget verdict's first remedy, makes it worse.
CAUSE_REMEDIES: dict[str, tuple[Remedy, ...]] = {
    "startup_free_memory": (
        Remedy(N_("Free the device from other processes")),
        Remedy(N_("Lower --gpu-memory-utilization to at most the free share the log prints")),
    ),
    # out of memory allocating the pool vLLM sized: something outside its accounting holds memory
    "kv_alloc_oom": (
        Remedy(N_("Lower --gpu-memory-utilization so the pool fits in the memory that is actually free")),
        Remedy(N_("Free the device from other processes")),
    ),
}


def remedies(key: VerdictKey, *, largest: str | None = None, cause: str | None = None) -> list[str]:
    """The verdict's remedies in order, as translatable sentences (``largest``: a formatted length)."""
    out: list[str] = []
    for remedy in CAUSE_REMEDIES.get(cause or "", VERDICTS[key].remedies):
        if "{largest}" in remedy.text and largest is None:
            out.append(Text(remedy.without or remedy.text))
        elif "{largest}" in remedy.text:
            out.append(Text(remedy.text, largest=largest))
        else:
            out.append(Text(remedy.text))
    return out
