"""The text vLLM prints at start-up, one entry per template: how it is printed and how it is read.

One home for vLLM's wording (issues 18, 25): the log parser (:mod:`app.core.logs.startup`) reads with
``pattern``; the estimator (:mod:`app.core.estimate`) prints its simulated log and vLLM's refusals
with :mod:`app.core.vllm_text_printed`, release by release, in the words these patterns read back
(``printed`` holds vLLM's own format string, as in the release named in ``source``). Templates and their version history are in the
reference (``/work/shared/reference/vllm-accounting.md`` §4 log lines and errors, §9 vllm-ascend);
the 0.19.0 spellings were checked against that release's source (``pip download vllm==0.19.0``).

Every pattern is linear in its input (issue 19): numbers start at a number boundary
(:data:`GIB_NUMBER`, :data:`TOKEN_COUNT`), repeated groups are bounded, and a pattern that starts
with a literal is only tried where that literal is.
"""

from __future__ import annotations

from dataclasses import dataclass

# %.2f / %.4f / format_gib (reference §0: str(round(x, 2)), may be negative). The look-behind makes a
# number start only at a number boundary: without it a run of n digits is tried from each of its n
# positions (n² steps for a line of digits); with it, once.
GIB_NUMBER = r"(?<![\d.])(-?\d+(?:\.\d+)?)"
# %d or "{:,}" token counts (a trailing ", " is not a digit group)
TOKEN_COUNT = r"(?<![\d,])(\d{1,3}(?:,\d{3})+|\d+)"
VERSION = r"(v?\d[\w.+-]{0,63})"  # "0.19.2rc1.dev8+g4b7f5ea1a"; capped, a version is short
G, N = GIB_NUMBER, TOKEN_COUNT


@dataclass(frozen=True)
class VllmLine:
    """One template: a substring every printed line holds (a cheap gate), and the regex that reads it."""

    needle: str
    pattern: str
    printed: str = ""  # vLLM's format string, where one template prints it
    source: str = ""  # where vLLM prints it (file, release)


# --- identity and configuration -------------------------------------------------------------
SERVER_VERSION = VllmLine(
    "server version",
    r"vLLM (?:API )?server version:?\s+" + VERSION + r"(?:, serving model (\S{1,512}))?",
    "vLLM server version %s, serving model %s",
    "entrypoints/utils.py::log_version_and_model (logo disabled); api_server.py before 0.11",
)
BANNER_VERSION = VllmLine(
    "version ",
    r"█\s+version\s+" + VERSION,
    "█ ▀▄▀ █  version %s",
    "entrypoints/utils.py::log_version_and_model, the ASCII-art banner (0.11+)",
)
BANNER_MODEL = VllmLine("model ", r"█\s+model\s+(\S{1,512})", "█     █  model   %s", "the banner's next line")
MAX_MODEL_LEN = VllmLine(
    "Using max model len",
    r"Using max model len (\d{1,12})\b",
    "Using max model len %s",
    "config/model.py (0.19.0)",
)
# printed only for an fp8 KV cache whose checkpoint carries no q / k / v scales (layers/quantization/kv_cache.py)
KV_SCALE_DTYPE = VllmLine(
    "KV cache scaling factor",
    r"Using KV cache scaling factor [\d.]{1,16} for (fp8_e4m3|fp8_e5m2|fp8)\b",
    source="model_executor/layers/quantization/kv_cache.py",
)
FP8_KV = VllmLine(
    "fp8 data type to store kv cache",
    r"Using fp8 data type to store kv cache",
    "Using fp8 data type to store kv cache. It reduces the GPU memory footprint and boosts the "
    "performance. Meanwhile, it may cause accuracy drop without a proper scaling factor.",
    "config/cache.py::_validate_cache_dtype (0.19.0)",
)
NON_DEFAULT_ARGS = VllmLine("non-default args", r"non-default args:\s*(\{.*)", "non-default args: %s")
ARGS_NAMESPACE = VllmLine("args: Namespace(", r"args: Namespace\(", "args: %s")
ENGINE_CONFIG = VllmLine(
    "LLM engine",
    r"Initializing an? (V1 |V0 )?LLM engine(?: \(([^)]{1,64})\))? with config:",
    "Initializing a V1 LLM engine (v%s) with config: %s",
    "v1/engine/core.py; V0 before 0.6 prints no version",
)
# the engine-config line's `speculative_config=` value: SpeculativeConfig.__repr__ (0.19.0
# config/speculative.py; the same since 0.9), e.g. "SpeculativeConfig(method='eagle3',
# model='yuhuili/EAGLE3-LLaMA3.1-Instruct-8B', num_spec_tokens=3)"; model is None for ngram/suffix
SPECULATIVE_REPR = r"SpeculativeConfig\(method='?([\w.-]{1,64})'?, model=(?:'\s*([^']{0,512})'|None), num_spec_tokens=(\d{1,4})\)"
SCHEDULER_DEFAULT = VllmLine(
    "Setting max_num_", r"Setting (max_num_batched_tokens|max_num_seqs) to (\d{1,18}) for"
)
CHUNKED_PREFILL = VllmLine(
    "Chunked prefill is enabled", r"Chunked prefill is enabled with (max_num_batched_tokens)=(\d{1,18})"
)
PLATFORM = VllmLine("detected platform", r"detected platform (\w+)", "Automatically detected platform %s.")
# an out-of-tree platform, by its entry-point name (platforms/__init__.py::resolve_current_platform_cls_qualname,
# 0.33.0); vllm-ascend's is "ascend" (vllm_ascend-0.18.0 entry_points.txt: [vllm.platform_plugins] ascend = …)
PLATFORM_PLUGIN = VllmLine(
    "Platform plugin ",
    r"Platform plugin (\w{1,40}) is activated",
    "Platform plugin %s is activated",
    "platforms/__init__.py (0.33.0)",
)
OOT_PLATFORM_DEVICES = {"ascend": "NPU"}  # plugin name → device kind; another plugin names no device here
# 0.2x entrypoints/cli/serve.py: with DP > 1 and no --api-server-count, one API server per DP rank (the "_local"
# hybrid-LB wording names the local size, not the whole, and is not read)
API_SERVER_DP = VllmLine(
    "Defaulting api_server_count to data_parallel_size (",
    r"Defaulting api_server_count to (data_parallel_size) \((\d{1,4})\)",
    "Defaulting api_server_count to data_parallel_size (%d).",
    "entrypoints/cli/serve.py (0.33.0)",
)

