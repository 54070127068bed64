"""The doctor's vocabulary: its thresholds (each with its origin) and the typed results it returns."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from app.core.backends import DEFAULT_BLOCK_SIZE as BACKEND_DEFAULT_BLOCK_SIZE
from app.core.logs import Evidence, MetricsFacts
from app.core.result import Estimate
from app.core.specs import GIB
from app.core.text import Msg
from app.core.verdicts import FailureKey, VerdictKey
from app.core.versions import KNOWN_VERSIONS, LAST_V0_RELEASE

FEW_BLOCKS = 10  # seed step 1: "块数为零或个位数" — zero or a single-digit number of blocks
# a printed total within 1.5 GiB of a catalog device is taken to be that device (the doctor's brief)
DEVICE_MATCH_TOLERANCE_BYTES = 3 * GIB // 2
# catalog cards this close to the printed total cannot be told apart by it: one card's reported total moves
# about this much between drivers (device_specs/devices.yaml: RTX 3090 23.69 -> 23.56 GiB, H200 139.72-139.81)
DEVICE_TIE_TOLERANCE_BYTES = 3 * GIB // 20  # 0.15 GiB
# the printed total is a catalog card's "very total" when it is that figure to the printed 0.01 GiB (half of it):
# 60.96 GiB printed for the 910B's 60.96, not 61.28 (an A3 die, vllm-ascend#3869) nor 79.25 for the H100's 79.1
DEVICE_SAME_TOTAL_BYTES = GIB // 200
KV_GAP_BYTES = GIB  # KV pool off the prediction by more than 1 GiB is called out
ACTIVATION_GAP_BYTES = GIB  # same for the activation peak
DEVICE_TOTAL_GAP_BYTES = GIB // 2  # the card reports a total this far from the catalog's
WEIGHTS_GAP_FRACTION = 0.05  # weights 5 % off params × b ÷ TP: another dtype, quantization or model
WEIGHTS_HEAVY_SHARE = 0.8  # weights above 80 % of the budget: reduce weights first (seed step 2)
# vLLM's per-release facts live in versions.py and backends.py; these names say what the doctor uses them for
DEFAULT_BLOCK_SIZE = BACKEND_DEFAULT_BLOCK_SIZE  # --block-size when nothing else says (reference §5.1)
V0_FALLBACK_VERSION = KNOWN_VERSIONS[0]  # oldest release the planner offers: V0 logs that print no version
LAST_V0_VERSION = LAST_V0_RELEASE  # the newest offered release whose default engine is V0 (reference §1)
MAX_EXCERPT_ERROR_CHARS = 240  # an error quoted in a trial's detail is clipped to this

# Errors that say the budget, not the length, is short (reference §4.4): no shorter S helps. An
# out-of-memory in the profile run is the activation peak (max_num_batched_tokens), not S; one while
# allocating the sized pool is memory outside vLLM's accounting, and the pool does not depend on S.
BUDGET_ERRORS = frozenset({"no_blocks", "startup_free_memory", "autofit_failed", "torch_oom", "kv_alloc_oom"})
# Errors that refuse the number of sequences, not the length or the budget: 0.20.2+ "max_num_seqs (N) exceeds
# available Mamba cache blocks (M)" (config/compilation.py, full CUDA graphs need one Mamba block per decode
# sequence). The pool was sized; up to M sequences start, so the verdict is the planner's: N-side.
SEQUENCE_ERRORS = frozenset({"mamba_blocks"})
# Failures that are their own verdict: the KV pool is not (or not yet) the question.
FAILURE_VERDICTS: dict[str, FailureKey] = {
    "load_oom": "load_oom",
    "graph_oom": "graph_oom",
    "startup_failed": "failed",
    "device_fault": "failed",  # illegal memory access, GPU hang, core dump: a fault, not a budget
    "npu_error": "failed",  # an Ascend operator / ACL call failed
    "graph_refused": "failed",  # a cudagraph_mode / capture-size / -cc key vLLM refuses: the flags, not memory
}
# what a device must offer for a fact the log prints (vLLM's own checks; device catalog capabilities)
BF16_MIN_SM = (
    80  # platforms/cuda.py: "Bfloat16 is only supported on GPUs with compute capability of at least 8.0"
)
BACKEND_MIN_SM = {  # v1/attention/backends/*: supports_compute_capability
    "FLASH_ATTN": 80,
    "FLASH_ATTN_MLA": 90,
    "FLASHMLA": 90,
    "FLASHMLA_SPARSE": 90,
}

Overall = VerdictKey
StepStatus = Literal["ok", "info", "warn", "fail", "unknown"]
StepKey = Literal["kv_lines", "budget", "demand", "cause", "fallbacks"]
TrialKey = Literal["as_configured", "half_length", "one_sequence"]
TrialSource = Literal["log", "planner", "arithmetic", "none"]
DeviceSource = Literal["hint", "printed_name", "printed_total", "ambiguous", "replay", "custom", "none"]
Unit = Literal["bytes", "count", "tokens", "ratio"]


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DiagnosisFacts(Frozen):
    """What the log says, under the estimator's names; ``None`` where the log does not say."""

    vllm_version: str | None = None
    engine: str | None = None
    model: str | None = None
    max_model_len: int | None = None
    tensor_parallel_size: int | None = None
    pipeline_parallel_size: int | None = None
    tensor_parallel_at_least: int | None = None  # worker names bound the size from below (LogFacts)
    pipeline_parallel_at_least: int | None = None
    gpu_memory_utilization: float | None = None
    dtype: str | None = None
    kv_cache_dtype: str | None = None
    block_size: int | None = None
    max_num_seqs: int | None = None
    attention_backend: str | None = None
    device_type: str | None = None
    gpu_platform: str | None = None  # "cuda" / "rocm" when the log names its GPU stack (LogFacts)
    device_total_bytes: int | None = None
    weights_bytes: int | None = None
    activation_peak_bytes: int | None = None
    non_torch_bytes: int | None = None
    kv_cache_bytes: int | None = None
    num_gpu_blocks: int | None = None
    kv_group_block_sizes: list[int] | None = None  # 0.30+: printed per KV group (LogFacts)
    scheduler_block_size: int | None = None  # their LCM, as printed
    kv_tokens: int | None = None
    max_concurrency: float | None = None
    estimated_max_model_len: int | None = None
    error: str | None = None
    error_kind: str | None = None


