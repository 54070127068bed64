"""Read a pasted vLLM start-up log into typed facts (the Prometheus side is :mod:`app.core.logs.metrics`).

Pure parsing, no I/O. Every template recognised here is quoted in the reference
(``/work/shared/reference/vllm-accounting.md``): §4 for log lines and errors, §8 for metrics,
§9 for the vllm-ascend variants. Sizes are integer bytes (``round(GiB × 2**30)``; the old
"GB" lines are GiB too, reference §4.1); the printed line is kept as :class:`Evidence` so a
reader can check every number against the paste.

Neither parser raises on any string (fuzz-tested), except that a start-up log longer than
:data:`MAX_LOG_CHARS` is refused with a :class:`PlannerError`.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.core import regex
from app.core import vllm_text as vt
from app.core.command import ParsedCommand, compose_command, parse_serve_args, parse_serve_command
from app.core.errors import PlannerError
from app.core.logs.reading import (
    MAX_INT_DIGITS,
    MAX_LOG_CHARS,
    float_of,
    gib_bytes,
    int_of,
    numbered_lines,
    strip_ansi,
)
from app.core.serve_flags import FlagKind, printed_keys
from app.core.specs import ServeConfig, SpeculativeConfig
from app.core.text import Msg, Text
from app.core.vllm_text import VllmLine

BOX_BORDER = "│┃|"  # a log viewer (k9s, kubectl in a TUI) frames each line in box-drawing bars
MAX_EVIDENCE_CHARS = 2_000  # evidence keeps the printed line, clipped so one giant line stays small
# The longest real line is the engine-config / "non-default args" line (a few KB, more with a large
# --hf-overrides); anything past this is cut before a rule sees it, so no line costs more than this.
MAX_LINE_CHARS = 65_536
MAX_VALUE_CHARS = 512  # a captured string (model id, dtype, backend) longer than this is not vLLM's
MAX_ERROR_CHARS = 2_000  # an error message is kept up to this
MAX_COMMAND_LINES = 64  # a pasted `vllm serve … \` command spans at most this many continued lines
MAX_ARGS_EVAL_CHARS = 200_000  # ast.literal_eval is only tried on "non-default args" dicts up to this size
MAX_OBJECT_CHARS = 1_024  # a printed speculative_config / limit_mm_per_prompt value is far shorter

EngineName = Literal["v0", "v1"]
ErrorKind = Literal[
    "no_blocks",  # "No available memory for the cache blocks", or a pool printed as ≤ 0 (vllm-ascend)
    "max_len_too_long",
    "max_len_above_derived",  # --max-model-len above the model's maximum: refused for the length alone
    "load_oom",  # out of memory while the weights load
    "graph_oom",  # out of memory while CUDA / NPU graphs are captured
    "startup_free_memory",
    "torch_oom",  # out of memory elsewhere (the profile run)
    "kv_alloc_oom",  # out of memory allocating the KV tensors, after the pool was sized
    "autofit_failed",
    "device_fault",  # illegal memory access, GPU hang / memory access fault, a core dump: not a budget
    "npu_error",  # an Ascend operator or ACL call failed (torch_npu "NPU function error", ERR… call acl api failed)
    "startup_failed",  # a traceback / "EngineCore failed to start" with no recognised cause
]
# where the start-up was when a line came: an out-of-memory is classified by it
# "sized": the KV pool was sized (its size lines printed); next come the allocation and the graph capture
Stage = Literal["start", "load", "profile", "sized", "kv_alloc", "graph", "ready"]


class Evidence(BaseModel):
    """Where a fact came from: the 1-based line number in the paste and that line as printed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    line_no: int
    text: str


