"""Platforms, round 8 (issue 22 items 1, 4): a device known by its stack and memory takes that stack's rules.

Sources (read from the wheels, /work/vllm-src/<version>): platforms/rocm.py RocmPlatform.get_device_capability
(a gfx arch, not a CUDA compute capability; _capability_from_gcn_arch), supports_fp8 (on_cdna() or on_rdna()),
_get_backend_priorities (0.19.0+), get_attn_backend_cls (0.10.2-0.18.0).
"""

from __future__ import annotations

import json

import pytest

from app.cli import main
from app.core.diagnose import diagnose
from app.core.plan import custom_device
from app.core.specs import GIB


def test_a_custom_rocm_device_has_no_cuda_capability() -> None:
    rocm = custom_device(192.0, "rocm")
    assert (rocm.platform, rocm.compute_capability, rocm.sm, rocm.fp8_kv) == ("rocm", None, None, True)
    assert rocm.name == "Custom 192 GiB GPU (ROCm)"
    assert rocm.memory_total_bytes == 192 * GIB
    npu = custom_device(64.0, "npu")
    assert (npu.platform, npu.compute_capability, npu.fp8_kv) == ("npu", None, False)
    cuda = custom_device(80.0)
    assert (cuda.platform, cuda.compute_capability, cuda.name) == (
        "cuda",
        "9.0",
        "Custom 80 GiB GPU (assumed CUDA SM 9.0)",
    )


def test_the_doctor_predicts_a_rocm_log_on_rocm_rules() -> None:
    # "Automatically detected platform rocm." and a total no catalog ROCm card has (23.98 GiB): the device of that
    # size is ROCm's, not a CUDA SM 9.0 card renamed (round 7 kept compute capability 9.0 there). Qwen3-8B (dense,
    # head 128, no sinks) at the default 0.33.0: _get_backend_priorities -> ROCM_ATTN first, MultipleOf(16) -> 16
    text = (
        "INFO 05-08 11:47:00 [utils.py:261] non-default args: {'model_tag': 'Qwen/Qwen3-8B', 'model': "
        "'Qwen/Qwen3-8B', 'max_model_len': 32768}\n"
        "INFO 05-08 11:47:00 [__init__.py:241] Automatically detected platform rocm.\n"
        "(EngineCore pid=1) INFO 05-08 11:47:04 [gpu_worker.py:436] Free memory on device (23.10/23.98 GiB) on "
        "startup. Desired GPU memory utilization is (0.9, 21.58 GiB).\n"
    )
    d = diagnose(log_text=text, metrics_text=None)
    assert d.device_id == "custom-23.98gib"
    assert d.prediction is not None
    assert (d.prediction.attention_backend, d.prediction.block_size) == ("ROCM_ATTN", 16)


def test_a_custom_rocm_device_plans_as_the_rocm_card_of_its_size() -> None:
    # DeepSeek-V3 TP 8 at 0.33.0: a ROCm device of the MI300X's reported total (206,051,056,026 B) plans exactly as
    # the catalog MI300X (TRITON_MLA, hipGraphs budgeted from 0.26.0); the CUDA custom device of that size runs
    # FLASH_ATTN_MLA (SM90) instead
    from app.core.catalog import find_device, find_model
    from app.core.estimate import estimate
    from app.core.specs import ServeConfig

    mi300x = find_device("amd-mi300x-192gb")
    serve = ServeConfig(tensor_parallel_size=8, max_model_len=32_768)
    model = find_model("deepseek-ai/DeepSeek-V3")
    custom = custom_device(mi300x.memory_total_bytes / GIB, "rocm")
    assert custom.memory_total_bytes == mi300x.memory_total_bytes
    on_card = estimate(model=model, device=mi300x, serve=serve, vllm_version="0.33.0")
    on_custom = estimate(model=model, device=custom, serve=serve, vllm_version="0.33.0")
    assert on_custom.attention_backend == on_card.attention_backend == "TRITON_MLA"
    for key in ("cuda_graph_bytes", "kv_cache_bytes", "num_gpu_blocks", "kv_tokens", "block_size"):
        assert getattr(on_custom, key) == getattr(on_card, key), key
    cuda = custom_device(mi300x.memory_total_bytes / GIB)
    assert (
        estimate(model=model, device=cuda, serve=serve, vllm_version="0.33.0").attention_backend
        == "FLASH_ATTN_MLA"
    )


def test_the_cli_takes_the_custom_device_platform(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "estimate",
        "deepseek-ai/DeepSeek-V3",
        "-tp",
        "8",
        "--max-model-len",
        "32768",
        "--device-memory-gib",
    ]
    assert main([*argv, "192", "--device-platform", "rocm", "--vllm-version", "0.33.0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["attention_backend"] == "TRITON_MLA"
    assert main([*argv, "192", "--device-platform", "tpu"]) == 2
    assert capsys.readouterr().err.startswith("error: device_platform: must be one of cuda, rocm, npu")
    assert main(["estimate", "llama-3.1-8b", "--device", "h100", "--device-platform", "rocm"]) == 2
    assert capsys.readouterr().err.startswith("error: device_platform: --device-platform goes with")
