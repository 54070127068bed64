"""CLI conventions a new user trips on (issue 24 item 12; inputs from the walkthrough's step 3)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["estimate", "meta-llama/Llama-3.1-8B", "--devce", "h100"],
            "error: option: unknown kv-planner option --devce (did you mean --device?)",
        ),
        (
            ["perf", "meta-llama/Llama-3.1-8B", "--device", "h100", "--concurency", "64"],
            "error: option: unknown kv-planner option --concurency (did you mean --concurrency?)",
        ),
    ],
)
def test_a_typo_in_kvplans_own_option_is_named_as_kvplans(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == message and "vllm serve" not in err


def test_a_vllm_flag_typo_is_still_vllms(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["estimate", "meta-llama/Llama-3.1-8B", "--device", "h100", "--max-modle-len", "32k"]
    assert main(argv) == 2
    assert (
        "unrecognized arguments: --max-modle-len (did you mean --max-model-len?)" in capsys.readouterr().err
    )


def test_perf_lengths_take_k_like_max_model_len(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["perf", "meta-llama/Llama-3.1-8B", "--device", "h100", "--output-len", "500", "--json"]
    assert main([*base, "--input-len", "2k", "--concurrency", "8"]) == 0
    out = json.loads(capsys.readouterr().out)
    # 2k = 2,000 (lower-case k is decimal, as vLLM reads --max-model-len 2k); 2K = 2,048
    assert out["input_tokens"] == 2000 and out["output_tokens"] == 500 and out["concurrency"] == 8
    assert main([*base, "--input-len", "2K"]) == 0
    assert json.loads(capsys.readouterr().out)["input_tokens"] == 2048


def test_the_verdict_prints_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    # 70B at TP 8 on H100, 128k: 10.79 sequences fit, fewer than the target 64 (the walkthrough's case)
    argv = ["estimate", "meta-llama/Llama-3.1-70B", "--device", "h100", "-tp", "8", "--max-model-len", "128k"]
    assert main([*argv, "--target-concurrency", "64"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.strip().startswith("verdict"))
    assert "N-side: the concurrency does not fit" in line and "n_bound" not in line


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_serve_takes_a_port() -> None:
    def serve_line(*args: str) -> str:
        out = subprocess.run(
            ["make", "-n", "-C", str(ROOT), "serve", *args], capture_output=True, text=True, check=True
        ).stdout
        return next(ln for ln in out.splitlines() if " serve " in ln)

    assert serve_line("PORT=9000").endswith("--port 9000")
    assert serve_line().endswith("--port 8000")
