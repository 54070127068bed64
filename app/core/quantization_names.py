"""`--quantization NAME` as vLLM spells it (quantization_flags.yaml, one row a name).

A leaf module: the flag table (serve_flags.py) writes `--quantization` with the method's vLLM name, and
plan.py builds the QuantSpec each row plans with; both read the rows here, which imports neither.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # no types-PyYAML in the lock file

QUANTIZATION_FLAGS_FILE = Path(__file__).with_name("quantization_flags.yaml")


@cache
def quantization_rows(path: Path = QUANTIZATION_FLAGS_FILE) -> dict[str, dict[str, Any]]:
    """The file's rows by name: ``{"awq": {"method": "int4", "group_size": 128}, ...}``."""
    rows: dict[str, dict[str, Any]] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return rows


def vllm_quantization_name(name: str | None) -> str | None:
    """An alias as the method vLLM knows (nvfp4 -> modelopt_fp4, awq -> awq), so a rendered command runs;
    other names unchanged."""
    if not name:
        return None
    row = quantization_rows().get(name.lower())
    return str(row.get("source_name", name.lower())) if row is not None else name