# --- model loading (reference §4.1) ---------------------------------------------------------
WEIGHTS = VllmLine(
    " took ",
    r"(?:Loading model weights|Model loading) took " + G + r" Gi?B",
    "Model loading took %s GiB memory and %.6f seconds",
    "v1/worker/gpu_model_runner.py (0.19.0); V0 'Loading model weights took %.4f GB'",
)
LOAD_FAILED = VllmLine("Failed to load model", r"Failed to load model - not enough \w+ memory\..*")

# --- memory profiling (reference §4.2) ------------------------------------------------------
V0_BUDGET = VllmLine(
    "total_gpu_memory (",
    r"total_gpu_memory \(" + G + r"\s*GiB\) x gpu_memory_utilization \(" + G + r"\)",
)
V0_PARTITION = VllmLine(
    "model weights take",
    r"model weights take " + G + r"\s*GiB; non_torch_memory takes " + G + r"\s*GiB; "
    r"PyTorch activation peak memory takes " + G + r"\s*GiB; "
    r"the rest of the memory reserved for KV Cache is " + G + r"\s*GiB",
)
V0_PROFILING_RESULTS = VllmLine("Memory profiling results:", r"Memory profiling results:.*")
# The same results one per line, name and value apart (worker.py, vllm#10511, Dec 2024, between the
# one-line form above and the "the current vLLM instance can use" form): `total_gpu_memory     79.22GiB`.
# Each row starts with a fixed name and ends the line, so the search is linear.
V0_PROFILING_ROW = VllmLine(
    "  ",
    r"(?<!\w)(total_gpu_memory|gpu_memory_utilization|model weights take|non_torch_memory"
    r"|PyTorch activation peak memory|available_kv_cache_memory)[ \t]{2,64}" + G + r"(?:\s?GiB)?$",
    source="worker.py::determine_num_available_blocks (vllm#10511)",
)
PROFILE_VALUE = r"(?<!\w)(\w{1,64})=(-?\d+(?:\.\d+)?)"  # key=value inside that line; a key starts a word
V1_PROFILING = VllmLine(
    "Total non KV cache memory",
    r"Total non KV cache memory: " + G + r"\s*GiB; torch peak memory increase: " + G + r"\s*GiB; "
    r"(non-torch forward increase memory|total consumed \(from mem_get_info\)): " + G + r"\s*GiB; "
    r"weights memory: " + G + r"\s*GiB",
    source="utils/mem_utils.py (0.19.0), DEBUG",
)
AVAILABLE_KV = VllmLine(
    "Available KV cache memory",
    r"Available KV cache memory: " + G + r" GiB",
    "Available KV cache memory: %s GiB",
    "v1/worker/gpu_worker.py (0.19.0)",
)
# vllm-ascend v0.7.3 … v0.14.0rc1 prints its budget in bytes, with no unit: the KV pool (total × u − peak,
# clamped at 0 from v0.9; the unclamped float before) and the device total (torch.npu.mem_get_info()[1]).
# From v0.15.0rc1 it prints upstream's "Available KV cache memory: %.2f GiB" instead.
ASCEND_BUDGET = VllmLine(
    "total memory: ",
    r"Available memory: (-?\d{1,20}(?:\.\d{1,20})?), total memory: (\d{1,20})\b",
    'f"Available memory: {available_kv_cache_memory}, total memory: {total_npu_memory}"',
    "vllm_ascend/worker/worker_v1.py / worker.py::NPUWorker.determine_available_memory (v0.9.1, v0.11.0, v0.13.0rc3)",
)
KV_RESERVED = VllmLine(
    "as specified by kv_cache_memory_bytes",
    r"Initial free memory:? " + G + r"\s*GiB, reserved " + G + r"\s*GiB (?:memory )?for KV Cache",
)
FREE_AT_START = VllmLine(
    "Free memory on device",
    r"Free memory on device(?: [^\s(]+)? \(" + G + "/" + G + r" GiB\) on startup",
)
DESIRED_UTILIZATION = r"(?:desired|Desired) GPU memory utilization (?:is )?\(" + G
# the same clause at the head of a line: the free-memory error wrapped after "on startup is less" (a terminal,
# a quote in a thread), or 0.2x's budget line ("Free memory on device (…) on startup. Desired GPU memory
# utilization is (0.87, 105.87 GiB). …", v1/worker/gpu_worker.py) split at its sentence; the first figure is
# gpu_memory_utilization
DESIRED_UTILIZATION_LINE = VllmLine(
    "GPU memory utilization ", r"^(?:than )?(?:desired|Desired) GPU memory utilization (?:is )?\(" + G
)
GRAPH_CAPTURED = VllmLine(
    "Graph capturing finished",
    r"Graph capturing finished in \d+ secs?, took " + G + r" GiB",
    "Graph capturing finished in %.0f secs, took %.2f GiB",
    "v1/worker/gpu_model_runner.py (0.19.0)",
)
GRAPH_POOL = VllmLine(
    "graph pool memory", r"graph pool memory: " + G + r" GiB \(actual\), " + G + r" GiB \(estimated\)"
)
# printed while the budget is measured: gpu_worker.py::determine_available_memory calls
# gpu_model_runner.py::profile_cudagraph_memory after the profile run (0.19.0, 0.33.0)
GRAPH_PROFILING = VllmLine(
    "Profiling CUDA graph memory",
    r"Profiling CUDA graph memory: ",
    "Profiling CUDA graph memory: %s",
    "v1/worker/gpu_model_runner.py::profile_cudagraph_memory (0.19.0, 0.33.0)",
)
GRAPH_ESTIMATE = VllmLine(
    "Estimated CUDA graph memory",
    r"Estimated CUDA graph memory: " + G + r" GiB",
    "Estimated CUDA graph memory: %.2f GiB total",
    "v1/worker/gpu_model_runner.py (0.19.0)",
)
GRAPH_EQUIVALENCE = VllmLine(
    "is equivalent to --gpu-memory-utilization",
    r"current --gpu-memory-utilization=" + G + r" is equivalent to --gpu-memory-utilization=" + G,
)
# the same figure while graph profiling is still off by default (0.19.0 v1/worker/gpu_worker.py,
# determine_available_memory): "… and increase --gpu-memory-utilization from %.4f to %.4f to maintain the same
# effective KV cache size." — the first number is the run's gpu_memory_utilization
GRAPH_UTILIZATION_SUGGESTION = VllmLine(
    "increase --gpu-memory-utilization from",
    r"increase --gpu-memory-utilization from " + G + r" to " + G,
    "increase --gpu-memory-utilization from %.4f to %.4f to maintain the same effective KV cache size.",
    "v1/worker/gpu_worker.py (0.19.0)",
)

