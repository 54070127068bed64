"""The explore page: block sizes, prefix caching and workload shapes (the seed's second half).

``GET /explore`` serves the page, or its results block for htmx; ``GET /api/blocks`` and
``POST /api/workload`` are its JSON twins. The planner's parameters (``PlannerParams``) ride in
the same query string, so a planner permalink opens here unchanged and "Back to planner" keeps
them. All arithmetic is the core's (``app.core.blocks``, ``app.core.workload``, the estimator);
this module only chooses inputs, catches bad ones and formats.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from app.core import backends
from app.core.blocks import (
    BlockSizeRow,
    PrefixHit,
    block_size_table,
    blocks_for_tokens,
    expected_tail_waste_fraction,
    prefix_cache_hit,
    prefix_memory_saved_bytes,
    tail_waste_tokens,
)
from app.core.catalog import list_devices, list_models
from app.core.errors import InvalidServeConfigError, PlannerError
from app.core.estimate import estimate, sizing_for
from app.core.plan import apply_quantization_flag
from app.core.result import Estimate
from app.core.specs import GIB, KV_CACHE_DTYPES, MIB
from app.core.text import Text
from app.core.versions import KNOWN_VERSIONS
from app.core.workload import (
    MAX_NUM_REQUESTS,
    WORKLOAD_PRESETS,
    EngineParams,
    LengthDist,
    LognormalLength,
    RequestClass,
    UniformLength,
    WorkloadPreset,
    WorkloadResult,
    WorkloadSpec,
    simulate,
)
from app.web import explore_svg
from app.web.format import gib, integer, percent
from app.web.params import (
    FieldProblem,
    Flag,
    PlannerParams,
    StrictPlannerParams,
    opt_int,
    parse_human_int,
    query_items,
    to_query,
)
from app.web.resolve import Resolved, resolve_lenient, resolve_strict

router = APIRouter()
api_router = APIRouter(prefix="/api", tags=["api"])

# The page runs the simulation inside the request; 20,000 requests keep it well under a second
# on the presets' shapes (the core itself allows MAX_NUM_REQUESTS). The API uses the same cap.
MAX_PAGE_REQUESTS = 20_000
MAX_CLIENT_CONCURRENCY = 65_536  # closed-loop clients; vLLM's own max_num_seqs tops out here too
WL_MAX_CHARS = 2_000
MAX_TYPICAL_LENGTHS = 16
# A chat turn, a short document, a long document: three lengths where B/(2S) differs visibly.
DEFAULT_TYPICAL_LENGTHS = (200, 1000, 8000)
DEFAULT_SHARED_PREFIX_TOKENS = 1000  # a typical system prompt
DEFAULT_NUM_REQUESTS_SHARING = 16
DEFAULT_PRESET = "mixed_long_short"
CUSTOM = "custom"
# What "custom" runs when no classes are typed: 80% chat-sized, 20% long-document requests.
DEFAULT_CUSTOM_WL = "0.8:100-2000:50-500;0.2:8000-16000:200-1000"
DEFAULT_CUSTOM_NUM_REQUESTS = 500
DEFAULT_CUSTOM_CONCURRENCY = 64
# Block sizes the explorer always lists: vLLM's CLI choices over its versions plus the seed's
# "16 / 32 / 64 / 128 / 256 / 512 / 1024" value set; the backend default and the current one are added.
DISPLAY_BLOCK_SIZES = (1, 8, 16, 32, 64, 128, 256, 512, 1024)
SERIES_TABLE_ROWS = 20  # rows of the charts' table alternative
# The seed's prefix example, corrected: see SEED_MISPRINT_NOTE.
SEED_EXAMPLE_BLOCK_SIZE = 4
SEED_EXAMPLE_SHARED = (10, 14)
SEED_MISPRINT_NOTE = Text(
    "The seed text says “两条请求共享 14 个 token、block size 为 4 时，只有前 8 个 token 命中”. 14 shared tokens at B = 4 are 3 full blocks: 12 tokens hit and 2 are recomputed. Its own explanation (“第三块只对上 2/4”) describes 10 shared tokens: 2 full blocks = 8 tokens hit."
)
EXTRA_KEY_FIELDS = (
    ("lora", Text("LoRA adapter ID")),
    ("mm", Text("multimodal input hash")),
    ("cache_salt", "cache_salt"),
)


# ---- the compact workload encoding: wl=share:prompt:output[:prefix[:group]];… -------------------

_FIXED = re.compile(r"\d+")
_UNIFORM = re.compile(r"(\d+)-(\d+)")
_LOGNORMAL = re.compile(r"(\d+)~(\d+(?:\.\d+)?)~(\d+)(?:~(\d+))?")
_GROUP = re.compile(r"[A-Za-z0-9_-]{1,64}")
WL_HELP = Text(
    "One class per “;”: share:prompt:output[:shared_prefix[:group]]. A length is N (fixed), LOW-HIGH (uniform) or MEDIAN~SIGMA~MAX (lognormal). Example: 0.9:300~0.6~3000:150;0.1:20000-28000:500"
)


def parse_length(text: str) -> LengthDist:
    """``512`` fixed, ``100-2000`` uniform, ``300~0.6~3000[~MIN]`` lognormal; ValueError otherwise."""
    if _FIXED.fullmatch(text):
        return int(text)
    if match := _UNIFORM.fullmatch(text):
        return UniformLength(dist="uniform", low=int(match[1]), high=int(match[2]))
    if match := _LOGNORMAL.fullmatch(text):
        return LognormalLength(
            dist="lognormal",
            median=int(match[1]),
            sigma=float(match[2]),
            max=int(match[3]),
            min=int(match[4]) if match[4] else 1,
        )
    raise ValueError(Text("length {text!r} is not N, LOW-HIGH or MEDIAN~SIGMA~MAX", text=text))


def encode_length(dist: LengthDist) -> str:
    if isinstance(dist, int):
        return str(dist)
    if isinstance(dist, UniformLength):
        return f"{dist.low}-{dist.high}"
    text = f"{dist.median}~{dist.sigma:g}~{dist.max}"
    return text + (f"~{dist.min}" if dist.min != 1 else "")


def _first_message(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def parse_classes(text: str) -> list[RequestClass]:
    """The ``wl`` query value as request classes; ValueError names the class and the problem."""
    compact = re.sub(r"\s+", "", text)
    chunks = [chunk for chunk in compact.split(";") if chunk]
    if not chunks:
        raise ValueError(Text("no request class given"))
    classes = []
    for number, chunk in enumerate(chunks, start=1):
        parts = chunk.split(":")
        if not 3 <= len(parts) <= 5:
            raise ValueError(
                Text(
                    "class {number} ({chunk!r}): expected share:prompt:output[:prefix[:group]]",
                    number=number,
                    chunk=chunk,
                )
            )
        try:
            data: dict[str, Any] = {
                "share": float(parts[0]),
                "prompt_tokens": parse_length(parts[1]),
                "output_tokens": parse_length(parts[2]),
            }
            if len(parts) >= 4 and parts[3]:
                data["shared_prefix_tokens"] = int(parts[3])
            if len(parts) == 5:
                if not _GROUP.fullmatch(parts[4]):
                    raise ValueError(
                        Text("prefix group {parts!r}: letters, digits, _ and - only", parts=parts[4])
                    )
                data["prefix_group"] = parts[4]
            classes.append(RequestClass.model_validate(data))
        except ValidationError as exc:
            raise ValueError(Text("class {number}: {exc}", number=number, exc=_first_message(exc))) from exc
        except ValueError as exc:
            raise ValueError(Text("class {number}: {exc}", number=number, exc=exc)) from exc
    return classes


def encode_classes(classes: Sequence[RequestClass]) -> str:
    out = []
    for cls in classes:
        fields = [f"{cls.share:g}", encode_length(cls.prompt_tokens), encode_length(cls.output_tokens)]
        default_group = RequestClass.model_fields["prefix_group"].default
        if cls.shared_prefix_tokens or cls.prefix_group != default_group:
            fields.append(str(cls.shared_prefix_tokens))
        if cls.prefix_group != default_group:
            fields.append(cls.prefix_group)
        out.append(":".join(fields))
    return ";".join(out)


def describe_length(dist: LengthDist) -> str:
    if isinstance(dist, int):
        return f"{dist:,}"
    if isinstance(dist, UniformLength):
        return Text("uniform {low:,}–{high:,}", low=dist.low, high=dist.high)
    return Text(
        "lognormal, median {median:,}, σ {sigma:g}, ≤ {max:,}",
        median=dist.median,
        sigma=dist.sigma,
        max=dist.max,
    )


# ---- parameters ---------------------------------------------------------------------------------


def _lengths(value: object) -> object:
    if isinstance(value, str):
        items = [item for item in re.split(r"[,\s]+", value.strip()) if item]
        return [parse_human_int(item) for item in items]
    return value


def _preset_name(value: str) -> str:
    if value != CUSTOM and value not in WORKLOAD_PRESETS:
        raise ValueError(
            Text(
                "unknown preset {value!r}; known: {join}",
                value=value,
                join=", ".join([*WORKLOAD_PRESETS, CUSTOM]),
            )
        )
    return value


TypicalLengths = Annotated[
    tuple[Annotated[int, Field(ge=1, le=10_000_000)], ...],
    BeforeValidator(_lengths),
    Field(min_length=1, max_length=MAX_TYPICAL_LENGTHS),
]
HumanTokens = Annotated[int, BeforeValidator(parse_human_int), Field(ge=0, le=10_000_000)]
OptRate = Annotated[
    Annotated[float, Field(ge=1e-4, le=1e4)] | None,
    BeforeValidator(lambda v: None if isinstance(v, str) and not v.strip() else v),
]


class BlockFields(BaseModel):
    """Inputs of the block-size explorer and the prefix-cache calculator."""

    typical_lengths: TypicalLengths = DEFAULT_TYPICAL_LENGTHS
    shared_prefix_tokens: HumanTokens = DEFAULT_SHARED_PREFIX_TOKENS
    request_tokens: opt_int(1, 10_000_000, human=True) = None  # caps the hit at request - 1 token
    lora: Flag = False
    mm: Flag = False
    cache_salt: Flag = False
    mm_item_start_token: opt_int(0, 10_000_000) = None
    num_requests_sharing: Annotated[int, Field(ge=1, le=65_536)] = DEFAULT_NUM_REQUESTS_SHARING
    prefix_block_size: opt_int(1, 16_384) = None  # None: the engine's effective block size

    @property
    def extra_keys_differ(self) -> tuple[str, ...]:
        return tuple(key for key, _ in EXTRA_KEY_FIELDS if getattr(self, key))


class WorkloadFields(BaseModel):
    """Inputs of the workload simulator (blank = the preset's value)."""

    preset: Annotated[str, BeforeValidator(lambda v: v.strip() if isinstance(v, str) else v)] = DEFAULT_PRESET
    wl: Annotated[str, Field(max_length=WL_MAX_CHARS)] = ""
    num_requests: opt_int(1, MAX_PAGE_REQUESTS) = None
    concurrency: opt_int(1, MAX_CLIENT_CONCURRENCY) = None
    arrival_rate: OptRate = None
    seed: Annotated[int, Field(ge=0, le=2**32 - 1)] = 0

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, value: str) -> str:
        return _preset_name(value)

    @field_validator("wl")
    @classmethod
    def _valid_classes(cls, value: str) -> str:
        if value.strip():
            return encode_classes(parse_classes(value))  # canonical form for the permalink
        return ""


