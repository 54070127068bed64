"""The parser: split a paste into runs, run the rules on every line, build the facts of the last run."""

from __future__ import annotations

import re

from pydantic import ValidationError

from app.core import deadline, regex
from app.core import vllm_text_identity as vti
from app.core.command import parse_serve_command, vllm_flags
from app.core.errors import PlannerError
from app.core.logs.reading import (
    numbered_lines,
    over_limit,
    strip_ansi,
)
from app.core.logs.startup.accumulator import (
    RANK_UNKNOWN,
    RANK_ZERO,
    SOURCE_PRIMARY,
    WORKER_TAG_CHARS,
    _Line,
    _rank_priority,
    _Run,
    _Slot,
    _worker_ranks,
)
from app.core.logs.startup.config import _compose_block, _read_command
from app.core.logs.startup.facts import BOX_BORDER, MAX_COMMAND_LINES, MAX_LINE_CHARS, Evidence, LogFacts
from app.core.logs.startup.failures import OOM_KIND_BY_STAGE
from app.core.logs.startup.rules import RULES
from app.core.logs.startup.wrapped import NEEDLE, join_hard_wrapped, join_wrapped_args
from app.core.text import Text

# --------------------------------------------------------------------------------------------
# the parser


def parse_startup_log(text: str) -> LogFacts:
    """Turn a pasted vLLM start-up log (any version in reference §4, vllm-ascend §9) into facts.

    Several runs pasted together are split where an engine-init / "vLLM API server version" /
    "non-default args" line follows KV lines; only the last run is read (``runs_found`` says how
    many). Rank prefixes, ANSI colours, CRLF and log headers are tolerated. Never raises, except
    :class:`PlannerError` for input longer than :data:`MAX_LOG_CHARS`.
    """
    too_long = over_limit(text)
    if too_long is not None:
        raise PlannerError("log", too_long)
    deadline.check()  # the request's CPU budget (app.core.deadline; the web names ``log``): from here on
    run = _Run()
    previous: _Run | None = None  # the run before the last one, for a quote pasted out of order
    runs = 0
    commands = _Commands(text)
    if NEEDLE in text:
        commands.numbered = join_wrapped_args(commands.numbered)
    commands.numbered = join_hard_wrapped(commands.numbered)
    rules = tuple(rule for rule in RULES if rule.needle in text)  # one C-speed scan per rule, not per line
    markers = tuple(rule for rule in rules if rule.marker)  # the rules a command line is read by too
    for position, (index, raw) in enumerate(commands.numbered):
        if position % DEADLINE_EVERY_LINES == 0:
            deadline.check()  # every kind of line, not only the recognised ones (a command line is ~100 us)
        if position < commands.skip_to:
            continue
        if "command:" in raw and commands.compose_at(position, index, raw, run):
            runs = max(runs, 1)
            continue
        line = strip_ansi(raw[:MAX_LINE_CHARS]).strip().strip(BOX_BORDER).strip()
        if commands.continues(line, run) or not line:
            continue
        start = commands.start(line)
        if start is not None:
            if runs == 0:
                runs = 1
            elif run.seen_kv:
                run, previous = _Run(), run
                runs += 1
            ln = _Line(no=index + 1, text=line, rank=RANK_ZERO)
            commands.begin(start, ln, run)
            for rule in markers:
                if rule.needle in line and (m := rule.pattern.search(line)):
                    rule.handle(m, ln, run)
            continue
        head = line[:WORKER_TAG_CHARS]
        if "(" in head and any(part in head for part in _RANK_TAGS):
            _worker_ranks(line, _Line(no=index + 1, text=line, rank=RANK_UNKNOWN), run)
        matched = [(rule, m) for rule in rules if rule.needle in line and (m := rule.pattern.search(line))]
        if not matched:
            continue
        if runs == 0:
            runs = 1
        elif run.seen_kv and any(rule.run_start for rule, _ in matched):
            run, previous = _Run(), run
            runs += 1
        if any(rule.run_start for rule, _ in matched):
            run.headed = True
        ln = _Line(no=index + 1, text=line, rank=_rank_priority(line))
        for rule, m in matched:
            rule.handle(m, ln, run)
            run.seen_kv = run.seen_kv or rule.kv
        run.recognised += 1
    commands.finish(run)
    if previous is not None and not previous.headed and not run.seen_kv and "error_kind" not in run.slots:
        # KV lines with no header of their own, then only configuration: one start-up quoted out of
        # order (a thread pasting the KV lines above the engine config), not a second start-up
        for name, slot in run.slots.items():
            previous.slots.setdefault(name, slot)
        previous.recognised += run.recognised
        run, runs = previous, runs - 1
    return _facts(run, runs)