# --- blocks and capacity (reference §4.3) ---------------------------------------------------
# "#" is optional: pasted into Markdown, "# GPU blocks" loses it to a heading
BLOCKS = VllmLine(
    " blocks: ",
    r"(?:#\s?|\b)(\w{1,16}) blocks: (\d{1,18})(?:, # CPU blocks: (\d{1,18}))?",
    "# GPU blocks: %d, # CPU blocks: %d",
)
# 0.30.0+ with more than one KV group (hybrids, DeepSeek-V4): each group's block size and the scheduler's
# alignment, their LCM (v1/core/kv_cache_utils.py::resolve_kv_cache_block_sizes, 0.33.0: info_once "kv cache
# group sizes %s" with a tuple, "kv lcm block sizes %s"); a single-group model prints neither
KV_GROUP_BLOCK_SIZES = VllmLine(
    "kv cache group sizes",
    r"kv cache group sizes \((\d{1,7}(?:, \d{1,7}){0,63}),?\)",
    "kv cache group sizes %s",
    "v1/core/kv_cache_utils.py::resolve_kv_cache_block_sizes (0.30.0–0.33.0)",
)
KV_LCM_BLOCK_SIZE = VllmLine(
    "kv lcm block sizes",
    r"kv lcm block sizes (\d{1,9})\b",
    "kv lcm block sizes %s",
    "v1/core/kv_cache_utils.py::resolve_kv_cache_block_sizes (0.30.0–0.33.0)",
)
BLOCKS_OVERRIDE = VllmLine(
    "num_gpu_blocks_override",
    r"Overriding num_gpu_blocks=(?P<computed>\d{1,18}) with num_gpu_blocks_override=(?P<forced>\d{1,18})",
    "Overriding num_gpu_blocks=%d with num_gpu_blocks_override=%d",
    "v1/core/kv_cache_utils.py::may_override_num_blocks (0.19.0)",
)
# the engine's block count once the KV cache is initialised (v1/metrics/loggers.py::log_engine_initialized,
# 0.19.0 and 0.33.0: "Engine %03d: vllm cache_config_info with initialization after num_gpu_blocks is: %d",
# and with several engines "%d Engines: vllm cache_config_info …")
ENGINE_BLOCKS = VllmLine(
    "after num_gpu_blocks is: ",
    r"vllm cache_config_info with initialization after num_gpu_blocks is: (\d{1,18})",
    "Engine %03d: vllm cache_config_info with initialization after num_gpu_blocks is: %d",
    "v1/metrics/loggers.py::log_engine_initialized (0.19.0, 0.33.0)",
)
KV_SIZE = VllmLine(
    "KV cache size:",
    r"(?:\b(\w{1,32}(?: \+ host)?) )?KV cache size: " + N + r" tokens",
    "GPU KV cache size: %s tokens",
    "v1/core/kv_cache_utils.py (0.19.0)",
)
CONCURRENCY = VllmLine(
    "Maximum concurrency for",
    r"Maximum concurrency for " + N + r" tokens per request: (\d+(?:\.\d+)?)\s*x",
    "Maximum concurrency for %s tokens per request: %.2fx",
    "v1/core/kv_cache_utils.py (0.19.0)",
)
AUTOFIT_REDUCED = VllmLine(
    "Auto-fit max_model_len: reduced", r"Auto-fit max_model_len: reduced from (\d{1,18}) to (\d{1,18})"
)
AUTOFIT_FITS = VllmLine(
    "Auto-fit max_model_len: full", r"Auto-fit max_model_len: full model context length (\d{1,18}) fits"
)

