"""A short benchmark against a short ``--max-model-len`` on the page, the API and `kvplan perf` (issue 23,
round 6 fault 1): the form sends only the lengths the user set; a length left blank is the benchmark's
mean request, else 1,024, shortened to fit max_model_len; no 422 names a field the user never touched.

Before round 6 the page's form always sent input_tokens=1024 and output_tokens=1024, and the Speed
section of ``--max-model-len 320`` answered a 422 on ``output_tokens`` (1,024 + 1,024 = 2,048 > 320)
whether or not a 128 + 128-token benchmark was set.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode

import pytest

from app.cli import main
from app.web.format import speed_number

PAGE = {
    "v": "1",
    "model": "meta-llama/Llama-3.1-8B-Instruct",
    "device": "nvidia-h100-sxm-80gb",
    "max_model_len": "320",
}
SHORT_BENCH = {"bench_serve": "true", "random_input_len": "128", "random_output_len": "128"}


def _field(html: str, name: str) -> tuple[str, str]:
    """(value, placeholder) of the form's text input ``name``."""
    tag = re.search(rf'<input[^>]*name="{name}"[^>]*>', html)
    assert tag, name
    value = re.search(r'value="([^"]*)"', tag.group(0))
    placeholder = re.search(r'placeholder="([^"]*)"', tag.group(0))
    return (value.group(1) if value else "", placeholder.group(1) if placeholder else "")


def _state(html: str) -> list[tuple[str, str]]:
    state = re.search(r'id="planner-state" name="state" form="command-form" value="([^"]+)"', html)
    assert state
    return parse_qsl(unquote(state.group(1).replace("&amp;", "&")))


def _figure(html: str, key: str) -> str:
    match = re.search(
        rf'id="speed-{key}"><span class="label">[^<]*</span>\s*<strong class="value">([^<]+)<', html
    )
    assert match, key
    return match.group(1)


def test_the_form_sends_only_what_the_user_set(client: Any) -> None:
    page = client.get("/?" + urlencode({**PAGE, **SHORT_BENCH}))
    assert page.status_code == 200
    # blank boxes whose placeholders say what a blank serves: the benchmark's 128 + 128 request
    assert _field(page.text, "input_tokens") == ("", "128")
    assert _field(page.text, "output_tokens") == ("", "128")
    assert not {"input_tokens", "output_tokens"} & {k for k, _ in _state(page.text)}
    plain = client.get("/?" + urlencode(PAGE))
    # no benchmark: 1,024 + 1,024 in proportion into 320 tokens -> 320 x 1,024 // 2,048 = 160, 320 - 160
    assert _field(plain.text, "input_tokens") == ("", "160")
    assert _field(plain.text, "output_tokens") == ("", "160")


def test_a_short_benchmark_on_a_short_length_answers_on_the_page(client: Any) -> None:
    page = client.get("/?" + urlencode({**PAGE, **SHORT_BENCH}))
    speed = client.post("/speed", data={"state": urlencode(_state(page.text))})
    assert speed.status_code == 200, speed.text  # was 422: output_tokens, 2,048 > 320
    assert 'id="speed-error"' not in speed.text and 'id="speed-bench"' in speed.text
    # the steady state is the benchmark's own request: the API's answer for 128 + 128 at 16 clients
    api = client.post(
        "/api/performance",
        json={
            "model": PAGE["model"],
            "device": PAGE["device"],
            "max_model_len": 320,
            "input_tokens": 128,
            "output_tokens": 128,
        },
    ).json()
    assert _figure(speed.text, "tpot") == speed_number(api["tpot_ms"]["expected"])
    assert _figure(speed.text, "ttft") == speed_number(api["ttft_ms"]["expected"])


