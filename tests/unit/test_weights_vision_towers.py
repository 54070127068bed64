"""Vision towers counted from ``vision_config`` (app/core/hf_config/vision.py), per layout vLLM 0.33.0 builds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.core.catalog import find_device
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config, param_breakdown
from app.core.specs import ModelSpec, ServeConfig

REAL = Path(__file__).resolve().parents[1] / "data" / "configs" / "real"


def _real(name: str) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((REAL / name).read_text(encoding="utf-8"))
    return config


def _weights(model: ModelSpec, limits: dict[str, int] | None) -> int:
    serve = ServeConfig(max_model_len=8_192, limit_mm_per_prompt=limits)
    est = estimate(model=model, device=find_device("h100"), serve=serve, vllm_version="0.33.0")
    return est.weights_bytes


def test_llama4_scout_vision_model_and_projector() -> None:
    # mllama4.py Llama4VisionModel, Scout's vision_config (h 1,408, i 5,632, 34 layers, p 14, image 336):
    # layer: qkv/o 4 x (1,408^2 + 1,408) = 7,935,488, fc1 1,408 x 5,632 + 5,632 = 7,935,488, fc2 5,632 x
    # 1,408 + 1,408 = 7,931,264, two LayerNorms 5,632 -> 23,807,872 x 34 = 809,467,648
    # patch_embedding.linear 3 x 14^2 x 1,408 = 827,904 (no bias); class_embedding 1,408;
    # positional_embedding_vlm (24^2 + 1) x 1,408 = 812,416; layernorm_pre / post 4 x 1,408 = 5,632
    # vision_adapter (Llama4VisionPixelShuffleMLP, no bias): 5,632 x 4,096 + 4,096 x 4,096 = 39,845,888
    # multi_modal_projector.linear_1 (Llama4MultiModalProjector): 4,096 x 5,120 = 20,971,520
    # -> 871,932,416
    config = _real("meta-llama__Llama-4-Scout-17B-16E-Instruct.config.json")
    model = model_spec_from_hf_config(config, name="scout")
    assert model.vision_params == 809_467_648 + 827_904 + 1_408 + 812_416 + 5_632 + 39_845_888 + 20_971_520
    assert model.vision_params == 871_932_416
    # the model card (huggingface.co/meta-llama/Llama-4-Scout-17B-16E-Instruct) says 109B total: the text
    # body alone is 107.77B (rounds to 108B); with the tower 108.64B rounds to 109B
    body = param_breakdown(config).total
    assert round(body / 1e9) == 108
    assert round((body + model.vision_params) / 1e9) == 109
    # bf16, loaded unless every modality is limited to 0 (text-only mode)
    assert _weights(model, None) - _weights(model, {"image": 0}) == 871_932_416 * 2


def test_llama4_tower_follows_its_vision_config() -> None:
    # the count comes from the fields, not the name: 2 layers fewer take 2 x 23,807,872 off, and a biased
    # adapter (multi_modal_projector_bias) adds its fc1 / fc2 biases 4,096 + 4,096
    config = _real("meta-llama__Llama-4-Scout-17B-16E-Instruct.config.json")
    vision = dict(config["vision_config"], num_hidden_layers=32, multi_modal_projector_bias=True)
    smaller = model_spec_from_hf_config(dict(config, vision_config=vision), name="scout-32")
    assert smaller.vision_params == 871_932_416 - 2 * 23_807_872 + 2 * 4_096
