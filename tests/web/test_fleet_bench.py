"""/api/fleet takes ``bench``: the load stated as a `vllm bench serve` workload, with /api/performance's
fields and checks (app.core.fleet_load). Until round 11 the key was a 422 extra_forbidden."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

LOAD = {
    "model": "meta-llama/Llama-3.1-8B-Instruct",
    "device": "nvidia-h100-sxm-80gb",
    "max_model_len": 8192,
    "slo_ttft_ms": 2000,
    "slo_tpot_ms": 50,
}
BENCH = {"num_prompts": 200, "request_rate": 4, "random_input_len": 2000, "random_output_len": 200}


def _fleet(client: Any, body: dict[str, Any]) -> Any:
    return client.post("/api/fleet", json=body)


def test_a_benchmark_states_the_fleets_load(client: Any) -> None:
    answer = _fleet(client, {**LOAD, "bench": BENCH})
    assert answer.status_code == 200, answer.text
    data = answer.json()
    # 4 requests/s of its 2,000 + 200-token request (the random dataset's centres, range 0)
    assert (data["input_tokens"], data["output_tokens"]) == (2000, 200)
    assert (
        "The load is the benchmark's: 4 requests/s of its mean request (2,000 + 200 tokens, random)"
        in (data["notes"][0])
    )
    # the same fleet as the load stated in the fleet's own fields
    plain = _fleet(client, {**LOAD, "requests_per_s": 4, "input_tokens": 2000, "output_tokens": 200}).json()
    assert [c["command"] for c in data["candidates"]] == [c["command"] for c in plain["candidates"]]
    assert data["best"]["replicas"] == plain["best"]["replicas"]
    # the permalink carries the load as stated, so /fleet reopens it
    query = dict(parse_qsl(data["inputs"]["query"]))
    assert (query["requests_per_s"], query["input_tokens"], query["output_tokens"]) == ("4", "2000", "200")


def test_a_rate_or_lengths_given_win_over_the_benchmarks(client: Any) -> None:
    data = _fleet(client, {**LOAD, "requests_per_s": 10, "output_tokens": 100, "bench": BENCH}).json()
    assert (data["input_tokens"], data["output_tokens"]) == (2000, 100)
    assert "10 requests/s" in data["notes"][0]


def test_the_benchmark_is_checked_as_on_api_performance(client: Any) -> None:
    # an unknown bench key: pydantic's extra_forbidden on the bench object, as /api/performance
    typo = _fleet(client, {**LOAD, "bench": {**BENCH, "num_promts": 10}})
    assert typo.status_code == 422 and typo.json()["detail"][0]["type"] == "extra_forbidden"
    # inf states no rate: refused unless requests_per_s gives one
    burst = _fleet(client, {**LOAD, "bench": {"num_prompts": 200}})
    assert burst.status_code == 422
    assert burst.json()["detail"][0]["loc"][-1] == "bench.request_rate"
    assert _fleet(client, {**LOAD, "requests_per_s": 4, "bench": {"num_prompts": 200}}).status_code == 200
    # its longest request by vLLM's length check: 7,000 + 1,200 = 8,200 > 8,192 (app.core.perf.too_long)
    long = _fleet(client, {**LOAD, "bench": {**BENCH, "random_input_len": 7000, "random_output_len": 1200}})
    assert long.status_code == 422
    detail = long.json()["detail"][0]
    assert detail["loc"][-1] == "bench.random_output_len"
    assert detail["msg"].startswith(
        "the benchmark's longest request, 7,000 input + 1,200 output tokens = 8,200"
    )
