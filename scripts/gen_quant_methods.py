"""Regenerate app/core/hf_config/vllm_quant_methods.json from vLLM wheels' quantization method lists.

Each release names the checkpoint quantization methods it can load in
``vllm/model_executor/layers/quantization/__init__.py`` (the ``QuantizationMethods`` Literal, whose
names become ``QUANTIZATION_METHODS``); ``config/model.py _verify_quantization`` refuses any other with
"Unknown quantization method: <name>". This script reads that Literal with ``ast`` (it never imports
vLLM) and writes, per method, the first release among the ones given that lists it and, for a method
later dropped, the first release given that no longer does (``removed_in``).

Usage (only that file of each wheel is needed)::

    unzip -o vllm-0.28.0-*.whl vllm/model_executor/layers/quantization/__init__.py -d /tmp/src-0.28.0
    python scripts/gen_quant_methods.py 0.27.1=/tmp/src-0.27.1 0.28.0=/tmp/src-0.28.0 ...
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
OUT_FILE = REPO_ROOT / "app" / "core" / "hf_config" / "vllm_quant_methods.json"
METHODS_PATH = Path("vllm/model_executor/layers/quantization/__init__.py")


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def methods_of(source: str) -> list[str]:
    """The string members of the module's ``QuantizationMethods = Literal[...]`` assignment."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if "QuantizationMethods" in names and isinstance(node.value, ast.Subscript):
                members = node.value.slice
                items = members.elts if isinstance(members, ast.Tuple) else [members]
                return [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
    raise SystemExit("no QuantizationMethods Literal found")


def main(args: list[str]) -> None:
    read: dict[str, list[str]] = {}
    for arg in args:
        release, _, root = arg.partition("=")
        read[release] = methods_of((Path(root) / METHODS_PATH).read_text(encoding="utf-8"))
    releases = sorted(read, key=_version_key)
    table: dict[str, dict[str, str | None]] = {}
    for index, release in enumerate(releases):
        for name in read[release]:
            table.setdefault(name, {"first_listed": release, "removed_in": None})
        for name, row in table.items():
            if row["removed_in"] is None and name not in read[release] and index > 0:
                row["removed_in"] = release
    out = {"releases_read": releases, "methods": dict(sorted(table.items()))}
    OUT_FILE.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"{len(table)} methods from {len(releases)} releases -> {OUT_FILE}")


if __name__ == "__main__":
    main(sys.argv[1:])
