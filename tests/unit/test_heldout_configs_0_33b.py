"""The second held-apart config set (tests/data/configs/heldout_0_33b, SOURCES.md there): every quantity of both
plans (H100 at TP 8 and TP 2, vLLM 0.33.0) as worked by hand in expected*.json before the planner ran on them.
Scored by bench/heldout_configs_0_33.py's own reader, so the bench and this test cannot drift apart."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
HELD = REPO / "tests" / "data" / "configs" / "heldout_0_33b"
_SPEC = importlib.util.spec_from_file_location(
    "heldout_configs_0_33", REPO / "bench" / "heldout_configs_0_33.py"
)
assert _SPEC is not None and _SPEC.loader is not None
BENCH = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(BENCH)

PLANS = sorted(HELD.glob("expected*.json"))
CASES = [
    (path.name, name, expected)
    for path in PLANS
    for name, expected in json.loads(path.read_text(encoding="utf-8"))["configs"].items()
]


@pytest.mark.parametrize(("plan_file", "name", "expected"), CASES)
def test_heldout_config_at_0_33(plan_file: str, name: str, expected: dict[str, Any]) -> None:
    plan = json.loads((HELD / plan_file).read_text(encoding="utf-8"))
    got = BENCH.planned(HELD, name, plan)
    assert isinstance(got, dict), got  # none refused: 0.33.0 serves every one
    assert {key: got[key] for key in BENCH.QUANTITIES} == expected


def test_both_plans_cover_the_fourteen_configs() -> None:
    assert len(PLANS) == 2 and len(CASES) == 28
