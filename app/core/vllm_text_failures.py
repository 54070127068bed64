"""What vLLM, torch and torch_npu print when a start-up fails, beyond app.core.vllm_text's templates.

Same shape as vllm_text (a needle that gates the line, the regex that reads it); rules.json names a template of
either module. vllm_text is at its size cap, so the failure lines added in round 9 live here. Each cites where it
is printed (file, release) or, for text vLLM does not own, the real log it was read from.
"""

from __future__ import annotations

from app.core.vllm_text import VllmLine

# c10's driver-API check raised inside a custom op has no "out of memory" prefix of torch's allocator:
# "RuntimeError: CUDA driver error: out of memory" in _custom_ops.gptq_marlin_repack (club-3090#60); vllm_text's
# TORCH_OOM reads it (its "(?: driver)?")

# a worker process's RPC raised (logger.exception in WorkerProc.worker_busy_loop / worker_main,
# v1/executor/multiproc_executor.py, 0.11.0 and 0.33.0): a failure even when the quote stops before the traceback
WORKER_EXCEPTION = VllmLine(
    "WorkerProc ",
    r"WorkerProc (?:hit an exception|failed to start)\.",
    "WorkerProc hit an exception.",
    "v1/executor/multiproc_executor.py::WorkerProc.worker_busy_loop (0.11.0, 0.33.0)",
)
# V0's worker wrapper names the method that raised (vllm/worker/worker_base.py::WorkerWrapperBase.execute_method,
# 0.11.0: f"Error executing method {method!r}. This might cause deadlock …"; older releases print it unquoted,
# kuberay#3168): the method says where the start-up was
WORKER_METHOD_ERROR = VllmLine(
    "Error executing method",
    r"Error executing method '?(\w{1,80})'?\.",
    "Error executing method %r. This might cause deadlock in distributed execution.",
    "worker/worker_base.py::WorkerWrapperBase.execute_method (0.11.0)",
)
# torch's CUDA / HIP error check on a call that failed for another reason than memory or an illegal access (those
# have their own rules, which win): "CUDA error: operation not permitted on an event last recorded in a capturing
# stream" (a HIP build prints "CUDA error" too, vllm#41622)
DEVICE_API_ERROR = VllmLine(" error: ", r"\b(?:CUDA|HIP) error: (\S.{0,400})")
# a C++ exception nobody caught aborts the process ("terminate called after throwing an instance of
# 'c10::DistBackendError'", torch's NCCL watchdog, vllm#41622)
CPP_TERMINATE = VllmLine(
    "terminate called after throwing", r"terminate called after throwing an instance of '[^']{1,200}'"
)
# torch_npu's report of a failed NPU operator ("The Inner error is reported as above. The process exits for this
# inner error, and the current working operator name is RopeOperation.", vllm-ascend#2260)
NPU_INNER_ERROR = VllmLine(
    "The Inner error is reported as above",
    r"The Inner error is reported as above\. The process exits for this.*",
)
# the weights' post-processing the loader runs once they are read (model_loader/base_loader.py::load_model →
# process_weights_after_loading; the Marlin kernels repack there: kernels/linear/mixed_precision/marlin.py::
# MarlinLinearKernel.process_weights_after_loading → _custom_ops.gptq_marlin_repack, 0.33.0): still the load
WEIGHT_PROCESS_FRAME = VllmLine("process_weights_after_loading", r"\bin process_weights_after_loading\b")
WEIGHT_REPACK_FRAME = VllmLine("_repack", r"\bin (?:gptq|awq)_marlin(?:_moe)?_repack\b")
# V0's multiprocessing worker names the method that raised (executor/multiproc_worker_utils.py::_run_worker_process,
# 0.10.1.1: "Exception in worker %s while processing method %s."; V0 only, the module is gone in 0.11.0)
V0_WORKER_METHOD_ERROR = VllmLine(
    "while processing method",
    r"Exception in worker \S{1,80} while processing method (\w{1,80})\.",
    "Exception in worker %s while processing method %s.",
    "executor/multiproc_worker_utils.py::_run_worker_process (0.10.1.1)",
)
# the API server process's end, which no engine line follows: it died (v1/utils.py::wait_for_completion_or_failure,
# 0.10.1.1–0.33.0: f"Process {proc.name} (PID: {proc.pid}) died with exit code {proc.exitcode}") or gave up on the
# engines (v1/engine/core_client.py's start-up poll, one template per wording below): the server never served, even
# when the engine reached "init engine … took"
SERVER_DIED = VllmLine(
    "died with exit code",
    r"Process (?:API|Api)Server\w{0,20} \(PID: \d{1,9}\) died with exit code -?\d{1,4}",
    "Process %s (PID: %s) died with exit code %s",
    "v1/utils.py::wait_for_completion_or_failure (0.10.1.1, 0.33.0)",
)
ENGINES_TIMEOUT = VllmLine(
    "Timed out waiting for engines",
    r"Timed out waiting for engines to send initial message",
    "Timed out waiting for engines to send initial message on input socket.",
    "v1/engine/core_client.py (0.10.1.1, 0.11.0, 0.13.0, 0.14.0, 0.15.0)",
)
# the same poll from 0.17.0 ("new engine core processes" is the elastic-EP scale-up's, not matched)
ENGINE_CORES_TIMEOUT = VllmLine(
    "Timed out waiting for engine core",
    r"Timed out waiting for engine core processes to start\b",
    "Timed out waiting for engine core processes to start. This is often caused by slow weight loading for large "
    "models. Waited %ss (configured by VLLM_ENGINE_READY_TIMEOUT_S). To increase the timeout, set the environment "
    "variable: VLLM_ENGINE_READY_TIMEOUT_S=<seconds>",
    "v1/engine/core_client.py (0.17.0, 0.18.0, 0.19.0, 0.22.0, 0.33.0)",
)
# V1's engine process tags its lines "(EngineCore_DP0 pid=…)" (0.10+; "(EngineCore_0 pid=…)" in 0.9): only V1 has an
# EngineCore process (v1/engine/core.py::EngineCoreProc, 0.10.1.1, 0.33.0). Before 0.10.2 the engine manager named the
# process f"EngineCore_{global_index}" (v1/engine/utils.py::CoreEngineProcManager; "(EngineCore_2 pid=302620)", vllm-ascend
# PR 2125, heldout-2026-12zg); 0.10.2 names it f"EngineCore_DP{global_index}", 0.33.0 that or plain "EngineCore" with no
# data parallelism: one tag reads all three
ENGINE_CORE_NAME = r"\(EngineCore(?:_(?:DP)?\d{1,4})? pid=\d{1,9}\)"
ENGINE_CORE_TAG = VllmLine("(EngineCore", ENGINE_CORE_NAME)

