"""The doctor's step 1 on a start vLLM refused, and the release its planner link carries (issue 24 item 8)."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from fastapi.testclient import TestClient

from app.core.diagnose import diagnose

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
# A real V1 0.11.0 start that died with "To serve at least one request with the models's max seq len
# (221000), (10.12 GiB KV cache is needed, which is larger than the available KV cache memory (5.59 GiB)."
S_ERROR = LOGS / "v1_0.11.0_fp8kv_221k_error.log"
# A real start-up log that prints "vLLM API server version 0.11.0" and runs
FITS = LOGS / "v1_0.11.0_llama31_8b.log"
# A real V0 run of vLLM 0.8.1 (a V1-era release running the V0 engine)
V0_RUN = LOGS / "v0_0.8_llama2_7b.log"


def test_step_one_is_red_when_vllm_refused_one_request() -> None:
    d = diagnose(log_text=S_ERROR.read_text(), metrics_text=None)
    step = d.steps[0]
    assert step.key == "kv_lines" and step.status == "fail"
    assert "Enough blocks" not in step.explanation
    # 221,000 tokens of fp8 KV need the 10.12 GiB vLLM printed; the pool has 5.59 GiB
    assert "one sequence of max_model_len 221,000 needs 10.12 GiB of KV" in step.explanation
    assert "KV pool 5.59 GiB" in step.explanation
    assert step.verdict == "5.59 GiB: too small for one request"


def test_step_one_on_the_page_in_both_languages(client: TestClient) -> None:
    for lang, word in (("en", "Enough blocks"), ("zh", "块数充足")):
        r = client.post("/doctor", data={"log": S_ERROR.read_text(), "lang": lang}, params={"lang": lang})
        assert r.status_code == 200
        text = html.unescape(r.text)
        step = re.search(r'<li class="card step step-(\w+)" id="step-1"[^>]*data-tone="(\w+)"', text)
        assert step and step.group(2) == "bad", step and step.group(0)
        assert word not in text


def test_a_step_one_that_fits_still_says_enough_blocks() -> None:
    d = diagnose(log_text=FITS.read_text(), metrics_text=None)
    assert d.steps[0].status == "ok" and "Enough blocks" in d.steps[0].explanation


def _link_version(client: TestClient, log: str) -> tuple[str, str]:
    r = client.post("/doctor", data={"log": log})
    assert r.status_code == 200
    text = html.unescape(r.text)
    href = re.search(r'<a id="open-planner" class="button-link" href="([^"]+)"', text).group(1)
    return parse_qs(urlparse(href).query)["vllm_version"][0], text


def test_the_planner_link_carries_the_printed_release(client: TestClient) -> None:
    # The walkthrough composed a 0.10.1.1 log; here the real 0.11.0 log with its banner saying 0.10.1.1.
    # 0.10.1.1 plans under 0.10.2's rules on the planner ("vLLM 0.10.1.1 (rules of 0.10.2)"), the rules
    # the doctor replays it with, so the link carries the printed 0.10.1.1, not 0.10.2.
    log = FITS.read_text().replace("vLLM API server version 0.11.0", "vLLM API server version 0.10.1.1")
    version, _ = _link_version(client, log)
    assert version == "0.10.1.1"
    planner = html.unescape(client.get(f"/?vllm_version={version}&model=meta-llama/Llama-3.1-8B").text)
    assert "0.10.1.1" in planner and "0.10.2" in planner


def test_a_link_with_another_release_says_why(client: TestClient) -> None:
    # 0.8.1 ran the V0 engine: the doctor replays it with 0.7.3's V0 rules and the link must say so
    version, text = _link_version(client, V0_RUN.read_text())
    assert version == "0.7.3"
    assert "The log says vLLM 0.8.1; the planner opens with 0.7.3" in text
    assert "ran the V0 engine here" in text
