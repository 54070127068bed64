"""A walk of round 12's main on a phone (lane polish12): /explore's answer on the first screen, and /fleet's
rows told apart without scrolling sideways. Screenshots in tests/e2e/artifacts/polish12-*.png."""

from __future__ import annotations

import re

from playwright.sync_api import Locator, Page, expect

from tests.e2e.conftest import ARTIFACTS, LiveServer, Tab

DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}


def test_the_explorer_answer_is_on_a_phones_first_screen(live_server: LiveServer, tab: Tab) -> None:
    # /explore at 390 x 844 began with every input: the workload's answer sat ~2.5 screens down with no
    # one-line summary or "Result ↓" link, unlike the planner and /fleet. The same one-line answer now
    # stays at the top: the simulator's binding limit (the default Llama-3.1-8B workload on an H100 runs
    # into the KV pool: 625 preemptions, peak KV usage 100.0%, the page's own #w-binding and #w-peak-kv).
    page = tab.page
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.base}/explore?lang=en")
    summary = page.locator("#phone-summary")
    expect(summary).to_be_visible()
    expect(summary).to_contain_text("Binding limit: the KV pool")
    expect(summary).to_contain_text("Peak KV usage 100.0%")
    expect(summary).to_contain_text("Result ↓")
    expect(summary).to_have_class(re.compile(r"\bverdict-warn\b"))
    box = summary.bounding_box()
    assert box is not None and box["y"] + box["height"] <= PHONE["height"]
    workload = page.locator("#workload").bounding_box()
    assert workload is not None and workload["y"] > PHONE["height"]  # the answer itself is below the inputs
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "polish12-explore-390.png"))
    # a rejected input swaps the line too (out of band with the results fragment)
    page.fill("#e-mml", "lots")
    page.locator("#e-mml").dispatch_event("change")
    expect(summary).to_contain_text("Nothing is computed: these inputs cannot be used")
    expect(summary).to_contain_text("max_model_len")
    expect(summary).to_have_class(re.compile(r"\bverdict-bad\b"))
    summary.click()
    expect(page.locator("#results .verdict").first).to_be_in_viewport()
    # the desktop has the answer beside the inputs and no such line
    page.set_viewport_size(DESKTOP)
    expect(summary).to_be_hidden()


FLEET = (
    "/fleet?v=1&model=meta-llama%2FLlama-3.1-70B-Instruct&max_model_len=32768&input_tokens=2000"
    "&output_tokens=500&requests_per_s=30&slo_ttft_ms=1500&slo_tpot_ms=40&price_per_device_hour=3"
    "&devices_per_node=8"
)


def _visible_text(page: Page, row: Locator, right_px: float) -> str:
    """The text of ``row``'s cells whose left edge lies within the first ``right_px`` of the screen."""
    texts = []
    for cell in row.locator("td").all():
        box = cell.bounding_box()
        if box is not None and box["x"] < right_px and box["x"] + box["width"] > 0:
            texts.append(" ".join(cell.inner_text().split()))
    return " | ".join(texts)


def test_fleet_rows_are_told_apart_on_a_phones_first_screen(live_server: LiveServer, tab: Tab) -> None:
    # Llama-3.1-70B at 30 req/s: rows 1 and 4 both read "TP 2"/"TP 4"… and rows 1, 3 and 7 all "TP 2" on the
    # left of a 390 px screen; what set them apart (weights fp8 / int4, KV dtype fp8 / auto) sat in columns
    # 11 and 12, off to the right. Each row's option (layout, weights, KV dtype) now stays in its first
    # column, also when the table is scrolled sideways to the SLO and speed columns.
    page = tab.page
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.base}{FLEET}&lang=en")
    rows = page.locator("#fleet-table tbody tr")
    expect(rows.first).to_be_visible()
    count = rows.count()
    assert count >= 7
    firsts = [_visible_text(page, rows.nth(i), PHONE["width"]) for i in range(count)]
    # the same layout (TP 2, 9 / 10 / 12 replicas) appears with different weights and KV dtypes …
    options = [" ".join(rows.nth(i).locator(".cell-option").inner_text().split()) for i in range(count)]
    layouts = [o.split(" weights ")[0] for o in options]
    assert len(set(layouts)) < count, options  # a layout repeats, told apart by weights and KV dtype only
    assert len(set(options)) == count, options  # one row per option
    # … and the first screen width shows it for every row
    for option, first in zip(options, firsts, strict=True):
        assert option in first, (option, first)
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#fleet-table").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "polish12-fleet-390.png"))
    # scrolled sideways to the speed columns, the option column stays put at the left edge
    scroller = page.locator("#fleet-table").locator("xpath=..")
    scroller.evaluate("el => { el.scrollLeft = 600; }")
    page.wait_for_timeout(100)
    cell = rows.first.locator(".cell-option").bounding_box()
    box = scroller.bounding_box()
    assert cell is not None and box is not None and abs(cell["x"] - box["x"]) < 60, (cell, box)
    page.screenshot(path=str(ARTIFACTS / "polish12-fleet-390-scrolled.png"))
