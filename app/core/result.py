"""The estimator's typed answer: every partition, the block math, and how each was obtained."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from app.core.text import Msg
from app.core.verdicts import VerdictKey


class ExtraItem(BaseModel):
    """One consumer of the ledger. Bytes are per device (device) and for the whole server (host)."""

    model_config = ConfigDict(frozen=True)

    name: str  # stable key: "draft_model", "lora_slots", "expert_parallel", ...
    label: Msg
    device_bytes: int
    host_bytes: int = 0
    inside_profile: bool = True  # vLLM's profiling run sees it (so it shrinks the KV pool)
    flag: str
    source: str
    note: Msg = ""


# one vocabulary with the doctor (app.core.verdicts.VERDICTS); the planner answers fits, s_bound,
# n_bound, budget_bound or load_oom
Verdict = VerdictKey


class ErrorKind(StrEnum):
    """Why vLLM would refuse to start, so callers branch on a kind instead of on English text.

    The values are the log parser's names where it reads the same failure (app.core.logs.ErrorKind).
    """

    MAX_LEN_ABOVE_DERIVED = "max_len_above_derived"  # config check: --max-model-len above the model's
    STARTUP_FREE_MEMORY = "startup_free_memory"  # 0.10+: free memory at start-up below total x util
    LOAD_OOM = "load_oom"  # the weights alone do not fit the device: OOM while loading them
    NO_BLOCKS = "no_blocks"  # "No available memory for the cache blocks"
    MAX_LEN_TOO_LONG = "max_len_too_long"  # one request of max_model_len needs more KV than the pool
    MAMBA_BLOCKS = "mamba_blocks"  # 0.20.2+: full CUDA graphs need a Mamba block per decode sequence


class Term(BaseModel):
    """One line of the working shown to the user: a name, the formula with numbers, the value."""

    model_config = ConfigDict(frozen=True)

    name: Msg
    formula: str
    value: str
    exact: bool  # True: arithmetic vLLM also does; False: a model of something vLLM measures


class Range(BaseModel):
    model_config = ConfigDict(frozen=True)

    low: float
    expected: float
    high: float


class KVGroup(BaseModel):
    """One KV-cache group as vLLM's hybrid allocator forms it (reference §3.4)."""

    model_config = ConfigDict(frozen=True)

    kind: str  # full / sliding / chunked / mla / mamba
    num_layers: int  # layers of this rank in the group
    block_size: int
    page_size_bytes: int  # per layer, per block
    blocks_per_request: int  # cdiv(max_memory_usage_bytes, page) at max_model_len


class Estimate(BaseModel):
    """Per device of the tightest rank; integers in bytes (the CLI's --json object)."""

    model_config = ConfigDict(frozen=True)

    @property
    def ranks(self) -> int:
        """Devices one replica spans: TP x PP."""
        return self.tensor_parallel_size * self.pipeline_parallel_size

    # inputs as resolved (defaults filled in for the chosen vLLM version)
    model: str
    device: str
    vllm_version: str  # as requested, normalized (PEP 440): "0.19.2rc1.dev8+g4b7f5ea1a"
    vllm_rules_version: str  # the known release whose rules planned it (versions.bracket_of): "0.19.0"
    tensor_parallel_size: int
    pipeline_parallel_size: int
    gpu_memory_utilization: float
    kv_cache_dtype: str
    kv_dtype_bytes_per_element: int
    kv_cache_dtype_from_checkpoint: bool = (
        False  # `auto` took the dtype the checkpoint's quantization declares
    )
    max_num_seqs: int
    max_num_batched_tokens: int
    attention_backend: str

    # the partition of one device
    device_total_bytes: int
    budget_bytes: int  # total x utilization (or --kv-cache-memory-bytes path)
    weights_bytes: int
    activation_peak_bytes: int
    non_torch_bytes: int
    cuda_graph_bytes: int  # what the graphs take on the device
    cuda_graph_budgeted: bool  # subtracted before KV sizing in this version
    kv_cache_bytes: int  # "Available KV cache memory" of the binding rank (can be <= 0)
    # taken off the pool before vllm-ascend's 310P worker halves it (the runtime's context and other
    # processes' memory; 0 on every other worker): app.core.situations.cleared_before_halving_bytes
    held_at_start_bytes: int = 0
    unused_bytes: int  # total - budget (the 1 - utilization slack)
    # 0.34.0's extensible KV cache sized the pool after warmup, keeping its own margin (app.core.extensible_kv)
    extensible_kv_cache: bool = False

    # KV sizing, exact once kv_cache_bytes is known
    kv_bytes_per_token: int  # per device, summed over this rank's layers at full length
    block_size: int
    bytes_per_block: int
    num_gpu_blocks: int
    kv_tokens: int  # "GPU KV cache size: N tokens" as this version prints it
    max_concurrency: float  # "Maximum concurrency for L tokens per request: X x"
    max_model_len: int
    groups: list[KVGroup]

    # verdict
    fits: bool
    verdict: Verdict
    error: str | None
    error_kind: ErrorKind | None = None
    estimated_max_model_len: int | None  # largest max_model_len that starts (binary search)

    log_lines: list[str]
    warnings: list[Msg]
    terms: list[Term]
    ranges: dict[str, Range] = {}  # low / expected / high of each modelled number and what follows
    borderline: bool = False  # the start-up verdict flips inside the ranges
    safe_max_model_len: int | None = None  # starts even at the low end of the KV range
    # memory outside one plain model (app/core/extras.py): per device, and the host RAM the server needs
    extras: list[ExtraItem] = []
    host_memory_bytes: int = 0
