"""The fleet's default load on a short max_model_len (issue 23, round 8 page fault 2).

The fleet's load defaults to the issue's 2,048 input / 256 output tokens. Against
``--max-model-len 1024`` that request is 2,304 tokens, which vLLM rejects, and until round 8 /api/fleet
and /fleet answered a 422 on ``output_tokens`` — a field the user never set. Now the fleet applies the
Speed section's workload rule (app.core.perf.workload.workload_lengths): lengths the user did not set
shrink to fit, in proportion when neither was set, and a note says so; a length the user did set is
kept and still validated.

Worked by hand: both free, 2,048 + 256 into 1,024 -> input 1,024 x 2,048 // 2,304 = 910 (2,097,152 /
2,304 = 910.2), output 1,024 - 910 = 114.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

SHORT = {
    "model": "meta-llama/Llama-3.1-8B-Instruct",
    "device": "nvidia-h100-sxm-80gb",
    "max_model_len": 1024,
    "devices_available": 8,
}
NOTE = "2,048 input + 256 output tokens exceed max_model_len (1,024): modelled as 910 + 114"


def test_api_defaults_shrink_to_fit_and_say_so(client: Any) -> None:
    answer = client.post("/api/fleet", json=SHORT)
    assert answer.status_code == 200, answer.text
    data = answer.json()
    assert any(NOTE in note for note in data["notes"]), data["notes"]
    assert data["candidates"]
    # each candidate's planner link opens the Speed section on the same (shortened) request
    link = dict(parse_qsl(urlsplit(data["candidates"][0]["permalink"]).query))
    assert (link["input_tokens"], link["output_tokens"]) == ("910", "114")
    # the cost per million output tokens is for 114-token answers (the load as modelled)
    best = data["best"]
    assert best is not None


def test_api_keeps_a_length_the_user_set(client: Any) -> None:
    # output 256 set, input free: 1,024 - 256 = 768 input tokens
    answer = client.post("/api/fleet", json={**SHORT, "output_tokens": 256})
    assert answer.status_code == 200, answer.text
    link = dict(parse_qsl(urlsplit(answer.json()["candidates"][0]["permalink"]).query))
    assert (link["input_tokens"], link["output_tokens"]) == ("768", "256")


@pytest.mark.parametrize(
    ("given", "field"),
    [
        ({"output_tokens": 1024}, "output_tokens"),  # alone it leaves no room
        ({"input_tokens": 1024}, "input_tokens"),
        # both set: the user's request, by vLLM's two checks (app.core.perf.too_long): a 2,048-token
        # prompt >= 1,024 on the prompt; 1,000 + 256 = 1,256 > 1,024 on the output
        ({"input_tokens": 2048, "output_tokens": 256}, "input_tokens"),
        ({"input_tokens": 1000, "output_tokens": 256}, "output_tokens"),
    ],
)
def test_an_explicit_length_is_still_validated(client: Any, given: dict[str, int], field: str) -> None:
    answer = client.post("/api/fleet", json={**SHORT, **given})
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"][0]["loc"][-1] == field


def test_page_answers_with_the_note(client: Any) -> None:
    page = client.get("/fleet?" + urlencode({k: str(v) for k, v in SHORT.items()}))
    assert page.status_code == 200, page.text
    assert 'class="fleet-row' in page.text
    assert NOTE in page.text
    assert "These inputs cannot be computed" not in page.text


def test_page_boxes_blank_with_what_they_model(client: Any) -> None:
    # the form's blank boxes (as a submit sends them) are not set: they model the default, shortened
    query = {**{k: str(v) for k, v in SHORT.items()}, "input_tokens": "", "output_tokens": " "}
    page = client.get("/fleet?" + urlencode(query))
    assert page.status_code == 200, page.text
    assert NOTE in page.text
    assert 'name="input_tokens" type="text" inputmode="numeric" value="" placeholder="910"' in page.text
    assert 'name="output_tokens" type="text" inputmode="numeric" value="" placeholder="114"' in page.text
    # a length the user typed stays in its box and in the permalink, even at the default
    typed = client.get(
        "/fleet?" + urlencode({**{k: str(v) for k, v in SHORT.items()}, "output_tokens": "256"})
    )
    assert 'name="output_tokens" type="text" inputmode="numeric" value="256"' in typed.text
    assert "output_tokens=256" in typed.text
