"""POST /api/recommend on a tiny app holding only that router, and the _recommend.html partial."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from fastapi import FastAPI
from starlette.exceptions import StarletteDeprecationWarning

from app.core import catalog
from app.core.recommend import recommend
from app.core.specs import ServeConfig
from app.web.recommend.api import router
from app.web.recommend.views import build_view
from app.web.templating import make_environment

with warnings.catch_warnings():
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient

LLAMA_70B = "meta-llama/Llama-3.1-70B-Instruct"
H100 = "nvidia-h100-sxm-80gb"


@pytest.fixture(scope="module")
def client() -> TestClient:
    app = FastAPI()
    app.include_router(router)
    return TestClient(app, raise_server_exceptions=False)


def post(client: TestClient, **body: Any) -> Any:
    return client.post("/api/recommend", json=body)


def test_recommend_70b_fp8_then_tp(client: TestClient) -> None:
    # 70B at 128k x 16 on H100: fp8 (327,680 -> 163,840 B/token) then TP8 (20,480 B/token), see unit tests.
    r = post(client, model=LLAMA_70B, device=H100, target_max_model_len=131072, target_concurrency=16)
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["meets_target"] is True and data["impossible_reason"] is None
    applied = [s["key"] for s in data["steps"] if s["applied"]]
    assert applied == ["kv_cache_dtype", "tensor_parallel_size"]
    first = data["steps"][0]
    assert set(first) >= {"key", "applied", "reason", "effect", "cost", "before", "after"}
    assert set(first["before"]) >= {
        "kv_tokens",
        "max_concurrency",
        "concurrency_at_target_len",
        "largest_len_at_target_concurrency",
        "fits",
        "kv_cache_bytes",
    }
    tp = next(s for s in data["steps"] if s["key"] == "tensor_parallel_size")
    assert tp["after"]["kv_bytes_per_token"] == 20_480
    final = data["final"]
    assert (
        final["model"] == LLAMA_70B
        and final["tensor_parallel_size"] == 8
        and final["kv_cache_dtype"] == "fp8"
    )
    assert data["command"].startswith(f"vllm serve {LLAMA_70B}")
    # as given (bf16, TP 1): 141 GB of weights on one H100, the planner's load_oom
    assert data["bisection"]["verdict"] == "load_oom"
    assert [p["name"] for p in data["bisection"]["probes"]] == ["as_given", "half_len", "one_seq"]


def test_two_nodes_and_options(client: TestClient) -> None:
    r = post(
        client,
        model=LLAMA_70B,
        device=H100,
        target_max_model_len=131072,
        target_concurrency=32,
        nodes=2,
        devices_per_node=8,
        preference="latency",
        vllm_version="0.33.0",
    )
    data = r.json()
    assert r.status_code == 200 and data["meets_target"]
    assert (data["final"]["tensor_parallel_size"], data["final"]["pipeline_parallel_size"]) == (8, 2)
    one = post(
        client,
        model=LLAMA_70B,
        device=H100,
        target_max_model_len=131072,
        target_concurrency=32,
        allow_fp8_kv=False,
    ).json()
    assert one["meets_target"] is False and "Nearest reachable" in one["impossible_reason"]
    assert one["final"]["kv_cache_dtype"] == "auto"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"model": "no-such-model", "device": H100}, "model"),
        ({"model": LLAMA_70B, "device": "no-such-device"}, "device"),
        ({"model": LLAMA_70B, "device": H100, "tensor_parallel_size": 3}, "tensor_parallel_size"),
        ({"model": LLAMA_70B, "device": H100, "quantization": "nonsense"}, "quantization"),
        ({"model": LLAMA_70B, "device": H100, "vllm_version": "banana"}, "vllm_version"),
        (
            {"model": LLAMA_70B, "device": "huawei-ascend-910b-64gb", "kv_cache_dtype": "fp8"},
            "kv_cache_dtype",
        ),
    ],
)
def test_planner_errors_are_422_with_the_field(client: TestClient, body: dict[str, Any], field: str) -> None:
    r = post(client, target_max_model_len=8192, target_concurrency=1, **body)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert detail[0]["loc"] == ["body", field] and detail[0]["msg"]


@pytest.mark.parametrize(
    "body",
    [
        {"model": LLAMA_70B, "device": H100, "target_concurrency": 0},
        {"model": LLAMA_70B, "device": H100, "target_max_model_len": 0, "target_concurrency": 1},
        {
            "model": LLAMA_70B,
            "device": H100,
            "target_max_model_len": 8192,
            "target_concurrency": 1,
            "typo": 1,
        },
        {
            "model": LLAMA_70B,
            "device": H100,
            "target_max_model_len": 8192,
            "target_concurrency": 1,
            "preference": "fast",
        },
        {
            "model": LLAMA_70B,
            "device": H100,
            "target_max_model_len": 8192,
            "target_concurrency": 1,
            "gpu_memory_utilization": 1.5,
        },
        {
            "model": LLAMA_70B,
            "device": H100,
            "target_max_model_len": 8192,
            "target_concurrency": 1,
            "nodes": 0,
        },
    ],
)
def test_validation_errors_are_422(client: TestClient, body: dict[str, Any]) -> None:
    r = client.post("/api/recommend", json=body)
    assert r.status_code == 422


def test_not_json_is_422(client: TestClient) -> None:
    r = client.post("/api/recommend", content=b"not json", headers={"content-type": "application/json"})
    assert r.status_code == 422


def test_partial_renders_the_view() -> None:
    model = catalog.find_model(LLAMA_70B)
    device = catalog.find_device(H100)
    rec = recommend(
        model=model,
        device=device,
        serve=ServeConfig(),
        vllm_version=None,
        target_max_model_len=131072,
        target_concurrency=32,
    )
    view = build_view(rec)
    assert view.tone == "bad" and view.target_len == "131,072"
    html = make_environment().get_template("_recommend.html").render(view=view)
    assert 'data-meets-target="false"' in html
    assert 'data-key="tensor_parallel_size"' in html and "step-applied" in html
    assert "Nearest reachable" in html and "vllm serve" in html
    assert "20,480" in html  # KV bytes per token per device after TP8 with fp8, formatted in Python
    assert "Target: 32 sequences of 131,072 tokens." in html


def test_a_target_of_one_sequence_reads_singular() -> None:
    """N* = 1 read "Target: 1 sequences of …" (Qwen3-8B at 65,536 on the planner, round 14's walk)."""
    rec = recommend(
        model=catalog.find_model(LLAMA_70B),
        device=catalog.find_device(H100),
        serve=ServeConfig(),
        vllm_version=None,
        target_max_model_len=8192,
        target_concurrency=1,
    )
    html = make_environment().get_template("_recommend.html").render(view=build_view(rec))
    assert "Target: 1 sequence of 8,192 tokens." in html


def test_text_only_mode_through_the_api_and_limits_never_500(client: TestClient) -> None:
    """Qwen2.5-VL-7B on one L4 at 32,768 x 3 (the unit test's case, tests/unit/test_recommend_extras.py):
    the recommender turns the tower off, and the final configuration carries the flag as /api/estimate
    takes it. A configuration holding limit_mm_per_prompt used to be an unhashable cache key: a 500."""
    body = {
        "model": "Qwen/Qwen2.5-VL-7B-Instruct",
        "device": "nvidia-l4-24gb",
        "vllm_version": "0.19.0",
        "target_max_model_len": 32768,
        "target_concurrency": 3,
        "devices_per_node": 1,
        "allow_fp8_kv": False,
        "preference": "latency",
        "max_num_seqs": 3,
        "max_num_batched_tokens": 8192,
        "gpu_memory_utilization": 0.95,
    }
    data = post(client, **body).json()
    step = next(s for s in data["steps"] if s["key"] == "limit_mm_per_prompt")
    assert step["applied"] and "Frees 1.27 GiB per device" in step["effect"]
    assert data["meets_target"] and data["final"]["limit_mm_per_prompt"] == '{"image":0,"video":0}'
    with_limits = post(client, **{**body, "limit_mm_per_prompt": '{"image": 2}'})
    assert with_limits.status_code == 200, with_limits.text
