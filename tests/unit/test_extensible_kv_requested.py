"""--enable-extensible-kv-cache where vLLM 0.34.0 cannot build it: config/vllm.py
VllmConfig._resolve_extensible_kv_cache raises ValueError("enable_extensible_kv_cache: it is only supported on
CUDA and ROCm.") off CUDA/ROCm, and "...: it sizes the KV cache from measured memory, which kv_cache_memory_bytes
overrides." beside --kv-cache-memory-bytes (both read from the 0.34.0 wheel). The planner had ignored the flag."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.core.catalog import find_device, find_model
from app.core.errors import InvalidServeConfigError
from app.core.estimate import estimate
from app.core.specs import GIB, ServeConfig
from app.web.app import create_app

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _estimate(device: str, **flags: object) -> object:
    return estimate(
        model=find_model(MODEL),
        device=find_device(device),
        serve=ServeConfig(**flags),  # type: ignore[arg-type]
        vllm_version="0.34.0",
    )


def test_asked_for_on_an_npu_it_is_refused_as_vllm_does() -> None:
    with pytest.raises(InvalidServeConfigError) as err:
        _estimate("huawei-ascend-910b-64gb", enable_extensible_kv_cache=True)
    assert err.value.field == "enable_extensible_kv_cache"
    assert "it is only supported on CUDA and ROCm" in str(err.value.message)


def test_asked_for_beside_kv_cache_memory_bytes_it_is_refused() -> None:
    with pytest.raises(InvalidServeConfigError) as err:
        _estimate("nvidia-h100-sxm-80gb", enable_extensible_kv_cache=True, kv_cache_memory_bytes=20 * GIB)
    assert "which kv_cache_memory_bytes overrides" in str(err.value.message)


def test_unset_on_an_npu_or_asked_for_on_an_h100_it_starts() -> None:
    # unset off CUDA/ROCm: simply off (vLLM settles requested=None to False); on an H100: the default anyway
    assert _estimate("huawei-ascend-910b-64gb").verdict == "fits"  # type: ignore[attr-defined]
    assert _estimate("nvidia-h100-sxm-80gb", enable_extensible_kv_cache=True).extensible_kv_cache  # type: ignore[attr-defined]


def test_the_api_names_the_field() -> None:
    response = TestClient(create_app()).post(
        "/api/estimate",
        json={
            "model": MODEL,
            "device": "huawei-ascend-910b-64gb",
            "vllm_version": "0.34.0",
            "enable_extensible_kv_cache": True,
        },
    )
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-1] == "enable_extensible_kv_cache"
