"""The held-apart config sets of rounds 4 to 7 (tests/data/configs/heldout_0_33b, heldout_0_33c, heldout_0_33d
and heldout_0_33e, SOURCES.md in each): every quantity of both plans (H100 at TP 8 and TP 2, vLLM 0.33.0) as worked by hand in expected*.json before
the planner ran on them, including heldout_0_33c's plans vLLM cannot build (phi-4's 10 KV heads and Qwen2.5-VL's 28
heads at TP 8, Voxtral from a transformers config.json), its parameter counts and its weights from an index. Scored by
bench/heldout_configs_0_33.py's own reader (`planned`, `_checks`), so the bench and this test cannot drift apart.

Blind, before any rule change: heldout_0_33b 98/98 at TP 8 and 98/98 at TP 2 (round 4); heldout_0_33c batch 1
192/226 and batch 2 (after batch 1's fixes) 80/84; heldout_0_33d 291/334 (319/358 with two expectations corrected,
SOURCES.md); heldout_0_33e 311/318 and heldout_0_33f (collected after e's fixes) 66/80 (round 7). These tests pin 196/196, 310/310, 372/372 (d, with round 7's
correction of its bitsandbytes copy) 318/318 and 80/80 after."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "tests" / "data" / "configs"
_SPEC = importlib.util.spec_from_file_location(
    "heldout_configs_0_33", REPO / "bench" / "heldout_configs_0_33.py"
)
assert _SPEC is not None and _SPEC.loader is not None
BENCH = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(BENCH)

SETS = ("heldout_0_33b", "heldout_0_33c", "heldout_0_33d", "heldout_0_33e", "heldout_0_33f")
CASES = [
    (held, path.name, name, expected)
    for held in SETS
    for path in sorted((CONFIGS / held).glob("expected*.json"))
    for name, expected in json.loads(path.read_text(encoding="utf-8"))["configs"].items()
]


@pytest.mark.parametrize(("held", "plan_file", "name", "expected"), CASES)
def test_heldout_config_at_0_33(held: str, plan_file: str, name: str, expected: dict[str, Any]) -> None:
    plan = json.loads((CONFIGS / held / plan_file).read_text(encoding="utf-8"))
    rows = BENCH._checks(expected, BENCH.planned(CONFIGS / held, name, plan))
    assert [row for row in rows if not row[1]] == []


def test_both_plans_cover_every_config() -> None:
    # heldout_0_33b: 14 configs; heldout_0_33c: 17 (batch 1) + 5 (batch 2); each at TP 8 and TP 2;
    # heldout_0_33d: 26 (batch 1) + 4 (batch 2) configs at TP 8 and TP 1; heldout_0_33e: 27 at TP 8 and TP 2;
    # heldout_0_33f: 7 at TP 8 and TP 2
    count = {held: sum(1 for case in CASES if case[0] == held) for held in SETS}
    assert count == {
        "heldout_0_33b": 28,
        "heldout_0_33c": 44,
        "heldout_0_33d": 60,
        "heldout_0_33e": 54,
        "heldout_0_33f": 14,
    }
