"""Read and write `vllm serve …` command lines.

Parsing accepts what people paste: backslash continuations, `--flag=value`, short aliases
(`-tp`, `-pp`, `-q`), vLLM's human-readable integers (`32k` = 32,000, `32K` = 32,768) and the
older `python -m vllm.entrypoints.openai.api_server --model X` form. Rendering writes only the
flags that differ from vLLM's defaults, spelled for the chosen version.
"""

from __future__ import annotations

import difflib
import json
import shlex
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.core import numbers, regex
from app.core.errors import PlannerError
from app.core.plan import vllm_quantization_name
from app.core.specs import ServeConfig
from app.core.text import Text
from app.core.versions import rules_for

MAX_COMMAND_CHARS = 100_000
ALLOW_LONG_ENV = "VLLM_ALLOW_LONG_MAX_MODEL_LEN"  # vllm/envs.py: "1" or "true" lets a long length start


def human_readable_int(text: str, *, field_name: str) -> int:
    """'32k' -> 32000, '32K' -> 32768, '25.6k' -> 25600, '8192' -> 8192 (bounded: app.core.numbers)."""
    try:
        return numbers.parse_human_int(text)
    except ValueError as exc:
        raise PlannerError(field_name, exc.args[0]) from exc


# flag -> (ServeConfig field, kind)
_FLAGS: dict[str, tuple[str, str]] = {
    "--max-model-len": ("max_model_len", "len"),
    "--tensor-parallel-size": ("tensor_parallel_size", "int"),
    "-tp": ("tensor_parallel_size", "int"),
    "--pipeline-parallel-size": ("pipeline_parallel_size", "int"),
    "-pp": ("pipeline_parallel_size", "int"),
    "--gpu-memory-utilization": ("gpu_memory_utilization", "float"),
    "--kv-cache-dtype": ("kv_cache_dtype", "str"),
    "--block-size": ("block_size", "int"),
    "--max-num-seqs": ("max_num_seqs", "int"),
    "--max-num-batched-tokens": ("max_num_batched_tokens", "hint"),
    "--enforce-eager": ("enforce_eager", "flag"),
    "--enable-prefix-caching": ("enable_prefix_caching", "flag"),
    "--no-enable-prefix-caching": ("enable_prefix_caching", "noflag"),
    "--enable-chunked-prefill": ("enable_chunked_prefill", "flag"),
    "--no-enable-chunked-prefill": ("enable_chunked_prefill", "noflag"),
    "--quantization": ("quantization", "str"),
    "-q": ("quantization", "str"),
    "--dtype": ("dtype", "str"),
    "--kv-cache-memory-bytes": ("kv_cache_memory_bytes", "hint"),
    "--kv-cache-memory": ("kv_cache_memory_bytes", "hint"),
    "--cpu-offload-gb": ("cpu_offload_gb", "float"),
    "--swap-space": ("swap_space_gib", "float"),
    "--kv-offloading-size": ("kv_offloading_size_gib", "float"),
    # extras (app/core/extras.py)
    "--speculative-config": ("speculative_config", "str"),
    "--enable-lora": ("enable_lora", "flag"),
    "--max-loras": ("max_loras", "int"),
    "--max-lora-rank": ("max_lora_rank", "int"),
    "--max-cpu-loras": ("max_cpu_loras", "int"),
    "--fully-sharded-loras": ("fully_sharded_loras", "flag"),
    "--limit-mm-per-prompt": ("limit_mm_per_prompt", "str"),
    "--data-parallel-size": ("data_parallel_size", "int"),
    "-dp": ("data_parallel_size", "int"),
    "--enable-expert-parallel": ("enable_expert_parallel", "flag"),
    "-ep": ("enable_expert_parallel", "flag"),
}
FLAGS_FILE = Path(__file__).with_name("vllm_flags.json")  # scripts/gen_vllm_flags.py, from vLLM's parser
SUGGESTION_CUTOFF = 0.75  # difflib ratio: one or two letters swapped, dropped or respelt


@cache
def _flag_releases() -> tuple[tuple[tuple[int, ...], frozenset[str]], ...]:
    data = json.loads(FLAGS_FILE.read_text(encoding="utf-8"))
    return tuple(
        (tuple(int(x) for x in version.split(".")[:3]), frozenset(flags))
        for version, flags in data["releases"].items()
    )


def vllm_flags(vllm_version: str | None) -> frozenset[str]:
    """The options `vllm serve` of this release accepts: those of the newest release read at or before it
    (the oldest read for anything older), plus the flags the planner itself reads."""
    wanted = rules_for(vllm_version).version_tuple
    releases = _flag_releases()
    chosen = releases[0][1]
    for version, flags in releases:
        if version <= wanted:
            chosen = flags
    return chosen | frozenset(_FLAGS)


def _canonical_flag(name: str, known: frozenset[str]) -> str:
    """vLLM's parser takes `--max_model_len` for `--max-model-len` (FlexibleArgumentParser) and, like any
    argparse parser, a unique prefix of a long option (`--max-model` -> `--max-model-len`)."""
    if not name.startswith("--"):
        return name
    name = "--" + name[2:].replace("_", "-")
    if name in known:
        return name
    prefixed = [flag for flag in known if flag.startswith(name)]
    return prefixed[0] if len(prefixed) == 1 else name