class ExploreParams(PlannerParams, BlockFields, WorkloadFields):
    """Everything in an /explore URL: the planner's parameters plus the explorer's own."""

    model_config = ConfigDict(frozen=True, extra="ignore", str_strip_whitespace=True)


class BlocksQuery(StrictPlannerParams, BlockFields):
    """``GET /api/blocks``: unknown keys are errors, as on /api/estimate."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)


class WorkloadRequest(StrictPlannerParams):
    """``POST /api/workload``: the /api/estimate parameters plus the workload."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    quantization: str | None = None
    classes: list[RequestClass] | None = Field(default=None, min_length=1, max_length=32)
    preset: str | None = None
    num_requests: int | None = Field(default=None, ge=1, le=MAX_PAGE_REQUESTS)
    concurrency: int | None = Field(default=None, ge=1, le=MAX_NUM_REQUESTS)
    arrival_rate: float | None = Field(default=None, ge=1e-4, le=1e4)
    seed: int = Field(default=0, ge=0, le=2**32 - 1)

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, value: str | None) -> str | None:
        if value is not None and value not in WORKLOAD_PRESETS:
            raise ValueError(
                Text(
                    "unknown preset {value!r}; known: {workload_presets}",
                    value=value,
                    workload_presets=", ".join(WORKLOAD_PRESETS),
                )
            )
        return value


