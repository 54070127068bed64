"""The Speed section's "Benchmark as vllm bench serve" fieldset in Chromium (issue 23): opening it,
typing --num-prompts turns the simulation on; the section then shows vLLM's result keys and the
binding regime, and the permalink carries the argument under vLLM's name."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import LiveServer, Tab

pytestmark = pytest.mark.e2e

START = "/?v=1&model=meta-llama/Llama-3.1-8B-Instruct&device=nvidia-h100-sxm-80gb&max_model_len=4096"


def test_a_bench_argument_shows_vllms_result_table(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.goto(live_server.base + START)
    expect(page.locator("#speed-ttft .value")).to_be_visible()
    expect(page.locator("#speed-bench")).to_have_count(0)  # off by default
    details = page.locator("#bench-details")
    expect(details).not_to_have_attribute("open", "")
    details.locator("summary").click()
    page.locator("#b-prompts").fill("200")
    page.locator("#b-conc").fill("16")
    expect(page).to_have_url(re.compile(r"num_prompts=200.*max_concurrency=16"))
    table = page.locator("#speed-bench-table")
    expect(table).to_be_visible()
    expect(table.locator("#bench-mean_tpot_ms code")).to_have_text("mean_tpot_ms")
    expect(table.locator("#bench-output_throughput")).to_be_visible()
    expect(page.locator("#speed-bench-summary")).to_contain_text("200 prompts")
    expect(page.locator("#speed-bench-regime")).to_contain_text("Binding regime:")
    page.locator("#speed-bench").scroll_into_view_if_needed()
    tab.shoot("speed-bench")