def test_the_default_lengths_shrink_to_fit_and_say_so(client: Any) -> None:
    speed = client.get("/speed?" + urlencode(PAGE))
    assert speed.status_code == 200, speed.text  # was 422 on output_tokens
    assert "1,024 input + 1,024 output tokens exceed max_model_len (320): modelled as 160 + 160" in speed.text
    api = client.post(
        "/api/performance", json={"model": PAGE["model"], "device": PAGE["device"], "max_model_len": 320}
    ).json()
    assert (api["input_tokens"], api["output_tokens"]) == (160, 160)
    # a length the user set is kept, the other shortened: 300 + (320 - 300 = 20)
    given = client.get("/speed?" + urlencode({**PAGE, "input_tokens": "300"}))
    assert given.status_code == 200
    assert "300 input + 1,024 output tokens exceed max_model_len (320): modelled as 300 + 20" in given.text


def test_a_length_the_user_set_is_named_when_it_cannot_run(client: Any) -> None:
    speed = client.get("/speed?" + urlencode({**PAGE, "input_tokens": "400"}))
    assert speed.status_code == 422
    errors = re.findall(r"<p><code>([a-z_]+)</code>: ([^<]+)</p>", speed.text)
    assert [field for field, _ in errors] == ["input_tokens"]  # never output_tokens, which they left blank
    # vLLM's first check (serving.py _validate_input): a prompt of max_model_len tokens or more
    assert "a prompt of 400 tokens leaves no room for output within max_model_len (320)" in errors[0][1]
    both = client.get("/speed?" + urlencode({**PAGE, "input_tokens": "1024", "output_tokens": "1024"}))
    # both set: the user's request, refused by vLLM's first check (a 1,024-token prompt >= 320) on the prompt
    assert both.status_code == 422 and "<code>input_tokens</code>" in both.text
    over = client.get("/speed?" + urlencode({**PAGE, "input_tokens": "300", "output_tokens": "21"}))
    # 300 + 21 = 321 > 320: the second check, on output_tokens (vLLM's max_tokens)
    assert over.status_code == 422 and "<code>output_tokens</code>" in over.text
    assert "300 input + 21 output tokens = 321 exceed max_model_len (320)" in over.text


def test_a_value_the_user_typed_rides_in_the_permalink(client: Any) -> None:
    # 1,024 typed by hand is the user's (it used to be dropped as the default, then read as untouched)
    page = client.get("/?" + urlencode({**PAGE, "max_model_len": "4096", "input_tokens": "1024"}))
    assert ("input_tokens", "1024") in _state(page.text)
    assert _field(page.text, "input_tokens")[0] == "1024"


def test_kvplan_perf_on_a_short_length(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["perf", "llama-3.1-8b", "--device", "h100", "--max-model-len", "320"]
    assert main([*argv, "--random-input-len", "128", "--random-output-len", "128"]) == 0
    assert "16 clients x (128 in + 128 out)" in capsys.readouterr().out
    assert main([*argv, "--max-concurrency", "4", "--random-input-len", "128", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # 128 + 128 (bench_args: --random-output-len's default) at the benchmark's 4 clients
    assert (data["input_tokens"], data["output_tokens"], data["concurrency"]) == (128, 128, 4)
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "16 clients x (160 in + 160 out)" in out and "modelled as 160 + 160" in out


def test_the_clients_box_and_its_slider_say_the_same_number(client: Any) -> None:
    # a benchmark run with --max-concurrency 48 and the clients box left blank: the Speed section runs 48
    # clients (workload_of), so the box's placeholder and the slider's position both say 48, not the
    # default 16 the slider stood at before
    page = client.get("/?" + urlencode({**PAGE, **SHORT_BENCH, "max_concurrency": "48"}))
    assert page.status_code == 200
    assert _field(page.text, "concurrency") == ("", "48")
    slider = re.search(r'<input id="f-conc-slider"[^>]*>', page.text)
    assert slider
    index = int(re.search(r'value="(\d+)"', slider.group(0)).group(1))  # type: ignore[union-attr]
    stops = re.search(r'data-values="([^"]*)"', slider.group(0)).group(1).split(",")  # type: ignore[union-attr]
    assert stops[index] == "48"