PLANNER_FIELDS = frozenset(PlannerParams.model_fields)
EXPLORE_FIELDS: tuple[str, ...] = (*BlockFields.model_fields, *WorkloadFields.model_fields)
EXPLORE_DEFAULTS = ExploreParams()


def parse_explore_lenient(
    query: Mapping[str, str] | Iterable[tuple[str, str]],
) -> tuple[ExploreParams, list[FieldProblem]]:
    """Never fails: a field that does not validate is reported and falls back to its default.

    A blank value means "default" for fields whose default is not None (a cleared box).
    """
    items = query.items() if isinstance(query, Mapping) else query
    fields = ExploreParams.model_fields
    raw: dict[str, Any] = {}
    for key, value in items:
        if key not in fields:
            continue
        if isinstance(value, str) and not value.strip() and fields[key].default is not None:
            raw.pop(key, None)
            continue
        raw[key] = value  # a repeated key: the last one wins
    problems: list[FieldProblem] = []
    for _ in range(len(fields) + 1):
        try:
            return ExploreParams.model_validate(raw), problems
        except ValidationError as exc:
            for error in exc.errors():
                name = str(error["loc"][0]) if error["loc"] else ""
                if name in raw:
                    text = str(raw.pop(name))
                    message = str(error["msg"]).removeprefix("Value error, ")
                    problems.append(
                        FieldProblem(name, text if len(text) <= 60 else text[:57] + "...", message)
                    )
    return ExploreParams(), problems  # unreachable: each round drops at least one field


def planner_params(params: PlannerParams) -> PlannerParams:
    return PlannerParams.model_validate({name: getattr(params, name) for name in PLANNER_FIELDS})


def explore_items(params: ExploreParams) -> list[tuple[str, str]]:
    """The explorer's own non-default fields, in a fixed order, as strings."""
    out: list[tuple[str, str]] = []
    for name in EXPLORE_FIELDS:
        value = getattr(params, name)
        if value == getattr(EXPLORE_DEFAULTS, name):
            continue
        if name == "wl" and params.preset != CUSTOM:
            continue  # only custom runs read the classes
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, tuple):
            text = ",".join(str(v) for v in value)
        elif isinstance(value, float):
            text = f"{value:g}"
        else:
            text = str(value)
        out.append((name, text))
    return out


def explore_query(params: ExploreParams) -> str:
    """The permalink's query: the planner's part (``v=1`` first), then the explorer's, defaults omitted."""
    return urlencode([*query_items(params), *explore_items(params)], safe=":;,~")


# ---- computing ---------------------------------------------------------------------------------


def _estimate(resolved: Resolved, **serve_changes: Any) -> Estimate:
    serve = resolved.serve.model_copy(update=serve_changes) if serve_changes else resolved.serve
    return estimate(
        model=resolved.model,
        device=resolved.device,
        serve=serve,
        vllm_version=resolved.vllm_version,
        target_concurrency=resolved.params.target_concurrency,
    )


def backend_rule(name: str) -> str:
    """What a CUDA attention backend accepts as block size, in words ("takes only 64")."""
    found = [b for b in vars(backends).values() if isinstance(b, backends.Backend) and b.name == name]
    if not found:
        return Text("does not take this size")
    backend = found[0]
    if backend.fixed_sizes:
        return Text("takes only ") + " / ".join(str(size) for size in backend.fixed_sizes)
    return Text("needs a multiple of {multiple_of}", multiple_of=backend.multiple_of)


@dataclass(frozen=True)
class BlockSizes:
    """The core's table plus what the backend does with each size (why rejected, which fallback)."""

    rows: list[BlockSizeRow]
    default_block_size: int
    current_block_size: int
    backend: str
    notes: dict[int, str]  # block size -> fallback / forcing note
    bytes_per_block_at: Callable[[int], int]