# A recognised line costs ~45 us (5 MiB of KV lines, 60,000 of them, took 3.0 s of CPU past the doctor's
# 1.5 s budget), a `vllm serve` line ~100 us (its shlex split; 4.8 MB of one command line took 6 s, round
# 11, because only recognised log lines read the budget): the budget is read every this many lines of any
# kind, ~6 ms of the worst lines between two reads (a read costs ~0.5 us)
DEADLINE_EVERY_LINES = 64
_RANK_TAGS = (
    "_TP",
    "_PP",
    "_EP",
    " TP",
    " PP",
)  # a worker tag's parts (accumulator._worker_ranks reads them)
ASCEND_QUANTIZATION = "ascend"

# a compose file whose service runs vLLM's image (`image: vllm/vllm-openai:latest`, vllm-ascend's quay image)
_COMPOSE_IMAGE = regex.compile(r"(?m)^[ \t]{0,64}image:[ \t]{0,8}\S{0,200}vllm")
# `docker run … vllm/vllm-openai[:tag] --model X --flags`: the image's entrypoint is `vllm serve`
_DOCKER_START = regex.compile(r"^(?:[$#>]\s*)?((?:sudo )?docker run\b.*)")
# a command line as typed (optionally after a shell prompt or a markdown backtick, a short label of the post's
# own — "run : vllm serve …", nlzy/vllm-gfx906#12 — and VAR=value prefixes), never a log line
# the arguments alone after a launcher's label (`infer_args: --model /model --tensor-parallel-size 4 …`, a wrapper
# script echoing what it passes to vLLM, vllm-ascend#2976): `--model X` and at least two more flags (_args_line)
_ARGS_LINE = regex.compile(r"^(?:[A-Za-z_][\w.-]{0,40}:[ \t]{0,4})?(--model[ =]\S+[ \t]+--[a-z].*)$")
_ARGS_LINE_MIN_FLAGS = 3
_COMMAND = regex.compile(
    # a list item's marker ("3. `python3 -m …`"), a venv and a user@host:path prompt ("(venv) user@pop-os:~/vllm$ ",
    # "root@host:/app# ") or bash's bracketed one ("[user@toolbx dir]$ ", Fedora / toolbox: amd-strix-halo-vllm-
    # toolboxes#69), a shell prompt or backtick, a label of the post's own ("run : ")
    r"^(?:(?:\d{1,3}[.)]|[-*+])[ \t]{1,4})?(?:\([\w.-]{1,40}\)[ \t]{1,4})?"
    r"(?:[\w.-]{1,64}@[\w.-]{1,64}:[^\s$#]{0,300}|\[[\w.-]{1,64}@[\w.-]{1,64}(?: [^\]\n]{1,200})?\])?"
    r"(?:[$#>`]\s*)?(?:[A-Za-z][\w-]{0,20} ?:[ \t]{0,4})?"
    r"((?:[A-Za-z_]\w*=\S*\s+)*"  # RE2 (linear): env assignments before the command
    r"(?:(?:nohup|exec) )?(?:vllm serve|(?:\S*/)?python(?:\d{1,2}(?:\.\d{1,2})?)?(?: -[A-Za-z]{1,3}){0,4} -m "
    r"vllm\.entrypoints\.(?:openai\.)?api_server)\b.*)"
)


