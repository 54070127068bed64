"""The one-line phone answer names every input that stops the page, on /fleet and /explore as on the planner
(web review of round 12: /fleet?requests_per_s=abc&slo_ttft_ms=xyz and /explore?max_model_len=lots&block_size=q
named only one of the two)."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi.testclient import TestClient

from app.web.app import create_app

CLIENT = TestClient(create_app())
DATA = Path(__file__).parents[1] / "data" / "configs" / "heldout_0_33q"


def _phone_fields(path: str) -> list[str]:
    page = CLIENT.get(path).text
    match = re.search(r'<a id="phone-summary".*?</a>', page, re.S)
    assert match, path
    return re.findall(r"<code>([^<]+)</code>", match.group(0))


def test_fleet_names_both_bad_inputs() -> None:
    assert _phone_fields("/fleet?requests_per_s=abc&slo_ttft_ms=xyz") == ["requests_per_s", "slo_ttft_ms"]


def test_explore_names_both_bad_inputs() -> None:
    assert sorted(_phone_fields("/explore?max_model_len=lots&block_size=q")) == [
        "block_size",
        "max_model_len",
    ]


def test_the_planner_still_names_each_bad_input() -> None:
    assert sorted(_phone_fields("/?device=h999&max_model_len=lots")) == ["device", "max_model_len"]


def test_a_refused_combination_names_its_field_on_the_phone_line() -> None:
    # Llama-2-7B AWQ (group 128; tests/data/configs/heldout_0_33q, sgl-project/ome's fixture) at TP 8: each rank
    # holds 11,008 / 8 = 1,376 = 10 x 128 + 96 of down_proj's inputs, so vLLM 0.33.0 cannot build the layer
    # (app/core/quant_shards.py). The phone's first screen said "vLLM would refuse this combination" without the
    # field (Chromium at 390 px, round 14); the refusal's field is named as the input problems' are
    config = (DATA / "sgl-project--ome-quant-awq-llama-2-7b_config.json").read_text()
    page = CLIENT.post(
        "/", data={"config_json": config, "tensor_parallel_size": "8", "max_model_len": "4096"}
    ).text
    match = re.search(r'<a id="phone-summary".*?</a>', page, re.S)
    assert match
    assert "vLLM would refuse this combination" in match.group(0)
    assert re.findall(r"<code>([^<]+)</code>", match.group(0)) == ["tensor_parallel_size"]
