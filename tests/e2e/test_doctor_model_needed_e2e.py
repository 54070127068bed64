"""The doctor's way to the planner in Chromium when the log names no model, or one the catalog lacks: never a
link that plans the planner's default model (issue 22 doctor gaps; the web kernel's require_usable rule).
Screenshots: tests/e2e/artifacts/doctor-model-needed-*.png, doctor-model-unknown-*.png."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import LiveServer, Tab

pytestmark = pytest.mark.e2e

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs" / "heldout-2026-12b"
NO_MODEL = (
    LOGS / "kunlun_qwen3_vl_fits_41_98_gib_171904_tokens.log"
)  # baidu/vLLM-Kunlun#330: 32,768, no model
UNKNOWN = LOGS / "nv_omni_a100_command_free_memory_0_49_of_79_32.log"  # vllm-omni#276: a local path
PLANNER_TIMEOUT_MS = 15_000


def _diagnosed(tab: Tab, base: str, log: Path, verdict: str) -> None:
    tab.page.goto(base + "/doctor")
    tab.page.fill("#d-log", log.read_text())
    tab.page.click("#d-submit")
    expect(tab.page.locator("#doctor-verdict")).to_have_attribute("data-verdict", verdict)


def test_a_log_naming_no_model_asks_for_it_then_opens_the_planner(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    _diagnosed(tab, live_server.base, NO_MODEL, "fits")
    expect(page.locator("#open-planner")).to_have_count(0)
    expect(page.locator("#planner-needs-model")).to_contain_text("The log names no model")
    expect(page.locator("#step-1")).to_contain_text("block size not printed")
    tab.shoot("doctor-model-needed")
    # the browser refuses to submit without a model (required), then opens the planner with it
    page.click("#open-planner-with-model")
    assert urlsplit(page.url).path == "/doctor"
    page.fill("#needs-model", "meta-llama/Llama-3.1-8B-Instruct")
    page.click("#open-planner-with-model")
    page.wait_for_url("**/?v=1&*", timeout=PLANNER_TIMEOUT_MS)
    query = parse_qs(urlsplit(page.url).query)
    assert (query["model"], query["max_model_len"]) == (["meta-llama/Llama-3.1-8B-Instruct"], ["32768"])
    expect(page.locator("#f-mml")).to_have_value("32768", timeout=PLANNER_TIMEOUT_MS)


def test_a_model_the_catalog_lacks_opens_the_planners_error_state(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    _diagnosed(tab, live_server.base, UNKNOWN, "budget_bound")
    page.click("#open-planner")
    page.wait_for_url("**/?v=1&*", timeout=PLANNER_TIMEOUT_MS)
    expect(page.locator("#f-model")).to_have_value("/data/models/Qwen/Qwen3-Omni-30B-A3B-Instruct")
    expect(page.locator("body")).to_contain_text("Nothing is computed", timeout=PLANNER_TIMEOUT_MS)
    expect(page.locator("body")).to_contain_text(
        "unknown model '/data/models/Qwen/Qwen3-Omni-30B-A3B-Instruct'"
    )
    tab.shoot("doctor-model-unknown")
