"""POST /api/performance with `vllm bench serve`'s arguments and your cluster's measured runs, and
POST /api/fleet with measured_runs (issue 23)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from app.core.perf.bench import RESULT_KEYS
from app.core.perf.predict import COEFFICIENTS_FILE

CONFIG = {
    "model": "nvidia/Llama-3.1-70B-Instruct-FP8",
    "device": "nvidia-h100-sxm-80gb",
    "tensor_parallel_size": 8,
    "max_model_len": 4096,
}
BENCH = {"num_prompts": 320, "max_concurrency": 32, "random_input_len": 1024, "random_output_len": 512}


def test_bench_arguments_answer_vllms_result_keys(client: Any) -> None:
    response = client.post("/api/performance", json={**CONFIG, "bench": {**BENCH, "request_rate": "inf"}})
    assert response.status_code == 200, response.text
    bench = response.json()["bench"]
    for key in RESULT_KEYS:
        band = bench[key]
        assert 0 < band["low"] <= band["expected"] <= band["high"], key
    assert bench["regime"] in ("compute", "memory_bandwidth", "kv_pool", "queue")
    # 320 prompts x 512 tokens over the run's duration is the output throughput (serve.py's definition)
    assert bench["output_throughput"]["expected"] == pytest.approx(320 * 512 / bench["duration_s"], rel=1e-9)


def test_the_bench_bands_are_the_shipped_out_of_source_ones(client: Any) -> None:
    # issue 23, round 12: the band a user sees on a calibrated configuration (Llama-3.1-70B FP8, TP 8 on H100,
    # the hopper family: no widening) is exp(low) .. exp(high) x expected of coefficients.json's bench_bands,
    # the out-of-source residual quantiles bench/perf_loso.py --write made, for every result key of its kind
    shipped = json.loads(COEFFICIENTS_FILE.read_text(encoding="utf-8"))["bench_bands"]
    answer = client.post("/api/performance", json={**CONFIG, "bench": BENCH}).json()
    assert answer["basis"] == "calibrated"
    for key, kind in (("mean_tpot_ms", "tpot"), ("median_itl_ms", "tpot"), ("mean_ttft_ms", "ttft")):
        band = answer["bench"][key]
        assert math.log(band["low"] / band["expected"]) == pytest.approx(shipped[kind][0], rel=1e-9), key
        assert math.log(band["high"] / band["expected"]) == pytest.approx(shipped[kind][1], rel=1e-9), key
    band = answer["bench"]["output_throughput"]
    assert math.log(band["low"] / band["expected"]) == pytest.approx(shipped["throughput"][0], rel=1e-9)
    assert math.log(band["high"] / band["expected"]) == pytest.approx(shipped["throughput"][1], rel=1e-9)


def test_measured_runs_scale_the_figures(client: Any) -> None:
    base = client.post("/api/performance", json={**CONFIG, "bench": BENCH}).json()
    predicted = base["bench"]["mean_tpot_ms"]["expected"]
    # one run of the same configuration measured 20 % slower per token: the cluster factor is 1.2
    run = {**CONFIG, "bench": BENCH, "measured": {"mean_tpot_ms": predicted * 1.2}}
    answer = client.post("/api/performance", json={**CONFIG, "bench": BENCH, "measured_runs": [run]}).json()
    assert answer["calibrated_runs"] == 1 and answer["basis"] == "calibrated"
    assert answer["bench"]["mean_tpot_ms"]["expected"] == pytest.approx(predicted * 1.2)
    assert answer["tpot_ms"]["expected"] == pytest.approx(base["tpot_ms"]["expected"] * 1.2)
    assert any("Calibrated on your 1 run for TPOT only:" in note for note in answer["notes"])


def test_a_bad_paste_is_a_422_naming_the_run_and_line(client: Any) -> None:
    run = {**CONFIG, "paste": "Mean TTFT (ms): 12\nMedian TPOT (ms): fast\n"}
    response = client.post("/api/performance", json={**CONFIG, "measured_runs": [run]})
    assert response.status_code == 422
    assert "measured_runs[0].paste" in response.text and "line 2" in response.text


def test_fleet_takes_measured_runs(client: Any) -> None:
    body = {
        "model": "meta-llama/Llama-3.1-8B-Instruct",
        "device": "nvidia-h100-sxm-80gb",
        "input_tokens": 1024,
        "output_tokens": 256,
        "requests_per_s": 5,
        "slo_ttft_ms": 2000,
        "slo_tpot_ms": 50,
        "devices_available": 8,
        "price_per_device_hour": 2.5,
    }
    plain = client.post("/api/fleet", json=body)
    assert plain.status_code == 200, plain.text
    run = {
        "model": body["model"],
        "device": body["device"],
        "bench": {"num_prompts": 1, "random_input_len": 1024, "random_output_len": 256},
        # 500 ms: 85 x the model (5.873 ms), inside cluster.MAX_RUN_FACTOR (round 9; 1,000 ms, 170 x, is refused)
        "measured": {"mean_tpot_ms": 500.0},
    }
    slow = client.post("/api/fleet", json={**body, "measured_runs": [run]})
    assert slow.status_code == 200, slow.text
    # one request alone measured at 0.5 s per token (modelled: a few ms): no layout meets a 50 ms TPOT SLO
    assert plain.json()["best_meets_slo"] is True and slow.json()["best_meets_slo"] is False
