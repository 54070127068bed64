"""The Chinese report pages stay in step with the English ones they translate."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from app.resources import Data, directory

ROOT = Path(__file__).resolve().parents[2]
DOCS = directory(Data.DOCS)
NUMBER = re.compile(r"\d[\d.,e+]*")


def _bench_accuracy():  # type: ignore[no-untyped-def]  # bench/ is scripts, not a package
    spec = importlib.util.spec_from_file_location("bench_accuracy", ROOT / "bench" / "accuracy.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_accuracy"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_chinese_accuracy_report_is_the_english_one_translated() -> None:
    english = (DOCS / "accuracy.md").read_text(encoding="utf-8")
    chinese = (DOCS / "zh" / "accuracy.md").read_text(encoding="utf-8")
    # regenerate with `bench/accuracy.py --write` (writes both) when the English report changes
    assert chinese == _bench_accuracy().report_zh(english)
    assert "预测的记录数" in chinese and "KV 池区间" in chinese
    assert [n.rstrip(".") for n in NUMBER.findall(english)] == [
        n.rstrip(".") for n in NUMBER.findall(chinese)
    ]


def test_the_chinese_model_notes_carry_the_same_figures() -> None:
    english = (DOCS / "model.md").read_text(encoding="utf-8")
    chinese = (DOCS / "zh" / "model.md").read_text(encoding="utf-8")

    # every constant and residual of the English page appears in the translation (same order is not
    # required: Chinese word order moves a few)
    def numbers(text: str) -> list[str]:
        return sorted(n.rstrip(".,") for n in NUMBER.findall(text))

    assert numbers(english) == numbers(chinese)


def test_writing_the_report_keeps_the_hand_kept_rounds() -> None:
    # docs/accuracy.md holds issue 23's rounds 4-12 by hand after the simulated-benchmark heading; --write used to
    # replace the whole file with report(), whose stand-in for that part (perf_accuracy.SOURCES_SECTION) describes
    # round 2's 711 runs from 4 sources: regenerating would have dropped every later round (speedfit12's note)
    bench = _bench_accuracy()
    heading = bench.HAND_KEPT_HEADING
    existing = (DOCS / "accuracy.md").read_text(encoding="utf-8")
    assert heading in existing and "#### Round 12" in existing.split(heading, 1)[1]
    generated = (
        "# Accuracy\n\nRecords predicted: 44.\n\n" + heading + "\n\n711 measured runs from 4 sources\n"
    )
    merged = bench.with_hand_kept_tail(generated, existing)
    assert merged.startswith("# Accuracy\n\nRecords predicted: 44.\n\n" + heading)
    assert merged.endswith(existing.split(heading, 1)[1])
    assert "711 measured runs from 4 sources" not in merged and "#### Round 12" in merged
    # a document without the heading (a fresh checkout's first --write) takes the generated report whole
    assert bench.with_hand_kept_tail(generated, "# old\n") == generated
    # the heading is perf_accuracy.SOURCES_SECTION's first line: an edit there stops --write instead of merging
    assert _bench_perf_accuracy_heading() == heading
    with pytest.raises(SystemExit):
        bench.with_hand_kept_tail("# Accuracy\n", existing)


def _bench_perf_accuracy_heading() -> str:
    source = (ROOT / "bench" / "perf_accuracy.py").read_text(encoding="utf-8")
    return source.split("SOURCES_SECTION = (", 1)[1].split("\n", 2)[1].strip().strip(",").strip('"')
