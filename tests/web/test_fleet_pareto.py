"""/api/fleet's Pareto frontier (tokens/s per device against tokens/s per user) and each layout's
deployment link carrying its replicas."""

from __future__ import annotations

import html
import itertools
import re
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
import yaml
from fastapi.testclient import TestClient

from tests.web.test_fleet_web import BODY


@pytest.fixture(scope="module")
def answer(web_app: Any) -> dict[str, Any]:
    response = TestClient(web_app).post("/api/fleet", json=BODY)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_the_api_returns_the_frontier_with_the_issues_fields(answer: dict[str, Any]) -> None:
    points = answer["pareto"]
    assert len(points) >= 3
    for p in points:
        assert {
            "tokens_per_s_per_device",
            "tokens_per_s_per_user",
            "layout",
            "tensor_parallel_size",
            "pipeline_parallel_size",
            "data_parallel_size",
            "concurrency",
            "command",
            "permalink",
        } <= set(p)
        assert p["command"].startswith("vllm serve meta-llama/Llama-3.1-70B")
    for faster, slower in itertools.pairwise(points):  # per-device throughput falls as per-user speed rises
        assert faster["tokens_per_s_per_user"] >= slower["tokens_per_s_per_user"]
        assert faster["tokens_per_s_per_device"] < slower["tokens_per_s_per_device"]
    assert answer["pareto_slo_tokens_per_s_per_user"] == pytest.approx(1000.0 / BODY["slo_tpot_ms"])


def test_each_point_opens_the_planner_on_its_numbers(client: TestClient, answer: dict[str, Any]) -> None:
    for p in answer["pareto"][::3]:
        body = dict(parse_qsl(urlsplit(p["permalink"]).query))
        assert body["concurrency"] == str(p["concurrency"])
        perf = client.post("/api/performance", json=body).json()
        devices = p["tensor_parallel_size"] * p["pipeline_parallel_size"]
        assert perf["output_tokens_per_s"]["expected"] / devices == pytest.approx(
            p["tokens_per_s_per_device"]
        )
        assert perf["per_user_tokens_per_s"]["expected"] == pytest.approx(p["tokens_per_s_per_user"])


def test_a_layouts_deploy_link_carries_its_replicas(client: TestClient, answer: dict[str, Any]) -> None:
    best = answer["best"]
    r = client.get(best["deploy"])
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/yaml")
    deployment = next(yaml.safe_load_all(r.text))
    assert deployment["spec"]["replicas"] == best["replicas"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    devices = best["tensor_parallel_size"] * best["pipeline_parallel_size"]
    assert container["resources"]["requests"]["nvidia.com/gpu"] == str(devices)
    helm = client.get(best["deploy"].replace("target=kubernetes", "target=helm")).text
    assert yaml.safe_load(helm)["servingEngineSpec"]["modelSpec"][0]["replicaCount"] == best["replicas"]


def test_the_page_links_each_layout_to_its_manifests_with_its_replicas(client: TestClient) -> None:
    page = client.get("/fleet", params={k: str(v) for k, v in BODY.items()}).text
    best = client.post("/api/fleet", json=BODY).json()["best"]
    links = re.findall(r'<a class="deploy-link" href="([^"]+)">Kubernetes</a>', page)
    assert links
    deployment = next(yaml.safe_load_all(client.get(html.unescape(links[0])).text))
    assert deployment["spec"]["replicas"] == best["replicas"]  # the first detail is the best layout
    assert "svg" in page and 'class="pareto-chart"' in page and 'id="pareto-slo"' in page
