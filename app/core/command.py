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
from typing import Any

from pydantic import ValidationError

from app.core import compilation, numbers, regex
from app.core.errors import PlannerError
from app.core.graph_mode import CUDAGRAPH_MODES, LEVEL_MODES
from app.core.pydantic_messages import message_of
from app.core.release_flags import other_releases, release_flags
from app.core.serve_flags import PARSE_KINDS, render_flags
from app.core.specs import ServeConfig
from app.core.text import Text, TextList
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
SUGGESTION_CUTOFF = 0.75  # difflib ratio: one or two letters swapped, dropped or respelt


def vllm_flags(vllm_version: str | None) -> frozenset[str]:
    """The options the parser accepts for this release: the release's own (vllm_flags.json). A flag the planner
    reads is no exception: `--async-scheduling` at 0.8.5 is argparse's "unrecognized arguments" there too. The
    planner's other spellings (`--kv-cache-memory`) are argparse prefixes of the release's flags
    (:func:`_canonical_flag`)."""
    return release_flags(vllm_version)


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


def flag_suggestion(name: str, known: frozenset[str]) -> str | None:
    """The nearest flag of this release to a misspelt one (None when nothing is close)."""
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=SUGGESTION_CUTOFF)
    return close[0] if close else None


def unrecognized_flags_message(
    names: list[str], known: frozenset[str], vllm_version: str | None = None
) -> str:
    """argparse's one refusal line naming every unrecognized argument, each with the nearest flag of
    this release: "vllm serve: error: unrecognized arguments: --max-modle-len (did you mean
    --max-model-len?) --tensor-paralel-size (did you mean --tensor-parallel-size?)", or, for a flag another
    release has, which: "--async-scheduling (vLLM 0.9.0 does not have it; 0.10.0 is the first release with it)"."""
    parts = []
    for name in names:
        elsewhere = other_releases(name, vllm_version)
        suggestion = None if elsewhere else flag_suggestion(name, known)
        if elsewhere:
            parts.append(Text("{flag} ({elsewhere})", flag=name, elsewhere=elsewhere))
        elif suggestion:
            parts.append(Text("{flag} (did you mean {suggestion}?)", flag=name, suggestion=suggestion))
        else:
            parts.append(name)
    return Text("vllm serve: error: unrecognized arguments: {flags}", flags=TextList(" ", parts))


class CommandError(PlannerError):
    """A paste vLLM's parser refuses, with every problem it has, not only the first: each unknown flag
    (``unrecognized``: the flag and its nearest real one) and each value that cannot be read
    (``problems``, each naming its field). One value problem alone keeps its own field."""

    def __init__(
        self,
        *,
        unrecognized: list[tuple[str, str | None]],
        problems: list[PlannerError],
        known: frozenset[str],
        vllm_version: str | None = None,
    ) -> None:
        messages = [e.message for e in problems]
        if len(problems) > 1 or unrecognized:  # each value problem says its field
            messages = [e.field + ": " + e.message for e in problems]
        if unrecognized:
            messages.insert(
                0, unrecognized_flags_message([name for name, _ in unrecognized], known, vllm_version)
            )
        only = problems[0].field if len(problems) == 1 and not unrecognized else "command"
        super().__init__(only, messages[0] if len(messages) == 1 else TextList("; ", messages))
        self.unrecognized = unrecognized
        self.problems = problems
        self.vllm_version = vllm_version  # the release whose flags the paste was checked against


COMPILATION_SPELLINGS = ("--compilation-config", "-cc")  # engine/arg_utils.py add_argument (-cc from 0.12.0)
_VALUELESS_UNKNOWN_PREFIXES = ("--enable-", "--disable-", "--no-", "--trust-remote-code")


@dataclass(frozen=True)
class Wrapper:
    """What a paste wrapped vLLM's arguments in: a container image (and the release its tag names) and
    the arguments that are not vLLM's (docker's options, the compose service's other keys)."""

    image: str = ""
    release: str | None = None  # "0.19.0" from vllm/vllm-openai:v0.19.0; None when the tag names none
    ignored: tuple[str, ...] = ()


