"""What a start-up prints about which model and which engine, beyond app.core.vllm_text's identity templates.

Same shape as vllm_text (a needle that gates the line, the regex that reads it); rules.json names a template of
any of these modules. vllm_text is at its size cap, so the identity lines added in round 11 (issue 22, half A of
the held-apart logs heldout-2026-12m) live here. Each cites where vLLM prints it.
"""

from __future__ import annotations

from app.core.vllm_text import VERSION, G, VllmLine

# the model runner names the model it loads: V1's GPU runner (v1/worker/gpu_model_runner.py::GPUModelRunner.
# load_model, 0.11.0: logger.info("Starting to load model %s...", self.model_config.model)), V0's runner
# (worker/model_runner.py, 0.5–0.10) and vllm-ascend's NPU runners print the same words; the name is the
# engine's model_config.model, the one the engine-config line prints
LOAD_MODEL_NAME = VllmLine(
    "Starting to load model",
    r"Starting to load model (\S{1,512}?)\.\.\.",
    "Starting to load model %s...",
    "v1/worker/gpu_model_runner.py::GPUModelRunner.load_model (0.11.0); worker/model_runner.py (V0)",
)
# V1 before 0.11 names its engine in the backend line: "Using Flash Attention backend on V1 engine."
# (platforms/cuda.py::CudaPlatform.get_attn_backend_cls, 0.7–0.10; app.core.logs.startup.config reads the
# backend's name from the same line)
V1_ENGINE_BACKEND = VllmLine(" on V1 engine", r"\bbackend on V1 engine\b")
# a V1 object's repr: "<vllm.v1.worker.gpu_worker.Worker object at 0x…>" (utils.py::warn_for_unimplemented_methods
# names the worker class it checks, 0.8–0.10; any module under vllm.v1 is V1's)
V1_OBJECT_REPR = VllmLine("<vllm.v1.", r"<vllm\.v1\.\w{1,80}")
# a frame of V0's engine module: vllm/engine/llm_engine.py and async_llm_engine.py held V0's LLMEngine and
# AsyncLLMEngine (from 0.11.0 both only re-export V1's classes: "LLMEngine = V1LLMEngine", "AsyncLLMEngine =
# AsyncLLM"). Up to 0.10.2 their from_engine_args is the one function V1 runs too: it dispatches to V1's class
# when VLLM_USE_V1 (engine/llm_engine.py::LLMEngine.from_engine_args, "engine_cls = V1LLMEngine", 0.10.2), so
# that frame names no engine (failures._v0_engine_frame reads the function)
V0_ENGINE_FRAME = VllmLine(
    'File "',
    r'File "[^"]{0,300}/vllm/engine/(?:llm_engine|async_llm_engine)\.py", line \d{1,7},? in (\w{1,80})',
)
V1_DISPATCHERS = frozenset({"from_engine_args"})
# methods only V0's worker has (worker/worker.py::Worker.determine_num_available_blocks, 0.10.x; V1's
# v1/worker/gpu_worker.py has determine_available_memory instead, 0.11.0, and 0.8–0.10 warn
# "Methods determine_num_available_blocks,… not implemented in <vllm.v1.worker.gpu_worker.Worker …>")
V0_ONLY_METHODS = frozenset({"determine_num_available_blocks"})
# V1's worker processes name themselves in their log prefix (v1/executor/multiproc_executor.py::WorkerProc.
# setup_proc_title_and_log_prefix, 0.19.0, 0.33.0: decorate_logs("Worker" plus "_DP{r}", "_PP{r}", "_PCP{r}",
# "_TP{r}", "_DCP{r}", "_EP{r}" for each dimension above 1); 0.10.x "VllmWorker TP0" (a space before the ranks).
# V0's multiprocessing worker is "VllmWorkerProcess" (executor/multiproc_worker_utils.py, to 0.10.2) and Ray's
# "RayWorkerWrapper" runs either engine, so neither is read here
V1_WORKER_TAG = VllmLine(
    "Worker",
    r"\((?:Worker(?:_(?:DP|PP|PCP|TP|DCP|EP)\d{1,4}){0,6}|VllmWorker (?:PP|TP)\d{1,4}(?:_\w{1,8}){0,5}) pid=\d{1,9}\)",
)
# vLLM's platform names itself when no attention backend fits ("No valid attention backend found for
# {cls.device_name} with …", platforms/cuda.py and platforms/rocm.py get_attn_backend_cls, 0.19.0, 0.33.0;
# device_name is "cuda" / "rocm"): app.core.logs.startup.config._platform_module reads the stack from group 1
NO_BACKEND_FOR_PLATFORM = VllmLine(
    "No valid attention backend found for",
    r"No valid attention backend found for (cuda|rocm) with\b",
    "No valid attention backend found for %s with %s. Reasons: %s.",
    "platforms/cuda.py / platforms/rocm.py::get_attn_backend_cls (0.19.0, 0.33.0)",
)
# CUDA's runtime error names ("Search for `cudaErrorStreamCaptureUnsupported' in https://docs.nvidia.com/cuda/…", the
# line torch's CUDA check adds, club-3090#106): HIP's are hipError… (vllm_text's HIP_ERROR_CODE), so this one is CUDA
CUDA_ERROR_NAME = VllmLine("cudaError", r"\bcudaError[A-Z]\w{1,40}")
# the scheduling mode the engine resolved (config/vllm.py::VllmConfig.__post_init__, 0.19.0: logger.info_once(
# "Asynchronous scheduling is %s.", "enabled" if … else "disabled"); 0.23.0 prints it, vllm#46169; gone by 0.30.0)
ASYNC_SCHEDULING = VllmLine(
    "Asynchronous scheduling is ",
    r"Asynchronous scheduling is (enabled|disabled)\.",
    "Asynchronous scheduling is %s.",
    "config/vllm.py::VllmConfig.__post_init__ (0.19.0)",
)
# a traceback frame of vLLM's platform module (File ".../vllm/platforms/cuda.py", line 341, in get_attn_backend_cls;
# vllm#30214): that platform's class ran, as the "[cuda.py:N]" logger tag says (vllm_text's PLATFORM_MODULE); group 1
# is the stack for app.core.logs.startup.config._platform_module
PLATFORM_FRAME = VllmLine("/platforms/", r'File "[^"]{0,300}/vllm/platforms/(cuda|rocm)\.py", line \d{1,7}')
# the dtype the engine fell back to when the card cannot run the checkpoint's: config/model.py::_resolve_auto_dtype
# (0.33.0; config/__init__.py in 0.10.x, tag [__init__.py:2768]) warns "Your device %s doesn't support %s. Falling back
# to %s for compatibility.", the device as "'<name>' (with compute capability <x.y>)" where the platform reports a
# capability (CUDA and ROCm cards; "'cpu'" alone on CPU). nlzy/vllm-gfx906#41 (MI50): "Your device 'Radeon Instinct
# MI50 32GB' (with compute capability 9.0) doesn't support torch.bfloat16. Falling back to torch.float16 …"
DTYPE_FALLBACK = VllmLine(
    "for compatibility",
    r"Your device '([^'\n]{1,120})'(?: \(with compute capability (\d{1,3}\.\d{1,3})\))? doesn't support "
    r"torch\.\w{1,16}\. Falling back to torch\.(\w{1,16}) for compatibility",
    "Your device %s doesn't support %s. Falling back to %s for compatibility.",
    "config/model.py::_resolve_auto_dtype (0.33.0)",
)
# NVIDIA's data-centre cards before the A100 carry their "Tesla" brand in the name torch and nvidia-smi print, where
# vllm_text.DEVICE_NAME reads "NVIDIA …" ("GPU 0: Tesla T4", collect_env on torch 2.3.0+cu121, vllm#7464)
TESLA_DEVICE_NAME = VllmLine(
    "Tesla ", r"(?:\bGPU \d{1,3}: |device_name=|\bon device: )(Tesla [\w.-]{1,24}(?: [\w.-]{1,24}){0,2})"
)
# V0's check that the card can run bfloat16 (worker.py::_check_if_gpu_supports_dtype, 0.7.3, at the worker's device
# init): "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your {gpu_name} GPU {compute_str}.",
# gpu_name the platform's device name, compute_str "has compute capability 7.5" or "does not have a compute capability";
# vllm#14817, substratusai/vllm-docker#37: "… Your Tesla T4 GPU has compute capability 7.5. …"
BF16_UNSUPPORTED = VllmLine(
    "Bfloat16 is only supported on GPUs",
    r"Bfloat16 is only supported on GPUs with compute capability of at least \d{1,3}\.\d{1,3}\. Your "
    r"(.{1,120}?) GPU (?:has compute capability (\d{1,3}\.\d{1,3})|does not have a compute capability)",
    "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your %s GPU %s.",
    "worker/worker.py::_check_if_gpu_supports_dtype (0.7.3)",
)
# the dtype the model config resolved when it differs from the checkpoint's: config.py::_get_and_verify_dtype (0.7.3;
# config/model.py in 0.33.0) logs "Upcasting %s to %s." (to float32) and "Downcasting %s to %s." (from float32) at INFO
# and "Casting %s to %s." (between float16 and bfloat16) as a warning, the second dtype the one it returns; vllm#14071
# (0.7.x, 2x T4): "[config.py:2552] Casting torch.bfloat16 to torch.float16."
DTYPE_CAST = VllmLine(
    "asting torch.",
    r"\b(?:Casting|Upcasting|Downcasting) torch\.\w{1,16} to torch\.(\w{1,16})\.",
    "Casting %s to %s.",
    "config.py::_get_and_verify_dtype (0.7.3)",
)
# the platform's check of async output processing, which warns only when enforce-eager is on: platforms/cuda.py and
# rocm.py::is_async_output_supported (0.7.3, called from ModelConfig.verify_async_output_proc); vllm#14071 (0.7.x):
# "[cuda.py:95] To see benefits of async output processing, enable CUDA graph. Since, enforce-eager is enabled, …"
ASYNC_OUTPUT_EAGER = VllmLine(
    "Since, enforce-eager is enabled",
    r"Since, enforce-eager is enabled, async output processor cannot be used",
    "To see benefits of async output processing, enable CUDA graph. Since, enforce-eager is enabled, async output "
    "processor cannot be used",
    "platforms/cuda.py::is_async_output_supported (0.7.3)",
)
# the quantization method a checkpoint runs, from the model config's check: "%s quantization is not fully optimized
# yet. The speed can be slower than non-quantized models." (ModelConfig._verify_quantization, printed as
# [config.py:254] by 0.5.4 and [__init__.py:1171] by the 0.10.1 gfx906 fork, nlzy/vllm-gfx906#41; gone by 0.33.0)
QUANTIZATION_NOT_OPTIMIZED = VllmLine(
    "quantization is not fully optimized yet",
    r"\b(\w{1,40}) quantization is not fully optimized yet\b",
    "%s quantization is not fully optimized yet. The speed can be slower than non-quantized models.",
    "config ModelConfig._verify_quantization (0.5–0.10)",
)
# V0's config turns chunked prefill and prefix caching off for an MLA model after the scheduler printed "Chunked
# prefill is enabled …" (config.py::VllmConfig.__post_init__, 0.7.3: "MLA is enabled; forcing chunked prefill and
# prefix caching to be disabled.", printed as [config.py:3329] in a 0.7.3 vllm-ascend log)
MLA_DISABLES_CHUNKED_PREFILL = VllmLine(
    "forcing chunked prefill",
    r"MLA is enabled; forcing chunked prefill and prefix caching to be disabled",
    "MLA is enabled; forcing chunked prefill and prefix caching to be disabled.",
    "config.py::VllmConfig.__post_init__ (0.7.3)",
)
# a frame of V0's multiprocessing front end: vllm/engine/multiprocessing/engine.py (MQLLMEngine, run_mp_engine) and
# client.py (MQLLMEngineClient), which 0.8–0.10's api_server starts only when VLLM_USE_V1 is off (V1 runs AsyncLLM's
# engine-core process instead, v1/engine/core.py) and which 0.11.0 removed with V0 (0.33.0 has no engine/multiprocessing/)
V0_MP_ENGINE_FRAME = VllmLine(
    'File "', r'File "[^"]{0,300}/vllm/engine/multiprocessing/(?:engine|client)\.py", line \d{1,7}'
)
# V0's multiprocessing front end in its own words: the API server's "Engine process failed to start. See stack trace for
# the root cause." (entrypoints/openai/api_server.py::build_async_engine_client_from_engine_args, raised only on its
# MQLLMEngine branch, 0.6.3–0.10.2; the V1 branch fails with "Engine core initialization failed") and MQLLMEngineClient's
# DEBUG "Waiting for output from MQLLMEngine." (engine/multiprocessing/client.py, 0.6.3–0.10.2); 0.11.0 removed both with V0
V0_ENGINE_PROCESS_FAILED = VllmLine(
    "Engine process failed to start",
    r"\bEngine process failed to start\b",
    "Engine process failed to start. See stack trace for the root cause.",
    "entrypoints/openai/api_server.py::build_async_engine_client_from_engine_args (0.6.3–0.10.2)",
)
V0_MQ_CLIENT_WAITING = VllmLine(
    "Waiting for output from MQLLMEngine",
    r"\bWaiting for output from MQLLMEngine\b",
    "Waiting for output from MQLLMEngine.",
    "engine/multiprocessing/client.py::MQLLMEngineClient.run_heartbeat_loop (0.6.3–0.10.2)",
)
# the installed release as a report or a caller names it: vLLM's collect_env ("vLLM Version                 : 0.10.2",
# collect_env.py's env_info template, 0.10.2) and a library that checks it (MinerU's "… and vllm version: 0.10.1.1 >=
# 0.10.1, enable custom_logits_processors", opendatalab/MinerU#3582)
REPORTED_VERSION = VllmLine(
    "ersion",
    r"\b[vV](?:LLM|llm) [Vv]ersion[ \t]{0,40}:[ \t]{0,8}" + VERSION,
    "vLLM Version                 : {vllm_version}",
    "collect_env.py (0.10.2); MinerU's custom_logits_processors check",
)
# collect_env's card line where it names the card on the same line: a ROCm build prints torch's device name and its gfx
# architecture ("GPU models and configuration: AMD Instinct MI300X (gfx942:sramecc+:xnack-)", vllm#16474; collect_env.py
# ::get_gpu_info, 0.10.2: get_device_name(None) + " (" + gcnArchName + ")"); an NVIDIA host prints nvidia-smi -L's
# "GPU 0: NVIDIA …" rows, which vllm_text.DEVICE_NAME reads; "Could not collect" names nothing
COLLECT_ENV_GPU = VllmLine(
    "GPU models and configuration",
    r"\bGPU models and configuration[ \t]{0,40}:[ \t]{0,8}(?!GPU \d|Could not collect)"
    r"(\S[^\n(]{0,120}?)[ \t]{0,8}(\(gfx\w{1,12}[^)\n]{0,60}\))?[ \t]*$",
    "GPU models and configuration : {nvidia_gpu_models}",
    "collect_env.py::get_gpu_info (0.10.2)",
)
# the engine in a worker's or the engine core's own words (heldout-2026-12y): V0's multiprocessing worker prefixes its
# lines "(VllmWorkerProcess pid=N)" (executor/multiproc_worker_utils.py, name="VllmWorkerProcess", 0.6.3–0.10.2, V0's
# executor only); 0.8–0.9's V1 multiproc worker "(VllmWorker rank=N pid=M)" (v1/executor/multiproc_executor.py; 0.10.2
# names it "Worker_TP…", V1_WORKER_TAG); V1's engine-core process logs "Waiting for init message from front-end."
# (v1/engine/core.py::EngineCoreProc, INFO in 0.10.2, DEBUG in 0.33.0)
V0_WORKER_PROCESS_TAG = VllmLine("(VllmWorkerProcess pid=", r"\(VllmWorkerProcess pid=\d{1,9}\)")
V1_WORKER_RANK_TAG = VllmLine("(VllmWorker rank=", r"\(VllmWorker rank=\d{1,4} pid=\d{1,9}\)")
V1_CORE_WAITING = VllmLine(
    "Waiting for init message from front-end",
    r"\bWaiting for init message from front-end\b",
    "Waiting for init message from front-end.",
    "v1/engine/core.py (0.10.2, 0.33.0)",
)
# Ascend's device tool, whose table people paste with a start-up ("| npu-smi 25.0.rc1.1   Version: 25.0.rc1.1 |",
# vllm-ascend#1279, #3785): only an Ascend host has it
NPU_SMI = VllmLine("npu-smi", r"\bnpu-smi\b")
# --- the GPU stack, beyond vllm_text's ROCm markers (heldout-2026-12w) ---
# a vLLM module named rocm_*.py in the logger tag: V0's ROCm attention backend ("[rocm_flash_attn.py:569] Using CK FA in
# ROCmBackend", attention/backends/rocm_flash_attn.py to 0.10, vllm#20069), V1's (v1/attention/backends/rocm_attn.py,
# rocm_aiter_fa.py, rocm_aiter_unified_attn.py, 0.33.0); only a ROCm build runs and logs from them
ROCM_MODULE_TAG = VllmLine("[rocm_", r"\[(?:[\w/]{1,80}/)?rocm_\w{1,40}\.py:\d{1,5}\]")
# V0's ROCm attention backend named in its selection line, "Using ROCmFlashAttention backend." (attention/selector.py::
# get_attn_backend under _Backend.ROCM_FLASH, 0.5.0; platforms/rocm.py::RocmPlatform.get_attn_backend_cls, 0.7-0.9; the
# backend class is attention/backends/rocm_flash_attn.py::ROCmFlashAttentionBackend): only a ROCm build selects it.
# ServerlessLLM's ROCm page (heldout-2026-12ze) prints it as the run's only ROCm sign
ROCM_FLASH_ATTN = VllmLine(
    "ROCmFlashAttention",
    r"\bUsing ROCmFlashAttention backend\b",
    "Using ROCmFlashAttention backend.",
    "attention/selector.py (0.5.0); platforms/rocm.py (0.7-0.9)",
)
# V0's config turning custom all-reduce off on ROCm: "Disabled the custom all-reduce kernel because it is not supported
# on AMD GPUs." (config.py, 0.7.2, under current_platform.is_rocm(); lamikr/rocm_sdk_builder#248). 0.33.0 words it
# "… not supported on current platform." (config/parallel.py, DEBUG) and names no platform, so only the AMD wording is read
AMD_ALLREDUCE_OFF = VllmLine(
    "not supported on AMD GPUs",
    r"\bcustom all-reduce kernel because it is not supported on AMD GPUs",
    "Disabled the custom all-reduce kernel because it is not supported on AMD GPUs.",
    "config.py (0.7.2)",
)
# torch's out-of-memory message continued on its own line ("torch.OutOfMemoryError: CUDA out of memory." then "Tried to
# allocate 252.00 MiB. GPU 0 has a total capacity of 10.57 GiB of which 163.12 MiB is free.", vllm#19445): the
# caching allocator's sentence (c10/cuda/CUDACachingAllocator.cpp) names the device's capacity
OOM_CAPACITY_LINE = VllmLine(
    "has a total capacity of", r"\bGPU \d{1,3} has a total capacity of (" + G + r") GiB of which\b"
)
# --- Ascend, beyond vllm_text's markers (heldout-2026-12zg) ---
# a warning of torch_npu's C++ runtime, tagged with its source file: torch's TORCH_WARN prints "[W<date> <time> <file>:<line>]"
# and torch_npu's runtime files are NPU*.cpp (torch_npu/csrc/core/npu/NPUGraph.cpp::NPUGraph::capture_begin warns "Waiting
# for pending NCCL work to finish before starting graph capture.", Ascend/pytorch; torch's own CUDA files are CUDA*.cpp):
# "[rank0]:[W610 16:39:20.084416960 NPUGraph.cpp:223] Warning: …" (vllm-ascend#9691) is an NPU run with no other sign
TORCH_NPU_CPP_WARNING = VllmLine(".cpp:", r"\[W\d{3,4} [\d:.]{8,24} NPU\w{1,60}\.cpp:\d{1,6}\]")
# torch_npu's own C++ warnings carry the tag "compiler_depend.ts": the CMake dependency file of its target, which its
# errors print in full ("SetPrecisionMode:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:155 NPU function error",
# heldout-2026-12e) and its TORCH_WARN lines bare: "[rank0]:[W1210 03:09:10.966659833 compiler_depend.ts:187] Warning:
# Waiting for pending NCCL work to finish before starting graph capture." (heldout-2026-12zg, vllm-ascend#4807); torch's
# own CUDA builds tag the real source file (CUDAGraph.cpp, ProcessGroupNCCL.cpp). The date/time is absent in older torch
TORCH_NPU_DEPEND_WARNING = VllmLine(
    "compiler_depend.ts:", r"\[W(?:\d{3,4} [\d:.]{8,24})? compiler_depend\.ts:\d{1,6}\]"
)
# CANN's runtime reading the SoC it runs on: "[Init][PlatformInfo]init runtime platform info failed, SocVersion =
# Ascend910B2" (EH9999, heldout-2026-12e and -12zh): an Ascend chip, whatever else the run prints
CANN_SOC_VERSION = VllmLine("SocVersion", r"\bSocVersion\s?=\s?Ascend\w{1,20}")
