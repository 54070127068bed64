"""Round 9 review (review9b): pasted runs that were a 500.

* A run's `vllm serve` line that the command reader takes but the planner's fields refuse (``-tp 3``:
  not a power of two; ``-tp 99``; ``--max-model-len 1``: under 16; ``--quantization xx``) raised
  pydantic's ValidationError out of app.web.measured_runs.page_runs: a 500 on every route that reads
  the box. It is now the field's own message, on ``my_runs``, naming the box's line, as the CLI says it.
"""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import urlencode

import pytest

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
LLAMA = {"model": MODEL, "device": "nvidia-h100-sxm-80gb"}
FLEET = {"input_tokens": "1024", "output_tokens": "256", "requests_per_s": "5", "devices_available": "8"}
POWERS = "(1, 2, 4, 8, 16, 32, 64, 128, 256)"  # params.TENSOR_PARALLEL_SIZES

# the flag, the message en and zh (the zh catalog's entries for the same sentences)
REFUSED = [
    (
        "-tp 3",
        f"line 1: tensor_parallel_size: must be a power of two {POWERS}: the tensor-parallel sizes of real machines",
        "第 1 行：tensor_parallel_size：必须是 2 的幂",
    ),
    (
        "--max-model-len 1",
        "line 1: max_model_len: Input should be greater than or equal to 16",
        "应大于或等于 16",
    ),
    (
        "--quantization xx",
        "line 1: quantization: unknown --quantization 'xx'; known: ",
        "未知的 --quantization",
    ),
]


def _box(flag: str) -> str:
    return f"vllm serve {MODEL} {flag}\nMean TPOT (ms): 10"


@pytest.mark.parametrize(("flag", "en", "zh"), REFUSED)
@pytest.mark.parametrize("path", ["/api/performance", "/api/fleet", "/api/recommend"])
def test_a_refused_serve_flag_is_a_422_on_the_box(
    client: Any, path: str, flag: str, en: str, zh: str
) -> None:
    answer = client.post(path, json={**LLAMA, "my_runs": _box(flag)})
    assert answer.status_code == 422, answer.text[:300]
    detail = answer.json()["detail"][0]
    assert detail["loc"] == ["body", "my_runs"] and detail["msg"].startswith(en), detail


def test_tp_99_is_refused_by_its_bound(client: Any) -> None:
    answer = client.post("/api/performance", json={**LLAMA, "my_runs": _box("-tp 99")})
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["msg"].startswith("line 1: tensor_parallel_size: "), answer.text


@pytest.mark.parametrize(("flag", "en", "zh"), REFUSED)
@pytest.mark.parametrize(
    ("path", "prefix", "extra"),
    [("/speed", "speed", {}), ("/recommend", "recommend", {}), ("/fleet", "fleet", FLEET)],
)
def test_the_pages_show_it_beside_their_figures(
    client: Any, path: str, prefix: str, extra: dict[str, str], flag: str, en: str, zh: str
) -> None:
    for lang, expected in (("en", en), ("zh", zh)):
        query = {**LLAMA, **extra, "my_runs": _box(flag), "lang": lang}
        page = client.get(f"{path}?" + urlencode(query))
        assert page.status_code == 200, page.text[:300]
        found = re.search(rf'id="{prefix}-runs-error"><code>my_runs</code>: ([^<]+)', page.text)
        assert found and expected in html.unescape(found.group(1)), (lang, found and found.group(1))


def test_the_fleet_form_post_shows_it(client: Any) -> None:
    form = {**LLAMA, **FLEET, "my_runs": _box("-tp 3")}
    page = client.post("/fleet", data=form, headers={"HX-Request": "true"})
    assert page.status_code == 200, page.text[:300]
    assert "line 1: tensor_parallel_size: must be a power of two" in page.text


# * Any positive finite figure was kept (app.core.perf.measured.read_run): "Mean TPOT (ms): 1e-300" made a
#   factor of ~1e-302 and /api/fleet overflowed in cost.device_hours_per_million_output_tokens; 1e-320 on
#   GET /fleet reached math.log10(0) in fleet/svg.log_ticks. A run's figure is now kept only within
#   1/100 .. 100 x what the model predicts for it (cluster.MAX_RUN_FACTOR), else refused naming the key.
TINY = "Mean TPOT (ms): 1e-300\nMean TTFT (ms): 1e-300\nOutput token throughput (tok/s): 1e-300"


