"""The verdict vocabulary: one row per verdict — its short label, its tone and its remedies in order.

The planner (``Estimate.verdict``) and the doctor (``Diagnosis.verdict``) answer in the same words:
the planner uses the first four keys, the doctor all of them (a start-up log can also fail while
loading weights, while capturing CUDA graphs, or for a reason the log does not name).

Remedy order follows the seed's 处置 table (先压 S，再考虑 KV 数据类型，再考虑 TP，最后才动利用率) for the
KV-bound verdicts; the failure verdicts' order is: the cheapest change that removes the cause first.
A remedy may name ``{largest}`` (the largest max_model_len that starts); :func:`remedies` uses its
``without`` wording when that number is not known.

:func:`classify` is the one rule that picks the verdict: the planner (app/core/estimate.py) calls it
with its predicted start-up, the doctor (app/core/diagnose/steps.py) with what the log says, so the
doctor reading the planner's own log returns the planner's verdict (tests/unit/test_verdicts.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.core.text import N_, Text

VerdictKey = Literal[
    "fits", "s_bound", "n_bound", "budget_bound", "load_oom", "graph_oom", "failed", "unknown"
]
Tone = Literal["ok", "warn", "bad", "unknown"]
# the verdicts of a start that failed for a reason other than the KV pool (the pool is not the question)
FailureKey = Literal["load_oom", "graph_oom", "failed"]

# Seed step 4 ("把 --max-model-len 减半再试，能起 → 单序列过长（S侧）"): a failed start is S-bound when a
# shorter length worth serving starts. The seed's test is half of S; for a long S the shorter length
# need not be half, only useful: at least one prefill chunk at vLLM's smallest `vllm serve` default
# --max-num-batched-tokens, 2,048 tokens (reference §7, the fallback tier of get_batch_defaults). A
# pool that holds less serves nothing real, so the verdict is the budget. (For S ≤ 4,096 this is
# exactly the seed's halving test; the doctor's former 1,024 contradicted the seed's halving for
# S = 8,192 pools holding 1,232–1,664 tokens, the review's three disagreements.)
USEFUL_LENGTH_TOKENS = 2048


def useful_length(max_model_len: int) -> int:
    """The shortest max_model_len worth serving when S does not start: half of S, at most 2,048 tokens.

    >>> useful_length(8192), useful_length(3000), useful_length(1)
    (2048, 1500, 1)
    """
    return max(1, min(max_model_len // 2, USEFUL_LENGTH_TOKENS))


def shorter_length_starts(
    *, largest_len: int | None, max_model_len: int | None, budget_short: bool = False
) -> bool | None:
    """Seed step 4's S trial: does a useful, shorter max_model_len start? (None: not known).

    ``largest_len`` is the largest max_model_len that starts (vLLM's own estimate or a replay);
    ``budget_short`` says the failure is about the budget (no pool, free memory), so no length helps.
    Llama-3.1-70B on one H100 at TP 2, utilization 0.884, S 8,192: 1,664 tokens start, 1,664 < 2,048,
    so False (budget-bound).
    """
    if budget_short:
        return False
    if largest_len is None or max_model_len is None:
        return None
    return largest_len >= useful_length(max_model_len)


def classify(
    *,
    starts: bool | None,
    largest_len: int | None,
    max_model_len: int | None,
    reached: float | None,
    target: int,
    failure: FailureKey | None = None,
    length_refused: bool = False,
    sequences_refused: bool = False,
    budget_short: bool = False,
    one_sequence_starts: bool | None = False,
) -> VerdictKey:
    """The verdict of one start, for the planner and the doctor alike (seed steps 1 and 4).

    - ``failure``: the start died for a reason that is its own verdict (weights, graphs, other);
    - ``starts``: vLLM starts as configured (None: not known → "unknown");
    - ``reached`` / ``target``: the concurrency the pool holds at S and the one asked for;
    - ``length_refused``: vLLM refused the length alone (above the model's maximum) → S-bound;
    - ``sequences_refused``: vLLM refused the number of sequences alone (0.20.2+ "max_num_seqs (N)
      exceeds available Mamba cache blocks (M)": full CUDA graphs need a Mamba block per decode
      sequence) → N-bound: the same pool serves at most M sequences;
    - ``largest_len`` / ``max_model_len`` / ``budget_short``: the S trial (:func:`shorter_length_starts`);
    - ``one_sequence_starts``: the N trial (--max-num-seqs 1). vLLM's start-up check is one request of
      S tokens, so when S fails it fails too unless something else (graphs, sampler) moved.

    Worked example: S 8,192, pool for 1,664 tokens, 1 sequence wanted → "budget_bound"; the same pool
    at S 1,024 starts and holds 1.62 sequences, so with 4 wanted → "n_bound".
    """
    if failure is not None:
        return failure
    if sequences_refused:
        return "n_bound"
    if starts is None:
        return "unknown"
    if starts:
        return "n_bound" if reached is not None and reached < target else "fits"
    if length_refused:
        return "s_bound"
    shorter = shorter_length_starts(
        largest_len=largest_len, max_model_len=max_model_len, budget_short=budget_short
    )
    if shorter:
        return "s_bound"
    if one_sequence_starts:
        return "n_bound"
    if shorter is None and one_sequence_starts is None:
        return "unknown"
    return "budget_bound"


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


# The input a refusal names, for messages that point at one field (the speed sections: no speed while
# vLLM refuses): the cause's own flag where it has one, else the verdict's (S-side: max_model_len).
CAUSE_FIELD: dict[str, str] = {
    "mamba_blocks": "max_num_seqs",
    "max_len_above_derived": "max_model_len",
    "startup_free_memory": "gpu_memory_utilization",
}


def refusal_field(*, verdict: str, error_kind: str | None) -> str:
    """``refusal_field(verdict="n_bound", error_kind="mamba_blocks")`` -> ``"max_num_seqs"``."""
    if error_kind in CAUSE_FIELD:
        return CAUSE_FIELD[error_kind]
    return "max_model_len" if verdict == "s_bound" else "gpu_memory_utilization"


# A cause the doctor reads from the log's error can need other remedies than its verdict's: vLLM
# refuses to start when the device's free memory is below the requested share (another process holds
# it), so raising --gpu-memory-utilization, the budget verdict's first remedy, makes it worse.
CAUSE_REMEDIES: dict[str, tuple[Remedy, ...]] = {
    "startup_free_memory": (
        Remedy(N_("Free the device from other processes")),
        Remedy(N_("Lower --gpu-memory-utilization to at most the free share the log prints")),
    ),
    # the engine config refuses a --max-model-len above the model's own maximum ({largest}: that maximum)
    "max_len_above_derived": (
        Remedy(
            N_("Lower --max-model-len to {largest} or less"),
            N_("Lower --max-model-len (the most direct fix)"),
        ),
        Remedy(N_("Or set VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 if the model really handles longer inputs")),
    ),
    # the device faulted (illegal memory access, GPU hang, core dump): a kernel, driver or firmware bug —
    # no memory setting is the fix, so these first find the kernel, then step around graphs and backends
    "device_fault": (
        Remedy(
            N_(
                "Rerun with CUDA_LAUNCH_BLOCKING=1 (HIP_LAUNCH_BLOCKING=1 on ROCm) so the error names the failing kernel"
            )
        ),
        Remedy(N_("Try --enforce-eager (no graph capture) and another --attention-backend")),
        Remedy(
            N_(
                "Check the driver / ROCm version against the vLLM release, and search vLLM's issues for the error"
            )
        ),
    ),
    # an Ascend operator or ACL call failed (torch_npu "NPU function error … error code is N")
    "npu_error": (
        Remedy(
            N_("Check that CANN, torch_npu and vllm-ascend are the versions the vllm-ascend release names")
        ),
        Remedy(N_("Try --enforce-eager (no ACL graph capture)")),
        Remedy(N_("Search vllm-ascend's issues for the operator and the error code")),
    ),
    # 0.20.2+ "max_num_seqs (N) exceeds available Mamba cache blocks (M)" ({largest}: M, the most sequences
    # that start): full CUDA graphs need one Mamba block per decode sequence (config/compilation.py
    # CompilationConfig.resolve_cudagraph_mode_and_sizes); eager mode skips the check; more memory, more blocks
    "mamba_blocks": (
        Remedy(
            N_("Lower --max-num-seqs to {largest} or less (the pool's Mamba cache blocks)"),
            N_("Lower --max-num-seqs to at most the pool's Mamba cache blocks"),
        ),
        Remedy(
            N_("Or --enforce-eager: without full CUDA graphs vLLM does not make this check (slower decode)")
        ),
        Remedy(N_("Or give the pool more blocks: raise --gpu-memory-utilization or --tensor-parallel-size")),
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
