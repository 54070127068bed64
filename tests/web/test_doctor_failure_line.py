"""The doctor's verdict box quotes vLLM's own error that ended the start (lane page12 item 3): on a phone the
steps that also show it are screens below the verdict. Before (main at 169e6d0) the box had only the
headline; the line was in step 1's excerpt."""

from __future__ import annotations

import html
import re
from pathlib import Path

from fastapi.testclient import TestClient

from app.web.app import create_app

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
CLIENT = TestClient(create_app())


def _failure(page: str) -> str | None:
    match = re.search(r'id="doctor-failure"[^>]*>.*?<q translate="no">(.*?)</q>', page, re.S)
    return html.unescape(match.group(1)) if match else None


def test_the_refusal_is_quoted_in_the_verdict_box() -> None:
    # calibration record vllm10517-rtx3090-llama31-8b-29k-err: vLLM 0.6.6's ValueError, verbatim
    page = CLIENT.post(
        "/doctor", data={"log": (LOGS / "v0_rtx3090_llama31_8b_29k_error.log").read_text()}
    ).text
    box = page[page.index('id="doctor-verdict"') : page.index('id="doctor-steps"')]
    assert _failure(box) == (
        "The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in "
        "KV cache (23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
        "initializing the engine."
    )


def test_a_start_that_succeeded_has_no_error_line() -> None:
    page = CLIENT.post("/doctor", data={"log": (LOGS / "v1_0.19.0_h100_llama31_8b.log").read_text()}).text
    assert 'id="doctor-verdict"' in page
    assert _failure(page) is None