def unrecognized_flag_message(name: str, known: frozenset[str]) -> str:
    """argparse's refusal ("unrecognized arguments"), with the nearest flag of this release."""
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=SUGGESTION_CUTOFF)
    if close:
        return Text(
            "vllm serve: error: unrecognized arguments: {flag} (did you mean {suggestion}?)",
            flag=name,
            suggestion=close[0],
        )
    return Text("vllm serve: error: unrecognized arguments: {flag}", flag=name)


_VALUELESS_UNKNOWN_PREFIXES = ("--enable-", "--disable-", "--no-", "--trust-remote-code")


@dataclass
class ParsedCommand:
    model: str | None
    serve: ServeConfig
    unknown_flags: list[str] = field(default_factory=list)
    max_model_len_auto: bool = False


def _tokens(text: str) -> list[str]:
    if len(text) > MAX_COMMAND_CHARS:
        raise PlannerError(
            "command",
            Text("longer than {max_command_chars:,} characters", max_command_chars=MAX_COMMAND_CHARS),
        )
    joined = regex.sub(r"\\\s*\n", " ", text)
    joined = "\n".join(line for line in joined.splitlines() if not line.lstrip().startswith("#"))
    try:
        return shlex.split(joined)
    except ValueError as exc:
        raise PlannerError("command", Text("cannot split the command: {exc}", exc=exc)) from exc


def parse_serve_command(text: str, *, vllm_version: str | None = None) -> ParsedCommand:
    """A pasted `vllm serve MODEL --flags …` (or api_server form) → model id + ServeConfig."""
    tokens = _tokens(text)
    # an env-var prefix and the program: `CUDA_VISIBLE_DEVICES=0 vllm serve` / `python -m …api_server`;
    # VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is read (it decides whether a long --max-model-len starts)
    env: dict[str, str] = {}
    while tokens and regex.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", tokens[0]):
        name, _, value = tokens.pop(0).partition("=")
        env[name] = value
    if tokens[:2] == ["vllm", "serve"]:
        tokens = tokens[2:]
    elif tokens and tokens[0] in ("python", "python3") and "-m" in tokens[:3]:
        tokens = tokens[3:]
    elif tokens and tokens[0] == "vllm":
        raise PlannerError("command", Text("expected `vllm serve MODEL …`"))
    return parse_serve_args(tokens, env=env, vllm_version=vllm_version)


