"""The planner at vLLM 0.33.0 on held-apart current configs (tests/data/configs/heldout_0_33 and heldout_0_33b,
SOURCES.md in each): every quantity against what the wheel computes, worked by hand in expected*.json (one plan a file). Prints a
table and the score per set; a quantity vLLM's code gives but the planner does not size (null in expected.json)
counts as a miss. A `<name>_hf_quant_config.json` beside a config is passed as vLLM reads it.

    .venv/bin/python bench/heldout_configs_0_33.py [set ...]   # default: every set
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.catalog import find_device  # noqa: E402
from app.core.errors import PlannerError  # noqa: E402
from app.core.estimate import estimate  # noqa: E402
from app.core.hf_config import model_spec_from_hf_config  # noqa: E402
from app.core.specs import ServeConfig  # noqa: E402

CONFIGS = REPO / "tests" / "data" / "configs"
SETS = ("heldout_0_33", "heldout_0_33b")
QUANTITIES = (
    "backend",
    "kv_cache_dtype",
    "kv_bytes_per_token",
    "block_size",
    "page_size_bytes",
    "groups",
    "max_model_len_derived",
)


def planned(held: Path, name: str, plan: dict[str, Any]) -> dict[str, Any] | str:
    config = json.loads((held / f"{name}_config.json").read_text(encoding="utf-8"))
    quant_path = held / f"{name}_hf_quant_config.json"
    hf_quant = json.loads(quant_path.read_text(encoding="utf-8")) if quant_path.exists() else None
    try:
        spec = model_spec_from_hf_config(config, name=name, hf_quant_config=hf_quant)
        est = estimate(
            model=spec,
            device=find_device(plan["device"]),
            serve=ServeConfig(tensor_parallel_size=plan["tensor_parallel_size"], max_model_len=8_192),
            vllm_version=plan["vllm_version"],
        )
    except PlannerError as err:
        return f"refused: {err}"
    return {
        "backend": est.attention_backend,
        "kv_cache_dtype": est.kv_cache_dtype,
        "kv_bytes_per_token": est.kv_bytes_per_token,
        "block_size": est.block_size,
        "page_size_bytes": est.groups[0].page_size_bytes if est.groups else 0,
        "groups": [[g.kind, g.num_layers] for g in est.groups],
        "max_model_len_derived": spec.max_model_len_derived,
    }


def score(held: Path, expected_file: Path) -> tuple[int, int, int, int]:
    """Print one plan's table; return (quantities right, quantities, configs exact on all, configs)."""
    plan = json.loads(expected_file.read_text(encoding="utf-8"))
    right = total = configs_exact = 0
    for name, expected in plan["configs"].items():
        got = planned(held, name, plan)
        hits = 0
        for key in QUANTITIES:
            value = got.get(key) if isinstance(got, dict) else None
            ok = expected[key] is not None and value == expected[key]
            hits += ok
            print(f"{name:42s} {key:22s} {'ok  ' if ok else 'MISS'} planner={value!r} vllm={expected[key]!r}")
        if isinstance(got, str):
            print(f"{name:42s} {got}")
        right, total = right + hits, total + len(QUANTITIES)
        configs_exact += hits == len(QUANTITIES)
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
