"""The `kv-planner` command: the same numbers as the core, one clear line and a non-zero exit on bad input."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from app.core import catalog
from app.core.estimate import estimate
from app.core.specs import ServeConfig


def test_json_matches_the_core(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["estimate", "llama-3.1-8b", "--device", "h100", "--max-model-len", "32k", "--json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    # 32k = 32,000 tokens (vLLM's human-readable ints: lower-case k is decimal)
    core = estimate(
        model=catalog.find_model("llama-3.1-8b"),
        device=catalog.find_device("h100"),
        serve=ServeConfig(max_model_len=32_000),
    )
    for key in (
        "device_total_bytes",
        "budget_bytes",
        "weights_bytes",
        "activation_peak_bytes",
        "non_torch_bytes",
        "cuda_graph_bytes",
        "kv_cache_bytes",
        "kv_bytes_per_token",
        "block_size",
        "num_gpu_blocks",
        "kv_tokens",
        "max_concurrency",
        "max_model_len",
        "fits",
        "error",
        "estimated_max_model_len",
        "log_lines",
    ):
        assert data[key] == getattr(core, key), key
    assert data["max_model_len"] == 32_000


def test_whole_command_after_double_dash(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "estimate",
            "--device",
            "910b",
            "--json",
            "--",
            "vllm",
            "serve",
            "Qwen/Qwen2.5-72B-Instruct",
            "-tp",
            "8",
            "--max-model-len",
            "32K",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    # Ascend forces 128-token blocks; 32K = 32,768; Qwen2.5-72B: 80 layers x (8 KV heads / TP 8 = 1) x 128 x 2 x 2 B
    assert data["block_size"] == 128
    assert data["max_model_len"] == 32_768
    assert data["kv_bytes_per_token"] == 80 * 1 * 128 * 2 * 2 == 40_960
    assert data["tensor_parallel_size"] == 8


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["estimate", "no-such-model", "--device", "h100"], "model"),
        (["estimate", "llama-3.1-8b", "--device", "no-such-gpu"], "device"),
        (["estimate", "llama-3.1-8b", "--device", "h100", "-tp", "3"], "tensor_parallel_size"),
        (
            ["estimate", "llama-3.1-8b", "--device", "h100", "--gpu-memory-utilization", "1.5"],
            "gpu_memory_utilization",
        ),
        (["estimate", "llama-3.1-8b", "--device", "h100", "--max-model-len", "lots"], "max_model_len"),
    ],
)
def test_bad_input_one_line_nonzero(argv: list[str], field: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {field}: ")


def test_tiny_device_memory_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "llama-3.1-8b", "--device-memory-gib", "1e-300"]) == 2
    assert capsys.readouterr().err.startswith("error: device_memory_gib: must be between 1 and 4096 GiB")