def parse_serve_args(
    tokens: list[str], *, env: dict[str, str] | None = None, vllm_version: str | None = None
) -> ParsedCommand:
    """``tokens`` after `vllm serve`. A flag this release of vLLM does not have is an error, as vLLM's
    parser makes it; one it has that does not move memory is returned in ``unknown_flags``."""
    known = vllm_flags(vllm_version)
    values: dict[str, Any] = {}
    if (env or {}).get(ALLOW_LONG_ENV, "").strip().lower() in ("1", "true"):
        values["allow_long_max_model_len"] = True
    unknown: list[str] = []
    model: str | None = None
    auto = False
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token.startswith("-"):
            if model is None:
                model = token
            else:
                unknown.append(token)
            continue
        name, eq, inline = token.partition("=")
        name = _canonical_flag(name, known)
        if name == "--model":
            if eq:
                model = inline
            elif i < len(tokens):
                model = tokens[i]
                i += 1
            continue
        spec = _FLAGS.get(name)
        if spec is None:
            if name not in known:
                raise PlannerError("command", unrecognized_flag_message(name, known))
            unknown.append(token)
            takes_value = not eq and not name.startswith(_VALUELESS_UNKNOWN_PREFIXES)
            if takes_value and i < len(tokens) and not tokens[i].startswith("-"):
                unknown.append(tokens[i])
                i += 1
            continue
        field_name, kind = spec
        if kind in ("flag", "noflag"):
            values[field_name] = kind == "flag" if not eq else inline.lower() in ("1", "true", "yes")
            continue
        if eq:
            raw = inline
        elif i < len(tokens):
            raw = tokens[i]
            i += 1
        else:
            raise PlannerError(field_name, Text("{name} needs a value", name=name))
        if kind == "len":
            if raw.strip().lower() in ("auto", "-1"):
                auto = True
                continue
            values[field_name] = human_readable_int(raw, field_name=field_name)
        elif kind == "hint":
            values[field_name] = human_readable_int(raw, field_name=field_name)
        elif kind == "int":
            try:
                values[field_name] = numbers.parse_int(raw)
            except ValueError as exc:
                raise PlannerError(field_name, exc.args[0]) from exc
        elif kind == "float":
            try:
                values[field_name] = numbers.parse_float(raw)
            except ValueError as exc:
                raise PlannerError(field_name, exc.args[0]) from exc
        else:
            values[field_name] = raw
    try:
        serve = ServeConfig(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = str(first["loc"][0]) if first["loc"] else "command"
        raise PlannerError(loc, first["msg"]) from exc
    return ParsedCommand(model=model, serve=serve, unknown_flags=unknown, max_model_len_auto=auto)


def extras_flags(serve: ServeConfig) -> list[str]:
    """The extras flags (app/core/extras.py) that differ from vLLM's defaults, as `vllm serve` spells them."""
    parts: list[str] = []
    if serve.speculative_config is not None:
        spec = serve.speculative_config.model_dump(exclude_none=True, exclude_defaults=True)
        spec.setdefault("num_speculative_tokens", serve.speculative_config.num_speculative_tokens)
        parts.append(f"--speculative-config {shlex.quote(json.dumps(spec, separators=(',', ':')))}")
    if serve.enable_lora:
        parts.append("--enable-lora")
        parts.append(f"--max-loras {serve.max_loras} --max-lora-rank {serve.max_lora_rank}")
        if serve.max_cpu_loras is not None:
            parts.append(f"--max-cpu-loras {serve.max_cpu_loras}")
        if serve.fully_sharded_loras:
            parts.append("--fully-sharded-loras")
    if serve.data_parallel_size != 1:
        parts.append(f"--data-parallel-size {serve.data_parallel_size}")
    if serve.enable_expert_parallel:
        parts.append("--enable-expert-parallel")
    if serve.limit_mm_per_prompt is not None:
        limits = json.dumps(serve.limit_mm_per_prompt, separators=(",", ":"))
        parts.append(f"--limit-mm-per-prompt {shlex.quote(limits)}")
    return parts


def render_serve_command(
    *, model: str, serve: ServeConfig, vllm_version: str | None, max_model_len_auto: bool = False
) -> str:
    """`vllm serve MODEL` plus only the non-default flags, one per line like the seed's example."""
    rules = rules_for(vllm_version)
    parts: list[str] = []
    if max_model_len_auto and rules.has_auto_fit:
        parts.append("--max-model-len auto")
    elif serve.max_model_len is not None:
        parts.append(f"--max-model-len {serve.max_model_len}")
    if serve.tensor_parallel_size != 1:
        parts.append(f"--tensor-parallel-size {serve.tensor_parallel_size}")
    if serve.pipeline_parallel_size != 1:
        parts.append(f"--pipeline-parallel-size {serve.pipeline_parallel_size}")
    if (
        serve.gpu_memory_utilization is not None
        and serve.gpu_memory_utilization != rules.default_gpu_memory_utilization
    ):
        parts.append(f"--gpu-memory-utilization {serve.gpu_memory_utilization:g}")
    if serve.kv_cache_dtype not in ("auto", "int8"):
        parts.append(f"--kv-cache-dtype {serve.kv_cache_dtype}")
    if serve.block_size is not None:
        parts.append(f"--block-size {serve.block_size}")
    if serve.max_num_seqs is not None:
        parts.append(f"--max-num-seqs {serve.max_num_seqs}")
    if serve.max_num_batched_tokens is not None:
        parts.append(f"--max-num-batched-tokens {serve.max_num_batched_tokens}")
    if serve.enforce_eager:
        parts.append("--enforce-eager")
    default_prefix = rules.prefix_caching_default
    if serve.enable_prefix_caching is not None and serve.enable_prefix_caching != default_prefix:
        parts.append(
            "--enable-prefix-caching" if serve.enable_prefix_caching else "--no-enable-prefix-caching"
        )
    always_chunked = rules.chunked_prefill_auto_above is None  # V1; V0 decides by the length
    if serve.enable_chunked_prefill is False and always_chunked:
        parts.append("--no-enable-chunked-prefill")
    elif serve.enable_chunked_prefill and not always_chunked:
        parts.append("--enable-chunked-prefill")
    if serve.quantization:
        parts.append(f"--quantization {vllm_quantization_name(serve.quantization)}")
    if serve.data_parallel_size > 1:
        parts.append(f"--data-parallel-size {serve.data_parallel_size}")
    if serve.enable_expert_parallel:
        parts.append("--enable-expert-parallel")
    if serve.dtype != "auto":
        parts.append(f"--dtype {serve.dtype}")
    if serve.kv_cache_memory_bytes is not None and rules.has_kv_cache_memory_bytes_flag:
        parts.append(f"--kv-cache-memory-bytes {serve.kv_cache_memory_bytes}")
    if serve.cpu_offload_gb:
        parts.append(f"--cpu-offload-gb {serve.cpu_offload_gb:g}")
    if serve.swap_space_gib is not None and rules.swap_space_used:
        parts.append(f"--swap-space {serve.swap_space_gib:g}")
    if serve.kv_offloading_size_gib and rules.has_kv_offloading_flags:
        parts.append(f"--kv-offloading-size {serve.kv_offloading_size_gib:g} --kv-offloading-backend native")
    parts.extend(extras_flags(serve))
    head = f"vllm serve {shlex.quote(model)}"
    if serve.allow_long_max_model_len:
        head = f"{ALLOW_LONG_ENV}=1 {head}"
    if not parts:
        return head
    return " \\\n  ".join([head, *parts])
