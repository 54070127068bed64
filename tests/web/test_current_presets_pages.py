"""The planner page for late-2026 presets (model_specs/ from scripts/gen_current_presets.py): it renders the
preset itself, and where the planner refuses a combination it says why, naming the field (never a 500)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

# one preset of each family and attention kind, at H100 TP 8 (B200 for the NVFP4 sparse-MLA one)
RENDERS = [
    "Qwen/Qwen3.5-397B-A17B",  # Gated-DeltaNet hybrid MoE
    "nvidia/Qwen3.6-27B-NVFP4",
    "deepseek-ai/DeepSeek-V3.2",  # MLA + indexer
    "deepseek-ai/DeepSeek-V4-Flash",
    "zai-org/GLM-5.2-FP8",
    "google/gemma-4-26B-A4B",
    "moonshotai/Kimi-K3",
    "nvidia/MiniMax-M3-NVFP4",
    "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8",  # Mamba-2 hybrid
]


@pytest.mark.parametrize("model", RENDERS)
def test_preset_page_renders_that_model(client: TestClient, model: str) -> None:
    page = client.get(f"/?v=1&model={model}&tensor_parallel_size=8&vllm_version=0.33.0")
    assert page.status_code == 200
    assert model in page.text


def test_architecture_newer_than_the_release_is_a_message(client: TestClient) -> None:
    # DeepseekV4ForCausalLM entered the registry after 0.19.0 (app/core/hf_config/vllm_architectures.json)
    page = client.get("/?v=1&model=deepseek-ai/DeepSeek-V4-Flash&tensor_parallel_size=8&vllm_version=0.19.0")
    assert page.status_code == 422
    assert "DeepseekV4ForCausalLM" in page.text and "0.19.0" in page.text


def test_checkpoint_fp8_kv_on_sparse_mla_at_sm90_answers_with_the_field(client: TestClient) -> None:
    # nvidia/GLM-5-NVFP4 declares an fp8 KV cache (kv_cache_quant_algo FP8 -> fp8_e4m3). Today the planner
    # refuses it at SM90 (0.33.0 flashmla_sparse.py lists "fp8" / "fp8_ds_mla", not "fp8_e4m3", in
    # supported_kv_cache_dtypes; whether the selector canonicalizes first is for the config reader to settle):
    # either way the page answers, and a refusal names the field
    page = client.get("/?v=1&model=nvidia/GLM-5-NVFP4&tensor_parallel_size=8&vllm_version=0.33.0")
    assert page.status_code in (200, 422)
    if page.status_code == 422:
        assert "kv_cache_dtype" in page.text
    on_b200 = client.get(
        "/?v=1&model=nvidia/GLM-5-NVFP4&device=b200&tensor_parallel_size=8&vllm_version=0.33.0"
    )
    assert on_b200.status_code == 200
    assert "nvidia/GLM-5-NVFP4" in on_b200.text
