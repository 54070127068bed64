"""The round-11 re-walk of the new-user walkthrough (shared/reviews/new-user-walkthrough-2026-12.md), in
Chromium at its sizes: what it still found cut or misplaced on the page (lane walk11)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import LiveServer, Tab

pytestmark = pytest.mark.e2e

DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
ARROW_PX = 24  # what Chromium keeps for a <select>'s drop-down arrow at the page's 15 px font (measured: 146 px of room showed 127)

# the selected option's text width against the room a <select> leaves it (its client width less padding
# and the arrow), measured with a canvas in the select's own font
_SELECT_ROOM = """([id, arrow]) => {
  const s = document.getElementById(id); const cs = getComputedStyle(s);
  const ctx = document.createElement('canvas').getContext('2d'); ctx.font = cs.font;
  const text = s.options[s.selectedIndex].text;
  const room = s.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - arrow;
  return {text: text, need: ctx.measureText(text).width, room: room};
}"""


def _fits(page: Page, select_id: str) -> None:
    got = page.evaluate(_SELECT_ROOM, [select_id, ARROW_PX])
    assert got["need"] <= got["room"], got


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1366", "390"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_selects_show_their_whole_choice(
    live_server: LiveServer, tab: Tab, size: dict[str, int], lang: str
) -> None:
    # At 1366 px the walkthrough read "checkpoint's owr" in --quantization and "detect from the l" in the
    # doctor's device select (both in a half-width column of the sidebar).
    page = tab.page
    page.set_viewport_size(size)
    page.goto(f"{live_server.base}/?lang={lang}")
    expect(page.locator("#verdict")).to_be_visible()
    _fits(page, "f-quant")
    page.goto(f"{live_server.base}/doctor?lang={lang}")
    _fits(page, "d-device")


LONG_LINE_LOG = """\
INFO 09-01 10:00:02 [api_server.py:1805] vLLM API server version 0.10.1.1
INFO 09-01 10:00:02 [utils.py:326] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 32768, 'gpu_memory_utilization': 0.9, 'enable_prefix_caching': True, 'max_num_seqs': 256}
INFO 09-01 10:00:20 [gpu_model_runner.py:2007] Model loading took 14.9889 GiB and 4.127469 seconds
INFO 09-01 10:00:30 [gpu_worker.py:276] Available KV cache memory: 54.98 GiB
INFO 09-01 10:00:30 [kv_cache_utils.py:849] GPU KV cache size: 450,384 tokens
INFO 09-01 10:00:30 [kv_cache_utils.py:853] Maximum concurrency for 32,768 tokens per request: 13.74x
INFO:     Application startup complete.
"""


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1366", "390"])
def test_a_wrapped_log_line_stays_right_of_its_line_number(
    live_server: LiveServer, tab: Tab, size: dict[str, int]
) -> None:
    # The walkthrough: "Doctor log excerpts wrap to column 0, under the line numbers". Step 2 quotes the
    # non-default args line (line 2), too long for one line at either width.
    page = tab.page
    page.set_viewport_size(size)
    page.goto(f"{live_server.base}/doctor?lang=en")
    page.fill("#d-log", LONG_LINE_LOG)
    page.click("#d-submit")
    expect(page.locator("#doctor-verdict")).to_be_visible()
    got = page.evaluate(
        """() => {
      const line = [...document.querySelectorAll('#step-2 pre.excerpt > span')].find(s => s.querySelector('.ln').textContent === '2');
      const ln = line.querySelector('.ln').getBoundingClientRect();
      const range = document.createRange(); range.selectNodeContents(line.lastChild);
      const rects = [...range.getClientRects()];
      return {lines: rects.length, ln_right: ln.right, lefts: rects.map(r => r.left)};
    }"""
    )
    assert got["lines"] >= 2, got  # the line does wrap here
    assert min(got["lefts"]) >= got["ln_right"] - 1, got


OOM_70B = "/?v=1&model=meta-llama%2FLlama-3.1-70B"  # Llama-3.1-70B bf16 on one H100: a load OOM
PLATFORM = (
    "/?v=1&model=meta-llama%2FLlama-3.1-70B&devices=8&max_model_len=128000&target_concurrency=64"
    "&gpu_memory_utilization=0.95&tensor_parallel_size=8"
)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_phone_page_does_not_scroll_sideways(live_server: LiveServer, tab: Tab, lang: str) -> None:
    # At 390 px the recommendation's before/after table of the 70B load OOM ran to x = 405 ("none (over
    # budget)" kept on one line), cutting its After column at the screen's edge; the "Every term of the
    # estimate" table, opened, ran to 425 px in Chinese.
    page = tab.page
    page.set_viewport_size(PHONE)
    for url in (OOM_70B, PLATFORM):
        page.goto(f"{live_server.base}{url}&lang={lang}")
        expect(page.locator("#verdict")).to_be_visible()
        expect(page.locator("table.step-numbers").first).to_be_visible()
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(300)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], (url, width)


FLEET = (
    "/fleet?v=1&model=meta-llama%2FLlama-3.1-70B-Instruct&max_model_len=32768&input_tokens=2000"
    "&output_tokens=500&requests_per_s=30&slo_ttft_ms=1500&slo_tpot_ms=40&price_per_device_hour=3"
    "&devices_per_node=8"
)


def test_the_fleet_answer_is_on_a_phones_first_screen(live_server: LiveServer, tab: Tab) -> None:
    # The walkthrough's e05-fleet-phone.png: "fleet on a phone, first screen is inputs only" (the answer
    # sits below every input). As on the planner, a one-line answer stays at the top and jumps to it.
    page = tab.page
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.base}{FLEET}&lang=en")
    summary = page.locator("#phone-summary")
    expect(summary).to_be_visible()
    expect(summary).to_contain_text("Cheapest layout meeting the SLO")
    assert summary.bounding_box()["y"] + summary.bounding_box()["height"] <= PHONE["height"]
    assert page.locator("#fleet-best").bounding_box()["y"] > PHONE["height"]  # the answer itself is below
    # a rejected input swaps the line too (out of band with the results fragment)
    page.fill("#g-rps", "thirty")
    page.locator("#g-rps").dispatch_event("change")
    expect(summary).to_contain_text("Nothing is computed: these inputs cannot be used")
    expect(summary).to_have_class(re.compile(r"\bverdict-bad\b"))
    summary.click()
    expect(page.locator("#results .verdict").first).to_be_in_viewport()
    # the desktop has the answer beside the inputs and no such line
    page.set_viewport_size(DESKTOP)
    expect(summary).to_be_hidden()