def _facts(run: _Run, runs: int) -> LogFacts:
    if run.get("error_kind") == "startup_failed" and run.stage == "ready" and not run.server_died:
        # an error or traceback printed before "init engine … took" / "Application startup complete"
        # that the start-up survived (an optional import, a retried download): not a failure
        run.slots.pop("error", None)
        run.slots.pop("error_kind", None)
        run.note(Text("an error was printed during the start-up, but the start-up completed"))
    if run.get("error_kind") == "torch_oom" and run.saw_loading and run.get("weights_bytes") is None:
        # an OOM with shard loading in the paste and no "Loading model weights took": the load failed
        run.slots["error_kind"].value = "load_oom"
    if run.get("error_kind") == "torch_oom" and run.stage in OOM_KIND_BY_STAGE:
        # the OOM's traceback frames come after its message: the stage they reached names it (a V0 worker's
        # "Error executing method 'load_model'" and its load_model frame under an NPU OOM, vllm-ascend#2378)
        run.slots["error_kind"].value = OOM_KIND_BY_STAGE[run.stage]
    if "error_kind" in run.slots and (run.stage not in ("start", "ready") or run.stage_read):
        # the traceback's frames come after its first line: the stage they reached is where it failed
        run.slots["failure_stage"] = _Slot(
            run.stage, run.slots["error_kind"].evidence, (SOURCE_PRIMARY, RANK_ZERO)
        )
    if runs > 1:
        run.notes.insert(0, Text("{runs} runs found; using the last one", runs=runs))
    values: dict[str, object] = {name: slot.value for name, slot in run.slots.items()}
    evidence = {name: slot.evidence for name, slot in run.slots.items()}
    values["startup_completed"] = run.stage == "ready"
    if values.get("quantization") == ASCEND_QUANTIZATION and "is_ascend" not in values:
        # --quantization ascend is vllm-ascend's own method (vllm_ascend/quantization: register "ascend")
        values["is_ascend"] = True
        evidence["is_ascend"] = evidence["quantization"]
    if values.get("is_ascend") and values.get("device_type") != "NPU":
        # vllm-ascend on a vLLM before 0.30 prints "GPU KV cache size"; the device is still an NPU
        values["device_type"] = "NPU"
        evidence["device_type"] = evidence["is_ascend"]
    readings = (
        run.warmup_kv_readings or run.kv_readings
    )  # 0.34.0: the pools after warmup, not the tentative ones
    if readings:
        low_value, low_evidence = min(readings, key=lambda reading: reading[0])
        values["kv_cache_bytes_min_rank"] = low_value
        evidence["kv_cache_bytes_min_rank"] = low_evidence
        if low_value != values.get("kv_cache_bytes"):
            run.note(Text("ranks printed different KV cache memory; the smallest one sets the block count"))
        current_kind = values.get("error_kind")
        if low_value <= 0 and (current_kind is None or current_kind == "startup_failed"):
            # vLLM raises "No available memory for the cache blocks" for a pool ≤ 0 (reference §4.4);
            # vllm-ascend prints the negative figure first ("Available KV cache memory: -0.87 GiB")
            values["error_kind"], values["error"] = "no_blocks", low_evidence.text
            evidence["error_kind"] = evidence["error"] = low_evidence
            run.note(Text("the KV pool is printed as zero or negative: no block can be allocated"))
    if "vllm_version" in evidence and _REPORTED_VERSION.search(evidence["vllm_version"].text) is not None:
        # collect_env's "vLLM Version: X" or a caller's "vllm version: X" (MinerU) with no line of vLLM's own:
        # the installed release, used as the run's, and the page says where it comes from
        run.note(
            Text(
                "vLLM {version} is the release this paste reports installed (collect_env or the calling program); "
                "vLLM's own version line is not in it",
                version=str(values["vllm_version"]),
            )
        )
    util, util_without = (
        values.get("gpu_memory_utilization"),
        values.get("gpu_memory_utilization_without_cuda_graph"),
    )
    total = values.get("device_total_bytes")
    if (
        "cuda_graph_estimate_bytes" not in values
        and isinstance(util, float)
        and isinstance(util_without, float)
        and isinstance(total, int)
    ):
        # the equivalence line prints round(u − cg/T, 4) (reference §4.2), so cg ≈ (u − equivalent) × T
        values["cuda_graph_estimate_bytes"] = round((util - util_without) * total)
        evidence["cuda_graph_estimate_bytes"] = evidence["gpu_memory_utilization_without_cuda_graph"]
        run.note(
            Text(
                "cuda_graph_estimate_bytes derived from the --gpu-memory-utilization equivalence line × total"
            )
        )
    extra: dict[str, object] = {"runs_found": runs, "recognised_lines": run.recognised, "notes": run.notes}
    return _build(values, evidence, extra)


