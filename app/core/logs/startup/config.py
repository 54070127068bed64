"""Handlers for the configuration lines: engine config, non-default args, pasted commands, version, backend."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from app.core import deadline, regex
from app.core import vllm_text as vt
from app.core.command import (
    NotVllmImageError,
    ParsedCommand,
    compose_command,
    parse_serve_args,
    parse_serve_command,
)
from app.core.errors import PlannerError
from app.core.logs.reading import (
    gib_bytes,
    int_of,
    strip_ansi,
)
from app.core.logs.startup.accumulator import (
    SOURCE_FALLBACK,
    SOURCE_FORCED,
    SOURCE_SECONDARY,
    Handler,
    _as_bool,
    _as_float,
    _as_int,
    _as_str,
    _device,
    _device_word,
    _error,
    _Line,
    _Run,
    exact_tensor_parallel,
    gpu_stack,
)
from app.core.logs.startup.facts import (
    MAX_ARGS_EVAL_CHARS,
    MAX_COMMAND_LINES,
    MAX_LINE_CHARS,
    MAX_OBJECT_CHARS,
    LogFacts,
    Stage,
)
from app.core.serve_flags import FlagKind, printed_keys
from app.core.specs import ServeConfig, SpeculativeConfig
from app.core.text import Text

# --------------------------------------------------------------------------------------------
# handlers: configuration, version, backend


_SPEC_REPR = regex.compile(vt.SPECULATIVE_REPR)


def _object_text(text: str) -> object:
    """A printed dict: Python's repr ("non-default args", Namespace) or JSON (a command line)."""
    if len(text) > MAX_OBJECT_CHARS or not text.startswith("{"):
        return None
    try:
        return ast.literal_eval(text)
    except Exception:  # literal_eval raises many types on arbitrary text; JSON is tried next
        pass
    try:
        return json.loads(text)
    except ValueError:
        return None


def _as_speculative(value: object) -> dict[str, Any] | None:
    """--speculative-config as printed: a dict (args), the engine line's SpeculativeConfig(...) repr."""
    if isinstance(value, str):
        text = value.strip()
        found = _SPEC_REPR.fullmatch(text)
        if found is not None:
            spec: dict[str, Any] = {"method": found.group(1), "num_speculative_tokens": int(found.group(3))}
            if found.group(2):
                spec["model"] = found.group(2).strip()
            return spec
        value = _object_text(text)
    if isinstance(value, dict) and value:
        return {str(k): v for k, v in value.items()}
    return None


def _as_limits(value: object) -> dict[str, int] | None:
    """--limit-mm-per-prompt as printed: {"image": 0} or, 0.11+, {"image": {"count": 0, ...}}."""
    if isinstance(value, str):
        value = _object_text(value.strip())
    if not isinstance(value, dict):
        return None
    limits: dict[str, int] = {}
    for key, item in value.items():
        count = item.get("count") if isinstance(item, dict) else item
        if isinstance(count, bool) or not isinstance(count, int):
            return None
        limits[str(key)] = count
    return limits


