"""The late-2026 presets (model_specs/ files written by scripts/gen_current_presets.py) resolve, read the
way their published config.json does, and plan the KV bytes per token worked by hand below.

The published files are tests/data/configs/current/<org>--<name>_config.json (and _hf_quant_config.json),
copied from ai-dynamo/aiconfigurator (SOURCES.md there).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.hf_config import count_params, model_spec_from_hf_config
from app.core.specs import ServeConfig

REPO_ROOT = Path(__file__).resolve().parents[2]
CURRENT = REPO_ROOT / "tests" / "data" / "configs" / "current"
GENERATOR_MARK = "scripts/gen_current_presets.py"
PRESET_FILES = sorted(
    path
    for path in (REPO_ROOT / "model_specs").glob("*.yaml")
    if GENERATOR_MARK in path.read_text(encoding="utf-8").splitlines()[0]
)


def _file(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data


def _published(hf_id: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    stem = hf_id.replace("/", "--")
    config = json.loads((CURRENT / f"{stem}_config.json").read_text(encoding="utf-8"))
    quant_path = CURRENT / f"{stem}_hf_quant_config.json"
    hf_quant = json.loads(quant_path.read_text(encoding="utf-8")) if quant_path.exists() else None
    return config, hf_quant


def test_the_generator_wrote_the_presets() -> None:
    # 42 presets: Qwen3.5 x 4 + NVFP4 x 4, DeepSeek x 9, GLM-5 x 9, Gemma-4 x 3, Kimi x 3, MiniMax x 3,
    # Nemotron-3 x 7
    assert len(PRESET_FILES) == 42


@pytest.mark.parametrize("path", PRESET_FILES, ids=[p.stem for p in PRESET_FILES])
def test_preset_resolves_and_reads_as_its_published_config(path: Path) -> None:
    data = _file(path)
    spec = find_model(data["id"])
    for alias in data["aliases"]:
        # a full HF id alias displays as itself; everything else is the preset's
        assert find_model(alias).model_copy(update={"name": spec.name}) == spec, alias
    config, hf_quant = _published(data["id"])
    published = model_spec_from_hf_config(config, name=data["id"], hf_quant_config=hf_quant)
    assert model_spec_from_hf_config(data["config"], name=data["id"]) == published
    assert spec.layer_kinds == published.layer_kinds
    assert spec.quantization == published.quantization
    # the catalog's count, from the published config (not a number typed in)
    total, active = count_params(config)
    assert (data["params_total"], data["params_active"]) == (total, active)
    assert any(CURRENT.name in source for source in data["source"])


def _kv_per_token(name: str, device: str, tp: int, version: str = "0.33.0") -> int:
    result = estimate(
        model=find_model(name),
        device=find_device(device),
        serve=ServeConfig(tensor_parallel_size=tp, max_model_len=8_192),
        vllm_version=version,
    )
    kv: int = result.kv_bytes_per_token
    return kv


# KV bytes per token of one rank (all attention layers), worked from each config.json:
KV_CASES = [
    # GQA, MiniMaxAI/MiniMax-M2.7: 62 full-attention layers, num_key_value_heads 8, head_dim 128, dtype
    # bfloat16, quantization_config fp8 weights only (no KV scheme) -> auto = bf16. TP 8: 8 // 8 = 1 head
    # x (128 K + 128 V) x 2 B = 512 B a layer x 62 = 31,744
    ("MiniMaxAI/MiniMax-M2.7", "h100", 8, 31_744),
    # the NVFP4 copy: hf_quant_config kv_cache_quant_algo FP8 -> fp8_e4m3, 1 B: 256 x 62 = 15,872
    ("nvidia/MiniMax-M2.7-NVFP4", "h100", 8, 15_872),
    # MLA, nvidia/Kimi-K2.6-NVFP4: 61 layers, kv_lora_rank 512 + qk_rope_head_dim 64 = 576 latent, not split
    # by TP; config.json quantization_config kv_cache_scheme 8-bit float -> fp8, 1 B: 576 x 61 = 35,136
    ("nvidia/Kimi-K2.6-NVFP4", "b200", 8, 35_136),
    # MLA + indexer, deepseek-ai/DeepSeek-V3.2: 61 layers of 576 x 2 B (auto = bf16 on SM90) = 70,272, plus
    # the sparse-attention indexer cache on every layer: index_head_dim 128 fp8 + 128 // 128 x 4 B scale =
    # 132 B x 61 = 8,052 -> 78,324
    ("deepseek-ai/DeepSeek-V3.2", "h100", 8, 78_324),
    # Gated-DeltaNet hybrid, nvidia/Qwen3.6-35B-A3B-NVFP4: 40 layers, full_attention_interval 4 -> 10 full
    # attention layers (layer_types: 30 linear_attention, 10 full_attention); num_key_value_heads 2 x
    # head_dim 256 x (K + V) x 2 B (config.json's quantization_config has no KV scheme: auto = bf16) =
    # 2,048 a layer x 10 = 20,480 (the DeltaNet state is per sequence, not per token)
    ("nvidia/Qwen3.6-35B-A3B-NVFP4", "h100", 1, 20_480),
    # nvidia/Qwen3.6-27B-NVFP4: 64 layers, 16 full attention; 4 KV heads x 256 x 2 x 1 B (kv_cache_scheme
    # 8-bit float -> fp8) = 2,048 x 16 = 32,768
    ("nvidia/Qwen3.6-27B-NVFP4", "h100", 1, 32_768),
    # Mamba-2 hybrid, nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8: hybrid_override_pattern has 8 '*'
    # (attention) layers; num_key_value_heads 2, head_dim 128; TP 4 replicates: max(1, 2 // 4) = 1 head x 256
    # x 2 B = 512 x 8 = 4,096. Its hf_quant_config.json says kv_cache_quant_algo FP8 but has no producer:
    # the reader (hf_config/quantization.py _modelopt_producer, after 0.33.0 _normalize_quantization_config)
    # then takes the weight format only, so auto stays bf16
    ("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8", "h100", 4, 4_096),
]


@pytest.mark.parametrize(("name", "device", "tp", "kv_bytes"), KV_CASES, ids=[c[0] for c in KV_CASES])
def test_kv_bytes_per_token_worked_by_hand(name: str, device: str, tp: int, kv_bytes: int) -> None:
    assert _kv_per_token(name, device, tp) == kv_bytes


def test_gqa_kv_bytes_do_not_depend_on_the_release() -> None:
    # the 0.19.0 rules give the same bytes per token for a plain GQA model (page rules differ, not this). At TP 4:
    # 0.19.0 refuses TP 8 (experts 1,536 / 8 = 192, not whole 128-blocks, no refinement before 0.30.0: quant_shards,
    # the load failure of https://github.com/vllm-project/vllm/pull/48173); 8 KV heads / 4 = 2 x 2 x 128 x 2 B x 62
    assert _kv_per_token("MiniMaxAI/MiniMax-M2.7", "h100", 4, version="0.19.0") == 63_488
    assert _kv_per_token("MiniMaxAI/MiniMax-M2.7", "h100", 4) == 63_488
