"""Chinese interface in a real Chromium: the planner and the doctor in Chinese (screenshots at 1280
and 390 px in tests/e2e/artifacts/i18n-*.png), a ``lang=zh`` permalink, and the header switch."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import LiveServer, Tab

pytestmark = pytest.mark.e2e

DATA = Path(__file__).resolve().parents[1] / "data" / "logs"
ERROR_LOG = DATA / "v0_rtx3090_llama31_8b_29k_error.log"
PLANNER = "/?v=1&max_model_len=131072&target_concurrency=64"
CJK = re.compile(r"[\u4e00-\u9fff]")
TIMEOUT_MS = 15_000


def _no_horizontal_scroll(tab: Tab) -> None:
    tab.page.set_viewport_size({"width": 390, "height": 900})
    overflow = tab.page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    tab.page.set_viewport_size({"width": 1280, "height": 900})
    assert overflow <= 1, f"the Chinese page scrolls sideways at 390 px by {overflow}px"


def test_planner_in_chinese(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.goto(live_server.base + PLANNER + "&lang=zh")
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    expect(page.locator("#verdict")).to_be_visible()
    expect(page.locator(".site-nav")).to_contain_text("规划器")
    expect(page.locator("#recommend")).to_be_visible(timeout=TIMEOUT_MS)  # loaded by htmx after the results
    recommend = page.locator("#recommend").inner_text()
    assert CJK.search(recommend) and "--kv-cache-dtype" in recommend  # flags verbatim
    assert "max_model_len" in page.locator("#f-mml").locator("xpath=..").locator("xpath=..").inner_text()
    _no_horizontal_scroll(tab)
    tab.shoot("i18n-planner-zh")
    # a slider move keeps the language: the replaced URL carries lang=zh
    page.fill("#f-target", "8")
    page.wait_for_url(re.compile(r"target_concurrency=8"), timeout=TIMEOUT_MS)
    assert parse_qs(urlsplit(page.url).query).get("lang") == ["zh"]
    expect(page.locator("#verdict")).to_contain_text(re.compile("[\u4e00-\u9fff]"))


def test_doctor_in_chinese(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.goto(live_server.base + "/doctor?lang=zh")
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    page.fill("#d-log", ERROR_LOG.read_text())
    page.click("#d-submit")
    expect(page.locator("#doctor-steps > li.step")).to_have_count(5)
    expect(page.locator("#doctor-verdict")).to_have_attribute("data-verdict", "s_bound")
    expect(page.locator("#step-4 .step-verdict")).to_have_text("S 侧")
    expect(page.locator("#step-1 pre.excerpt")).to_contain_text("# GPU blocks: 1478")  # log lines verbatim
    assert CJK.search(page.locator("#doctor-verdict").inner_text())
    _no_horizontal_scroll(tab)
    tab.shoot("i18n-doctor-zh")
    page.click("#open-planner")
    page.wait_for_url("**/?v=1&*", timeout=TIMEOUT_MS)
    assert parse_qs(urlsplit(page.url).query).get("lang") == ["zh"]
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")


def test_a_lang_zh_permalink_opens_in_chinese(live_server: LiveServer, browser) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context(locale="en-US")  # a fresh visitor: no cookie, English browser
    page = context.new_page()
    page.goto(live_server.base + PLANNER + "&lang=zh")
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    expect(page.locator("h2").first).to_contain_text(re.compile("[\u4e00-\u9fff]"))
    context.close()


def test_header_switch_flips_language_and_keeps_parameters(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.goto(live_server.base + PLANNER)
    expect(page.locator("html")).to_have_attribute("lang", "en")
    page.click("#lang-zh")
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    query = parse_qs(urlsplit(page.url).query)
    assert query["max_model_len"] == ["131072"] and query["target_concurrency"] == ["64"]
    expect(page.locator("#f-mml")).to_have_value("131072")
    # the cookie remembers the choice on another page
    page.goto(live_server.base + "/explore")
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    tab.shoot("i18n-explore-zh")
    page.click("#lang-en")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    page.goto(live_server.base + "/doctor")
    expect(page.locator("html")).to_have_attribute("lang", "en")