_KIND_CONVERTERS: dict[FlagKind, Callable[[object], object]] = {
    "len": _as_int,
    "int": _as_int,
    "hint": _as_int,
    "float": _as_float,
    "flag": _as_bool,
    "choice": _as_str,
    "text": _as_str,
}
# the serve fields whose printed value reads into another LogFacts field or needs its own reader
_SPECIAL_KEYS: dict[str, tuple[str, Callable[[object], object]]] = {
    "kv_cache_memory_bytes": ("kv_cache_memory_specified", lambda v: _as_int(v) is not None or None),
    "speculative_config": ("speculative_config", _as_speculative),
    "limit_mm_per_prompt": ("limit_mm_per_prompt", _as_limits),
}
# key as printed (engine config / args) -> (LogFacts field, converter): the flag table's printed keys
# (app/core/serve_flags.py) plus the two that are not flags
_CONFIG_KEYS: dict[str, tuple[str, Callable[[object], object]]] = {
    "model": ("model", _as_str),
    "device_config": ("device_type", lambda v: _device_word(_as_str(v))),
    **{
        key: _SPECIAL_KEYS.get(field) or (field, _KIND_CONVERTERS[kind])
        for key, (field, kind) in printed_keys().items()
    },
}
# the two values that are objects: key=SpeculativeConfig(...) / key={...} on the engine-config and
# Namespace lines, 'key': {...} in a "non-default args" dict literal_eval could not read
_OBJECT_KEYS = r"(?P<key>speculative_config|limit_mm_per_prompt)"
_OBJECT_VALUE = regex.compile(
    r"(?<![\w.'])" + _OBJECT_KEYS + r"=(?P<value>SpeculativeConfig\([^()]{0,1024}\)|\{[^{}]{0,1024}\})"
)
_OBJECT_ITEM = regex.compile(r"'" + _OBJECT_KEYS + r"':\s*(?P<value>\{[^{}]{0,1024}\})")
_KEY_VALUE = regex.compile(
    r"(?<![\w.'])(?P<key>" + "|".join(_CONFIG_KEYS) + r")=(?P<value>'(?:[^'\\]|\\.)*'|\"[^\"]*\"|[^,()\s]+)"
)
_DICT_ITEM = regex.compile(
    r"'(?P<key>" + "|".join(_CONFIG_KEYS) + r")':\s*(?P<value>'(?:[^'\\]|\\.)*'|[^,}\s]+)"
)


def _clean_config_value(key: str, raw: object) -> object:
    value: object = raw
    if isinstance(raw, str):
        value = raw.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if key == "dtype" and isinstance(value, str):
            value = value.removeprefix("torch.")
    return value


def _put_config(pairs: Iterable[tuple[str, object]], ln: _Line, run: _Run, source: int) -> None:
    seen: set[str] = set()
    for key, raw in pairs:
        if key in seen or key not in _CONFIG_KEYS:
            continue
        seen.add(key)
        name, convert = _CONFIG_KEYS[key]
        value = convert(_clean_config_value(key, raw))
        if name in (
            "max_model_len",
            "tensor_parallel_size",
            "pipeline_parallel_size",
            "data_parallel_size",
        ) and (not isinstance(value, int) or value <= 0):
            continue  # max_model_len -1 means "auto" (reference §7): the auto-fit line says the result
        if name == "dtype" and value == "auto":
            continue
        run.put(name, value, ln, source=source)
        if name == "device_type" and value == "NPU":
            run.put("is_ascend", True, ln)


# v1/engine/core.py prints vllm/version.py's __version__, which vcs-versioning writes as a PEP 440 release (a digit
# first, "0.9.2.dev301+g3c545c0c3"); a tree without it prints "dev", and docs print the placeholder "vx.x.x" (vllm-ascend
# docs/source/quick_start.md at 322ce72a): neither is a release
_ENGINE_RELEASE = regex.compile(vt.VERSION)


def _engine_config(m: re.Match[str], ln: _Line, run: _Run) -> None:
    flavour, version = m.group(1), m.group(2)
    run.put("engine", "v1" if flavour == "V1 " else "v0", ln)
    # V0 before 0.6 prints "Initializing an LLM engine with config:" alone
    if version is not None and _ENGINE_RELEASE.fullmatch(version.strip()):
        run.put("vllm_version", version.strip().removeprefix("v"), ln, source=SOURCE_SECONDARY)
    body = m.string[m.end() :]
    pairs = ((km.group("key"), km.group("value")) for km in _KEY_VALUE.finditer(body))
    _put_config(pairs, ln, run, SOURCE_SECONDARY + 1)
    objects = ((om.group("key"), om.group("value")) for om in _OBJECT_VALUE.finditer(body))
    _put_config(objects, ln, run, SOURCE_SECONDARY + 1)


