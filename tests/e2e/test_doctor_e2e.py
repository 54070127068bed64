"""The doctor in a real Chromium against a live server: paste, upload, no-JS, open in planner, prefix.

Uses the browser and screenshot helpers of tests/e2e/conftest.py; the live server here is the app
plus the doctor's router (included here until app.web.app wires it in). Screenshots go to
tests/e2e/artifacts/doctor-*.png at desktop and phone widths.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from playwright.sync_api import Browser, expect

from app.core.diagnose import diagnose
from app.core.estimate import estimate
from app.web.inputs.lenient import parse_lenient
from app.web.inputs.params import PlannerParams
from app.web.inputs.resolve import resolve_lenient
from tests.e2e.conftest import ARTIFACTS, PREFIX, LiveServer, Tab
from tests.web.helpers import NUMBER_IDS, expected_numbers

pytestmark = pytest.mark.e2e

DATA = Path(__file__).resolve().parents[1] / "data" / "logs"
ERROR_LOG = DATA / "v0_rtx3090_llama31_8b_29k_error.log"
H100_LOG = DATA / "v1_0.19.0_h100_llama31_8b.log"
PHONE_WIDTH = 390
PLANNER_TIMEOUT_MS = 15_000  # the planner page computes a capacity curve; allow for a loaded machine


def planner_numbers_from_core(url: str) -> dict[str, str]:
    params, _ = parse_lenient(PlannerParams, parse_qsl(urlsplit(url).query, keep_blank_values=True))
    resolved, _ = resolve_lenient(params)
    est = estimate(
        model=resolved.model,
        device=resolved.device,
        serve=resolved.serve,
        vllm_version=resolved.vllm_version,
        target_concurrency=params.target_concurrency,
    )
    return expected_numbers(est)


def test_paste_failing_log_then_open_in_planner(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    page.goto(live_server.base + "/doctor")
    expect(page.locator("#doctor-intro")).to_be_visible()
    tab.shoot("doctor-01-empty")
    page.fill("#d-log", ERROR_LOG.read_text())
    page.select_option("#d-device", "nvidia-rtx-3090-24gb")
    page.click("#d-submit")
    steps = page.locator("#doctor-steps > li.step")
    expect(steps).to_have_count(5)
    expect(page.locator("#doctor-verdict")).to_have_attribute("data-verdict", "s_bound")
    assert urlsplit(page.url).path == "/doctor"  # htmx swapped the block, no navigation
    # the cards carry the core's verdicts, in order
    core = diagnose(log_text=ERROR_LOG.read_text(), metrics_text=None, device_hint="nvidia-rtx-3090-24gb")
    badges = [text.strip() for text in page.locator("#doctor-steps .step-verdict").all_inner_texts()]
    assert badges == [s.verdict for s in core.steps]
    expect(page.locator("#step-4 .step-verdict")).to_have_text("S-side")
    # step 1 quotes the numbered log lines it read
    excerpt = page.locator("#step-1 pre.excerpt .hit")
    expect(excerpt.first.locator(".ln")).to_have_text("5")
    expect(page.locator("#step-1 pre.excerpt")).to_contain_text("# GPU blocks: 1478")
    # styled from static/doctor.css (the CSP forbids inline style): the S-side badge is red on pink
    badge = page.locator("#step-4 .step-verdict")
    assert badge.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(253, 232, 230)"
    assert not [m for m in console if "Content Security Policy" in m], console
    tab.shoot("doctor-02-s-bound")

    page.click("#open-planner")
    page.wait_for_url("**/?v=1&*", timeout=PLANNER_TIMEOUT_MS)
    expect(page.locator("#f-mml")).to_have_value("29000", timeout=PLANNER_TIMEOUT_MS)
    expect(page.locator("#f-model")).to_have_value("meta-llama/Llama-3.1-8B-Instruct")
    expect(page.locator("#f-device")).to_have_value("nvidia-rtx-3090-24gb")
    shown = {key: page.locator(f"#{key}").inner_text().strip() for key in NUMBER_IDS}
    assert shown == planner_numbers_from_core(page.url)
    assert shown["n-max-model-len"] == "29,000"
    tab.shoot("doctor-03-planner")
    assert all(u.startswith(live_server.origin) or u.startswith("data:") for u in tab.requests)


def test_upload_a_log_file_with_target(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.goto(live_server.base + "/doctor")
    page.set_input_files("#d-file", str(H100_LOG))
    page.fill("#d-target", "100")
    page.click("#d-submit")
    expect(page.locator("#doctor-verdict")).to_have_attribute("data-verdict", "n_bound")
    expect(page.locator("#doctor-headline")).to_contain_text("58.11 requests of 8,192 tokens")
    expect(page.locator("#doctor-compare tr[data-key='kv_cache_bytes'] td").first).to_have_text("58.11 GiB")
    expect(page.locator("#step-5")).to_have_attribute("data-tone", "warn")
    tab.shoot("doctor-04-upload-n-bound")


def test_phone_width_has_no_horizontal_scroll(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.set_viewport_size({"width": PHONE_WIDTH, "height": 900})
    page.goto(live_server.base + "/doctor")
    page.fill("#d-log", H100_LOG.read_text())
    page.click("#d-metrics-details summary")
    page.fill("#d-metrics", (DATA / "metrics_kv_bound.prom").read_text())
    page.click("#d-submit")
    expect(page.locator("#doctor-metrics")).to_contain_text("bound by the KV pool")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE_WIDTH, width
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"doctor-05-metrics-{PHONE_WIDTH}.png"), full_page=True)


def test_inline_error_for_an_empty_paste(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.goto(live_server.base + "/doctor")
    page.click("#d-submit")
    expect(page.locator("#doctor-errors li[data-field='log']")).to_contain_text("log: empty")


def test_works_without_javascript(live_server: LiveServer, browser: Browser) -> None:
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(8000)
    try:
        page.goto(live_server.base + "/doctor")
        page.fill("#d-log", ERROR_LOG.read_text())
        page.click("#d-submit")
        page.wait_for_load_state()
        expect(page.locator("#doctor-steps > li.step")).to_have_count(5)
        expect(page.locator("#doctor-verdict")).to_have_attribute("data-verdict", "s_bound")
        expect(page.locator("#d-log")).to_have_value(ERROR_LOG.read_text().replace("\r\n", "\n"))
        page.screenshot(path=str(ARTIFACTS / "doctor-06-no-js-1280.png"), full_page=True)
    finally:
        context.close()


def test_under_a_prefix(prefixed_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.goto(prefixed_server.base + "/doctor")
    page.fill("#d-log", H100_LOG.read_text())
    page.fill("#d-target", "32")
    page.click("#d-submit")
    expect(page.locator("#doctor-verdict")).to_have_attribute("data-verdict", "fits")
    page.click("#open-planner")
    page.wait_for_url(f"**{PREFIX}/?v=1&*", timeout=PLANNER_TIMEOUT_MS)
    expect(page.locator("#f-mml")).to_have_value("8192", timeout=PLANNER_TIMEOUT_MS)
    expect(page.locator("#f-target")).to_have_value("32")
    shown = {key: page.locator(f"#{key}").inner_text().strip() for key in NUMBER_IDS}
    assert shown == planner_numbers_from_core(page.url)
    origin = prefixed_server.origin
    assert all(u.startswith(origin + PREFIX + "/") or u.startswith("data:") for u in tab.requests), (
        tab.requests
    )
