"""`--compilation-config` / `-cc` as vLLM reads it: the keys other than ``cudagraph_mode`` (issue 22 item 1).

A pasted `-cc '{"cudagraph_mode": "PIECEWISE", "cudagraph_capture_sizes": [1, 2, 4, 8]}'` keeps every key: the
mode goes to :attr:`ServeConfig.cudagraph_mode`, the rest to :attr:`ServeConfig.compilation_config` as canonical
JSON text (sorted keys, no spaces), and the emitted command writes them back together (serve_flags.py). The keys
that move memory are read here (config/compilation.py CompilationConfig, 0.10.2-0.33.0):

- ``mode`` (0.11.1+) or ``level`` (0.10.2-0.11.0, still read later): the compilation mode. 3 is VLLM_COMPILE
  (0.11.1+ CompilationMode) / PIECEWISE (0.10.2 CompilationLevel), the only one whose graph is split at attention,
  so the only one that can capture PIECEWISE graphs (graph_mode.effective_mode applies each release's rule);
- ``cudagraph_capture_sizes`` and ``max_cudagraph_capture_size`` (0.11.1+): the batch sizes captured, hence the
  graph memory (budget.cuda_graph_bytes scales by their count).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from app.core.text import Text
from app.core.version_parse import Version, release_numbers

# the keys the JSON may carry at most (a real -cc names a handful; the text's length is capped by ServeConfig)
COMPILATION_CONFIG_MAX_CHARS = 4096
# CompilationMode.VLLM_COMPILE (0.11.1+) / CompilationLevel.PIECEWISE (0.10.2-0.11.0): 3
VLLM_COMPILE = 3
# CompilationMode / CompilationLevel member names as the JSON may spell them (0.10.2 NO_COMPILATION, DYNAMO_AS_IS,
# DYNAMO_ONCE, PIECEWISE; 0.11.1+ NONE, STOCK_TORCH_COMPILE, DYNAMO_TRACE_ONCE, VLLM_COMPILE)
MODE_NAMES = {
    "NONE": 0,
    "NO_COMPILATION": 0,
    "STOCK_TORCH_COMPILE": 1,
    "DYNAMO_AS_IS": 1,
    "DYNAMO_TRACE_ONCE": 2,
    "DYNAMO_ONCE": 2,
    "VLLM_COMPILE": 3,
    "PIECEWISE": 3,
}
MAX_CAPTURE_SIZES = 4096  # more listed sizes than any real config; a longer list is refused, not walked
# the keys each release's CompilationConfig takes, and whether it refuses ("forbid") or drops ("ignore") others
# (scripts/gen_compilation_keys.py, read from the wheels)
KEYS_FILE = Path(__file__).with_name("compilation_keys.json")


@dataclass(frozen=True)
class CompileSettings:
    """What the planner reads from the other keys (None: not given, vLLM's default)."""

    mode: int | None = None  # 0..3
    capture_sizes: tuple[int, ...] | None = None  # cudagraph_capture_sizes, deduplicated and sorted
    max_capture_size: int | None = None  # max_cudagraph_capture_size
    no_splitting_ops: bool = False  # "splitting_ops": [] (no piecewise split, set_splitting_ops_for_v1)

    @property
    def compiles_piecewise(self) -> bool:
        """The mode is VLLM_COMPILE (3, also when not given): the only mode whose graph vLLM splits into pieces, so
        the only one a piecewise cudagraph_mode runs under (config/compilation.py; 0.10.2-0.11.0 CompilationLevel
        PIECEWISE). E.g. no -cc, or {"mode": 3} -> True; {"mode": 0} -> False."""
        return self.mode is None or self.mode == VLLM_COMPILE

    @property
    def splits_attention(self) -> bool:
        """splitting_ops_contain_attention(): piecewise compilation with vLLM's default splitting ops (CompilationConfig
        .set_splitting_ops_for_v1); {"splitting_ops": []} splits nothing. E.g. {"mode": 3, "splitting_ops": []} ->
        False."""
        return self.compiles_piecewise and not self.no_splitting_ops


def canonical(config: dict[str, Any]) -> str | None:
    """The keys as one JSON text, sorted and without spaces; None when there are none."""
    return json.dumps(config, sort_keys=True, separators=(",", ":")) if config else None


def merged(base: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    """``more`` over ``base``, nested objects merged key by key, as several `-cc.pass_config.X=...` build one
    pass_config (utils/argparse_utils.py FlexibleArgumentParser merges the dotted keys' nested dicts)."""
    out = dict(base)
    for key, value in more.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


def split_cudagraph_mode(config: dict[str, Any]) -> tuple[object | None, dict[str, Any]]:
    """``{"cudagraph_mode": "PIECEWISE", "mode": 3}`` -> ("PIECEWISE", {"mode": 3})."""
    rest = {k: v for k, v in config.items() if k != "cudagraph_mode"}
    return config.get("cudagraph_mode"), rest


def _mode(value: object) -> int:
    if isinstance(value, bool):
        raise ValueError(Text("compilation mode must be 0, 1, 2 or 3, got {value}", value=str(value)))
    if isinstance(value, int) and 0 <= value <= VLLM_COMPILE:
        return value
    if isinstance(value, str):
        name = value.strip().upper().removeprefix("COMPILATIONMODE.").removeprefix("COMPILATIONLEVEL.")
        if len(name) == 1 and name.isdecimal() and name.isascii() and int(name) <= VLLM_COMPILE:
            return int(name)
        if name in MODE_NAMES:
            return MODE_NAMES[name]
    raise ValueError(Text("compilation mode must be 0, 1, 2 or 3, got {value}", value=str(value)))


def _sizes(value: object) -> tuple[int, ...]:
    if not isinstance(value, list) or not 0 < len(value) <= MAX_CAPTURE_SIZES:
        raise ValueError(Text("cudagraph_capture_sizes must be a list of positive whole numbers"))
    sizes: list[int] = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int) or item < 1:
            raise ValueError(Text("cudagraph_capture_sizes must be a list of positive whole numbers"))
        sizes.append(item)
    return tuple(sorted(set(sizes)))


SETTINGS_KEPT = 1024  # distinct -cc texts kept parsed; a hostile stream of new texts evicts, never grows


def _positive(value: object, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(
            Text("{key} must be a positive whole number, got {value}", key=key, value=str(value))
        )
    return value


@lru_cache(maxsize=SETTINGS_KEPT)  # keyed by user text: bounded, so distinct hostile texts cannot grow it
def settings(text: str | None) -> CompileSettings:
    """E.g. '{"cudagraph_capture_sizes":[8,4,4],"mode":0}' -> mode 0, sizes (4, 8). Raises ValueError naming
    the key when a value cannot be what vLLM takes."""
    if not text:
        return CompileSettings()
    config = json.loads(text)
    raw_mode = config.get("mode", config.get("level"))
    sizes = config.get("cudagraph_capture_sizes")
    most = config.get("max_cudagraph_capture_size")
    return CompileSettings(
        mode=None if raw_mode is None else _mode(raw_mode),
        capture_sizes=None if sizes is None else _sizes(sizes),
        max_capture_size=None if most is None else _positive(most, "max_cudagraph_capture_size"),
        no_splitting_ops=config.get("splitting_ops") == [],
    )


def normalize(value: object) -> str | None:
    """ServeConfig's validator: JSON text or an object -> canonical text (its values checked by :func:`settings`).
    A ``cudagraph_mode`` key is not allowed here (it has its own field)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        if len(value) > COMPILATION_CONFIG_MAX_CHARS:
            raise ValueError(
                Text("--compilation-config is longer than {n} characters", n=COMPILATION_CONFIG_MAX_CHARS)
            )
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ValueError(Text("--compilation-config takes a JSON object")) from exc
    if not isinstance(value, dict):
        raise ValueError(Text("--compilation-config takes a JSON object"))
    if "cudagraph_mode" in value:
        raise ValueError(Text("cudagraph_mode has its own field; give the other compilation keys here"))
    text = canonical(value)
    if text is not None and len(text) > COMPILATION_CONFIG_MAX_CHARS:
        raise ValueError(
            Text("--compilation-config is longer than {n} characters", n=COMPILATION_CONFIG_MAX_CHARS)
        )
    settings(text)
    return text


@cache
def _keys_by_release() -> tuple[tuple[Version, str, frozenset[str]], ...]:
    data = json.loads(KEYS_FILE.read_text(encoding="utf-8"))["releases"]
    rows = ((release_numbers(v), row["extra"], frozenset(row["keys"])) for v, row in data.items())
    return tuple(sorted(rows))


def release_keys(version: str) -> tuple[str, frozenset[str]] | None:
    """(extra-key rule, keys) of the newest release read at or before ``version`` (a known release, the rules'
    bracket); None before the first one read (0.11.0), whose keys are taken as given. E.g. "0.22.1" -> 0.22.0's."""
    found = [
        (extra, keys) for release, extra, keys in _keys_by_release() if release <= release_numbers(version)
    ]
    return found[-1] if found else None


def unknown_keys(text: str | None, *, version: str) -> list[str]:
    """The top-level keys this release's CompilationConfig does not have (cudagraph_mode is kept apart and always
    known). E.g. '{"level": 3}' at 0.18.0 -> ["level"] (0.18.0 dropped the field; 0.17.0 still has it)."""
    known = release_keys(version)
    if not text or known is None:
        return []
    return sorted(key for key in json.loads(text) if key not in known[1])


@lru_cache(maxsize=1024)  # each estimate asks several times for the same text and release
def for_release(text: str | None, *, version: str) -> CompileSettings:
    """:func:`settings` of the keys this release reads: 0.11.0's pydantic dataclass drops a key it does not declare
    (``mode`` is 0.11.1+, so '{"mode": 0}' changes nothing there); 0.13.0+ refuse one (graph_rules.check_compilation
    raises first, so it is dropped here too)."""
    unknown = unknown_keys(text, version=version)
    if not unknown or not text:
        return settings(text)
    kept = {k: v for k, v in json.loads(text).items() if k not in unknown}
    return settings(canonical(kept))