# --- errors (reference §4.4) ----------------------------------------------------------------
NO_BLOCKS = VllmLine(
    "No available memory for the cache blocks",
    r"No available memory for the cache blocks\..*",
    "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
    "initializing the engine.",
    "v1/core/kv_cache_utils.py (0.19.0)",
)
V0_TOO_LONG = VllmLine(
    "is larger than the maximum number of tokens",
    r"The model's max seq len \((\d{1,18})\) is larger than the maximum number of tokens "
    r"that can be stored in KV cache \((\d{1,18})\)\..*",
)
V1_TOO_LONG = VllmLine(
    "To serve at least one request",
    r"To serve at least one request with the models?'s max seq len \((\d{1,18})\), \(?"
    + G
    + r" Gi?B KV cache is needed, which is larger than the available KV cache memory \("
    + G
    + r" Gi?B\)\.(?:\s*Based on the available memory, the estimated maximum model length is (\d{1,18})\.)?",
    source="v1/core/kv_cache_utils.py::check_enough_kv_cache_memory",
)
# The same error wrapped over several lines (a terminal, a quote in a thread): each part read on its own.
V1_TOO_LONG_HEAD = VllmLine(
    "To serve at least one request",
    r"To serve at least one request with the models?'s max seq len \((\d{1,18})\)(?:,\s?\(?" + G + r" Gi?B)?",
)
V1_TOO_LONG_NEEDED = VllmLine("KV cache is needed", G + r" Gi?B KV cache is needed")
V1_TOO_LONG_AVAILABLE = VllmLine(
    "larger than the available KV cache memory",
    r"larger than the available KV cache memory \(" + G + r" Gi?B\)",
)
V1_ESTIMATED_LEN = VllmLine(
    "the estimated maximum model length is",
    r"the estimated maximum model length is (\d{1,18})",
)
# 0.20.2+ config/compilation.py CompilationConfig.resolve_cudagraph_mode_and_sizes, with full CUDA graphs
# and Mamba layers, when max_num_seqs > kv_cache_config.num_blocks (the text is the same 0.20.2 ... 0.33.0)
MAMBA_BLOCKS = VllmLine(
    "exceeds available Mamba cache blocks",
    r"max_num_seqs \((\d{1,18})\) exceeds available Mamba cache blocks \((\d{1,18})\)",
    "max_num_seqs ({max_num_seqs}) exceeds available Mamba cache blocks ({num_blocks}). Each decode sequence "
    "requires one Mamba cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at "
    "most {num_blocks} or increase gpu_memory_utilization.",
    "config/compilation.py::CompilationConfig.resolve_cudagraph_mode_and_sizes (0.20.2 ... 0.33.0)",
)


