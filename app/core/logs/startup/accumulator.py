"""One run's facts with precedence: printed numbers, rank prefixes, the line and rule types."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from app.core import regex
from app.core import vllm_text as vt
from app.core.logs.reading import (
    MAX_INT_DIGITS,
    float_of,
    int_of,
)
from app.core.logs.startup.facts import (
    MAX_ERROR_CHARS,
    MAX_EVIDENCE_CHARS,
    MAX_VALUE_CHARS,
    ErrorKind,
    Evidence,
    Stage,
)

# --------------------------------------------------------------------------------------------
# numbers


def _numeric(value: object) -> int | float | str | None:
    """A configuration value that may be a number: never a bool (``True`` is an ``int`` in Python)."""
    return None if isinstance(value, bool) or not isinstance(value, int | float | str) else value


def _as_int(value: object) -> int | None:
    number = _numeric(value)
    if isinstance(number, str):
        return int_of(number)
    return number if isinstance(number, int) and abs(number) < 10**MAX_INT_DIGITS else None


def _as_float(value: object) -> float | None:
    number = _numeric(value)
    if isinstance(number, str):
        return float_of(number)
    return float(number) if number is not None and math.isfinite(number) else None


def _as_bool(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value in ("True", "False"):
        return value == "True"
    return None


def _as_str(value: object) -> str | None:
    if isinstance(value, str):
        text = value.strip().strip("'\"")[:MAX_VALUE_CHARS]
        return text if text and text != "None" else None
    if isinstance(value, bool | int | float):
        return str(value)
    return None


# --------------------------------------------------------------------------------------------
# line clean-up and rank prefixes

# 0.10.x names a worker "VllmWorker PP0_TP3" (a space before the ranks, v1/executor/multiproc_executor.py, 0.10.1.1);
# 0.11+ "Worker_PP0_TP3"
_PROCESS = regex.compile(
    r"\((?P<name>(?:Worker|VllmWorker|EngineCore|APIServer|ApiServer|RayWorkerWrapper)\w*(?: (?:PP|TP)\d{1,4}\w{0,40})?)"
    r"(?P<rest>(?:\s+\w+=[\w.:-]*)*)\)"
)
_PROCESS_NUMBERS = regex.compile(r"(?:TP|PP|DP|EP|DCP|PCP)(\d+)")
_RANK_ARG = regex.compile(r"\brank=(\d+)")

MAX_RANKS_TRACKED = 1_024  # more ranks than any deployment has: a hostile paste cannot grow the set
RANK_ZERO = 2  # driver / rank 0 / no prefix: its line wins
RANK_UNKNOWN = 1  # a worker whose rank the prefix does not say
RANK_OTHER = 0  # a worker known not to be rank 0


# after a log shipper's prefix too (`> … stderr F (Worker_TP4 pid=955)`, aiter#5192): searched in the line's head
WORKER_TAG_CHARS = 120
_WORKER_RANKS = regex.compile(
    r"\((?:Worker|VllmWorker)\w{0,8}?((?:[_ ](?:TP|PP|DP|EP|DCP|PCP)\d{1,4}){1,6})\b"
)
_RANK_PART = regex.compile(r"(TP|PP)(\d{1,4})")
_BOUND_OF = {"TP": "tensor_parallel_at_least", "PP": "pipeline_parallel_at_least"}
MIN_SUFFIXED_SIZE = 2  # the suffix is printed only for a size above 1


def _worker_ranks(line: str, ln: _Line, run: _Run) -> None:
    """`(Worker_TP1_EP1 pid=…)`: what vLLM's worker names prove (v1/executor/multiproc_executor.py, 0.20–0.33:
    `_TP{rank}` only when tensor_parallel_size > 1, `_PP{rank}` likewise, `_EP{rank}` only with expert
    parallelism on).

    A rank r proves a size of at least r + 1 (and at least 2): a lower bound, kept apart from the size. Even
    ranks 0 … n−1 all printed do not prove n — a quote can stop before rank n — so the size itself is left
    to the lines that print it (club-3090#1139: `Worker_TP0`, `Worker_TP1` on a dual-3090 box is "TP ≥ 2").
    """
    found = _WORKER_RANKS.search(line, 0, WORKER_TAG_CHARS)
    if found is None:
        return
    suffixes = found.group(1)
    for kind, number in _RANK_PART.findall(suffixes):
        seen = run.worker_ranks.setdefault(kind, set())
        if len(seen) < MAX_RANKS_TRACKED:
            seen.add(int(number))
        bound = max(max(seen) + 1, MIN_SUFFIXED_SIZE)
        current = run.get(_BOUND_OF[kind])
        if not isinstance(current, int) or bound > current:
            run.put(_BOUND_OF[kind], bound, ln, source=SOURCE_FALLBACK)
    if "_EP" in suffixes:
        run.put("enable_expert_parallel", True, ln, source=SOURCE_FALLBACK)
    exact_tensor_parallel(ln, run)


def exact_tensor_parallel(ln: _Line, run: _Run) -> None:
    """A TP rank of W − 1 in a world of W processes: the world is DP × PP × PCP × TP (distributed/parallel_state.py::
    initialize_model_parallel, 0.11.0: "rank %s in world size %s is assigned as DP rank %s, PP rank %s, TP rank
    %s"), so TP ≥ W leaves no room for another dimension: TP = W and PP = 1, whichever of the two lines came first
    (vllm#38107: world size 2 and a `Worker_TP1` prefix on two gfx1030 cards)."""
    tp_ranks = run.worker_ranks.get("TP")
    world = run.world_size
    if world is None or world < MIN_SUFFIXED_SIZE or not tp_ranks or max(tp_ranks) + 1 != world:
        return
    run.put("tensor_parallel_size", world, ln, source=SOURCE_FALLBACK)
    run.put("pipeline_parallel_size", 1, ln, source=SOURCE_FALLBACK)


def _rank_priority(line: str) -> int:
    """Rank 0 (or the driver, which prints without a worker prefix) outranks other workers."""
    match = _PROCESS.search(line, 0, 200)
    if match is None:
        return RANK_ZERO
    name, rest = match.group("name"), match.group("rest")
    rank = _RANK_ARG.search(rest)
    if rank is not None:
        return RANK_ZERO if rank.group(1) == "0" else RANK_OTHER
    numbers = _PROCESS_NUMBERS.findall(name)
    if numbers:
        return RANK_ZERO if all(n.strip("0") == "" for n in numbers) else RANK_OTHER
    if name.startswith(("EngineCore", "APIServer", "ApiServer")):
        return RANK_ZERO
    if name.startswith(("VllmWorkerProcess", "RayWorkerWrapper")):
        return RANK_OTHER  # V0 multiprocessing / Ray workers are never the driver (rank 0)
    return RANK_UNKNOWN


@dataclass(frozen=True)
class _Line:
    no: int
    text: str
    rank: int

    @property
    def evidence(self) -> Evidence:
        return Evidence(line_no=self.no, text=self.text[:MAX_EVIDENCE_CHARS])


# --------------------------------------------------------------------------------------------
# the accumulator: one run's facts, with precedence


SOURCE_FORCED = 4  # a line saying the value was overridden (forced block size, auto-fit result)
SOURCE_PRIMARY = 3  # the line whose job is to print this value
SOURCE_SECONDARY = 2  # a value repeated inside another message (profiling summary, error text)
SOURCE_FALLBACK = 1  # inferred from context (engine from line style, L from the concurrency line)

Mode = Literal["last", "first", "min"]


@dataclass
class _Slot:
    value: object
    evidence: Evidence
    priority: tuple[int, int]


@dataclass
class _Run:
    slots: dict[str, _Slot] = field(default_factory=dict)
    kv_readings: list[tuple[int, Evidence]] = field(default_factory=list)
    # 0.34.0's "Memory after warmup" pools (memory._warmup_kv): when printed, they replace the tentative readings
    warmup_kv_readings: list[tuple[int, Evidence]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    recognised: int = 0
    seen_kv: bool = False
    stage: Stage = "start"
    stage_read: bool = False  # a line placed the start-up at its stage (a device-init frame says "start")
    in_traceback: bool = False
    server_died: bool = False  # the API server died or timed out on the engines (a failure past "ready")
    saw_loading: bool = False
    worker_ranks: dict[str, set[int]] = field(default_factory=dict)  # TP / PP ranks seen in prefixes
    world_size: int | None = None  # parallel_state.py's "in world size W" (W > 1)
    saw_code_frame: bool = False  # a traceback frame with no log level before it (of any module)
    headed: bool = False  # a run-start line (engine config, args, server version, command) began it

    def put(
        self, name: str, value: object, line: _Line, *, source: int = SOURCE_PRIMARY, mode: Mode = "last"
    ) -> None:
        if value is None:
            return
        priority = (source, line.rank)
        current = self.slots.get(name)
        if current is not None:
            if priority < current.priority:
                return
            if priority == current.priority:
                if mode == "first":
                    return
                if mode == "min" and _sort_key(value) >= _sort_key(current.value):
                    return
        self.slots[name] = _Slot(value, line.evidence, priority)

    def get(self, name: str) -> object:
        slot = self.slots.get(name)
        return None if slot is None else slot.value

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def _sort_key(value: object) -> float:
    number = _as_float(value)
    return math.inf if number is None else number


Handler = Callable[[re.Match[str], _Line, _Run], None]


@dataclass(frozen=True)
class _Rule:
    """One recognised template: a cheap substring gate, the regex, what to do with a match."""

    needle: str
    pattern: re.Pattern[str]
    handle: Handler
    kv: bool = False  # a KV / memory line: a later run-start line begins a new run
    run_start: bool = False
    marker: bool = False  # what only one device stack prints: read in a pasted command's text too


_DEVICE_WORDS = {"gpu": "GPU", "cuda": "GPU", "rocm": "GPU", "hip": "GPU"}


def _device(word: str) -> str:
    return _DEVICE_WORDS.get(word.lower(), word.upper())


_KNOWN_DEVICES = ("cuda", "rocm", "npu", "xpu", "cpu", "tpu", "hpu", "neuron")


def _device_word(word: str | None) -> str | None:
    return _device(word) if word is not None and word.lower() in _KNOWN_DEVICES else None


def _error(kind: ErrorKind, m: re.Match[str], ln: _Line, run: _Run, *, source: int = SOURCE_PRIMARY) -> None:
    """A failure; a specific kind (SOURCE_PRIMARY) beats a generic one (SOURCE_FALLBACK) in any order."""
    text = m.string[m.start() :].strip()[:MAX_ERROR_CHARS]
    run.put("error", text, ln, source=source, mode="first")
    run.put("error_kind", kind, ln, source=source, mode="first")


def _ascend_marker(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("is_ascend", True, ln)
    run.put("device_type", "NPU", ln, source=SOURCE_FALLBACK)


_GPU_STACKS = {"cuda": "cuda", "rocm": "rocm", "hip": "rocm"}


def gpu_stack(word: str | None) -> str | None:
    """The GPU stack a platform or error word names ("rocm", torch's "HIP" / "CUDA"), or None."""
    return None if word is None else _GPU_STACKS.get(word.lower())


def _rocm_marker(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("device_type", "GPU", ln, source=SOURCE_FALLBACK)
    run.put("gpu_platform", "rocm", ln, source=SOURCE_FALLBACK)


def _cuda_marker(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """What only CUDA prints (its runtime's cudaError… names): the stack is CUDA's."""
    run.put("device_type", "GPU", ln, source=SOURCE_FALLBACK)
    run.put("gpu_platform", "cuda", ln, source=SOURCE_FALLBACK)


G = vt.GIB_NUMBER  # a printed GiB figure (see app.core.vllm_text)