@dataclass
class ParsedCommand:
    model: str | None
    serve: ServeConfig
    unknown_flags: list[str] = field(default_factory=list)
    max_model_len_auto: bool = False
    unrecognized: list[str] = field(default_factory=list)  # flags this release lacks, read leniently
    wrapper: Wrapper = field(default_factory=Wrapper)
    refused: list[PlannerError] = field(default_factory=list)  # values set aside, read leniently


class NotVllmImageError(PlannerError):
    """`docker run` of an image that is not vLLM's: its arguments are not `vllm serve`'s."""


def _check_length(text: str) -> None:
    if len(text) > MAX_COMMAND_CHARS:
        raise PlannerError(
            "command",
            Text("longer than {max_command_chars:,} characters", max_command_chars=MAX_COMMAND_CHARS),
        )


def _tokens(text: str) -> list[str]:
    _check_length(text)
    joined = regex.sub(r"\\\s*\n", " ", text)
    joined = "\n".join(line for line in joined.splitlines() if not line.lstrip().startswith("#"))
    try:
        return shlex.split(joined)
    except ValueError as exc:
        raise PlannerError("command", Text("cannot split the command: {exc}", exc=exc)) from exc


def parse_serve_command(
    text: str, *, vllm_version: str | None = None, lenient: bool = False
) -> ParsedCommand:
    """A pasted `vllm serve MODEL --flags …` (or the api_server form, or `docker run … vllm/vllm-openai
    …`) → model id + ServeConfig. A docker image tag that names a release decides which flags exist.
    ``lenient``: see :func:`parse_serve_args`."""
    tokens = _tokens(text)
    # an env-var prefix and the program: `CUDA_VISIBLE_DEVICES=0 vllm serve` / `python -m …api_server`;
    # VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is read (it decides whether a long --max-model-len starts)
    env: dict[str, str] = {}
    while tokens and regex.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", tokens[0]):
        name, _, value = tokens.pop(0).partition("=")
        env[name] = value
    wrapper = Wrapper()
    container = docker_run(tokens)
    if container is not None:
        tokens, container_env, wrapper = container
        env.update(container_env)
    tokens = strip_program(tokens)
    if tokens and tokens[0] == "vllm":
        raise PlannerError("command", Text("expected `vllm serve MODEL …`"))
    parsed = parse_serve_args(tokens, env=env, vllm_version=wrapper.release or vllm_version, lenient=lenient)
    parsed.wrapper = wrapper
    return parsed


def parse_pasted(text: str, *, vllm_version: str | None = None) -> ParsedCommand:
    """What people paste in a "vllm serve command" box: a command (:func:`parse_serve_command`) or a
    docker compose service whose ``command:`` holds the arguments (:func:`compose_command`). Of several
    services, the one whose ``command:`` gives flags (`--model …`) is vLLM's."""
    _check_length(text)
    lines = text.splitlines()[:MAX_COMPOSE_SCAN]
    keys = [i for i, line in enumerate(lines) if _COMPOSE_COMMAND.match(line)]
    if not keys:
        return parse_serve_command(text, vllm_version=vllm_version)
    blocks = [(at, block) for at in keys if (block := compose_command(lines[at:])) is not None]
    if not blocks:
        raise PlannerError("command", Text("cannot read the compose file's command:"))
    at, (tokens, _) = next(((a, b) for a, b in blocks if any(t.startswith("--") for t in b[0])), blocks[0])
    service = _service(lines, at)
    image = next((m.group(1) for line in service if (m := _COMPOSE_IMAGE_KEY.match(line))), "")
    ignored = tuple(key + ":" for key in _service_keys(service, lines[at]) if key not in ("command", "image"))
    wrapper = _image_wrapper(image, ignored=ignored)
    env = {ALLOW_LONG_ENV: "1"} if any(_COMPOSE_ALLOW_LONG.search(line) for line in service) else {}
    parsed = parse_serve_args(tokens, env=env, vllm_version=wrapper.release or vllm_version)
    parsed.wrapper = wrapper
    return parsed


