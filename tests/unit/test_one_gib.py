"""One binary gigabyte: ``GIB`` (2**30 bytes, the unit vLLM divides by when it prints "GiB" and the old "GB",
reference §0) is defined once, in app/core/specs.py, and every module that needs it imports that one (round 9 found
three copies: specs.py, vllm_text.py, logs/reading.py)."""

from __future__ import annotations

import re
from pathlib import Path

from app.core import specs, vllm_text_printed
from app.core.logs import reading

APP = Path(__file__).resolve().parents[2] / "app"
DEFINITION = re.compile(r"^GIB\s*(?::[^=]+)?=", re.M)


def test_gib_is_defined_once() -> None:
    defining = sorted(
        str(path.relative_to(APP)) for path in APP.rglob("*.py") if DEFINITION.search(path.read_text("utf-8"))
    )
    assert defining == ["core/specs.py"]


def test_the_readers_use_the_specs_gib() -> None:
    assert specs.GIB == 1_073_741_824  # 2**30
    assert vllm_text_printed.GIB is specs.GIB and reading.GIB is specs.GIB
