"""Regenerate app/core/hf_config/vllm_architectures.json from vLLM wheels' model registries.

For each release, vLLM lists the architectures it can load in
``vllm/model_executor/models/registry.py`` (dict literals such as ``_TEXT_GENERATION_MODELS``,
merged into ``_VLLM_MODELS``). This script reads those dicts with ``ast`` (it never imports vLLM)
and writes, per architecture, the first and last release among the ones given that list it.

Usage (the wheels are ~400 MB each; only registry.py is needed, so extract just that file)::

    pip download --no-deps vllm==0.19.0 -d /tmp/w && \
      unzip -o /tmp/w/vllm-0.19.0-*.whl vllm/model_executor/models/registry.py -d /tmp/src-0.19.0
    python scripts/gen_arch_registry.py 0.19.0=/tmp/src-0.19.0 0.33.0=/tmp/src-0.33.0 ...

Releases not given are bracketed: an architecture first listed by 0.14.0 but not by 0.11.0 was
added somewhere in (0.11.0, 0.14.0]; the file records both ends.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
OUT_FILE = REPO_ROOT / "app" / "core" / "hf_config" / "vllm_architectures.json"
REGISTRY_PATH = Path("vllm/model_executor/models/registry.py")
# registry dicts that are not loadable architectures
SKIPPED_DICTS = frozenset({"_PREVIOUSLY_SUPPORTED_MODELS", "_OOT_SUPPORTED_MODELS", "_VLLM_MODELS"})


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def registry_of(source: str) -> dict[str, tuple[str, str]]:
    """architecture -> (registry dict it is listed in, vLLM module name), from registry.py's text."""
    tree = ast.parse(source)
    found: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if not names or not names[0].endswith("_MODELS") or names[0] in SKIPPED_DICTS:
            continue
        if not isinstance(value, ast.Dict):
            continue
        for key, item in zip(value.keys, value.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                continue
            module = ""
            if isinstance(item, ast.Tuple) and item.elts and isinstance(item.elts[0], ast.Constant):
                module = str(item.elts[0].value)
            found.setdefault(key.value, (names[0].strip("_").lower(), module))
    return found


def previously_supported(source: str) -> dict[str, str]:
    """``_PREVIOUSLY_SUPPORTED_MODELS``: architecture -> last release that supported it (vLLM's own words)."""
    for node in ast.parse(source).body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "_PREVIOUSLY_SUPPORTED_MODELS" for t in node.targets)
            and isinstance(node.value, ast.Dict)
        ):
            return {
                key.value: value.value
                for key, value in zip(node.value.keys, node.value.values, strict=True)
                if isinstance(key, ast.Constant)
                and isinstance(key.value, str)
                and isinstance(value, ast.Constant)
                and isinstance(value.value, str)
            }
    return {}


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    releases: dict[str, dict[str, tuple[str, str]]] = {}
    sources: dict[str, str] = {}
    for arg in argv:
        version, _, root = arg.partition("=")
        sources[version] = (Path(root) / REGISTRY_PATH).read_text(encoding="utf-8")
        releases[version] = registry_of(sources[version])
    order = sorted(releases, key=_version_key)
    supported_until = previously_supported(sources[order[-1]])
    architectures: dict[str, dict[str, str | None]] = {}
    for arch in sorted({a for reg in releases.values() for a in reg}):
        present = [v for v in order if arch in releases[v]]
        first, last = present[0], present[-1]
        before = order[order.index(first) - 1] if order.index(first) > 0 else None
        newest = releases[last][arch]
        architectures[arch] = {
            "first_listed": first,  # oldest release read that lists it
            "absent_in": before,  # newest release read before that one, which does not (None: oldest read)
            "last_listed": last if last != order[-1] else None,  # None: still in the newest release read
            "registry": newest[0],
            "module": newest[1],
            # vLLM's _PREVIOUSLY_SUPPORTED_MODELS (newest release read): "supported until vX"
            "supported_until": supported_until.get(arch),
        }
    data = {
        "provenance": (
            "Generated by scripts/gen_arch_registry.py from vllm/model_executor/models/registry.py in the "
            "vLLM wheels of the releases listed (pip download --no-deps vllm==X from PyPI); the *_MODELS "
            "dicts, read with ast."
        ),
        "releases_read": order,
        "architectures": architectures,
    }
    OUT_FILE.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(
        f"{len(architectures)} architectures over {len(order)} releases -> {OUT_FILE.relative_to(REPO_ROOT)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