class LogFacts(BaseModel):
    """Everything a vLLM start-up log says about memory, blocks and configuration.

    Every field is ``None`` when the log does not say it. Per-GPU figures are rank 0's
    (only rank 0 prints "Available KV cache memory" in most versions, reference §1);
    ``kv_cache_bytes_min_rank`` is the smallest value any rank printed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    # identity and configuration (engine-config line, "non-default args", args Namespace)
    vllm_version: str | None = None
    engine: EngineName | None = None
    model: str | None = None
    max_model_len: int | None = None
    tensor_parallel_size: int | None = None
    pipeline_parallel_size: int | None = None
    gpu_memory_utilization: float | None = None
    kv_cache_dtype: str | None = None
    block_size: int | None = None
    block_size_forced: int | None = None  # a backend / platform overrode the block size (reference §5.1, §9)
    enable_prefix_caching: bool | None = None
    quantization: str | None = None
    dtype: str | None = None
    enforce_eager: bool | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    kv_cache_memory_specified: bool | None = None  # --kv-cache-memory-bytes was used
    enable_chunked_prefill: bool | None = None
    cpu_offload_gb: float | None = None
    swap_space_gib: float | None = None  # V0 --swap-space (GiB)
    kv_offloading_size_gib: float | None = None  # --kv-offloading-size (GiB)
    mm_processor_cache_gb: float | None = None  # --mm-processor-cache-gb (GiB, "non-default args")
    # the extras (app/core/extras.py), named like ServeConfig's fields so the doctor's prediction gets them
    data_parallel_size: int | None = None
    enable_expert_parallel: bool | None = None
    speculative_config: dict[str, Any] | None = None  # --speculative-config as vLLM printed it
    enable_lora: bool | None = None
    max_loras: int | None = None
    max_lora_rank: int | None = None
    max_cpu_loras: int | None = None
    fully_sharded_loras: bool | None = None
    limit_mm_per_prompt: dict[str, int] | None = None
    # the memory budget, per GPU (reference §2, §4.2)
    device_total_bytes: int | None = None
    device_free_at_start_bytes: int | None = None
    weights_bytes: int | None = None
    activation_peak_bytes: int | None = None
    non_torch_bytes: int | None = None
    total_consumed_bytes: int | None = None  # 0.27.1+: weights + non-torch as a drop in free memory
    non_kv_cache_bytes: int | None = None  # V1 debug "Total non KV cache memory"
    kv_cache_bytes: int | None = None
    kv_cache_bytes_min_rank: int | None = None
    cuda_graph_bytes: int | None = None  # actual capture ("Graph capturing finished … took")
    cuda_graph_estimate_bytes: int | None = None  # profiled estimate subtracted before KV sizing
    gpu_memory_utilization_without_cuda_graph: float | None = None  # the "is equivalent to" figure
    kv_cache_memory_suggestion_bytes: int | None = None  # `--kv-cache-memory=` to fit the request
    # blocks and capacity (reference §4.3)
    num_gpu_blocks: int | None = None
    num_cpu_blocks: int | None = None
    kv_tokens: int | None = None
    max_concurrency: float | None = None
    max_concurrency_tokens_per_request: int | None = None
    # failure (reference §4.4)
    error: str | None = None
    error_kind: ErrorKind | None = None
    failure_stage: Stage | None = None  # where the start-up was when it failed (a traceback's frames say)
    estimated_max_model_len: int | None = None
    kv_cache_needed_bytes: int | None = None  # V1: KV one max-length request needs
    # backend and device (reference §5, §9)
    attention_backend: str | None = None
    device_type: str | None = None
    device_name: str | None = None  # "NVIDIA H100 80GB HBM3" when the paste names the card
    is_ascend: bool = False
    # bookkeeping
    runs_found: int = 0
    evidence: dict[str, Evidence] = Field(default_factory=dict)
    recognised_lines: int = 0
    notes: list[Msg] = Field(default_factory=list)  # Text sentences (pydantic would copy a str)


# --------------------------------------------------------------------------------------------
# numbers


def _as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if abs(value) < 10**MAX_INT_DIGITS else None
    if isinstance(value, str):
        return int_of(value)
    return None


def _as_float(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        as_float = float(value)
        return as_float if math.isfinite(as_float) else None
    if isinstance(value, str):
        return float_of(value)
    return None


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

_PROCESS = regex.compile(
    r"\((?P<name>(?:Worker|VllmWorker|EngineCore|APIServer|ApiServer|RayWorkerWrapper)\w*)"
    r"(?P<rest>(?:\s+\w+=[\w.:-]*)*)\)"
)
_PROCESS_NUMBERS = regex.compile(r"(?:TP|PP|DP|EP|DCP|PCP)(\d+)")
_RANK_ARG = regex.compile(r"\brank=(\d+)")

MAX_RANKS_TRACKED = 1_024  # more ranks than any deployment has: a hostile paste cannot grow the set
RANK_ZERO = 2  # driver / rank 0 / no prefix: its line wins
RANK_UNKNOWN = 1  # a worker whose rank the prefix does not say
RANK_OTHER = 0  # a worker known not to be rank 0


_WORKER_RANKS = regex.compile(r"^\((?:Worker|VllmWorker)\w{0,8}?((?:_(?:TP|PP|DP|EP|DCP|PCP)\d{1,4}){1,6})\b")
_RANK_PART = regex.compile(r"(TP|PP)(\d{1,4})")


def _worker_ranks(line: str, ln: _Line, run: _Run) -> None:
    """`(Worker_TP1_PP1 pid=…)`: once ranks 0 … n−1 have all printed, the parallel size is at least n.

    A lone `Worker_TP2` (a quoted excerpt) says only that the size is above 2, not that it is 3, so the
    size is read from the ranks only when none below the highest is missing.
    """
    found = _WORKER_RANKS.match(line)
    if found is None:
        return
    for kind, number in _RANK_PART.findall(found.group(1)):
        name = "tensor_parallel_size" if kind == "TP" else "pipeline_parallel_size"
        seen = run.worker_ranks.setdefault(kind, set())
        if len(seen) < MAX_RANKS_TRACKED:
            seen.add(int(number))
        size = max(seen) + 1
        if len(seen) != size or size < 2:
            continue  # a gap below the highest rank; or TP0 alone (the suffix is printed only for a size > 1)
        current = run.get(name)
        slot = run.slots.get(name)
        if slot is not None and slot.priority[0] > SOURCE_FALLBACK:
            continue  # the configuration line says it
        if not isinstance(current, int) or size > current:
            run.put(name, size, ln, source=SOURCE_FALLBACK)


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
    notes: list[str] = field(default_factory=list)
    recognised: int = 0
    seen_kv: bool = False
    stage: Stage = "start"
    in_traceback: bool = False
    saw_loading: bool = False
    worker_ranks: dict[str, set[int]] = field(default_factory=dict)  # TP / PP ranks seen in prefixes
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


G = vt.GIB_NUMBER  # a printed GiB figure (see app.core.vllm_text)


# --------------------------------------------------------------------------------------------
# handlers: memory budget


def _weights(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("weights_bytes", gib_bytes(m.group(1)), ln)
    run.stage = "profile"


def _v0_budget(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("device_total_bytes", gib_bytes(m.group(1)), ln)
    run.put("gpu_memory_utilization", float_of(m.group(2)), ln, source=SOURCE_FALLBACK)  # 2 decimals only
    run.put("engine", "v0", ln, source=SOURCE_FALLBACK)


def _v0_partition(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("weights_bytes", gib_bytes(m.group(1)), ln, source=SOURCE_SECONDARY)
    run.put("non_torch_bytes", gib_bytes(m.group(2)), ln)
    run.put("activation_peak_bytes", gib_bytes(m.group(3)), ln)
    _kv_memory(m.group(4), ln, run)
    run.put("engine", "v0", ln, source=SOURCE_FALLBACK)


_PROFILE_VALUE = regex.compile(vt.PROFILE_VALUE)


def _v0_profiling_results(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """0.6.4/0.6.5 one-line "Memory profiling results: total_gpu_memory=…GiB …" (peak includes weights)."""
    values = dict(_PROFILE_VALUE.findall(m.group(0)))
    total = values.get("total_gpu_memory") or values.get("total_npu_memory")
    run.put("device_total_bytes", None if total is None else gib_bytes(total), ln)
    non_torch = values.get("non_torch_memory")
    run.put("non_torch_bytes", None if non_torch is None else gib_bytes(non_torch), ln)
    kv = values.get("kv_cache_size")
    if kv is not None:
        _kv_memory(kv, ln, run)
    util = values.get("gpu_memory_utilization")
    run.put("gpu_memory_utilization", None if util is None else float_of(util), ln, source=SOURCE_FALLBACK)
    run.put("engine", "v0", ln, source=SOURCE_FALLBACK)
    run.note(Text("this vLLM prints peak_torch_memory (weights + activation) instead of the activation peak"))


_PROFILE_ROW_FIELDS = {
    "total_gpu_memory": "device_total_bytes",
    "model weights take": "weights_bytes",
    "non_torch_memory": "non_torch_bytes",
    "PyTorch activation peak memory": "activation_peak_bytes",
}


def _v0_profiling_row(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """One row of the one-per-line "Memory profiling results:" table (vllm#10511)."""
    name, value = m.group(1), m.group(2)
    if name == "available_kv_cache_memory":
        _kv_memory(value, ln, run)
    elif name == "gpu_memory_utilization":
        run.put("gpu_memory_utilization", float_of(value), ln, source=SOURCE_FALLBACK)  # 2 decimals only
    else:
        source = SOURCE_SECONDARY if name == "model weights take" else SOURCE_PRIMARY
        run.put(_PROFILE_ROW_FIELDS[name], gib_bytes(value), ln, source=source)
    run.put("engine", "v0", ln, source=SOURCE_FALLBACK)


def _kv_memory(printed: str, ln: _Line, run: _Run) -> None:
    value = gib_bytes(printed)
    if value is None:
        return
    run.put("kv_cache_bytes", value, ln)
    run.kv_readings.append((value, ln.evidence))


def _available_kv(m: re.Match[str], ln: _Line, run: _Run) -> None:
    _kv_memory(m.group(1), ln, run)
    run.put("engine", "v1", ln, source=SOURCE_FALLBACK)


def _ascend_budget(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """vllm-ascend ≤ v0.14: "Available memory: <bytes>, total memory: <bytes>" (the KV pool and the total)."""
    available = float_of(m.group(1))
    run.put("device_total_bytes", int_of(m.group(2)), ln)
    if available is not None:
        run.put("kv_cache_bytes", int(available), ln)
        run.kv_readings.append((int(available), ln.evidence))
    run.put("engine", "v1", ln, source=SOURCE_FALLBACK)
    _ascend_marker(m, ln, run)


def _kv_reserved(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("device_free_at_start_bytes", gib_bytes(m.group(1)), ln, source=SOURCE_SECONDARY)
    _kv_memory(m.group(2), ln, run)
    run.put("kv_cache_memory_specified", True, ln)
    run.note(Text("KV cache size was set by --kv-cache-memory-bytes; gpu_memory_utilization did not size it"))


def _v1_profiling(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("non_kv_cache_bytes", gib_bytes(m.group(1)), ln)
    run.put("activation_peak_bytes", gib_bytes(m.group(2)), ln)
    if m.group(3) == "non-torch forward increase memory":
        run.put("non_torch_bytes", gib_bytes(m.group(4)), ln)
    else:
        run.put("total_consumed_bytes", gib_bytes(m.group(4)), ln)
    run.put("weights_bytes", gib_bytes(m.group(5)), ln, source=SOURCE_SECONDARY)
    run.put("engine", "v1", ln, source=SOURCE_FALLBACK)


def _free_at_start(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("device_free_at_start_bytes", gib_bytes(m.group(1)), ln)
    run.put("device_total_bytes", gib_bytes(m.group(2)), ln)
    rest = m.string[m.end() :]
    if rest.lstrip().startswith("is less than desired"):
        _error("startup_free_memory", m, ln, run)
    desired = regex.search(vt.DESIRED_UTILIZATION, rest)
    if desired is not None:
        run.put("gpu_memory_utilization", float_of(desired.group(1)), ln, source=SOURCE_FALLBACK)
    _usage_summary(rest, ln, run)


def _usage_summary(rest: str, ln: _Line, run: _Run) -> None:
    """The post-capture suggestion line (0.11.0 / 0.33.0 / vllm-ascend wordings, reference §4.2, §9)."""
    terms = {
        "weights_bytes": r"for weights?\b",
        "activation_peak_bytes": r"for peak activation",
        "non_torch_bytes": r"for non-torch memory",
        "total_consumed_bytes": r"for consumed memory",
        "cuda_graph_bytes": r"for (?:CUDAGraph|NPU graph|\w+ graph) memory",
    }
    for name, label in terms.items():
        found = regex.search(G + r" GiB " + label, rest)
        if found is not None:
            run.put(name, gib_bytes(found.group(1)), ln, source=SOURCE_FALLBACK)
    if regex.search(r"for (?:NPU|ACL) graph memory", rest) is not None:
        run.put("is_ascend", True, ln)
        run.put("device_type", "NPU", ln, source=SOURCE_FALLBACK)
    suggestion = regex.search(r"--kv-cache-memory=(\d{1,18})", rest)
    if suggestion is not None:
        run.put("kv_cache_memory_suggestion_bytes", int_of(suggestion.group(1)), ln)
    in_use = regex.search(r"Current (?:kv|KV) cache memory(?: in use is|:) " + G + " GiB", rest)
    if in_use is not None:
        pool = gib_bytes(in_use.group(1))
        run.put("kv_cache_bytes", pool, ln, source=SOURCE_FALLBACK)
        slot = run.slots.get("kv_cache_bytes")
        if pool is not None and slot is not None and slot.priority[0] == SOURCE_FALLBACK:
            # no "Available KV cache memory" line: each rank's own figure, the smallest sets the blocks
            run.kv_readings.append((pool, ln.evidence))


def _graph_captured(m: re.Match[str], ln: _Line, run: _Run) -> None:
    # 0.33.0's V2 runner prints this twice (profiling capture, then the real one): the last one wins
    run.put("cuda_graph_bytes", gib_bytes(m.group(1)), ln)
    if run.stage == "graph":
        run.stage = "profile"


def _graph_pool(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("cuda_graph_bytes", gib_bytes(m.group(1)), ln, source=SOURCE_FORCED)
    run.put("cuda_graph_estimate_bytes", gib_bytes(m.group(2)), ln, source=SOURCE_SECONDARY)


def _graph_estimate(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("cuda_graph_estimate_bytes", gib_bytes(m.group(1)), ln)


def _graph_equivalence(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("gpu_memory_utilization", float_of(m.group(1)), ln, source=SOURCE_SECONDARY)
    run.put("gpu_memory_utilization_without_cuda_graph", float_of(m.group(2)), ln)


# --------------------------------------------------------------------------------------------
# handlers: blocks and capacity


_DEVICE_WORDS = {"gpu": "GPU", "cuda": "GPU", "rocm": "GPU", "hip": "GPU"}


def _device(word: str) -> str:
    return _DEVICE_WORDS.get(word.lower(), word.upper())


_KNOWN_DEVICES = ("cuda", "rocm", "npu", "xpu", "cpu", "tpu", "hpu", "neuron")


def _device_word(word: str | None) -> str | None:
    return _device(word) if word is not None and word.lower() in _KNOWN_DEVICES else None


def _sized(run: _Run) -> None:
    """A KV size line: the pool was sized, so a later failure is in the allocation or the graph capture."""
    if run.stage in ("start", "load", "profile"):
        run.stage = "sized"


def _blocks(m: re.Match[str], ln: _Line, run: _Run) -> None:
    _sized(run)
    run.put("device_type", _device(m.group(1)), ln, source=SOURCE_SECONDARY)
    run.put("num_gpu_blocks", int_of(m.group(2)), ln, mode="min")
    if m.group(3) is not None:
        run.put("num_cpu_blocks", int_of(m.group(3)), ln, mode="min")
        run.put("engine", "v0", ln, source=SOURCE_FALLBACK)
    else:
        run.put("engine", "v1", ln, source=SOURCE_FALLBACK)  # V1 0.6.6 / 0.7.3 print no CPU blocks


def _blocks_override(m: re.Match[str], ln: _Line, run: _Run) -> None:
    if m.group(1) == "0":
        # 0.18/0.19 allocate a minimal KV cache (available memory 0) to profile CUDA graphs: the
        # override printed then is not the pool the engine runs with
        run.note(Text("'Overriding num_gpu_blocks=0' was printed while profiling CUDA graphs; ignored"))
        return
    run.put("num_gpu_blocks", int_of(m.group(2)), ln, source=SOURCE_FORCED)
    run.note(
        Text(
            "num_gpu_blocks_override replaced {computed} computed blocks with {forced}",
            computed=m.group(1),
            forced=m.group(2),
        )
    )


def _kv_size(m: re.Match[str], ln: _Line, run: _Run) -> None:
    # 0.10.2/0.11.0 print one line per worker before the cross-worker minimum: keep the smallest
    _sized(run)
    prefix = m.group(1)
    if prefix is not None:
        run.put("device_type", _device(prefix.split()[0]), ln)
        if "host" in prefix:
            run.note(Text("part of the KV pool is host-resident (HiSparse): 'GPU + host KV cache size'"))
    run.put("kv_tokens", int_of(m.group(2)), ln, mode="min")
    run.put("engine", "v1", ln, source=SOURCE_FALLBACK)


def _concurrency(m: re.Match[str], ln: _Line, run: _Run) -> None:
    _sized(run)
    tokens = int_of(m.group(1))
    run.put("max_concurrency_tokens_per_request", tokens, ln)
    run.put("max_concurrency", float_of(m.group(2)), ln, mode="min")
    run.put("max_model_len", tokens, ln, source=SOURCE_FALLBACK)


# --------------------------------------------------------------------------------------------
# handlers: errors (reference §4.4)


def _error(kind: ErrorKind, m: re.Match[str], ln: _Line, run: _Run, *, source: int = SOURCE_PRIMARY) -> None:
    """A failure; a specific kind (SOURCE_PRIMARY) beats a generic one (SOURCE_FALLBACK) in any order."""
    text = m.string[m.start() :].strip()[:MAX_ERROR_CHARS]
    run.put("error", text, ln, source=source, mode="first")
    run.put("error_kind", kind, ln, source=source, mode="first")


def _v0_too_long(m: re.Match[str], ln: _Line, run: _Run) -> None:
    _error("max_len_too_long", m, ln, run)
    run.put("max_model_len", int_of(m.group(1)), ln, source=SOURCE_SECONDARY)
    tokens = int_of(m.group(2))
    run.put("kv_tokens", tokens, ln, source=SOURCE_SECONDARY, mode="min")
    # V0 fails when max_model_len > block_size × num_gpu_blocks, so that product is the longest L that fits
    run.put("estimated_max_model_len", tokens, ln, mode="first")
    run.put("engine", "v0", ln, source=SOURCE_FALLBACK)


def _len_above_derived(m: re.Match[str], ln: _Line, run: _Run) -> None:
    _error("max_len_above_derived", m, ln, run)
    run.put("max_model_len", int_of(m.group(1)), ln, source=SOURCE_SECONDARY)


def _v1_too_long(m: re.Match[str], ln: _Line, run: _Run) -> None:
    _error("max_len_too_long", m, ln, run)
    run.put("max_model_len", int_of(m.group(1)), ln, source=SOURCE_SECONDARY)
    run.put("kv_cache_needed_bytes", gib_bytes(m.group(2)), ln, mode="first")
    available = gib_bytes(m.group(3))
    run.put("kv_cache_bytes", available, ln, source=SOURCE_SECONDARY)
    if m.group(4) is not None:
        run.put("estimated_max_model_len", int_of(m.group(4)), ln, mode="first")
    elif regex.search(r"Based on the available memory,\s+Try", m.string[m.end() :]) is not None:
        run.note(Text("vLLM 0.8.5 drops the estimated maximum model length from this error (a known bug)"))
    run.put("engine", "v1", ln, source=SOURCE_FALLBACK)


def _v1_too_long_head(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """The head of a "To serve at least one request …" error, whole or wrapped: the start failed on S."""
    _error("max_len_too_long", m, ln, run)
    run.put("max_model_len", int_of(m.group(1)), ln, source=SOURCE_SECONDARY)
    if m.group(2) is not None:
        run.put("kv_cache_needed_bytes", gib_bytes(m.group(2)), ln, mode="first")
    run.put("engine", "v1", ln, source=SOURCE_FALLBACK)


def _v1_too_long_needed(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("kv_cache_needed_bytes", gib_bytes(m.group(1)), ln, mode="first")


def _v1_too_long_available(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("kv_cache_bytes", gib_bytes(m.group(1)), ln, source=SOURCE_SECONDARY)


def _v1_estimated_len(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("estimated_max_model_len", int_of(m.group(1)), ln, mode="first")


_OOM_KIND_BY_STAGE: dict[Stage, ErrorKind] = {
    "load": "load_oom",
    "kv_alloc": "kv_alloc_oom",
    "graph": "graph_oom",
}


def _torch_oom(m: re.Match[str], ln: _Line, run: _Run) -> None:
    if "Failed to load model" in m.string[: m.start()]:
        return  # the 0.33.0 load error quotes the torch error: that rule already took the line
    if run.stage == "ready":
        run.note(Text("an out-of-memory error came after the start-up completed; the start-up is read"))
        return
    _error(_OOM_KIND_BY_STAGE.get(run.stage, "torch_oom"), m, ln, run)
    run.put("device_type", _device(m.group(1)), ln, source=SOURCE_FALLBACK)
    capacity = regex.search(vt.TOTAL_CAPACITY, m.group(0)) or regex.search(vt.NPU_TOTAL_CAPACITY, m.group(0))
    if capacity is not None:
        run.put("device_total_bytes", gib_bytes(capacity.group(1)), ln, source=SOURCE_SECONDARY)


def _fault(kind: ErrorKind) -> Handler:
    """A device fault or an NPU operator error: a failure of its own kind, with the stage it reached."""

    def handle(m: re.Match[str], ln: _Line, run: _Run) -> None:
        if run.stage == "ready":
            run.note(Text("a device error came after the start-up completed; the start-up is read"))
            return
        _error(kind, m, ln, run)
        if kind == "npu_error":
            _ascend_marker(m, ln, run)

    return handle


def _autofit_reduced(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("max_model_len", int_of(m.group(2)), ln, source=SOURCE_FORCED)
    run.note(
        Text("auto-fit lowered max_model_len from {before} to {after}", before=m.group(1), after=m.group(2))
    )


def _autofit_fits(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("max_model_len", int_of(m.group(1)), ln, source=SOURCE_FORCED)


# --------------------------------------------------------------------------------------------
# handlers: configuration, version, backend


_SPEC_REPR = regex.compile(vt.SPECULATIVE_REPR)


def _object_text(text: str) -> object:
    """A printed dict: Python's repr ("non-default args", Namespace) or JSON (a command line)."""
    if len(text) > MAX_OBJECT_CHARS or not text.startswith("{"):
        return None
    try:
        return ast.literal_eval(text)
    except Exception:  # literal_eval raises many types on arbitrary text; JSON is tried next
        pass
    try:
        return json.loads(text)
    except ValueError:
        return None


def _as_speculative(value: object) -> dict[str, Any] | None:
    """--speculative-config as printed: a dict (args), the engine line's SpeculativeConfig(...) repr."""
    if isinstance(value, str):
        text = value.strip()
        found = _SPEC_REPR.fullmatch(text)
        if found is not None:
            spec: dict[str, Any] = {"method": found.group(1), "num_speculative_tokens": int(found.group(3))}
            if found.group(2):
                spec["model"] = found.group(2).strip()
            return spec
        value = _object_text(text)
    if isinstance(value, dict) and value:
        return {str(k): v for k, v in value.items()}
    return None


def _as_limits(value: object) -> dict[str, int] | None:
    """--limit-mm-per-prompt as printed: {"image": 0} or, 0.11+, {"image": {"count": 0, ...}}."""
    if isinstance(value, str):
        value = _object_text(value.strip())
    if not isinstance(value, dict):
        return None
    limits: dict[str, int] = {}
    for key, item in value.items():
        count = item.get("count") if isinstance(item, dict) else item
        if isinstance(count, bool) or not isinstance(count, int):
            return None
        limits[str(key)] = count
    return limits


_KIND_CONVERTERS: dict[FlagKind, Callable[[object], object]] = {
    "len": _as_int,
    "int": _as_int,
    "hint": _as_int,
    "float": _as_float,
    "flag": _as_bool,
    "choice": _as_str,
    "text": _as_str,
}
# the serve fields whose printed value reads into another LogFacts field or needs its own reader
_SPECIAL_KEYS: dict[str, tuple[str, Callable[[object], object]]] = {
    "kv_cache_memory_bytes": ("kv_cache_memory_specified", lambda v: _as_int(v) is not None or None),
    "speculative_config": ("speculative_config", _as_speculative),
    "limit_mm_per_prompt": ("limit_mm_per_prompt", _as_limits),
}
# key as printed (engine config / args) -> (LogFacts field, converter): the flag table's printed keys
# (app/core/serve_flags.py) plus the two that are not flags
_CONFIG_KEYS: dict[str, tuple[str, Callable[[object], object]]] = {
    "model": ("model", _as_str),
    "device_config": ("device_type", lambda v: _device_word(_as_str(v))),
    **{
        key: _SPECIAL_KEYS.get(field) or (field, _KIND_CONVERTERS[kind])
        for key, (field, kind) in printed_keys().items()
    },
}
# the two values that are objects: key=SpeculativeConfig(...) / key={...} on the engine-config and
# Namespace lines, 'key': {...} in a "non-default args" dict literal_eval could not read
_OBJECT_KEYS = r"(?P<key>speculative_config|limit_mm_per_prompt)"
_OBJECT_VALUE = regex.compile(
    r"(?<![\w.'])" + _OBJECT_KEYS + r"=(?P<value>SpeculativeConfig\([^()]{0,1024}\)|\{[^{}]{0,1024}\})"
)
_OBJECT_ITEM = regex.compile(r"'" + _OBJECT_KEYS + r"':\s*(?P<value>\{[^{}]{0,1024}\})")
_KEY_VALUE = regex.compile(
    r"(?<![\w.'])(?P<key>" + "|".join(_CONFIG_KEYS) + r")=(?P<value>'(?:[^'\\]|\\.)*'|\"[^\"]*\"|[^,()\s]+)"
)
_DICT_ITEM = regex.compile(
    r"'(?P<key>" + "|".join(_CONFIG_KEYS) + r")':\s*(?P<value>'(?:[^'\\]|\\.)*'|[^,}\s]+)"
)


def _clean_config_value(key: str, raw: object) -> object:
    value: object = raw
    if isinstance(raw, str):
        value = raw.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if key == "dtype" and isinstance(value, str):
            value = value.removeprefix("torch.")
    return value


def _put_config(pairs: Iterable[tuple[str, object]], ln: _Line, run: _Run, source: int) -> None:
    seen: set[str] = set()
    for key, raw in pairs:
        if key in seen or key not in _CONFIG_KEYS:
            continue
        seen.add(key)
        name, convert = _CONFIG_KEYS[key]
        value = convert(_clean_config_value(key, raw))
        if name in (
            "max_model_len",
            "tensor_parallel_size",
            "pipeline_parallel_size",
            "data_parallel_size",
        ) and (not isinstance(value, int) or value <= 0):
            continue  # max_model_len -1 means "auto" (reference §7): the auto-fit line says the result
        if name == "dtype" and value == "auto":
            continue
        run.put(name, value, ln, source=source)
        if name == "device_type" and value == "NPU":
            run.put("is_ascend", True, ln)


def _engine_config(m: re.Match[str], ln: _Line, run: _Run) -> None:
    flavour, version = m.group(1), m.group(2)
    run.put("engine", "v1" if flavour == "V1 " else "v0", ln)
    if version is not None:  # V0 before 0.6 prints "Initializing an LLM engine with config:" alone
        run.put("vllm_version", version.strip().removeprefix("v"), ln, source=SOURCE_SECONDARY)
    body = m.string[m.end() :]
    pairs = ((km.group("key"), km.group("value")) for km in _KEY_VALUE.finditer(body))
    _put_config(pairs, ln, run, SOURCE_SECONDARY + 1)
    objects = ((om.group("key"), om.group("value")) for om in _OBJECT_VALUE.finditer(body))
    _put_config(objects, ln, run, SOURCE_SECONDARY + 1)


def _non_default_args(m: re.Match[str], ln: _Line, run: _Run) -> None:
    body = m.string[m.start(1) :].strip()
    parsed: object = None
    if len(body) <= MAX_ARGS_EVAL_CHARS:
        end = body.rfind("}")
        try:
            parsed = ast.literal_eval(body[: end + 1])
        except Exception:  # literal_eval raises many types on arbitrary text; the regex fallback follows
            parsed = None
    if isinstance(parsed, dict):
        pairs: Iterable[tuple[str, object]] = ((str(k), v) for k, v in parsed.items())
    else:  # a value repr literal_eval cannot read (an enum, a config object): fall back to a regex
        pairs = ((dm.group("key"), dm.group("value")) for dm in _DICT_ITEM.finditer(body))
        objects = ((om.group("key"), om.group("value")) for om in _OBJECT_ITEM.finditer(body))
        _put_config(objects, ln, run, SOURCE_SECONDARY)
    _put_config(pairs, ln, run, SOURCE_SECONDARY)


def _args_namespace(m: re.Match[str], ln: _Line, run: _Run) -> None:
    body = m.string[m.end() :]
    pairs = ((km.group("key"), km.group("value")) for km in _KEY_VALUE.finditer(body))
    _put_config(pairs, ln, run, SOURCE_SECONDARY)
    objects = ((om.group("key"), om.group("value")) for om in _OBJECT_VALUE.finditer(body))
    _put_config(objects, ln, run, SOURCE_SECONDARY)


def _scheduler_default(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put(m.group(1), int_of(m.group(2)), ln, source=SOURCE_FALLBACK)


def _server_version(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("vllm_version", m.group(1).removeprefix("v"), ln)
    if m.lastindex is not None and m.lastindex >= 2 and m.group(2):
        run.put("model", _as_str(m.group(2)), ln, source=SOURCE_SECONDARY)


def _banner_model(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("model", _as_str(m.group(1)), ln, source=SOURCE_SECONDARY)


def _max_model_len(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("max_model_len", int_of(m.group(1)), ln)


def _kv_scale_dtype(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("kv_cache_dtype", m.group(1), ln, source=SOURCE_FALLBACK)


def _fp8_kv(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("kv_cache_dtype", "fp8", ln, source=SOURCE_FALLBACK)  # the line does not say which fp8


def _stage(stage: Stage) -> Handler:
    def handle(m: re.Match[str], ln: _Line, run: _Run) -> None:
        if stage == "load" and run.stage not in ("start", "load"):
            return  # a load_model frame after the weights loaded is not the load stage
        if run.stage != "ready" or stage == "ready":
            run.stage = stage

    return handle


def _saw_loading(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """Shard progress goes to stderr, so it may land after the error it preceded: read at the end too."""
    run.saw_loading = True
    if run.stage == "start":
        run.stage = "load"


def _traceback(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.in_traceback = True
    _failure(m, ln, run)


def _failure(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """A start-up failure with no recognised cause (yet): a more specific error replaces it."""
    if run.stage == "ready":
        run.note(Text("an error came after the start-up completed; the start-up is read"))
        return
    if "raise " in ln.text or m.string[: m.start()].endswith(('"', "'")):
        return  # the traceback's quoted source line, not the message
    _error("startup_failed", m, ln, run, source=SOURCE_FALLBACK)


def _exception(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """``SomeError: message`` closing a traceback: the first one names the root cause."""
    if not run.in_traceback and "ERROR" not in ln.text and run.get("error_kind") is None:
        return
    if run.stage == "ready":
        return
    _error("startup_failed", m, ln, run, source=SOURCE_SECONDARY)


# every ServeConfig flag a pasted command gives reaches the facts under its own name (LogFacts names its
# configuration fields like ServeConfig); --kv-cache-memory-bytes is only noted as used
_SERVE_TO_FACTS = tuple(name for name in ServeConfig.model_fields if name in LogFacts.model_fields)


def _command(text: str, ln: _Line, run: _Run) -> None:
    """A `vllm serve …` command pasted with the log: what was asked for, below what vLLM printed."""
    if text.startswith(("docker", "sudo docker")):
        image = _DOCKER_IMAGE.search(text)
        if image is None:
            return  # a container that is not vLLM's image
        text = text[image.end() :]
    try:
        parsed = parse_serve_command(text)
    except PlannerError as exc:
        run.note(Text("the pasted command could not be read ({message})", message=exc.message))
        return
    _apply_command(parsed, ln, run)


def _compose_block(lines: list[str], index: int, compose_image: bool) -> tuple[list[str], int] | None:
    """A compose `command:` at ``lines[index]`` under a vLLM image (or naming vllm): its arguments and
    the lines it spans; None when it is not one or gives no flag."""
    head = lines[index][:MAX_LINE_CHARS]
    if _COMPOSE_KEY.match(head) is None or not (compose_image or "vllm" in head):
        return None
    window = [
        strip_ansi(head),
        *(r[:MAX_LINE_CHARS] for r in lines[index + 1 : index + 2 * MAX_COMMAND_LINES]),
    ]
    block = compose_command(window)
    if block is None or not any(t.startswith("--") for t in block[0]):
        return None
    return block


def _compose(tokens: list[str], ln: _Line, run: _Run) -> None:
    """A docker compose service's `command:` (the vllm/vllm-openai image runs `vllm serve` with it)."""
    try:
        parsed = parse_serve_args(tokens)
    except PlannerError as exc:
        run.note(Text("the pasted command could not be read ({message})", message=exc.message))
        return
    _apply_command(parsed, ln, run)


def _apply_command(parsed: ParsedCommand, ln: _Line, run: _Run) -> None:
    run.put("model", _as_str(parsed.model), ln, source=SOURCE_FALLBACK)
    given = parsed.serve.model_fields_set
    for name in _SERVE_TO_FACTS:
        if name in given:
            value = getattr(parsed.serve, name)
            if name in ("kv_cache_dtype", "dtype") and value == "auto":
                continue
            if isinstance(value, SpeculativeConfig):
                value = value.model_dump(exclude_none=True)
            run.put(name, value, ln, source=SOURCE_FALLBACK)
    if "kv_cache_memory_bytes" in given:
        run.put("kv_cache_memory_specified", True, ln, source=SOURCE_FALLBACK)


def _platform(m: re.Match[str], ln: _Line, run: _Run) -> None:
    device = _device(m.group(1))
    run.put("device_type", device, ln, source=SOURCE_FALLBACK)
    if device == "NPU":
        run.put("is_ascend", True, ln)


def _forced_block_size(m: re.Match[str], ln: _Line, run: _Run) -> None:
    size = int_of(m.group(1))
    run.put("block_size_forced", size, ln)
    run.put("block_size", size, ln, source=SOURCE_FORCED)


def _ascend_block_size(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("block_size_forced", ASCEND_BLOCK_SIZE, ln)
    run.put("block_size", ASCEND_BLOCK_SIZE, ln, source=SOURCE_FORCED)
    run.put("is_ascend", True, ln)
    run.put("device_type", "NPU", ln, source=SOURCE_FALLBACK)


ASCEND_BLOCK_SIZE = 128  # vllm_ascend/utils.py::refresh_block_size (reference §9)

# human-readable backend names (V0 selector, V1 ≤0.10 "on V1 engine") -> enum-like names (reference §5.2)
_BACKEND_NAMES = {
    "flashattention": "FLASH_ATTN",
    "flashattn": "FLASH_ATTN",
    "flashinfer": "FLASHINFER",
    "xformers": "XFORMERS",
    "flashmla": "FLASHMLA",
    "flashmlasparse": "FLASHMLA_SPARSE",
    "tritonmla": "TRITON_MLA",
    "cutlassmla": "CUTLASS_MLA",
    "flashinfermla": "FLASHINFER_MLA",
    "flashattentionmla": "FLASH_ATTN_MLA",
    "flashattnmla": "FLASH_ATTN_MLA",
    "triton": "TRITON_ATTN",
    "tritonattention": "TRITON_ATTN",
    "flexattention": "FLEX_ATTENTION",
    "torchsdpa": "TORCH_SDPA",
    "pallas": "PALLAS",
    "ipex": "IPEX",
    "rocmflashattention": "ROCM_FLASH",
    "rocmattention": "ROCM_ATTN",
    "rocmaiterfa": "ROCM_AITER_FA",
    "rocmaitermla": "ROCM_AITER_MLA",
    "ascend": "ASCEND",
    "ascendattention": "ASCEND",
    "ascendattentionbackend": "ASCEND",
    "ascendmla": "ASCEND_MLA",
    "ascendmlabackend": "ASCEND_MLA",
    "ascendsfa": "ASCEND_SFA",
    "ascendsfabackend": "ASCEND_SFA",
}
_ENUM_BACKEND = regex.compile(
    r"^(?:FLASH|TRITON|ROCM_|XFORMERS|TORCH_SDPA|FLEX_|PALLAS|CPU_|CUTLASS_|TREE_ATTN|TURBOQUANT|"
    r"TOKENSPEED_|IPEX|ASCEND|DIFFERENTIAL_|CUSTOM)"
)
_NOT_DECODER_ATTENTION = regex.compile(
    r"MoE|moe|encoder|vit |MultiHeadAttention|MMEncoder|sampl|all2all|GEMM"
)


def _backend(m: re.Match[str], ln: _Line, run: _Run) -> None:
    if _NOT_DECODER_ATTENTION.search(ln.text) is not None:
        return
    raw = m.group(1).strip()
    name: str | None
    if "_" in raw or (raw.isupper() and len(raw) > 2):
        enum = raw.removeprefix("AttentionBackendEnum.").removesuffix("_VLLM_V1").upper()
        name = enum if _ENUM_BACKEND.match(enum) else None
    else:
        name = _BACKEND_NAMES.get(regex.sub(r"[\s_-]+", "", raw).lower())
    if name is None:
        return
    run.put("attention_backend", name, ln)
    if name.startswith("ASCEND"):
        run.put("is_ascend", True, ln)
        run.put("device_type", "NPU", ln, source=SOURCE_FALLBACK)


def _device_name(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("device_name", m.group(1).strip(), ln, mode="first")
    run.put("device_type", "GPU", ln, source=SOURCE_FALLBACK)


def _ascend_marker(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("is_ascend", True, ln)
    run.put("device_type", "NPU", ln, source=SOURCE_FALLBACK)


# --------------------------------------------------------------------------------------------
# the rule table, run in order on every line (reference §4)


def _rule(line: VllmLine, handle: Handler, *, kv: bool = False, run_start: bool = False) -> _Rule:
    return _Rule(line.needle, regex.compile(line.pattern), handle, kv=kv, run_start=run_start)


def _err(kind: ErrorKind) -> Handler:
    def handle(m: re.Match[str], ln: _Line, run: _Run) -> None:
        _error(kind, m, ln, run)

    return handle


RULES: tuple[_Rule, ...] = (
    # run boundaries and configuration
    _rule(vt.SERVER_VERSION, _server_version, run_start=True),
    _rule(vt.BANNER_VERSION, _server_version, run_start=True),
    _rule(vt.BANNER_MODEL, _banner_model),
    _rule(vt.MAX_MODEL_LEN, _max_model_len),
    _rule(vt.FP8_KV, _fp8_kv),
    _rule(vt.KV_SCALE_DTYPE, _kv_scale_dtype),
    _rule(vt.NON_DEFAULT_ARGS, _non_default_args, run_start=True),
    _rule(vt.ARGS_NAMESPACE, _args_namespace, run_start=True),
    _rule(vt.ENGINE_CONFIG, _engine_config, run_start=True),
    _rule(vt.SCHEDULER_DEFAULT, _scheduler_default),
    _rule(vt.CHUNKED_PREFILL, _scheduler_default),
    _rule(vt.PLATFORM, _platform),
    # model loading (§4.1)
    _rule(vt.WEIGHTS, _weights, kv=True),
    _rule(vt.LOAD_FAILED, _err("load_oom"), kv=True),
    # memory profiling (§4.2)
    _rule(vt.V0_BUDGET, _v0_budget, kv=True),
    _rule(vt.V0_PARTITION, _v0_partition, kv=True),
    _rule(vt.V0_PROFILING_RESULTS, _v0_profiling_results, kv=True),
    _rule(vt.V0_PROFILING_ROW, _v0_profiling_row, kv=True),
    _rule(vt.V1_PROFILING, _v1_profiling, kv=True),
    _rule(vt.AVAILABLE_KV, _available_kv, kv=True),
    _rule(vt.ASCEND_BUDGET, _ascend_budget, kv=True),
    _rule(vt.KV_RESERVED, _kv_reserved, kv=True),
    _rule(vt.FREE_AT_START, _free_at_start, kv=True),
    _rule(vt.GRAPH_CAPTURED, _graph_captured, kv=True),
    _rule(vt.GRAPH_POOL, _graph_pool, kv=True),
    _rule(vt.GRAPH_ESTIMATE, _graph_estimate, kv=True),
    _rule(vt.GRAPH_EQUIVALENCE, _graph_equivalence, kv=True),
    # blocks and capacity (§4.3)
    _rule(vt.BLOCKS, _blocks, kv=True),
    _rule(vt.BLOCKS_OVERRIDE, _blocks_override, kv=True),
    _rule(vt.KV_SIZE, _kv_size, kv=True),
    _rule(vt.CONCURRENCY, _concurrency, kv=True),
    _rule(vt.AUTOFIT_REDUCED, _autofit_reduced, kv=True),
    _rule(vt.AUTOFIT_FITS, _autofit_fits, kv=True),
    # errors (§4.4)
    _rule(vt.NO_BLOCKS, _err("no_blocks"), kv=True),
    _rule(vt.V0_TOO_LONG, _v0_too_long, kv=True),
    _rule(vt.V1_TOO_LONG, _v1_too_long, kv=True),
    _rule(vt.V1_TOO_LONG_HEAD, _v1_too_long_head, kv=True),
    _rule(vt.V1_TOO_LONG_NEEDED, _v1_too_long_needed, kv=True),
    _rule(vt.V1_TOO_LONG_AVAILABLE, _v1_too_long_available, kv=True),
    _rule(vt.V1_ESTIMATED_LEN, _v1_estimated_len, kv=True),
    _rule(vt.AUTOFIT_FAILED, _err("autofit_failed"), kv=True),
    _rule(vt.LEN_ABOVE_DERIVED, _len_above_derived),
    _rule(vt.TORCH_OOM, _torch_oom, kv=True),
    _rule(vt.ILLEGAL_ADDRESS, _fault("device_fault"), kv=True),
    _rule(vt.GPU_HANG, _fault("device_fault"), kv=True),
    _rule(vt.MEMORY_ACCESS_FAULT, _fault("device_fault"), kv=True),
    _rule(vt.CORE_DUMPED, _fault("device_fault"), kv=True),
    _rule(vt.NPU_FUNCTION_ERROR, _fault("npu_error"), kv=True),
    _rule(vt.ACL_CALL_FAILED, _fault("npu_error"), kv=True),
    # failures with no recognised cause, and where the start-up was (an OOM is classified by it)
    _rule(vt.TRACEBACK, _traceback),
    _rule(vt.ENGINE_CORE_FAILED, _failure),
    _rule(vt.ENGINE_INIT_FAILED, _failure),
    _rule(vt.ERROR_LINE, _exception),
    _rule(vt.EXCEPTION_LINE, _exception),
    _rule(vt.LOAD_START, _stage("load")),
    _rule(vt.LOAD_FRAME, _stage("load")),
    _rule(vt.KV_ALLOCATION, _stage("kv_alloc")),
    _rule(vt.GRAPH_CAPTURE, _stage("graph")),
    _rule(vt.GRAPH_CAPTURE_CALL, _stage("graph")),
    _rule(vt.GRAPH_CAPTURE_END, _stage("graph")),
    _rule(vt.SHARD_PROGRESS, _saw_loading),
    _rule(vt.STARTUP_COMPLETE, _stage("ready")),
    _rule(vt.ENGINE_READY, _stage("ready")),
    # attention backend and block size (§5, §9)
    _rule(vt.BACKEND, _backend),
    _rule(vt.ASCEND_BACKEND, _backend),
    _rule(vt.FORCED_BLOCK_SIZE, _forced_block_size),
    _rule(vt.ASCEND_BLOCK_SIZE_INFO, _ascend_block_size),
    _rule(vt.ASCEND_BLOCK_SIZE_RULE, _ascend_block_size),
    _rule(vt.ASCEND_MARKER, _ascend_marker),
    _rule(vt.ASCEND_310P, _ascend_marker),
    _rule(vt.ASCEND_CLASS, _ascend_marker),
    _rule(vt.NPU_DEVICE, _ascend_marker),
    _rule(vt.HCCL, _ascend_marker),
    _rule(vt.DEVICE_NAME, _device_name),
)


# --------------------------------------------------------------------------------------------
# the parser


def parse_startup_log(text: str) -> LogFacts:
    """Turn a pasted vLLM start-up log (any version in reference §4, vllm-ascend §9) into facts.

    Several runs pasted together are split where an engine-init / "vLLM API server version" /
    "non-default args" line follows KV lines; only the last run is read (``runs_found`` says how
    many). Rank prefixes, ANSI colours, CRLF and log headers are tolerated. Never raises, except
    :class:`PlannerError` for input longer than :data:`MAX_LOG_CHARS`.
    """
    if len(text) > MAX_LOG_CHARS:
        raise PlannerError(
            "log",
            Text(
                "the pasted log has {text:,} characters; the limit is {max_log_chars:,}",
                text=len(text),
                max_log_chars=MAX_LOG_CHARS,
            ),
        )
    run = _Run()
    previous: _Run | None = None  # the run before the last one, for a quote pasted out of order
    runs = 0
    command: list[str] = []  # a `vllm serve … \` command still being continued
    command_line: _Line | None = None
    rules = tuple(rule for rule in RULES if rule.needle in text)  # one C-speed scan per rule, not per line
    numbered = numbered_lines(text)
    raws = [raw for _, raw in numbered] if "command:" in text else []
    compose_image = _COMPOSE_IMAGE.search(text) is not None if "image:" in text else False
    skip_to = 0  # lines a compose `command:` block already read
    for position, (index, raw) in enumerate(numbered):
        if position < skip_to:
            continue
        block = _compose_block(raws, position, compose_image) if "command:" in raw else None
        if block is not None:
            runs = max(runs, 1)
            run.headed = True
            run.recognised += 1
            _compose(block[0], _Line(no=index + 1, text=raw.strip(), rank=RANK_ZERO), run)
            skip_to = position + block[1]
            continue
        line = strip_ansi(raw[:MAX_LINE_CHARS]).strip().strip(BOX_BORDER).strip()
        if command_line is not None:
            command.append(line.removesuffix("\\"))
            if not line.endswith("\\") or len(command) >= MAX_COMMAND_LINES:
                _command(" ".join(command), command_line, run)
                command, command_line = [], None
            continue
        if not line:
            continue
        start = _COMMAND.search(line) if "vllm" in line else None
        if start is None and "docker run" in line:
            start = _DOCKER_START.search(line)
        if start is not None:
            if runs == 0:
                runs = 1
            elif run.seen_kv:
                run, previous = _Run(), run
                runs += 1
            run.headed = True
            ln = _Line(no=index + 1, text=line, rank=RANK_ZERO)
            run.recognised += 1
            if line.endswith("\\"):
                command, command_line = [start.group(1).removesuffix("\\")], ln
            else:
                _command(start.group(1).rstrip("`"), ln, run)  # a command quoted as `inline code`
            continue
        if line.startswith("(") and ("_TP" in line[:40] or "_PP" in line[:40]):
            _worker_ranks(line, _Line(no=index + 1, text=line, rank=RANK_UNKNOWN), run)
        matched = [(rule, m) for rule in rules if rule.needle in line and (m := rule.pattern.search(line))]
        if not matched:
            continue
        if runs == 0:
            runs = 1
        elif run.seen_kv and any(rule.run_start for rule, _ in matched):
            run, previous = _Run(), run
            runs += 1
        if any(rule.run_start for rule, _ in matched):
            run.headed = True
        ln = _Line(no=index + 1, text=line, rank=_rank_priority(line))
        for rule, m in matched:
            rule.handle(m, ln, run)
            run.seen_kv = run.seen_kv or rule.kv
        run.recognised += 1
    if command_line is not None:
        _command(" ".join(command), command_line, run)
    if previous is not None and not previous.headed and not run.seen_kv and "error_kind" not in run.slots:
        # KV lines with no header of their own, then only configuration: one start-up quoted out of
        # order (a thread pasting the KV lines above the engine config), not a second start-up
        for name, slot in run.slots.items():
            previous.slots.setdefault(name, slot)
        previous.recognised += run.recognised
        run, runs = previous, runs - 1
    return _facts(run, runs)


_COMPOSE_KEY = regex.compile(r"[ \t]{0,64}(?:-[ \t]+)?command:")  # a YAML `command:` key, not a log line
# a compose file whose service runs vLLM's image (`image: vllm/vllm-openai:latest`, vllm-ascend's quay image)
_COMPOSE_IMAGE = regex.compile(r"(?m)^[ \t]{0,64}image:[ \t]{0,8}\S{0,200}vllm")
# `docker run … vllm/vllm-openai[:tag] --model X --flags`: the image's entrypoint is `vllm serve`
_DOCKER_START = regex.compile(r"^(?:[$#>]\s*)?((?:sudo )?docker run\b.*)")
_DOCKER_IMAGE = regex.compile(r"(?:^|\s)\S{0,200}vllm/vllm-openai(?::\S{1,64})?(?=\s|$)")
# a command line as typed (optionally after a shell prompt or a markdown backtick, and VAR=value
# prefixes), never a log line
_COMMAND = regex.compile(
    r"^(?:[$#>`]\s*)?((?:[A-Za-z_]\w*=\S*\s+)*"  # RE2 (linear): env assignments before the command
    r"(?:(?:nohup|exec) )?(?:vllm serve|(?:\S*/)?python(?:\d{1,2}(?:\.\d{1,2})?)?(?: -[A-Za-z]{1,3}){0,4} -m "
    r"vllm\.entrypoints\.(?:openai\.)?api_server)\b.*)"
)


def _facts(run: _Run, runs: int) -> LogFacts:
    if run.get("error_kind") == "startup_failed" and run.stage == "ready":
        # an error or traceback printed before "init engine … took" / "Application startup complete"
        # that the start-up survived (an optional import, a retried download): not a failure
        run.slots.pop("error", None)
        run.slots.pop("error_kind", None)
        run.note(Text("an error was printed during the start-up, but the start-up completed"))
    if run.get("error_kind") == "torch_oom" and run.saw_loading and run.get("weights_bytes") is None:
        # an OOM with shard loading in the paste and no "Loading model weights took": the load failed
        run.slots["error_kind"].value = "load_oom"
    if "error_kind" in run.slots and run.stage not in ("start", "ready"):
        # the traceback's frames come after its first line: the stage they reached is where it failed
        run.slots["failure_stage"] = _Slot(
            run.stage, run.slots["error_kind"].evidence, (SOURCE_PRIMARY, RANK_ZERO)
        )
    if runs > 1:
        run.notes.insert(0, Text("{runs} runs found; using the last one", runs=runs))
    values: dict[str, object] = {name: slot.value for name, slot in run.slots.items()}
    evidence = {name: slot.evidence for name, slot in run.slots.items()}
    if values.get("is_ascend") and values.get("device_type") != "NPU":
        # vllm-ascend on a vLLM before 0.30 prints "GPU KV cache size"; the device is still an NPU
        values["device_type"] = "NPU"
        evidence["device_type"] = evidence["is_ascend"]
    if run.kv_readings:
        low_value, low_evidence = min(run.kv_readings, key=lambda reading: reading[0])
        values["kv_cache_bytes_min_rank"] = low_value
        evidence["kv_cache_bytes_min_rank"] = low_evidence
        if low_value != values.get("kv_cache_bytes"):
            run.note(Text("ranks printed different KV cache memory; the smallest one sets the block count"))
        current_kind = values.get("error_kind")
        if low_value <= 0 and (current_kind is None or current_kind == "startup_failed"):
            # vLLM raises "No available memory for the cache blocks" for a pool ≤ 0 (reference §4.4);
            # vllm-ascend prints the negative figure first ("Available KV cache memory: -0.87 GiB")
            values["error_kind"], values["error"] = "no_blocks", low_evidence.text
            evidence["error_kind"] = evidence["error"] = low_evidence
            run.note(Text("the KV pool is printed as zero or negative: no block can be allocated"))
    util, util_without = (
        values.get("gpu_memory_utilization"),
        values.get("gpu_memory_utilization_without_cuda_graph"),
    )
    total = values.get("device_total_bytes")
    if (
        "cuda_graph_estimate_bytes" not in values
        and isinstance(util, float)
        and isinstance(util_without, float)
        and isinstance(total, int)
    ):
        # the equivalence line prints round(u − cg/T, 4) (reference §4.2), so cg ≈ (u − equivalent) × T
        values["cuda_graph_estimate_bytes"] = round((util - util_without) * total)
        evidence["cuda_graph_estimate_bytes"] = evidence["gpu_memory_utilization_without_cuda_graph"]
        run.note(
            Text(
                "cuda_graph_estimate_bytes derived from the --gpu-memory-utilization equivalence line × total"
            )
        )
    extra: dict[str, object] = {"runs_found": runs, "recognised_lines": run.recognised, "notes": run.notes}
    return _build(values, evidence, extra)


def _build(values: dict[str, object], evidence: dict[str, Evidence], extra: dict[str, object]) -> LogFacts:
    """Validate; a value of the wrong shape (not expected, but input is arbitrary) is dropped, not raised."""
    for _ in range(len(values) + 1):
        try:
            return LogFacts.model_validate({**values, **extra, "evidence": evidence})
        except ValidationError as exc:
            bad = {str(err["loc"][0]) for err in exc.errors() if err["loc"]} & values.keys()
            if not bad:
                break
            for name in bad:
                values.pop(name)
                evidence.pop(name, None)
    return LogFacts.model_validate(extra)