# 0.19.x config/compilation.py CompilationConfig.adjust_cudagraph_sizes_for_mamba_cache, called with the pool's
# kv_cache_config.num_blocks: capture sizes above the blocks are dropped (0.20.2 raises MAMBA_BLOCKS instead)
MAMBA_CAPPED = VllmLine(
    "to fit Mamba cache blocks (",
    r"Capping cudagraph capture sizes from max (?P<before>\d{1,9}) to (?P<after>\d{1,9}) to fit Mamba cache blocks "
    r"\((?P<blocks>\d{1,18}) blocks available\)",
    "Capping cudagraph capture sizes from max %d to %d to fit Mamba cache blocks (%d blocks available). ...",
    "config/compilation.py::CompilationConfig.adjust_cudagraph_sizes_for_mamba_cache (0.19.0, 0.19.1)",
)


def mamba_blocks_error(*, max_num_seqs: int, num_blocks: int) -> str:
    """vLLM's ValueError text for max_num_seqs above a Mamba model's blocks (:data:`MAMBA_BLOCKS`)."""
    return MAMBA_BLOCKS.printed.format(max_num_seqs=max_num_seqs, num_blocks=num_blocks)


# the engine config's refusal of a --max-model-len above the model's own maximum (app/core/estimate/checks.py prints it)
LEN_ABOVE_DERIVED = VllmLine(
    "is greater than the derived max_model_len",
    r"User-specified max_model_len \((\d{1,18})\) is greater than the derived max_model_len",
    "User-specified max_model_len (%s) is greater than the derived max_model_len (%s=%s or model_max_length=%s in model's config.json).",
    "config/model.py::_get_and_verify_max_len (0.19.0)",
)
AUTOFIT_FAILED = VllmLine("Cannot auto-fit max_model_len", r"Cannot auto-fit max_model_len.*")
TORCH_OOM = VllmLine(" out of memory", r"\b(CUDA|NPU|XPU|HIP)(?: driver)?(?: error:)? out of memory\b.*")
TOTAL_CAPACITY = r"total capacity of " + G + r" GiB"
# torch_npu's form: "NPU out of memory. Tried to allocate 2.57 GiB (NPU 0; 60.96 GiB total capacity; …)"
NPU_TOTAL_CAPACITY = G + r" GiB total capacity"

# --- device faults: the start-up dies on the device, not on a memory budget ------------------
# torch's CUDA / HIP error text ("CUDA error: an illegal memory access was encountered"), the ROCm runtime's
# HSA messages ("HW Exception by GPU node-4 (Agent handle: 0x…) reason :GPU Hang", "Memory access fault by
# GPU node-1 …"), a process killed with a core dump, and torch_npu's operator errors ("NPU function error:
# call aclnnAddRmsNormQuant failed, error code is 561000"; "ERR00100 PTA call acl api failed").
ILLEGAL_ADDRESS = VllmLine(
    "illegal memory access", r"(?:\b\w{1,8} error: )?an illegal memory access was encountered.*"
)
GPU_HANG = VllmLine("HW Exception by GPU", r"HW Exception by GPU node-\d{1,4}\b.{0,200}")
MEMORY_ACCESS_FAULT = VllmLine(
    "Memory access fault by GPU", r"Memory access fault by GPU node-\d{1,4}\b.{0,300}"
)
CORE_DUMPED = VllmLine("core dumped", r"\w{0,40}(?: \w{1,20}){0,3} \(core dumped\)")
NPU_FUNCTION_ERROR = VllmLine("NPU function error", r"NPU function error: .*")
ACL_CALL_FAILED = VllmLine("call acl api failed", r"\bERR\d{5} \w{1,16} call acl api failed.*")
# the CANN runtime's report of an AI Core / vector core exception ("The error from device(chipId:2, dieId:0), serial
# number is 4, there is an exception of aivec error, core id is 32, error code = 0x800000 …", vllm-ascend#2976), and
# its task-level summary ("Aicore kernel execute failed, device_id=2, … fault kernel_name=…"): an operator died
NPU_CORE_EXCEPTION = VllmLine(
    "The error from device(",
    r"The error from device\(chipId:\d{1,4}, dieId:\d{1,4}\), serial number is \d{1,10}, there is an exception of \w{1,20}(?: \w{1,20}){0,2} error.*",
)
NPU_KERNEL_FAILED = VllmLine(
    "kernel execute failed", r"\b(?:Aicore|AICore|AIV|Aiv|AICPU|Aicpu|aicpu) kernel execute failed\b.*"
)
# an exception raised in torch_npu's C++ (its build path in the message: "RuntimeError: status == aclmdlRICapture…
# INTERNAL ASSERT FAILED at "build/CMakeFiles/torch_npu.dir/compiler_depend.ts":162", Ascend/pytorch#78)
TORCH_NPU_RAISED = VllmLine("torch_npu.dir", r"\b[A-Z]\w{0,40}Error: .{0,600}\btorch_npu\.dir/.*")

