"""Handlers for the errors vLLM prints when a start-up fails (reference §4.4)."""

from __future__ import annotations

import re

from app.core import regex
from app.core import vllm_text as vt
from app.core import vllm_text_identity as vti
from app.core.logs.reading import (
    gib_bytes,
    int_of,
)
from app.core.logs.startup.accumulator import (
    SOURCE_FALLBACK,
    SOURCE_FORCED,
    SOURCE_SECONDARY,
    Handler,
    _ascend_marker,
    _device,
    _error,
    _Line,
    _Run,
    gpu_stack,
)
from app.core.logs.startup.config import LOG_LEVELS, _failure, _traceback
from app.core.logs.startup.facts import ErrorKind, Stage
from app.core.text import Text

# --------------------------------------------------------------------------------------------
# handlers: errors (reference §4.4)


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


def _mamba_blocks(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """0.20.2+ "max_num_seqs (N) exceeds available Mamba cache blocks (M)": the pool was sized with M blocks
    (kv_cache_config.num_blocks) and full CUDA graphs need one per decode sequence, so N > M is refused."""
    _error("mamba_blocks", m, ln, run)
    run.put("max_num_seqs", int_of(m.group(1)), ln, source=SOURCE_SECONDARY)
    run.put("num_gpu_blocks", int_of(m.group(2)), ln, source=SOURCE_SECONDARY)


def _v1_estimated_len(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("estimated_max_model_len", int_of(m.group(1)), ln, mode="first")


OOM_KIND_BY_STAGE: dict[Stage, ErrorKind] = {
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
    _error(OOM_KIND_BY_STAGE.get(run.stage, "torch_oom"), m, ln, run)
    run.put("device_type", _device(m.group(1)), ln, source=SOURCE_FALLBACK)
    run.put("gpu_platform", gpu_stack(m.group(1)), ln, source=SOURCE_SECONDARY)
    capacity = regex.search(vt.TOTAL_CAPACITY, m.group(0)) or regex.search(vt.NPU_TOTAL_CAPACITY, m.group(0))
    if capacity is not None:
        run.put("device_total_bytes", gib_bytes(capacity.group(1)), ln, source=SOURCE_SECONDARY)


def _fault(kind: ErrorKind, *, device: str | None = None, stack: str | None = None) -> Handler:
    """A device fault or an NPU operator error: a failure of its own kind, with the stage it reached.
    ``device``: the kind of device the message names (the HSA runtime's "… by GPU node-N"); ``stack``: the
    GPU stack that prints it (the HSA runtime is ROCm's)."""

    def handle(m: re.Match[str], ln: _Line, run: _Run) -> None:
        if run.stage == "ready":
            run.note(Text("a device error came after the start-up completed; the start-up is read"))
            return
        _error(kind, m, ln, run)
        if kind == "npu_error":
            _ascend_marker(m, ln, run)
        elif device is not None:
            run.put("device_type", device, ln, source=SOURCE_FALLBACK)
        run.put("gpu_platform", stack, ln, source=SOURCE_SECONDARY)

    return handle


def _autofit_reduced(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("max_model_len", int_of(m.group(2)), ln, source=SOURCE_FORCED)
    run.note(
        Text("auto-fit lowered max_model_len from {before} to {after}", before=m.group(1), after=m.group(2))
    )


def _autofit_fits(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("max_model_len", int_of(m.group(1)), ln, source=SOURCE_FORCED)


# the worker method a V0 wrapper names when it raises, and where the start-up was (worker/worker_base.py::
# WorkerWrapperBase.execute_method runs the executor's collective calls: worker/worker.py's init_device / load_model /
# determine_num_available_blocks / initialize_cache, 0.11.0; init_worker builds the worker, ray_utils / executors)
METHOD_STAGE: dict[str, Stage] = {
    "init_worker": "start",
    "init_device": "start",
    "load_model": "load",
    "determine_num_available_blocks": "profile",
    "determine_available_memory": "profile",
    "initialize_cache": "kv_alloc",
    "initialize_from_config": "kv_alloc",
    "compile_or_warm_up_model": "graph",
}


def _method_error(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """V0's "Error executing method 'X'": a failure, at the stage method X runs in."""
    stage = METHOD_STAGE.get(m.group(1))
    if stage is not None and run.stage != "ready":
        run.stage = stage
        run.stage_read = True
    if m.group(1) in vti.V0_ONLY_METHODS:  # the wrapper is shared by V0 and V1; this method is V0's worker's
        run.put("engine", "v0", ln, source=SOURCE_FALLBACK)
    _failure(m, ln, run)


def _rpc_stage(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """`collective_rpc("compile_or_warm_up_model")` in a traceback: the start-up was at that method's stage, or
    later (an executor's init_device call quoted after the load line does not move it back)."""
    stage = METHOD_STAGE.get(m.group(1))
    if stage is not None and STAGE_ORDER.index(stage) > STAGE_ORDER.index(run.stage):
        run.stage = stage
        run.stage_read = True


STAGE_ORDER: tuple[Stage, ...] = ("start", "load", "profile", "sized", "kv_alloc", "graph", "ready")


def _v0_method_error(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """V0's multiprocessing worker: "Exception in worker VllmWorkerProcess while processing method X." (V0 only)."""
    _method_error(m, ln, run)
    run.put("engine", "v0", ln, source=SOURCE_FALLBACK)


def _v0_engine_frame(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """A frame of V0's engine module, unless it is the dispatcher V1 runs too."""
    if m.group(1) not in vti.V1_DISPATCHERS:
        run.put("engine", "v0", ln, source=SOURCE_FALLBACK)


def _code_frame(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """A frame of any module with no log level before it: a traceback's or a graph-break report's."""
    if not any(level in m.string[: m.start()] for level in LOG_LEVELS):
        run.saw_code_frame = True


def _caret_line(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """Python's caret line under a bare frame's source line: the frames are an exception's traceback."""
    if run.saw_code_frame and not any(level in m.string[: m.start()] for level in LOG_LEVELS):
        _traceback(m, ln, run)


def _engine_core_failed(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """V1's EngineCore (v1/engine/core.py) failed to start, or V1's executor saw a worker die: a failure, and
    the engine is V1."""
    _failure(m, ln, run)
    run.put("engine", "v1", ln, source=SOURCE_FALLBACK)


def _server_died(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """The API server died or gave up on the engines: the start-up failed even past "init engine … took"."""
    run.server_died = True
    _error("startup_failed", m, ln, run, source=SOURCE_SECONDARY)


def _engine_core_tag(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("engine", "v1", ln, source=SOURCE_FALLBACK)


def _engine_core_error(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """An ERROR line of V1's engine core logger ("[core.py:N]"): only its start-up / fatal-error exception sites
    log there at ERROR before the engine serves (v1/engine/core.py::run_engine_core, 0.11.0–0.33.0), so a quote of
    them is a failed start, at the stage the other lines show, even when "EngineCore failed to start." was cut."""
    _engine_core_tag(m, ln, run)
    if run.get("error_kind") is None:
        _failure(m, ln, run)


def _gpu_stack_error(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """torch's "CUDA error: …" or vLLM's "Failed: Cuda error …": printed by the CUDA or the ROCm stack, a GPU."""
    run.put("device_type", "GPU", ln, source=SOURCE_FALLBACK)