def _non_default_args(m: re.Match[str], ln: _Line, run: _Run) -> None:
    body = m.string[m.start(1) :].strip()
    parsed: object = None
    if len(body) <= MAX_ARGS_EVAL_CHARS:
        end = body.rfind("}")
        try:
            parsed = ast.literal_eval(body[: end + 1])
        except Exception:  # literal_eval raises many types on arbitrary text; the regex fallback follows
            parsed = None
    if isinstance(parsed, dict):
        pairs: Iterable[tuple[str, object]] = ((str(k), v) for k, v in parsed.items())
    else:  # a value repr literal_eval cannot read (an enum, a config object): fall back to a regex
        pairs = ((dm.group("key"), dm.group("value")) for dm in _DICT_ITEM.finditer(body))
        objects = ((om.group("key"), om.group("value")) for om in _OBJECT_ITEM.finditer(body))
        _put_config(objects, ln, run, SOURCE_SECONDARY)
    _put_config(pairs, ln, run, SOURCE_SECONDARY)
    tag = _MODEL_TAG.search(body)
    if tag is not None:  # `vllm serve MODEL`'s positional: the model when no 'model' key is printed
        run.put("model", _as_str(tag.group(1)), ln, source=SOURCE_FALLBACK)
    mode = _GRAPH_MODE_ITEM.search(
        body
    )  # inside the printed compilation_config, an enum repr literal_eval refuses
    if mode is not None:
        run.put("cudagraph_mode", mode.group(1), ln, source=SOURCE_SECONDARY)


# `vllm serve MODEL` puts MODEL in the args as 'model_tag' (entrypoints/cli/serve.py, 0.10–0.33); the args print
# 'model' beside it only when it differs from the default (vllm#27194, 0.10.2: 'model_tag' alone)
_MODEL_TAG = regex.compile(r"'model_tag':\s{0,4}'([^']{1,512})'")
# 'cudagraph_mode': <CUDAGraphMode.FULL_DECODE_ONLY: (2, 0)> (or 'FULL_DECODE_ONLY') in the non-default args'
# compilation_config, as vllm-ascend 0.13.0 prints it (config/compilation.py's CUDAGraphMode enum, 0.13.0)
_GRAPH_MODE_ITEM = regex.compile(
    r"'cudagraph_mode':\s{0,4}(?:<CUDAGraphMode\.|')(NONE|PIECEWISE|FULL_DECODE_ONLY|FULL_AND_PIECEWISE|FULL)\b"
)


def _args_namespace(m: re.Match[str], ln: _Line, run: _Run) -> None:
    body = m.string[m.end() :]
    pairs = ((km.group("key"), km.group("value")) for km in _KEY_VALUE.finditer(body))
    _put_config(pairs, ln, run, SOURCE_SECONDARY)
    objects = ((om.group("key"), om.group("value")) for om in _OBJECT_VALUE.finditer(body))
    _put_config(objects, ln, run, SOURCE_SECONDARY)