def block_sizes(resolved: Resolved, est: Estimate, fields: BlockFields) -> BlockSizes:
    """Each candidate --block-size through the estimator: refused, forced, fallen back, or accepted."""
    default = est if resolved.serve.block_size is None else _estimate(resolved, block_size=None)
    candidates = sorted({*DISPLAY_BLOCK_SIZES, default.block_size, est.block_size})
    per_size: dict[int, int] = {}
    notes: dict[int, str] = {}
    for size in candidates:
        try:
            at = _estimate(resolved, block_size=size)
        except InvalidServeConfigError as exc:
            notes[size] = exc.message
            if exc.message.startswith("no attention backend"):  # name the rule, not the whole search
                rule = backend_rule(default.attention_backend)
                notes[size] = Text(
                    "{attention_backend} {rule}; no other backend here takes {size}",
                    attention_backend=default.attention_backend,
                    rule=rule,
                    size=size,
                )
            continue
        if at.block_size != size:
            notes[size] = (
                at.warnings[0]
                if at.warnings
                else Text("vLLM runs B = {block_size} instead", block_size=at.block_size)
            )
            continue
        per_size[size] = at.bytes_per_block
        if at.attention_backend != default.attention_backend:
            notes[size] = Text(
                "{attention_backend} {attention_backend2}: vLLM falls back to {attention_backend3}",
                attention_backend=default.attention_backend,
                attention_backend2=backend_rule(default.attention_backend),
                attention_backend3=at.attention_backend,
            )

    def bytes_per_block_at(size: int) -> int:
        # Sizes the backend refuses still get a number (attention pages are linear in B).
        return per_size.get(size) or max(1, est.bytes_per_block * size // max(est.block_size, 1))

    rows = block_size_table(
        allowed_block_sizes=sorted(per_size),
        seq_tokens_typical=fields.typical_lengths,
        kv_cache_bytes=max(0, est.kv_cache_bytes),
        bytes_per_block_at=bytes_per_block_at,
        shared_prefix_tokens=fields.shared_prefix_tokens,
        default_block_size=default.block_size,
        max_model_len=est.max_model_len,
        candidate_block_sizes=candidates,
    )
    return BlockSizes(
        rows, default.block_size, est.block_size, default.attention_backend, notes, bytes_per_block_at
    )


@dataclass(frozen=True)
class PrefixResult:
    hit: PrefixHit
    num_requests: int
    bytes_per_block: int
    saved_bytes: int
    saved_tokens: int
    caching_enabled: bool


def prefix_result(
    fields: BlockFields, *, block_size: int, bytes_per_block: int, caching_enabled: bool
) -> PrefixResult:
    """The core's calculator; memory saved counts only the blocks that actually hit."""
    hit = prefix_cache_hit(
        shared_prefix_tokens=fields.shared_prefix_tokens,
        block_size=block_size,
        request_tokens=fields.request_tokens,
        extra_keys_differ=fields.extra_keys_differ,
        mm_item_start_token=fields.mm_item_start_token,
    )
    n = fields.num_requests_sharing
    saved = prefix_memory_saved_bytes(
        shared_prefix_tokens=hit.tokens_hit,
        block_size=block_size,
        num_requests=n,
        bytes_per_block=bytes_per_block,
    )
    return PrefixResult(hit, n, bytes_per_block, saved, hit.tokens_hit * max(n - 1, 0), caching_enabled)


def engine_for(resolved: Resolved, est: Estimate) -> EngineParams:
    """The simulator's engine from the estimate; a PlannerError naming the field when vLLM would not start."""
    if not est.fits or est.num_gpu_blocks < 2:
        # A pool that holds some shorter length points at S; no pool at all at the budget.
        budget = (
            est.kv_cache_bytes <= 0 or not est.estimated_max_model_len or "Free memory" in (est.error or "")
        )
        field = "gpu_memory_utilization" if budget else "max_model_len"
        raise PlannerError(
            field, Text("vLLM would not start, so there is nothing to simulate: {error}", error=est.error)
        )
    sizing = sizing_for(
        model=resolved.model, device=resolved.device, serve=resolved.serve, vllm_version=resolved.vllm_version
    )
    try:
        return EngineParams(
            num_gpu_blocks=est.num_gpu_blocks,
            block_size=est.block_size,
            max_num_seqs=est.max_num_seqs,
            max_model_len=est.max_model_len,
            max_num_batched_tokens=est.max_num_batched_tokens,
            enable_prefix_caching=sizing.resolved.prefix_caching,
        )
    except ValidationError as exc:
        raise PlannerError("max_num_batched_tokens", _first_message(exc)) from exc


def workload_spec(
    *,
    preset: WorkloadPreset | None,
    classes: Sequence[RequestClass] | None,
    num_requests: int | None,
    concurrency: int | None,
    arrival_rate: float | None,
    seed: int,
) -> WorkloadSpec:
    """A preset's spec (or the custom classes) with the overrides given; PlannerError names the field."""
    data: dict[str, Any]
    if preset is not None:
        data = preset.spec.model_dump()
    else:
        data = {"num_requests": DEFAULT_CUSTOM_NUM_REQUESTS, "concurrency": DEFAULT_CUSTOM_CONCURRENCY}
    if classes is not None:
        data["classes"] = [c.model_dump() for c in classes]
    if num_requests is not None:
        data["num_requests"] = num_requests
    if arrival_rate is not None:
        data["arrival_rate"] = arrival_rate
        data["concurrency"] = concurrency  # both given: WorkloadSpec refuses, as it should
    elif concurrency is not None:
        data["concurrency"] = concurrency
        data["arrival_rate"] = None
    data["seed"] = seed
    try:
        return WorkloadSpec.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else "concurrency"
        raise PlannerError(field, _first_message(exc)) from exc


# ---- view models -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    value: str
    label: str


@dataclass(frozen=True)
class Problem:
    field: str
    message: str


@dataclass(frozen=True)
class BlockRowView:
    block_size: int
    bytes_per_block: str
    num_gpu_blocks: str
    usable_tokens: str
    mean_waste_tokens: str
    waste_percent: str
    prefix_hit: str
    table_entries: str
    table_bytes: str
    marks: tuple[str, ...]  # "default", "current"
    rejected: bool
    note: str


@dataclass(frozen=True)
class WasteExample:
    seq_tokens: str
    blocks: str
    slots: str
    wasted: str
    exact: str
    approx: str


@dataclass(frozen=True)
class BlocksView:
    rows: tuple[BlockRowView, ...]
    backend: str
    default_block_size: int
    current_block_size: int
    groups: int
    waste: tuple[WasteExample, ...]
    lengths_text: str


@dataclass(frozen=True)
class PrefixRowView:
    shared: int
    block_size: int
    tokens_hit: int
    tokens_recomputed: int
    blocks_hit: int
    reason: str


@dataclass(frozen=True)
class PrefixView:
    block_size: int
    shared: str
    tokens_hit: str
    tokens_recomputed: str
    blocks_hit: str
    reason: str
    differing: str
    num_requests: str
    saved: str
    saved_tokens: str
    saved_share: str
    saved_formula: str
    note: str  # prefix caching off, or a calculator block size other than the engine's
    seed_rows: tuple[PrefixRowView, ...]


@dataclass(frozen=True)
class PresetView:
    key: str
    label_zh: str
    description: str
    hits_first: str
    checked: bool


@dataclass(frozen=True)
class Metric:
    id: str
    label: str
    value: str


@dataclass(frozen=True)
class ClassRow:
    share: str
    prompt: str
    output: str
    prefix: str


@dataclass(frozen=True)
class WorkloadView:
    title: str
    hits_first: str
    mode: str
    classes: tuple[ClassRow, ...]
    classes_text: str
    edit_link: str
    metrics: tuple[Metric, ...]
    binding_limit: str
    binding_explanation: str
    kv_chart: Markup
    rw_chart: Markup
    summary: str
    series_rows: tuple[tuple[str, str, str, str], ...]
    engine: str


@dataclass(frozen=True)
class ExploreView:
    params: ExploreParams
    values: dict[str, str]
    permalink: str
    planner_link: str
    problems: tuple[Problem, ...]
    error: Problem | None
    engine_line: str
    blocks: BlocksView | None
    prefix: PrefixView | None
    workload: WorkloadView | None
    workload_error: Problem | None
    presets: tuple[PresetView, ...]
    models: tuple[Option, ...]
    devices: tuple[Option, ...]
    versions: tuple[Option, ...]
    kv_dtypes: tuple[Option, ...]
    max_page_requests: str
    wl_help: str
    misprint_note: str


def _bytes_text(num_bytes: int) -> str:
    """Sizes below a GiB in MiB or KiB, so a block or a small saving never reads as 0.00 GiB."""
    if num_bytes >= GIB:
        return gib(num_bytes)
    return (
        Text("{num_bytes:,.2f} MiB", num_bytes=num_bytes / MIB)
        if num_bytes >= MIB
        else Text("{num_bytes:,.1f} KiB", num_bytes=num_bytes / 1024)
    )


def blocks_view(sizes: BlockSizes, est: Estimate, fields: BlockFields) -> BlocksView:
    groups = max(len(est.groups), 1)
    rows = []
    for row in sizes.rows:
        marks = tuple(
            mark
            for mark, on in (
                ("default", row.is_default),
                ("current", row.block_size == sizes.current_block_size),
            )
            if on
        )
        note = sizes.notes.get(row.block_size, "") if row.rejected else ""
        if not note:
            note = row.rejected_reason or sizes.notes.get(row.block_size, "")
        rows.append(
            BlockRowView(
                block_size=row.block_size,
                bytes_per_block=_bytes_text(row.bytes_per_block),
                num_gpu_blocks=integer(row.num_gpu_blocks),
                usable_tokens=integer(row.usable_tokens),
                mean_waste_tokens=f"{row.mean_tail_waste_tokens:,.1f}",
                waste_percent=percent(row.tail_waste_fraction, 2),
                prefix_hit=f"{integer(row.prefix_tokens_hit)} / {integer(fields.shared_prefix_tokens)}",
                table_entries=integer(row.block_table_entries_per_max_seq),
                table_bytes=_bytes_text(row.block_table_bytes_per_max_seq * groups),
                marks=marks,
                rejected=row.rejected,
                note=note,
            )
        )
    b = sizes.current_block_size
    return BlocksView(
        rows=tuple(rows),
        backend=sizes.backend,
        default_block_size=sizes.default_block_size,
        current_block_size=b,
        groups=groups,
        waste=tuple(waste_example(seq_tokens=s, block_size=b) for s in fields.typical_lengths),
        lengths_text=", ".join(integer(s) for s in fields.typical_lengths),
    )


def waste_example(*, seq_tokens: int, block_size: int) -> WasteExample:
    """One sequence's tail: S=1000, B=16 -> 63 blocks, 1008 slots, 8 wasted (0.79 %; B/(2S) = 0.80 %)."""
    blocks = blocks_for_tokens(tokens=seq_tokens, block_size=block_size)
    wasted = tail_waste_tokens(seq_tokens=seq_tokens, block_size=block_size)
    return WasteExample(
        seq_tokens=integer(seq_tokens),
        blocks=integer(blocks),
        slots=integer(blocks * block_size),
        wasted=integer(wasted),
        exact=percent(wasted / (blocks * block_size), 2),
        approx=percent(expected_tail_waste_fraction(seq_tokens=seq_tokens, block_size=block_size), 2),
    )


def _prefix_row(hit: PrefixHit) -> PrefixRowView:
    return PrefixRowView(
        hit.shared_prefix_tokens,
        hit.block_size,
        hit.tokens_hit,
        hit.tokens_recomputed,
        hit.blocks_hit,
        hit.reason,
    )


def seed_prefix_rows() -> tuple[PrefixRowView, ...]:
    return tuple(
        _prefix_row(prefix_cache_hit(shared_prefix_tokens=s, block_size=SEED_EXAMPLE_BLOCK_SIZE))
        for s in SEED_EXAMPLE_SHARED
    )


def prefix_view(
    result: PrefixResult, *, differing: Sequence[str], engine_block_size: int, kv_cache_bytes: int
) -> PrefixView:
    hit = result.hit
    labels = dict(EXTRA_KEY_FIELDS)
    notes = []
    if not result.caching_enabled:
        notes.append(
            Text(
                "Prefix caching is off for this engine (--enable-prefix-caching): nothing hits in vLLM; the numbers show what would hit with it on."
            )
        )
    if hit.block_size != engine_block_size:
        notes.append(
            Text(
                "Calculated at B = {block_size}; the engine runs B = {engine_block_size}.",
                block_size=hit.block_size,
                engine_block_size=engine_block_size,
            )
        )
    share = result.saved_bytes / kv_cache_bytes if kv_cache_bytes > 0 else 0.0
    return PrefixView(
        block_size=hit.block_size,
        shared=integer(hit.shared_prefix_tokens),
        tokens_hit=integer(hit.tokens_hit),
        tokens_recomputed=integer(hit.tokens_recomputed),
        blocks_hit=integer(hit.blocks_hit),
        reason=hit.reason,
        differing=", ".join(labels[key] for key in differing),
        num_requests=integer(result.num_requests),
        saved=_bytes_text(result.saved_bytes),
        saved_tokens=integer(result.saved_tokens),
        saved_share=percent(share),
        saved_formula=(
            Text(
                "{blocks_hit} blocks × ({num_requests} − 1) × {bytes_per_block} B",
                blocks_hit=integer(hit.blocks_hit),
                num_requests=integer(result.num_requests),
                bytes_per_block=integer(result.bytes_per_block),
            )
        ),
        note=" ".join(notes),
        seed_rows=seed_prefix_rows(),
    )


def _series_table(result: WorkloadResult) -> tuple[tuple[str, str, str, str], ...]:
    series = result.series
    n = len(series.step)
    if not n:
        return ()
    picks = sorted(
        {round(i * (n - 1) / max(SERIES_TABLE_ROWS - 1, 1)) for i in range(min(n, SERIES_TABLE_ROWS))}
    )
    return tuple(
        (
            integer(series.step[i]),
            percent(series.kv_usage[i]),
            integer(series.running[i]),
            integer(series.waiting[i]),
        )
        for i in picks
    )


def _class_rows(spec: WorkloadSpec) -> tuple[ClassRow, ...]:
    total = sum(c.share for c in spec.classes)
    return tuple(
        ClassRow(
            share=percent(c.share / total, 0),
            prompt=describe_length(c.prompt_tokens),
            output=describe_length(c.output_tokens),
            prefix=f"{c.shared_prefix_tokens:,} ({c.prefix_group})" if c.shared_prefix_tokens else "—",
        )
        for c in spec.classes
    )


def workload_view(
    *,
    result: WorkloadResult,
    spec: WorkloadSpec,
    engine: EngineParams,
    preset: WorkloadPreset | None,
    edit_link: str,
) -> WorkloadView:
    series = result.series
    max_waiting = max(series.waiting, default=0)
    y_conc = max(max(series.running, default=0), max_waiting, 1)
    limit_visible = engine.max_num_seqs <= 2 * y_conc
    y_top = max(y_conc, engine.max_num_seqs) if limit_visible else y_conc
    y_top = int(y_top * 1.1) + 1
    conc_ticks = [(float(t), integer(t)) for t in explore_svg.nice_ticks(y_top, 4)]
    pct_ticks = [(t / 4, percent(t / 4, 0)) for t in range(5)]
    usage_desc = Text(
        "KV cache usage over {steps} scheduler steps: peak {peak_kv_usage}, mean {mean_kv_usage} of {usable_blocks} usable blocks.",
        steps=integer(result.steps),
        peak_kv_usage=percent(result.peak_kv_usage),
        mean_kv_usage=percent(result.mean_kv_usage),
        usable_blocks=integer(result.usable_blocks),
    )
    rw_desc = Text(
        "Running requests peak at {max_running} (mean {mean_running:.1f}); waiting peaks at {max_waiting} (mean {mean_waiting:.1f}); max_num_seqs is {max_num_seqs}.",
        max_running=integer(result.max_running),
        mean_running=result.mean_running,
        max_waiting=integer(max_waiting),
        mean_waiting=result.mean_waiting,
        max_num_seqs=integer(engine.max_num_seqs),
    )
    kv_chart = explore_svg.step_chart(
        chart_id="chart-kv",
        steps=series.step,
        lines=[explore_svg.Line("kv", Text("KV cache usage"), series.kv_usage, fill=True)],
        y_max=1.0,
        y_ticks=pct_ticks,
        title=Text("KV cache usage over simulated time"),
        desc=usage_desc,
        x_label=Text("scheduler step (one forward pass)"),
        y_label=Text("KV usage"),
    )
    rw_chart = explore_svg.step_chart(
        chart_id="chart-rw",
        steps=series.step,
        lines=[
            explore_svg.Line("running", "running", series.running),
            explore_svg.Line("waiting", "waiting", series.waiting),
        ],
        y_max=y_top,
        y_ticks=conc_ticks,
        title=Text("Running and waiting requests over simulated time"),
        desc=rw_desc,
        x_label=Text("scheduler step (one forward pass)"),
        y_label="requests",
        limit=explore_svg.Limit(
            engine.max_num_seqs,
            Text("max_num_seqs = {max_num_seqs}", max_num_seqs=integer(engine.max_num_seqs)),
        )
        if limit_visible
        else None,
    )
    if spec.arrival_rate is not None:
        mode = Text(
            "open loop: Poisson arrivals, {arrival_rate:g} requests per step", arrival_rate=spec.arrival_rate
        )
    else:
        mode = Text(
            "closed loop: {integer} clients, each sends its next request when one ends",
            integer=integer(spec.concurrency or 0),
        )
    metrics = (
        Metric("w-max-running", Text("Concurrency reached (max running)"), integer(result.max_running)),
        Metric("w-mean-running", Text("Mean running"), f"{result.mean_running:.1f}"),
        Metric("w-preemptions", "Preemptions", integer(result.preemptions)),
        Metric("w-mean-waiting", Text("Mean waiting"), f"{result.mean_waiting:.1f}"),
        Metric("w-max-waiting", Text("Max waiting"), integer(max_waiting)),
        Metric("w-peak-kv", Text("Peak KV usage"), percent(result.peak_kv_usage)),
        Metric("w-prefix-hit", Text("Prefix hit rate"), percent(result.prefix_hit_rate)),
        Metric(
            "w-fragmentation", Text("Fragmentation waste"), percent(result.fragmentation_waste_fraction, 2)
        ),
        Metric(
            "w-finished",
            Text("Finished / rejected"),
            f"{integer(result.finished)} / {integer(result.rejected)}",
        ),
        Metric("w-steps", "Steps", integer(result.steps)),
    )
    blocked = ", ".join(f"{k} {integer(v)}" for k, v in result.admission_blocked_steps.items())
    summary = Text(
        "{usage_desc} {rw_desc} Steps on which admission stopped, by cause: {blocked}.",
        usage_desc=usage_desc,
        rw_desc=rw_desc,
        blocked=blocked,
    )
    return WorkloadView(
        title=f"{preset.label_zh} — {preset.description}" if preset else Text("Custom request classes"),
        hits_first=preset.hits_first if preset else "",
        mode=mode,
        classes=_class_rows(spec),
        classes_text=encode_classes(spec.classes),
        edit_link=edit_link,
        metrics=metrics,
        binding_limit=result.binding_limit,
        binding_explanation=result.binding_explanation,
        kv_chart=kv_chart,
        rw_chart=rw_chart,
        summary=summary,
        series_rows=_series_table(result),
        engine=(
            Text(
                "{num_gpu_blocks} blocks of {block_size} tokens, max_num_seqs {max_num_seqs}, max_num_batched_tokens {max_num_batched_tokens}, max_model_len {max_model_len}, prefix caching {value}, {num_requests} requests, seed {seed}",
                num_gpu_blocks=integer(engine.num_gpu_blocks),
                block_size=engine.block_size,
                max_num_seqs=integer(engine.max_num_seqs),
                max_num_batched_tokens=integer(engine.max_num_batched_tokens),
                max_model_len=integer(engine.max_model_len),
                value="on" if engine.enable_prefix_caching else "off",
                num_requests=integer(spec.num_requests),
                seed=spec.seed,
            )
        ),
    )


def _values(params: ExploreParams) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in params.model_dump().items():
        if value is None:
            out[name] = ""
        elif isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, tuple | list):
            out[name] = ",".join(str(v) for v in value)
        elif isinstance(value, float):
            out[name] = f"{value:g}"
        else:
            out[name] = str(value)
    return out


