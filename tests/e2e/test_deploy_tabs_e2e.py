"""The command card's deployment tabs in Chromium: each tab fetches its manifest from /api/deploy for the
page's inputs, a form change re-fetches the open tab for the new inputs, and the copy buttons (the
manifest, the estimate as YAML) put the API's text on the clipboard."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import yaml
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import ARTIFACTS, LiveServer

pytestmark = pytest.mark.e2e

QUERY = (
    "v=1&model=meta-llama/Llama-3.1-70B&device=nvidia-h100-sxm-80gb&tensor_parallel_size=4"
    "&kv_cache_dtype=fp8&max_model_len=32768&vllm_version=0.19.0"
)


@pytest.fixture
def page(browser: Browser, live_server: LiveServer) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.origin)
    opened = context.new_page()
    opened.set_default_timeout(8000)
    yield opened
    context.close()


def test_the_kubernetes_tab_shows_the_api_manifest_and_follows_the_form(
    live_server: LiveServer, page: Page
) -> None:
    page.goto(f"{live_server.base}/?{QUERY}")
    expect(page.locator("#panel-command")).to_be_visible()
    expect(page.locator("#panel-kubernetes")).to_be_hidden()
    page.locator("#tab-kubernetes").click()
    expect(page.locator("#tab-kubernetes")).to_have_attribute("aria-selected", "true")
    manifest = page.locator("#deploy-kubernetes")
    expect(manifest).to_contain_text("kind: Deployment")
    expect(page.locator("#panel-command")).to_be_hidden()
    docs = list(yaml.safe_load_all(manifest.inner_text()))
    container = docs[0]["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "vllm/vllm-openai:v0.19.0"
    assert container["resources"]["requests"]["nvidia.com/gpu"] == "4"
    assert " ".join(container["args"]).endswith(
        "--max-model-len 32768 --tensor-parallel-size 4 --kv-cache-dtype fp8"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("section[aria-labelledby=h-command]").screenshot(
        path=str(ARTIFACTS / "deploy-tabs-kubernetes.png")
    )
    # the copy button puts exactly that text on the clipboard
    page.locator("#panel-kubernetes button.copy").click()
    expect(page.locator("#panel-kubernetes button.copy")).to_have_attribute("data-copied", "true")
    api = page.request.get(f"{live_server.base}/api/deploy?{QUERY}&target=kubernetes").text()
    assert page.evaluate("navigator.clipboard.readText()") == api
    # a form change (TP 4 -> 8) swaps the results: the Kubernetes tab stays open, for 8 devices
    page.locator("#f-tp").select_option("8")
    expect(page).to_have_url(re.compile(r"tensor_parallel_size=8"))
    expect(page.locator("#tab-kubernetes")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#deploy-kubernetes")).to_contain_text("nvidia.com/gpu: '8'")


def test_copy_as_yaml_copies_the_estimate(live_server: LiveServer, page: Page) -> None:
    page.goto(f"{live_server.base}/?{QUERY}")
    # the browser's clipboard outlives the page: the previous test left the Kubernetes manifest (which also
    # names kv_bytes_per_token) there, and under load the wait below read it before this copy landed
    page.evaluate("navigator.clipboard.writeText('')")
    page.get_by_role("button", name="Copy as YAML").click()
    # polled here: wait_for_function took the predicate's Promise itself as truthy and returned at once
    # (CI, round 8: the cleared clipboard was read and parsed as None)
    text = ""
    for _ in range(300):
        text = page.evaluate("navigator.clipboard.readText()")
        if "kv_bytes_per_token" in text and "apiVersion" not in text:
            break
        page.wait_for_timeout(100)
    copied = yaml.safe_load(text)
    api = page.request.get(f"{live_server.base}/api/estimate?{QUERY}").json()
    assert copied["kv_bytes_per_token"] == api["kv_bytes_per_token"] and copied["max_model_len"] == 32768


def test_the_tabs_in_chinese(live_server: LiveServer, page: Page) -> None:
    page.goto(f"{live_server.base}/?{QUERY}&lang=zh")
    expect(page.locator("#tab-command")).to_have_text("命令")
    page.locator("#tab-helm").click()
    expect(page.locator("#deploy-helm")).to_contain_text("servingEngineSpec:")
    page.set_viewport_size({"width": 390, "height": 900})
    page.locator("section[aria-labelledby=h-command]").screenshot(
        path=str(ARTIFACTS / "deploy-tabs-helm-zh-390.png")
    )
