"""The Mistral-Small-3.1 preset (model_specs/mistralai_mistral_small_3.1_24b_instruct_2503.yaml) is the published
config.json (tests/data/configs/real/SOURCES.md: two independent copies agree) and plans the numbers worked by
hand below at vLLM 0.33.0 (v1/kv_cache_interface.py FullAttentionSpec pages; platforms/cuda.py priorities)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml  # type: ignore[import-untyped]

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.hf_config import count_params, model_spec_from_hf_config
from app.core.specs import ServeConfig

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = (
    ROOT
    / "tests"
    / "data"
    / "configs"
    / "real"
    / "mistralai__Mistral-Small-3.1-24B-Instruct-2503.config.json"
)
PRESET = ROOT / "model_specs" / "mistralai_mistral_small_3.1_24b_instruct_2503.yaml"


def test_preset_is_the_published_config() -> None:
    published = json.loads(PUBLISHED.read_text(encoding="utf-8"))
    data = yaml.safe_load(PRESET.read_text(encoding="utf-8"))
    assert data["config"] == published and data["confidence"] == "verified"
    assert data["params_total"] == count_params(published)[0]
    # the Pixtral tower and projector by hand (pixtral.py PixtralHFVisionModel, mistral3.py projector):
    # 24 x (4 x 1,024^2 + 3 x 1,024 x 4,096 + 2 x 1,024) + patch conv 3 x 14^2 x 1,024 + ln_pre 1,024 +
    # norm 1,024 + merger 4 x 1,024 x 1,024 + linear_1 1,024 x 5,120 + linear_2 5,120^2 = 438,958,080
    assert find_model("mistral-small-3.1").vision_params == 438_958_080
    spec = find_model("mistral-small-3.1")
    assert spec.layer_kinds == model_spec_from_hf_config(published, name="m").layer_kinds


def test_mistral_small_3_1_at_0_33_worked_by_hand() -> None:
    # text_config: 40 layers, 8 KV heads of head_dim 128 (not 5120 / 32 = 160), bf16, no sliding window.
    # TP 1: 8 x (128 + 128) x 2 B = 4,096 B a token-layer x 40 = 163,840; FLASH_ATTN (SM90 first), block 16,
    # page 16 x 4,096 = 65,536. TP 2: 4 heads -> 81,920, page 32,768. No rope_scaling: 131,072
    model = find_model("mistral-small-3.1")
    for tp, per_token, page in ((1, 163_840, 65_536), (2, 81_920, 32_768)):
        est = estimate(
            model=model,
            device=find_device("h100"),
            serve=ServeConfig(tensor_parallel_size=tp, max_model_len=8_192),
            vllm_version="0.33.0",
        )
        assert (est.attention_backend, est.block_size, est.kv_bytes_per_token) == (
            "FLASH_ATTN",
            16,
            per_token,
        )
        assert [(g.kind, g.num_layers, g.page_size_bytes) for g in est.groups] == [("full", 40, page)]
    assert model.max_model_len_derived == 131_072