HIDDEN_PLANNER_FIELDS = frozenset(
    {"devices", "target_concurrency", "pipeline_parallel_size", "enforce_eager", "config_json"}
    | {name for name in PlannerParams.model_fields if name.startswith("card_")}
)


def hidden_inputs(params: ExploreParams) -> list[tuple[str, str]]:
    """Planner parameters the explore form does not show, carried so the round trip keeps them."""
    return [(k, v) for k, v in query_items(params) if k in HIDDEN_PLANNER_FIELDS]


@dataclass(frozen=True)
class _Sections:
    params: ExploreParams
    problems: list[FieldProblem]
    error: Problem | None = None
    engine_line: str = ""
    blocks: BlocksView | None = None
    prefix: PrefixView | None = None
    workload: WorkloadView | None = None
    workload_error: Problem | None = None


def _sections(request: Request, params: ExploreParams, problems: list[FieldProblem]) -> _Sections:
    """Resolve the inputs and compute the three sections; a PlannerError becomes the page's error."""
    try:
        resolved, more = resolve_lenient(params)
    except PlannerError as exc:  # the catalogue itself is unusable: nothing to fall back to
        return _Sections(params, problems, error=Problem(exc.field, exc.message))
    problems = problems + more
    params = ExploreParams.model_validate({**params.model_dump(), **resolved.params.model_dump()})
    resolved = dataclasses.replace(resolved, params=params)
    try:
        est = _estimate(resolved)
    except PlannerError as exc:
        return _Sections(params, problems, error=Problem(exc.field, exc.message))
    engine_line = Text(
        "{model_label} on {name} · vLLM {vllm_version} · {attention_backend} · B = {block_size} · {num_gpu_blocks} blocks · {kv_cache_bytes} KV pool",
        model_label=resolved.model_label,
        name=resolved.device.name,
        vllm_version=est.vllm_version,
        attention_backend=est.attention_backend,
        block_size=est.block_size,
        num_gpu_blocks=integer(est.num_gpu_blocks),
        kv_cache_bytes=gib(est.kv_cache_bytes),
    )
    sizes = block_sizes(resolved, est, params)
    blocks = blocks_view(sizes, est, params)
    prefix, params, problems = _prefix_section(resolved, params, est, sizes, problems)
    workload, workload_error, params, problems = _workload_section(request, resolved, params, est, problems)
    return _Sections(params, problems, None, engine_line, blocks, prefix, workload, workload_error)


