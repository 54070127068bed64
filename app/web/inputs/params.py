"""The planner's parameters, which every feature reads its inputs with: one pydantic model (lenient
for the pages, ``StrictPlannerParams`` for the API), its field types, and the mapping to the core's
ServeConfig. The lenient parser is app.web.inputs.lenient, the permalinks app.web.inputs.links.

Names are the `vllm serve` flags in snake_case so a permalink reads like the command it describes.
``v`` versions the link format; a test keeps a stored link from the first release working.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import json
import zlib
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_validator,
)

from app.core import numbers
from app.core.errors import PlannerError
from app.core.hf_config.reduce import planner_config
from app.core.json_reasons import json_reason
from app.core.perf.bench_args import BenchArgs, infinite_as_text
from app.core.perf.schedule import Workload
from app.core.perf.workload import speed_clients, speed_workload
from app.core.plan import MAX_DEVICE_MEMORY_GIB, MIN_DEVICE_MEMORY_GIB, QUANTIZATION_FLAGS
from app.core.serve_flags import FLAGS_BY_FIELD, FlagKind, bounds
from app.core.specs import RELEASE_DEFAULT_FLAGS, KVCacheDType, ReleaseDefaultFlags, ServeConfig
from app.core.text import Msg, Text
from app.core.versions import DEFAULT_VERSION, resolve_version
from app.web.inputs.unset import without_unset
from app.web.security import check_json_text
from app.web.validation import message_of

LINK_FORMAT_VERSION: Literal[1] = 1
DEFAULT_MODEL = "meta-llama/Llama-3.1-8B"
DEFAULT_DEVICE = "nvidia-h100-sxm-80gb"
# A pasted config.json (POST): real ones reach 3 MB (ModelOpt MIXED_PRECISION lists every module:
# nvidia/MiniMax-M3-NVFP4, tests/data/configs/current); json.loads is linear and the depth is checked first.
CONFIG_JSON_MAX_CHARS = 4 * 2**20
# Permalinks carry the config cut to what the planner reads (hf_config.reduce.planner_config), deflated
# (pack_config_json): that MiniMax-M3 config packs to ~2 KB. A packed value is at most this long.
PACKED_CONFIG_MAX_CHARS = 65_536
PACKED_CONFIG_PREFIX = "z:"
PACKED_FIELDS = (
    "config_json",
    "hf_quant_config_json",
    "my_runs",
)  # long pasted texts the permalink carries deflated
MY_RUNS_MAX_CHARS = 65_536  # pasted bench results: ~40 printed blocks
PACK_LEVEL = 9
UNPACKED_MAX_BYTES = 4 * CONFIG_JSON_MAX_CHARS  # UTF-8 takes at most 4 bytes a character
CARD_DTYPES = ("bfloat16", "float16", "float32")
DEFAULT_LORA_RANK = ServeConfig.model_fields["max_lora_rank"].default  # vLLM's --max-lora-rank default


TRUE_WORDS = frozenset({"1", "true", "on", "yes"})
FALSE_WORDS = frozenset({"0", "false", "off", "no"})


def parse_human_int(value: object) -> object:
    """`32k` -> 32000, `128K` -> 131072 (vLLM's human-readable ints); non-strings pass through."""
    if not isinstance(value, str):
        return value
    return numbers.parse_human_int(value)  # its ValueError names the problem; pydantic names the field


def parse_param_count(value: object) -> object:
    if not isinstance(value, str):
        return value
    return numbers.parse_count(value)  # bounded, ASCII digits only: a ValueError is a 422 naming the field


def _blank_to_none(value: object) -> object:
    if isinstance(value, str) and value.strip() == "":
        return None
    return value


def _float_or_zero(value: object) -> object:
    return 0.0 if _blank_to_none(value) is None else _float_or_none(value)


DEFAULT_MM_PROCESSOR_CACHE_GIB = float(ServeConfig.model_fields["mm_processor_cache_gb"].default)


def _float_or_mm_cache(value: object) -> object:
    return DEFAULT_MM_PROCESSOR_CACHE_GIB if _blank_to_none(value) is None else _float_or_none(value)


def _int_or_one(value: object) -> object:
    return 1 if _blank_to_none(value) is None else _int_or_none(value)


def _int_or_lora_rank(value: object) -> object:
    return DEFAULT_LORA_RANK if _blank_to_none(value) is None else _int_or_none(value)


def _human_int_or_none(value: object) -> object:
    return parse_human_int(_blank_to_none(value))


def _bool_word(value: object) -> object:
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    return value


def _link_version(value: object) -> object:
    return int(value) if isinstance(value, str) and value.strip().isdigit() else value


def _tri_state(value: object) -> object:
    """``enable_prefix_caching``: blank/"default" -> None (the version's default), else a bool."""
    if isinstance(value, str) and value.strip().lower() in ("", "default", "auto"):
        return None
    return _bool_word(value)


def _lang(value: object) -> object:
    if isinstance(value, str):
        primary = value.strip().replace("_", "-").split("-")[0].lower()
        return primary if primary in ("en", "zh") else None
    return value


def _int_or_none(value: object) -> object:
    value = _blank_to_none(value)
    return numbers.parse_int(value) if isinstance(value, str) else value


def _float_or_none(value: object) -> object:
    value = _blank_to_none(value)
    return numbers.parse_float(value) if isinstance(value, str) else value


def compact_config_json(text: str) -> str:
    """A pasted config.json cut to what the planner reads (planner_config: the same ModelSpec) and
    re-serialised without whitespace, so permalinks stay as short as possible."""
    config = json.loads(text)
    if isinstance(config, dict):
        # a config the planner refuses travels as it is, to be refused again with its message
        with contextlib.suppress(PlannerError):
            config = planner_config(config)
    return _compact_dumps(config)


def _compact_dumps(value: object) -> str:
    """Compact JSON, non-ASCII kept as is, unless the value holds a lone surrogate (the escape \\ud800 decodes to
    one, and UTF-8 cannot encode it: the permalink's deflate and the page's response would raise): then escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":"))
    return text


def pack_config_json(text: str) -> str:
    """The permalink's form of a config.json: ``z:`` + base64url(deflate(compact JSON)).

    A pasted config.json starts with ``{``, so the prefix is unambiguous and older links that carry
    the JSON itself keep working. Real configs deflate 4-10x (a 25 KiB one to ~3 KiB), so a permalink
    stays far below the URL limits of browsers and proxies, and the page echoes less (every link on
    it carries the config). Stateless on purpose: no server-side store to fill or to lose.
    """
    return pack_text(compact_config_json(text))


def pack_quant_config_json(text: str) -> str:
    """The permalink's form of an hf_quant_config.json: its quantization block cut the way a config.json's
    is (planner_config reads it as config.json's quantization_config), compact, deflated."""
    quant = json.loads(text)
    if isinstance(quant, dict):
        with contextlib.suppress(PlannerError):
            quant = planner_config({"quantization_config": quant})["quantization_config"]
    return pack_text(_compact_dumps(quant))


def pack_text(text: str) -> str:
    """``z:`` + base64url(deflate(text)): how a permalink carries a long pasted text (unpack_config_json reads it)."""
    packed = zlib.compress(text.encode("utf-8"), PACK_LEVEL)
    return PACKED_CONFIG_PREFIX + base64.urlsafe_b64encode(packed).rstrip(b"=").decode("ascii")


def unpack_config_json(value: object) -> object:
    """``z:…`` back to the JSON text, bounded: at most CONFIG_JSON_MAX_CHARS in and ~4x that out."""
    if not isinstance(value, str) or not value.startswith(PACKED_CONFIG_PREFIX):
        return value
    data = value[len(PACKED_CONFIG_PREFIX) :].strip()
    if len(data) > PACKED_CONFIG_MAX_CHARS:
        raise ValueError(
            Text("a packed config (z:…) of at most {limit:,} characters", limit=PACKED_CONFIG_MAX_CHARS)
        )
    try:
        raw = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
        inflater = zlib.decompressobj()
        text = inflater.decompress(raw, UNPACKED_MAX_BYTES)  # a deflate bomb stops here
        if inflater.unconsumed_tail or not inflater.eof:
            raise ValueError(Text("a packed config (z:…) that does not unpack to at most 16 MiB of JSON"))
        return text.decode("utf-8")
    except (binascii.Error, zlib.error, UnicodeDecodeError) as exc:
        raise ValueError(
            Text("a packed config (z:…) that does not unpack to at most 16 MiB of JSON")
        ) from exc


# Optional bounded ints: blank means None (vLLM's default); the "human" ones also take `32k` / `32K`.
# One named type per bound, so mypy sees ``int | None`` and pydantic the bounds.
HUMAN_OR_NONE = BeforeValidator(_human_int_or_none)
INT_OR_NONE = BeforeValidator(_int_or_none)
MAX_TOKENS = 10_000_000  # lengths and token counts a form takes (the core's MAX_MODEL_LEN_CEILING)
MAX_SEQS = 65_536  # vLLM's --max-num-seqs tops out here; closed-loop clients too
OptMaxModelLen = Annotated[Annotated[int, Field(ge=16, le=MAX_TOKENS)] | None, HUMAN_OR_NONE]
OptTokens = Annotated[Annotated[int, Field(ge=1, le=MAX_TOKENS)] | None, HUMAN_OR_NONE]
OptSeqs = Annotated[Annotated[int, Field(ge=1, le=MAX_SEQS)] | None, HUMAN_OR_NONE]
OptBlockSize = Annotated[Annotated[int, Field(ge=1, le=16_384)] | None, INT_OR_NONE]
OptLayersOrHeads = Annotated[Annotated[int, Field(ge=1, le=1024)] | None, INT_OR_NONE]
OptHeadSize = Annotated[Annotated[int, Field(ge=1, le=4096)] | None, INT_OR_NONE]
OptRopeDim = Annotated[Annotated[int, Field(ge=0, le=4096)] | None, INT_OR_NONE]
OptLoraRank = Annotated[Annotated[int, Field(ge=1, le=65_536)] | None, INT_OR_NONE]
OptHiddenSize = Annotated[Annotated[int, Field(ge=1, le=1_000_000)] | None, INT_OR_NONE]
OptVocabSize = Annotated[Annotated[int, Field(ge=1, le=MAX_TOKENS)] | None, INT_OR_NONE]
OptTokenIndex = Annotated[Annotated[int, Field(ge=0, le=MAX_TOKENS)] | None, INT_OR_NONE]
# The serve fields take their bounds from the one flag table (app/core/serve_flags.py, the bounds
# ServeConfig has); a page-only limit is a stricter constraint after it (pydantic keeps the last):
# the length slider's 16-token floor, at most 1 PiB of --kv-cache-memory-bytes, TP a power of two <= 256.
PAGE_MIN_MAX_MODEL_LEN = 16
PAGE_MAX_KV_CACHE_BYTES = 2**50
ServeMaxModelLen = Annotated[
    Annotated[int, bounds("max_model_len"), Field(ge=PAGE_MIN_MAX_MODEL_LEN)] | None, HUMAN_OR_NONE
]
ServeSeqs = Annotated[Annotated[int, bounds("max_num_seqs")] | None, HUMAN_OR_NONE]
ServeKvCacheBytes = Annotated[
    Annotated[int, bounds("kv_cache_memory_bytes"), Field(le=PAGE_MAX_KV_CACHE_BYTES)] | None, HUMAN_OR_NONE
]


def _param_count_or_none(value: object) -> object:
    return parse_param_count(_blank_to_none(value))


OptStr = Annotated[str | None, BeforeValidator(_blank_to_none)]
Flag = Annotated[bool, BeforeValidator(_bool_word)]


def _json_text(value: object) -> object:
    """A JSON object as vLLM's Python API takes it (a dict) or as the flag's text: kept as compact text."""
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return value


# `--speculative-config` / `--limit-mm-per-prompt`: JSON text, or (in a JSON body) the object itself
ExtrasJson = Annotated[str, BeforeValidator(_json_text), Field(max_length=2_000)]
OptInt = Annotated[int | None, BeforeValidator(_blank_to_none)]
OptFloat = Annotated[float | None, BeforeValidator(_blank_to_none)]
ParamCount = Annotated[Annotated[int, Field(ge=1, le=10**14)] | None, BeforeValidator(_param_count_or_none)]


MAX_TENSOR_PARALLEL = 256
# The tensor-parallel sizes a team can actually run: powers of two up to 256 ranks. A node holds 1, 2,
# 4 or 8 devices (16 on some Ascend and GB200 boards), TP groups span whole nodes, and every KV-head
# count in the catalog is a power of two, so vLLM's divisibility check refuses TP = 3, 5, 6, 12… anyway.
TENSOR_PARALLEL_SIZES = tuple(2**k for k in range(MAX_TENSOR_PARALLEL.bit_length()))


def _power_of_two(value: int) -> int:
    if value & (value - 1):
        raise ValueError(
            Text(
                "must be a power of two ({sizes}): the tensor-parallel sizes of real machines",
                sizes=", ".join(map(str, TENSOR_PARALLEL_SIZES)),
            )
        )
    return value


TensorParallelSize = Annotated[
    int, bounds("tensor_parallel_size"), Field(le=MAX_TENSOR_PARALLEL), AfterValidator(_power_of_two)
]


ServeSwapGiB = Annotated[
    Annotated[float, bounds("swap_space_gib"), Field(allow_inf_nan=False)] | None,
    BeforeValidator(_float_or_none),
]
ServeOffloadGiB = Annotated[
    Annotated[float, bounds("kv_offloading_size_gib"), Field(allow_inf_nan=False)] | None,
    BeforeValidator(_float_or_none),
]


def _quantization_name(value: object) -> object:
    """`--quantization`: vLLM's method names plus the aliases people type (nvfp4, int4); blank = none."""
    value = _blank_to_none(value)
    if isinstance(value, str):
        name = value.strip().lower()
        if name not in QUANTIZATION_FLAGS:
            raise ValueError(
                Text(
                    "unknown --quantization {quantization!r}; known: {quantization_flags}",
                    quantization=value,
                    quantization_flags=", ".join(sorted(QUANTIZATION_FLAGS)),
                )
            )
        return name
    return value


# how the page reads a flag the release decides when unset (ReleaseDefaultFlags), by its table kind:
# blank is "unset"; a flag also takes "default"/"auto" and the on/off words
_LENIENT_BY_KIND: dict[FlagKind, Callable[[object], object]] = {
    "len": _human_int_or_none,
    "hint": _human_int_or_none,
    "int": _int_or_none,
    "float": _float_or_none,
    "flag": _tri_state,
    "choice": _blank_to_none,
    "text": _blank_to_none,
    "json": _blank_to_none,
}


class PlannerParams(ReleaseDefaultFlags):
    """Every input of the planner page and of /api/estimate. ``None`` = vLLM's default.

    The flags the release decides when unset come from ``ReleaseDefaultFlags`` (declared once, with
    ServeConfig and LogFacts) and are read leniently by their kind (``_lenient_flag``); a field declared
    here again adds a page-only rule (``swap_space``, ``--quantization`` names, the TP power of two).
    """

    model_config = ConfigDict(frozen=True, extra="ignore", str_strip_whitespace=True)

    v: Annotated[Literal[1], BeforeValidator(_link_version)] = LINK_FORMAT_VERSION
    model: str = Field(default=DEFAULT_MODEL, min_length=1, max_length=300)
    device: str = Field(default=DEFAULT_DEVICE, min_length=1, max_length=100)
    # blank: one replica, TP × PP devices
    devices: Annotated[Annotated[int, Field(ge=1, le=4096)] | None, BeforeValidator(_blank_to_none)] = None
    # the total the runtime reports (a log's "total_gpu_memory" / "Free memory on device (…/T GiB)"),
    # overriding the catalog's typical figure for this device
    device_memory_gib: Annotated[
        Annotated[float, Field(ge=MIN_DEVICE_MEMORY_GIB, le=MAX_DEVICE_MEMORY_GIB, allow_inf_nan=False)]
        | None,
        BeforeValidator(_float_or_none),
    ] = None
    vllm_version: OptStr = None
    max_model_len: ServeMaxModelLen = None
    target_concurrency: Annotated[int, BeforeValidator(parse_human_int), Field(ge=1, le=65_536)] = 1
    max_num_seqs: ServeSeqs = None
    kv_cache_dtype: KVCacheDType = "auto"
    tensor_parallel_size: TensorParallelSize = 1
    pipeline_parallel_size: Annotated[int, bounds("pipeline_parallel_size")] = 1
    enforce_eager: Flag = False
    # the rest of ServeConfig, so every configuration one endpoint returns another accepts
    dtype: Literal["auto", "bfloat16", "float16", "float32", "half"] = "auto"
    kv_cache_memory_bytes: ServeKvCacheBytes = None
    cpu_offload_gb: Annotated[
        float, BeforeValidator(_float_or_zero), bounds("cpu_offload_gb"), Field(allow_inf_nan=False)
    ] = 0.0
    # vLLM's own names (--swap-space, --kv-offloading-size, both in GiB) are taken as well
    swap_space_gib: ServeSwapGiB = Field(
        default=None, validation_alias=AliasChoices("swap_space_gib", "swap_space")
    )
    kv_offloading_size_gib: ServeOffloadGiB = Field(
        default=None, validation_alias=AliasChoices("kv_offloading_size_gib", "kv_offloading_size")
    )
    # memory other processes hold on each device when vLLM starts (not a vLLM flag)
    device_memory_used_gib: Annotated[
        float, BeforeValidator(_float_or_zero), Field(ge=0.0, le=100_000.0, allow_inf_nan=False)
    ] = 0.0
    # VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 in vLLM's environment
    allow_long_max_model_len: Flag = False
    # extras (app/core/extras.py): speculative decoding, LoRA slots, DP/EP, multimodal limits
    speculative_config: ExtrasJson = ""
    enable_lora: Flag = False
    max_loras: Annotated[int, BeforeValidator(_int_or_one), bounds("max_loras")] = 1
    max_lora_rank: Annotated[int, BeforeValidator(_int_or_lora_rank), bounds("max_lora_rank")] = 16
    fully_sharded_loras: Flag = False
    data_parallel_size: Annotated[int, BeforeValidator(_int_or_one), bounds("data_parallel_size")] = 1
    enable_expert_parallel: Flag = False
    limit_mm_per_prompt: ExtrasJson = ""
    mm_processor_cache_gb: Annotated[
        float,
        BeforeValidator(_float_or_mm_cache),
        bounds("mm_processor_cache_gb"),
        Field(allow_inf_nan=False),
    ] = DEFAULT_MM_PROCESSOR_CACHE_GIB
    config_json: Annotated[
        str, BeforeValidator(unpack_config_json), Field(max_length=CONFIG_JSON_MAX_CHARS)
    ] = ""
    # an hf_quant_config.json pasted beside config.json (ModelOpt <= 0.29 checkpoints): vLLM reads it when
    # config.json has no quantization_config (app.core.hf_config.quantization)
    hf_quant_config_json: Annotated[
        str, BeforeValidator(unpack_config_json), Field(max_length=CONFIG_JSON_MAX_CHARS)
    ] = ""
    # The model card: a model described by hand (used when layers, KV heads, head size and
    # parameters are all given and no config.json is pasted).
    card_layers: OptLayersOrHeads = None
    card_kv_heads: OptLayersOrHeads = None
    card_head_size: OptHeadSize = None
    card_params: ParamCount = None
    card_dtype: Literal["bfloat16", "float16", "float32"] = "bfloat16"
    card_attention: Literal["full", "sliding", "mla", "hybrid"] = "full"
    card_window: OptTokens = None
    card_kv_lora_rank: OptLoraRank = None
    card_rope_dim: OptRopeDim = None
    card_heads: OptLayersOrHeads = None
    card_hidden_size: OptHiddenSize = None
    card_vocab_size: OptVocabSize = None
    card_max_len: OptMaxModelLen = None
    # The page's language (app.web.i18n): written only when it is not English, so English links are
    # unchanged; an unknown value reads as "not given" (the cookie or Accept-Language decide).
    lang: Annotated[Literal["en", "zh"] | None, BeforeValidator(_lang)] = None
    # issue 14 (performance): the weight format flag, data/expert parallel, and the speed workload
    quantization: Annotated[str | None, BeforeValidator(_quantization_name)] = None
    # blank = the benchmark's mean request when one is given, else 1,024 each; a length left blank
    # shrinks to fit max_model_len (app.core.perf.workload), so the form sends only what the user set
    input_tokens: OptTokens = None
    output_tokens: OptTokens = None
    # blank = the benchmark's --max-concurrency, else the target concurrency when given, else 16 (app.core.perf.workload.speed_clients); the same key as the explorer's closed-loop clients (same meaning)
    concurrency: OptSeqs = None
    # issue 23: `vllm bench serve`'s arguments under its own names (blank = its default; checked by
    # app.core.perf.bench_args.BenchArgs, app/web/speed/service.py) and your own runs' pasted results
    bench_serve: Flag = False
    num_prompts: OptInt = None
    max_concurrency: OptInt = None
    request_rate: OptFloat = None  # "inf" reads as float("inf"), vLLM's default
    burstiness: OptFloat = None
    random_input_len: OptInt = None
    random_output_len: OptInt = None
    random_range_ratio: OptFloat = None
    random_prefix_len: OptInt = None
    dataset_name: Annotated[Literal["random", "sharegpt"] | None, BeforeValidator(_blank_to_none)] = None
    ignore_eos: Flag = False
    my_runs: Annotated[str, BeforeValidator(unpack_config_json), Field(max_length=MY_RUNS_MAX_CHARS)] = ""

    @field_serializer("request_rate", "burstiness")
    def _infinite_as_text(self, value: float | None) -> float | str | None:
        """The echo of a request that says ``request_rate=inf`` was a 500 (strict JSON has no infinity)."""
        return infinite_as_text(value)

    @classmethod
    def unset_when_blank(cls) -> Collection[str]:
        """The fields a blank (or null) value leaves not given (app/web/inputs/unset.py): the target N, N = 1
        for the capacity check but not a given N (``_given_target``: the Speed section keeps its own clients)."""
        return ("target_concurrency",)

    @model_validator(mode="before")
    @classmethod
    def _blank_is_not_given(cls, data: object) -> object:
        return without_unset(data, cls.unset_when_blank()) if isinstance(data, Mapping) else data

    @field_validator(*RELEASE_DEFAULT_FLAGS, mode="before")
    @classmethod
    def _lenient_flag(cls, value: object, info: ValidationInfo) -> object:
        """A release-default flag as the page sends it, by its kind in the flag table (blank = unset)."""
        assert info.field_name is not None
        return _LENIENT_BY_KIND[FLAGS_BY_FIELD[info.field_name].kind](value)

    @field_validator("vllm_version")
    @classmethod
    def _vllm_version(cls, value: str | None) -> str | None:
        """Any release as people type it (PEP 440, `v0.11.2`), normalized; versions.py picks its rules."""
        if value is None:
            return None
        try:
            return resolve_version(value).requested
        except PlannerError as exc:
            raise ValueError(exc.message) from None

    @field_validator("speculative_config", "limit_mm_per_prompt")
    @classmethod
    def _extras_json(cls, value: str, info: ValidationInfo) -> str:
        """Checked the way the core reads it, so a bad object is named on its own field."""
        if value:
            check_json_text(value)
            try:
                ServeConfig.model_validate({info.field_name: value})
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(part) for part in first["loc"][1:])
                raise ValueError(f"{where}: {message_of(first)}" if where else message_of(first)) from None
        return value

    @field_validator("config_json", "hf_quant_config_json")
    @classmethod
    def _json_object(cls, value: str) -> str:
        if not value:
            return value
        check_json_text(value)  # json.loads would recurse into a RecursionError (a 500) first
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(
                Text(
                    "not valid JSON (line {line}, column {column}): {reason}",
                    line=exc.lineno,
                    column=exc.colno,
                    reason=json_reason(exc.msg),
                )
            ) from exc
        if not isinstance(parsed, dict):
            raise ValueError(Text("expected a JSON object like the model's config.json"))
        return value

    @property
    def resolved_version(self) -> str:
        return self.vllm_version or DEFAULT_VERSION

    @property
    def device_count(self) -> int:
        """The devices given, else one replica's worth (TP × PP)."""
        return self.devices or self.tensor_parallel_size * self.pipeline_parallel_size

    @property
    def has_card(self) -> bool:
        return None not in (self.card_layers, self.card_kv_heads, self.card_head_size, self.card_params)

    @property
    def card_started(self) -> bool:
        return any(getattr(self, name) is not None for name in CARD_REQUIRED)


class StrictPlannerParams(PlannerParams):
    """The API's reading: an unknown key is an error, not a silently ignored typo."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)


CARD_REQUIRED = ("card_layers", "card_kv_heads", "card_head_size", "card_params")
FIELD_NAMES: tuple[str, ...] = tuple(PlannerParams.model_fields)
DEFAULTS = PlannerParams()
# The `vllm serve` flags: every ServeConfig field is a planner parameter of the same name and meaning
# (tests/web/test_planner_api.py holds this), so params <-> ServeConfig is derived, never listed by hand.
SERVE_FIELDS: tuple[str, ...] = tuple(ServeConfig.model_fields)


Built = TypeVar("Built")


def same_named(cls: type[Built], source: object, /, **values: Any) -> Built:
    """A ``cls`` (a pydantic model or a dataclass) from the fields of ``source`` that bear its field names
    (the same name means the same quantity: a page's parameters, an estimate, the resolved inputs), plus
    ``values``; a field ``source`` lacks keeps its default. The one copy step from one typed record to
    the next, so no field list is typed twice.

    >>> same_named(ServeConfig, PlannerParams(max_model_len=8192)).max_model_len
    8192
    """
    names: Iterable[str]
    if issubclass(cls, BaseModel):
        names = cls.model_fields
    elif dataclasses.is_dataclass(cls):
        names = [field.name for field in dataclasses.fields(cls)]
    else:
        raise TypeError(f"{cls!r} is neither a pydantic model nor a dataclass")
    given = {name: getattr(source, name) for name in names if hasattr(source, name)}
    return cls(**{**given, **values})


def serve_config(params: PlannerParams) -> ServeConfig:
    """The flags of ``params`` as the core's ServeConfig."""
    return same_named(ServeConfig, params)


def with_serve(params: PlannerParams, serve: ServeConfig) -> PlannerParams:
    """``params`` with a configuration's flags (a recommendation, a pasted command) applied."""
    return params.model_copy(update=serve_values(serve))


def serve_values(serve: ServeConfig) -> dict[str, object]:
    """A configuration's flags as planner parameter values (JSON-object flags as JSON text)."""
    return {name: _as_param(name, getattr(serve, name)) for name in SERVE_FIELDS}


JSON_TEXT_FIELDS = ("speculative_config", "limit_mm_per_prompt")


def _as_param(name: str, value: object) -> object:
    """The JSON-object flags (`--speculative-config`, `--limit-mm-per-prompt`) travel as JSON text."""
    if name in JSON_TEXT_FIELDS and value is None:
        return ""
    if isinstance(value, BaseModel):
        return json.dumps(value.model_dump(exclude_defaults=True), separators=(",", ":"))
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return value


def parse_strict(query: Mapping[str, str] | Iterable[tuple[str, str]]) -> StrictPlannerParams:
    """For the API: raises pydantic's ValidationError naming each bad field (and unknown keys)."""
    items = list(query.items() if isinstance(query, Mapping) else query)
    return StrictPlannerParams.model_validate(dict(items))


def replace(params: PlannerParams, **changes: Any) -> PlannerParams:
    """A copy with ``changes`` validated like user input (used when a pasted command fills the form)."""
    data = params.model_dump(exclude_unset=True)  # an unset target N stays unset (_given_target)
    data.update(changes)
    return PlannerParams.model_validate(data)


def workload_of(
    params: PlannerParams, *, max_model_len: int, bench: BenchArgs | None = None
) -> tuple[Workload, Msg | None]:
    """The Speed section's workload (app.core.perf.workload.speed_workload on the planner's fields) and
    the note when a length the user left blank was shortened to fit ``max_model_len``."""
    return speed_workload(
        input_tokens=params.input_tokens,
        output_tokens=params.output_tokens,
        concurrency=params.concurrency,
        target_concurrency=_given_target(params),
        bench=bench,
        max_model_len=max_model_len,
    )


def _given_target(params: PlannerParams) -> int | None:
    """The target concurrency N when the user gave one (one N on the page: N = 64 used to model 16
    clients), else None (the Speed section's own default then)."""
    return params.target_concurrency if "target_concurrency" in params.model_fields_set else None


def clients_of(params: PlannerParams, *, bench: BenchArgs | None) -> int:
    """The Speed section's clients for the planner's fields (app.core.perf.workload.speed_clients), also
    when the lengths give no workload (the Speed section then names the length)."""
    return speed_clients(
        concurrency=params.concurrency, target_concurrency=_given_target(params), bench=bench
    )