# --- failures and stages: where the start-up was when it failed ------------------------------
TRACEBACK = VllmLine("Traceback (most recent call last)", r"Traceback \(most recent call last\)")
# the API server's frame while it waits for the engine: only a failed start-up puts it in a traceback (it raises
# "Engine core initialization failed", v1/engine/utils.py::wait_for_engine_startup, 0.33.0)
ENGINE_STARTUP_FRAME = VllmLine("wait_for_engine_startup", r"\bin wait_for_engine_startup\b")
# a traceback frame that vLLM logged at ERROR level (logger.exception in v1/engine/core.py::run_engine_core,
# v1/executor/multiproc_executor.py's worker loop): a quote that starts below "Traceback" still shows a failure
LOGGED_FRAME = VllmLine(
    'File "', r'\bERROR\b[^"]{0,160}\]\s{0,16}File "[^"]{1,400}", line \d{1,7}, in \w{1,80}'
)
# a bare traceback frame in the start-up machinery of vLLM, vllm-ascend or vllm-omni (`  File ".../vllm/v1/engine/
# core.py", line 83, in __init__`, no log level before it): a traceback's frames, kept by a quote that lost the
# "Traceback" header and the exception line. Frames of model code (model_executor/, layers, compilation/) are not
# read: torch.compile's graph-break warnings print those bare on a start-up that succeeds
VLLM_FRAME = VllmLine(
    'File "',
    r'File "[^"]{0,300}/(?:vllm(?:/v1)?/(?:engine|executor|worker|entrypoints)|vllm_ascend/(?:worker|patch)'
    r'|vllm_ascend/platform\.py|vllm_omni)[^"]{0,200}", line \d{1,7}, in \w{1,80}',
)
# a frame of V0's GPU worker: vllm/worker/worker.py (class Worker(LocalOrDistributedWorkerBase)), model_runner.py,
# cache_engine.py are V0's modules to their removal after 0.10.2; V1's worker is vllm/v1/worker/gpu_worker.py
# (worker_base.py is shared by both and is not read)
V0_WORKER_FRAME = VllmLine(
    'File "',
    r'File "[^"]{0,300}/vllm/worker/(?:worker|model_runner|cache_engine|enc_dec_model_runner)\.py", line \d{1,7}',
)
ENGINE_CORE_FAILED = VllmLine(
    "EngineCore failed to start",
    r"EngineCore failed to start.*",
    "EngineCore failed to start.",
    "v1/engine/core.py (0.19.0)",
)
ENGINE_INIT_FAILED = VllmLine(
    "Engine core initialization failed",
    r"Engine core initialization failed.*",
    "Engine core initialization failed. See root cause above. Failed core proc(s): %s",
    "v1/engine/utils.py::wait_for_engine_startup (0.19.0)",
)
ERROR_LINE = VllmLine("Error: ", r"\b[A-Z]\w{0,80}Error: .*")
EXCEPTION_LINE = VllmLine("Exception: ", r"\b[A-Z]\w{0,80}Exception: .*")
LOAD_START = VllmLine("Starting to load model", r"Starting to load model")
# a frame of the model load: the loader's load_model builds the model (initialize_model, which a multimodal or
# wrapper model's __init__ reaches through init_vllm_registered_model) and then loads its weights
# (model_executor/model_loader/base_loader.py::load_model, utils.py::initialize_model, 0.33.0). The gate is "in ",
# which every alternative holds: "_model" let a frame "…/models/utils.py\", line 355, in load_weights" pass unread
# (vllm-ascend#11406, heldout-2026-12zg)
LOAD_FRAME = VllmLine(
    "in ", r"\bin (?:load_model|load_weights|initialize_model|init_vllm_registered_model)\b"
)
# a traceback frame of the memory profile (the budget is being measured: weights loaded, no pool yet):
# v1/executor/abstract.py / v1/worker/gpu_worker.py::determine_available_memory (V1), and the V0 worker's
# determine_num_available_blocks; both run profile_run (0.9.2, 0.19.0)
PROFILE_FRAME = VllmLine("in determine_", r"\bin determine_(?:available_memory|num_available_blocks)\b")
# a frame of the device's initialisation, before any weight loads: V1 WorkerProc.__init__ calls
# worker.init_device() and then load_model(); V0's executor runs collective_rpc("init_device") first; vllm-ascend's
# NPUPlatform.set_device → torch_npu's _npu_setDevice (v1/executor/multiproc_executor.py, executor/
# uniproc_executor.py::_init_executor, 0.9.2–0.33.0; vllm_ascend/platform.py::set_device)
DEVICE_INIT_FRAME = VllmLine("evice", r"\bin (?:init_device|set_device|_npu_setDevice)\b")
# a frame of the engine configuration the API server builds before any engine process starts (EngineArgs.
# create_engine_config → create_model_config, engine/arg_utils.py, 0.9.2–0.33.0): a failure there is at "start"
CONFIG_FRAME = VllmLine("create_", r"\bin create_(?:engine|model)_config\b")
# torch.compile runs inside the memory profile in V1: determine_available_memory's profile_run is the model's first
# forward, which compiles it ("we still need a profile run which compiles the model", v1/worker/gpu_worker.py,
# 0.19.0); compilation/backends.py prints "Dynamo bytecode transform time: %.2f s", compilation/monitor.py
# "torch.compile takes %.2f s in total" (≤ 0.1x) / "torch.compile took %.2f s in total" (0.19.0, 0.33.0)
TORCH_COMPILE = VllmLine(
    "ompil",
    r"Dynamo bytecode transform time: |torch\.compile (?:takes|took) [\d.]{1,12} ?s in total|"
    r"Compiling a graph for (?:general shape|dynamic shape|compile range)",
)
SHARD_PROGRESS = VllmLine("Loading safetensors checkpoint shards", r"Loading safetensors checkpoint shards")
GRAPH_CAPTURE = VllmLine(
    "aptur",
    r"[Cc]apturing (?:CUDA graphs?|cudagraphs?|the model for CUDA graphs|ACL ?graphs?|NPU graphs?)"
    r"|\bin (?:capture_model|_capture_cudagraphs|capture)\b|\.capture_model\(",
)
# allocating the KV tensors, after the pool was sized: V1 initialize_from_config → initialize_kv_cache →
# _allocate_kv_cache_tensors (gpu_model_runner.py; vllm-ascend model_runner_v1.py), V0 _init_cache_engine
KV_ALLOCATION = VllmLine(
    "_c",
    r"\b(?:_allocate_kv_cache(?:_tensors)?|initialize_kv_cache_tensors|_init_cache_engine)\b"
    r"|\bin (?:initialize_from_config|initialize_kv_cache|initialize_cache)\b",
)
GRAPH_CAPTURE_CALL = VllmLine("cuda.graph(", r"\btorch\.cuda\.graph\(")
GRAPH_CAPTURE_END = VllmLine(" in capture_end", r"\bin capture_end\b")
STARTUP_COMPLETE = VllmLine("Application startup complete", r"Application startup complete")
ENGINE_READY = VllmLine(
    "init engine (profile",
    r"init engine \(profile",
    "init engine (profile, create kv cache, warmup model) took %.2f seconds",
)

