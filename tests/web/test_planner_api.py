"""The JSON twin: same parameters as the page, strict validation, 422 naming the field."""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.specs import ServeConfig
from app.web.inputs.params import (
    DEFAULT_DEVICE,
    DEFAULT_MODEL,
    FIELD_NAMES,
    PlannerParams,
    serve_config,
    serve_values,
)
from tests.web.conftest import LLAMA_31_8B_CONFIG


def test_get_estimate_equals_the_core(client):
    r = client.get("/api/estimate?max_model_len=32K&tensor_parallel_size=2&target_concurrency=3")
    assert r.status_code == 200
    body = r.json()
    est = estimate(
        model=find_model(DEFAULT_MODEL),
        device=find_device(DEFAULT_DEVICE),
        serve=ServeConfig(max_model_len=32768, tensor_parallel_size=2),
        target_concurrency=3,
    )
    assert {k: v for k, v in body.items() if k != "inputs"} == json.loads(est.model_dump_json())
    assert body["inputs"]["query"] == "v=1&max_model_len=32768&target_concurrency=3&tensor_parallel_size=2"
    assert body["inputs"]["model_source"] == "catalog"


def test_every_serve_flag_is_a_planner_parameter_of_the_same_name():
    # params <-> ServeConfig is derived from ServeConfig's fields (app/web/planner/params.py), never listed
    assert set(ServeConfig.model_fields) <= set(FIELD_NAMES)
    serve = ServeConfig(max_model_len=8192, tensor_parallel_size=2, kv_cache_dtype="fp8")
    assert serve_config(PlannerParams(**serve_values(serve))) == serve


def test_post_equals_get(client):
    got = client.get("/api/estimate?max_model_len=8192&kv_cache_dtype=fp8").json()
    posted = client.post("/api/estimate", json={"max_model_len": 8192, "kv_cache_dtype": "fp8"}).json()
    assert posted == got


def test_post_with_pasted_config(client):
    r = client.post(
        "/api/estimate", json={"config_json": json.dumps(LLAMA_31_8B_CONFIG), "max_model_len": "8k"}
    )
    assert r.status_code == 200
    assert r.json()["inputs"]["model_source"] == "config"
    assert r.json()["max_model_len"] == 8000


def _fields(response) -> set[str]:
    return {str(item["loc"][-1]) for item in response.json()["detail"]}


def test_bad_values_are_422_naming_the_field(client):
    r = client.get("/api/estimate?max_model_len=lots&gpu_memory_utilization=2")
    assert r.status_code == 422
    assert _fields(r) == {"max_model_len", "gpu_memory_utilization"}
    assert all(item["loc"][0] == "query" for item in r.json()["detail"])
    assert _fields(client.get("/api/estimate?max_model_lenn=1")) == {"max_model_lenn"}  # typo: not ignored
    assert _fields(client.post("/api/estimate", json={"tensor_parallel_size": 0})) == {"tensor_parallel_size"}


def test_domain_errors_are_422_naming_the_field(client):
    assert _fields(client.get("/api/estimate?model=no/such")) == {"model"}
    assert _fields(client.get("/api/estimate?device=abacus")) == {"device"}
    r = client.get("/api/estimate?tensor_parallel_size=64")  # 64 does not divide the 32 attention heads
    assert r.status_code == 422 and _fields(r) == {"tensor_parallel_size"}
    assert (
        r.json()["detail"][0]["msg"] == "64 does not divide the 32 attention heads of meta-llama/Llama-3.1-8B"
    )
    assert _fields(client.get("/api/estimate?card_layers=32")) == {"card_kv_heads"}
    r = client.post("/api/estimate", json={"config_json": '{"model_type": "llama"}'})
    assert r.status_code == 422 and _fields(r) == {"config_json"}


def test_catalog_endpoints(client):
    models = client.get("/api/models").json()
    assert any(m["id"] == DEFAULT_MODEL for m in models)
    devices = client.get("/api/devices").json()
    assert any(d["id"] == DEFAULT_DEVICE for d in devices)


def test_docs_are_self_hosted(client):
    r = client.get("/docs")
    assert r.status_code == 200
    assert "/api/estimate" in r.text
    origins = re.findall(r'(?:src|href)="(https?://[^"]+)"', r.text)
    assert origins == []
    assert client.get("/openapi.json").json()["info"]["title"] == "KV Planner"
    assert client.get("/healthz").json() == {"status": "ok"}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(FIELD_NAMES), st.text(max_size=12), max_size=6))
def test_no_query_makes_a_500(client, query):
    assert client.get("/", params=query).status_code in (200, 422)
    assert client.get("/api/estimate", params=query).status_code in (200, 422)


