"""The verdict vocabulary: one row per verdict — its short label, its tone and its remedies in order.

The planner (``Estimate.verdict``) and the doctor (``Diagnosis.verdict``) answer in the same words:
the planner uses the first four keys, the doctor all of them (a start-up log can also fail while
loading weights, while capturing CUDA graphs, or for a reason the log does not name).

The rows are data, app/core/verdicts.yaml, validated at import (every verdict present, no unknown
field). Remedy order follows the seed's 处置 table (先压 S，再考虑 KV 数据类型，再考虑 TP，最后才动利用率)
for the KV-bound verdicts; the failure verdicts' order is: the cheapest change that removes the cause
first. A remedy may name ``{largest}`` (the largest max_model_len that starts); :func:`remedies` uses its
``without`` wording when that number is not known.

:func:`classify` is the one rule that picks the verdict: the planner (app/core/estimate/checks.py) calls it
with its predicted start-up, the doctor (app/core/diagnose/steps.py) with what the log says, so the
doctor reading the planner's own log returns the planner's verdict (tests/unit/test_verdicts.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args

import yaml  # type: ignore[import-untyped]  # no types-PyYAML in the lock file
from pydantic import BaseModel, ConfigDict, model_validator

from app.core.text import Text

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


class Remedy(BaseModel):
    """One remedy: a message id that may name ``{largest}``, and the wording used without that number.

    In verdicts.yaml a remedy is its sentence, or ``{text, without}`` when it names ``{largest}``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str  # msgid; may use {largest}
    without: str = ""  # msgid used when {largest} is not known ("" = the same as text)

    @model_validator(mode="before")
    @classmethod
    def _sentence(cls, value: object) -> object:
        return {"text": value} if isinstance(value, str) else value


class VerdictInfo(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    key: VerdictKey
    tone: Tone
    label: str  # msgid: the verdict as a title
    badge: str  # msgid: one or two words for a badge (the doctor's step 4)
    cause: str  # msgid: one sentence saying what the verdict means (the doctor's step 4)
    remedies: tuple[Remedy, ...]
    starts: bool | None  # does vLLM start under this verdict (None: not known)


class _Row(BaseModel):
    """A verdicts.yaml row: a VerdictInfo without its key (the row's name is the key)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tone: Tone
    label: str
    badge: str
    cause: str
    starts: bool | None
    remedies: tuple[Remedy, ...]


class _VerdictsFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    verdicts: dict[VerdictKey, _Row]
    cause_remedies: dict[str, tuple[Remedy, ...]]

    @model_validator(mode="after")
    def _complete(self) -> _VerdictsFile:
        missing = set(get_args(VerdictKey)) - set(self.verdicts)
        if missing:
            raise ValueError(f"verdicts.yaml lacks the verdicts {sorted(missing)}")
        return self


VERDICTS_FILE = Path(__file__).with_name("verdicts.yaml")
_TABLE = _VerdictsFile.model_validate(yaml.safe_load(VERDICTS_FILE.read_text(encoding="utf-8")))
VERDICTS: dict[VerdictKey, VerdictInfo] = {
    key: VerdictInfo(key=key, **row.model_dump()) for key, row in _TABLE.verdicts.items()
}
# A cause the doctor reads from the log's error that needs other remedies than its verdict's (the
# comments in verdicts.yaml say why for each).
CAUSE_REMEDIES: dict[str, tuple[Remedy, ...]] = dict(_TABLE.cause_remedies)


def message_ids() -> list[tuple[tuple[str, int], str]]:
    """Every sentence of verdicts.yaml, for scripts/extract_messages.py (where, message id)."""
    where = ("app/core/verdicts.yaml", 0)
    texts: list[str] = []
    for info in VERDICTS.values():
        texts += [info.label, info.badge, info.cause]
    for remedy_list in (*(info.remedies for info in VERDICTS.values()), *CAUSE_REMEDIES.values()):
        for remedy in remedy_list:
            texts += [remedy.text, remedy.without]
    return [(where, text) for text in texts if text]


# The input a refusal names, for messages that point at one field (the speed sections: no speed while
# vLLM refuses): the cause's own flag where it has one, else the verdict's (S-side: max_model_len).
CAUSE_FIELD: dict[str, str] = {
    "mamba_blocks": "max_num_seqs",
    "max_len_above_derived": "max_model_len",
    "startup_free_memory": "gpu_memory_utilization",
}


# The input a refusal of each verdict names: the flag of the verdict's first remedy (verdicts.yaml). A load
# OOM named gpu_memory_utilization on the Speed card beside "Load OOM: the weights do not fit", whose first
# remedy is --tensor-parallel-size (the new-user walkthrough of 2026-12, 70B on one H100; walk11).
VERDICT_FIELD: dict[str, str] = {
    "s_bound": "max_model_len",
    "load_oom": "tensor_parallel_size",
}


def refusal_field(*, verdict: str, error_kind: str | None) -> str:
    """``refusal_field(verdict="n_bound", error_kind="mamba_blocks")`` -> ``"max_num_seqs"``."""
    if error_kind in CAUSE_FIELD:
        return CAUSE_FIELD[error_kind]
    return VERDICT_FIELD.get(verdict, "gpu_memory_utilization")


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
