"""A slider move in Chromium: one request for the results and their Speed section, then the
recommendation's slot (static/app.js, app.css ``.slot-held``, app.web.speed.routes.inline_speed).

The results carry the Speed section, so a move asks for no /speed. The recommendation comes back in a
request of its own; until it answers, its slot holds the section it replaces (inert), laid out exactly
where and as large as the section was, so nothing below collapses and comes back. A failed request
puts the placeholder back instead of leaving the old answer up.
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
    """Move the max_model_len slider one stop and return the recommendation request it starts, held."""
    count = len(held)
    page.locator("#f-mml-slider").focus()
    page.locator("#f-mml-slider").press("ArrowLeft")
    for _ in range(200):
        if len(held) > count:
            return held[-1]
        page.wait_for_timeout(25)
    raise AssertionError("the move asked for no recommendation")


def test_a_move_is_one_request_and_the_slot_holds_its_section(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(live_server.base + START)
    expect(page.locator("#speed-ttft")).to_be_visible()
    expect(page.locator("#recommend")).to_be_visible()
    expect(page.locator("#speed-slot, #recommend-slot")).to_have_count(0)  # both answered
    page.locator("#speed-table-details > summary").click()  # opened: it stays open across the move
    recommend_before = _box(page, "#recommend")
    below_gap = _box(page, "#version-details")["y"] - recommend_before["y"]
    speed_requests = sum(url.endswith("/speed") for url in tab.requests)

    held: list[Route] = []
    page.route("**/recommend", lambda route: held.append(route))
    route = _held_move(page, held)
    expect(page).to_have_url(re.compile(r"max_model_len=(?!16384\b)\d+"))  # the results did swap
    # the Speed section came with the results: no request of its own, not held, still opened
    assert sum(url.endswith("/speed") for url in tab.requests) == speed_requests
    expect(page.locator("#speed-slot")).to_have_count(0)
    expect(page.locator("#speed")).not_to_have_attribute("inert", "")
    expect(page.locator("#speed-table-details")).to_have_attribute("open", "")
    # the new results' slot holds the old recommendation: same size, same place relative to what
    # follows (its one-line placeholder hidden, no second card around it), inert while it waits
    expect(page.locator("#recommend-slot.slot-held")).to_have_attribute("aria-busy", "true")
    expect(page.locator("#recommend-slot > #recommend[inert]")).to_be_visible()
    expect(page.locator("#recommend-slot > p.loading")).to_be_hidden()
    recommend_held = _box(page, "#recommend")
    assert (recommend_held["x"], recommend_held["width"], recommend_held["height"]) == (
        recommend_before["x"],
        recommend_before["width"],
        recommend_before["height"],
    )
    assert _box(page, "#version-details")["y"] - recommend_held["y"] == below_gap

    route.continue_()
    expect(page.locator("#recommend-slot")).to_have_count(0)
    expect(page.locator("#recommend")).not_to_have_attribute("inert", "")

    # a failed answer: the placeholder again, not the old recommendation
    route = _held_move(page, held)
    expect(page.locator("#recommend-slot.slot-held")).to_have_count(1)
    route.fulfill(status=500, body="boom")
    expect(page.locator("#recommend-slot")).not_to_have_class(re.compile("slot-held"))
    expect(page.locator("#recommend")).to_have_count(0)
    expect(page.locator("#recommend-slot > p.loading")).to_have_text(
        "What to change, in order (recommendation)"
    )
    expect(page.locator("#recommend-slot")).not_to_have_attribute("aria-busy", "true")
