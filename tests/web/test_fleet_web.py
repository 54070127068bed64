"""POST /api/fleet and the /fleet page: the fields, a 422 naming every bad input, and permalinks that
open the planner on the same numbers (the planner's own /api/estimate and /api/performance answer them)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.web.conftest import TestClient

BODY: dict[str, Any] = {
    "model": "meta-llama/Llama-3.1-70B",
    "device": "nvidia-h100-sxm-80gb",
    "max_model_len": 8192,
    "input_tokens": 2048,
    "output_tokens": 256,
    "requests_per_s": 20,
    "slo_ttft_ms": 2000,
    "slo_tpot_ms": 50,
    "devices_available": 64,
    "price_per_device_hour": 2.5,
}
ISSUE_FIELDS = {
    "command",
    "permalink",
    "replicas",
    "devices_per_replica",
    "devices_total",
    "concurrency_per_replica",
    "requests_per_s_per_replica",
    "ttft_ms",
    "tpot_ms",
    "cost_per_hour",
    "cost_per_million_output_tokens",
    "meets_slo",
    "meets_slo_with_margin",
    "binding",
    "headroom",
    "accuracy_costs",
}


@pytest.fixture(scope="module")
def answer(web_app: Any) -> dict[str, Any]:
    response = TestClient(web_app).post("/api/fleet", json=BODY)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_api_returns_ranked_candidates_with_the_issues_fields(answer: dict[str, Any]) -> None:
    assert set(answer) >= {"candidates", "best", "notes"}
    assert answer["candidates"]
    for c in answer["candidates"]:
        assert set(c) >= ISSUE_FIELDS
        assert c["command"].startswith("vllm serve meta-llama/Llama-3.1-70B")
    best = answer["best"]
    assert best["meets_slo"] and answer["best_meets_slo"]
    assert best == answer["candidates"][0]
    assert best["cost_per_hour"] == min(c["cost_per_hour"] for c in answer["candidates"] if c["meets_slo"])


def _planner_body(permalink: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(permalink).query))


def test_permalinks_open_the_planner_on_the_same_numbers(client: Any, answer: dict[str, Any]) -> None:
    """Weights and KV pool per device from /api/estimate, TTFT/TPOT from /api/performance at the same
    clients: what the planner page shows for the permalink is what the fleet table shows."""
    for c in answer["candidates"][:6]:
        body = _planner_body(c["permalink"])
        assert body["concurrency"] == str(c["concurrency_per_replica"])
        est = client.post("/api/estimate", json=body).json()
        assert est["kv_cache_bytes"] == c["kv_cache_bytes"]
        assert est["weights_bytes"] == c["weights_bytes"]
        assert est["max_num_seqs"] == c["max_num_seqs"]
        perf = client.post("/api/performance", json=body).json()
        assert perf["ttft_ms"] == pytest.approx(c["ttft_ms"], rel=1e-12)
        assert perf["tpot_ms"] == pytest.approx(c["tpot_ms"], rel=1e-12)  # the band too
        assert perf["requests_per_s"]["expected"] == pytest.approx(c["requests_per_s_per_replica"], rel=1e-12)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"requests_per_s": "1e999"}, "requests_per_s"),
        ({"requests_per_s": 0}, "requests_per_s"),
        ({"slo_ttft_ms": "nan"}, "slo_ttft_ms"),
        ({"slo_tpot_ms": -5}, "slo_tpot_ms"),
        ({"devices_available": "9" * 40}, "devices_available"),
        ({"devices_available": 0}, "devices_available"),
        ({"price_per_device_hour": -1}, "price_per_device_hour"),
        ({"devices_per_node": 65}, "devices_per_node"),
        ({"no_fp8_kv": "maybe"}, "no_fp8_kv"),
        ({"input_tokens": "١٠٠"}, "input_tokens"),
        ({"model": "no-such/model"}, "model"),
        ({"device": "no-such-gpu"}, "device"),
        ({"tensor_parallel_size": 3}, "tensor_parallel_size"),
        ({"typo_field": 1}, "typo_field"),
        ({"input_tokens": 8000, "output_tokens": 1000}, "output_tokens"),  # 9,000 > max_model_len 8,192
    ],
)
def test_bad_input_is_a_422_naming_the_field(client: Any, change: dict[str, Any], field: str) -> None:
    response = client.post("/api/fleet", json={**BODY, **change})
    assert response.status_code == 422, response.text
    assert field in response.json()["detail"][0]["loc"]


def test_limits_reach_the_search(client: Any) -> None:
    body = {**BODY, "no_fp8_kv": True, "no_quantized_weights": True, "devices_per_node": 4}
    candidates = client.post("/api/fleet", json=body).json()["candidates"]
    assert {c["kv_cache_dtype"] for c in candidates} == {"auto"}
    assert {c["quantization"] for c in candidates} == {None}
    assert max(c["tensor_parallel_size"] for c in candidates) <= 4


def test_page_shows_the_table_chart_and_planner_links(client: Any) -> None:
    response = client.get("/fleet?model=meta-llama/Llama-3.1-70B&max_model_len=8192")
    assert response.status_code == 200
    html = response.text
    assert 'id="fleet-table"' in html and 'id="fleet-best"' in html
    assert "<svg" in html and 'class="fleet-chart"' in html
    assert html.count('class="open-in-planner"') >= 5
    assert 'id="nav-fleet"' in html


def test_page_fragment_and_form_post(client: Any) -> None:
    form = {"model": "meta-llama/Llama-3.1-8B", "requests_per_s": "5", "v": "1"}
    response = client.post("/fleet", data=form, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert "<html" not in response.text and 'id="fleet-table"' in response.text
    assert "requests_per_s=5" in response.headers["HX-Replace-Url"]
    assert response.headers["HX-Replace-Url"].startswith("/fleet?")


def test_page_names_every_bad_field_and_searches_nothing(client: Any) -> None:
    response = client.get("/fleet?requests_per_s=1e999&slo_tpot_ms=abc")
    assert response.status_code == 422  # it searched with the defaults in their place before issue 24
    assert 'data-unusable="requests_per_s slo_tpot_ms"' in response.text
    assert "<code>requests_per_s</code>" in response.text and "<code>slo_tpot_ms</code>" in response.text
    assert 'id="fleet-table"' not in response.text


def test_page_in_chinese(client: Any) -> None:
    # its own client: lang=zh sets the language cookie, which must not leak into the shared one
    zh = TestClient(client.app)
    response = zh.get("/fleet?lang=zh")
    assert response.status_code == 200
    assert "集群规模" in response.text
    assert "lang=zh" in response.text.split('id="permalink" href="')[1].split('"')[0]


def test_page_under_a_prefix(prefixed_client: Any) -> None:
    response = prefixed_client.get("/tools/kvplan/fleet?model=meta-llama/Llama-3.1-8B")
    assert response.status_code == 200
    assert 'href="/tools/kvplan/?v=1' in response.text  # open in planner keeps the prefix


def test_option_summaries_count_devices_in_the_singular_and_plural(client: Any) -> None:
    # Llama-3.1-8B (16 GB of bf16 weights) fits one 80 GB H100, so the one-device layouts are options;
    # their summary said "1 devices" before the count went through ngettext
    html = client.get("/fleet?model=meta-llama/Llama-3.1-8B&requests_per_s=1").text
    summaries = [s.split("</summary>")[0] for s in html.split("<summary>#")[1:]]
    assert any(s.endswith(" 1 device") for s in summaries), summaries
    assert not any(s.endswith(" 1 devices") for s in summaries)
    zh = TestClient(client.app).get("/fleet?model=meta-llama/Llama-3.1-8B&requests_per_s=1&lang=zh").text
    assert " 1 台设备</summary>" in zh
