"""The text vLLM prints at start-up, one entry per template: how it is printed and how it is read.

One home for vLLM's wording (issue 18): the log parser (:mod:`app.core.logs.startup`) reads with
``pattern``; the estimator can render its simulated log from ``printed`` (vLLM's own format
string, as in the release named in ``source``). Templates and their version history are in the
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
KV_RESERVED = VllmLine(
    "as specified by kv_cache_memory_bytes",
    r"Initial free memory:? " + G + r"\s*GiB, reserved " + G + r"\s*GiB (?:memory )?for KV Cache",
)
FREE_AT_START = VllmLine(
    "Free memory on device",
    r"Free memory on device(?: [^\s(]+)? \(" + G + "/" + G + r" GiB\) on startup",
)
DESIRED_UTILIZATION = r"(?:desired|Desired) GPU memory utilization (?:is )?\(" + G
GRAPH_CAPTURED = VllmLine(
    "Graph capturing finished",
    r"Graph capturing finished in \d+ secs?, took " + G + r" GiB",
    "Graph capturing finished in %.0f secs, took %.2f GiB",
    "v1/worker/gpu_model_runner.py (0.19.0)",
)
GRAPH_POOL = VllmLine(
    "graph pool memory", r"graph pool memory: " + G + r" GiB \(actual\), " + G + r" GiB \(estimated\)"
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

# --- blocks and capacity (reference §4.3) ---------------------------------------------------
# "#" is optional: pasted into Markdown, "# GPU blocks" loses it to a heading
BLOCKS = VllmLine(
    " blocks: ",
    r"(?:#\s?|\b)(\w{1,16}) blocks: (\d{1,18})(?:, # CPU blocks: (\d{1,18}))?",
    "# GPU blocks: %d, # CPU blocks: %d",
)
BLOCKS_OVERRIDE = VllmLine(
    "num_gpu_blocks_override",
    r"Overriding num_gpu_blocks=(\d{1,18}) with num_gpu_blocks_override=(\d{1,18})",
    "Overriding num_gpu_blocks=%d with num_gpu_blocks_override=%d",
    "v1/core/kv_cache_utils.py::may_override_num_blocks (0.19.0)",
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


def mamba_blocks_error(*, max_num_seqs: int, num_blocks: int) -> str:
    """vLLM's ValueError text for max_num_seqs above a Mamba model's blocks (:data:`MAMBA_BLOCKS`)."""
    return MAMBA_BLOCKS.printed.format(max_num_seqs=max_num_seqs, num_blocks=num_blocks)


AUTOFIT_FAILED = VllmLine("Cannot auto-fit max_model_len", r"Cannot auto-fit max_model_len.*")
TORCH_OOM = VllmLine(" out of memory", r"\b(CUDA|NPU|XPU|HIP)(?: error:)? out of memory\b.*")
TOTAL_CAPACITY = r"total capacity of " + G + r" GiB"
# torch_npu's form: "NPU out of memory. Tried to allocate 2.57 GiB (NPU 0; 60.96 GiB total capacity; …)"
NPU_TOTAL_CAPACITY = G + r" GiB total capacity"

# --- failures and stages: where the start-up was when it failed ------------------------------
TRACEBACK = VllmLine("Traceback (most recent call last)", r"Traceback \(most recent call last\)")
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
LOAD_FRAME = VllmLine("load_model", r"\bin (?:load_model|load_weights)\b")
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
