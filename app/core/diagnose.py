"""The doctor: a pasted vLLM start-up log and/or Prometheus scrape -> the seed's five-step diagnosis.

Source: /work/shared/seed/kv-cache-max-model-len.zh.md, "定位按五步走":

1. read the KV lines (blocks, bytes per block, pool); zero or a handful of blocks means the budget
   went to weights and activation, not to the context;
2. back-compute where the budget went (weights ≈ params × b ÷ TP; the rest is activation/workspace);
3. the demand from the formula at S = max_model_len and N = the target concurrency;
4. S-side, N-side or budget: halve --max-model-len -> starts -> S; concurrency 1 -> starts -> N;
   neither -> budget;
5. silent fallbacks: concurrency reached vs set, attention backend used vs expected, block size.

Each trial of step 4 is answered by the log when the log answers it, else by the estimator replayed
over the log's own KV pool ("planner"), else by arithmetic on the printed numbers. The estimator's
prediction of the same configuration is laid beside the log's numbers with the gaps called out.

Pure: no I/O, no web imports. :func:`diagnose` never raises on any text; it raises a
:class:`PlannerError` only for an explicit device hint that is not in the catalog (field
``device``) and, from the parser, for a log longer than ``MAX_LOG_CHARS`` (field ``log``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from app.core import catalog
from app.core.errors import PlannerError, UnknownModelError
from app.core.estimate import estimate
from app.core.logs import Evidence, LogFacts, MetricsFacts, parse_metrics, parse_startup_log
from app.core.plan import apply_quantization_flag, custom_device
from app.core.result import Estimate
from app.core.specs import GIB, KV_CACHE_DTYPES, DeviceSpec, ModelSpec, ServeConfig
from app.core.text import SEMICOLON, SPACE, Msg, Text, TextList
from app.core.verdicts import VERDICTS, VerdictKey, remedies
from app.core.versions import DEFAULT_VERSION, KNOWN_VERSIONS, parse_version, rules_for

FEW_BLOCKS = 10  # seed step 1: "块数为零或个位数" — zero or a single-digit number of blocks
# a printed total within 1.5 GiB of a catalog device is taken to be that device (the doctor's brief)
DEVICE_MATCH_TOLERANCE_BYTES = 3 * GIB // 2
KV_GAP_BYTES = GIB  # KV pool off the prediction by more than 1 GiB is called out
ACTIVATION_GAP_BYTES = GIB  # same for the activation peak
DEVICE_TOTAL_GAP_BYTES = GIB // 2  # the card reports a total this far from the catalog's
WEIGHTS_GAP_FRACTION = 0.05  # weights 5 % off params × b ÷ TP: another dtype, quantization or model
WEIGHTS_HEAVY_SHARE = 0.8  # weights above 80 % of the budget: reduce weights first (seed step 2)
DEFAULT_BLOCK_SIZE = 16  # vLLM's --block-size default (seed; reference §5.1)
V0_FALLBACK_VERSION = "0.6.6"  # oldest release the planner offers: V0 logs that print no version
LAST_V0_VERSION = "0.7.3"  # V0 was the default engine before 0.8.0 (reference §1)
CUDA_GRAPHS_BUDGETED_FROM = (0, 20, 0)  # graphs are subtracted before KV sizing from 0.20 (reference §2.6)
MAX_EXCERPT_ERROR_CHARS = 240  # an error quoted in a trial's detail is clipped to this

# A length worth serving (seed step 4: "S when some useful length fits, budget only when none does"):
# a chat turn with a system prompt is about 1k tokens; a shorter max_model_len serves nothing real.
# For a short S the seed's own test applies: half of S is useful.
MIN_USEFUL_LEN_TOKENS = 1024
# Errors that say the budget, not the length, is short (reference §4.4): no shorter S helps. An
# out-of-memory in the profile run is the activation peak (max_num_batched_tokens), not S.
BUDGET_ERRORS = frozenset({"no_blocks", "startup_free_memory", "autofit_failed", "torch_oom"})
# Failures that are their own verdict: the KV pool is not (or not yet) the question.
FAILURE_VERDICTS: dict[str, VerdictKey] = {
    "load_oom": "load_oom",
    "graph_oom": "graph_oom",
    "startup_failed": "failed",
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
DeviceSource = Literal["hint", "printed_total", "replay", "custom", "none"]
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
    gpu_memory_utilization: float | None = None
    dtype: str | None = None
    kv_cache_dtype: str | None = None
    block_size: int | None = None
    max_num_seqs: int | None = None
    attention_backend: str | None = None
    device_type: str | None = None
    device_total_bytes: int | None = None
    weights_bytes: int | None = None
    activation_peak_bytes: int | None = None
    non_torch_bytes: int | None = None
    kv_cache_bytes: int | None = None
    num_gpu_blocks: int | None = None
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
    vllm_version_used: str | None  # the release whose rules the prediction used
    target_concurrency: int  # N used in steps 3 and 4 (1 when none was given)
    planner_inputs: dict[str, str]  # planner query parameters recovered from the log
    recognised: bool  # anything at all was read from the paste
    notes: list[Msg]


# --------------------------------------------------------------------------------------------
# small helpers


def _gib(num_bytes: float) -> str:
    return f"{num_bytes / GIB:,.2f} GiB"


def _clip(text: str, limit: int = MAX_EXCERPT_ERROR_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the same split as app.core.logs, so line numbers agree
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
_LOADING_MODEL = re.compile(r"Starting to load model (\S+?)(?:\.\.\.|\s*$)")
_ARGS_BLOCK_SIZE = re.compile(r"(?:'block_size':\s*|\bblock_size=)(\d{1,5})\b")
MAX_SCAN_LINES = 200_000  # the two fallback scans below stop after this many lines


def _scan(text: str, needle: str, pattern: re.Pattern[str]) -> tuple[str, Evidence] | None:
    """First match of ``pattern`` on a line holding ``needle``: (group 1, the line as evidence)."""
    for index, raw in enumerate(_LINE_BREAK.split(text, maxsplit=MAX_SCAN_LINES)):
        if needle not in raw:
            continue
        line = _ANSI.sub("", raw).strip()
        found = pattern.search(line)
        if found is not None:
            return found.group(1), Evidence(line_no=index + 1, text=line[:2000])
    return None


def _evidence(facts: LogFacts, *names: str) -> list[Evidence]:
    seen: dict[int, Evidence] = {}
    for name in names:
        ev = facts.evidence.get(name)
        if ev is not None:
            seen.setdefault(ev.line_no, ev)
    return [seen[no] for no in sorted(seen)]


def _safe_estimate(
    *, model: ModelSpec, device: DeviceSpec, serve: ServeConfig, version: str | None, target: int | None
) -> Estimate | None:
    """The estimator, or None when this combination is one it refuses (or a value it cannot model)."""
    try:
        return estimate(
            model=model, device=device, serve=serve, vllm_version=version, target_concurrency=target
        )
    except (PlannerError, ValueError, ArithmeticError):
        return None


# --------------------------------------------------------------------------------------------
# recovering the configuration


@dataclass
class _Case:
    """Everything resolved from the paste; the steps read it."""

    facts: LogFacts
    evidence_model: Evidence | None
    model_name: str | None
    model: ModelSpec | None
    model_key: str | None  # the string that resolved in the catalog
    version: str | None
    serve: ServeConfig | None
    requested_block_size: int | None
    device: DeviceSpec | None
    device_source: DeviceSource
    prediction: Estimate | None
    target: int
    target_given: bool
    notes: list[str] = field(default_factory=list)
    device_reasoning: list[str] = field(default_factory=list)

    # --- derived numbers -------------------------------------------------------------------
    @property
    def max_model_len(self) -> int | None:
        value = self.facts.max_model_len
        return value if value is not None and value > 0 else None

    @property
    def printed_pool(self) -> int | None:
        """The KV pool that sized the blocks: the smallest rank's, 0 when vLLM found no blocks."""
        f = self.facts
        value = f.kv_cache_bytes_min_rank if f.kv_cache_bytes_min_rank is not None else f.kv_cache_bytes
        if value is None and (f.num_gpu_blocks == 0 or f.error_kind == "no_blocks"):
            return 0
        return value

    @property
    def pool(self) -> int | None:
        """The printed pool or, when only tokens are printed (0.7/0.8), tokens × the spec's bytes/token."""
        printed = self.printed_pool
        if printed is not None:
            return printed
        tokens = self.facts.kv_tokens
        if tokens is not None and self.prediction is not None and self.facts.error is None:
            return tokens * self.prediction.kv_bytes_per_token
        return None

    @property
    def graphs_budgeted(self) -> bool:
        """The CUDA-graph estimate came out of the budget before KV sizing (0.20+, reference §2.6)."""
        version = self.facts.vllm_version
        if version is None:
            return False
        try:
            return parse_version(version) >= CUDA_GRAPHS_BUDGETED_FROM
        except PlannerError:
            return False

    @property
    def block_size(self) -> int:
        f = self.facts
        if f.block_size_forced:
            return f.block_size_forced
        if self.prediction is not None:
            return self.prediction.block_size
        return f.block_size or self.requested_block_size or DEFAULT_BLOCK_SIZE

    @property
    def blocks(self) -> int | None:
        """Blocks as printed (V0) or as tokens ÷ block size (V1 prints tokens only)."""
        f = self.facts
        if f.num_gpu_blocks is not None:
            return f.num_gpu_blocks
        if f.kv_tokens is not None and f.error_kind is None:
            return f.kv_tokens // self.block_size
        return None

    @property
    def pool_tokens(self) -> int | None:
        f = self.facts
        if f.kv_tokens is not None:
            return f.kv_tokens
        if f.num_gpu_blocks is not None:
            return f.num_gpu_blocks * self.block_size
        return None

    def per_token(self) -> tuple[int | None, str]:
        """KV bytes per token per device, and where the figure came from."""
        if self.prediction is not None and self.prediction.kv_bytes_per_token > 0:
            return self.prediction.kv_bytes_per_token, Text("model spec (2 × L × H_kv/TP × D × b)")
        f, pool, tokens = self.facts, self.pool, self.pool_tokens
        if pool and tokens:
            return round(pool / tokens), Text("log: KV pool ÷ pool tokens")
        if f.kv_cache_needed_bytes and self.max_model_len:
            return round(f.kv_cache_needed_bytes / self.max_model_len), Text("log: KV needed ÷ max_model_len")
        return None, Text("not derivable from the paste")

    def bytes_per_block(self) -> tuple[int | None, str]:
        if self.prediction is not None and self.prediction.bytes_per_block > 0:
            return self.prediction.bytes_per_block, Text("model spec")
        f, pool = self.facts, self.pool
        if pool and f.num_gpu_blocks:
            return pool // f.num_gpu_blocks, Text("log: pool ÷ blocks")
        per_token, _ = self.per_token()
        if per_token:
            return per_token * self.block_size, Text(
                "per-token bytes × block size {block_size}", block_size=self.block_size
            )
        return None, ""

    def reached_concurrency(self) -> float | None:
        """Requests of max_model_len tokens the pool holds: printed, or pool tokens ÷ S."""
        f = self.facts
        if f.error is not None:
            return None
        if f.max_concurrency is not None:
            return f.max_concurrency
        tokens, length = self.pool_tokens, self.max_model_len
        if tokens is not None and length:
            return round(tokens / length, 2)
        return None

    @property
    def started(self) -> bool | None:
        f = self.facts
        if f.error is not None:
            return False
        printed = (f.kv_tokens, f.num_gpu_blocks, f.max_concurrency, f.kv_cache_bytes)
        if any(v is not None for v in printed) or f.kv_cache_memory_suggestion_bytes is not None:
            return True  # the suggestion line is printed after KV sizing and graph capture
        return None