def _scheduler_default(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put(m.group(1), int_of(m.group(2)), ln, source=SOURCE_FALLBACK)


def _chunked_prefill(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """ "Chunked prefill is enabled with max_num_batched_tokens=N." (config/scheduler.py, 0.33.0: printed only when
    enable_chunked_prefill holds): the budget, and that chunked prefill is on; an engine-config line beats it."""
    run.put(m.group(1), int_of(m.group(2)), ln, source=SOURCE_FALLBACK)
    run.put("enable_chunked_prefill", True, ln, source=SOURCE_SECONDARY)


def _mla_disables_chunked_prefill(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """V0's MLA override, after the scheduler's "Chunked prefill is enabled" line: both features are off."""
    run.put("enable_chunked_prefill", False, ln, source=SOURCE_FORCED)
    run.put("enable_prefix_caching", False, ln, source=SOURCE_FORCED)


def _dtype_fallback(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """ "Your device 'X' (with compute capability 9.0) doesn't support torch.bfloat16. Falling back to
    torch.float16 …": the dtype the engine runs; a card with a compute capability (CUDA, ROCm) is a GPU by that name."""
    run.put("dtype", m.group(3), ln, source=SOURCE_SECONDARY)
    if m.group(2) is not None:
        run.put("device_name", m.group(1).strip(), ln, source=SOURCE_SECONDARY, mode="first")
        run.put("device_type", "GPU", ln, source=SOURCE_FALLBACK)


def _bf16_unsupported(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """V0's refusal of bfloat16 on a card below compute capability 8.0: the start failed at the worker's device init,
    and where a capability is printed, the platform's name for the card."""
    _error("startup_failed", m, ln, run, source=SOURCE_SECONDARY)
    if m.group(2) is not None:
        run.put("device_name", m.group(1).strip(), ln, source=SOURCE_SECONDARY, mode="first")
        run.put("device_type", "GPU", ln, source=SOURCE_FALLBACK)


def _dtype_cast(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """ "Casting torch.bfloat16 to torch.float16.": the dtype the model config returned (the engine line's wins)."""
    run.put("dtype", m.group(1), ln, source=SOURCE_SECONDARY)


def _async_output_eager(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """ "… Since, enforce-eager is enabled, async output processor cannot be used": printed only under enforce-eager."""
    run.put("enforce_eager", True, ln, source=SOURCE_SECONDARY)


def _oom_capacity(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """ "GPU 0 has a total capacity of 10.57 GiB of which …" on a line of its own: the device's total memory."""
    run.put("device_total_bytes", gib_bytes(m.group(1)), ln, source=SOURCE_SECONDARY)


def _quantization_warning(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """ "gptq quantization is not fully optimized yet.": the method the model config resolved."""
    run.put("quantization", m.group(1), ln, source=SOURCE_SECONDARY)


def _async_scheduling(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """ "Asynchronous scheduling is enabled." : the mode the engine resolved, over what the flags asked."""
    run.put("async_scheduling", m.group(1) == "enabled", ln, source=SOURCE_FORCED)


def _server_version(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("vllm_version", m.group(1).removeprefix("v"), ln)
    if m.lastindex is not None and m.lastindex >= 2 and m.group(2):
        run.put("model", _as_str(m.group(2)), ln, source=SOURCE_SECONDARY)


def _reported_version(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """collect_env's "vLLM Version : X" or a caller's "vllm version: X": the installed release, below vLLM's own line."""
    run.put("vllm_version", m.group(1).removeprefix("v"), ln, source=SOURCE_SECONDARY)


def _banner_model(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("model", _as_str(m.group(1)), ln, source=SOURCE_SECONDARY)


def _load_model_name(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """ "Starting to load model X...": the runner's model_config.model, below what the config lines print."""
    run.put("model", _as_str(m.group(1)), ln, source=SOURCE_FALLBACK)


def _max_model_len(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("max_model_len", int_of(m.group(1)), ln)


def _kv_scale_dtype(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("kv_cache_dtype", m.group(1), ln, source=SOURCE_FALLBACK)


def _fp8_kv(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("kv_cache_dtype", "fp8", ln, source=SOURCE_FALLBACK)  # the line does not say which fp8


_BEFORE: dict[Stage, tuple[Stage, ...]] = {"load": ("start", "load"), "profile": ("start", "load", "profile")}


def _stage(stage: Stage) -> Handler:
    def handle(m: re.Match[str], ln: _Line, run: _Run) -> None:
        if stage in ("load", "profile") and run.stage not in _BEFORE[stage]:
            return  # a frame of an earlier stage (load_model after the weights loaded) does not go back
        if run.stage != "ready" or stage == "ready":
            run.stage = stage

    return handle


def _device_init(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """A frame of the device's initialisation: the start-up had not begun loading (stage "start", now known)."""
    if run.stage == "start":
        run.stage_read = True


def _saw_loading(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """Shard progress goes to stderr, so it may land after the error it preceded: read at the end too."""
    run.saw_loading = True
    if run.stage == "start":
        run.stage = "load"


def _traceback(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.in_traceback = True
    _failure(m, ln, run)


LOG_LEVELS = ("INFO", "WARNING", "DEBUG")


def _bare_frame(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """A start-up frame with no log level before it (a traceback's; INFO / WARNING / DEBUG frames are not)."""
    head = m.string[: m.start()]
    if not any(level in head for level in LOG_LEVELS):
        _traceback(m, ln, run)


def _v0_frame(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("engine", "v0", ln, source=SOURCE_FALLBACK)


def _failure(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """A start-up failure with no recognised cause (yet): a more specific error replaces it."""
    if run.stage == "ready":
        run.note(Text("an error came after the start-up completed; the start-up is read"))
        return
    if "raise " in ln.text or m.string[: m.start()].endswith(('"', "'")):
        return  # the traceback's quoted source line, not the message
    _error("startup_failed", m, ln, run, source=SOURCE_FALLBACK)


def _exception(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """``SomeError: message`` closing a traceback: the first one names the root cause. A quote of the exception
    line alone (no "Traceback" header, no ERROR level) counts once a start-up began: every start-up raise site of
    vLLM (v1/engine/, v1/worker/, v1/core/kv_cache_utils.py, config/*.py, 0.11.0 / 0.19.0 / 0.33.0) ends its
    process with that line; INFO / WARNING / DEBUG lines that quote an error are not it."""
    began = run.headed or run.seen_kv or run.saw_loading
    bare = not any(level in m.string[: m.start()] for level in LOG_LEVELS)
    if (
        not run.in_traceback
        and "ERROR" not in ln.text
        and run.get("error_kind") is None
        and not (began and bare)
    ):
        return
    if run.stage == "ready":
        return
    _error("startup_failed", m, ln, run, source=SOURCE_SECONDARY)


# every ServeConfig flag a pasted command gives reaches the facts under its own name (LogFacts names its
# configuration fields like ServeConfig); --kv-cache-memory-bytes is only noted as used
_SERVE_TO_FACTS = tuple(name for name in ServeConfig.model_fields if name in LogFacts.model_fields)


def _read_command(source: str | list[str], ln: _Line, run: _Run) -> None:
    """A command pasted with the log, read by the planner's one command reader (app/core/command.py): a
    `vllm serve …` or `docker run` of vLLM's image as typed (``str``), or a compose service's `command:`
    arguments (``list``; the vllm/vllm-openai image runs `vllm serve` with them). What was asked for
    goes below what vLLM printed."""
    deadline.check()  # one command of up to 100,000 characters is ~0.1 s of shlex: the budget before each
    try:
        parsed = (
            parse_serve_command(source, lenient=True)
            if isinstance(source, str)
            else parse_serve_args(source, lenient=True)
        )
    except NotVllmImageError:
        return  # a container that is not vLLM's image
    except PlannerError as exc:
        run.note(Text("the pasted command could not be read ({message})", message=exc.message))
        return
    for problem in parsed.refused:  # a value the paste broke: the rest of the command is still read
        refused = f"{problem.field}: {problem.message}"
        run.note(Text("the pasted command could not be read ({message})", message=refused))
    if parsed.unrecognized:  # the log shows the command ran: a plugin's or a fork's own flags
        run.note(
            Text(
                "the pasted command has flags vLLM's own parser does not know (a plugin's or a fork's), not read: {flags}",
                flags=" ".join(parsed.unrecognized),
            )
        )
    _apply_command(parsed, ln, run)


def _compose_block(lines: list[str], index: int, compose_image: bool) -> tuple[list[str], int] | None:
    """A compose `command:` at ``lines[index]`` under a vLLM image (or naming vllm): its arguments and
    the lines it spans; None when it is not one or gives no flag."""
    head = lines[index][:MAX_LINE_CHARS]
    if _COMPOSE_KEY.match(head) is None or not (compose_image or "vllm" in head):
        return None
    window = [
        strip_ansi(head),
        *(r[:MAX_LINE_CHARS] for r in lines[index + 1 : index + 2 * MAX_COMMAND_LINES]),
    ]
    block = compose_command(window)
    if block is None or not any(t.startswith("--") for t in block[0]):
        return None
    return block


def _apply_command(parsed: ParsedCommand, ln: _Line, run: _Run) -> None:
    if parsed.model is not None and _SHELL_VARIABLE.fullmatch(parsed.model) is None:
        run.put("model", _as_str(parsed.model), ln, source=SOURCE_FALLBACK)
    given = parsed.serve.model_fields_set
    for name in _SERVE_TO_FACTS:
        if name in given:
            value = getattr(parsed.serve, name)
            if name in ("kv_cache_dtype", "dtype") and value == "auto":
                continue
            if isinstance(value, SpeculativeConfig):
                value = value.model_dump(exclude_none=True)
            run.put(name, value, ln, source=SOURCE_FALLBACK)
    if "kv_cache_memory_bytes" in given:
        run.put("kv_cache_memory_specified", True, ln, source=SOURCE_FALLBACK)


# a command as the post wrote it, with its shell variables unexpanded (`--model "${MODEL_NAME}"`, vllm#18995): the
# value is not in the paste
_SHELL_VARIABLE = regex.compile(r"\$\{?[A-Za-z_]\w{0,80}\}?")


def _platform(m: re.Match[str], ln: _Line, run: _Run) -> None:
    device = _device(m.group(1))
    run.put("device_type", device, ln, source=SOURCE_FALLBACK)
    run.put("gpu_platform", gpu_stack(m.group(1)), ln)
    if device == "NPU":
        run.put("is_ascend", True, ln)


def _platform_plugin(m: re.Match[str], ln: _Line, run: _Run) -> None:
    device = vt.OOT_PLATFORM_DEVICES.get(m.group(1).lower())
    if device is not None:
        run.put("device_type", device, ln, source=SOURCE_FALLBACK)
        run.put("is_ascend", device == "NPU", ln)


def _forced_block_size(m: re.Match[str], ln: _Line, run: _Run) -> None:
    size = int_of(m.group(1))
    run.put("block_size_forced", size, ln)
    run.put("block_size", size, ln, source=SOURCE_FORCED)


def _ascend_block_size(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("block_size_forced", ASCEND_BLOCK_SIZE, ln)
    run.put("block_size", ASCEND_BLOCK_SIZE, ln, source=SOURCE_FORCED)
    run.put("is_ascend", True, ln)
    run.put("device_type", "NPU", ln, source=SOURCE_FALLBACK)


ASCEND_BLOCK_SIZE = 128  # vllm_ascend/utils.py::refresh_block_size (reference §9)

# human-readable backend names (V0 selector, V1 ≤0.10 "on V1 engine") -> enum-like names (reference §5.2)
_BACKEND_NAMES = {
    "flashattention": "FLASH_ATTN",
    "flashattn": "FLASH_ATTN",
    "flashinfer": "FLASHINFER",
    "xformers": "XFORMERS",
    "flashmla": "FLASHMLA",
    "flashmlasparse": "FLASHMLA_SPARSE",
    "tritonmla": "TRITON_MLA",
    "cutlassmla": "CUTLASS_MLA",
    "flashinfermla": "FLASHINFER_MLA",
    "flashattentionmla": "FLASH_ATTN_MLA",
    "flashattnmla": "FLASH_ATTN_MLA",
    "triton": "TRITON_ATTN",
    "tritonattention": "TRITON_ATTN",
    "flexattention": "FLEX_ATTENTION",
    "torchsdpa": "TORCH_SDPA",
    "pallas": "PALLAS",
    "ipex": "IPEX",
    "rocmflashattention": "ROCM_FLASH",
    "rocmattention": "ROCM_ATTN",
    "rocmaiterfa": "ROCM_AITER_FA",
    "rocmaitermla": "ROCM_AITER_MLA",
    "ascend": "ASCEND",
    "ascendattention": "ASCEND",
    "ascendattentionbackend": "ASCEND",
    "ascendmla": "ASCEND_MLA",
    "ascendmlabackend": "ASCEND_MLA",
    "ascendsfa": "ASCEND_SFA",
    "ascendsfabackend": "ASCEND_SFA",
}
_ENUM_BACKEND = regex.compile(
    r"^(?:FLASH|TRITON|ROCM_|XFORMERS|TORCH_SDPA|FLEX_|PALLAS|CPU_|CUTLASS_|TREE_ATTN|TURBOQUANT|"
    r"TOKENSPEED_|IPEX|ASCEND|DIFFERENTIAL_|CUSTOM)"
)
_NOT_DECODER_ATTENTION = regex.compile(
    r"MoE|moe|encoder|vit |MultiHeadAttention|MMEncoder|sampl|all2all|GEMM"
)


def _backend(m: re.Match[str], ln: _Line, run: _Run) -> None:
    if _NOT_DECODER_ATTENTION.search(ln.text) is not None:
        return
    raw = m.group(1).strip()
    name: str | None
    if "_" in raw or (raw.isupper() and len(raw) > 2):
        enum = raw.removeprefix("AttentionBackendEnum.").removesuffix("_VLLM_V1").upper()
        name = enum if _ENUM_BACKEND.match(enum) else None
    else:
        name = _BACKEND_NAMES.get(regex.sub(r"[\s_-]+", "", raw).lower())
    if name is None:
        return
    run.put("attention_backend", name, ln)
    if name.startswith("ASCEND"):
        run.put("is_ascend", True, ln)
        run.put("device_type", "NPU", ln, source=SOURCE_FALLBACK)


def _device_name(m: re.Match[str], ln: _Line, run: _Run) -> None:
    run.put("device_name", m.group(1).strip(), ln, mode="first")
    run.put("device_type", "GPU", ln, source=SOURCE_FALLBACK)
    run.put("gpu_platform", "cuda", ln, source=SOURCE_SECONDARY)  # the template reads NVIDIA cards only


def _collect_env_gpu(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """collect_env's "GPU models and configuration: AMD Instinct MI300X (gfx942:sramecc+:xnack-)": the card (device 0),
    and, with the gfx architecture only a ROCm build appends, the ROCm stack."""
    run.put("device_name", m.group(1).strip(), ln, source=SOURCE_SECONDARY, mode="first")
    run.put("device_type", "GPU", ln, source=SOURCE_FALLBACK)
    if m.group(2) is not None:
        run.put("gpu_platform", "rocm", ln, source=SOURCE_FALLBACK)


def _moe_config_name(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """The card's name in a fused-MoE config file name, with vLLM's "_" for each " " put back."""
    run.put("device_name", m.group(1).replace("_", " "), ln, source=SOURCE_FALLBACK, mode="first")
    run.put("device_type", "GPU", ln, source=SOURCE_FALLBACK)
    run.put("gpu_platform", "cuda", ln, source=SOURCE_SECONDARY)


def _platform_module(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """vLLM's own platform module (platforms/cuda.py, platforms/rocm.py) printed the line: that GPU stack runs."""
    run.put("device_type", "GPU", ln, source=SOURCE_FALLBACK)
    run.put("gpu_platform", gpu_stack(m.group(1)), ln, source=SOURCE_FALLBACK, mode="first")


_COMPOSE_KEY = regex.compile(r"[ \t]{0,64}(?:-[ \t]+)?command:")  # a YAML `command:` key, not a log line


def _world_size(m: re.Match[str], ln: _Line, run: _Run) -> None:
    """parallel_state.py's "rank R in world size W is assigned as …": the world is DP × PP × PCP × TP processes,
    so W = 1 says TP 1 and PP 1; a larger W bounds TP from above, which a TP rank of W − 1 (this line's or a
    worker prefix's) meets (accumulator.exact_tensor_parallel)."""
    world = int_of(m.group(1))
    if world == 1:
        run.put("tensor_parallel_size", 1, ln, source=SOURCE_FALLBACK)
        run.put("pipeline_parallel_size", 1, ln, source=SOURCE_FALLBACK)
        return
    run.world_size = world
    for rank in _TP_RANK.finditer(m.string[m.end() :]):
        run.worker_ranks.setdefault("TP", set()).add(int(rank.group(1)))
    exact_tensor_parallel(ln, run)


_TP_RANK = regex.compile(r"\bTP rank (\d{1,6})\b")  # the same line's "…, PP rank 0, TP rank 1, …"
