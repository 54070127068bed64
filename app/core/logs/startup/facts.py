"""What a start-up log says: the typed facts, their evidence, and the size limits of a paste."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.core.specs import ReleaseDefaultFlags
from app.core.text import Msg

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
    "mamba_blocks",  # 0.20.2+: "max_num_seqs (N) exceeds available Mamba cache blocks (M)" (full CUDA graphs)
    "autofit_failed",
    "device_fault",  # illegal memory access, GPU hang / memory access fault, a core dump: not a budget
    "npu_error",  # an Ascend operator or ACL call failed (torch_npu "NPU function error", ERR… call acl api failed)
    "graph_refused",  # vLLM refused the CUDA-graph / compilation settings (cudagraph_mode, capture sizes, a -cc key)
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


class LogFacts(ReleaseDefaultFlags):
    """Everything a vLLM start-up log says about memory, blocks and configuration.

    Every field is ``None`` when the log does not say it. Per-GPU figures are rank 0's
    (only rank 0 prints "Available KV cache memory" in most versions, reference §1);
    ``kv_cache_bytes_min_rank`` is the smallest value any rank printed. The flags whose unset value is
    the release's default (``ReleaseDefaultFlags``: utilization, block size, prefix caching, …) are
    inherited from the one declaration ServeConfig shares, with its bounds (a value outside them is
    dropped as unreadable, parser._build).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    # identity and configuration (engine-config line, "non-default args", args Namespace)
    vllm_version: str | None = None
    engine: EngineName | None = None
    model: str | None = None
    max_model_len: int | None = None
    tensor_parallel_size: int | None = None
    pipeline_parallel_size: int | None = None
    # a lower bound from worker names: vLLM names a worker `_TP{rank}` / `_PP{rank}` only when that size is above
    # 1 (v1/executor/multiproc_executor.py, 0.33.0), so `Worker_TP3` proves a size of at least 4, never exactly 4
    tensor_parallel_at_least: int | None = None
    pipeline_parallel_at_least: int | None = None
    kv_cache_dtype: str | None = None
    block_size_forced: int | None = None  # a backend / platform overrode the block size (reference §5.1, §9)
    dtype: str | None = None
    enforce_eager: bool | None = None
    max_num_seqs: int | None = None
    kv_cache_memory_specified: bool | None = None  # --kv-cache-memory-bytes was used
    cpu_offload_gb: float | None = None
    mm_processor_cache_gb: float | None = None  # --mm-processor-cache-gb (GiB, "non-default args")
    # the extras (app/core/extras.py), named like ServeConfig's fields so the doctor's prediction gets them
    data_parallel_size: int | None = None
    enable_expert_parallel: bool | None = None
    speculative_config: dict[str, Any] | None = None  # --speculative-config as vLLM printed it
    enable_lora: bool | None = None
    max_loras: int | None = None
    max_lora_rank: int | None = None
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
    # 0.30+, several KV groups: each group's block size as printed, and the scheduler's block (their LCM)
    kv_group_block_sizes: list[int] | None = None
    scheduler_block_size: int | None = None
    num_cpu_blocks: int | None = None
    kv_tokens: int | None = None
    max_concurrency: float | None = None
    max_concurrency_tokens_per_request: int | None = None
    # the newest release that prints a line the log has, when the log prints no version of its own (vllm-ascend's
    # "Available memory: <bytes>, total memory: <bytes>" is v0.13.0 worker.py's; v0.15.0rc1 replaced that budget)
    release_at_most: str | None = None
    # failure (reference §4.4)
    error: str | None = None
    error_kind: ErrorKind | None = None
    failure_stage: Stage | None = None  # where the start-up was when it failed (a traceback's frames say)
    estimated_max_model_len: int | None = None
    kv_cache_needed_bytes: int | None = None  # V1: KV one max-length request needs
    # backend and device (reference §5, §9)
    attention_backend: str | None = None
    device_type: str | None = None
    # which GPU stack printed the log when it says ("detected platform rocm", a HIP error, the HSA runtime's
    # faults, an AITER or gfx line; "CUDA out of memory", an NVIDIA card's name): a card of the other is ruled out
    gpu_platform: Literal["cuda", "rocm"] | None = None
    device_name: str | None = None  # "NVIDIA H100 80GB HBM3" when the paste names the card
    is_ascend: bool = False
    # the run reached "Application startup complete" / "init engine (profile, create kv cache, …) took": the pool
    # was sized and allocated, whether or not the paste quotes its KV lines
    startup_completed: bool = False
    # bookkeeping
    runs_found: int = 0
    evidence: dict[str, Evidence] = Field(default_factory=dict)
    recognised_lines: int = 0
    notes: list[Msg] = Field(default_factory=list)  # Text sentences (pydantic would copy a str)