def _resolve_model(name: str | None, quantization: str | None) -> tuple[ModelSpec | None, str | None, str]:
    """The catalog model for a log's model id (a local path is tried by its folder name too).

    Only the catalog is consulted: a pasted path must never open a file on this server.
    """
    if not name:
        return None, None, ""
    candidates = [name]
    tail = name.rstrip("/").rsplit("/", 1)[-1]
    if tail and tail != name and (name.startswith(("/", ".", "~")) or name.count("/") > 1):
        candidates.append(tail)
    for key in candidates:
        try:
            spec = catalog.find_model(key)
        except UnknownModelError:
            continue
        except PlannerError as exc:  # the catalog itself failed to load: say so, do not blame the log
            return (
                None,
                None,
                Text(
                    "the model catalog could not be read ({field}: {message})",
                    field=exc.field,
                    message=exc.message,
                ),
            )
        note = (
            ""
            if key == name
            else Text(
                "model {name!r} was matched to the catalog by its folder name {key!r}", name=name, key=key
            )
        )
        try:
            spec = apply_quantization_flag(spec, quantization)
        except PlannerError as exc:
            note = f"{note}; {exc.message}" if note else exc.message
        return spec, key, note
    return (
        None,
        None,
        Text("model {name!r} is not in the catalog: the prediction and the planner link need it", name=name),
    )


def _version(facts: LogFacts) -> tuple[str | None, str]:
    """The release whose rules replay this log, and a note when it had to be guessed."""
    printed = facts.vllm_version
    if printed is not None:
        try:
            rules = rules_for(printed)
        except PlannerError as exc:
            return None, Text(
                "{message}; predicted with {default_version}",
                message=exc.message,
                default_version=DEFAULT_VERSION,
            )
        if facts.engine == "v0" and rules.engine == "v1":
            return LAST_V0_VERSION, (
                Text(
                    "vLLM {printed} ran the V0 engine here; predicted with {last_v0_version}'s V0 rules",
                    printed=printed,
                    last_v0_version=LAST_V0_VERSION,
                )
            )
        return rules.version, ""
    if facts.engine == "v0":
        return (
            V0_FALLBACK_VERSION,
            Text(
                "the log prints no version; its V0 lines were replayed as {v0_fallback_version}",
                v0_fallback_version=V0_FALLBACK_VERSION,
            ),
        )
    return None, Text(
        "the log prints no version; predicted with {default_version}", default_version=DEFAULT_VERSION
    )


