"""The one-line phone answer names every input that stops the page, on /fleet and /explore as on the planner
(web review of round 12: /fleet?requests_per_s=abc&slo_ttft_ms=xyz and /explore?max_model_len=lots&block_size=q
named only one of the two)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.web.app import create_app

CLIENT = TestClient(create_app())


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
