"""Phone layout and chart text (issue 24 item 10), measured in Chromium at the walkthrough's sizes.

Every page and input is the walkthrough's (docs: /work/shared/reviews/new-user-walkthrough-2026-12.md):
the platform engineer's 70B permalink, the Qwen3-30B bar whose "S × N need … > pool" was clipped, and
the fleet answer whose cost columns sat off-screen at 1366 px.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import LiveServer, Tab

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1366, "height": 900}
PLATFORM = (
    "/?v=1&model=meta-llama%2FLlama-3.1-70B&devices=8&max_model_len=128000&target_concurrency=64"
    "&gpu_memory_utilization=0.95&tensor_parallel_size=8&concurrency=64"
)
CLIPPED_BAR = "/?v=1&model=Qwen%2FQwen3-30B-A3B&max_model_len=32768&target_concurrency=32"
FLEET = (
    "/fleet?v=1&model=meta-llama%2FLlama-3.1-70B-Instruct&max_model_len=32768&input_tokens=2000"
    "&output_tokens=500&requests_per_s=30&slo_ttft_ms=1500&slo_tpot_ms=40&price_per_device_hour=3"
    "&devices_per_node=8"
)
MIN_TEXT_PX = 10  # a chart's text box on a phone; ~7 px (the walkthrough's measure) is unreadable


def _open(page: Page, url: str, size: dict[str, int]) -> None:
    page.set_viewport_size(size)
    page.goto(url)
    expect(page.locator("#verdict")).to_be_visible()


def test_the_phone_says_the_verdict_on_its_first_screen(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    _open(page, live_server.base + PLATFORM, PHONE)
    summary = page.locator("#phone-summary")
    expect(summary).to_be_visible()
    box = summary.bounding_box()
    assert box is not None and box["y"] + box["height"] <= PHONE["height"]
    headline = page.locator("#verdict h2").inner_text()
    expect(summary.locator("strong")).to_have_text(headline)
    expect(summary).to_contain_text("10.79x")  # the pool's 10.79 sequences of 128,000 tokens
    # it follows the inputs: N = 8 fits (10.79 ≥ 8), and the summary turns with the verdict
    page.locator("#f-target").fill("8")
    expect(page.locator("#verdict")).to_have_attribute("data-verdict", "fits")
    expect(summary).to_have_class("phone-summary verdict-ok")
    # the link goes to the result
    summary.click()
    expect(page.locator("#verdict")).to_be_in_viewport()


def test_the_desktop_has_no_phone_summary(live_server: LiveServer, tab: Tab) -> None:
    _open(tab.page, live_server.base + PLATFORM, DESKTOP)
    expect(tab.page.locator("#phone-summary")).to_be_hidden()


def _text_boxes(page: Page, selector: str) -> list[dict[str, float]]:
    return page.evaluate(
        """(sel) => [...document.querySelectorAll(sel + ' text')]
             .filter(t => getComputedStyle(t).display !== 'none')
             .map(t => { const b = t.getBoundingClientRect();
                         return {text: t.textContent, x: b.x, y: b.y, w: b.width, h: b.height,
                                 cls: t.getAttribute('class') || ''}; })""",
        selector,
    )


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["w"]
        and b["x"] < a["x"] + a["w"]
        and a["y"] < b["y"] + b["h"]
        and b["y"] < a["y"] + a["h"]
    )


def test_chart_text_is_readable_on_a_phone(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    _open(page, live_server.base + PLATFORM, PHONE)
    expect(page.locator("svg.speed-chart")).to_be_attached()
    for chart in ("svg.speed-chart", "svg.capacity-chart"):
        page.locator(chart).scroll_into_view_if_needed()
        svg = page.locator(chart).bounding_box()
        assert svg is not None
        boxes = _text_boxes(page, chart)
        assert boxes, chart
        for box in boxes:
            assert box["h"] >= MIN_TEXT_PX, (chart, box)
            # nothing runs past the chart's edges ("128K" was cut at the right)
            assert svg["x"] - 1 <= box["x"] and box["x"] + box["w"] <= svg["x"] + svg["width"] + 1, (
                chart,
                box,
            )
        ticks = [b for b in boxes if "axis-label" in b["cls"]]
        for title in (b for b in boxes if "axis-title" in b["cls"]):
            assert not any(_overlap(title, tick) for tick in ticks), title  # the y title sat on "1,000"


def test_the_speed_chart_says_which_line_is_which(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    _open(page, live_server.base + PLATFORM, DESKTOP)
    legend = page.locator("svg.speed-chart text.legend")
    expect(legend).to_have_count(2)
    expect(legend.nth(0)).to_have_text("Output tokens/s of the replica (left axis)")
    expect(legend.nth(1)).to_have_text("Time per output token, ms (right axis)")
    units = page.locator("svg.speed-chart text.axis-unit")
    expect(units).to_have_text(["tokens/s", "ms"])
    # the axes start at 0, not "0.00"
    assert "0.00" not in page.locator("svg.speed-chart").inner_html()


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_demand_label_stays_inside_the_bar(
    live_server: LiveServer, tab: Tab, size: dict[str, int]
) -> None:
    page = tab.page
    _open(page, live_server.base + CLIPPED_BAR, size)
    bar = page.locator("svg.partition-bar")
    label = bar.locator("text.demand-label")
    expect(label).to_have_text("S × N need 96.0 GiB > pool")  # 32 × 32,768 tokens × 96 KiB = 96 GiB
    outer, inner = bar.bounding_box(), label.bounding_box()
    assert outer is not None and inner is not None
    assert inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 1


def test_fleet_cost_columns_are_on_screen_at_1366(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.set_viewport_size(DESKTOP)
    page.goto(live_server.base + FLEET)
    table = page.locator("#fleet-table")
    expect(table).to_be_visible()
    box = page.locator(".table-scroll").first.bounding_box()
    assert box is not None
    for name in ("Cost per hour", "Cost per million output tokens", "SLO", "TTFT ms", "TPOT ms"):
        header = table.locator("thead th", has_text=name).first.bounding_box()
        assert header is not None and header["x"] + header["width"] <= box["x"] + box["width"], name
