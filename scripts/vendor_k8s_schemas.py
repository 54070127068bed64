"""Vendor the Kubernetes JSON schemas the deployment tests validate against (tests/data/schemas/k8s/).

Source: the `kubernetes-validate` wheel on PyPI (Apache-2.0), which carries the JSON schemas generated
from Kubernetes' own OpenAPI document for each release (the same generator family as
yannh/kubernetes-json-schema's strict variants). Its ``v1.37.0-local-strict`` folder has one file per
kind whose ``$ref``s point into a 1.8 MB ``_definitions.json``; this script keeps only the definitions
reachable from apps/v1 Deployment and v1 Service and drops the prose ``description`` strings, so the
copy is small and still the same schema (every type, enum, required list and ``additionalProperties:
false`` kept).

    pip download --no-deps kubernetes-validate==1.37.0 -d /tmp/kv
    python scripts/vendor_k8s_schemas.py /tmp/kv/kubernetes_validate-1.37.0-py3-none-any.whl
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path
from typing import Any

KUBERNETES_RELEASE = "v1.37.0"
FOLDER = f"kubernetes_validate/kubernetes-json-schema/{KUBERNETES_RELEASE}-local-strict/"
KINDS = ("deployment-apps-v1.json", "service-v1.json")
OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "schemas" / "k8s"
DEFS_PREFIXES = ("/api/_definitions.json#/$defs/", "#/$defs/")  # from a kind file, inside _definitions


def _strip(node: Any) -> Any:
    """The schema without prose: string-valued ``description`` keys go, everything else stays."""
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if not (k == "description" and isinstance(v, str))}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        for prefix in DEFS_PREFIXES:
            if isinstance(ref, str) and ref.startswith(prefix):
                found.add(ref[len(prefix) :])
        for value in node.values():
            found |= _refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= _refs(value)
    return found


def main(wheel: str) -> None:
    with zipfile.ZipFile(wheel) as whl:
        kinds = {name: json.loads(whl.read(FOLDER + name)) for name in KINDS}
        definitions = json.loads(whl.read(FOLDER + "_definitions.json"))
    defs = definitions["$defs"]
    wanted: set[str] = set()
    todo = set().union(*(_refs(k) for k in kinds.values()))
    while todo:
        name = todo.pop()
        if name in wanted:
            continue
        wanted.add(name)
        todo |= _refs(defs[name]) - wanted
    OUT.mkdir(parents=True, exist_ok=True)
    pruned = {
        **{k: v for k, v in definitions.items() if k != "$defs"},
        "$defs": {n: defs[n] for n in sorted(wanted)},
    }
    (OUT / "_definitions.json").write_text(json.dumps(_strip(pruned), indent=1, sort_keys=True) + "\n")
    for name, schema in kinds.items():
        (OUT / name).write_text(json.dumps(_strip(schema), indent=1, sort_keys=True) + "\n")
    print(f"{len(wanted)} of {len(defs)} definitions kept -> {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