MAX_COMPOSE_SCAN = 512  # lines of a pasted compose file searched for its `command:` key
_COMPOSE_IMAGE_KEY = regex.compile(r"^[ \t]{0,64}image:[ \t]{0,8}[\"']?([^\s\"']{1,200})")
_COMPOSE_ALLOW_LONG = regex.compile(
    r"VLLM_ALLOW_LONG_MAX_MODEL_LEN[\"']?[ \t]{0,4}[=:][ \t]{0,4}[\"']?(?:1|true)\b"
)
_YAML_KEY = regex.compile(r"^([ \t]{0,64})(?:-[ \t]+)?([A-Za-z_][\w.-]{0,63}):")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _service(lines: list[str], at: int) -> list[str]:
    """The lines of the compose service whose key ``lines[at]`` is: the run around it indented at least
    as deep (YAML: a shallower line closes the mapping)."""
    depth = _indent(lines[at])
    start = at
    while start > 0 and (not lines[start - 1].strip() or _indent(lines[start - 1]) >= depth):
        start -= 1
    end = at + 1
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) >= depth):
        end += 1
    return lines[start:end]


def _service_keys(service: list[str], key_line: str) -> list[str]:
    """The service's keys (ports, volumes, ipc, deploy, …): those at its ``command:`` key's depth."""
    depth = _indent(key_line)
    keys = [m.group(2) for line in service if (m := _YAML_KEY.match(line)) and len(m.group(1)) == depth]
    return list(dict.fromkeys(keys))


# `docker run` / `podman run` options that take no value; every other option takes one (`-p 8000:8000`,
# `--gpus all`, `-v a:b`, `--ipc host`), from `docker run --help`
_DOCKER_VALUELESS = frozenset(
    {
        "-d", "--detach", "--rm", "-i", "--interactive", "-t", "--tty", "--privileged", "--init",
        "--read-only", "-P", "--publish-all", "--oom-kill-disable", "--no-healthcheck", "-q", "--quiet",
    }
)  # fmt: skip
_DOCKER_SHORT_GROUP = regex.compile(r"-[dit]{2,3}")  # `-it`, `-dit`
_DOCKER_RUN = (("docker", "run"), ("podman", "run"), ("docker", "container", "run"))
# images whose tag is a vLLM release (docker hub's vllm/vllm-openai and its ROCm build)
_RELEASE_IMAGES = ("vllm/vllm-openai", "vllm/vllm-openai-rocm", "docker.io/vllm/vllm-openai")
_RELEASE_TAG = regex.compile(r"v?(\d{1,3}\.\d{1,3}(?:\.\d{1,3}){0,2})(?:[-+][\w.-]{0,64})?")


def docker_run(tokens: list[str]) -> tuple[list[str], dict[str, str], Wrapper] | None:
    """``[sudo] docker|podman run [options] IMAGE [arguments]``: the arguments `vllm serve` gets (the
    vllm/vllm-openai image's entrypoint is `vllm serve`; ``--entrypoint`` replaces it), the ``-e``
    environment and the wrapper (image, release, docker's own options — values of ``-e`` are not kept,
    they may be tokens). None when ``tokens`` are not a container run; NotVllmImageError for an image
    that is not vLLM's."""
    head = tokens[1:] if tokens[:1] == ["sudo"] else tokens
    program = next((p for p in _DOCKER_RUN if tuple(head[: len(p)]) == p), None)
    if program is None:
        return None
    rest = head[len(program) :]
    ignored: list[str] = []
    env: dict[str, str] = {}
    entrypoint: list[str] = []
    i = 0
    while i < len(rest) and rest[i].startswith("-"):
        option = rest[i]
        i += 1
        name, eq, value = option.partition("=")
        if name in _DOCKER_VALUELESS or _DOCKER_SHORT_GROUP.fullmatch(name):
            ignored.append(option)
            continue
        if not eq:
            value = rest[i] if i < len(rest) else ""
            i += 1
        if name in ("-e", "--env"):
            variable, _, setting = value.partition("=")
            env[variable] = setting
            if variable != ALLOW_LONG_ENV:
                ignored.append(f"{name} {variable}")
        elif name == "--entrypoint":
            entrypoint = shlex.split(value)
        else:
            ignored.append(option if eq else f"{option} {value}")
    if i >= len(rest):
        raise PlannerError("command", Text("`docker run` names no image"))
    image = rest[i]
    wrapper = _image_wrapper(image, ignored=tuple(ignored))
    return strip_program([*entrypoint, *rest[i + 1 :]]), env, wrapper


