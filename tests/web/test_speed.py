"""POST /api/performance, the page's Speed fragment, the new planner inputs, and `kv-planner perf`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.cli import main
from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.perf.predict import performance
from app.core.perf.schedule import Workload
from app.core.specs import ServeConfig

LLAMA_70B_FP8_TP4: dict[str, Any] = {
    "model": "nvidia/Llama-3.1-70B-Instruct-FP8",
    "device": "h200",
    "vllm_version": "0.19.0",
    "tensor_parallel_size": 4,
    "max_model_len": 4096,
}


def _core(concurrency: int) -> Any:
    model, device = find_model("nvidia/Llama-3.1-70B-Instruct-FP8"), find_device("h200")
    serve = ServeConfig(tensor_parallel_size=4, max_model_len=4096)
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.19.0")
    return performance(
        estimate=est, model=model, device=device, serve=serve, workload=Workload(1024, 1024, concurrency)
    )


def test_api_answers_the_core_numbers(client: Any) -> None:
    body = {**LLAMA_70B_FP8_TP4, "input_tokens": 1024, "output_tokens": 1024, "concurrency": 64}
    response = client.post("/api/performance", json=body)
    assert response.status_code == 200
    data = response.json()
    core = _core(64)
    for key in ("ttft_ms", "tpot_ms", "output_tokens_per_s", "requests_per_s"):
        assert set(data[key]) == {"low", "expected", "high"}
        assert data[key]["expected"] == pytest.approx(getattr(core, key).expected)
        assert data[key]["low"] <= data[key]["expected"] <= data[key]["high"]
    assert data["basis"] == "calibrated" and data["kv_limited"] is False
    assert data["kv_limited_from_concurrency"] == core.kv_limited_from_concurrency
    assert "concurrency=64" in data["inputs"]["query"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"concurrency": 0}, "concurrency"),
        ({"input_tokens": -5}, "input_tokens"),
        ({"quantization": "q3_k"}, "quantization"),
        ({"data_parallel_size": 0}, "data_parallel_size"),
        ({"input_tokens": 4000, "output_tokens": 1000}, "output_tokens"),  # 5,000 > max_model_len 4,096
        ({"speed": 1}, "speed"),  # unknown key
    ],
)
def test_api_bad_input_is_a_422_naming_the_field(client: Any, change: dict[str, Any], field: str) -> None:
    response = client.post("/api/performance", json={**LLAMA_70B_FP8_TP4, **change})
    assert response.status_code == 422
    assert field in json.dumps(response.json()["detail"])


def test_quantization_alias_changes_weights_and_the_command(client: Any) -> None:
    body = {"model": "meta-llama/Llama-3.1-8B", "device": "b200", "max_model_len": 4096}
    plain = client.post("/api/estimate", json=body).json()
    nvfp4 = client.post("/api/estimate", json={**body, "quantization": "NVFP4"}).json()
    # 4.5 bits per weight for the decoder body instead of 16 (embeddings and lm_head stay bf16)
    assert nvfp4["weights_bytes"] < 0.45 * plain["weights_bytes"]
    fast = client.post("/api/performance", json={**body, "quantization": "nvfp4"}).json()
    slow = client.post("/api/performance", json=body).json()
    assert fast["tpot_ms"]["expected"] < slow["tpot_ms"]["expected"]


def test_speed_fragment_shows_three_numbers_and_the_cliff(client: Any) -> None:
    query = "v=1&model=nvidia/Llama-3.1-70B-Instruct-FP8&device=h200&vllm_version=0.19.0&max_model_len=9280&concurrency=128&input_tokens=1024&output_tokens=8192"
    response = client.get(f"/speed?{query}", headers={"HX-Request": "true"})
    assert response.status_code == 200
    html = response.text
    for key in ("speed-ttft", "speed-tpot", "speed-throughput", "speed-basis", "kv-cliff"):
        assert f'id="{key}"' in html
    assert "KV-limited" in html  # TP1: the pool holds far fewer than 128 requests of 9,216 tokens
    assert "<html" not in html  # the block only


def test_planner_page_carries_the_workload_and_loads_speed(client: Any) -> None:
    response = client.get("/?model=meta-llama/Llama-3.1-8B&device=h100&concurrency=48&input_tokens=2k")
    assert response.status_code == 200
    assert 'id="speed-slot"' in response.text and "concurrency=48" in response.text
    assert "input_tokens=2000" in response.text  # 2k = 2,000 as vLLM reads it


def test_speed_fragment_reports_a_bad_workload_inline(client: Any) -> None:
    response = client.get(
        "/speed?model=meta-llama/Llama-3.1-8B&device=h100&max_model_len=2048&input_tokens=2000&output_tokens=100",
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 422
    assert 'id="speed-error"' in response.text and "output_tokens" in response.text


def test_cli_perf(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "perf",
        "nvidia/Llama-3.1-70B-Instruct-FP8",
        "-tp",
        "4",
        "--max-model-len",
        "4096",
        "--device",
        "h200",
    ]
    argv += ["--vllm-version", "0.19.0", "--input-len", "1024", "--output-len", "1024", "--concurrency", "64"]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tpot_ms"]["expected"] == pytest.approx(_core(64).tpot_ms.expected)
    assert main(argv) == 0
    assert "TPOT" in capsys.readouterr().out
    assert main(["perf", "llama-3.1-8b", "--device", "h100", "--concurrency", "lots"]) == 2
    assert "concurrency" in capsys.readouterr().err


def test_no_speed_while_vllm_refuses_names_the_refusals_own_flag(client: Any) -> None:
    # Qwen3.5-27B on one H100 at 0.33.0's defaults: vLLM refuses max_num_seqs 1,024 above the pool's
    # Mamba cache blocks (tests/unit/test_verdicts.py), so the error names --max-num-seqs, not the budget
    body = {"model": "Qwen/Qwen3.5-27B", "device": "h100", "max_model_len": 32768}
    estimate = client.post("/api/estimate", json=body).json()
    assert estimate["error_kind"] == "mamba_blocks"
    response = client.post("/api/performance", json=body)
    assert response.status_code == 422
    detail = json.dumps(response.json()["detail"])
    assert "max_num_seqs" in detail and "gpu_memory_utilization" not in detail