def _build(values: dict[str, object], evidence: dict[str, Evidence], extra: dict[str, object]) -> LogFacts:
    """Validate; a value of the wrong shape (not expected, but input is arbitrary) is dropped, not raised."""
    for _ in range(len(values) + 1):
        try:
            return LogFacts.model_validate({**values, **extra, "evidence": evidence})
        except ValidationError as exc:
            bad = {str(err["loc"][0]) for err in exc.errors() if err["loc"]} & values.keys()
            if not bad:
                break
            for name in bad:
                values.pop(name)
                evidence.pop(name, None)
    return LogFacts.model_validate(extra)


# a line of environment assignments only, continued onto the command (`CUDA_VISIBLE_DEVICES=1,5 \`)
_ENV_ONLY = regex.compile(r"^(?:[$#>`]\s*)?((?:[A-Za-z_]\w*=\S*\s+)+)\\$")


def _args_line(line: str) -> re.Match[str] | None:
    """A line of vLLM arguments only (:data:`_ARGS_LINE`), never a log line."""
    found = _ARGS_LINE.search(line)
    if found is None or found.group(1).count(" --") < _ARGS_LINE_MIN_FLAGS - 1:
        return None
    return found


class _Commands:
    """The commands pasted with a log, each read once by the one command reader (config._read_command):
    a `vllm serve …` / `python -m vllm.entrypoints.openai.api_server …` / `docker run` line, continued with
    `\\` over lines and perhaps after lines of `VAR=value \\` assignments; a compose `command:` block."""

    def __init__(self, text: str) -> None:
        self.numbered = numbered_lines(text)
        self.raws = [raw for _, raw in self.numbered] if "command:" in text else []
        self.compose_image = _COMPOSE_IMAGE.search(text) is not None if "image:" in text else False
        self.skip_to = 0  # lines a compose `command:` block already read
        self.parts: list[str] = []  # a command still being continued
        self.first: _Line | None = None  # where it started
        self.env = ""  # `VAR=value \` lines just above a command
        self.quote: str | None = None  # the shell quote a continued command leaves open, if any
        self.pending: tuple[str, _Line] | None = None  # a one-line command the next line may be the wrap of

    def compose_at(self, position: int, index: int, raw: str, run: _Run) -> bool:
        block = _compose_block(self.raws, position, self.compose_image)
        if block is None:
            return False
        run.headed = True
        run.recognised += 1
        _read_command(block[0], _Line(no=index + 1, text=raw.strip(), rank=RANK_ZERO), run)
        self.skip_to = position + block[1]
        return True

    def continues(self, line: str, run: _Run) -> bool:
        """The line continues a command (or is an assignment line before one): consumed. A line inside a
        quoted argument continues it too (a `--kv-transfer-config '{` JSON pasted over several lines,
        vllm-ascend#5044), with or without a trailing backslash. A one-line command waits for the next line:
        the rest of it where the paste hard-wrapped the line inside a word (_wrap_repairs)."""
        if self.pending is not None:
            command, first = self.pending
            self.pending = None
            if _wrap_repairs(command, line):
                _read_command(command + line, first, run)
                return True
            _read_command(command, first, run)
        if self.first is not None:
            if _LOG_TAG.search(line) is not None or _PROGRESS_BAR.search(line) is not None:
                # a quote or a trailing backslash the paste left open (vllm#41622 ends its command with `\`
                # and goes on with the output): a log line or a progress bar ends the command, and is read
                self.finish(run)
                return False
            self.parts.append(line.removesuffix("\\"))
            self.quote = _quote_after(line, self.quote)
            ends = not line.endswith("\\") and self.quote is None
            if ends or len(self.parts) >= MAX_COMMAND_LINES:
                self.finish(run)
            return True
        env = _ENV_ONLY.match(line) if "=" in line else None
        if env is not None and len(self.env) < MAX_LINE_CHARS:
            self.env += env.group(1)
            return True
        return False

    def start(self, line: str) -> re.Match[str] | None:
        found = _COMMAND.search(self.env + line) if "vllm" in line else None
        if found is not None and _usage_line(found.group(1)):
            found = None
        if found is None and "docker run" in line:
            found = _DOCKER_START.search(line)
        if found is None and line.count("--") >= _ARGS_LINE_MIN_FLAGS and "--model" in line:
            found = _args_line(line)
        if found is None:
            self.env = ""
        return found

    def begin(self, start: re.Match[str], ln: _Line, run: _Run) -> None:
        run.headed = True
        run.recognised += 1
        self.env = ""
        if ln.text.endswith("\\"):
            self.parts, self.first = [start.group(1).removesuffix("\\")], ln
            self.quote = _quote_after(start.group(1), None)
        else:
            self.pending = (start.group(1).rstrip("`"), ln)  # a command quoted as `inline code`

    def finish(self, run: _Run) -> None:
        if self.pending is not None:
            _read_command(*self.pending, run)
            self.pending = None
        if self.first is not None:
            _read_command(" ".join(self.parts), self.first, run)
        self.parts, self.first, self.quote = [], None, None