def image_release(image: str) -> str | None:
    """The vLLM release an image's tag names (vllm/vllm-openai:v0.19.0 → "0.19.0"), None when none."""
    try:
        return _image_wrapper(image, ignored=()).release
    except NotVllmImageError:
        return None


def _image_wrapper(image: str, *, ignored: tuple[str, ...]) -> Wrapper:
    """The image's release from its tag (vllm/vllm-openai:v0.19.0 → 0.19.0; `latest` names none)."""
    if not image:
        return Wrapper(ignored=ignored)
    name = image.partition("@")[0]
    repository, colon, tag = name.rpartition(":")
    if not colon or "/" in tag:
        repository, tag = name, ""
    if "vllm" not in repository.rsplit("/", 1)[-1]:
        raise NotVllmImageError(
            "command",
            Text(
                "the image {image} is not vLLM's: paste the `vllm serve` arguments, or a `docker run` of "
                "vllm/vllm-openai",
                image=image[:200],
            ),
        )
    found = _RELEASE_TAG.fullmatch(tag) if repository in _RELEASE_IMAGES else None
    return Wrapper(image=image[:200], release=found.group(1) if found else None, ignored=ignored)


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
        elif rest[0] in "'\"":
            tokens = shlex.split(_yaml_scalar(rest))
        else:  # a plain scalar: its more-indented lines continue it, folded with spaces (YAML 1.2 §7.3.3)
            tokens = shlex.split(" ".join((rest, *block)))
    except (ValueError, RecursionError):  # RecursionError: an array nested past the recursion limit
        return None
    return strip_program(tokens), used


