"""What binds a speed figure is turned into words in one place (issue 23, round 8 page fault 5).

Until round 8 the regime was worded three ways: the fleet's rows indexed REGIME_NAMES behind a
membership test, its frontier, its best layout and the recommender used ``REGIME_NAMES.get(r, r)`` (an
unnamed regime printed as its key), and the Speed section indexed its own REGIME_LABELS table. Now
app.web.format.regime_text is the one function; the tables beside it are data.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from app.core.perf.bench import Regime
from app.web.format import REGIME_EXPLAINED, REGIME_NAMES, regime_text
from tests.i18n_scan import using

WEB = Path(__file__).resolve().parents[2] / "app" / "web"


def test_every_regime_has_its_words_and_its_sentence() -> None:
    assert set(REGIME_NAMES) == set(REGIME_EXPLAINED) == set(get_args(Regime))
    for regime in get_args(Regime):
        assert regime_text(regime) == REGIME_NAMES[regime]
        assert regime_text(regime, explained=True) == REGIME_EXPLAINED[regime]
    assert regime_text("") == "" and regime_text("warp_drive", explained=True) == ""


def test_only_format_reads_the_tables() -> None:
    readers = [
        str(path.relative_to(WEB))
        for path in WEB.rglob("*.py")
        if path.name != "format.py"
        and re.search(r"REGIME_(NAMES|LABELS|EXPLAINED)\b", path.read_text("utf-8"))
    ]
    assert readers == []


@pytest.mark.parametrize("regime", get_args(Regime))
def test_in_chinese(regime: str) -> None:
    with using("zh"):
        words, sentence = regime_text(regime), regime_text(regime, explained=True)
    assert words and sentence and words != REGIME_NAMES[regime] and sentence != REGIME_EXPLAINED[regime]
