"""The fleet page's Pareto chart in Chromium, in English and Chinese, on a desktop and a phone: the
frontier's points are the table's rows, the SLO line is drawn, the axis labels stay readable at 390 px,
and a point opens the planner on its layout and clients."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import ARTIFACTS, LiveServer, Tab

pytestmark = pytest.mark.e2e

QUERY = "v=1&model=meta-llama/Llama-3.1-70B&max_model_len=8192&devices_per_node=8"
MIN_PHONE_TEXT_PX = 10  # the smallest label height we accept on a 390-px-wide phone


def _chart_checks(tab: Tab) -> None:
    page = tab.page
    chart = page.locator("svg.pareto-chart")
    expect(chart).to_be_visible()
    points = page.locator("svg.pareto-chart a.pareto-point")
    rows = page.locator("#pareto-table tbody tr")
    assert points.count() >= 3 and points.count() == rows.count()
    expect(page.locator("#pareto-slo")).to_have_count(1)


def _shoot_chart(tab: Tab, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    for width in (1280, 390):
        tab.page.set_viewport_size({"width": width, "height": 900})
        tab.page.locator("#h-pareto").scroll_into_view_if_needed()
        tab.page.locator("section[aria-labelledby=h-pareto]").screenshot(
            path=str(ARTIFACTS / f"{name}-{width}.png")
        )
        if width == 390:
            heights = tab.page.eval_on_selector_all(
                "svg.pareto-chart text", "els => els.map(e => e.getBoundingClientRect().height)"
            )
            assert heights and min(heights) >= MIN_PHONE_TEXT_PX, heights
    tab.page.set_viewport_size({"width": 1280, "height": 900})


def test_the_frontier_is_drawn_and_a_point_opens_the_planner(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.goto(f"{live_server.base}/fleet?{QUERY}")
    _chart_checks(tab)
    expect(page.locator("#h-pareto")).to_have_text("Throughput against interactivity (Pareto frontier)")
    _shoot_chart(tab, "fleet-pareto-en")
    first = page.locator("svg.pareto-chart a.pareto-point").first
    href = first.get_attribute("href") or ""
    clients = re.search(r"concurrency=(\d+)", href)
    assert clients is not None
    first.click()
    expect(page).to_have_url(re.compile(r"/\?v=1&"))
    expect(page.locator("#verdict")).to_be_visible()
    assert f"concurrency={clients.group(1)}" in page.url


def test_the_chart_in_chinese(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.goto(f"{live_server.base}/fleet?{QUERY}&lang=zh")
    _chart_checks(tab)
    expect(page.locator("#h-pareto")).to_have_text("吞吐与交互性的权衡（帕累托前沿）")
    expect(page.locator("svg.pareto-chart")).to_contain_text("每用户 tokens/s")
    _shoot_chart(tab, "fleet-pareto-zh")
