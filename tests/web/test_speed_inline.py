"""A slider move's results carry their Speed section (app.web.speed.routes.inline_speed): the section the
slot's POST /speed would have swapped in, byte for byte, so a move is one request and one swap where it
was two. A full page keeps the slot (its load trigger, or a link without JavaScript), and so does a
fragment whose "Your own runs" box holds text (the runs are read and simulated by the slot)."""

from __future__ import annotations

import html
import re

from fastapi.testclient import TestClient

FORM = {
    "v": "1",
    "model": "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "tensor_parallel_size": "4",
    "max_model_len": "49152",
}
HX = {"HX-Request": "true"}
STATE = re.compile(r'id="planner-state" name="state" form="command-form" value="([^"]*)"')


def _speed_section(fragment: str) -> str:
    start = fragment.index('<section class="card speed" id="speed"')
    return fragment[start : fragment.index("</section>", start) + len("</section>")]


def test_a_moves_results_carry_the_speed_section_the_slot_would_load(client: TestClient) -> None:
    fragment = client.post("/", data=FORM, headers=HX)
    assert fragment.status_code == 200
    assert 'id="speed-slot"' not in fragment.text and 'id="speed-ttft"' in fragment.text
    state = html.unescape(STATE.search(fragment.text).group(1))  # type: ignore[union-attr]
    slot = client.post("/speed", data={"state": state}, headers=HX)
    assert slot.status_code == 200
    assert _speed_section(fragment.text) == _speed_section(slot.text) == slot.text.strip()
    assert 'id="recommend-slot"' in fragment.text  # the recommendation still loads on its own


def test_the_speed_sections_error_is_inline_too(client: TestClient) -> None:
    # DeepSeek-V3 at TP 8 on H100: /speed answers 422 with the section's error; the results show it
    form = {
        "v": "1",
        "model": "deepseek-ai/DeepSeek-V3",
        "tensor_parallel_size": "8",
        "max_model_len": "32768",
    }
    fragment = client.post("/", data=form, headers=HX).text
    state = html.unescape(STATE.search(fragment).group(1))  # type: ignore[union-attr]
    slot = client.post("/speed", data={"state": state}, headers=HX)
    assert slot.status_code == 422 and 'id="speed-error"' in slot.text
    assert _speed_section(fragment) == slot.text.strip()


def test_a_full_page_and_pasted_runs_keep_the_slot(client: TestClient) -> None:
    page = client.get("/", params=FORM).text
    assert 'id="speed-slot"' in page and 'id="speed-ttft"' not in page
    runs = client.post("/", data={**FORM, "my_runs": "TPOT 30 ms at 8 concurrent"}, headers=HX).text
    assert 'id="speed-slot"' in runs and 'id="speed-ttft"' not in runs
