"""Your runs calibrate only the kinds of figure they measured, and every caption says which (issue 23,
round 8 page faults 1 and 9).

Round 7 scaled only the measured kinds (app.core.perf.cluster: a kind no run measured has factor 1.0
and keeps the model's band), but the fleet and the recommender still tagged every figure "calibrated
on your N runs", and the Speed section's note said "every figure is scaled by this cluster's measured
factors", for a paste that measured TPOT alone. The run here measured only mean_tpot_ms (1.2 x the
model's), so TPOT is calibrated and TTFT and throughput are the model's.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.web.test_calibrated_everywhere import (
    BENCH,
    CAPTION,
    CAPTION_ZH,
    FLEET,
    LLAMA_8B,
    LLAMA_70B,
    RECOMMEND,
    SCOPED,
    SCOPED_ZH,
    _paste,
    _slow_run,
)

NOTE_PARTIAL = (
    "Calibrated on your 1 run for TPOT only: those figures are scaled by this cluster's measured "
    "factors; the others are the model's, with its bands (your run did not measure them)."
)
NOTE_EVERY = "Calibrated on your 1 run: every figure is scaled by this cluster's measured factors."


def test_performance_note_and_caption_name_the_measured_figures(client: Any) -> None:
    config = {**LLAMA_8B, "max_model_len": 2048}
    run = _slow_run(client, config)
    answer = client.post("/api/performance", json={**config, "bench": BENCH, "measured_runs": [run]}).json()
    assert answer["speed_caption"] == SCOPED and answer["calibrated_figures"] == ["tpot"]
    assert answer["notes"][0] == NOTE_PARTIAL
    # a run that measured every kind: the whole wording, every figure scaled
    every = {**run, "measured": {**run["measured"], "mean_ttft_ms": 50.0, "output_throughput": 1000.0}}
    answer = client.post("/api/performance", json={**config, "bench": BENCH, "measured_runs": [every]}).json()
    assert answer["speed_caption"] == CAPTION
    assert answer["calibrated_figures"] == ["tpot", "ttft", "throughput"]
    assert answer["notes"][0] == NOTE_EVERY


def test_fleet_api_names_the_calibrated_figures(client: Any) -> None:
    run = _slow_run(client, {**LLAMA_8B, "max_model_len": 2048})
    data = client.post("/api/fleet", json={**FLEET, "measured_runs": [run]}).json()
    assert data["speed_caption"] == SCOPED and data["calibrated_figures"] == ["tpot"]
    assert all(c["speed_caption"] == SCOPED for c in data["candidates"] + data["pareto"])
    assert all(c["calibrated_figures"] == ["tpot"] for c in data["candidates"])


@pytest.mark.parametrize(
    ("lang", "caption", "scoped"), [("en", CAPTION, SCOPED), ("zh", CAPTION_ZH, SCOPED_ZH)]
)
def test_fleet_page_tags_only_the_measured_columns(client: Any, lang: str, caption: str, scoped: str) -> None:
    runs = _paste(
        client, {**LLAMA_8B, "max_model_len": 2048}, f"vllm serve {LLAMA_8B['model']} --max-model-len 2048"
    )
    query = {**{k: str(v) for k, v in FLEET.items()}, "my_runs": runs, "lang": lang}
    page = client.get("/fleet?" + urlencode(query)).text
    assert re.search(r'id="fleet-calibrated">' + re.escape(scoped) + "<", page)
    assert re.search(r'id="fleet-best-summary">[^<]*\(' + re.escape(scoped) + r"\)</p>", page)
    # the TPOT columns (layouts, frontier: TPOT and tokens/s per user) say so; TTFT and throughput do not
    assert page.count(f'runs-tag-tpot">{caption}<') == 3
    assert "runs-tag-ttft" not in page and "runs-tag-throughput" not in page
    # no SLO cell claims the runs calibrated its verdict (TTFT is the model's)
    cells = re.findall(r'<td class="cell-slo">(.*?)</td>', page)
    assert cells and not any("runs-tag" in cell for cell in cells)


def test_recommend_says_which_figures_are_calibrated(client: Any) -> None:
    run = _slow_run(client, {**LLAMA_70B, "tensor_parallel_size": 4, "max_model_len": 2048})
    data = client.post("/api/recommend", json={**RECOMMEND, "measured_runs": [run]}).json()
    assert data["speed_caption"] == SCOPED and data["calibrated_figures"] == ["tpot"]
    runs = _paste(
        client,
        {**LLAMA_70B, "tensor_parallel_size": 4, "max_model_len": 2048},
        f"vllm serve {LLAMA_70B['model']} --tensor-parallel-size 4 --max-model-len 2048",
    )
    query = {**{k: str(v) for k, v in RECOMMEND.items()}, "v": "1", "my_runs": runs}
    page = client.get("/recommend?" + urlencode(query)).text
    lines = re.findall(r'class="step-speed">([^<]+)<', page)
    # the figures no run measured and where they come from (round 9: round 8 read "(TPOT calibrated on
    # your 1 run; the rest calibrated)", the model's basis beside your runs')
    assert lines and all(
        re.search(
            re.escape(SCOPED) + r"; TTFT, throughput (from the model&#39;s fit|extrapolated by the model)\)",
            x,
        )
        for x in lines
    )
    assert not any("the rest" in x for x in lines)
