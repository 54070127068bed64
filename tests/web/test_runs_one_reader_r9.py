"""One reader for your runs, however they arrive (issue 23, round 9; round 8's final read).

Round 8: `kvplan perf --runs FILE` had its own copy of the page's loop with other limits (1,000,000
characters against an API paste's 200,000; past 64 runs it refused the file where the page cut the list
without a word), and an API run's paste that stated no rate or cap was simulated at vLLM's default
without the note the box gives. Now app.core.perf.measured (runs_of, compared, fit_runs) serves the
box, the API and the CLI alike.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.cli import main
from tests.web.test_perf_cli_runs import API, LLAMA, WORKLOAD

# vLLM 0.19.0's printed lines; 8 prompts x 1,024 / 256 tokens; a stated rate and cap (no note)
BLOCK = "\n".join(
    (
        "============ Serving Benchmark Result ============",
        "Successful requests:                     8",
        "Maximum request concurrency:             4",
        "Request rate configured (RPS):           4.00",
        "Total input tokens:                      8192",
        "Total generated tokens:                  2048",
        "Mean TPOT (ms):                          9.00",
        "==================================================",
    )
)
CUT = "Only the first 64 of your 65 runs are read"


def _perf(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["perf", *argv, "--json"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_65_runs_are_cut_with_a_note_on_the_cli_and_the_page(
    client: TestClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "\n".join([BLOCK] * 65)
    runs = tmp_path / "runs.txt"
    runs.write_text(text, encoding="utf-8")
    code, out, err = _perf([*LLAMA, *WORKLOAD, "--runs", str(runs)], capsys)
    assert code == 0, err  # round 8: "runs: at most 64 runs"
    cli = json.loads(out)
    body = {**API, "input_tokens": 1024, "output_tokens": 256, "concurrency": 16, "my_runs": text}
    api = client.post("/api/performance", json=body).json()
    assert cli["calibrated_runs"] == api["calibrated_runs"] == 64
    assert any(CUT in note for note in cli["notes"])
    assert any(CUT in note for note in api["notes"])  # round 8: cut without a word
    assert cli["tpot_ms"] == api["tpot_ms"]


def test_a_runs_file_has_the_api_pastes_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs.txt"
    runs.write_text(BLOCK + "\n" * 200_000, encoding="utf-8")  # 200,000 + the block's characters
    code, _, err = _perf([*LLAMA, "--runs", str(runs)], capsys)
    assert code == 2 and "at most 200,000 characters of runs" in err  # round 8: read (up to 1,000,000)


def test_an_api_paste_that_states_no_rate_says_so(client: Any) -> None:
    paste = BLOCK.replace("Request rate configured (RPS):           4.00\n", "")
    run = {**API, "paste": paste}
    data = client.post("/api/performance", json={**API, "measured_runs": [run]}).json()
    said = [n for n in data["notes"] if "states no request rate" in n]
    # round 8: none (the box said it, the API dropped it)
    assert said and said[0].startswith("measured_runs[0].paste: Your run at line 1 states no request rate")
    # the API's sentences are English data whatever Accept-Language says, the caption included
    zh = client.post(
        "/api/performance", json={**API, "measured_runs": [run]}, headers={"Accept-Language": "zh"}
    ).json()
    assert (
        zh["notes"] == data["notes"]
        and zh["speed_caption"] == data["speed_caption"] == "TPOT calibrated on your 1 run"
    )
