"""Attention sinks a config field turns on (closing note r9, "rules9 left out"): Granite's granite_layer_attn_params
(0.30.0 and 0.33.0 model_executor/models/granite.py: ``has_sink = getattr(config, "attention_sinks", layer_types is
not None)``, the same for every layer; granitemoe.py builds its attention with it), read against transformers
5.20.2's GraniteMoeConfig, which declares neither field.

The config is the real ibm-granite/granite-3.1-1b-a400m-instruct config.json (tests/data/configs/heldout_0_33d); the
"layer_types" copies add that one key (every layer full attention, so the KV cache is unchanged) to turn sinks on
the way an SWA Granite checkpoint's config does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.catalog import find_device
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.specs import ServeConfig

CONFIG = (
    Path(__file__).parents[1]
    / "data/configs/heldout_0_33d/ibm-granite--granite-3.1-1b-a400m-instruct_config.json"
)


def _config(**extra: Any) -> dict[str, Any]:
    config: dict[str, Any] = json.loads(CONFIG.read_text())
    return {**config, **extra}


def _backend(config: dict[str, Any], device: str, version: str) -> str:
    model = model_spec_from_hf_config(config, name="granite")
    serve = ServeConfig(max_model_len=4096)
    return estimate(
        model=model, device=find_device(device), serve=serve, vllm_version=version
    ).attention_backend


def _with_layer_types() -> dict[str, Any]:
    base = _config()
    return _config(layer_types=["full_attention"] * base["num_hidden_layers"])


def test_the_fields_as_granite_reads_them() -> None:
    assert model_spec_from_hf_config(_config(), name="g").attention_sinks is False
    assert model_spec_from_hf_config(_with_layer_types(), name="g").attention_sinks is True
    # attention_sinks overrides the layer_types default either way
    assert (
        model_spec_from_hf_config({**_with_layer_types(), "attention_sinks": False}, name="g").attention_sinks
        is False
    )
    assert model_spec_from_hf_config(_config(attention_sinks=True), name="g").attention_sinks is True


@pytest.mark.parametrize(
    ("sinks", "device", "version", "backend"),
    [
        # A100 (8.0) at 0.33.0: FA2 has no sinks (flash_attn.py supports_sink: FA3 / FA4 only), FlashInfer's need
        # TRTLLM attention (9.x / 10.x / 12.x in 0.33.0): TRITON_ATTN, as for gpt-oss there
        (True, "nvidia-a100-sxm4-80gb", "0.33.0", "TRITON_ATTN"),
        (False, "nvidia-a100-sxm4-80gb", "0.33.0", "FLASH_ATTN"),
        # 0.22.x: granite.py builds no sinks (0.22.0 wheel), so the field changes nothing
        (True, "nvidia-a100-sxm4-80gb", "0.22.1", "FLASH_ATTN"),
        # H100: FA3 takes sinks
        (True, "nvidia-h100-sxm-80gb", "0.33.0", "FLASH_ATTN"),
        # MI300X at 0.33.0: ROCM_ATTN supports_sink False -> TRITON_ATTN (rocm.py _get_backend_priorities)
        (True, "amd-mi300x-192gb", "0.33.0", "TRITON_ATTN"),
        (False, "amd-mi300x-192gb", "0.33.0", "ROCM_ATTN"),
    ],
)
def test_sinks_from_the_config_pick_the_backend(sinks: bool, device: str, version: str, backend: str) -> None:
    config = _with_layer_types() if sinks else _config()
    assert _backend(config, device, version) == backend
