"""One control per parameter in the browser (issue 24 item 4): what the form posts has one value per name,
and typing 2 in the one --data-parallel-size box reaches the command (a hidden duplicate's 1 used to win)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import LiveServer, Tab

pytestmark = pytest.mark.e2e
EP = "/?v=1&model=Qwen%2FQwen3-30B-A3B&max_model_len=32768&tensor_parallel_size=2&devices=4"


def test_the_form_posts_one_value_per_parameter(live_server: LiveServer, tab: Tab) -> None:
    page = tab.page
    page.goto(live_server.base + EP)
    expect(page.locator("#verdict")).to_be_visible()
    page.locator('input[name="enable_expert_parallel"]').check()
    page.locator('input[name="data_parallel_size"]').fill("2")
    expect(page.locator("#serve-command")).to_contain_text("--data-parallel-size 2")
    command = page.locator("#serve-command").inner_text()
    assert command.count("--enable-expert-parallel") == 1 and command.count("--data-parallel-size") == 1
    names = page.evaluate("[...new FormData(document.getElementById('planner-form')).keys()]")
    twice = sorted({n for n in names if names.count(n) > 1})
    assert twice == [], twice
    expect(page).to_have_url(re.compile(r"data_parallel_size=2"))