# --- round 10 (heldout-2026-12k): where a quote that lost its header still says what ran -----------------------------
# the V1 engine's own error log: v1/engine/core.py logs at ERROR only where the start-up or the busy loop died
# (run_engine_core's logger.exception("EngineCore failed to start.") / ("EngineCore encountered a fatal error."),
# 0.11.0, 0.19.0, 0.33.0; the other ERROR sites there answer requests after the start-up), and logger.exception's
# traceback lines carry the same "[core.py:N]" prefix: a quote of them is a failed start even without the head line
ENGINE_CORE_ERROR = VllmLine(
    "ERROR ",
    # with the process tag, or without it (an engine core run in the API server's process, 0.8–0.9: vllm#19596)
    r"(?:" + ENGINE_CORE_NAME + r" |^)ERROR \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})? \[core\.py:\d{1,5}\]",
)
# a frame of a module under vllm/v1/ (core_client.py, engine/utils.py, v1/utils.py, v1/worker/…): only the V1
# engine runs those (the V0 engine's modules are vllm/engine/, vllm/worker/ and vllm/executor/ to 0.10.2)
V1_MODULE_FRAME = VllmLine('File "', r'File "[^"]{0,300}/vllm/v1/[\w/]{1,160}\.py", line \d{1,7}')
# V0's multiprocessing worker logs through executor/multiproc_worker_utils.py (its "[multiproc_worker_utils.py:N]"
# logger prefix, 0.6–0.10; the module is gone in 0.11.0): the engine was V0
V0_MULTIPROC_LOGGER = VllmLine("multiproc_worker_utils.py:", r"\bmultiproc_worker_utils\.py:\d{1,5}\]")
# a frame of a model class being built: __init__ of vllm's model or layer modules (model_executor/models/*.py,
# model_executor/layers/**) or vllm-ascend's runs inside the loader's initialize_model, before the weights are read
# (model_executor/model_loader/base_loader.py::load_model → utils.py::initialize_model, 0.11.0–0.33.0): the load
MODEL_INIT_FRAME = VllmLine(
    "__init__",
    r'File "[^"]{0,300}/(?:vllm/model_executor/(?:models|layers)|vllm_ascend/(?:models|ops))/[\w/]{1,120}\.py", '
    r"line \d{1,7}, in __init__",
)