class Step(Frozen):
    key: StepKey
    title: Msg
    verdict: Msg  # a few words for the badge
    status: StepStatus
    explanation: Msg
    evidence: list[Evidence]


class Trial(Frozen):
    """One of the seed's step-4 experiments and who answered it."""

    key: TrialKey
    label: Msg
    starts: bool | None
    source: TrialSource
    detail: Msg


class ComparisonRow(Frozen):
    """The log's number beside the planner's prediction for the same configuration."""

    key: str
    label: Msg
    unit: Unit
    actual: float | None
    predicted: float | None
    gap: float | None  # actual − predicted
    note: Msg | None = None


class Diagnosis(Frozen):
    facts: DiagnosisFacts
    verdict: Overall
    headline: Msg
    remedies: list[Msg]
    steps: list[Step]
    trials: list[Trial]
    metrics: MetricsFacts | None
    prediction: Estimate | None
    comparison: list[ComparisonRow]
    model_id: str | None  # the catalog model the log's model resolved to
    device_id: str | None
    device_source: DeviceSource
    device_reasoning: list[Msg]  # how the device was chosen, and which devices the log rules out
    # "ambiguous" with one tied card whose catalog total is the printed one: that card (the others are near it)
    device_very_total: str | None
    vllm_version_used: str | None  # the release whose rules the prediction used
    target_concurrency: int  # N used in steps 3 and 4 (1 when none was given)
    planner_inputs: dict[str, str]  # planner query parameters recovered from the log
    # why planner_inputs' vllm_version is not the printed one (a V0 run of a V1 release), else None
    planner_version_note: Msg | None = None
    recognised: bool  # anything at all was read from the paste
    notes: list[Msg]
