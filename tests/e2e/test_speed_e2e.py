"""The Speed section in Chromium: it loads under the partition picture, and moving the concurrency
slider updates the numbers, the chart and the permalink."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import LiveServer, Tab

pytestmark = pytest.mark.e2e

START = (
    "/?v=1&model=nvidia/Llama-3.1-70B-Instruct-FP8&device=nvidia-h200-141gb&vllm_version=0.19.0&max_model_len=9280"
    "&input_tokens=1024&output_tokens=8192&concurrency=16"
)


def test_concurrency_slider_updates_the_speed(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.goto(live_server.base + START)
    ttft = page.locator("#speed-ttft .value")
    expect(ttft).to_be_visible()
    expect(page.locator("#speed-basis")).to_have_text("calibrated")
    expect(page.locator("#kv-cliff")).to_have_count(1)  # one H200 holds few 9,216-token requests
    before_ttft = ttft.inner_text()
    before_tput = page.locator("#speed-throughput .value").inner_text()
    slider = page.locator("#f-conc-slider")
    slider.focus()
    for _ in range(3):  # 16 -> 32 -> 64 -> 128 concurrent clients: past the KV cliff
        slider.press("ArrowRight")
    expect(page).to_have_url(re.compile(r"concurrency=128"))
    expect(page.locator("#f-conc")).to_have_value("128")
    expect(ttft).not_to_have_text(before_ttft)
    expect(page.locator("#speed-kv")).to_contain_text("KV-limited")
    assert page.locator("#speed-throughput .value").inner_text() != before_tput
    tab.shoot("speed")