# --- the device's own name, as torch / nvidia-smi / collect_env print it ---------------------
# "GPU 0: NVIDIA H100 80GB HBM3" (collect_env), "device_name=NVIDIA A100-SXM4-80GB" (some loggers)
DEVICE_NAME = VllmLine(
    "NVIDIA ",
    r"(?:\bGPU \d{1,3}: |device_name=|\bon device: )(NVIDIA [\w.()-]{1,24}(?: [\w.()-]{1,24}){0,4})",
)

# torch's capability warning names the card ("Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.",
# torch/cuda/__init__.py); the fused-MoE config file vLLM looks for carries the name with "_" for " "
# ("…/E=256,N=512,device_name=NVIDIA_GB10,dtype=fp8_w8a8.json", fused_moe.py::get_config_file_name, 0.13–0.33)
TORCH_CAPABILITY_NAME = VllmLine(
    "which is of cuda capability", r"\bFound GPU\d{1,3} (NVIDIA .{1,80}?) which is of cuda capability"
)
MOE_CONFIG_NAME = VllmLine("device_name=NVIDIA_", r"\bdevice_name=(NVIDIA_[\w-]{1,80}?)(?:,|\.json)")
# vLLM's platform module in a line's tag, printed by that GPU stack only: "[rocm.py:279] Using Triton Attention backend."
# (platforms/rocm.py), "[cuda.py:334] Using FLASH_ATTN …" ("[platforms/cuda.py:334]" under VLLM_LOGGING_LEVEL=DEBUG,
# 0.33.0 logging_utils/formatter.py; 0.6–0.7 print no "[": "17:02:01 cuda.py:230] Using Flash Attention backend.")
PLATFORM_MODULE = VllmLine(".py:", r"(?:\[|\d\d:\d\d:\d\d )(?:platforms/)?(cuda|rocm)\.py:\d{1,5}\]")