def _catalog_options() -> tuple[tuple[Option, ...], tuple[Option, ...]]:
    try:
        models = tuple(Option(m.id, m.description) for m in list_models())
        devices = tuple(Option(d.id, d.name) for d in list_devices())
    except PlannerError:  # reported by _sections already
        return (), ()
    return models, devices


def build_view(request: Request, params: ExploreParams, problems: list[FieldProblem]) -> ExploreView:
    sec = _sections(request, params, problems)
    params = sec.params
    models, devices = _catalog_options()
    return ExploreView(
        params=params,
        values=_values(params),
        permalink=f"{request.url_for('explore').path}?{explore_query(params)}",
        planner_link=f"{request.url_for('planner').path}?{to_query(planner_params(params))}",
        problems=tuple(Problem(p.field, p.message.removeprefix("Value error, ")) for p in sec.problems),
        error=sec.error,
        engine_line=sec.engine_line,
        blocks=sec.blocks,
        prefix=sec.prefix,
        workload=sec.workload,
        workload_error=sec.workload_error,
        presets=tuple(
            PresetView(p.key, p.label_zh, p.description, p.hits_first, p.key == params.preset)
            for p in WORKLOAD_PRESETS.values()
        ),
        models=models,
        devices=devices,
        versions=tuple(Option(v, v) for v in reversed(KNOWN_VERSIONS)),
        kv_dtypes=tuple(Option(d, d) for d in KV_CACHE_DTYPES),
        max_page_requests=integer(MAX_PAGE_REQUESTS),
        wl_help=WL_HELP,
        misprint_note=SEED_MISPRINT_NOTE,
    )


