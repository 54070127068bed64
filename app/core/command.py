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
from app.core.serve_flags import PARSE_KINDS, render_flags
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


# flag -> (ServeConfig field, how its value is read): derived from the one flag table
_FLAGS = PARSE_KINDS
FLAGS_FILE = Path(__file__).with_name("vllm_flags.json")  # scripts/gen_vllm_flags.py, from vLLM's parser
SUGGESTION_CUTOFF = 0.75  # difflib ratio: one or two letters swapped, dropped or respelt


@cache
def _flag_releases() -> tuple[tuple[tuple[int, ...], frozenset[str]], ...]:
    data = json.loads(FLAGS_FILE.read_text(encoding="utf-8"))
    return tuple(
        (tuple(int(x) for x in version.split(".")[:3]), frozenset(flags))
        for version, flags in data["releases"].items()
    )


def release_flags(vllm_version: str | None) -> frozenset[str]:
    """The options `vllm serve` of this release has: those of the newest release read at or before it
    (the oldest read for anything older)."""
    wanted = rules_for(vllm_version).version_tuple
    releases = _flag_releases()
    chosen = releases[0][1]
    for version, flags in releases:
        if version <= wanted:
            chosen = flags
    return chosen


def vllm_flags(vllm_version: str | None) -> frozenset[str]:
    """The options the parser accepts for this release: the release's own, plus the flags the planner reads."""
    return release_flags(vllm_version) | frozenset(_FLAGS)


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
    tokens = strip_program(tokens)
    if tokens and tokens[0] == "vllm":
        raise PlannerError("command", Text("expected `vllm serve MODEL …`"))
    return parse_serve_args(tokens, env=env, vllm_version=vllm_version)


# `python3 -m vllm.entrypoints.openai.api_server`, `/usr/bin/python3.11 -u -m …`, `nohup python -m …`
_LAUNCHERS = frozenset({"nohup", "exec", "time", "command"})
_PYTHON = regex.compile(r"(?:\S*/)?python(?:\d+(?:\.\d+)?)?")
MAX_PYTHON_OPTIONS = 4  # `python -u -O -m …`: interpreter options before -m


def strip_program(tokens: list[str]) -> list[str]:
    """The arguments after the program: `vllm serve`, or python's `-m vllm.entrypoints.openai.api_server`
    (any interpreter path or version, a few interpreter options, a `nohup` / `exec` launcher)."""
    while tokens and tokens[0] in _LAUNCHERS:
        tokens = tokens[1:]
    if tokens[:2] == ["vllm", "serve"]:
        return tokens[2:]
    if tokens and _PYTHON.fullmatch(tokens[0]):
        head = tokens[1 : 2 + MAX_PYTHON_OPTIONS]
        if "-m" in head:
            module_at = head.index("-m") + 2  # tokens[0] is python, then the options, "-m", the module
            return tokens[module_at + 1 :]
    return tokens


# docker compose: `command:` as a string (`command: --model X`), a flow list (`command: ["--model", "X"]`),
# a folded / literal block (`command: >` then indented lines) or a block list (`- --model` / `- X`). The
# vllm/vllm-openai image's entrypoint is `vllm serve`, so the arguments are `vllm serve`'s.
_COMPOSE_COMMAND = regex.compile(r"^(?P<indent>[ \t]{0,64})(?:-[ \t]+)?command:[ \t]*(?P<rest>.*)$")
MAX_COMPOSE_LINES = 256  # a compose service's command list is far shorter


def compose_command(lines: list[str]) -> tuple[list[str], int] | None:
    """``lines[0]`` is a compose `command:` key: its argument tokens and how many lines it spans, or None
    when the line is not one. The key's own indentation ends the block (YAML)."""
    found = _COMPOSE_COMMAND.match(lines[0]) if lines else None
    if found is None:
        return None
    indent, rest = len(found.group("indent")), found.group("rest").strip()
    used = 1
    items: list[str] = []
    block: list[str] = []
    for line in lines[1:MAX_COMPOSE_LINES]:
        stripped = line.strip()
        if stripped and len(line) - len(line.lstrip()) <= indent:
            break
        used += 1
        if stripped.startswith("- "):
            items.append(_yaml_scalar(stripped[2:].strip()))
        elif stripped and not stripped.startswith("#"):
            block.append(stripped)
    try:
        if rest.startswith("["):
            parsed = json.loads(rest)
            tokens = [str(t) for t in parsed] if isinstance(parsed, list) else []
        elif rest in ("", ">", "|", ">-", "|-"):
            tokens = items if items else shlex.split(" ".join(block))
        else:
            tokens = shlex.split(_yaml_scalar(rest))
    except ValueError:
        return None
    return strip_program(tokens), used


def _yaml_scalar(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


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


def render_serve_command(
    *, model: str, serve: ServeConfig, vllm_version: str | None, max_model_len_auto: bool = False
) -> str:
    """`vllm serve MODEL` plus only the non-default flags, one per line like the seed's example."""
    rules = rules_for(vllm_version)
    parts = render_flags(serve, rules)  # app/core/serve_flags.py, in the table's order
    if max_model_len_auto and rules.has_auto_fit:
        parts = ["--max-model-len auto", *(p for p in parts if not p.startswith("--max-model-len "))]
    head = f"vllm serve {shlex.quote(model)}"
    if serve.allow_long_max_model_len:
        head = f"{ALLOW_LONG_ENV}=1 {head}"
    if not parts:
        return head
    return " \\\n  ".join([head, *parts])
