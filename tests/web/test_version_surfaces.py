"""One version resolver behind every surface: page, permalink, API, compare, doctor and CLI agree
(issue 13 "Versions"; issue 19: a version followed by thousands of digits is a 4xx, not a 500)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "logs"
LONG = "0.19.0" + "9" * 5000  # past Python's 4300-digit int() limit
BASE = "/api/estimate?model=meta-llama/Llama-3.1-8B-Instruct&device=nvidia-h100-sxm-80gb"


@pytest.mark.parametrize(
    ("given", "shown", "rules"),
    [
        ("0.11.2", "0.11.2", "0.11.0"),
        ("0.13.0", "0.13.0", "0.13.0"),  # a known release from round 10
        ("0.12.0", "0.12.0", "0.11.0"),
        ("0.23.0", "0.23.0", "0.22.1"),
        ("0.10.1.1", "0.10.1.1", "0.10.2"),
        ("v0.11.2", "0.11.2", "0.11.0"),
        ("0.14.0rc2+cu130", "0.14.0rc2+cu130", "0.14.0"),
        ("0.19.2rc1.dev8+g4b7f5ea1a", "0.19.2rc1.dev8+g4b7f5ea1a", "0.19.0"),
        ("0.6.4.post1", "0.6.4.post1", "0.6.6"),
    ],
)
def test_api_takes_the_versions_people_run(client: TestClient, given: str, shown: str, rules: str) -> None:
    r = client.get(BASE, params={"vllm_version": given})
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["vllm_version"], body["vllm_rules_version"]) == (shown, rules)
    assert body["inputs"]["vllm_version"] == shown
    # the same numbers as the release whose rules were used
    known = client.get(BASE, params={"vllm_version": rules}).json()
    assert (body["kv_cache_bytes"], body["num_gpu_blocks"]) == (
        known["kv_cache_bytes"],
        known["num_gpu_blocks"],
    )


def test_api_post_normalizes_and_warns_past_the_newest(client: TestClient) -> None:
    r = client.post(
        "/api/estimate",
        json={
            "model": "meta-llama/Llama-3.1-8B-Instruct",
            "device": "nvidia-h100-sxm-80gb",
            "vllm_version": "0.40.0",
        },
    )
    assert r.status_code == 200
    body = r.json()
    assert (body["vllm_version"], body["vllm_rules_version"]) == (
        "0.40.0",
        "0.34.0",
    )  # 0.34.0 known from round 11
    assert body["warnings"][0].startswith(
        "vLLM 0.40.0 is newer than 0.34.0, the newest release the planner knows"
    )


@pytest.mark.parametrize("bad", ["0.5.4", "banana", LONG, "0.19.0" + "x" * 1_000_000])
def test_api_refuses_with_a_422_naming_the_field(client: TestClient, bad: str) -> None:
    r = client.post(
        "/api/estimate",
        json={
            "model": "meta-llama/Llama-3.1-8B-Instruct",
            "device": "nvidia-h100-sxm-80gb",
            "vllm_version": bad,
        },
    )
    assert r.status_code == 422
    (error,) = r.json()["detail"]
    assert error["loc"][-1] == "vllm_version"
    assert len(error["msg"]) < 120  # the message quotes at most 40 characters of the input


def test_page_shows_the_rules_used_and_keeps_the_version_selected(client: TestClient) -> None:
    r = client.get("/", params={"vllm_version": "0.23.0"})
    assert r.status_code == 200
    assert "vLLM 0.23.0 (rules of 0.22.1)" in r.text
    assert '<option value="0.23.0" selected>0.23.0 (rules of 0.22.1)</option>' in r.text
    assert 'id="banner"' not in r.text
    # a known release: no extra option, no "rules of"
    known = client.get("/", params={"vllm_version": "0.21.0"}).text
    assert "rules of" not in known and '<option value="0.21.0" selected>0.21.0</option>' in known


def test_page_refuses_a_huge_version_with_a_banner(client: TestClient) -> None:
    r = client.get("/", params={"vllm_version": LONG})
    assert r.status_code == 422  # nothing computed for another release (issue 24 item 1)
    banner = r.text[r.text.index('data-unusable="') :]
    assert "<code>vllm_version</code>" in banner and "is too long" in banner


def test_compare_takes_any_version(client: TestClient) -> None:
    r = client.get("/compare", params={"a": "0.23.0", "b": "v0.13.0"})
    assert r.status_code == 200 and 'id="banner"' not in r.text
    assert '<option value="0.23.0" selected>0.23.0 (rules of 0.22.1)</option>' in r.text


def test_doctor_reads_dev_builds_and_survives_a_version_of_thousands_of_digits(client: TestClient) -> None:
    log = (DATA / "v1_0.19.0_h100_llama31_8b.log").read_text(encoding="utf-8")
    assert "version 0.19.0" in log
    dev = client.post(
        "/api/diagnose", content=log.replace("version 0.19.0", "version 0.19.2rc1.dev8+g4b7f5ea1a")
    )
    assert dev.status_code == 200 and dev.json()["vllm_version_used"] == "0.19.0"
    # the log parser captures at most 64 characters of a version (app/core/vllm_text.py VERSION), so a
    # printed 0.19.<thousands of digits> reads as a 0.19 patch release: 0.19's rules, no 5xx
    long = client.post("/api/diagnose", content=log.replace("version 0.19.0", "version " + LONG))
    assert long.status_code == 200 and long.json()["vllm_version_used"] == "0.19.0"


def test_cli_takes_the_same_versions(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["estimate", "llama-3.1-8b", "--device", "h100", "--vllm-version", "0.23.0", "--json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["vllm_version"], data["vllm_rules_version"]) == ("0.23.0", "0.22.1")
    assert main(["estimate", "llama-3.1-8b", "--device", "h100", "--vllm-version", "0.5.4"]) != 0
    assert "vllm_version: vLLM 0.5.4 is older than 0.6" in capsys.readouterr().err