def _prefix_section(
    resolved: Resolved, params: ExploreParams, est: Estimate, sizes: BlockSizes, problems: list[FieldProblem]
) -> tuple[PrefixView, ExploreParams, list[FieldProblem]]:
    caching = sizing_for(
        model=resolved.model, device=resolved.device, serve=resolved.serve, vllm_version=resolved.vllm_version
    ).resolved.prefix_caching
    block_size = params.prefix_block_size or est.block_size
    try:
        result = prefix_result(
            params,
            block_size=block_size,
            bytes_per_block=sizes.bytes_per_block_at(block_size),
            caching_enabled=caching,
        )
    except PlannerError as exc:  # request_tokens below the shared prefix: drop it and say so
        problems = [*problems, FieldProblem(exc.field, str(getattr(params, exc.field, "")), exc.message)]
        params = params.model_copy(update={"request_tokens": None, "mm_item_start_token": None})
        result = prefix_result(
            params,
            block_size=block_size,
            bytes_per_block=sizes.bytes_per_block_at(block_size),
            caching_enabled=caching,
        )
    view = prefix_view(
        result,
        differing=params.extra_keys_differ,
        engine_block_size=est.block_size,
        kv_cache_bytes=max(0, est.kv_cache_bytes),
    )
    return view, params, problems