# --- attention backend and block size (reference §5, §9) -------------------------------------
BACKEND = VllmLine(
    "Using ",
    r"\bUsing (?!backend\b)((?:AttentionBackendEnum\.)?[A-Za-z][\w ]{0,40}?)(?: attention)? [Bb]ackend\b",
)
ASCEND_BACKEND = VllmLine("Using Ascend", r"\bUsing (Ascend\w*Backend)\b")
FORCED_BLOCK_SIZE = VllmLine(
    " block size to ", r"(?:Forcing|Setting) (?:kv cache|attention) block size to (\d{1,18})"
)
ASCEND_BLOCK_SIZE_INFO = VllmLine(
    "Block size is set to 128", r"Block size is set to 128 if prefix cache or chunked prefill"
)
ASCEND_BLOCK_SIZE_RULE = VllmLine("block size must be set to 128", r"block size must be set to 128")
ASCEND_MARKER = VllmLine("ascend", r"vllm[_-]ascend|torch_npu")
TORCH_NPU = VllmLine("torch_npu", r"\btorch_npu\b")  # a torch_npu path or warning: the needle above misses it
# more lines only an Ascend run prints: vllm-ascend's 310P modules ("[worker_310p.py:141] Skip warm-up atb ops
# for 310P device."), its Ascend* classes (AscendScheduler, AscendConfig), a torch device "npu:0", HCCL
ASCEND_310P = VllmLine("310p", r"\w{0,40}_310p\.py|\b310P\b")
ASCEND_CLASS = VllmLine("Ascend", r"\bAscend[A-Z]\w{0,60}")
# vllm-ascend's own worker and runner modules in a line's tag: vllm_ascend/worker/model_runner_v1.py ("[model_runner_v1
# .py:2373] Loading model weights took 37.2362 GB", vllm-ascend#2976) and worker_v1.py; upstream vLLM's are
# v1/worker/gpu_model_runner.py and gpu_worker.py, so the tag alone says the run is vllm-ascend's
ASCEND_RUNNER_TAG = VllmLine("_v1.py:", r"\[(?:model_runner_v1|worker_v1)\.py:\d{1,6}\]")
NPU_DEVICE = VllmLine("npu:", r"\bnpu:\d{1,3}\b")
HCCL = VllmLine("HCCL", r"\bHCCL\w{0,40}")
# torch_npu's (PTA's) error record "[ERROR] 2025-08-13-09:34:05 (PID:3760997, Device:-1, RankID:-1) ERR99999
# UNKNOWN applicaiton exception" (vllm-ascend#2354, #692: "… (PID:1439, Device:0, RankID:-1) ERR00100 PTA call
# acl api failed"), the CANN toolkit's install paths a pasted setup sources (/usr/local/Ascend/ascend-toolkit/
# set_env.sh, /usr/local/Ascend/nnal/atb/set_env.sh, the driver under /usr/local/Ascend/driver) and vllm-ascend's
# device-visibility variable ASCEND_RT_VISIBLE_DEVICES: only an Ascend host prints or needs them
ASCEND_PTA_ERROR = VllmLine("RankID:", r"\(PID:\d{1,10}, Device:-?\d{1,4}, RankID:-?\d{1,6}\) ERR\d{5}\b")
ASCEND_TOOLKIT = VllmLine("/Ascend/", r"/Ascend/(?:ascend-toolkit|nnal|driver)\b")
ASCEND_VISIBLE = VllmLine("ASCEND_RT_VISIBLE_DEVICES", r"\bASCEND_RT_VISIBLE_DEVICES\b")
# what only ROCm prints: its name and install path, a gfx architecture as such ("gfx942:sramecc+", a "+gfx906" version
# label; not a conda env ".../envs/gfx906/lib", nlzy/vllm-gfx906#6, nor an image "vllm-gfx906"), the AITER kernel library,
# a ROCm backend or variable (ROCM_AITER_FA), HIP errors, an Instinct card; the HSA runtime's faults (GPU_HANG) as well
ROCM_NAME = VllmLine("ROCm", r"\bROCm\b")
ROCM_PATH = VllmLine("/opt/rocm", r"/opt/rocm\b")
GFX_ARCH = VllmLine("gfx", r"(?<![\w/.-])gfx(?:9|10|11|12)\d{1,2}[a-f]?\b(?![/-])")
AITER_LOG = VllmLine("[aiter]", r"\[aiter\]")
ROCM_SETTING = VllmLine("ROCM_", r"\bROCM_\w{1,40}|_ROCM_\w{1,40}")
HIP_ERROR = VllmLine("HIP error", r"\bHIP error\b")
HIP_ERROR_CODE = VllmLine("hipError", r"\bhipError\w{1,40}")
AMD_INSTINCT = VllmLine("AMD Instinct", r"\bAMD Instinct\b")
# ACL (Ascend Computing Language) graphs are vllm-ascend's NPU graphs: "Starting to capture ACL graphs for
# cases: …" and "Capturing ACL graphs (mixed prefill-decode, PIECEWISE)" as real vllm-ascend runs print them
# (vllm-ascend#5917, #3508), vllm_ascend/utils.py's "… batch sizes for ACL graph" (ascend-0.13.0)
ACL_GRAPH = VllmLine("ACL graph", r"\bACL graphs?\b")
