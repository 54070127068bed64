"""The `vllm serve` flags the planner reads, one declaration each (issue 25 item 2).

Each :class:`ServeFlag` names the :class:`app.core.specs.ServeConfig` field, the command-line spellings
(canonical first), what kind of value it takes, its bounds, and the keys vLLM prints for it on its
engine-config, ``args: Namespace(...)`` and "non-default args" lines. From this one table come:

- the bounds of ``ServeConfig``'s fields and of the web parameters' serve fields (:func:`bounds`, an
  ``Annotated`` constraint; a page may add a stricter page-only limit after it, never a looser one);
- the command parser's flag map (:data:`PARSE_KINDS`, app/core/command.py);
- the renderer (:func:`render_flags`), which writes a flag only when it differs from vLLM's default for
  the release (the default from ``VersionRules`` where it depends on one);
- the log reader's keys (:func:`printed_keys`, app/core/logs/startup.py).

A new flag that moves memory is one row here plus its rule: the field goes on
``app.core.specs.ReleaseDefaultFlags`` when unset means the release's default (``X | None = None``),
and ServeConfig, the web's ``PlannerParams`` (read leniently by this row's kind) and the log reader's
``LogFacts`` all inherit it; a flag with a concrete default goes on ServeConfig and is declared on the
other two as well.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from annotated_types import Interval

from app.core.errors import PlannerError
from app.core.quantization_names import vllm_quantization_name
from app.core.release_flags import other_releases, release_flags
from app.core.text import Text

if TYPE_CHECKING:  # the table is imported by specs.py, so the types it renders are only annotations
    from app.core.specs import ServeConfig
    from app.core.versions import VersionRules

# len: an integer that may be human-readable ("32k") or "auto"/-1; hint: human-readable integer;
# flag: a boolean switch (with an optional --no- form); json: a JSON object; choice / text: a word
FlagKind = Literal["len", "int", "hint", "float", "flag", "json", "choice", "text"]
Renderer = Callable[["ServeConfig", "VersionRules"], list[str]]


@dataclass(frozen=True)
class ServeFlag:
    field: str  # the ServeConfig field
    spellings: tuple[str, ...]  # canonical first, then vLLM's aliases
    kind: FlagKind
    printed: tuple[str, ...] = ()  # keys of the engine-config / args lines (vllm/config/vllm.py __str__)
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    negation: str | None = None  # the --no- spelling of a boolean flag (argparse BooleanOptionalAction)
    render: Renderer | None = None  # how it is written, when the generic "flag value" is not enough
    written_with: str | None = None  # the field whose renderer writes this one too (no renderer of its own)

    @property
    def flag(self) -> str:
        return self.spellings[0]


def _plain(field: str, fmt: str = "{}") -> Renderer:
    """`--flag value` when the field is set and differs from ServeConfig's default."""

    def render(serve: ServeConfig, rules: VersionRules) -> list[str]:
        value = getattr(serve, field)
        if value is None or value == type(serve).model_fields[field].default:
            return []
        return [f"{FLAGS_BY_FIELD[field].flag} {fmt.format(value)}"]

    return render


def _switch(field: str) -> Renderer:
    def render(serve: ServeConfig, rules: VersionRules) -> list[str]:
        return [FLAGS_BY_FIELD[field].flag] if getattr(serve, field) else []

    return render


def _utilization(serve: ServeConfig, rules: VersionRules) -> list[str]:
    value = serve.gpu_memory_utilization
    # from 0.34.0 an unset value is not the 0.92 default but 1.0 under the extensible KV cache (extensible_kv.py):
    # an explicit value is always written
    if value is None or (value == rules.default_gpu_memory_utilization and not rules.extensible_kv_cache):
        return []
    return [f"--gpu-memory-utilization {value:g}"]


def _kv_cache_dtype(serve: ServeConfig, rules: VersionRules) -> list[str]:
    # int8 is vllm-ascend's C8 KV cache, set by its quantization config, not a --kv-cache-dtype value
    # (recommend/kv_dtype.py explains it)
    return [] if serve.kv_cache_dtype in ("auto", "int8") else [f"--kv-cache-dtype {serve.kv_cache_dtype}"]


def _prefix_caching(serve: ServeConfig, rules: VersionRules) -> list[str]:
    value = serve.enable_prefix_caching
    if value is None or value == rules.prefix_caching_default:
        return []
    return ["--enable-prefix-caching" if value else "--no-enable-prefix-caching"]


def _extensible_kv_cache(serve: ServeConfig, rules: VersionRules) -> list[str]:
    # 0.34.0 config/vllm.py _resolve_extensible_kv_cache: unset is on where supported; only the switch-off is written
    if serve.enable_extensible_kv_cache is False and rules.extensible_kv_cache:
        return ["--no-enable-extensible-kv-cache"]
    return []


