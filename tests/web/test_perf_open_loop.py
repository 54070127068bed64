"""An uncapped `vllm bench serve` run: the clients it keeps in flight (Little's law at a finite rate, every
prompt at inf), the steady state modelled at that count, and one regime rule for both answers.

vLLM's serve.py sends the prompts at ``--request-rate`` (gaps rescaled so the last leaves at
num_prompts / rate) and, without ``--max-concurrency``, never holds one back: the requests in flight are
the arrivals' own count, L = lambda x W (completed per second x mean end-to-end latency), not num_prompts.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from app.cli import main
from app.core.perf.bench_args import BenchArgs
from app.core.perf.regime import binding_regime

LLAMA_8B = {"model": "meta-llama/Llama-3.1-8B-Instruct", "device": "nvidia-h100-sxm-80gb"}


def _post(client: Any, body: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/api/performance", json=body)
    assert r.status_code == 200, r.text
    data: dict[str, Any] = r.json()
    return data


def test_clients_in_flight_is_littles_law_at_a_finite_rate() -> None:
    # 3.94 requests/s x 0.87 s = 3.4278 in flight, of 200 prompts
    rated = BenchArgs(num_prompts=200, request_rate=4)
    assert rated.clients_in_flight(request_throughput=3.94, mean_e2el_s=0.87) == pytest.approx(3.4278)
    # never more than the prompts: 2 prompts cannot keep 3.4 in flight
    assert BenchArgs(num_prompts=2, request_rate=4).clients_in_flight(
        request_throughput=3.94, mean_e2el_s=0.87
    ) == pytest.approx(2.0)
    # at inf: the cap, else every prompt at t = 0, whatever the run's figures
    assert BenchArgs(num_prompts=200, max_concurrency=8).clients_in_flight(
        request_throughput=1.0, mean_e2el_s=1.0
    ) == pytest.approx(8.0)
    assert BenchArgs(num_prompts=200).clients_in_flight(request_throughput=1.0, mean_e2el_s=1.0) == 200.0


def test_one_regime_rule_in_its_order() -> None:
    common = {"max_num_seqs": 256, "host_share": 0.0, "memory_share": 0.0}
    assert binding_regime(kv_limited=True, clients_per_rank=1000, **common) == "kv_pool"
    # 257 in flight on a rank that runs 256: the queue; 256 exactly all run
    assert binding_regime(kv_limited=False, clients_per_rank=257, **common) == "queue"
    assert binding_regime(kv_limited=False, clients_per_rank=256, **common) == "compute"
    shares = {"kv_limited": False, "clients_per_rank": 4, "max_num_seqs": 256}
    assert binding_regime(**shares, host_share=0.5, memory_share=0.9) == "host"
    assert binding_regime(**shares, host_share=0.49, memory_share=0.5) == "memory_bandwidth"
    assert binding_regime(**shares, host_share=0.49, memory_share=0.49) == "compute"


def test_an_open_loop_run_keeps_a_few_clients_and_the_steady_state_models_them(client: Any) -> None:
    data = _post(client, {**LLAMA_8B, "bench": {"num_prompts": 200, "request_rate": 4}})
    bench = data["bench"]
    done = bench["request_throughput"]["expected"]
    e2el_s = bench["mean_e2el_ms"]["expected"] / 1000
    # the last of 200 prompts leaves at 200 / 4 = 50 s and ends one E2EL later (< 1 s on an idle H100):
    # 200 / (50 + E2EL) requests/s, 3.94 at E2EL 0.8 s
    assert done == pytest.approx(200 / (50 + e2el_s), rel=0.02)
    assert 0.3 < e2el_s < 1.5
    # Little's law: about 3 clients in flight (3.94 x 0.87 s), not 200
    assert bench["clients_in_flight"] == pytest.approx(done * e2el_s, rel=1e-9)
    assert 2.5 < bench["clients_in_flight"] < 5
    assert data["concurrency"] == round(bench["clients_in_flight"])
    assert data["regime"] == bench["regime"]
    assert any("keeps in flight, not its 200 prompts" in n and "Little's law" in n for n in data["notes"])


def test_a_client_count_given_is_kept(client: Any) -> None:
    data = _post(client, {**LLAMA_8B, "concurrency": 16, "bench": {"num_prompts": 200, "request_rate": 4}})
    assert data["concurrency"] == 16
    assert not any("keeps in flight" in n for n in data["notes"])


@pytest.mark.parametrize(
    ("bench", "serve"),
    [
        ({"num_prompts": 200, "max_concurrency": 8}, {}),  # closed loop (was: bench "queue", steady memory)
        ({"num_prompts": 200, "request_rate": 4}, {}),  # open loop: the steady state at its ~3 clients
        ({"num_prompts": 200, "request_rate": 40}, {"max_num_seqs": 8}),  # more in flight than 8 run
    ],
)
def test_the_steady_state_and_the_run_name_the_same_regime(
    client: Any, bench: dict[str, Any], serve: dict[str, Any]
) -> None:
    data = _post(client, {**LLAMA_8B, **serve, "bench": bench})
    assert data["regime"] == data["bench"]["regime"]
    if serve:  # 40 requests/s on a rank that runs 8 at a time: the queue binds, in both answers
        assert data["bench"]["clients_in_flight"] > 8 and data["regime"] == "queue"


def test_the_page_says_the_clients_come_from_the_benchmark(client: Any) -> None:
    query = {**LLAMA_8B, "bench_serve": "true", "num_prompts": "200", "request_rate": "4"}
    page = client.get("/", params=query)
    box = re.search(r'<input id="f-conc"[^>]*>', page.text)
    # not the 16 the Speed section no longer models: the benchmark's Little's-law count, after its run
    assert box is not None and 'placeholder="from the benchmark"' in box.group(0)
    speed = client.get("/speed", params=query, headers={"HX-Request": "true"})
    summary = re.search(r'id="speed-bench-summary">([^<]+)<', speed.text)
    assert summary is not None
    assert "3.44 requests in flight on average (Little&#39;s law" in summary.group(1)  # 3.94/s x 0.875 s
    # a closed loop keeps its cap in the box
    capped = client.get("/", params={**query, "max_concurrency": "8"})
    assert 'placeholder="8"' in re.search(r'<input id="f-conc"[^>]*>', capped.text).group(0)


def test_kv_planner_perf_says_the_same(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["perf", LLAMA_8B["model"], "--device", LLAMA_8B["device"], "--num-prompts", "200"]
    assert main([*argv, "--request-rate", "4"]) == 0
    out = capsys.readouterr().out
    # the API's figures above: 3 clients in the steady state, 3.94/s x 0.875 s = 3.4 in flight in the run
    assert out.startswith("3 clients x (1,024 in + 128 out)")
    assert "3.4 clients in flight):" in out and "Little's law" in out


def test_pp_2_does_not_cut_tpot_at_the_same_open_loop_load(client: Any) -> None:
    # issue 23's bar (PP 2 TPOT >= 0.9 x PP 1 at the same TP and load) where the load is an arrival rate:
    # Llama-3.1-70B fp8 at TP 8, 200 prompts of 1,024 + 1,024 at 2 req/s; the steady state takes the
    # run's clients in flight, which PP's longer token interval only raises (21 -> 30 here)
    body = {
        "model": "nvidia/Llama-3.1-70B-Instruct-FP8",
        "device": "nvidia-h100-sxm-80gb",
        "tensor_parallel_size": 8,
        "max_model_len": 4096,
        "bench": {"num_prompts": 200, "request_rate": 2, "random_input_len": 1024, "random_output_len": 1024},
    }
    one, two = (_post(client, {**body, "pipeline_parallel_size": pp}) for pp in (1, 2))
    assert two["tpot_ms"]["expected"] >= 0.9 * one["tpot_ms"]["expected"]
    assert two["bench"]["mean_tpot_ms"]["expected"] >= 0.9 * one["bench"]["mean_tpot_ms"]["expected"]
    assert two["bench"]["clients_in_flight"] >= one["bench"]["clients_in_flight"]


def test_the_recommender_prices_its_steps_at_the_open_loop_clients(client: Any) -> None:
    """/api/recommend with the same open-loop benchmark: its steps' speed is priced at the clients the run
    keeps in flight (3 here: 3.94/s x 0.875 s = 3.44 -> 3, the test above), as the Speed section models them,
    not at the default 16 clients it used before (speedpage11's finding)."""
    perf = _post(client, {**LLAMA_8B, "bench": {"num_prompts": 200, "request_rate": 4}})
    in_flight = perf["bench"]["clients_in_flight"]
    r = client.post("/api/recommend", json={**LLAMA_8B, "bench": {"num_prompts": 200, "request_rate": 4}})
    assert r.status_code == 200, r.text
    assert r.json()["speed_workload"]["concurrency"] == max(1, round(in_flight)) == 3
    # a cap or a stated client count still decides: --max-concurrency 8 prices at 8
    capped = client.post(
        "/api/recommend",
        json={**LLAMA_8B, "bench": {"num_prompts": 200, "request_rate": 4, "max_concurrency": 8}},
    )
    assert capped.json()["speed_workload"]["concurrency"] == 8