# the rest of a command after a paste's hard wrap: glued to the cut (no indent, no flag, no prompt first) and
# going on with flags (".9 --max-model-len=17370 --port 8001", vllm#14817; "fix-caching --mm-encoder-tp-mode …",
# amd-strix-halo-vllm-toolboxes, heldout-2026-12q)
_WRAP_REST = regex.compile(r"^[^\s$#>`-][^\s]{0,80} --[a-z]")


def _wrap_repairs(command: str, line: str) -> bool:
    """``line`` is the rest of ``command``, cut by the paste inside a word: the command alone ends in a flag's
    prefix (argparse would take "--enable-pre" for --enable-prefix-caching) or has a flag vLLM does not know or a
    value its config refuses, and joined back with no separator it has none of these. The test is vLLM's own
    parser (app/core/command.py), not the cut's column."""
    if _WRAP_REST.match(line) is None or _LOG_TAG.search(line) is not None or command[-1:].isspace():
        return False
    last = command.rsplit(None, 1)[-1].split("=", 1)[0]
    cut_flag = last.startswith("--") and last not in vllm_flags(None)

    def clean(text: str) -> bool | None:  # None: not a command the reader reads at all
        try:
            parsed = parse_serve_command(text, lenient=True)
        except PlannerError:
            return None
        return not parsed.unrecognized and not parsed.refused

    alone = clean(command)
    return alone is not None and (cut_flag or not alone) and clean(command + line) is True


_REPORTED_VERSION = regex.compile(vti.REPORTED_VERSION.pattern)


def _usage_line(command: str) -> bool:
    """argparse's usage line ("usage: vllm serve [model_tag] [options]", printed when vLLM's CLI rejects a flag,
    vllm/entrypoints/cli/serve.py's subparser) names no model: a placeholder in brackets is not a command typed."""
    return command.removeprefix("vllm serve").lstrip().startswith(("[", "<", "{"))


_LOG_TAG = regex.compile(
    r"\[?[\w./]{1,120}\.py:\d{1,6}\]|^Traceback \(|^(?:\([\w ]{1,40} pid=\d{1,9}\) )?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) "
)  # "[gpu_worker.py:436]", DEBUG's "[v1/core/kv_cache_utils.py:1087]", 0.6-0.7's "gpu_executor.py:122]", a traceback: a log line, not a command


# a tqdm bar as vLLM prints it ("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):   0%|", "Loading
# safetensors checkpoint shards:  50% Completed |"): never a command's argument
_PROGRESS_BAR = regex.compile(r"^[A-Z][^|:]{2,120}:\s{0,8}\d{1,3}%(?:\||\s{1,4}Completed)")


def _quote_after(text: str, quote: str | None) -> str | None:
    """The shell quote (' or ") still open after ``text``, given the one open before it: POSIX rules, linear."""
    escaped = False
    for char in text:
        if escaped:
            escaped = False
        elif quote == "'":
            quote = None if char == "'" else quote
        elif char == "\\":
            escaped = True
        elif quote == '"':
            quote = None if char == '"' else quote
        elif char in "'\"":
            quote = char
    return quote
