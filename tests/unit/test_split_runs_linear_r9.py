"""Splitting a box into runs reads it in linear time (round 9 review9b).

app.core.perf.measured._json_lines decoded each line starting with "{" from ``"\\n".join(lines[first:])``:
a copy of the rest of the box per such line. ``"{}\\n" * 21845`` (64 KB, the page box's limit) copied
the sum of its suffixes, ~715 million characters (21,845 x 65,535 / 2), and held a worker 1.4 s. The
work is counted here as the characters handed to the JSON decoder, not timed.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.core.perf.measured import split_runs


@pytest.fixture
def decoded_chars(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    seen: list[int] = []
    original = json.JSONDecoder.raw_decode

    def counting(self: json.JSONDecoder, s: str, idx: int = 0) -> tuple[Any, int]:
        seen.append(len(s) - idx)
        return original(self, s, idx)

    monkeypatch.setattr(json.JSONDecoder, "raw_decode", counting)
    return seen


@pytest.mark.parametrize("unit", ["{}\n", "{\n", '{"mean_tpot_ms": 1}\n'])
def test_a_box_of_objects_is_decoded_in_linear_work(decoded_chars: list[int], unit: str) -> None:
    text = unit * (65_536 // len(unit))
    runs = split_runs(text)
    assert runs  # every line (or pair of lines, for "{") is read
    # each decode reads a window of about the lines it spans: a few times the box, not its suffixes
    assert sum(decoded_chars) <= 4 * len(text), sum(decoded_chars)


def test_the_windows_split_as_the_whole_rest_did() -> None:
    # a jq-printed object over 40 lines (windows 2, 4, ..., 64 lines), an object that never closes (it
    # spans to the box's last line), and one whose error is on its third line
    pretty = json.dumps({f"k{i}": i for i in range(37)} | {"mean_tpot_ms": 10}, indent=1)
    assert pretty.count("\n") + 1 == 40
    runs = split_runs(f'{pretty}\n{{"a": 1,\n"b": 2,\n"c" 3}}\nMean TPOT (ms): 9\n{{"x": [1,\n2,\n3')
    assert [(r.start, len(r.lines), r.saved is not None) for r in runs] == [
        (1, 40, True),  # decoded whole: 40 lines
        (41, 3, False),  # the error (no ':' after "c") on its third line, line 43
        (44, 1, False),  # the printed figure below it
        (45, 3, False),  # never closes: to the box's last line
    ]
    assert runs[0].saved is not None and runs[0].saved["mean_tpot_ms"] == 10
