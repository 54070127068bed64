"""/api/estimate takes vLLM's shapes and names (issue 24 item 12)."""

from __future__ import annotations

from fastapi.testclient import TestClient

GIB = 2**30
BASE = {"model": "meta-llama/Llama-3.1-8B", "device": "h100"}
# vLLM's Python API takes speculative_config as a dict: LLM(..., speculative_config={"method": "ngram", …})
NGRAM = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}


def test_json_object_flags_are_taken_as_objects_and_as_text(client: TestClient) -> None:
    as_object = client.post("/api/estimate", json={**BASE, "speculative_config": NGRAM})
    as_text = client.post(
        "/api/estimate",
        json={
            **BASE,
            "speculative_config": '{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}',
        },
    )
    assert as_object.status_code == as_text.status_code == 200, as_object.text
    a, b = as_object.json(), as_text.json()
    assert [e["name"] for e in a["extras"]] == ["speculative"] and a["extras"] == b["extras"]
    assert a["kv_cache_bytes"] == b["kv_cache_bytes"]


def test_limit_mm_per_prompt_as_an_object(client: TestClient) -> None:
    body = {"model": "Qwen/Qwen2.5-VL-7B-Instruct", "device": "h100"}
    as_object = client.post("/api/estimate", json={**body, "limit_mm_per_prompt": {"image": 0, "video": 0}})
    as_text = client.post("/api/estimate", json={**body, "limit_mm_per_prompt": '{"image": 0, "video": 0}'})
    assert as_object.status_code == as_text.status_code == 200, as_object.text
    assert as_object.json()["kv_cache_bytes"] == as_text.json()["kv_cache_bytes"]
    assert as_object.json()["inputs"]["limit_mm_per_prompt"] == '{"image":0,"video":0}'


def test_a_bad_object_is_a_422_naming_the_field(client: TestClient) -> None:
    r = client.post("/api/estimate", json={**BASE, "speculative_config": {"method": "no-such-method"}})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"][-1] == "speculative_config"


def test_vllms_flag_names_for_host_tiers(client: TestClient) -> None:
    # --kv-offloading-size 8 (GiB, vLLM's name) is the planner's kv_offloading_size_gib
    for name in ("kv_offloading_size", "kv_offloading_size_gib"):
        r = client.post("/api/estimate", json={**BASE, name: 8})
        assert r.status_code == 200, r.text
        kv = next(e for e in r.json()["extras"] if e["name"] == "kv_offloading")
        assert kv["host_bytes"] == 8 * GIB
    r = client.get("/api/estimate", params={**BASE, "kv_offloading_size": 8})
    assert r.status_code == 200 and r.json()["inputs"]["kv_offloading_size_gib"] == 8.0


def test_a_flag_the_chosen_release_lacks_is_a_4xx_naming_the_field(client: TestClient) -> None:
    # 0.9.0's engine/arg_utils.py has no async_scheduling (0.10.0's EngineArgs does): its `vllm serve` exits
    # "unrecognized arguments: --async-scheduling"; the API said 200 and planned it
    r = client.post("/api/estimate", json={**BASE, "vllm_version": "0.9.0", "async_scheduling": True})
    assert 400 <= r.status_code < 500, r.text
    assert "async_scheduling" in r.text and "0.10.0 is the first release with it" in r.text
    ok = client.post("/api/estimate", json={**BASE, "vllm_version": "0.10.0", "async_scheduling": True})
    assert ok.status_code == 200, ok.text


def test_runner_pooling_is_taken_and_refused_before_0_10_1(client: TestClient) -> None:
    # --runner is 0.10.1's (engine/arg_utils.py; 0.10.0 has --task only): Llama-3.1-8B as an embedding model drops its
    # untied LM head, 128,256 x 4,096 x 2 B = 1,050,673,152 B of weights (models/adapters.py as_embedding_model)
    plain = client.post("/api/estimate", json={**BASE, "vllm_version": "0.33.0"})
    pooled = client.post("/api/estimate", json={**BASE, "vllm_version": "0.33.0", "runner": "pooling"})
    assert plain.status_code == pooled.status_code == 200, pooled.text
    assert plain.json()["weights_bytes"] - pooled.json()["weights_bytes"] == 128_256 * 4096 * 2
    old = client.post("/api/estimate", json={**BASE, "vllm_version": "0.10.0", "runner": "pooling"})
    assert 400 <= old.status_code < 500 and "0.10.1 is the first release with it" in old.text