def _chunked_prefill(serve: ServeConfig, rules: VersionRules) -> list[str]:
    always_chunked = rules.chunked_prefill_auto_above is None  # V1; V0 decides by the length
    if serve.enable_chunked_prefill is False and always_chunked:
        return ["--no-enable-chunked-prefill"]
    if serve.enable_chunked_prefill and not always_chunked:
        return ["--enable-chunked-prefill"]
    return []


def _quantization(serve: ServeConfig, rules: VersionRules) -> list[str]:
    return [f"--quantization {vllm_quantization_name(serve.quantization)}"] if serve.quantization else []


def _kv_cache_memory(serve: ServeConfig, rules: VersionRules) -> list[str]:
    value = serve.kv_cache_memory_bytes
    return (
        [f"--kv-cache-memory-bytes {value}"]
        if value is not None and rules.has_kv_cache_memory_bytes_flag
        else []
    )


def _swap_space(serve: ServeConfig, rules: VersionRules) -> list[str]:
    value = serve.swap_space_gib
    return [f"--swap-space {value:g}"] if value is not None and rules.swap_space_used else []


def _kv_offloading(serve: ServeConfig, rules: VersionRules) -> list[str]:
    value = serve.kv_offloading_size_gib
    if not value or not rules.has_kv_offloading_flags:
        return []
    return [f"--kv-offloading-size {value:g} --kv-offloading-backend native"]


def _json_text(value: object) -> str:
    return shlex.quote(json.dumps(value, separators=(",", ":")))


def _compilation(serve: ServeConfig, rules: VersionRules) -> list[str]:
    """One --compilation-config with the mode and every other key the user gave (compilation.py)."""
    config: dict[str, object] = (
        {} if serve.cudagraph_mode is None else {"cudagraph_mode": serve.cudagraph_mode}
    )
    if serve.compilation_config:
        config.update(json.loads(serve.compilation_config))
    return [f"--compilation-config {_json_text(config)}"] if config else []


def _speculative(serve: ServeConfig, rules: VersionRules) -> list[str]:
    spec = serve.speculative_config
    if spec is None:
        return []
    data = spec.model_dump(exclude_none=True, exclude_defaults=True)
    data.setdefault("num_speculative_tokens", spec.num_speculative_tokens)
    return [f"--speculative-config {_json_text(data)}"]


def _lora_slots(serve: ServeConfig, rules: VersionRules) -> list[str]:
    # the slot count and rank size the preallocated LoRA buffers: written together, with --enable-lora
    return (
        [f"--max-loras {serve.max_loras} --max-lora-rank {serve.max_lora_rank}"] if serve.enable_lora else []
    )


def _with_lora(inner: Renderer) -> Renderer:
    def render(serve: ServeConfig, rules: VersionRules) -> list[str]:
        return inner(serve, rules) if serve.enable_lora else []

    return render


def _mm_processor_cache(serve: ServeConfig, rules: VersionRules) -> list[str]:

    value, default = serve.mm_processor_cache_gb, type(serve).model_fields["mm_processor_cache_gb"].default
    if value == default or "--mm-processor-cache-gb" not in release_flags(rules.version):
        return []  # the default, or a release without the flag (before 0.10)
    return [f"--mm-processor-cache-gb {value:g}"]


def _async_scheduling(serve: ServeConfig, rules: VersionRules) -> list[str]:

    value = serve.async_scheduling
    if value is None or value == rules.async_scheduling_default:
        return []  # the release's own choice (on from 0.14.0: versions.py), or a release without the flag
    if "--async-scheduling" not in release_flags(rules.version):
        return []  # before 0.10.2 (vllm_flags.json)
    return ["--async-scheduling" if value else "--no-async-scheduling"]


def _limits(serve: ServeConfig, rules: VersionRules) -> list[str]:
    limits = serve.limit_mm_per_prompt
    return [] if limits is None else [f"--limit-mm-per-prompt {_json_text(limits)}"]


MAX_MODEL_LEN_LIMIT = 10_000_000  # tokens: above any model's context (the longest are ~10M)
MAX_RANKS = 1024  # TP or DP ranks one server spans: far above the largest NVL/SuperPOD domain
MAX_STAGES = 256  # pipeline stages: no model has more decoder layers than this splits usefully
MAX_HOST_GIB = 100_000.0  # host memory flags in GiB: 100 TB, far above any server