def _link_version(version: str | None) -> str | None:
    """The newest release the planner offers that is not newer than ``version``."""
    if version is None:
        return None
    try:
        wanted = parse_version(version)
    except PlannerError:
        return None
    older = [v for v in KNOWN_VERSIONS if parse_version(v) <= wanted]
    return older[-1] if older else None


SERVE_FIELDS = (
    "max_model_len",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "gpu_memory_utilization",
    "max_num_seqs",
    "max_num_batched_tokens",
    "enable_prefix_caching",
    "quantization",
)


def _serve(facts: LogFacts, requested_block_size: int | None) -> tuple[ServeConfig | None, list[str]]:
    """The `vllm serve` flags the log shows; a value ServeConfig refuses is dropped and reported."""
    data: dict[str, Any] = {
        name: getattr(facts, name) for name in SERVE_FIELDS if getattr(facts, name) is not None
    }
    if facts.kv_cache_dtype in KV_CACHE_DTYPES:
        data["kv_cache_dtype"] = facts.kv_cache_dtype
    if facts.dtype in ("bfloat16", "float16", "float32", "half"):
        data["dtype"] = facts.dtype
    if facts.enforce_eager is not None:
        data["enforce_eager"] = facts.enforce_eager
    if requested_block_size is not None:
        data["block_size"] = requested_block_size
    dropped: list[str] = []
    for _ in range(len(data) + 1):
        try:
            return ServeConfig.model_validate(data), dropped
        except ValidationError as exc:
            bad = {str(err["loc"][0]) for err in exc.errors() if err["loc"]} & data.keys()
            if not bad:
                break
            for name in sorted(bad):
                dropped.append(
                    Text(
                        "{name}={name2!r} from the log is outside what the planner models",
                        name=name,
                        name2=data.pop(name),
                    )
                )
    return None, dropped


def _platforms(facts: LogFacts) -> tuple[str, ...]:
    if facts.is_ascend or facts.device_type == "NPU":
        return ("npu",)
    if facts.device_type in (None, "GPU"):
        return ("cuda", "rocm")
    return (facts.device_type.lower(),)


def _ruled_out(device: DeviceSpec, facts: LogFacts) -> str | None:
    """Why the log rules this device out (a dtype or backend it cannot run), or None."""
    sm = device.sm
    if sm is None or device.platform != "cuda":
        return None
    if facts.dtype == "bfloat16" and sm < BF16_MIN_SM:
        return Text(
            "{id}: bfloat16 needs compute capability ≥ {need} (it has {cap})",
            id=device.id,
            need=BF16_MIN_SM / 10,
            cap=device.compute_capability,
        )
    need = BACKEND_MIN_SM.get(facts.attention_backend or "")
    if need is not None and sm < need:
        return Text(
            "{id}: {backend} needs compute capability ≥ {need} (it has {cap})",
            id=device.id,
            backend=facts.attention_backend,
            need=need / 10,
            cap=device.compute_capability,
        )
    return None


def _candidates(facts: LogFacts) -> tuple[list[DeviceSpec], list[str]]:
    """Catalog devices of the log's platform that can run what it printed, and why others cannot."""
    kept: list[DeviceSpec] = []
    reasons: list[str] = []
    for device in catalog.list_devices():
        if device.platform not in _platforms(facts):
            continue
        reason = _ruled_out(device, facts)
        if reason is None:
            kept.append(device)
        else:
            reasons.append(reason)
    return kept, reasons


def _nearest_device(total: int, candidates: list[DeviceSpec]) -> tuple[DeviceSpec | None, list[str]]:
    close = sorted(
        (abs(d.memory_total_bytes - total), i, d)
        for i, d in enumerate(candidates)
        if abs(d.memory_total_bytes - total) <= DEVICE_MATCH_TOLERANCE_BYTES
    )
    if not close:
        return None, []
    best = close[0][2]
    others = [d.id for _, _, d in close[1:] if d.memory_total_bytes != best.memory_total_bytes]
    same = [d.id for _, _, d in close[1:] if d.memory_total_bytes == best.memory_total_bytes]
    return best, others + same


def _replay_device(
    facts: LogFacts, model: ModelSpec, serve: ServeConfig, version: str | None, pool: int | None
) -> tuple[DeviceSpec | None, str]:
    """No total printed: the catalog device whose predicted KV pool is closest to the log's."""
    best: tuple[float, int, DeviceSpec] | None = None
    for i, device in enumerate(_candidates(facts)[0]):
        est = _safe_estimate(model=model, device=device, serve=serve, version=version, target=None)
        if est is None:
            continue
        if pool is not None:
            gap = abs(est.kv_cache_bytes - pool)
        elif facts.kv_tokens is not None:
            gap = abs(est.kv_tokens - facts.kv_tokens) * est.kv_bytes_per_token
        else:
            return None, ""
        if best is None or (gap, i) < (best[0], best[1]):
            best = (gap, i, device)
    if best is None or best[0] > DEVICE_MATCH_TOLERANCE_BYTES:
        return (
            None,
            Text(
                "the log prints no device total and no catalog device reproduces its KV pool; pass a device"
            ),
        )
    return best[2], (
        Text(
            "the log prints no device total; {id} was inferred by replaying this configuration on every catalog device (predicted KV pool within {best} of the log's) — pass a device to be sure",
            id=best[2].id,
            best=_gib(best[0]),
        )
    )


def _with_total(device: DeviceSpec, total: int | None) -> DeviceSpec:
    """The run's own total (what the runtime printed) beats the catalog's typical figure for the device."""
    if total is None or total <= 0:
        return device
    return device.model_copy(update={"memory_total_bytes": total})


def _device(
    facts: LogFacts,
    hint: str | None,
    model: ModelSpec | None,
    serve: ServeConfig | None,
    version: str | None,
    pool: int | None,
) -> tuple[DeviceSpec | None, DeviceSource, str]:
    total = facts.device_total_bytes
    if hint and hint.strip():
        hinted = catalog.find_device(hint)  # an unknown hint is the caller's error (field "device")
        return _with_total(hinted, total), "hint", ""
    if total is not None and total > 0:
        candidates, _ = _candidates(facts)
        best, others = _nearest_device(total, candidates)
        if best is not None:
            note = Text(
                "the card reports {total}: matched to {id} ({memory_total_bytes})",
                total=_gib(total),
                id=best.id,
                memory_total_bytes=_gib(best.memory_total_bytes),
            )
            if others:
                note += Text(
                    "; also within 1.5 GiB: {others} — pass a device to choose", others=", ".join(others[:4])
                )
            return _with_total(best, total), "printed_total", note
        try:
            return (
                custom_device(total / GIB),
                "custom",
                (
                    Text(
                        "no catalog device has {total}; predicted on a custom device of that size",
                        total=_gib(total),
                    )
                ),
            )
        except PlannerError:
            return None, "none", ""
    if model is not None and serve is not None and ((pool is not None and pool > 0) or facts.kv_tokens):
        device, note = _replay_device(facts, model, serve, version, pool)
        return device, ("replay" if device is not None else "none"), note
    return None, "none", ""