def test_tensor_parallel_sizes_are_those_of_real_machines(client):
    # powers of two up to 256 ranks; TP=3 or 6 would be refused by vLLM for every catalog model anyway
    for bad in ("3", "6", "12", "512", "0"):
        r = client.get(f"/api/estimate?tensor_parallel_size={bad}")
        assert r.status_code == 422 and _fields(r) == {"tensor_parallel_size"}, bad
    assert "power of two" in client.get("/api/estimate?tensor_parallel_size=6").json()["detail"][0]["msg"]
    assert client.get("/api/estimate?tensor_parallel_size=8").status_code == 200
    body = {"model": "meta-llama/Llama-3.1-8B", "device": "h100", "tensor_parallel_size": 3}
    body |= {"target_max_model_len": 8192, "target_concurrency": 1}
    r = client.post("/api/recommend", json=body)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][-1] == "tensor_parallel_size"


def test_validation_messages_match_pydantic_and_fall_back_to_it() -> None:
    from pydantic import BaseModel, Field, ValidationError

    from app.core.text import Message
    from app.web.validation import message_of

    class Probe(BaseModel):
        a: int = Field(ge=2, le=10)
        b: float = Field(gt=0.0, lt=1.5)
        c: str = Field(min_length=2, max_length=3)

    seen: set[str] = set()
    for data in ({"a": 1, "b": 0, "c": "x"}, {"a": 11, "b": 1.5, "c": "xxxx"}, {"a": "x", "b": "y"}):
        try:
            Probe.model_validate(data)
        except ValidationError as exc:
            for error in exc.errors():
                # each of these types has a template, and it reproduces pydantic's English exactly
                message = message_of(error)
                assert isinstance(message, Message) and message == error["msg"], error
                seen.add(error["type"])
    assert seen == {
        "greater_than_equal", "less_than_equal", "greater_than", "less_than", "string_too_short",
        "string_too_long", "int_parsing", "float_parsing", "missing",
    }  # fmt: skip
    # an unknown error type, or a template that does not reproduce pydantic's text, keeps pydantic's
    assert (
        message_of({"type": "uuid_parsing", "msg": "Input should be a valid UUID"})
        == "Input should be a valid UUID"
    )
    assert (
        message_of({"type": "greater_than", "msg": "other wording 3", "ctx": {"gt": 3}}) == "other wording 3"
    )


def test_estimate_returns_the_extras_ledger_and_host_memory(client):
    # Llama-3.1-70B TP 4 + Llama-3.2-1B draft: +8,192 B/token (16 x 2 x 2 x 64 x 2) on 81,920;
    # --kv-offloading-size 64 -> at least 64 GiB of host memory (tests/unit/test_extras.py works both)
    response = client.post(
        "/api/estimate",
        json={
            "model": "meta-llama/Llama-3.1-70B",
            "tensor_parallel_size": 4,
            "max_model_len": 8192,
            "vllm_version": "0.19.0",
            "speculative_config": '{"model": "meta-llama/Llama-3.2-1B-Instruct"}',
            "kv_offloading_size_gib": 64,
        },
    )
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["kv_bytes_per_token"] == 81_920 + 8_192
    names = [item["name"] for item in data["extras"]]
    assert names == ["speculative", "kv_offloading"]
    assert set(data["extras"][0]) == {
        "name",
        "label",
        "device_bytes",
        "host_bytes",
        "inside_profile",
        "flag",
        "source",
        "note",
    }
    assert data["host_memory_bytes"] >= 64 * 2**30


def test_estimate_names_a_bad_extras_field(client):
    response = client.get("/api/estimate", params={"speculative_config": '{"model": "nobody/none"}'})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-1] == "speculative_config"
    response = client.get("/api/estimate", params={"limit_mm_per_prompt": "{oops"})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-1] == "limit_mm_per_prompt"


def test_an_infinite_request_rate_is_echoed_as_vllms_inf(client):
    # `vllm bench serve --request-rate inf` is vLLM's default (every prompt at t = 0). Strict JSON has no
    # infinity: the echo of request_rate=inf (and burstiness=inf) in `inputs` was a 500 on main.
    response = client.get("/api/estimate?bench_serve=true&request_rate=inf&burstiness=inf")
    assert response.status_code == 200
    inputs = response.json()["inputs"]
    assert inputs["request_rate"] == "inf"
    assert inputs["burstiness"] == "inf"
    assert "request_rate=inf" in inputs["query"]  # the permalink round-trips it
    again = client.get("/api/estimate?" + inputs["query"])
    assert again.status_code == 200 and again.json()["inputs"]["request_rate"] == "inf"
