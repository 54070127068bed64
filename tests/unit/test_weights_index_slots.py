"""Weights from model.safetensors.index.json for Gemma-4 ``attention_k_eq_v``: vLLM 0.33.0 allocates a V slot on
the full-attention layers and loads K into it (models/gemma4.py _gemma4_layer_weights_mapper, k_eq_v_shards),
while the checkpoint stores no v_proj there, so the index's total_size is short of what the device holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.core.hf_config import model_spec_from_hf_config

CURRENT = Path(__file__).resolve().parents[1] / "data" / "configs" / "current"
# google/gemma-4-31B-it tensors in BF16, from a public inventory of its safetensors (a repacking tool's test,
# search-index file 68538381994, the same one test_weights_vision_towers cites): text model 61,394,690,680 B,
# vision_tower + embed_vision 1,151,487,072 B; 60 layers, v_proj present on every layer but the 10 with
# layer % 6 == 5 (the full-attention, k_eq_v layers)
TEXT_BYTES = 61_394_690_680
TOWER_BYTES = 1_151_487_072
V_SLOT_BYTES = 10 * 5_376 * 4 * 512 * 2  # 10 layers x hidden x (4 global KV heads x 512) x bf16 = 220,200,960


def _gemma4_31b_bf16() -> dict[str, Any]:
    # the 31B's geometry (same as nvidia--Gemma-4-31B-IT-NVFP4) with the bf16 checkpoint's quantization: none
    config: dict[str, Any] = json.loads(
        (CURRENT / "nvidia--Gemma-4-31B-IT-NVFP4_config.json").read_text(encoding="utf-8")
    )
    config.pop("quantization_config", None)
    return config


def _index(total: int) -> dict[str, Any]:
    return {"metadata": {"total_size": total}, "weight_map": {}}


def test_index_total_gains_the_v_slots_vllm_allocates() -> None:
    spec = model_spec_from_hf_config(
        _gemma4_31b_bf16(), name="31b", safetensors_index=_index(TEXT_BYTES + TOWER_BYTES)
    )
    assert V_SLOT_BYTES == 220_200_960
    assert spec.weights_bytes_exact == TEXT_BYTES + TOWER_BYTES + V_SLOT_BYTES  # 62,766,378,712


def test_index_without_k_eq_v_is_taken_as_is() -> None:
    config = _gemma4_31b_bf16()
    text = config.get("text_config", config)
    text["attention_k_eq_v"] = False
    spec = model_spec_from_hf_config(
        config, name="31b-kv", safetensors_index=_index(TEXT_BYTES + TOWER_BYTES)
    )
    assert spec.weights_bytes_exact == TEXT_BYTES + TOWER_BYTES


def test_kv_shared_tail_layers_get_no_slot() -> None:
    # the KV-shared tail only has q_proj (gemma4.py is_kv_shared_layer): 12 shared layers of 60 leave the full
    # layers 5, 11, ..., 47 (8 of them) with a slot
    config = _gemma4_31b_bf16()
    text = config.get("text_config", config)
    text["num_kv_shared_layers"] = 12
    spec = model_spec_from_hf_config(config, name="31b-shared", safetensors_index=_index(TEXT_BYTES))
    assert spec.weights_bytes_exact == TEXT_BYTES + 8 * 5_376 * 4 * 512 * 2