def _case(log_text: str, facts: LogFacts, target: int | None, device_hint: str | None) -> _Case:
    notes: list[str] = list(facts.notes)
    model_name, evidence_model = facts.model, None
    if model_name is None and log_text:
        found = _scan(log_text, "Starting to load model", _LOADING_MODEL)
        if found is not None:
            model_name, evidence_model = found
    requested_block_size = facts.block_size if facts.block_size_forced is None else None
    if facts.block_size_forced is not None and log_text:
        found_size = _scan(log_text, "args", _ARGS_BLOCK_SIZE)
        requested_block_size = int(found_size[0]) if found_size is not None else None
    model, model_key, model_note = _resolve_model(model_name, facts.quantization)
    if model_note:
        notes.append(model_note)
    version, version_note = _version(facts) if model is not None else (None, "")
    if version_note:
        notes.append(version_note)
    serve, dropped = _serve(facts, requested_block_size)
    notes.extend(dropped)
    pool_hint = (
        facts.kv_cache_bytes_min_rank if facts.kv_cache_bytes_min_rank is not None else facts.kv_cache_bytes
    )
    device, device_source, device_note = _device(facts, device_hint, model, serve, version, pool_hint)
    reasoning = [device_note] if device_note else []
    if device_source == "hint" and device is not None:
        reasoning.append(Text("{id} was chosen in the form", id=device.id))
        conflict = _ruled_out(device, facts)
        if conflict is not None:
            notes.append(Text("the chosen device does not match the log: {conflict}", conflict=conflict))
    elif device_source in ("printed_total", "replay", "none"):
        reasoning.extend(_candidates(facts)[1][:6])
    n = target if target is not None and target > 0 else 1
    prediction = None
    if model is not None and device is not None and serve is not None:
        prediction = _safe_estimate(model=model, device=device, serve=serve, version=version, target=n)
        if prediction is None:
            notes.append(Text("the planner refuses this configuration, so there is no prediction to compare"))
    return _Case(
        facts=facts,
        evidence_model=evidence_model,
        model_name=model_name,
        model=model,
        model_key=model_key,
        version=version,
        serve=serve,
        requested_block_size=requested_block_size,
        device=device,
        device_source=device_source,
        prediction=prediction,
        target=n,
        target_given=target is not None and target > 0,
        notes=notes,
        device_reasoning=reasoning,
    )


def _oracle(case: _Case, **changes: int) -> Estimate | None:
    """The estimator over the log's own KV pool (``--kv-cache-memory-bytes`` = the printed pool)."""
    if case.model is None or case.device is None or case.serve is None:
        return None
    update: dict[str, Any] = dict(changes)
    pool = case.pool
    if pool is not None:
        update["kv_cache_memory_bytes"] = max(0, pool)
    try:
        serve = ServeConfig.model_validate({**case.serve.model_dump(), **update})
    except ValidationError:
        return None
    return _safe_estimate(
        model=case.model, device=case.device, serve=serve, version=case.version, target=None
    )


# --------------------------------------------------------------------------------------------
# step 1: the KV lines


def _step_kv_lines(case: _Case) -> Step:
    f = case.facts
    title = Text("Read the KV-cache lines: blocks, bytes per block, pool")
    ev = _evidence(
        f, "num_gpu_blocks", "kv_cache_bytes_min_rank", "kv_cache_bytes", "kv_tokens", "max_concurrency"
    )
    pool, blocks, tokens = case.pool, case.blocks, case.pool_tokens
    per_block, per_block_from = case.bytes_per_block()
    if pool is None and blocks is None and tokens is None:
        return Step(
            key="kv_lines",
            title=title,
            verdict=Text("no KV lines"),
            status="unknown",
            explanation=(
                Text(
                    "The paste has no 'Available KV cache memory', '# GPU blocks' or 'KV cache size' line. Paste the start-up log up to 'init engine' (or the error that stopped it)."
                )
            ),
            evidence=ev,
        )
    parts: list[str] = []
    if blocks is not None:
        how = (
            "printed"
            if f.num_gpu_blocks is not None
            else Text(
                "= {tokens:,} tokens ÷ block size {block_size}", tokens=tokens, block_size=case.block_size
            )
        )
        parts.append(Text("{blocks:,} blocks ({how})", blocks=blocks, how=how))
    if per_block is not None:
        parts.append(
            Text(
                "{per_block:,.2f} MiB per block ({per_block_from})",
                per_block=per_block / 2**20,
                per_block_from=per_block_from,
            )
        )
    if pool is not None:
        how_pool = "" if case.printed_pool is not None else Text(" (= tokens × bytes per token; not printed)")
        parts.append(Text("KV pool {pool}{how_pool}", pool=_gib(pool), how_pool=how_pool))
    if tokens is not None:
        parts.append(Text("{tokens:,} tokens", tokens=tokens))
    summary = Text("{parts}.", parts=TextList(SEMICOLON, parts))
    empty = (pool is not None and pool <= 0) or blocks == 0 or f.error_kind == "no_blocks"
    if empty or (blocks is not None and blocks < FEW_BLOCKS):
        ev = _evidence(f, "num_gpu_blocks", "kv_cache_bytes_min_rank", "kv_cache_bytes", "kv_tokens", "error")
        return Step(
            key="kv_lines",
            title=title,
            verdict=Text("no blocks") if empty else Text("only {blocks} blocks", blocks=blocks),
            status="fail",
            explanation=(
                Text(
                    "{summary} Zero or a handful of blocks means weights and activation took the budget: the problem is not the context length.",
                    summary=summary,
                )
            ),
            evidence=ev,
        )
    verdict = (
        Text("{blocks:,} blocks", blocks=blocks)
        if blocks is not None
        else Text("{tokens:,} tokens", tokens=tokens)
        if tokens
        else _gib(pool or 0)
    )
    if pool is not None and blocks is not None:
        verdict += f" · {_gib(pool)}"
    return Step(
        key="kv_lines",
        title=title,
        verdict=verdict,
        status="ok",
        explanation=Text("{summary} Enough blocks: the budget left room for a KV pool.", summary=summary),
        evidence=ev,
    )


# --------------------------------------------------------------------------------------------
# step 2: where the budget went


def _expected_weights(case: _Case) -> tuple[int | None, str]:
    if case.model is None:
        return None, ""
    tp = case.serve.tensor_parallel_size if case.serve is not None else 1
    if case.prediction is not None:
        return case.prediction.weights_bytes, (
            Text(
                "params {params_total:,.2f} B × b ÷ TP {tp} (the planner's weight model)",
                params_total=case.model.params_total / 1000000000.0,
                tp=tp,
            )
        )
    if case.model.quantization is None:
        b = case.model.weight_dtype_bytes
        return (
            case.model.params_total * b // tp,
            Text(
                "params {params_total:,.2f} B × {b} B ÷ TP {tp}",
                params_total=case.model.params_total / 1000000000.0,
                b=b,
                tp=tp,
            ),
        )
    return None, ""


