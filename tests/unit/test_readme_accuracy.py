"""The README's accuracy table says what docs/accuracy.md (the generated report, also /accuracy) says.

The new-user walkthrough of 2026-12 found them apart: weights p90 0.08 GiB (0.6 %) in the README against
0.0649 GiB (0.5 %) in the report, KV pool p90 0.23 GiB against 0.167 GiB (the report was regenerated, the
README kept the older figures). Each README figure must be the report's rounded to the README's decimals.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
# README row label -> the report's quantity
ROWS = {
    "weights": "weights_gib",
    "activation peak": "activation_peak_gib",
    "non-torch": "non_torch_gib",
    "CUDA graphs": "cuda_graph_gib",
    'KV pool ("Available KV cache memory")': "kv_cache_gib",
}
NUMBER = re.compile(r"(\d+(?:\.\d+)?) GiB(?: \((\d+(?:\.\d+)?) %\))?")


def _report() -> dict[str, list[str]]:
    text = (ROOT / "docs" / "accuracy.md").read_text(encoding="utf-8")
    summary = text[text.index("## Summary") :]
    rows = {}
    for line in summary.splitlines()[4:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def _readme() -> dict[str, list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text[text.index("| quantity | median abs error | p90 abs error |") :]
    rows = {}
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def _same(shown: str, exact: str) -> bool:
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    return round(float(exact), decimals) == float(shown)


def test_readme_accuracy_table_matches_the_report() -> None:
    report, readme = _report(), _readme()
    assert set(ROWS) <= set(readme)
    for label, key in ROWS.items():
        # report cells: records, median GiB, p90 GiB, median %, p90 %
        _, median_gib, p90_gib, median_pct, p90_pct = report[key]
        for cell, gib, pct in (
            (readme[label][0], median_gib, median_pct),
            (readme[label][1], p90_gib, p90_pct),
        ):
            found = NUMBER.search(cell)
            assert found, (label, cell)
            assert _same(found.group(1), gib.removesuffix(" GiB")), (label, cell, gib)
            if found.group(2):
                assert _same(found.group(2), pct.removesuffix(" %")), (label, cell, pct)