def _workload_section(
    request: Request, resolved: Resolved, params: ExploreParams, est: Estimate, problems: list[FieldProblem]
) -> tuple[WorkloadView | None, Problem | None, ExploreParams, list[FieldProblem]]:
    preset = WORKLOAD_PRESETS.get(params.preset)
    classes = None if preset else parse_classes(params.wl or DEFAULT_CUSTOM_WL)
    concurrency = params.concurrency
    if params.arrival_rate is not None and concurrency is not None:
        problems = [
            *problems,
            FieldProblem("concurrency", str(concurrency), Text("ignored: arrival_rate is set (open loop)")),
        ]
        params = params.model_copy(update={"concurrency": None})
        concurrency = None
    try:
        engine = engine_for(resolved, est)
        spec = workload_spec(
            preset=preset,
            classes=classes,
            num_requests=params.num_requests,
            concurrency=concurrency,
            arrival_rate=params.arrival_rate,
            seed=params.seed,
        )
    except PlannerError as exc:
        return None, Problem(exc.field, exc.message), params, problems
    result = simulate(workload=spec, engine=engine)
    edit = params.model_copy(
        update={
            "preset": CUSTOM,
            "wl": encode_classes(spec.classes),
            "num_requests": spec.num_requests,
            "concurrency": spec.concurrency,
            "arrival_rate": spec.arrival_rate,
        }
    )
    edit_link = f"{request.url_for('explore').path}?{explore_query(edit)}"
    view = workload_view(result=result, spec=spec, engine=engine, preset=preset, edit_link=edit_link)
    return view, None, params, problems


# ---- routes ------------------------------------------------------------------------------------


def wants_fragment(request: Request) -> bool:
    """htmx asks for the block, except when restoring history (then it needs the whole page)."""
    return (
        request.headers.get("HX-Request") == "true"
        and request.headers.get("HX-History-Restore-Request") != "true"
    )


@router.get("/explore", name="explore", response_class=HTMLResponse)
def explore_page(request: Request) -> Response:
    params, problems = parse_explore_lenient(request.query_params.multi_items())
    view = build_view(request, params, problems)
    renderer = request.app.state.renderer
    context = {"view": view, "hidden": hidden_inputs(view.params)}
    headers = {"Vary": "HX-Request"}
    if wants_fragment(request):
        body = renderer.block("explore.html", "results", request, context)
        headers["HX-Replace-Url"] = view.permalink
    else:
        body = renderer.page("explore.html", request, context)
    return HTMLResponse(body, status_code=422 if view.error else 200, headers=headers)


def _query_error(exc: ValidationError) -> RequestValidationError:
    return RequestValidationError(
        [
            {**err, "loc": ("query", *err["loc"])}
            for err in exc.errors(include_url=False, include_context=False)
        ]
    )


def _resolve_api(params: StrictPlannerParams, quantization: str | None = None) -> Resolved:
    resolved = resolve_strict(params)
    if quantization:
        resolved = dataclasses.replace(resolved, model=apply_quantization_flag(resolved.model, quantization))
    return resolved


@api_router.get("/blocks", name="api_blocks")
def blocks_api(request: Request) -> dict[str, Any]:
    """The block-size table and the prefix-cache calculator for the /explore query parameters."""
    try:
        query = BlocksQuery.model_validate(dict(request.query_params.multi_items()))
    except ValidationError as exc:
        raise _query_error(exc) from exc
    resolved = _resolve_api(query)
    est = _estimate(resolved)
    sizes = block_sizes(resolved, est, query)
    caching = sizing_for(
        model=resolved.model, device=resolved.device, serve=resolved.serve, vllm_version=resolved.vllm_version
    ).resolved.prefix_caching
    block_size = query.prefix_block_size or est.block_size
    prefix = prefix_result(
        query,
        block_size=block_size,
        bytes_per_block=sizes.bytes_per_block_at(block_size),
        caching_enabled=caching,
    )
    return {
        "attention_backend": sizes.backend,
        "default_block_size": sizes.default_block_size,
        "block_size": sizes.current_block_size,
        "kv_cache_bytes": est.kv_cache_bytes,
        "max_model_len": est.max_model_len,
        "typical_lengths": list(query.typical_lengths),
        "block_sizes": [
            {**row.model_dump(), "note": sizes.notes.get(row.block_size) or row.rejected_reason}
            for row in sizes.rows
        ],
        "prefix": {
            **prefix.hit.model_dump(),
            "extra_keys_differ": list(query.extra_keys_differ),
            "num_requests": prefix.num_requests,
            "bytes_per_block": prefix.bytes_per_block,
            "memory_saved_bytes": prefix.saved_bytes,
            "tokens_saved": prefix.saved_tokens,
            "prefix_caching_enabled": prefix.caching_enabled,
        },
    }


@api_router.post("/workload", name="api_workload")
def workload_api(body: WorkloadRequest) -> dict[str, Any]:
    """Simulate a workload on the engine /api/estimate predicts for the same parameters."""
    if (body.classes is None) == (body.preset is None):
        raise PlannerError(
            "classes", Text("give exactly one of classes (a list of request classes) or preset")
        )
    resolved = _resolve_api(body, body.quantization)
    est = _estimate(resolved)
    engine = engine_for(resolved, est)
    spec = workload_spec(
        preset=WORKLOAD_PRESETS[body.preset] if body.preset else None,
        classes=body.classes,
        num_requests=body.num_requests,
        concurrency=body.concurrency,
        arrival_rate=body.arrival_rate,
        seed=body.seed,
    )
    result = simulate(workload=spec, engine=engine)
    return {
        **result.model_dump(),
        "preset": body.preset,
        "engine": engine.model_dump(),
        "workload": spec.model_dump(),
        "attention_backend": est.attention_backend,
        "vllm_version": est.vllm_version,
    }
