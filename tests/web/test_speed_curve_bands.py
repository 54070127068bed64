"""The Speed curve's table gives each figure its band (issue 23, round 8 page fault 3).

Until round 8 the curve (POST /api/performance's ``curve``, the Speed section's "The curve as a
table") carried expected values only, as bare floats, while every other speed figure is a
``{low, expected, high}`` Range. Each point is now banded as the operating point is
(app.core.perf.predict._bands and the same widening), so the point at the asked concurrency is the
headline figure exactly, and a point past the KV cliff has the pool's wider TTFT band.
"""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import urlencode

import pytest

from app.core.perf.predict import KV_LIMITED_BAND_WIDEN
from app.core.result import Range
from app.web.format import speed_band, speed_number

# Llama-3.1-8B on one H100 at 32 clients of 1,024 + 256 tokens: inside the pool (no cliff below 32)
BODY = {
    "model": "meta-llama/Llama-3.1-8B-Instruct",
    "device": "nvidia-h100-sxm-80gb",
    "max_model_len": 4096,
    "input_tokens": 1024,
    "output_tokens": 256,
    "concurrency": 32,
}
FIGURES = ("ttft_ms", "tpot_ms", "output_tokens_per_s")


@pytest.fixture(scope="module")
def answer(web_app: Any) -> dict[str, Any]:
    from tests.web.conftest import TestClient

    response = TestClient(web_app).post("/api/performance", json=BODY)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_the_curve_at_the_asked_clients_is_the_headline(answer: dict[str, Any]) -> None:
    point = next(p for p in answer["curve"] if p["concurrency"] == BODY["concurrency"])
    for key in FIGURES:
        assert point[key] == answer[key], key  # the same figure, the same band
    for p in answer["curve"]:
        for key in FIGURES:
            assert 0 < p[key]["low"] <= p[key]["expected"] <= p[key]["high"], (p["concurrency"], key)


def test_each_point_has_the_operating_points_relative_band(answer: dict[str, Any]) -> None:
    # the band is multiplicative (expected x exp(log quantile x widening)): inside the pool, each
    # point's high / expected is the headline's
    assert not answer["kv_limited"]
    for p in answer["curve"]:
        for key in FIGURES:
            if p["kv_limited"] and key == "ttft_ms":
                continue
            ratio = p[key]["high"] / p[key]["expected"]
            assert ratio == pytest.approx(answer[key]["high"] / answer[key]["expected"], rel=1e-12), key


def test_past_the_cliff_ttft_has_the_pools_wider_band(client: Any) -> None:
    # 8,192-token requests on a 4 GiB pool (gpu_memory_utilization 0.25): the cliff is within the curve
    body = {
        **BODY,
        "max_model_len": 8192,
        "input_tokens": 7168,
        "output_tokens": 1024,
        "gpu_memory_utilization": 0.25,
    }
    data = client.post("/api/performance", json=body).json()
    cliff = data["kv_limited_from_concurrency"]
    assert cliff is not None
    inside = next(p for p in data["curve"] if not p["kv_limited"])
    past = next(p for p in data["curve"] if p["kv_limited"])

    def log_high(p: dict[str, Any]) -> float:
        import math

        return math.log(p["ttft_ms"]["high"] / p["ttft_ms"]["expected"])

    assert log_high(past) == pytest.approx(log_high(inside) * KV_LIMITED_BAND_WIDEN, rel=1e-9)


def test_the_pages_table_shows_the_bands(client: Any, answer: dict[str, Any]) -> None:
    page = client.get("/speed?" + urlencode({"v": "1", **{k: str(v) for k, v in BODY.items()}})).text
    table = re.search(r'<table class="symbols" id="speed-table">(.*?)</table>', page, re.S)
    assert table
    rows = re.findall(r"<tr[^>]*><td class=\"num\">(\d+)</td>(.*?)</tr>", table.group(1))
    assert len(rows) == len(answer["curve"])
    for (clients, cells), point in zip(rows, answer["curve"], strict=True):
        assert int(clients) == point["concurrency"]
        shown = re.findall(r'<td class="num">([^<]+) <span class="range">([^<]+)</span>', cells)
        expected = [
            (speed_number(point[key]["expected"]), speed_band(Range(**point[key]))) for key in FIGURES
        ]
        assert [(html.unescape(a).strip(), html.unescape(b)) for a, b in shown] == expected