# --- round 10 (heldout-2026-12l) -------------------------------------------------------------------------------
# distributed/parallel_state.py::initialize_model_parallel logs "rank %s in world size %s is assigned as DP rank %s,
# PP rank %s, …, TP rank %s …" (0.11.0, 0.19.0, 0.33.0; 0.8 prints the same head): the world is DP × PP × PCP × TP
# processes, so a world of one is TP 1 and PP 1 (a larger world bounds nothing by itself: DP shares it)
RANK_WORLD_SIZE = VllmLine(
    "in world size",
    r"\brank \d{1,6} in world size (\d{1,6}) is assigned as",
    "rank %s in world size %s is assigned as DP rank %s, PP rank %s, PCP rank %s, TP rank %s, …",
    "distributed/parallel_state.py::initialize_model_parallel (0.11.0, 0.33.0)",
)
# the engine core's executor is being built (v1/engine/core.py::EngineCore.__init__: "self.model_executor =
# executor_class(vllm_config)", 0.11.0, 0.19.0, 0.33.0; V0's LLMEngine has the same line): a failure there with no
# load line before it came before the load (the executor's init_worker / init_device)
EXECUTOR_INIT_LINE = VllmLine("executor_class(", r"\bself\.model_executor = executor_class\(")
# "Starting to load model" from a module named model_runner.py is V0's GPU model runner (vllm/worker/model_runner.py,
# to 0.10.2) or vllm-ascend's V0 one: 0.11.0+ print it from v1/worker/gpu_model_runner.py, the V2 runner (v1/worker/
# gpu/model_runner.py, 0.33.0) prints "Loading model from scratch...", vllm-ascend 0.18–0.25 from model_runner_v1.py
V0_LOAD_START = VllmLine("model_runner.py:", r"\bmodel_runner\.py:\d{1,5}\] Starting to load model")
# Python's faulthandler dump after a fatal signal (SIGSEGV, SIGABRT, …: "Fatal Python error: Segmentation fault",
# then "Thread 0x… (most recent call first):" and its frames): a frame is `  File "….py", line 224 in _init_cache`,
# with no comma before "in", unlike a traceback's `line 224, in _init_cache` (CPython Python/traceback.c::
# dump_frame). Only a crash prints it, so even a quote of the frames alone is a failed start (vllm#3878, ROCm 0.4.0)
FAULTHANDLER_FRAME = VllmLine('File "', r'File "[^"]{1,400}", line \d{1,7} in [\w<>]{1,80}\s*$')
FATAL_PYTHON_ERROR = VllmLine("Fatal Python error: ", r"Fatal Python error: \S.{0,200}")
# any traceback frame (`  File "…/modelopt.py", line 1669, in apply`) and the caret line Python 3.11+ prints
# under a frame's source line when it formats an exception's traceback (traceback.py::StackSummary.format_frame_
# summary, from the frame's column positions). A frame of model code alone is not a failure: torch.compile's
# graph-break reports print user frames on a start-up that succeeds (torch/_dynamo, a FrameSummary without
# columns, so no carets). Frames followed by a caret line are an exception's traceback (flashinfer#2045)
CODE_FRAME = VllmLine('File "', r'File "[^"]{1,400}", line \d{1,7}, in \S')
CARET_LINE = VllmLine("^^^", r"(?:^|\s)[~^]*\^{3}[~^]*\s*$")
# an executor's collective call names the worker method it runs (v1/executor/abstract.py::Executor.
# initialize_from_config: self.collective_rpc("compile_or_warm_up_model"), 0.11.0): a traceback through it was there
COLLECTIVE_RPC_METHOD = VllmLine("collective_rpc(", r"collective_rpc\(\s{0,4}[\"'](\w{1,80})[\"']")

