"""Regenerate app/core/hf_config/transformers_attribute_maps.json from a transformers source tree.

transformers' config classes answer the standard names (``hidden_size``, ``num_hidden_layers``,
``num_attention_heads``, ...) for checkpoints that store another spelling through each class's
``attribute_map`` (``{"hidden_size": "n_embd", ...}``: reading ``config.hidden_size`` returns the stored
``n_embd``). vLLM reads the standard names, so a config.json that stores only the other spelling is served.
This script reads every ``models/*/configuration_*.py`` with ``ast`` (it never imports transformers) and
writes ``model_type -> {standard name: stored name}`` for classes that set both.

    python scripts/gen_attribute_maps.py /work/vllm-src/transformers-for-0.33.0/transformers
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
OUT_FILE = REPO_ROOT / "app" / "core" / "hf_config" / "transformers_attribute_maps.json"


def _class_value(node: ast.ClassDef, name: str) -> ast.expr | None:
    for item in node.body:
        targets = (
            item.targets
            if isinstance(item, ast.Assign)
            else [item.target]
            if isinstance(item, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets) and item.value is not None:
            return item.value
    return None


def maps_of(source: str) -> dict[str, dict[str, str]]:
    """model_type -> attribute_map for each config class of one module with literal values for both."""
    found: dict[str, dict[str, str]] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        model_type, mapping = _class_value(node, "model_type"), _class_value(node, "attribute_map")
        if not (isinstance(model_type, ast.Constant) and isinstance(mapping, ast.Dict)):
            continue
        pairs = {
            k.value: v.value
            for k, v in zip(mapping.keys, mapping.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(v, ast.Constant) and isinstance(v.value, str)
        }
        if pairs:
            found[str(model_type.value)] = dict(sorted(pairs.items()))
    return found


def main(root: str) -> None:
    table: dict[str, dict[str, str]] = {}
    for path in sorted(Path(root).glob("models/*/configuration_*.py")):
        table.update(maps_of(path.read_text(encoding="utf-8")))
    OUT_FILE.write_text(json.dumps(dict(sorted(table.items())), indent=1) + "\n", encoding="utf-8")
    print(f"{len(table)} model types -> {OUT_FILE}")


if __name__ == "__main__":
    main(sys.argv[1])
