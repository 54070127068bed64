"""The planner at vLLM 0.33.0 on held-apart current configs (tests/data/configs/heldout_0_33, heldout_0_33b and
heldout_0_33c, SOURCES.md in each): every quantity against what the wheel computes, worked by hand in expected*.json
(one plan a file). Prints a table and the score per set; a quantity vLLM's code gives but the planner does not size
(null in expected.json) counts as a miss. A `<name>_hf_quant_config.json` beside a config is passed as vLLM reads it.
A plan vLLM cannot build is one quantity, `refused` (the planner must refuse it with a PlannerError); `params_total`
(the parameters the config gives) and `weights_from_index` (the bytes vLLM loads, from a `<name>_model.safetensors
.index.json` beside the config: the planner's budget for the whole model on one device, so a float32 checkpoint
counts as the bf16 vLLM loads it in) are scored where expected*.json has them.

    .venv/bin/python bench/heldout_configs_0_33.py [set ...]   # default: every set
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.budget import weights_bytes_for_stage  # noqa: E402
from app.core.catalog import find_device  # noqa: E402
from app.core.errors import PlannerError  # noqa: E402
from app.core.estimate import estimate  # noqa: E402
from app.core.hf_config import model_spec_from_hf_config  # noqa: E402
from app.core.specs import ModelSpec, ServeConfig  # noqa: E402

CONFIGS = REPO / "tests" / "data" / "configs"
SETS = (
    "heldout_0_33",
    "heldout_0_33b",
    "heldout_0_33c",
    "heldout_0_33d",
    "heldout_0_33e",
    "heldout_0_33f",
    "heldout_0_33g",
    "heldout_0_33h",
    "heldout_0_33i",
    "heldout_0_33j",
    "heldout_0_33k",
    "heldout_0_33m",
    "heldout_0_33n",
    "heldout_0_33o",
    "heldout_0_33p",
    "heldout_0_33q",
    "heldout_0_33r",
    "heldout_0_33s",
    "heldout_0_33t",
    "heldout_0_33u",
    "current-2026-12",
)
QUANTITIES = (
    "backend",
    "kv_cache_dtype",
    "kv_bytes_per_token",
    "block_size",
    "page_size_bytes",
    "groups",
    "max_model_len_derived",
)


def _loaded_weight_bytes(spec: ModelSpec) -> int | None:
    """The bytes the planner's budget loads for the whole model from the index (one device, every layer): the
    index's total as stored, less what vLLM skips, with an unquantized float32 checkpoint downcast under --dtype auto
    (budget.weights_bytes_for_stage). None without an index."""
    if spec.weights_bytes_exact is None:
        return None
    return weights_bytes_for_stage(
        model=spec,
        serve=ServeConfig(tensor_parallel_size=1),
        layer_range=(0, spec.num_layers),
        is_first=True,
        is_last=True,
    )


def planned(held: Path, name: str, plan: dict[str, Any]) -> dict[str, Any]:
    """The planner's quantities; `refused` holds its PlannerError (config or plan stage), else None."""
    config = json.loads((held / f"{name}_config.json").read_text(encoding="utf-8"))
    quant_path = held / f"{name}_hf_quant_config.json"
    hf_quant = json.loads(quant_path.read_text(encoding="utf-8")) if quant_path.exists() else None
    index_path = held / f"{name}_model.safetensors.index.json"
    index = json.loads(index_path.read_text(encoding="utf-8")) if index_path.exists() else None
    try:
        spec = model_spec_from_hf_config(
            config,
            name=name,
            hf_quant_config=hf_quant,
            safetensors_index=index,
            vllm_version=plan["vllm_version"],
        )
    except PlannerError as err:
        return {"refused": f"config: {err}"}
    got: dict[str, Any] = {
        "refused": None,
        "params_total": spec.params_total,
        "weights_from_index": _loaded_weight_bytes(spec),
    }
    try:
        est = estimate(
            model=spec,
            device=find_device(plan["device"]),
            serve=ServeConfig(tensor_parallel_size=plan["tensor_parallel_size"], max_model_len=8_192),
            vllm_version=plan["vllm_version"],
        )
    except PlannerError as err:
        got["refused"] = f"plan: {err}"
        return got
    return got | {
        "backend": est.attention_backend,
        "kv_cache_dtype": est.kv_cache_dtype,
        "kv_bytes_per_token": est.kv_bytes_per_token,
        "block_size": est.block_size,
        "page_size_bytes": est.groups[0].page_size_bytes if est.groups else 0,
        "groups": [[g.kind, g.num_layers] for g in est.groups],
        "max_model_len_derived": spec.max_model_len_derived,
    }


def _checks(expected: dict[str, Any], got: dict[str, Any]) -> list[tuple[str, bool, Any, Any]]:
    """(quantity, right, planner, vLLM) for each quantity this expectation scores."""
    if "refused" in expected:  # vLLM cannot build this plan: one quantity, the refusal
        rows = [("refused", got["refused"] is not None, got["refused"], expected["refused"])]
    else:
        rows = [
            (key, expected[key] is not None and got.get(key) == expected[key], got.get(key), expected[key])
            for key in QUANTITIES
        ]
    for key in ("params_total", "weights_from_index"):
        if key in expected:
            rows.append((key, got.get(key) == expected[key], got.get(key), expected[key]))
    return rows


def score(held: Path, expected_file: Path) -> tuple[int, int, int, int]:
    """Print one plan's table; return (quantities right, quantities, configs exact on all, configs)."""
    plan = json.loads(expected_file.read_text(encoding="utf-8"))
    right = total = configs_exact = 0
    for name, expected in plan["configs"].items():
        got = planned(held, name, plan)
        rows = _checks(expected, got)
        for key, ok, value, want in rows:
            print(f"{name:42s} {key:22s} {'ok  ' if ok else 'MISS'} planner={value!r} vllm={want!r}")
        if got["refused"] is not None and "refused" not in expected:
            print(f"{name:42s} refused: {got['refused']}")
        hits = sum(ok for _, ok, _, _ in rows)
        right, total = right + hits, total + len(rows)
        configs_exact += hits == len(rows)
    print(
        f"{held.name} {plan['device']} TP {plan['tensor_parallel_size']}: {right}/{total} quantities exact; "
        f"{configs_exact}/{len(plan['configs'])} configs exact on all\n"
    )
    return right, total, configs_exact, len(plan["configs"])


def main() -> None:
    sums = [0, 0, 0, 0]
    for name in sys.argv[1:] or SETS:
        for expected_file in sorted((CONFIGS / name).glob("expected*.json")):  # one plan a file
            sums = [a + b for a, b in zip(sums, score(CONFIGS / name, expected_file), strict=True)]
    right, total, exact, configs = sums
    print(
        f"all: {right}/{total} quantities exact ({100 * right / max(total, 1):.1f} %); {exact}/{configs} configs exact"
    )


if __name__ == "__main__":
    main()
