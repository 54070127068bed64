"""Explore page inputs: its own query parameters on top of the planner's, and the compact `wl=` workload encoding."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Annotated, Any
from urllib.parse import urlencode

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from app.core import numbers, regex
from app.core.text import Text
from app.core.workload import (
    MAX_NUM_REQUESTS,
    WORKLOAD_PRESETS,
    LengthDist,
    LognormalLength,
    RequestClass,
    UniformLength,
)
from app.web.i18n import tr
from app.web.inputs.lenient import parse_lenient
from app.web.inputs.links import query_items
from app.web.inputs.params import (
    INT_OR_NONE,
    Flag,
    OptBlockSize,
    OptTokenIndex,
    OptTokens,
    PlannerParams,
    StrictPlannerParams,
    parse_human_int,
    replace,
)
from app.web.inputs.problems import Problem
from app.web.validation import message_of

# The page runs the simulation inside the request; 20,000 requests keep it well under a second
# on the presets' shapes (the core itself allows MAX_NUM_REQUESTS). The API uses the same cap.
MAX_PAGE_REQUESTS = 20_000
MAX_CLIENT_CONCURRENCY = 65_536  # closed-loop clients; vLLM's own max_num_seqs tops out here too
OptPageRequests = Annotated[Annotated[int, Field(ge=1, le=MAX_PAGE_REQUESTS)] | None, INT_OR_NONE]
OptClients = Annotated[Annotated[int, Field(ge=1, le=MAX_CLIENT_CONCURRENCY)] | None, INT_OR_NONE]
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
    "The reference guide (the Chinese KV-cache guide this planner follows) says “两条请求共享 14 个 token、block size 为 4 时，只有前 8 个 token 命中”. 14 shared tokens at B = 4 are 3 full blocks: 12 tokens hit and 2 are recomputed. Its own explanation (“第三块只对上 2/4”) describes 10 shared tokens: 2 full blocks = 8 tokens hit."
)
EXTRA_KEY_FIELDS = (
    ("lora", Text("LoRA adapter ID")),
    ("mm", Text("multimodal input hash")),
    ("cache_salt", "cache_salt"),
)


# ---- the compact workload encoding: wl=share:prompt:output[:prefix[:group]];… -------------------

# ASCII digits only ([0-9], not \d: int() would take Arabic-Indic digits); lengths go through the
# shared bounded parser (app.core.numbers), so a 400-digit length is a message, not a huge int.
_FIXED = regex.compile(r"[0-9]+")
_UNIFORM = regex.compile(r"([0-9]+)-([0-9]+)")
_LOGNORMAL = regex.compile(r"([0-9]+)~([0-9]+(?:\.[0-9]+)?)~([0-9]+)(?:~([0-9]+))?")
_GROUP = regex.compile(r"[A-Za-z0-9_-]{1,64}")
WL_HELP = Text(
    "One class per “;”: share:prompt:output[:shared_prefix[:group]]. A length is N (fixed), LOW-HIGH (uniform) or MEDIAN~SIGMA~MAX (lognormal). Example: 0.9:300~0.6~3000:150;0.1:20000-28000:500"
)


def parse_length(text: str) -> LengthDist:
    """``512`` fixed, ``100-2000`` uniform, ``300~0.6~3000[~MIN]`` lognormal; ValueError otherwise."""
    if _FIXED.fullmatch(text):
        return numbers.parse_int(text)
    if match := _UNIFORM.fullmatch(text):
        return UniformLength(
            dist="uniform", low=numbers.parse_int(match[1]), high=numbers.parse_int(match[2])
        )
    if match := _LOGNORMAL.fullmatch(text):
        return LognormalLength(
            dist="lognormal",
            median=numbers.parse_int(match[1]),
            sigma=numbers.parse_float(match[2]),
            max=numbers.parse_int(match[3]),
            min=numbers.parse_int(match[4]) if match[4] else 1,
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
    message = tr(message_of(error))
    return f"{where}: {message}" if where else message


def parse_classes(text: str) -> list[RequestClass]:
    """The ``wl`` query value as request classes; ValueError names the class and the problem."""
    compact = regex.sub(r"\s+", "", text)
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
                "share": numbers.parse_float(parts[0]),
                "prompt_tokens": parse_length(parts[1]),
                "output_tokens": parse_length(parts[2]),
            }
            if len(parts) >= 4 and parts[3]:
                data["shared_prefix_tokens"] = numbers.parse_int(parts[3])
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
        items = [item for item in regex.split(r"[,\s]+", value.strip()) if item]
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
    Annotated[float, Field(ge=1e-4, le=1e4, allow_inf_nan=False)] | None,
    BeforeValidator(lambda v: (numbers.parse_float(v) if v.strip() else None) if isinstance(v, str) else v),
]


class BlockFields(BaseModel):
    """Inputs of the block-size explorer and the prefix-cache calculator."""

    typical_lengths: TypicalLengths = DEFAULT_TYPICAL_LENGTHS
    shared_prefix_tokens: HumanTokens = DEFAULT_SHARED_PREFIX_TOKENS
    request_tokens: OptTokens = None  # caps the hit at request - 1 token
    lora: Flag = False
    mm: Flag = False
    cache_salt: Flag = False
    mm_item_start_token: OptTokenIndex = None
    num_requests_sharing: Annotated[int, Field(ge=1, le=65_536)] = DEFAULT_NUM_REQUESTS_SHARING
    prefix_block_size: OptBlockSize = None  # None: the engine's effective block size

    @property
    def extra_keys_differ(self) -> tuple[str, ...]:
        return tuple(key for key, _ in EXTRA_KEY_FIELDS if getattr(self, key))


class WorkloadFields(BaseModel):
    """Inputs of the workload simulator (blank = the preset's value)."""

    preset: Annotated[str, BeforeValidator(lambda v: v.strip() if isinstance(v, str) else v)] = DEFAULT_PRESET
    wl: Annotated[str, Field(max_length=WL_MAX_CHARS)] = ""
    num_requests: OptPageRequests = None
    concurrency: OptClients = None
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

    @classmethod
    def unset_when_blank(cls) -> Collection[str]:
        """Every field whose default is not None: a cleared box is its default (app/web/inputs/unset.py)."""
        return _DEFAULTED_FIELDS


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
    arrival_rate: float | None = Field(default=None, ge=1e-4, le=1e4, allow_inf_nan=False)
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


EXPLORE_FIELDS: tuple[str, ...] = (*BlockFields.model_fields, *WorkloadFields.model_fields)
_DEFAULTED_FIELDS = frozenset(name for name, f in ExploreParams.model_fields.items() if f.default is not None)
EXPLORE_DEFAULTS = ExploreParams()


def parse_explore_lenient(
    query: Mapping[str, str] | Iterable[tuple[str, str]],
) -> tuple[ExploreParams, list[Problem]]:
    """Never fails: a field that does not validate is reported and falls back to its default; a blank value
    of a field whose default is not None is that default (a cleared box: ExploreParams.unset_when_blank)."""
    return parse_lenient(ExploreParams, query)


def planner_params(params: PlannerParams) -> PlannerParams:
    """The planner's part of the inputs, what was given still given (inputs.params.replace: the planner link
    keeps a typed target N = 1 and leaves out one nobody typed)."""
    return replace(params)


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
