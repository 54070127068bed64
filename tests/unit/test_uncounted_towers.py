"""Towers vLLM builds that the planner cannot count are named on the page (a caveat in the multimodal
extras row), not silently 0: Qwen2.5-VL's window ViT, LFM2-VL's SigLIP-2, audio towers (Gemma-3n, Gemma-4
E2B/E4B), Gemma-3n's timm MobileNetV5, Kimi-VL's MoonViT."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.core.extras.multimodal import multimodal_extras
from app.core.hf_config import model_spec_from_hf_config
from app.core.specs import ServeConfig

DATA = Path(__file__).resolve().parents[1] / "data" / "configs"


def _config(folder: str, name: str) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((DATA / folder / name).read_text(encoding="utf-8"))
    return config


def _row(config: dict[str, Any], serve: ServeConfig | None = None):  # type: ignore[no-untyped-def]
    model = model_spec_from_hf_config(config, name="m")
    return model, multimodal_extras(
        model=model,
        serve=serve or ServeConfig(),
        model_dtype="bfloat16",
        is_first=True,
        max_num_batched_tokens=8192,
    )


def test_an_unmodelled_vision_tower_is_named_not_silent() -> None:
    model, (delta, item) = _row(_config("heldout_0_33c", "Qwen--Qwen2.5-VL-7B-Instruct_config.json"))
    assert model.vision_params == 0 and model.uncounted_towers == ("vision_config",)  # no model_type given
    assert delta == 0 and item is not None and item.device_bytes == 0
    assert "not counted" in item.note and "vision_config" in item.note


def test_siglip2_tower_is_named_with_its_model_type() -> None:
    model, (_, item) = _row(_config("heldout_0_33c", "LiquidAI--LFM2.5-VL-1.6B_config.json"))
    assert model.uncounted_towers == ("vision_config (siglip2_vision_model)",)
    assert item is not None and "siglip2_vision_model" in item.note


def test_text_only_mode_says_the_towers_are_not_loaded() -> None:
    serve = ServeConfig(limit_mm_per_prompt={"image": 0, "video": 0})
    _, (delta, item) = _row(_config("heldout_0_33c", "LiquidAI--LFM2.5-VL-1.6B_config.json"), serve)
    assert delta == 0 and item is not None and "not loaded" in item.note


def test_a_counted_vision_tower_with_an_audio_tower_names_the_audio_one() -> None:
    # Gemma-4 31B's counted vision tower (575,743,536 parameters, test_weights_vision_towers) plus an
    # audio_config as the E2B / E4B checkpoints carry one (gemma4_audio: not modelled)
    config = _config("current", "nvidia--Gemma-4-31B-IT-NVFP4_config.json")
    config["audio_config"] = {"model_type": "gemma4_audio", "hidden_size": 1024, "num_hidden_layers": 12}
    model, (_, item) = _row(config)
    assert model.vision_params == 575_743_536
    assert model.uncounted_towers == ("audio_config (gemma4_audio)",)
    assert item is not None and item.device_bytes > 0 and "gemma4_audio" in item.note


def test_counted_towers_and_text_models_carry_no_caveat() -> None:
    model, (_, item) = _row(_config("current", "nvidia--Gemma-4-31B-IT-NVFP4_config.json"))
    assert model.uncounted_towers == () and item is not None and "not counted" not in item.note
    text = _config("heldout_0_33c", "Qwen--Qwen2.5-VL-7B-Instruct_config.json")
    text["architectures"] = ["Qwen2ForCausalLM"]  # a ...ForCausalLM class builds no tower
    assert model_spec_from_hf_config(text, name="t").uncounted_towers == ()