# fmt: off
SERVE_FLAGS: tuple[ServeFlag, ...] = (
    ServeFlag("max_model_len", ("--max-model-len",), "len", ("max_seq_len", "max_model_len"),
              ge=1, le=MAX_MODEL_LEN_LIMIT, render=_plain("max_model_len")),
    ServeFlag("tensor_parallel_size", ("--tensor-parallel-size", "-tp"), "int", ("tensor_parallel_size",),
              ge=1, le=MAX_RANKS, render=_plain("tensor_parallel_size")),
    ServeFlag("pipeline_parallel_size", ("--pipeline-parallel-size", "-pp"), "int", ("pipeline_parallel_size",),
              ge=1, le=MAX_STAGES, render=_plain("pipeline_parallel_size")),
    ServeFlag("gpu_memory_utilization", ("--gpu-memory-utilization",), "float", ("gpu_memory_utilization",),
              gt=0.0, le=1.0, render=_utilization),
    ServeFlag("kv_cache_dtype", ("--kv-cache-dtype",), "choice", ("kv_cache_dtype",), render=_kv_cache_dtype),
    ServeFlag("block_size", ("--block-size",), "int", ("block_size",), ge=1, le=16384, render=_plain("block_size")),
    ServeFlag("max_num_seqs", ("--max-num-seqs",), "int", ("max_num_seqs",), ge=1, le=65536,
              render=_plain("max_num_seqs")),
    ServeFlag("max_num_batched_tokens", ("--max-num-batched-tokens",), "hint", ("max_num_batched_tokens",),
              ge=1, le=MAX_MODEL_LEN_LIMIT, render=_plain("max_num_batched_tokens")),
    ServeFlag("enforce_eager", ("--enforce-eager",), "flag", ("enforce_eager",), render=_switch("enforce_eager")),
    # the cudagraph_mode key of --compilation-config (command.py also reads -cc.cudagraph_mode=X and -O levels)
    ServeFlag("cudagraph_mode", ("--compilation-config", "-cc"), "json", render=_compilation),
    # the other keys of the same flag: no spelling of their own (command.py _Reading.compilation reads both)
    ServeFlag("compilation_config", (), "json", written_with="cudagraph_mode"),
    ServeFlag("enable_prefix_caching", ("--enable-prefix-caching",), "flag", ("enable_prefix_caching",),
              negation="--no-enable-prefix-caching", render=_prefix_caching),
    # speed only (no bytes): the host prepares step N+1 while the device runs step N (perf/physics.py);
    # 0.19.0 config/scheduler.py SchedulerConfig.async_scheduling, a BooleanOptionalAction
    ServeFlag("async_scheduling", ("--async-scheduling",), "flag", ("async_scheduling",),
              negation="--no-async-scheduling", render=_async_scheduling),
    ServeFlag("enable_extensible_kv_cache", ("--enable-extensible-kv-cache",), "flag", ("enable_extensible_kv_cache",),
              negation="--no-enable-extensible-kv-cache", render=_extensible_kv_cache),
    ServeFlag("enable_chunked_prefill", ("--enable-chunked-prefill",), "flag",
              ("enable_chunked_prefill", "chunked_prefill_enabled"),  # the engine line before 0.11
              negation="--no-enable-chunked-prefill", render=_chunked_prefill),
    ServeFlag("quantization", ("--quantization", "-q"), "text", ("quantization",), render=_quantization),
    ServeFlag("data_parallel_size", ("--data-parallel-size", "-dp"), "int", ("data_parallel_size",),
              ge=1, le=MAX_RANKS, render=_plain("data_parallel_size")),
    ServeFlag("enable_expert_parallel", ("--enable-expert-parallel", "-ep"), "flag", ("enable_expert_parallel",),
              render=_switch("enable_expert_parallel")),
    ServeFlag("dtype", ("--dtype",), "choice", ("dtype",), render=_plain("dtype")),
    # 0.10.1+ config/model.py ModelConfig.runner: "pooling" plans a generative checkpoint as an embedding model
    ServeFlag("runner", ("--runner",), "choice", ("runner",), render=_plain("runner")),
    # 0.10.1+ config/model.py ModelConfig.convert: embed / classify make --runner auto a pooling runner
    ServeFlag("convert", ("--convert",), "choice", ("convert",), render=_plain("convert")),
    ServeFlag("kv_cache_memory_bytes", ("--kv-cache-memory-bytes", "--kv-cache-memory"), "hint",
              ("kv_cache_memory_bytes",), ge=0, render=_kv_cache_memory),
    ServeFlag("cpu_offload_gb", ("--cpu-offload-gb",), "float", ("cpu_offload_gb",), ge=0.0, le=MAX_HOST_GIB,
              render=_plain("cpu_offload_gb", "{:g}")),
    ServeFlag("swap_space_gib", ("--swap-space",), "float", ("swap_space",), ge=0.0, le=MAX_HOST_GIB,
              render=_swap_space),
    ServeFlag("kv_offloading_size_gib", ("--kv-offloading-size",), "float", ("kv_offloading_size",),
              ge=0.0, le=MAX_HOST_GIB, render=_kv_offloading),
    # the extras (app/core/extras/): data_parallel_size and speculative_config are on 0.19.0's
    # engine-config line (config/vllm.py VllmConfig.__str__); the LoRA and multimodal flags only in
    # "non-default args"
    ServeFlag("speculative_config", ("--speculative-config",), "json", ("speculative_config",), render=_speculative),
    ServeFlag("enable_lora", ("--enable-lora",), "flag", ("enable_lora",), render=_switch("enable_lora")),
    ServeFlag("max_loras", ("--max-loras",), "int", ("max_loras",), ge=1, le=1024, render=_lora_slots),
    ServeFlag("max_lora_rank", ("--max-lora-rank",), "int", ("max_lora_rank",), ge=1, le=1024,
              written_with="max_loras"),
    ServeFlag("max_cpu_loras", ("--max-cpu-loras",), "int", ("max_cpu_loras",), ge=1, le=100_000,
              render=_with_lora(_plain("max_cpu_loras"))),
    ServeFlag("fully_sharded_loras", ("--fully-sharded-loras",), "flag", ("fully_sharded_loras",),
              render=_with_lora(_switch("fully_sharded_loras"))),
    ServeFlag("limit_mm_per_prompt", ("--limit-mm-per-prompt",), "json", ("limit_mm_per_prompt",), render=_limits),
    ServeFlag("mm_processor_cache_gb", ("--mm-processor-cache-gb",), "float", ("mm_processor_cache_gb",),
              ge=0.0, le=MAX_HOST_GIB, render=_mm_processor_cache),
)
# fmt: on
FLAGS_BY_FIELD: dict[str, ServeFlag] = {flag.field: flag for flag in SERVE_FLAGS}