def _yaml_scalar(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def parse_serve_args(
    tokens: list[str],
    *,
    env: dict[str, str] | None = None,
    vllm_version: str | None = None,
    lenient: bool = False,
) -> ParsedCommand:
    """``tokens`` after `vllm serve`. A flag this release of vLLM does not have is an error, as vLLM's
    parser makes it; one it has that does not move memory is returned in ``unknown_flags``. Every
    problem is collected before the refusal (:class:`CommandError`), as argparse names every
    unrecognized argument in its one error line. ``lenient`` (a command a log shows was run, by a
    plugin's or a fork's parser: vllm-omni's `--omni`): such flags are skipped and listed in
    ``unrecognized`` instead, and a value that cannot be read or that vLLM's config refuses (a paste that broke
    the line inside it: `--gpu-memory-utilization 0` / `.9 …`, vllm#14817) is set aside in ``refused`` and the
    rest of the command kept."""
    known = vllm_flags(vllm_version)
    values: dict[str, Any] = {}
    if (env or {}).get(ALLOW_LONG_ENV, "").strip().lower() in ("1", "true"):
        values["allow_long_max_model_len"] = True
    read = _Reading(tokens, levels=rules_for(vllm_version).optimization_levels)
    while read.i < len(tokens):
        token = tokens[read.i]
        read.i += 1
        if not token.startswith("-"):
            if read.model is None:
                read.model = token
            else:
                read.unknown.append(token)
            continue
        name, eq, inline = token.partition("=")
        name = _canonical_flag(name, known)
        if name == "--model":
            read.model = inline if eq else read.next_value()
            continue
        if read.compilation(token, name, inline if eq else None, known=known):
            continue
        spec = _FLAGS.get(name) if name in known else None  # a modelled flag the release lacks: refused too
        if spec is None:
            read.not_modelled(token, name, known, eq=bool(eq))
            continue
        field_name, kind = spec
        if kind in ("flag", "noflag"):
            values[field_name] = kind == "flag" if not eq else inline.lower() in ("1", "true", "yes")
            continue
        raw = inline if eq else read.next_value()
        if raw is None:
            read.problems.append(PlannerError(field_name, Text("{name} needs a value", name=name)))
            continue
        try:
            if kind == "len" and raw.strip().lower() in ("auto", "-1"):
                read.auto = True
            else:
                values[field_name] = _value(raw, kind=kind, field_name=field_name)
        except PlannerError as exc:
            read.problems.append(exc)
    if (read.problems and not lenient) or (read.unrecognized and not lenient):
        raise CommandError(
            unrecognized=read.unrecognized, problems=read.problems, known=known, vllm_version=vllm_version
        )
    if read.cudagraph_mode is not None:  # an explicit cudagraph_mode wins over the -O level's
        values["cudagraph_mode"] = read.cudagraph_mode
        # ... but -O0 still sets compilation mode NONE when the -cc gives none (vLLM 0.33.0
        # config/vllm.py VllmConfig.__post_init__, optimization level O0), which lowers the graph mode
        if read.level_zero and "mode" not in read.compile_keys:
            read.compile_keys["mode"] = 0
    elif read.level_mode is not None:
        values["cudagraph_mode"] = read.level_mode
    if read.compile_keys:  # the -cc keys other than cudagraph_mode, kept for the plan and the emitted command
        values["compilation_config"] = compilation.canonical(read.compile_keys)
    refused = list(read.problems)
    try:
        serve = ServeConfig(**values)
    except ValidationError as exc:
        # every value vLLM's config refuses, not only the first (catalog sentences: zh pages translate them)
        problems = [
            PlannerError(str(e["loc"][0]) if e["loc"] else "command", message_of(e)) for e in exc.errors()
        ]
        fields = {p.field for p in problems}
        if not lenient or not fields <= values.keys():
            raise CommandError(
                unrecognized=[], problems=problems, known=known, vllm_version=vllm_version
            ) from exc
        refused += problems  # each refused value alone is set aside; the others still stand
        serve = ServeConfig(**{k: v for k, v in values.items() if k not in fields})
    return ParsedCommand(
        model=read.model,
        serve=serve,
        unknown_flags=read.unknown,
        max_model_len_auto=read.auto,
        unrecognized=[name for name, _ in read.unrecognized],
        refused=refused,
    )


@dataclass
class _Reading:
    """The walk over `vllm serve`'s arguments: where it is and what it found so far."""

    tokens: list[str]
    i: int = 0
    model: str | None = None
    auto: bool = False
    unknown: list[str] = field(default_factory=list)  # real flags that do not move memory
    unrecognized: list[tuple[str, str | None]] = field(default_factory=list)  # (flag, nearest real one)
    problems: list[PlannerError] = field(default_factory=list)
    levels: bool = True  # the release has -O optimization levels (VersionRules.optimization_levels)
    cudagraph_mode: str | None = None  # --compilation-config's cudagraph_mode
    level_mode: str | None = None  # the -O level's cudagraph_mode (graph_mode.LEVEL_MODES)
    level_zero: bool = False  # -O0: compilation mode NONE when no -cc mode is given (0.33.0 config/vllm.py)
    compile_keys: dict[str, Any] = field(default_factory=dict)  # the other -cc keys (compilation.py)

    def compilation(self, token: str, name: str, inline: str | None, *, known: frozenset[str]) -> bool:
        """--compilation-config / -cc (JSON, or the dotted -cc.cudagraph_mode=X) and the -O levels, as 0.14.0-0.33.0
        utils/argparse_utils.py FlexibleArgumentParser reads them (-O3, -O=3, -O 3 -> --optimization-level 3);
        True when the token was one of them (its value consumed). A prefix is resolved against every flag the
        release takes (``known``), as argparse resolves it."""
        base, dot, key = token.partition("=")[0].partition(".")  # vLLM rewrites '_' only before the first '.'
        base = _canonical_flag(base, known)
        # 0.10.2-0.13: -O is --compilation-config's alias, so -O.key=X and -O '{...}' are its forms too
        old_alias = not self.levels and base == "-O" and (bool(dot) or self._next_starts("{"))
        if (
            base in COMPILATION_SPELLINGS and base in known
        ) or old_alias:  # -cc from 0.12.0 (vllm_flags.json)
            raw = inline if inline is not None else self.next_value()
            if raw is None:
                self.problems.append(PlannerError("cudagraph_mode", Text("{name} needs a value", name=name)))
            elif not dot:
                self._compilation_json(token, raw)
            elif key == "cudagraph_mode":
                self._set_mode(raw, into="cudagraph_mode")
            else:
                self._dotted_key(key, raw)
            return True
        level: str | None = None
        if name == "--optimization-level":
            level = inline if inline is not None else self.next_value()
        elif token.startswith("-O") and not token.startswith("--") and token != "-O":
            level = token[3:] if token[2] == "=" else token[2:]
        elif token == "-O" and self.i < len(self.tokens) and self.tokens[self.i] in LEVEL_MODES:
            level = self.next_value()
        else:
            return False
        if level in LEVEL_MODES and self.levels:
            self.level_mode = LEVEL_MODES[level]
            self.level_zero = level == "0"
        elif level in LEVEL_MODES:  # 0.10.2-0.13 utils FlexibleArgumentParser: -O3 is -O.level=3 (-O = -cc)
            self._add_keys({"level": int(level)})
        else:
            self.problems.append(
                PlannerError(
                    "cudagraph_mode",
                    Text("-O takes an optimization level 0, 1, 2 or 3, got {level}", level=level or ""),
                )
            )
        return True

    def _compilation_json(self, token: str, raw: str) -> None:
        try:
            config = json.loads(raw)
        except (ValueError, RecursionError):  # nesting past the recursion limit had been a 500
            config = None
        if not isinstance(config, dict):
            self.problems.append(
                PlannerError(
                    "cudagraph_mode", Text("--compilation-config takes a JSON object, got {raw}", raw=raw)
                )
            )
        else:
            mode, rest = compilation.split_cudagraph_mode(config)
            if mode is not None:
                self._set_mode(mode, into="cudagraph_mode")
            self._add_keys(rest)

    def _dotted_key(self, key: str, raw: str) -> None:
        """`-cc.max_cudagraph_capture_size=64`, `-cc.pass_config.fuse_norm_quant=true`: argparse_utils
        FlexibleArgumentParser nests the dotted key and reads the value as JSON when it is JSON."""
        try:
            value: Any = json.loads(raw)
        except (ValueError, RecursionError):
            value = raw
        for part in reversed(key.split(".")[1:]):
            value = {part: value}
        self._add_keys({key.split(".")[0]: value})

    def _add_keys(self, keys: dict[str, Any]) -> None:
        merged = compilation.merged(self.compile_keys, keys)
        try:
            compilation.normalize(merged)
        except ValueError as exc:
            self.problems.append(PlannerError("compilation_config", str(exc)))
            return
        self.compile_keys = merged

    def _set_mode(self, value: object, *, into: str) -> None:
        mode = str(value).strip().upper()
        if mode not in CUDAGRAPH_MODES:
            self.problems.append(
                PlannerError(
                    "cudagraph_mode",
                    Text(
                        "cudagraph_mode must be one of {modes}, got {value}",
                        modes=", ".join(CUDAGRAPH_MODES),
                        value=str(value),
                    ),
                )
            )
            return
        setattr(self, into, mode)

    def _next_starts(self, prefix: str) -> bool:
        return self.i < len(self.tokens) and self.tokens[self.i].startswith(prefix)

    def next_value(self) -> str | None:
        if self.i < len(self.tokens):
            self.i += 1
            return self.tokens[self.i - 1]
        return None

    def not_modelled(self, token: str, name: str, known: frozenset[str], *, eq: bool) -> None:
        """A flag the planner does not read: kept (ignored) when vLLM has it, refused when it does not;
        either way its value, when it has one, is skipped with it (so a typo's value is not the model)."""
        takes_value = not eq and not name.startswith(_VALUELESS_UNKNOWN_PREFIXES)
        value = []
        if takes_value and self.i < len(self.tokens) and not self.tokens[self.i].startswith("-"):
            value = [self.tokens[self.i]]
            self.i += 1
        if name in known:
            self.unknown.extend([token, *value])
        elif name not in (flag for flag, _ in self.unrecognized):
            self.unrecognized.append((name, flag_suggestion(name, known)))


def _value(raw: str, *, kind: str, field_name: str) -> Any:
    """One flag's value read the way vLLM's parser reads it (``kind``: the flag table's)."""
    if kind in ("len", "hint"):
        return human_readable_int(raw, field_name=field_name)
    try:
        if kind == "int":
            return numbers.parse_int(raw)
        if kind == "float":
            return numbers.parse_float(raw)
    except ValueError as exc:
        raise PlannerError(field_name, exc.args[0]) from exc
    return raw


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
