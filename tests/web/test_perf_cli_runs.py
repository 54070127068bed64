"""`kvplan perf` takes your runs and the API's clients fallback (issue 23 round 7, speedpage7 fault 1).

Before: `kvplan perf` had no way to read your measured runs (``--runs`` was an unknown option) and built
its own workload with a private 16-client default, so ``--target-concurrency 40`` modelled 16 clients
while the page and /api/performance model 40. Now one builder (app.core.perf.workload.speed_workload)
serves all three, and ``--runs FILE`` is read as the page's "Your own runs" box reads it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.cli import main

LLAMA = ["llama-3.1-8b", "--device", "nvidia-h100-sxm-80gb", "--max-model-len", "4096"]
API = {"model": "meta-llama/Llama-3.1-8B-Instruct", "device": "nvidia-h100-sxm-80gb", "max_model_len": 4096}
WORKLOAD = ["--input-len", "1024", "--output-len", "256", "--concurrency", "16"]
# vLLM 0.19.0's printed lines; 200 prompts x 1,024 / 256 tokens = 204,800 input / 51,200 generated
RUN = "\n".join(
    (
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 4096",
        "============ Serving Benchmark Result ============",
        "Successful requests:                     200",
        "Maximum request concurrency:             16",
        "Request rate configured (RPS):           4.00",
        "Total input tokens:                      204800",
        "Total generated tokens:                  51200",
        "Mean TPOT (ms):                          9.00",
        "==================================================",
    )
)


def _perf(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["perf", *argv, "--json"]) == 0
    answer: dict[str, Any] = json.loads(capsys.readouterr().out)
    return answer


def test_target_concurrency_is_the_clients_fallback_as_on_the_api(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    # no --concurrency and no benchmark cap: the target concurrency N is the clients (was 16)
    cli = _perf([*LLAMA, "--target-concurrency", "40"], capsys)
    api = client.post("/api/performance", json={**API, "target_concurrency": 40}).json()
    assert cli["concurrency"] == api["concurrency"] == 40
    assert cli["tpot_ms"] == api["tpot_ms"]


def test_runs_file_calibrates_what_it_measured_as_the_api(
    client: TestClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs.txt"
    runs.write_text(RUN, encoding="utf-8")
    plain = _perf([*LLAMA, *WORKLOAD], capsys)
    cli = _perf([*LLAMA, *WORKLOAD, "--runs", str(runs)], capsys)
    body = {**API, "input_tokens": 1024, "output_tokens": 256, "concurrency": 16, "my_runs": RUN}
    api = client.post("/api/performance", json=body).json()
    assert plain["calibrated_runs"] == 0
    assert cli["calibrated_runs"] == api["calibrated_runs"] == 1
    # the same factor as the API's: measured 9.00 ms over the simulated run's prediction
    assert cli["tpot_ms"] == api["tpot_ms"]
    assert cli["tpot_ms"]["expected"] != plain["tpot_ms"]["expected"]
    # the run measured no TTFT: it keeps the model's band
    assert cli["ttft_ms"] == plain["ttft_ms"]


def test_a_bad_runs_file_names_runs_and_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs.txt"
    runs.write_text(RUN.replace("9.00", "nine"), encoding="utf-8")
    assert main(["perf", *LLAMA, "--runs", str(runs)]) == 2
    err = capsys.readouterr().err
    assert "runs" in err and "line 8" in err, err  # "Mean TPOT (ms): nine" is the file's line 8
    assert main(["perf", *LLAMA, "--runs", str(tmp_path / "missing.txt")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_a_runs_file_whose_serve_line_is_broken_names_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # an unbalanced quote in the run's serve line had escaped as shlex's ValueError (a traceback); an unknown
    # model in it named `model`, not the file's line; `--runs=` (no file) was silently ignored
    runs = tmp_path / "runs.txt"
    runs.write_text(RUN.replace("vllm serve meta-llama", 'vllm serve "meta-llama'), encoding="utf-8")
    assert main(["perf", *LLAMA, "--runs", str(runs)]) == 2
    err = capsys.readouterr().err
    assert "runs: line" in err and "cannot split" in err, err
    runs.write_text(RUN.replace("meta-llama/Llama-3.1-8B-Instruct", "no-such/model-xyz"), encoding="utf-8")
    assert main(["perf", *LLAMA, "--runs", str(runs)]) == 2
    assert "runs: line" in capsys.readouterr().err
    assert main(["perf", *LLAMA, "--runs="]) == 2
    assert "--runs needs a file" in capsys.readouterr().err