def _step_budget(case: _Case) -> Step:
    f = case.facts
    title = Text("Back-compute where the budget went")
    ev = _evidence(
        f,
        "device_total_bytes",
        "gpu_memory_utilization",
        "weights_bytes",
        "activation_peak_bytes",
        "non_torch_bytes",
        "cuda_graph_estimate_bytes",
        "kv_cache_bytes",
    )
    if case.evidence_model is not None:
        ev = sorted([*ev, case.evidence_model], key=lambda e: e.line_no)
    total, total_from = f.device_total_bytes, "printed"
    if total is None and case.device is not None:
        total, total_from = case.device.memory_total_bytes, Text("catalog {id}", id=case.device.id)
    util = f.gpu_memory_utilization
    if util is None and case.prediction is not None:
        util = case.prediction.gpu_memory_utilization
    expected, expected_how = _expected_weights(case)
    weights = f.weights_bytes
    lines: list[str] = []
    budget = round(total * util) if total is not None and util is not None else None
    if budget is not None and total is not None:
        lines.append(
            Text(
                "Budget = total {total} ({total_from}) × gpu_memory_utilization {util} = {budget}.",
                total=_gib(total),
                total_from=total_from,
                util=util,
                budget=_gib(budget),
            )
        )
    if weights is not None:
        lines.append(Text("Weights {weights} (log).", weights=_gib(weights)))
    if expected is not None:
        check = ""
        if weights is not None and expected > 0:
            off = (weights - expected) / expected
            check = (
                Text(
                    " — the log's weights are {off:+.0%} off: another dtype, quantization or model?", off=off
                )
                if abs(off) > WEIGHTS_GAP_FRACTION
                else Text(" — matches the log.")
            )
        lines.append(
            Text(
                "Expected ≈ {expected_how} = {expected}{check}",
                expected_how=expected_how,
                expected=_gib(expected),
                check=check,
            )
        )
    weights = weights if weights is not None else expected
    pool = case.pool
    graphs = (f.cuda_graph_estimate_bytes or 0) if case.graphs_budgeted else 0
    status: StepStatus = "info"
    verdict = Text("budget not printed")
    if budget is not None and weights is not None and pool is not None:
        non_torch = f.non_torch_bytes
        rest = budget - weights - max(pool, 0) - graphs - (non_torch or 0)
        label = (
            Text("activation and workspace")
            if non_torch is not None
            else Text("activation, workspace and non-torch")
        )
        terms = Text(
            "{budget} − weights {weights} − KV {pool}",
            budget=_gib(budget),
            weights=_gib(weights),
            pool=_gib(max(pool, 0)),
        )
        if non_torch is not None:
            terms += Text(" − non-torch {non_torch}", non_torch=_gib(non_torch))
        if graphs:
            terms += Text(" − CUDA graphs {graphs}", graphs=_gib(graphs))
        lines.append(
            Text("The difference is {label}: {terms} = {rest}.", label=label, terms=terms, rest=_gib(rest))
        )
        if f.activation_peak_bytes is not None:
            lines.append(
                Text(
                    "The log's own activation peak: {activation_peak_bytes}.",
                    activation_peak_bytes=_gib(f.activation_peak_bytes),
                )
            )
        share = weights / budget if budget > 0 else 1.0
        verdict = Text("weights {share:.0%} of budget", share=share)
        if weights >= budget:
            status, verdict = "fail", Text("weights exceed the budget")
            lines.append(Text("The weights alone do not fit the budget: quantize them or raise TP."))
        elif share >= WEIGHTS_HEAVY_SHARE or pool <= 0:
            status = "fail" if pool <= 0 else "warn"
            lines.append(
                Text("Weights take most of the budget: reduce weight memory first (quantization, higher TP).")
            )
        else:
            status = "ok"
            lines.append(Text("KV gets {pool:.0%} of the budget.", pool=max(pool, 0) / budget))
    elif weights is not None and pool is not None:
        verdict = Text("weights {weights} · KV {pool}", weights=_gib(weights), pool=_gib(max(pool, 0)))
        lines.append(
            Text("The log prints no device total and the device is unknown: pass a device to close the sum.")
        )
    if not lines:
        lines.append(Text("The log prints neither the budget nor the weights."))
        status, verdict = "unknown", Text("not printed")
    return Step(
        key="budget",
        title=title,
        verdict=verdict,
        status=status,
        explanation=TextList(SPACE, lines),
        evidence=ev,
    )


# --------------------------------------------------------------------------------------------
# step 3: demand from the formula


def _step_demand(case: _Case) -> Step:
    f = case.facts
    title = Text("Demand from the formula at S = max_model_len, N = target")
    ev = _evidence(f, "max_model_len", "kv_cache_dtype", "tensor_parallel_size", "kv_cache_needed_bytes")
    per_token, source = case.per_token()
    length, n, pool = case.max_model_len, case.target, case.pool
    if per_token is None or length is None:
        missing = (
            "max_model_len"
            if length is None
            else Text("the KV bytes per token (model unknown, no pool/tokens)")
        )
        return Step(
            key="demand",
            title=title,
            verdict=Text("not computable"),
            status="unknown",
            explanation=Text("Needs {missing}.", missing=missing),
            evidence=ev,
        )
    one = per_token * length
    demand = one * n
    target_note = "" if case.target_given else Text(" (no target given: N = 1)")
    text = Text(
        "KV bytes per token per device = {per_token:,} B ({source}). Demand = per-token × S × N = {per_token:,} × {length:,} × {n}{target_note} = {demand}.",
        per_token=per_token,
        source=source,
        length=length,
        n=n,
        target_note=target_note,
        demand=_gib(demand),
    )
    if pool is None:
        return Step(
            key="demand",
            title=title,
            verdict=Text("needs {demand}", demand=_gib(demand)),
            status="info",
            explanation=text + Text(" The log prints no KV pool to compare with."),
            evidence=ev,
        )
    holds = pool / one if one else 0.0
    text += Text(
        " Pool {pool} holds {holds:.2f} requests of {length:,} tokens.",
        pool=_gib(max(pool, 0)),
        holds=holds,
        length=length,
    )
    if demand <= pool:
        return Step(
            key="demand",
            title=title,
            verdict=Text("{demand} ≤ pool", demand=_gib(demand)),
            status="ok",
            explanation=text,
            evidence=ev,
        )
    over = f"{demand / pool:.1f}×" if pool > 0 else Text("more than")
    return Step(
        key="demand",
        title=title,
        verdict=Text("{demand} > pool {pool}", demand=_gib(demand), pool=_gib(max(pool, 0))),
        status="fail",
        explanation=Text("{text} The demand is {over} the pool.", text=text, over=over),
        evidence=ev,
    )


# --------------------------------------------------------------------------------------------
# step 4: S-side, N-side or budget


