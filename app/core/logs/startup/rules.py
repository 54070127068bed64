"""The rule table, run in order on every line (reference §4)."""

from __future__ import annotations

import re

from app.core import regex
from app.core import vllm_text as vt
from app.core.logs.startup.accumulator import Handler, _ascend_marker, _error, _Line, _Rule, _Run
from app.core.logs.startup.config import (
    _args_namespace,
    _ascend_block_size,
    _backend,
    _banner_model,
    _device_name,
    _engine_config,
    _exception,
    _failure,
    _forced_block_size,
    _fp8_kv,
    _kv_scale_dtype,
    _max_model_len,
    _non_default_args,
    _platform,
    _saw_loading,
    _scheduler_default,
    _server_version,
    _stage,
    _traceback,
)
from app.core.logs.startup.facts import ErrorKind
from app.core.logs.startup.failures import (
    _autofit_fits,
    _autofit_reduced,
    _fault,
    _len_above_derived,
    _mamba_blocks,
    _torch_oom,
    _v0_too_long,
    _v1_estimated_len,
    _v1_too_long,
    _v1_too_long_available,
    _v1_too_long_head,
    _v1_too_long_needed,
)
from app.core.logs.startup.memory import (
    _ascend_budget,
    _available_kv,
    _blocks,
    _blocks_override,
    _concurrency,
    _desired_utilization,
    _free_at_start,
    _graph_captured,
    _graph_equivalence,
    _graph_estimate,
    _graph_pool,
    _kv_reserved,
    _kv_size,
    _mamba_capped,
    _v0_budget,
    _v0_partition,
    _v0_profiling_results,
    _v0_profiling_row,
    _v1_profiling,
    _weights,
)
from app.core.vllm_text import VllmLine

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
    _rule(vt.API_SERVER_DP, _scheduler_default),
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
    _rule(vt.DESIRED_UTILIZATION_LINE, _desired_utilization),
    _rule(vt.GRAPH_CAPTURED, _graph_captured, kv=True),
    _rule(vt.GRAPH_POOL, _graph_pool, kv=True),
    _rule(vt.GRAPH_ESTIMATE, _graph_estimate, kv=True),
    _rule(vt.GRAPH_EQUIVALENCE, _graph_equivalence, kv=True),
    # blocks and capacity (§4.3)
    _rule(vt.BLOCKS, _blocks, kv=True),
    _rule(vt.BLOCKS_OVERRIDE, _blocks_override, kv=True),
    _rule(vt.MAMBA_CAPPED, _mamba_capped, kv=True),
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
    _rule(vt.MAMBA_BLOCKS, _mamba_blocks, kv=True),
    _rule(vt.LEN_ABOVE_DERIVED, _len_above_derived),
    _rule(vt.TORCH_OOM, _torch_oom, kv=True),
    _rule(vt.ILLEGAL_ADDRESS, _fault("device_fault"), kv=True),
    _rule(vt.GPU_HANG, _fault("device_fault", device="GPU"), kv=True),
    _rule(vt.MEMORY_ACCESS_FAULT, _fault("device_fault", device="GPU"), kv=True),
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
    _rule(vt.PROFILE_FRAME, _stage("profile")),
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
    _rule(vt.TORCH_NPU, _ascend_marker),
    _rule(vt.ASCEND_310P, _ascend_marker),
    _rule(vt.ASCEND_CLASS, _ascend_marker),
    _rule(vt.NPU_DEVICE, _ascend_marker),
    _rule(vt.HCCL, _ascend_marker),
    _rule(vt.DEVICE_NAME, _device_name),
)
