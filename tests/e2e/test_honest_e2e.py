"""Honest numbers in a real Chromium: the borderline note on the planner, the compare view, and the
accuracy report, with screenshots at 1280 and 390 px (tests/e2e/artifacts/1x-*.png)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.specs import ServeConfig
from app.web.inputs.params import DEFAULT_DEVICE, DEFAULT_MODEL
from tests.e2e.conftest import LiveServer, Tab

pytestmark = pytest.mark.e2e

BORDERLINE_UTIL = 0.3  # Llama-3.1-8B on one H100 at 0.3, max_model_len = its estimated maximum


def _borderline_len() -> tuple[int, int]:
    model, device = find_model(DEFAULT_MODEL), find_device(DEFAULT_DEVICE)
    probe = estimate(model=model, device=device, serve=ServeConfig(gpu_memory_utilization=BORDERLINE_UTIL))
    assert probe.estimated_max_model_len
    length = probe.estimated_max_model_len
    est = estimate(
        model=model,
        device=device,
        serve=ServeConfig(gpu_memory_utilization=BORDERLINE_UTIL, max_model_len=length),
    )
    assert est.borderline and est.safe_max_model_len
    return length, est.safe_max_model_len


def test_borderline_planner(live_server: LiveServer, tab: Tab):
    length, safe = _borderline_len()
    page = tab.page
    page.goto(f"{live_server.base}/?v=1&gpu_memory_utilization=0.3&max_model_len={length}")
    expect(page.locator("#borderline")).to_be_visible()
    expect(page.locator("#borderline-safe-len")).to_contain_text(f"max_model_len ≤ {safe:,}")
    expect(page.locator("#numbers .badge-modelled")).to_have_count(1)
    tab.shoot("10-borderline")
    # the note follows the inputs: at the safe length the note goes away
    page.locator("#f-mml").fill(str(safe))
    expect(page).to_have_url(re.compile(rf"max_model_len={safe}"))
    expect(page.locator("#borderline")).to_have_count(0)
    # the explanation opens
    page.locator("#exact-details summary").click()
    expect(page.locator("#exact-details")).to_contain_text("What vLLM measures at start-up")


def test_compare_view(live_server: LiveServer, tab: Tab):
    page = tab.page
    page.goto(f"{live_server.base}/?v=1&max_model_len=32768")
    page.locator("#compare-link").click()
    expect(page).to_have_url(re.compile(r"/compare\?.*a=0\.33\.0&b=0\.19\.0"))
    page.select_option("#c-b", "0.11.0")
    page.get_by_role("button", name="Compare").click()
    expect(page).to_have_url(re.compile(r"a=0\.33\.0&b=0\.11\.0"))
    expect(page.locator("#c-utilization-a")).to_have_text("0.92 (this version's default)")
    expect(page.locator("#c-utilization-b")).to_have_text("0.9 (this version's default)")
    expect(page.locator("#c-graphs-a")).to_contain_text("CUDA graphs subtracted")
    expect(page.locator("#c-graphs-b")).not_to_contain_text("CUDA graphs subtracted")
    expect(page.locator("#compare-table tr.differs").first).to_be_visible()
    page.goto(f"{live_server.base}/compare?v=1&max_model_len=32768&a=0.19.0&b=0.33.0")
    tab.shoot("11-compare")


def test_accuracy_report(live_server: LiveServer, tab: Tab):
    page = tab.page
    page.goto(live_server.base + "/")
    page.locator("#footer-accuracy").click()
    expect(page).to_have_url(re.compile(r"/accuracy$"))
    expect(page.locator("#doc table.doc-table").first).to_be_visible()
    expect(page.locator("#doc h1")).to_have_text("Accuracy against real vLLM start-up logs")
    tab.shoot("12-accuracy")