@pytest.mark.parametrize("path", ["/api/performance", "/api/fleet", "/api/recommend"])
def test_a_figure_far_from_the_model_is_refused_naming_it(client: Any, path: str) -> None:
    answer = client.post(path, json={**LLAMA, "my_runs": f"vllm serve {MODEL}\n{TINY}"})
    assert answer.status_code == 422, answer.text[:300]
    detail = answer.json()["detail"][0]
    assert detail["loc"] == ["body", "my_runs"]
    # the run starts on line 2, under its serve line; RESULT_KEYS' order names the TTFT first
    assert detail["msg"].startswith("line 2: mean_ttft_ms: 1e-300 is not a figure of this configuration")


def test_the_fleet_page_shows_it_in_both_languages(client: Any) -> None:
    for lang, said in (
        ("en", "line 1: mean_tpot_ms: 1e-320 is not a figure of this configuration"),
        ("zh", "第 1 行：mean_tpot_ms：1e-320 不是该配置的实测值"),
    ):
        query = {**LLAMA, **FLEET, "my_runs": "Mean TPOT (ms): 1e-320", "lang": lang}
        page = client.get("/fleet?" + urlencode(query))
        assert page.status_code == 200, page.text[:300]
        found = re.search(r'id="fleet-runs-error"><code>my_runs</code>: ([^<]+)', page.text)
        assert found and html.unescape(found.group(1)).startswith(said), found and found.group(1)


def test_an_api_run_is_refused_on_its_own_field(client: Any) -> None:
    run = {**LLAMA, "measured": {"mean_tpot_ms": 1e-300}}
    answer = client.post("/api/performance", json={**LLAMA, "measured_runs": [run]})
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["loc"] == ["body", "measured_runs[0]"]


def _block(clients: int, ttft_ms: float | None) -> str:
    ttft = f"Mean TTFT (ms): {ttft_ms}\n" if ttft_ms is not None else ""
    return (
        "============ Serving Benchmark Result ============\n"
        f"Maximum request concurrency: {clients}\nSuccessful requests: 64\n{ttft}Mean TPOT (ms): 9.5\n"
    )


def test_an_api_paste_of_two_runs_is_refused_not_merged(client: Any) -> None:
    # review9b: measured_runs[i].paste was read as one run, so block 1 (1 client, TTFT 50 ms) and block 2 (64
    # clients, no TTFT) merged into one run at 64 clients with TTFT 50 ms; the page box splits the same text in two
    run = {**LLAMA, "paste": _block(1, 50.0) + _block(64, None)}
    answer = client.post("/api/performance", json={**LLAMA, "measured_runs": [run]})
    assert answer.status_code == 422, answer.text[:300]
    detail = answer.json()["detail"][0]
    assert detail["loc"] == ["body", "measured_runs[0].paste"]
    assert detail["msg"].startswith("holds 2 runs"), detail["msg"]
    one = client.post(
        "/api/performance", json={**LLAMA, "measured_runs": [{**LLAMA, "paste": _block(1, 50.0)}]}
    )
    assert one.status_code == 200, one.text[:300]


def test_an_api_paste_with_a_serve_line_is_refused(client: Any) -> None:
    # review9b: a paste starting "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 8" calibrated the entry's 8B
    # model without a word; the entry's own fields are its configuration
    run = {**LLAMA, "paste": "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 8\n" + _block(8, 50.0)}
    answer = client.post(
        "/api/performance", json={**LLAMA, "measured_runs": [run]}, headers={"Accept-Language": "zh"}
    )
    assert answer.status_code == 422, answer.text[:300]
    detail = answer.json()["detail"][0]
    assert detail["loc"] == ["body", "measured_runs[0].paste"]
    assert detail["msg"].startswith("含有 vllm serve 命令行"), detail["msg"]


# * The serve line's number was taken as the run's first line minus one (app.web.measured_runs.page_runs):
#   with a blank line between the serve line and a --save-result JSON run, the run starts on line 3 and the
#   message said "line 2", a blank line. split_runs now keeps the serve line's own number (line 1 here).
def test_a_refused_serve_flag_names_its_own_line_past_blank_lines(client: Any) -> None:
    box = f'vllm serve {MODEL} -tp 3\n\n{{"mean_tpot_ms": 10, "num_prompts": 8}}'
    answer = client.post("/api/performance", json={**LLAMA, "my_runs": box})
    assert answer.status_code == 422, answer.text[:300]
    assert answer.json()["detail"][0]["msg"].startswith("line 1: tensor_parallel_size: "), answer.text
