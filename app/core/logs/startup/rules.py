"""The rule table, run in order on every line (reference §4): data in rules.json, validated here.

Each rule names a template of app.core.vllm_text (what vLLM prints: a needle that gates the line and the
regex that reads it) and a handler of this package (what the line says, put into the run's facts). A
name that does not resolve is an error at import, so a typo in the table fails every test that imports
the parser, not a log in production.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import cast

from pydantic import BaseModel, ConfigDict

from app.core import regex
from app.core import vllm_text as vt
from app.core import vllm_text_extensible as vtx
from app.core import vllm_text_failures as vtf
from app.core import vllm_text_graphs as vtg
from app.core import vllm_text_identity as vti
from app.core.logs.startup import accumulator, config, failures, memory
from app.core.logs.startup.accumulator import Handler, _error, _Line, _Rule, _Run
from app.core.logs.startup.facts import ErrorKind, Stage
from app.core.vllm_text import VllmLine

RULES_FILE = Path(__file__).with_name("rules.json")
# the handlers that say which device stack ran (ROCm, Ascend, CUDA): a command's environment and flags name it as
# well as a log line does (`VLLM_ROCM_USE_AITER=1 vllm serve …`, `ASCEND_RT_VISIBLE_DEVICES=…`), so these rules also
# read a pasted command line, which the other rules leave to the command reader
MARKER_HANDLES = frozenset({"rocm_marker", "ascend_marker", "cuda_marker"})
HANDLER_MODULES: tuple[ModuleType, ...] = (config, memory, failures, accumulator)


def _err(kind: ErrorKind) -> Handler:
    def handle(m: re.Match[str], ln: _Line, run: _Run) -> None:
        _error(kind, m, ln, run)

    return handle


def _staged(stage: str) -> Handler:
    return config._stage(cast(Stage, stage))


def _faulted(kind: str, device: str | None = None, stack: str | None = None) -> Handler:
    return failures._fault(cast(ErrorKind, kind), device=device, stack=stack)


# "err:load_oom", "stage:load", "fault:device_fault:GPU": a handler made for its argument
FACTORIES: dict[str, Callable[..., Handler]] = {
    "err": lambda kind: _err(cast(ErrorKind, kind)),
    "stage": _staged,
    "fault": _faulted,
}


class RuleSpec(BaseModel):
    """One row of rules.json."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    line: str  # a VllmLine of app.core.vllm_text, by its name
    handle: str  # a handler: "name" for "_name" in HANDLER_MODULES, or "factory:arg[:arg]"
    kv: bool = False  # a KV / memory line: a later run-start line begins a new run
    run_start: bool = False  # the line may begin a run (an engine-start or configuration line)
    section: str = ""  # the group this row heads (reference §4.x), for the reader of the table


def _handler(spec: str) -> Handler:
    name, *args = spec.split(":")
    if args:
        if name not in FACTORIES:
            raise ValueError(f"rules.json: unknown handler factory {name!r} in {spec!r}")
        return FACTORIES[name](*args)
    found = [  # defined there, not imported (config.py imports accumulator's _ascend_marker)
        value
        for module in HANDLER_MODULES
        if callable(value := getattr(module, "_" + name, None)) and value.__module__ == module.__name__
    ]
    if len(found) != 1:
        raise ValueError(f"rules.json: handler {spec!r} resolves to {len(found)} functions")
    return cast(Handler, found[0])


TEMPLATE_MODULES: tuple[ModuleType, ...] = (vt, vtf, vtg, vti, vtx)


def _template(name: str) -> VllmLine:
    found = [line for module in TEMPLATE_MODULES if isinstance(line := getattr(module, name, None), VllmLine)]
    if len(found) != 1:
        raise ValueError(
            f"rules.json: {name!r} is not one template of app.core.vllm_text / vllm_text_failures / vllm_text_graphs / vllm_text_identity / vllm_text_extensible"
        )
    return found[0]


def load_rules(path: Path = RULES_FILE) -> tuple[_Rule, ...]:
    specs = [RuleSpec.model_validate(row) for row in json.loads(path.read_text(encoding="utf-8"))["rules"]]
    rules = []
    for spec in specs:
        line = _template(spec.line)
        pattern = regex.compile(line.pattern)
        rules.append(
            _Rule(
                line.needle,
                pattern,
                _handler(spec.handle),
                kv=spec.kv,
                run_start=spec.run_start,
                marker=spec.handle in MARKER_HANDLES,
            )
        )
    return tuple(rules)


RULES: tuple[_Rule, ...] = load_rules()
