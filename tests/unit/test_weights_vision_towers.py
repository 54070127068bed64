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


CURRENT = Path(__file__).resolve().parents[1] / "data" / "configs" / "current"


def _current(name: str) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((CURRENT / name).read_text(encoding="utf-8"))
    return config


def test_gemma4_vision_model_and_embedder() -> None:
    # Gemma4VisionModel (transformers 5.20.2 modeling_gemma4.py, built by gemma4_mm.py with AutoModel), the
    # 31B's vision_config (h 1,152, i 4,304, 27 layers, 16 q / 16 kv heads of 72, p 16, 10,240 positions):
    # layer: q/k/v/o 4 x 1,152 x 1,152 = 5,308,416, q_norm + k_norm 144, gate/up/down 3 x 1,152 x 4,304 =
    # 14,874,624, four RMSNorms 4,608 -> 20,187,792 x 27 = 545,070,384
    # patch_embedder input_proj 768 x 1,152 = 884,736; position_embedding_table 2 x 10,240 x 1,152 =
    # 23,592,960; std_bias + std_scale 2,304 (standardize) -> tower 569,550,384
    # embed_vision.embedding_projection (Gemma4MultimodalEmbedder) 1,152 x 5,376 = 6,193,152 -> 575,743,536
    # Checked: a public BF16 inventory of google/gemma-4-31B-it's safetensors (a repacking tool's test,
    # search-index file 68538381994) gives 63,485,214,944 B for all tensors, 61,394,690,680 B for the text
    # model and 939,037,192 B for the assistant (drafter): the rest, the 356 vision_tower / embed_vision
    # tensors, is 1,151,487,072 B = 575,743,536 x 2
    model = model_spec_from_hf_config(_current("nvidia--Gemma-4-31B-IT-NVFP4_config.json"), name="31b")
    assert model.vision_params == 545_070_384 + 884_736 + 23_592_960 + 2_304 + 6_193_152
    assert model.vision_params * 2 == 63_485_214_944 - 61_394_690_680 - 939_037_192
    # 26B-A4B: the same tower, the projection to its 2,816 text width: 569,550,384 + 1,152 x 2,816
    moe = model_spec_from_hf_config(_current("google--gemma-4-26B-A4B_config.json"), name="26b")
    assert moe.vision_params == 569_550_384 + 3_244_032
    assert _weights(moe, None) - _weights(moe, {"image": 0, "video": 0}) == moe.vision_params * 2


def test_gemma4_tower_follows_its_vision_config() -> None:
    # 8 kv heads instead of 16 take 2 x 1,152 x 8 x 72 = 1,327,104 off each of 27 layers; clipped linears
    # add 7 x 4 scalar bounds a layer (Gemma4ClippableLinear buffers), no standardize takes 2,304 off
    config = _current("nvidia--Gemma-4-31B-IT-NVFP4_config.json")
    vision = dict(config["vision_config"], num_key_value_heads=8, use_clipped_linears=True, standardize=False)
    model = model_spec_from_hf_config(dict(config, vision_config=vision), name="31b-gqa")
    assert model.vision_params == 575_743_536 - 27 * 1_327_104 + 27 * 28 - 2_304


def test_kimi_k25_moonvit_and_patchmerger_projector() -> None:
    # kimi_k25_vit.py MoonViT3dPretrainedModel + KimiK25MultiModalProjector ("patchmerger"), Kimi-K2.5's
    # vision_config (vt_hidden_size 1,152, vt_intermediate_size 4,304, 27 layers, p 14, 64 x 64 positions,
    # merge 2 x 2) and text 7,168:
    # blocks: wqkv 1,152 x 3,456 + 3,456, wo 1,152^2 + 1,152, norm0 / norm1 LayerNorms 4 x 1,152, fc0 1,152 x
    # 4,304 + 4,304, fc1 4,304 x 1,152 + 1,152 = 15,239,504 x 27 = 411,466,608
    # patch_embed.proj 3 x 14^2 x 1,152 + 1,152 = 678,528; pos_emb 64 x 64 x 1,152 = 4,718,592;
    # final_layernorm 2,304; projector pre_norm 2,304 + proj.0 4,608^2 + 4,608 = 21,238,272 + proj.2 4,608 x
    # 7,168 + 7,168 = 33,037,312 -> 471,143,920
    # Checked tensor by tensor against a public weight table of nvidia/Kimi-K2.5-NVFP4's checkpoint (a
    # TensorRT-LLM porting note, search-index file 59436120304): the same 24 vision / projector tensor
    # shapes, all bf16 (vision_tower* and mm_projector* are in its exclude_modules)
    model = model_spec_from_hf_config(_current("moonshotai--Kimi-K2.5_config.json"), name="k2.5")
    assert model.vision_params == 411_466_608 + 678_528 + 4_718_592 + 2_304 + 2_304 + 21_238_272 + 33_037_312
    assert model.vision_params == 471_143_920
    # kimi_k25.py builds the tower under _mark_tower_model(..., "vision_chunk")
    assert _weights(model, None) - _weights(model, {"image": 0, "vision_chunk": 0}) == 471_143_920 * 2


def test_moonvit_variant_not_modelled_counts_zero() -> None:
    # Kimi-K3's MoonViT (rmsnorm, no biases, qkv_hidden_size 1,536, patchmergerv2) is built by an
    # out-of-tree vllm.models.kimi_k3 not in the 0.33.0 wheel: not counted rather than counted wrong
    config = _current("moonshotai--Kimi-K2.5_config.json")
    vision = dict(config["vision_config"], norm_type="rmsnorm")
    assert model_spec_from_hf_config(dict(config, vision_config=vision), name="k2.5-rms").vision_params == 0
    smaller = dict(config["vision_config"], vt_num_hidden_layers=26)
    # one block fewer: 471,143,920 - 15,239,504
    assert (
        model_spec_from_hf_config(dict(config, vision_config=smaller), name="k2.5-26").vision_params
        == 455_904_416
    )


def test_llama4_qk_norm_has_no_weight() -> None:
    # vLLM 0.33.0 models/llama4.py: Llama4Attention.qk_norm = RMSNorm(head_dim, has_weight=False), so
    # Scout's use_qk_norm adds nothing; counting a q and a k scale would add 48 layers x 2 x 128 = 12,288
    config = _real("meta-llama__Llama-4-Scout-17B-16E-Instruct.config.json")
    assert config["text_config"]["use_qk_norm"] is True
    without = dict(config, text_config=dict(config["text_config"], use_qk_norm=False))
    assert param_breakdown(config).total == param_breakdown(without).total
