"""DeepSeek-V4.1 (deepseek_v41 / deepseek_v41_text, vLLM 0.30.0+ models/deepseek_v41) is not DeepSeek-V4.

Config: tests/data/configs/current-2026-12/DeepSeek-V4.1-Flash-Next-DGX-Spark-512K_config.json (SOURCES.md there).
0.33.0 models/deepseek_v41/attention.py takes compress ratios 0 (sliding window), 1 and 2 and keeps the compressed
caches only on `kv_source_layer_ids`; the planner sizes none of that. On main it read `deepseek_v41_text` as
DeepSeek-V4 (a substring test) and refused the config with V4's rule ("needs one of 0, 4, 128"), a reason that
names the wrong model. It now refuses saying what is not modelled, and DeepSeek-V4 keeps its own check.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.errors import ConfigError
from app.core.hf_config import model_spec_from_hf_config

DATA = Path(__file__).resolve().parents[1] / "data/configs"
V41 = DATA / "current-2026-12/DeepSeek-V4.1-Flash-Next-DGX-Spark-512K_config.json"
V4 = DATA / "current/deepseek-ai--DeepSeek-V4-Flash_config.json"


def test_v41_is_refused_as_v41_not_as_v4() -> None:
    config = json.loads(V41.read_text(encoding="utf-8"))
    with pytest.raises(ConfigError) as err:
        model_spec_from_hf_config(config, name="v41", vllm_version="0.33.0")
    message = str(err.value)
    assert "DeepSeek-V4.1" in message and "kv_source_layer_ids" in message
    assert "0, 4, 128" not in message


def test_v4_keeps_its_compress_ratios() -> None:
    config = json.loads(V4.read_text(encoding="utf-8"))
    spec = model_spec_from_hf_config(config, name="v4", vllm_version="0.33.0")
    assert spec.compress_ratios is not None and set(spec.compress_ratios) <= {0, 4, 128}
