"""Lane page12 in Chromium: an unknown select value survives a slider move; the doctor's verdict on a phone.

1. `/?device=h999`: on main at 169e6d0 the first move of the utilization slider posted the Device select's
   first option (H100), so the error naming `device` vanished, a green verdict for H100 appeared and the
   address lost `device=h999`. Now the select keeps `h999 (unknown)` selected until the user picks one.
3. The doctor at 390×844: the inputs came first, so the verdict (and the error that ended the start) sat
   two screens down. Now the result column comes first on a narrow viewport.
   Screenshots: tests/e2e/artifacts/page12-*.png.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Locator, expect

from tests.e2e.conftest import ARTIFACTS, LiveServer, Tab

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}
DATA = Path(__file__).resolve().parents[1] / "data"


def _move_util_slider(tab: Tab) -> None:
    slider = tab.page.locator("#f-util-slider")
    slider.evaluate("s => { s.value = '0.85'; s.dispatchEvent(new Event('input', {bubbles: true})); }")


def test_an_unknown_device_survives_a_slider_move(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.goto(f"{live_server.base}/?v=1&device=h999")
    verdict = page.locator("#verdict[data-unusable]")
    expect(verdict).to_contain_text("h999")
    expect(page.locator("#f-device")).to_have_value("h999")
    with page.expect_response(lambda r: r.request.method == "POST"):
        _move_util_slider(tab)
    page.wait_for_function("() => location.search.includes('gpu_memory_utilization')")
    expect(page.locator("#verdict[data-unusable]")).to_have_attribute("data-unusable", "device")
    expect(page.locator("[data-verdict]")).to_have_count(0)  # no verdict for a device nobody named
    assert parse_qs(urlsplit(page.url).query)["device"] == ["h999"]
    # picking a device clears it: the unknown option is only what the URL said
    page.select_option("#f-device", "nvidia-h100-sxm-80gb")
    expect(page.locator("[data-verdict]").first).to_be_visible()
    page.wait_for_function("() => !location.search.includes('h999')")  # the default device: not in the link


def _in_first_screen(locator: Locator) -> bool:
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + min(box["height"], 60) <= PHONE["height"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_doctor_verdict_is_in_a_phones_first_screen(live_server: LiveServer, tab: Tab, lang: str) -> None:
    page = tab.page
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.base}/doctor?lang={lang}")
    # calibration record vllm10517-rtx3090-llama31-8b-29k-err (vLLM issue 10517, RTX 3090): the refusal verbatim
    log = (DATA / "logs" / "v0_rtx3090_llama31_8b_29k_error.log").read_text()
    page.fill("#d-log", log)
    with page.expect_response(lambda r: r.request.method == "POST"):
        page.click("#d-submit")
    verdict = page.locator("#doctor-verdict")
    expect(verdict).to_be_visible()
    page.wait_for_timeout(100)  # the swap's scroll
    assert _in_first_screen(verdict.locator("h2")), verdict.bounding_box()  # where the button left you
    expect(page.locator("#doctor-failure")).to_contain_text("The model's max seq len (29000) is larger")
    page.evaluate("window.scrollTo(0, 0)")  # and the page's own first screen
    assert _in_first_screen(verdict.locator("h2")), verdict.bounding_box()
    failure = page.locator("#doctor-failure")
    expect(failure).to_be_visible()
    assert _in_first_screen(failure), failure.bounding_box()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"page12-doctor-phone-{lang}.png"))


def test_the_fleet_cost_chart_is_readable_on_a_phone(live_server: LiveServer, tab: Tab) -> None:
    # the 1000-unit-wide chart scaled to 390 px drew its 15-unit labels ~5 px high; now it keeps 36rem and
    # scrolls sideways in its figure, with the target load's line (20 of 40 requests/s) still in view
    page = tab.page
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.base}/fleet?v=1")
    chart = page.locator("svg.fleet-chart")
    box = chart.bounding_box()
    assert box is not None and box["width"] >= 500, box  # 36rem: 540 px at the page's 15 px root (was 340)
    label = page.locator("svg.fleet-chart text").first.bounding_box()
    assert label is not None and label["height"] >= 8, label
    target = page.locator("#fleet-target").bounding_box()
    assert target is not None and target["x"] < PHONE["width"], target
    assert page.evaluate("document.documentElement.scrollWidth") == PHONE["width"]  # the page does not scroll
    page.locator("#fleet-chart-table").evaluate("t => t.closest('details').open = true")
    table = page.locator("#fleet-chart-table").evaluate("t => t.parentElement.className")
    assert table == "table-scroll"
    chart.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "page12-fleet-chart-phone.png"))


def test_an_unreadable_checkbox_survives_a_slider_move(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.goto(f"{live_server.base}/?v=1&enforce_eager=maybe")
    expect(page.locator("#verdict[data-unusable]")).to_have_attribute("data-unusable", "enforce_eager")
    with page.expect_response(lambda r: r.request.method == "POST"):
        _move_util_slider(tab)
    page.wait_for_function("() => location.search.includes('gpu_memory_utilization')")
    expect(page.locator("#verdict[data-unusable]")).to_have_attribute("data-unusable", "enforce_eager")
    assert parse_qs(urlsplit(page.url).query)["enforce_eager"] == ["maybe"]
    box = page.locator('input[name="enforce_eager"]')
    box.uncheck()  # the user's own choice: off
    expect(page.locator("[data-verdict]").first).to_be_visible()
    box.check()  # and on again: an ordinary box now, posting true
    page.wait_for_function("() => location.search.includes('enforce_eager=true')")
    expect(page.locator(".unknown-value")).to_have_count(0)