# the parser's map: every spelling -> (field, how its value is read)
ParseKind = Literal["len", "int", "hint", "float", "flag", "noflag", "str"]
_PARSE_KIND: dict[FlagKind, ParseKind] = {
    "len": "len",
    "int": "int",
    "hint": "hint",
    "float": "float",
    "flag": "flag",
    "json": "str",
    "choice": "str",
    "text": "str",
}
PARSE_KINDS: dict[str, tuple[str, ParseKind]] = {
    **{spelling: (f.field, _PARSE_KIND[f.kind]) for f in SERVE_FLAGS for spelling in f.spellings},
    **{f.negation: (f.field, "noflag") for f in SERVE_FLAGS if f.negation},
}


def bounds(field: str) -> Interval:
    """The table's bounds of one field, as the constraint ServeConfig's annotation carries."""
    flag = FLAGS_BY_FIELD[field]
    return Interval(ge=flag.ge, gt=flag.gt, le=flag.le)


def render_flags(serve: ServeConfig, rules: VersionRules) -> list[str]:
    """Every flag that differs from vLLM's default for ``rules``' release, in the table's order."""
    parts: list[str] = []
    for flag in SERVE_FLAGS:
        if flag.render is not None:
            parts += flag.render(serve, rules)
    return parts


def flags_release_lacks(serve: ServeConfig, vllm_version: str | None) -> list[tuple[str, str]]:
    """(field, flag) for each flag ``serve`` sets (a value other than ServeConfig's default) that ``vllm_version``'s
    `vllm serve` does not have (vllm_flags.json): the flag's --no- form for a boolean set False. A request that
    sets one describes a command vLLM's parser exits on ("unrecognized arguments"), e.g. async_scheduling at
    0.9.0 (--async-scheduling from 0.10.0) or enable_extensible_kv_cache before 0.34.0."""
    have = release_flags(vllm_version)
    lacking: list[tuple[str, str]] = []
    for flag in SERVE_FLAGS:
        value = getattr(serve, flag.field)
        if not flag.spellings or value is None or value == type(serve).model_fields[flag.field].default:
            continue
        spelling = flag.negation if value is False and flag.negation else flag.flag
        if spelling not in have:
            lacking.append((flag.field, spelling))
    return lacking


def check_release_has_flags(serve: ServeConfig, vllm_version: str | None) -> None:
    """Refuse, naming the field, a configuration whose flags ``vllm_version`` does not have
    (:func:`flags_release_lacks`): "async_scheduling: --async-scheduling: vLLM 0.9.0 does not have it; 0.10.0 is
    the first release with it"."""
    lacking = flags_release_lacks(serve, vllm_version)
    if not lacking:
        return
    field, flag = lacking[0]
    where = other_releases(flag, vllm_version) or Text("no release read has it")
    raise PlannerError(
        field,
        Text(
            "{flag}: {where} (its `vllm serve` exits with 'unrecognized arguments: {flag}')",
            flag=flag,
            where=where,
        ),
    )


def printed_keys() -> dict[str, tuple[str, FlagKind]]:
    """Keys vLLM prints for these flags -> (field, kind): the log reader's half of the table."""
    return {key: (flag.field, flag.kind) for flag in SERVE_FLAGS for key in flag.printed}