# --- round 12 (heldout-2026-12p) -------------------------------------------------------------------------------
# the V1 executor's worker monitor: a worker process exited (v1/executor/multiproc_executor.py, 0.19.0: "Worker proc
# %s died unexpectedly, shutting down executor."; 0.33.0 adds " (exit code: %s)"); the process is named
# f"VllmWorker-{rank}" there
WORKER_DIED = VllmLine(
    "died unexpectedly",
    r"Worker proc \S{1,80} died unexpectedly(?: \(exit code: -?\d{1,4}\))?, shutting down executor",
    "Worker proc %s died unexpectedly (exit code: %s), shutting down executor.",
    "v1/executor/multiproc_executor.py::MultiprocExecutor (0.19.0, 0.33.0)",
)
# what the CUDA and the ROCm stacks both print, and no other: torch's check "CUDA error: <reason>" (a HIP build of torch
# prints "CUDA error" too, vllm#41622) and vLLM's kernel check "Failed: Cuda error <file>:<line> '<reason>'" (csrc/
# custom_all_reduce.cuh's CUDACHECK, built for ROCm too; CUDA_CHECK_FAILED below): a GPU, whichever of the two
# (vllm#52457, an H800; vllm#6976's k8s log "RuntimeError: CUDA error: an illegal memory access was encountered")
GPU_STACK_ERROR = VllmLine("CUDA error: ", r"\bCUDA error: ")
# vLLM's own CUDA check in its kernels: csrc/custom_all_reduce.cuh's CUDACHECK prints "Failed: Cuda error
# <file>:<line> '<reason>'" and exits the process (vllm#42609: "…custom_all_reduce.cuh:455 'invalid argument'";
# vllm#52457: ":164 'an illegal memory access was encountered'", which ILLEGAL_ADDRESS names a device fault)
CUDA_CHECK_FAILED = VllmLine("Failed: Cuda error", r"Failed: Cuda error \S{1,300}:\d{1,6} '[^']{1,200}'")
# CANN's runtime failing to begin a stream capture, the first step of an ACL graph capture (torch_npu's NPUGraph
# capture_begin → aclmdlRICaptureBegin → rtStreamBeginCapture): "rtStreamBeginCapture execution failed, reason=driver
# error:resource alloc fail" and "begin capture stream failed, runtime result = 207005" (vllm-ascend#12113)
NPU_CAPTURE_FAILED = VllmLine(
    "apture",
    r"\brtStreamBeginCapture execution failed\b.{0,300}|\bbegin capture stream failed, runtime result = \d{1,10}",
)
# CANN's error record head "EE9999: Inner Error!" (E + a module letter + four digits; vllm-ascend#12113, #8393): only
# the Ascend runtime prints it (torch_npu's own sentence is "The Inner error is reported as above", NPU_INNER_ERROR)
CANN_INNER_ERROR = VllmLine("Inner Error!", r"\bE[A-Z0-9]\d{4}: Inner Error!")
# vllm-ascend's runner logging the ACL graph capture's exception ("ACLgraph sizes capture fail: RuntimeError:" then
# "ACLgraph has insufficient available streams to capture the configured number of sizes", vllm_ascend/worker/
# model_runner_v1.py as vllm-ascend's FAQ quotes it, "How to troubleshoot … size capture failures resulting from stream
# resource exhaustion"; vllm-ascend#3389): the start-up failed in graph capture
ACL_GRAPH_CAPTURE_FAILED = VllmLine("ACLgraph sizes capture fail", r"ACLgraph sizes capture fail: \w{1,60}")
# CANN's other wording of the AI Core fault that vllm_text's NPU_CORE_EXCEPTION reads ("… serial number is 48, there is
# an fftsplus aicore error exception, core id is 23, error code = 0x800000 …", vllm-ascend#3263, v0.7.3): an operator died.
# (NPU_CORE_EXCEPTION's "there is an exception of <kind> error" takes a kind of up to three words: vllm-ascend#16654's
# 0.23.0 A3 decode worker printed "there is an exception of fftsplus aicore error, core id is 14, …")
NPU_CORE_ERROR_EXCEPTION = VllmLine(
    "The error from device(",
    r"The error from device\(chipId:\d{1,4}, dieId:\d{1,4}\), serial number is \d{1,10}, there is an? \w{1,20}"
    r"(?: \w{1,20}){0,2} error exception\b.*",
)