def _trial_as_configured(case: _Case) -> Trial:
    f = case.facts
    label = (
        Text("As configured (S = {max_model_len:,})", max_model_len=case.max_model_len)
        if case.max_model_len
        else Text("As configured")
    )
    if case.started is False:
        return Trial(
            key="as_configured", label=label, starts=False, source="log", detail=_clip(f.error or "")
        )
    if case.started:
        reached = case.reached_concurrency()
        more = (
            Text("; holds {reached:.2f} requests of S tokens", reached=reached) if reached is not None else ""
        )
        return Trial(key="as_configured", label=label, starts=True, source="log", detail=f"started{more}")
    if case.prediction is not None:
        return Trial(
            key="as_configured",
            label=label,
            starts=case.prediction.fits,
            source="planner",
            detail=Text("the log stops before the KV lines; the planner's prediction"),
        )
    return Trial(
        key="as_configured", label=label, starts=None, source="none", detail=Text("the log does not say")
    )


def _useful_length(length: int) -> int:
    """The shortest max_model_len worth serving when S does not start: 1k tokens, or half of a short S."""
    return max(1, min(MIN_USEFUL_LEN_TOKENS, length // 2))


def _largest_fitting(case: _Case) -> tuple[int | None, TrialSource, str]:
    """The longest max_model_len the log's pool starts: vLLM's printed estimate, else the planner's
    replay over the log's pool, else pool ÷ KV bytes per token."""
    f = case.facts
    if f.estimated_max_model_len is not None:
        return (
            f.estimated_max_model_len,
            "log",
            Text(
                "vLLM estimates {largest:,} tokens fit",
                largest=f.estimated_max_model_len,
            ),
        )
    oracle = _oracle(case)
    if oracle is not None and oracle.estimated_max_model_len is not None:
        largest = oracle.max_model_len if oracle.fits else oracle.estimated_max_model_len
        return (
            largest,
            "planner",
            Text("replayed over the log's pool: {largest:,} tokens fit", largest=largest),
        )
    per_token, _ = case.per_token()
    pool = case.pool
    if per_token and pool is not None:
        largest = max(pool, 0) // per_token
        return (
            largest,
            "arithmetic",
            Text(
                "pool {pool} ÷ {per_token:,} B per token = {largest:,} tokens",
                pool=_gib(max(pool, 0)),
                per_token=per_token,
                largest=largest,
            ),
        )
    return None, "none", ""


def _trial_half_length(case: _Case) -> Trial:
    """Seed step 4's S trial: does some useful, shorter max_model_len start?"""
    f = case.facts
    length = case.max_model_len
    useful = _useful_length(length) if length is not None else 0
    label = (
        Text("A shorter --max-model-len (≥ {useful:,} tokens)", useful=useful)
        if length is not None
        else Text("A shorter --max-model-len")
    )
    if case.started:
        return Trial(
            key="half_length", label=label, starts=True, source="log", detail=Text("it already starts at S")
        )
    if f.error_kind in BUDGET_ERRORS or (case.pool is not None and case.pool <= 0):
        return Trial(
            key="half_length",
            label=label,
            starts=False,
            source="log",
            detail=Text("the error is about the budget, not the length"),
        )
    if length is None or f.error_kind in FAILURE_VERDICTS:
        return Trial(key="half_length", label=label, starts=None, source="none", detail="")
    largest, source, detail = _largest_fitting(case)
    if largest is None:
        return Trial(key="half_length", label=label, starts=None, source="none", detail="")
    return Trial(
        key="half_length",
        label=label,
        starts=largest >= useful,
        source=source,
        detail=detail,
    )


def _trial_one_sequence(case: _Case) -> Trial:
    label = Text("Concurrency 1 (--max-num-seqs 1)")
    if case.started:
        return Trial(
            key="one_sequence", label=label, starts=True, source="log", detail=Text("it already starts")
        )
    if case.facts.error_kind in FAILURE_VERDICTS:
        return Trial(
            key="one_sequence",
            label=label,
            starts=None,
            source="none",
            detail=Text("the failure is not about the KV pool"),
        )
    oracle = _oracle(case, max_num_seqs=1)
    if oracle is not None:
        return Trial(
            key="one_sequence",
            label=label,
            starts=oracle.fits,
            source="planner",
            detail=Text("replayed over the log's pool") if oracle.fits else _clip(oracle.error or ""),
        )
    per_token, _ = case.per_token()
    pool, length = case.pool, case.max_model_len
    if pool is not None and pool <= 0:
        return Trial(
            key="one_sequence", label=label, starts=False, source="arithmetic", detail=Text("no KV pool")
        )
    if per_token is not None and pool is not None and length is not None:
        return Trial(
            key="one_sequence",
            label=label,
            starts=pool >= per_token * length,
            source="arithmetic",
            detail=Text("vLLM's start-up check is one request of S tokens, so N does not change it"),
        )
    return Trial(key="one_sequence", label=label, starts=None, source="none", detail="")


def _cause(case: _Case, trials: list[Trial]) -> Overall:
    as_configured, half, one = trials
    failure = FAILURE_VERDICTS.get(case.facts.error_kind or "")
    if failure is not None:
        return failure
    if as_configured.starts is None:
        return "unknown"
    if as_configured.starts:
        reached = case.reached_concurrency()
        if reached is None and case.prediction is not None and not case.started:
            reached = case.prediction.max_concurrency
        return "n_bound" if reached is not None and reached < case.target else "fits"
    if half.starts:
        return "s_bound"
    if one.starts:
        return "n_bound"
    if half.starts is None and one.starts is None:
        return "unknown"
    return "budget_bound"


def _step_cause(case: _Case, trials: list[Trial], cause: Overall) -> Step:
    info = VERDICTS[cause]
    badge, sentence = Text(info.label), Text(info.cause)
    rows = TextList(
        SEMICOLON,
        (
            Text(
                "{label}: {outcome}",
                label=t.label,
                outcome=Text("starts") if t.starts else Text("fails") if t.starts is False else "?",
            )
            + (Text(" ({source})", source=t.source) if t.source != "none" else "")
            for t in trials
        ),
    )
    status: StepStatus = "ok" if info.tone == "ok" else "unknown" if info.tone == "unknown" else "fail"
    return Step(
        key="cause",
        title=Text("S-side, N-side or budget"),
        verdict=badge,
        status=status,
        explanation=Text("{sentence} {rows}.", sentence=sentence, rows=rows),
        evidence=_evidence(case.facts, "error", "estimated_max_model_len", "max_concurrency"),
    )


# --------------------------------------------------------------------------------------------
# step 5: silent fallbacks


def _step_fallbacks(case: _Case) -> Step:
    f = case.facts
    found: list[str] = []
    checked: list[str] = []
    expected_backend = case.prediction.attention_backend if case.prediction is not None else None
    if f.attention_backend is not None and expected_backend is not None:
        if f.attention_backend != expected_backend:
            found.append(
                Text(
                    "attention backend {attention_backend} was used where the planner expects {expected_backend} for this model, device and version",
                    attention_backend=f.attention_backend,
                    expected_backend=expected_backend,
                )
            )
        else:
            checked.append(
                Text("backend {attention_backend} as expected", attention_backend=f.attention_backend)
            )
    elif f.attention_backend is not None:
        checked.append(
            Text(
                "backend {attention_backend} (no expectation: model or device unknown)",
                attention_backend=f.attention_backend,
            )
        )
    effective = f.block_size_forced
    if effective is None and f.num_gpu_blocks and f.kv_tokens and f.error_kind == "max_len_too_long":
        effective = f.kv_tokens // f.num_gpu_blocks  # V0: capacity = blocks × block size
    requested = case.requested_block_size
    if effective is not None and requested is not None and effective != requested:
        found.append(
            Text(
                "block size {requested} was requested but {effective} is in effect",
                requested=requested,
                effective=effective,
            )
        )
    elif f.block_size_forced is not None and requested is None:
        checked.append(
            Text(
                "block size {block_size_forced} set by the backend/platform (none requested)",
                block_size_forced=f.block_size_forced,
            )
        )
    elif effective is not None:
        checked.append(Text("block size {effective}", effective=effective))
    reached = case.reached_concurrency()
    wanted, wanted_what = (case.target, "target") if case.target_given else (f.max_num_seqs, "max_num_seqs")
    if reached is not None and wanted is not None:
        if reached < wanted:
            found.append(
                Text(
                    "concurrency {wanted_what} {wanted:,}, but the pool holds {reached:.2f} requests of {value:,} tokens: the rest wait, with no error",
                    wanted_what=wanted_what,
                    wanted=wanted,
                    reached=reached,
                    value=case.max_model_len or 0,
                )
            )
        else:
            checked.append(
                Text(
                    "concurrency {reached:.2f} ≥ {wanted_what} {wanted:,}",
                    reached=reached,
                    wanted_what=wanted_what,
                    wanted=wanted,
                )
            )
    ev = _evidence(
        f, "attention_backend", "block_size_forced", "block_size", "max_num_seqs", "max_concurrency"
    )
    if found:
        return Step(
            key="fallbacks",
            title=Text("Silent fallbacks"),
            verdict=Text(
                "{found} silent change{value}", found=len(found), value="s" if len(found) > 1 else ""
            ),
            status="warn",
            explanation=Text("{found}.", found=TextList(SEMICOLON, found))
            + (Text(" Checked: {checked}.", checked=TextList(SEMICOLON, checked)) if checked else ""),
            evidence=ev,
        )
    if checked:
        return Step(
            key="fallbacks",
            title=Text("Silent fallbacks"),
            verdict=Text("no fallback seen"),
            status="ok",
            explanation=Text("No fallback seen: {checked}.", checked=TextList(SEMICOLON, checked)),
            evidence=ev,
        )
    return Step(
        key="fallbacks",
        title=Text("Silent fallbacks"),
        verdict=Text("not checkable"),
        status="unknown",
        explanation=Text("The log names no attention backend, block size or concurrency to compare."),
        evidence=ev,
    )


# --------------------------------------------------------------------------------------------
# prediction beside the log


def _row(key: str, label: str, unit: Unit, actual: float | None, predicted: float | None) -> ComparisonRow:
    gap = actual - predicted if actual is not None and predicted is not None else None
    return ComparisonRow(key=key, label=label, unit=unit, actual=actual, predicted=predicted, gap=gap)


def _with_note(row: ComparisonRow, note: str | None) -> ComparisonRow:
    return row if note is None else row.model_copy(update={"note": note})


def _comparison(case: _Case) -> list[ComparisonRow]:
    est = case.prediction
    if est is None:
        return []
    f = case.facts
    rows: list[ComparisonRow] = []
    total = _row(
        "device_total_bytes", Text("Device total"), "bytes", f.device_total_bytes, est.device_total_bytes
    )
    if total.gap is not None and abs(total.gap) > DEVICE_TOTAL_GAP_BYTES:
        total = _with_note(total, Text("the card reports a different total than the catalog device"))
    rows.append(total)
    weights = _row("weights_bytes", "Weights", "bytes", f.weights_bytes, est.weights_bytes)
    if (
        weights.gap is not None
        and est.weights_bytes
        and abs(weights.gap) / est.weights_bytes > WEIGHTS_GAP_FRACTION
    ):
        weights = _with_note(
            weights, Text("check the dtype, the quantization, or that the catalog model is this one")
        )
    rows.append(weights)
    act = _row(
        "activation_peak_bytes",
        Text("Activation peak"),
        "bytes",
        f.activation_peak_bytes,
        est.activation_peak_bytes,
    )
    if act.gap is not None and abs(act.gap) > ACTIVATION_GAP_BYTES:
        act = _with_note(
            act, Text("the profile run peaked differently (max_num_batched_tokens, sampler, version)")
        )
    rows.append(act)
    rows.append(_row("non_torch_bytes", "Non-torch", "bytes", f.non_torch_bytes, est.non_torch_bytes))
    graphs = _row("cuda_graph_bytes", Text("CUDA graphs"), "bytes", f.cuda_graph_bytes, est.cuda_graph_bytes)
    if not est.cuda_graph_budgeted and (f.cuda_graph_bytes or est.cuda_graph_bytes):
        graphs = _with_note(
            graphs,
            Text(
                "before 0.20 the graphs are captured after KV sizing, outside the budget: they must fit in the {unused_bytes} left by gpu_memory_utilization",
                unused_bytes=_gib(est.unused_bytes),
            ),
        )
    rows.append(graphs)
    kv = _row("kv_cache_bytes", Text("KV cache pool"), "bytes", case.printed_pool, est.kv_cache_bytes)
    if kv.gap is not None and kv.gap < -KV_GAP_BYTES:
        kv = _with_note(
            kv,
            Text(
                "KV lower than predicted by more than 1 GiB: another process may hold device memory, or this version's profiler measures more than the planner models"
            ),
        )
    elif kv.gap is not None and kv.gap > KV_GAP_BYTES:
        kv = _with_note(
            kv, Text("KV higher than predicted: the planner over-estimates activation or non-torch here")
        )
    rows.append(kv)
    rows.append(_row("num_gpu_blocks", Text("GPU blocks"), "count", f.num_gpu_blocks, est.num_gpu_blocks))
    rows.append(_row("kv_tokens", Text("KV cache tokens"), "tokens", f.kv_tokens, est.kv_tokens))
    rows.append(
        _row("max_concurrency", Text("Max concurrency at S"), "ratio", f.max_concurrency, est.max_concurrency)
    )
    return rows


# --------------------------------------------------------------------------------------------
# the whole diagnosis


def _facts(case: _Case) -> DiagnosisFacts:
    f = case.facts
    return DiagnosisFacts(
        vllm_version=f.vllm_version,
        engine=f.engine,
        model=case.model_name,
        max_model_len=case.max_model_len,
        tensor_parallel_size=f.tensor_parallel_size,
        pipeline_parallel_size=f.pipeline_parallel_size,
        gpu_memory_utilization=f.gpu_memory_utilization,
        dtype=f.dtype,
        kv_cache_dtype=f.kv_cache_dtype,
        block_size=f.block_size,
        max_num_seqs=f.max_num_seqs,
        attention_backend=f.attention_backend,
        device_type=f.device_type,
        device_total_bytes=f.device_total_bytes,
        weights_bytes=f.weights_bytes,
        activation_peak_bytes=f.activation_peak_bytes,
        non_torch_bytes=f.non_torch_bytes,
        kv_cache_bytes=f.kv_cache_bytes,
        num_gpu_blocks=f.num_gpu_blocks,
        kv_tokens=f.kv_tokens,
        max_concurrency=f.max_concurrency,
        estimated_max_model_len=f.estimated_max_model_len,
        error=f.error,
        error_kind=f.error_kind,
    )


def _planner_inputs(case: _Case) -> dict[str, str]:
    """Planner query parameters (the permalink's names) for the recovered configuration."""
    out: dict[str, str] = {}
    if case.model_key is not None:
        out["model"] = case.model_key
    if case.device is not None and case.device_source != "custom":
        out["device"] = case.device.id
    printed = case.facts.device_total_bytes
    catalog_total = (
        catalog.find_device(case.device.id).memory_total_bytes
        if case.device is not None and case.device_source != "custom"
        else None
    )
    if printed is not None and printed != catalog_total:
        # the runtime's own total beats the catalog's typical figure (H100: 79.19 printed vs 79.1)
        out["device_memory_gib"] = f"{printed / GIB:.2f}"
    link_version = _link_version(case.version or case.facts.vllm_version)
    if link_version is not None:
        out["vllm_version"] = link_version
    if case.serve is not None:
        serve = case.serve.model_dump(exclude_defaults=True)
        for name in (
            "max_model_len",
            "tensor_parallel_size",
            "pipeline_parallel_size",
            "gpu_memory_utilization",
            "kv_cache_dtype",
            "block_size",
            "max_num_seqs",
            "max_num_batched_tokens",
            "enforce_eager",
            "enable_prefix_caching",
        ):
            value = serve.get(name)
            if value is not None:
                out[name] = str(value).lower() if isinstance(value, bool) else str(value)
    if case.target_given:
        out["target_concurrency"] = str(case.target)
    return out


def _headline(case: _Case, verdict: Overall, metrics: MetricsFacts | None) -> str:
    length = case.max_model_len
    s = f"{length:,}" if length else "max_model_len"
    reached = case.reached_concurrency()
    if verdict == "fits":
        if reached is not None:
            return Text(
                "Fits: the KV pool holds {reached:.2f} requests of {s} tokens (target {target}).",
                reached=reached,
                s=s,
                target=case.target,
            )
        return Text("Fits: the KV pool is not the limit.")
    if verdict == "s_bound":
        est = case.facts.estimated_max_model_len
        fit = Text("; about {est:,} tokens fit", est=est) if est else ""
        return Text("S-side: max_model_len {s} is too long for this KV pool{fit}.", s=s, fit=fit)
    if verdict == "n_bound":
        if reached is not None:
            return Text(
                "N-side: it starts, but the pool holds {reached:.2f} requests of {s} tokens, below the target {target}.",
                reached=reached,
                s=s,
                target=case.target,
            )
        if metrics is not None and metrics.verdict == "kv_bound":
            return Text("N-side: the KV pool is full and requests wait — concurrency is bound by the pool.")
        return Text("N-side: one sequence fits, the target concurrency does not.")
    if verdict == "budget_bound":
        return Text(
            "Budget: weights and activation leave (almost) no KV pool — no useful context length starts."
        )
    error = _clip(case.facts.error or "")
    if verdict == "load_oom":
        return Text("Out of memory while loading the weights: {error}", error=error)
    if verdict == "graph_oom":
        return Text("Out of memory while capturing CUDA graphs: {error}", error=error)
    if verdict == "failed":
        return Text(
            "The start-up failed: {error} — the log does not show a KV, weight or graph cause; paste the lines before the first traceback.",
            error=error,
        )
    if case.facts.recognised_lines:
        return Text(
            "Unknown: the log was read but stops before it says whether vLLM started (no KV-cache line, no error); paste it up to 'init engine' or to the error."
        )
    return Text(
        "Nothing recognised: paste the `vllm serve` start-up log (from 'vLLM API server version' to 'init engine', or to the error) and/or a /metrics scrape."
    )


def _remedies(case: _Case, verdict: Overall) -> list[str]:
    largest = case.facts.estimated_max_model_len
    if verdict == "s_bound" and largest is None:
        largest, _, _ = _largest_fitting(case)
    return remedies(verdict, largest=f"{largest:,}" if largest else None)


def _apply_metrics(
    verdict: Overall, metrics: MetricsFacts | None, has_log: bool, notes: list[str]
) -> Overall:
    if metrics is None:
        return verdict
    if metrics.verdict == "kv_bound" and verdict in ("fits", "unknown"):
        if has_log:
            notes.append(
                Text("the log fits the target, but the metrics show a full KV pool with requests waiting")
            )
        return "n_bound"
    if verdict == "unknown" and not has_log and metrics.kv_usage is not None:
        return "fits"
    return verdict


def diagnose(
    *,
    log_text: str | None,
    metrics_text: str | None,
    target_concurrency: int | None = None,
    device_hint: str | None = None,
) -> Diagnosis:
    """The seed's five-step diagnosis of a pasted start-up log and/or Prometheus scrape."""
    log_text = log_text or ""
    facts = parse_startup_log(log_text) if log_text.strip() else LogFacts()
    metrics = parse_metrics(metrics_text) if metrics_text and metrics_text.strip() else None
    pasted_metrics_as_log = False
    if facts.recognised_lines == 0 and log_text.strip() and metrics is None:
        as_metrics = parse_metrics(log_text)
        if as_metrics.samples_read:
            metrics, pasted_metrics_as_log = as_metrics, True
    if metrics is not None and metrics.samples_read == 0:
        metrics = None
    case = _case(log_text, facts, target_concurrency, device_hint)
    if pasted_metrics_as_log:
        case.notes.append(Text("the paste is a Prometheus scrape, so it was read as metrics"))
    has_log = facts.recognised_lines > 0
    trials = [_trial_as_configured(case), _trial_half_length(case), _trial_one_sequence(case)]
    cause = _cause(case, trials) if has_log else "unknown"
    verdict = _apply_metrics(cause, metrics, has_log, case.notes)
    steps = [
        _step_kv_lines(case),
        _step_budget(case),
        _step_demand(case),
        _step_cause(case, trials, cause),
        _step_fallbacks(case),
    ]
    return Diagnosis(
        facts=_facts(case),
        verdict=verdict,
        headline=_headline(case, verdict, metrics),
        remedies=_remedies(case, verdict),
        steps=steps,
        trials=trials,
        metrics=metrics,
        prediction=case.prediction,
        comparison=_comparison(case),
        model_id=case.model.name if case.model is not None else None,
        device_id=case.device.id if case.device is not None else None,
        device_source=case.device_source,
        device_reasoning=case.device_reasoning,
        vllm_version_used=case.prediction.vllm_version if case.prediction is not None else None,
        target_concurrency=case.target,
        planner_inputs=_planner_inputs(case),
        recognised=has_log or metrics is not None,
        notes=case.notes,
    )
