"""The explore page in a real Chromium against a live server: preset picker, charts, permalink."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import LiveServer, Tab

pytestmark = pytest.mark.e2e

METRIC_IDS = (
    "w-max-running",
    "w-mean-running",
    "w-preemptions",
    "w-prefix-hit",
    "w-steps",
    "w-binding-limit",
)


def metrics(tab: Tab) -> dict[str, str]:
    return {key: tab.page.locator(f"#{key}").inner_text().strip() for key in METRIC_IDS}


def test_pick_a_preset_then_reopen_the_url(live_server: LiveServer, tab: Tab):
    page = tab.page
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)  # CSP too
    page.goto(live_server.base + "/explore")
    expect(page.locator("#chart-kv")).to_be_visible()
    expect(page.locator("#w-title")).to_contain_text("Long and short mixed")
    before = metrics(tab)

    page.locator("label", has_text="Many short requests").click()
    expect(page).to_have_url(re.compile(r"preset=many_short"))
    expect(page.locator("#w-title")).to_contain_text("Many short requests")
    expect(page.locator("#chart-kv")).to_be_visible()
    expect(page.locator("#chart-rw")).to_be_visible()
    expect(page.locator("#chart-rw polyline.series-running")).to_have_count(1)
    after = metrics(tab)
    assert after != before
    assert dict(parse_qsl(urlsplit(page.url).query)) == {"v": "1", "preset": "many_short"}
    tab.shoot("explore-many-short")

    # the address bar is the permalink: a fresh load shows the same numbers
    url = page.url
    page.goto(url)
    expect(page.locator("#w-title")).to_contain_text("Many short requests")
    assert metrics(tab) == after
    assert page.locator('input[name="preset"][value="many_short"]').is_checked()

    # typing a typical length reworks the tail-waste table (S = 1000, B = 16: 8 of 1008 slots)
    box = page.locator("#e-lengths")
    box.fill("1000")
    expect(page).to_have_url(re.compile(r"typical_lengths=1000"))
    expect(page.locator("#waste-table tbody tr")).to_have_count(1)
    expect(page.locator("#waste-table tbody tr td").nth(2)).to_have_text("8")

    outside = [
        u for u in tab.requests if not u.startswith(live_server.origin + "/") and not u.startswith("data:")
    ]
    assert outside == []
    assert errors == []


def test_prefix_checkbox_and_seed_example(live_server: LiveServer, tab: Tab):
    page = tab.page
    page.goto(live_server.base + "/explore?shared_prefix_tokens=14&prefix_block_size=4")
    expect(page.locator("#p-hit")).to_have_text("12")
    page.get_by_label("cache_salt (tenant isolation)").check()
    expect(page).to_have_url(re.compile(r"cache_salt=true"))
    expect(page.locator("#p-hit")).to_have_text("0")
    expect(page.locator("#p-differing")).to_contain_text("cache_salt")
    expect(page.locator("#fn-misprint")).to_contain_text("3 full blocks")
    # the page stylesheet applied (a CSP-blocked one would leave the checked preset unstyled)
    assert (
        page.locator("tr.current th").first.evaluate("e => getComputedStyle(e).backgroundColor")
        != "rgba(0, 0, 0, 0)"
    )
    tab.shoot("explore-prefix-salt")
