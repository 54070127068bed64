"""Your measured runs calibrate every speed figure on /fleet and /recommend, pages and APIs alike, and
each of them says so (issue 23 item 5), in English and Chinese: "calibrated on your N runs" beside a
figure of a kind the runs measured, and a caption naming those kinds ("TPOT calibrated on your 1 run")
where a line covers every figure (round 8: tests/web/test_calibrated_only_measured.py).

One run of the configuration measured 20 % slower per token than the model predicts for it: the
cluster's TPOT factor is then exactly 1.2 (app.core.perf.cluster: the median over one run's one key of
log(measured / predicted)), so every calibrated TPOT is 1.2 x the uncalibrated one at the same point.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

CAPTION = "calibrated on your 1 run"  # singular (app.core.perf.calibrated.RunsScope.tag)
CAPTION_ZH = "已基于您的 1 次运行校准"  # app/i18n/zh/LC_MESSAGES/messages.po
# the runs below measure TPOT alone: a line covering every figure names it (app.web.measured_runs.runs_caption)
SCOPED = "TPOT calibrated on your 1 run"
SCOPED_ZH = "TPOT 已基于您的 1 次运行校准"
LLAMA_8B = {"model": "meta-llama/Llama-3.1-8B-Instruct", "device": "nvidia-h100-sxm-80gb"}
BENCH = {"num_prompts": 64, "max_concurrency": 8, "random_input_len": 1024, "random_output_len": 256}
FLEET = {
    **LLAMA_8B,
    "input_tokens": 1024,
    "output_tokens": 256,
    "requests_per_s": 5,
    "slo_ttft_ms": 2000,
    "slo_tpot_ms": 50,
    "devices_available": 8,
}
# 64 x 8,192 from TP 2 on H100 (tests/web/test_recommend_speed_web.py): fp8 KV, then TP 4 meets it
LLAMA_70B = {"model": "meta-llama/Llama-3.1-70B", "device": "nvidia-h100-sxm-80gb"}
RECOMMEND = {
    **LLAMA_70B,
    "tensor_parallel_size": 2,
    "max_model_len": 8192,
    "target_concurrency": 64,
    "input_tokens": 2048,
    "output_tokens": 512,
    "concurrency": 32,
}


def _slow_run(client: Any, config: dict[str, Any]) -> dict[str, Any]:
    """A measured run of ``config`` whose mean TPOT is 1.2 x what the model predicts for it."""
    base = client.post("/api/performance", json={**config, "bench": BENCH})
    assert base.status_code == 200, base.text
    predicted = base.json()["bench"]["mean_tpot_ms"]["expected"]
    return {**config, "bench": BENCH, "measured": {"mean_tpot_ms": predicted * 1.2}}


def _paste(client: Any, config: dict[str, Any], command: str) -> str:
    """The same run as the page's box takes it: the serve command, then vLLM's printed block
    (64 prompts x 1,024 / 256 tokens = 65,536 input / 16,384 generated tokens)."""
    tpot = _slow_run(client, config)["measured"]["mean_tpot_ms"]
    block = (
        "Maximum request concurrency: 8",
        "============ Serving Benchmark Result ============",
        "Successful requests:                     64",
        "Total input tokens:                      65536",
        "Total generated tokens:                  16384",
        f"Mean TPOT (ms):                          {tpot:.6f}",
        "==================================================",
    )
    return "\n".join((command, *block)) + "\n"


def test_fleet_api_says_every_figure_is_calibrated(client: Any) -> None:
    run = _slow_run(client, {**LLAMA_8B, "max_model_len": 2048})
    plain = client.post("/api/fleet", json=FLEET).json()
    assert plain["calibrated_runs"] == 0 and plain["speed_caption"] == ""
    assert all(c["speed_caption"] == "" for c in plain["candidates"])
    answer = client.post("/api/fleet", json={**FLEET, "measured_runs": [run]})
    assert answer.status_code == 200, answer.text
    data = answer.json()
    assert data["calibrated_runs"] == 1 and data["speed_caption"] == SCOPED
    assert data["candidates"] and all(c["calibrated_runs"] == 1 for c in data["candidates"])
    assert all(c["speed_caption"] == SCOPED for c in data["candidates"] + data["pareto"])
    assert data["best"]["speed_caption"] == SCOPED
    # the best layout's TPOT is the calibrated Speed answer at its operating point: 1.2 x the model's
    point = dict(parse_qsl(urlsplit(data["best"]["permalink"]).query))
    calibrated = client.post("/api/performance", json={**point, "measured_runs": [run]}).json()
    uncalibrated = client.post("/api/performance", json=point).json()
    assert data["best"]["tpot_ms"]["expected"] == pytest.approx(calibrated["tpot_ms"]["expected"], rel=1e-9)
    assert data["best"]["tpot_ms"]["expected"] == pytest.approx(
        1.2 * uncalibrated["tpot_ms"]["expected"], rel=1e-9
    )


@pytest.mark.parametrize(("lang", "caption"), [("en", SCOPED), ("zh", SCOPED_ZH)])
def test_fleet_page_box_calibrates_and_says_so(client: Any, lang: str, caption: str) -> None:
    runs = _paste(
        client, {**LLAMA_8B, "max_model_len": 2048}, f"vllm serve {LLAMA_8B['model']} --max-model-len 2048"
    )
    query = {**{k: str(v) for k, v in FLEET.items()}, "my_runs": runs, "lang": lang}
    page = client.get("/fleet?" + urlencode(query))
    assert page.status_code == 200, page.text
    rows = page.text.count('class="fleet-row')
    assert rows > 0
    # the subject line, the best layout's summary, the table's note and the frontier's note (each row's
    # TPOT is tagged by its column: test_calibrated_only_measured.py)
    assert page.text.count(caption) == 4
    assert 'id="fleet-calibrated"' in page.text and "my_runs=z%3A" in page.text  # deflated in the permalink
    assert re.search(r'id="fleet-best-summary">[^<]*\(' + re.escape(caption) + r"\)</p>", page.text)
    plain = client.get("/fleet?" + urlencode({**{k: str(v) for k, v in FLEET.items()}, "lang": lang}))
    assert caption not in plain.text


def test_recommend_api_says_every_figure_is_calibrated(client: Any) -> None:
    run = _slow_run(client, {**LLAMA_70B, "tensor_parallel_size": 4, "max_model_len": 2048})
    plain = client.post("/api/recommend", json=RECOMMEND).json()
    answer = client.post("/api/recommend", json={**RECOMMEND, "measured_runs": [run]})
    assert answer.status_code == 200, answer.text
    data = answer.json()
    assert plain["calibrated_runs"] == 0 and data["calibrated_runs"] == 1 and data["speed_caption"] == SCOPED
    assert [s["key"] for s in data["steps"]] == [s["key"] for s in plain["steps"]]
    compared = 0
    for mine, theirs in zip(data["steps"], plain["steps"], strict=True):
        for side in ("before", "after"):
            point, base = mine["speed"][side], theirs["speed"][side]
            if point is None:
                continue
            assert point["calibrated_runs"] == 1
            assert point["tpot_ms"]["expected"] == pytest.approx(1.2 * base["tpot_ms"]["expected"], rel=1e-9)
            compared += 1
    assert compared >= 2
    assert data["cheapest"] is not None
    assert all(layout["calibrated_runs"] == 1 for layout in data["cheapest"]["layouts"])


@pytest.mark.parametrize(("lang", "caption"), [("en", SCOPED), ("zh", SCOPED_ZH)])
def test_recommend_page_box_calibrates_and_says_so(client: Any, lang: str, caption: str) -> None:
    runs = _paste(
        client,
        {**LLAMA_70B, "tensor_parallel_size": 4, "max_model_len": 2048},
        f"vllm serve {LLAMA_70B['model']} --tensor-parallel-size 4 --max-model-len 2048",
    )
    query = {**{k: str(v) for k, v in RECOMMEND.items()}, "v": "1", "my_runs": runs, "lang": lang}
    page = client.get("/recommend?" + urlencode(query))
    assert page.status_code == 200, page.text
    speed_lines = re.findall(r'class="step-speed">([^<]+)<', page.text)
    assert speed_lines and all(caption in line for line in speed_lines)
    assert re.search(r'id="recommend-cheapest">[^<]*\(' + re.escape(caption) + r"\)", page.text)
    plain = client.get("/recommend?" + urlencode({**{k: str(v) for k, v in RECOMMEND.items()}, "v": "1"}))
    assert caption not in plain.text
