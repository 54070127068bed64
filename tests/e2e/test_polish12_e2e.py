"""A walk of round 12's main on a phone (lane polish12): /explore's answer on the first screen, and /fleet's
rows told apart without scrolling sideways. Screenshots in tests/e2e/artifacts/polish12-*.png."""

from __future__ import annotations

import re

from playwright.sync_api import expect

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
