"""Write app/core/hf_config/transformers_fallback.json: what vLLM (0.30.0, 0.32.0, 0.33.0) can still load when its own registry
lacks a config's architecture, read from the wheels with ``ast`` (nothing imported).

    pip download --no-deps vllm==0.33.0 "transformers>=5.16.1,<5.21.0"   # 0.33.0 pins transformers
    unzip -q vllm-0.33.0-*.whl 'vllm/*' -d VLLM ; unzip -q transformers-5.20.2-*.whl 'transformers/*' -d TF
    .venv/bin/python scripts/gen_transformers_fallback.py VLLM/vllm TF/transformers 0.33.0 5.20.2 \
        "transformers<5.21.0,>=5.16.1"

Two lists and a map:

- ``model_types``: the ``model_type`` values a config.json may carry and still be parsed
  (transformers_utils/config.py HFConfigParser.parse: vLLM's ``_CONFIG_REGISTRY``, the
  ``_ARCHITECTURE_TO_MODEL_TYPE`` values, and transformers' ``CONFIG_MAPPING_NAMES``); any other is
  transformers' "model type `X` but Transformers does not recognize this architecture" unless the
  config's ``auto_map`` names remote code.
- ``backend_architectures``: the model classes the Transformers modeling backend can wrap under
  ``--model-impl auto`` (model_executor/models/registry.py _try_resolve_transformers: the class is a
  top-level transformers name, and ``is_backend_compatible()`` (``_supports_attention_backend``) or
  ``_can_set_attn_implementation()`` (no ``class *Attention*(nn.Module)`` in its module, or the module
  calls ``ALL_ATTENTION_FUNCTIONS.get_interface(``) holds, both read from the module's source).
- ``model_mapping``: transformers' ``MODEL_MAPPING_NAMES`` (model_type -> its base model class), which
  transformers_utils/config.py get_config writes as ``architectures`` when a config.json gives none.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "app" / "core" / "hf_config" / "transformers_fallback.json"
ATTENTION_CLASS = re.compile(r"^class \w*Attention\w*\(nn\.Module\):", re.MULTILINE)


def _dict_keys(tree: ast.AST, name: str) -> set[str]:
    """Keys of a module-level ``name = {...}`` / ``dict(...)`` / ``LazyConfigDict(...)`` / OrderedDict([...])."""
    keys: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign | ast.AnnAssign):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not any(isinstance(t, ast.Name) and t.id == name for t in targets) or node.value is None:
            continue
        value = node.value
        if isinstance(value, ast.Dict):
            keys |= {k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        elif isinstance(value, ast.Call):
            keys |= {kw.arg for kw in value.keywords if kw.arg}
            for kw in value.keywords:  # **{"unlimited-ocr": ...}
                if kw.arg is None and isinstance(kw.value, ast.Dict):
                    keys |= {k.value for k in kw.value.keys if isinstance(k, ast.Constant)}
            for arg in value.args:
                if isinstance(arg, ast.List | ast.Tuple):
                    for item in arg.elts:
                        if isinstance(item, ast.Tuple) and isinstance(item.elts[0], ast.Constant):
                            keys.add(item.elts[0].value)
    return keys


def _dict_values(tree: ast.AST, name: str) -> set[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign | ast.Assign) and isinstance(node.value, ast.Dict):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return {v.value for v in node.value.values if isinstance(v, ast.Constant)}
    return set()


def model_mapping(transformers: Path) -> dict[str, str]:
    """transformers' models/auto/modeling_auto.py MODEL_MAPPING_NAMES (model_type -> base model class): what vLLM's
    transformers_utils/config.py get_config writes as the architecture of a config.json that names none."""
    tree = ast.parse((transformers / "models" / "auto" / "modeling_auto.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else []
        if not any(isinstance(t, ast.Name) and t.id == "MODEL_MAPPING_NAMES" for t in targets):
            continue
        value = node.value.args[0] if isinstance(node.value, ast.Call) and node.value.args else node.value
        pairs = value.elts if isinstance(value, ast.List) else []
        return {
            pair.elts[0].value: pair.elts[1].value
            for pair in pairs
            if isinstance(pair, ast.Tuple)
            and len(pair.elts) == 2
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in pair.elts)
        }
    return {}


def model_types(vllm: Path, transformers: Path) -> list[str]:
    config_py = ast.parse((vllm / "transformers_utils" / "config.py").read_text(encoding="utf-8"))
    found = _dict_keys(config_py, "_CONFIG_REGISTRY") | _dict_values(config_py, "_ARCHITECTURE_TO_MODEL_TYPE")
    auto = transformers / "models" / "auto"
    for path in (auto / "auto_mappings.py", auto / "configuration_auto.py"):
        found |= _dict_keys(ast.parse(path.read_text(encoding="utf-8")), "CONFIG_MAPPING_NAMES")
    found.add("gpt-sw3")
    return sorted(found)


def _exported(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            and isinstance(node.value, ast.List | ast.Tuple)
        ):
            return [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
    return []


def backend_architectures(transformers: Path) -> list[str]:
    names: set[str] = set()
    for path in sorted((transformers / "models").glob("*/modeling_*.py")):
        source = path.read_text(encoding="utf-8")
        if ATTENTION_CLASS.search(source):
            compatible = "ALL_ATTENTION_FUNCTIONS.get_interface(" in source
        else:
            compatible = True
        compatible = compatible or "_supports_attention_backend = True" in source
        if not compatible:
            continue
        tree = ast.parse(source)
        classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
        names |= {n for n in _exported(tree) if n in classes and not n.endswith("PreTrainedModel")}
    return sorted(names)


def main() -> None:
    """VLLM_TREE TRANSFORMERS_TREE RELEASE TRANSFORMERS_VERSION PIN: (re)writes that release's entry."""
    vllm, transformers = Path(sys.argv[1]), Path(sys.argv[2])
    release, version, pin = sys.argv[3], sys.argv[4], sys.argv[5]
    data = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
    releases = data.get("releases", {})
    releases[release] = {
        "transformers_version": version,
        "requires": pin,  # the wheel's Requires-Dist; the newest transformers it allows was read
        "model_types": model_types(vllm, transformers),
        "backend_architectures": backend_architectures(transformers),
        "model_mapping": model_mapping(transformers),
    }
    data = {
        "provenance": (
            "Generated by scripts/gen_transformers_fallback.py, per vLLM release, from that wheel "
            "(transformers_utils/config.py) and the newest transformers wheel its Requires-Dist allows "
            "(models/auto, models/*/modeling_*.py; 0.30.0's pin has no upper bound: 5.17.0, the newest on "
            "2026-09-22 when its wheel was built, also the newest 0.31.0 allows); read with ast."
        ),
        "releases": dict(sorted(releases.items(), key=lambda item: tuple(map(int, item[0].split("."))))),
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    entry = releases[release]
    print(
        f"{release}: {len(entry['model_types'])} model types, {len(entry['backend_architectures'])} classes -> {OUT}"
    )


if __name__ == "__main__":
    main()
