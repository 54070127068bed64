"""A slider move's Speed and recommendation slots in Chromium (static/app.js, app.css ``[data-held]``).

Each move replaces the results; the Speed section and the recommendation come back in their own
requests. Until one answers, its slot holds the section it replaces (inert), laid out exactly where
and as large as the section was, so nothing below moves twice (bench/slider_latency.py). A failed
request puts the placeholder back instead of leaving the old numbers up.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, Route, expect

from tests.e2e.conftest import LiveServer, Tab

pytestmark = pytest.mark.e2e

START = "/?v=1&max_model_len=16384"  # Llama-3.1-8B on one H100, the defaults


def _box(page: Page, selector: str) -> dict[str, Any]:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return box


def _held_move(page: Page, held: list[Route]) -> Route:
    """Move the max_model_len slider one stop and return the Speed request it starts, held."""
    count = len(held)
    page.locator("#f-mml-slider").focus()
    page.locator("#f-mml-slider").press("ArrowLeft")
    for _ in range(200):
        if len(held) > count:
            return held[-1]
        page.wait_for_timeout(25)
    raise AssertionError("the move asked for no Speed section")


def test_the_slots_hold_their_sections_until_the_answers_arrive(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(live_server.base + START)
    expect(page.locator("#speed-ttft")).to_be_visible()
    expect(page.locator("#recommend")).to_be_visible()
    expect(page.locator("#speed-slot, #recommend-slot")).to_have_count(0)  # both answered
    page.locator("#speed-table-details > summary").click()  # opened: it opens again with the new answer
    expect(page.locator("#speed-table-details")).to_have_attribute("open", "")
    speed_before = _box(page, "#speed")
    formula_gap = _box(page, "section[aria-labelledby=h-formula]")["y"] - speed_before["y"]
    recommend_before = _box(page, "#recommend")

    held: list[Route] = []
    page.route("**/speed", lambda route: held.append(route))
    route = _held_move(page, held)
    expect(page).to_have_url(re.compile(r"max_model_len=(?!16384\b)\d+"))  # the results did swap
    # the new results' slot holds the old section: same size, same place relative to the card below
    # (the one-line placeholder is hidden), inert while it waits
    slot = page.locator("#speed-slot[data-held]")
    expect(slot).to_have_attribute("aria-busy", "true")
    expect(page.locator("#speed-slot > #speed[inert]")).to_be_visible()
    expect(page.locator("#speed-slot > p.loading")).to_be_hidden()
    speed_held = _box(page, "#speed")
    assert (speed_held["x"], speed_held["width"], speed_held["height"]) == (
        speed_before["x"],
        speed_before["width"],
        speed_before["height"],
    )
    assert _box(page, "section[aria-labelledby=h-formula]")["y"] - speed_held["y"] == formula_gap
    # the recommendation slot (a .card of its own) holds its section without a second card around it
    expect(page.locator("#recommend-slot > #recommend[inert]")).to_be_attached()
    recommend_held = _box(page, "#recommend")
    assert (recommend_held["x"], recommend_held["width"]) == (
        recommend_before["x"],
        recommend_before["width"],
    )

    route.continue_()
    expect(page.locator("#speed-slot")).to_have_count(0)
    expect(page.locator("#speed")).not_to_have_attribute("inert", "")
    expect(page.locator("#speed-ttft")).to_be_visible()
    expect(page.locator("#speed-table-details")).to_have_attribute("open", "")
    expect(page.locator("#recommend-slot")).to_have_count(0)  # its own answer, 400 ms later

    # a failed answer: the placeholder again, not the old numbers
    route = _held_move(page, held)
    expect(page.locator("#speed-slot[data-held]")).to_have_count(1)
    route.fulfill(status=500, body="boom")
    expect(page.locator("#speed-slot")).not_to_have_attribute("data-held", "")
    expect(page.locator("#speed")).to_have_count(0)
    expect(page.locator("#speed-slot > p.loading")).to_have_text("Speed: TTFT, TPOT and throughput")
    expect(page.locator("#speed-slot")).not_to_have_attribute("aria-busy", "true")


def test_a_second_swap_while_the_slot_waits_keeps_it_held_and_a_failure_clears_it(
    live_server: LiveServer, tab: Tab
) -> None:
    # review9b: htmx settles "class" on the new results' slot, so a second move while the Speed request still
    # waited took the held mark off (the old section showed at full opacity as if current) and a failure then left
    # the old numbers up for good. The mark is a data attribute, which htmx does not settle.
    page = tab.page
    page.goto(live_server.base + START)
    expect(page.locator("#speed-ttft")).to_be_visible()
    held: list[Route] = []
    page.route("**/speed", lambda route: held.append(route))
    first = _held_move(page, held)
    expect(page.locator("#speed-slot[data-held]")).to_have_count(1)
    url = page.url
    second = _held_move(page, held)
    expect(page).not_to_have_url(url)  # the second move's results swapped too
    page.wait_for_timeout(400)  # past htmx's settle
    expect(page.locator("#speed-slot[data-held]")).to_have_count(1)
    expect(page.locator("#speed-slot > #speed[inert]")).to_be_attached()
    first.abort()
    second.abort()
    expect(page.locator("#speed")).to_have_count(0)
    expect(page.locator("#speed-slot")).not_to_have_attribute("data-held", "")
    expect(page.locator("#speed-slot > p.loading")).to_be_visible()
