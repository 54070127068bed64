"""The fleet page in Chromium: fill the form, see the ranked table, open a candidate in the planner and
find the same weights, KV pool, clients, TTFT and TPOT there."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import LiveServer, Tab

pytestmark = pytest.mark.e2e


def test_fill_the_form_and_open_a_candidate_in_the_planner(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.goto(live_server.base + "/")
    page.locator("#nav-fleet").click()
    expect(page).to_have_url(re.compile(r"/fleet"))
    page.locator("#g-model").fill("meta-llama/Llama-3.1-70B")
    page.locator("#g-mml").fill("8192")
    page.locator("#g-rps").fill("30")
    page.locator("#g-tpot").fill("40")
    page.locator("#g-submit").click()
    expect(page).to_have_url(re.compile(r"requests_per_s=30"))
    expect(page).to_have_url(re.compile(r"slo_tpot_ms=40"))
    rows = page.locator("#fleet-table tbody tr")
    expect(rows.first).to_be_visible()
    assert rows.count() >= 5
    expect(page.locator("#fleet-best h2")).to_have_text("Cheapest layout meeting the SLO")
    expect(page.locator("svg.fleet-chart")).to_be_visible()
    first = rows.first
    ttft = first.locator(".cell-ttft .value").inner_text()
    tpot = first.locator(".cell-tpot .value").inner_text()
    clients = first.locator(".cell-concurrency").inner_text()
    assert float(tpot) <= 40  # the SLO claim holds for the number shown
    memory = page.locator("#fleet-detail-1 .detail-memory")
    weights, kv = memory.get_attribute("data-weights"), memory.get_attribute("data-kv")
    expect(memory).to_contain_text(f"weights {weights}, KV cache pool {kv}")
    tab.shoot("fleet")

    first.locator(".open-in-planner").click()
    expect(page).to_have_url(re.compile(rf"concurrency={clients}(&|$)"))
    expect(page.locator("#f-conc")).to_have_value(clients)
    expect(page.locator("#n-kv-bytes")).to_have_text(str(kv))
    expect(page.locator('#partition-table tr[data-key="weights"] td.num').first).to_have_text(str(weights))
    expect(page.locator("#speed-ttft .value")).to_have_text(ttft)
    expect(page.locator("#speed-tpot .value")).to_have_text(tpot)
    expect(page.locator("#verdict")).to_have_attribute("data-verdict", "fits")  # the layout starts
    tab.shoot("fleet-opened-in-planner")


def test_fleet_page_in_chinese_keeps_its_language(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.goto(live_server.base + "/fleet?lang=zh&model=meta-llama/Llama-3.1-8B")
    expect(page.locator("#fleet-best h2")).to_have_text("满足 SLO 的最便宜布局")
    link = page.locator("#fleet-table .open-in-planner").first
    assert "lang=zh" in (link.get_attribute("href") or "")
