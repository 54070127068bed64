"""Read and write `vllm serve …` command lines.

Parsing accepts what people paste: backslash continuations, `--flag=value`, short aliases
(`-tp`, `-pp`, `-q`), vLLM's human-readable integers (`32k` = 32,000, `32K` = 32,768) and the
older `python -m vllm.entrypoints.openai.api_server --model X` form. Rendering writes only the
flags that differ from vLLM's defaults, spelled for the chosen version.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from app.core.errors import PlannerError
from app.core.specs import ServeConfig
from app.core.text import Text
from app.core.versions import rules_for

MAX_COMMAND_CHARS = 100_000

# vLLM's human_readable_int: lower-case suffixes are decimal, upper-case binary (reference §7)
_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def human_readable_int(text: str, *, field_name: str) -> int:
    """'32k' -> 32000, '32K' -> 32768, '25.6k' -> 25600, '8192' -> 8192."""
    value = text.strip().replace("_", "").replace(",", "")
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([kmgtKMGT]?)", value)
    if not match:
        raise PlannerError(
            field_name, Text("not a whole number: {text!r} (examples: 8192, 32k, 128K)", text=text)
        )
    number, suffix = float(match[1]), match[2]
    scale = _DECIMAL.get(suffix) or _BINARY.get(suffix) or 1
    result = number * scale
    if result != int(result):
        raise PlannerError(field_name, Text("{text!r} is not a whole number of tokens", text=text))
    return int(result)


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
    "--data-parallel-size": ("data_parallel_size", "int"),
    "-dp": ("data_parallel_size", "int"),
    "--enable-expert-parallel": ("enable_expert_parallel", "flag"),
    "-ep": ("enable_expert_parallel", "flag"),
}
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
    joined = re.sub(r"\\\s*\n", " ", text)
    joined = "\n".join(line for line in joined.splitlines() if not line.lstrip().startswith("#"))
    try:
        return shlex.split(joined)
    except ValueError as exc:
        raise PlannerError("command", Text("cannot split the command: {exc}", exc=exc)) from exc


def parse_serve_command(text: str) -> ParsedCommand:
    """A pasted `vllm serve MODEL --flags …` (or api_server form) → model id + ServeConfig."""
    tokens = _tokens(text)
    # drop an env-var prefix and the program: `CUDA_VISIBLE_DEVICES=0 vllm serve` / `python -m …api_server`
    while tokens and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", tokens[0]):
        tokens.pop(0)
    if tokens[:2] == ["vllm", "serve"]:
        tokens = tokens[2:]
    elif tokens and tokens[0] in ("python", "python3") and "-m" in tokens[:3]:
        tokens = tokens[3:]
    elif tokens and tokens[0] == "vllm":
        raise PlannerError("command", Text("expected `vllm serve MODEL …`"))
    return parse_serve_args(tokens)


def parse_serve_args(tokens: list[str]) -> ParsedCommand:
    values: dict[str, Any] = {}
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
        if name == "--model":
            if eq:
                model = inline
            elif i < len(tokens):
                model = tokens[i]
                i += 1
            continue
        spec = _FLAGS.get(name)
        if spec is None:
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
                values[field_name] = int(raw)
            except ValueError as exc:
                raise PlannerError(field_name, Text("not a whole number: {raw!r}", raw=raw)) from exc
        elif kind == "float":
            try:
                values[field_name] = float(raw)
            except ValueError as exc:
                raise PlannerError(field_name, Text("not a number: {raw!r}", raw=raw)) from exc
        else:
            values[field_name] = raw
    try:
        serve = ServeConfig(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = str(first["loc"][0]) if first["loc"] else "command"
        raise PlannerError(loc, first["msg"]) from exc
    return ParsedCommand(model=model, serve=serve, unknown_flags=unknown, max_model_len_auto=auto)


def render_serve_command(
    *, model: str, serve: ServeConfig, vllm_version: str | None, max_model_len_auto: bool = False
) -> str:
    """`vllm serve MODEL` plus only the non-default flags, one per line like the seed's example."""
    rules = rules_for(vllm_version)
    v = rules.version_tuple
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
    default_prefix = rules.engine == "v1"
    if serve.enable_prefix_caching is not None and serve.enable_prefix_caching != default_prefix:
        parts.append(
            "--enable-prefix-caching" if serve.enable_prefix_caching else "--no-enable-prefix-caching"
        )
    if serve.enable_chunked_prefill is False and rules.engine == "v1":
        parts.append("--no-enable-chunked-prefill")
    elif serve.enable_chunked_prefill and rules.engine == "v0":
        parts.append("--enable-chunked-prefill")
    if serve.quantization:
        parts.append(f"--quantization {serve.quantization}")
    if serve.data_parallel_size > 1:
        parts.append(f"--data-parallel-size {serve.data_parallel_size}")
    if serve.enable_expert_parallel:
        parts.append("--enable-expert-parallel")
    if serve.dtype != "auto":
        parts.append(f"--dtype {serve.dtype}")
    if serve.kv_cache_memory_bytes is not None and v >= (0, 10, 0):
        parts.append(f"--kv-cache-memory-bytes {serve.kv_cache_memory_bytes}")
    if serve.cpu_offload_gb:
        parts.append(f"--cpu-offload-gb {serve.cpu_offload_gb:g}")
    if serve.swap_space_gib is not None and rules.swap_space_used:
        parts.append(f"--swap-space {serve.swap_space_gib:g}")
    if serve.kv_offloading_size_gib and rules.has_kv_offloading_flags:
        parts.append(f"--kv-offloading-size {serve.kv_offloading_size_gib:g} --kv-offloading-backend native")
    head = f"vllm serve {shlex.quote(model)}"
    if not parts:
        return head
    return " \\\n  ".join([head, *parts])
