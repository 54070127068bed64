"""The planner in a real Chromium against a live server: slider, permalink, paste flows, prefix."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from playwright.sync_api import expect

from app.core.estimate import estimate
from app.web.inputs.lenient import parse_lenient
from app.web.inputs.params import PlannerParams
from app.web.inputs.resolve import resolve_lenient
from tests.e2e.conftest import PREFIX, LiveServer, Tab
from tests.web.conftest import LLAMA_31_8B_CONFIG
from tests.web.helpers import NUMBER_IDS, expected_numbers

pytestmark = pytest.mark.e2e


def numbers(tab: Tab) -> dict[str, str]:
    return {key: tab.page.locator(f"#{key}").inner_text().strip() for key in NUMBER_IDS}


def core_numbers(url: str) -> dict[str, str]:
    """What the core says for the inputs in this URL (the page must show exactly this)."""
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


def assert_all_local(tab: Tab, origin: str, prefix: str = "") -> None:
    outside = [
        u for u in tab.requests if not u.startswith("data:") and not u.startswith(origin + prefix + "/")
    ]
    assert outside == [], outside
    assert all(urlsplit(u).hostname == "127.0.0.1" for u in tab.requests if not u.startswith("data:"))


def move_slider(tab: Tab, steps: int) -> None:
    slider = tab.page.locator("#f-mml-slider")
    slider.focus()
    for _ in range(steps):
        slider.press("ArrowLeft")


def test_slider_moves_bar_numbers_and_url(live_server: LiveServer, tab: Tab, browser):
    page = tab.page
    page.goto(live_server.base + "/?v=1&target_concurrency=16")
    before = numbers(tab)
    bar_before = page.locator("svg.partition-bar").inner_html()
    assert before == core_numbers(page.url)
    tab.shoot("01-initial")

    move_slider(tab, 6)  # 128K -> 16K in half-octave stops
    expect(page).to_have_url(re.compile(r"max_model_len=16384"))
    expect(page.locator("#n-max-model-len")).to_have_text("16,384")
    after = numbers(tab)
    assert after != before
    assert after == core_numbers(page.url)
    assert page.locator("svg.partition-bar").inner_html() != bar_before  # the bar was re-rendered
    assert page.locator("#f-mml").input_value() == "16384"
    tab.shoot("02-slider-16k")

    # the URL is a permalink: a fresh context opening it shows identical numbers
    fresh = browser.new_context()
    other = fresh.new_page()
    other.goto(page.url)
    assert {k: other.locator(f"#{k}").inner_text().strip() for k in NUMBER_IDS} == after
    fresh.close()
    assert_all_local(tab, live_server.origin)


def test_typed_human_length_and_overrun(live_server: LiveServer, tab: Tab):
    page = tab.page
    page.goto(live_server.base + "/")
    page.locator("#f-mml").fill("32K")
    expect(page).to_have_url(re.compile(r"max_model_len=32768"))
    stops = page.locator("#f-mml-slider").get_attribute("data-values").split(",")
    # "32K" is not a plain number, so the slider moves when the server's answer arrives
    expect(page.locator("#f-mml-slider")).to_have_value(str(stops.index("32768")))
    page.select_option("#f-device", "nvidia-l4-24gb")
    expect(page.locator("#verdict")).to_have_attribute("data-verdict", "s_bound")  # 8B at 32K on 24 GB
    assert numbers(tab) == core_numbers(page.url)
    tab.shoot("03-s-bound-l4")
    page.locator("#f-model").fill("meta-llama/Llama-3.1-70B")
    # 141 GB of weights on a 24 GB L4: it dies loading them, the doctor's word too (app.core.verdicts)
    expect(page.locator("#verdict")).to_have_attribute("data-verdict", "load_oom")
    expect(page.locator("rect.seg-overrun")).to_have_count(1)
    tab.shoot("04-overrun-70b-l4")
    assert_all_local(tab, live_server.origin)


def test_paste_config_json(live_server: LiveServer, tab: Tab):
    page = tab.page
    page.goto(live_server.base + "/?v=1&max_model_len=8192")
    page.locator("#config-details summary").click()
    config = dict(LLAMA_31_8B_CONFIG, num_hidden_layers=16)  # half the layers: twice the tokens
    page.locator("#f-config").fill(json.dumps(config, indent=2))
    expect(page.locator("#verdict .model-note")).to_contain_text("pasted config.json")
    expect(page).to_have_url(re.compile(r"config_json=z%3A"))
    assert numbers(tab) == core_numbers(page.url)
    tab.shoot("05-config-json")
    assert_all_local(tab, live_server.origin)


def test_paste_serve_command_fills_the_form(live_server: LiveServer, tab: Tab):
    page = tab.page
    page.goto(live_server.base + "/?v=1&target_concurrency=8")
    page.locator("#command-form summary").click()
    page.locator("#f-command").fill(
        "vllm serve Qwen/Qwen3-32B \\\n  --tensor-parallel-size 2 --max-model-len 40960 \\\n"
        "  --gpu-memory-utilization 0.85 --kv-cache-dtype fp8 --enforce-eager"
    )
    page.locator("#fill-command").click()
    expect(page).to_have_url(re.compile(r"tensor_parallel_size=2"))
    expect(page.locator("#f-model")).to_have_value("Qwen/Qwen3-32B")
    expect(page.locator("#f-tp")).to_have_value("2")
    expect(page.locator("#f-mml")).to_have_value("40960")
    expect(page.locator("#f-util")).to_have_value("0.85")
    expect(page.locator("#f-kvdtype")).to_have_value("fp8")
    expect(page.locator("input[name=enforce_eager]")).to_be_checked()
    expect(page.locator("#f-target")).to_have_value("8")  # inputs the command does not set are kept
    assert numbers(tab) == core_numbers(page.url)
    tab.shoot("06-command-filled")
    assert_all_local(tab, live_server.origin)


def test_under_a_url_prefix(prefixed_server: LiveServer, tab: Tab):
    page = tab.page
    page.goto(prefixed_server.base + "/")
    expect(page.locator("#verdict")).to_be_visible()
    move_slider(tab, 2)
    expect(page).to_have_url(re.compile(re.escape(PREFIX) + r"/\?v=1&max_model_len=65536"))
    assert numbers(tab) == core_numbers(page.url)
    page.locator("#permalink").click()
    expect(page).to_have_url(re.compile(re.escape(PREFIX) + r"/\?v=1&max_model_len=65536"))
    tab.shoot("07-prefixed")
    assert_all_local(tab, prefixed_server.origin, PREFIX)


def test_closed_sections_load_when_opened_and_stay_open(live_server: LiveServer, tab: Tab):
    page = tab.page
    page.goto(live_server.base + "/?v=1&vllm_version=0.11.0")
    move_slider(tab, 2)  # now the results are a fragment: the closed sections are empty until opened
    expect(page).to_have_url(re.compile(r"max_model_len=65536"))
    expect(page.locator("#version-notes")).to_have_count(0)
    page.locator("#version-details summary").click()
    expect(page.locator("#version-notes")).to_contain_text("0.11.0")
    page.locator("#curve-details summary").click()
    expect(page.locator("#curve-table tbody tr")).to_have_count(24)
    tab.shoot("08-lazy-sections-open")
    # another move: both sections are open again, with bodies for the new inputs
    rows_before = page.locator("#curve-table").inner_text()
    page.select_option("#f-kvdtype", "fp8")  # halves the KV per token: every concurrency doubles
    expect(page).to_have_url(re.compile(r"kv_cache_dtype=fp8"))
    expect(page.locator("#version-details")).to_have_attribute("open", "")
    expect(page.locator("#curve-details")).to_have_attribute("open", "")
    expect(page.locator("#curve-table tbody tr")).to_have_count(24)
    expect(page.locator("#curve-table")).not_to_have_text(rows_before)
    # the fragment carried the inputs once (#planner-state); app.js completed the links from it
    expect(page.locator("#explore-link")).to_have_attribute(
        "href", re.compile(r"^/explore\?v=1&.*kv_cache_dtype=fp8")
    )
    compare = page.locator("#compare-link")
    expect(compare).to_have_attribute(
        "href", re.compile(r"^/compare\?v=1&.*kv_cache_dtype=fp8.*&a=0\.11\.0&b=0\.19\.0$")
    )
    assert "vllm_version" not in (compare.get_attribute("href") or "")
    compare.click()
    expect(page).to_have_url(re.compile(r"/compare\?.*kv_cache_dtype=fp8.*a=0\.11\.0&b=0\.19\.0"))
    assert_all_local(tab, live_server.origin)


def test_a_device_alias_survives_a_slider_move(live_server: LiveServer, tab: Tab) -> None:
    """Issue 13: `?device=910b` computed for the 910B but the select showed H100, and the first slider
    move silently switched to H100. The select shows the resolved device and the link keeps it."""
    page = tab.page
    page.goto(live_server.base + "/?device=910b&max_model_len=32768")
    expect(page.locator("#f-device")).to_have_value("huawei-ascend-910b-64gb")
    move_slider(tab, 1)
    expect(page).to_have_url(re.compile(r"max_model_len=24576"))
    assert "device=huawei-ascend-910b-64gb" in page.url
    expect(page.locator("#f-device")).to_have_value("huawei-ascend-910b-64gb")
