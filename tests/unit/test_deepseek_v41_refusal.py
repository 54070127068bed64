"""DeepSeek-V4.1 (deepseek_v41 / deepseek_v41_text, vLLM 0.30.0+ models/deepseek_v41) is not DeepSeek-V4.

Config: tests/data/configs/current-2026-12/DeepSeek-V4.1-Flash-Next-DGX-Spark-512K_config.json (SOURCES.md there).
0.33.0 models/deepseek_v41/attention.py takes compress ratios 0 (sliding window), 1 and 2 and keeps the compressed
caches only on `kv_source_layer_ids`; the planner sizes none of that. On main it read `deepseek_v41_text` as
DeepSeek-V4 (a substring test) and refused the config with V4's rule ("needs one of 0, 4, 128"), a reason that
names the wrong model. It now refuses saying what is not modelled, and DeepSeek-V4 keeps its own check.

Round 13 (late13): the refusal names this config's caches as 0.33.0 models/deepseek_v41/attention.py
DeepseekV4Attention.__init__ / get_kv_cache_spec build them, worked from the config by hand: compress_ratios
[0, 0, 2 x 18 (layers 2-19), 1 x 20 (20-39), 0, 0, 0 (MTP)] -> 38 compressed layers; kv_source_layer_ids 2, 8, 14,
20 own the compressed cache (ratios 2, 2, 2, 1), the other 34 read it; of index_source_layer_ids 2 … 36 the kv
sources 2, 8, 14, 20 own the indexer key cache and 24, 28, 32, 36 reuse layer 20's. Before 0.30.0 (registry
data app/core/hf_config/vllm_architectures.json: DeepseekV41ForCausalLM first listed 0.30.0, absent in 0.29.0) the
architecture refusal comes first. Before: the same one-line reason at every release, 0.29.0 included.
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


def test_the_refusal_names_this_configs_caches() -> None:
    config = json.loads(V41.read_text(encoding="utf-8"))
    with pytest.raises(ConfigError) as err:
        model_spec_from_hf_config(config, name="v41", vllm_version="0.33.0")
    message = str(err.value)
    assert "vLLM 0.30.0+ serves it (models/deepseek_v41)" in message
    assert "a sliding-window cache of 128 tokens on every layer" in message
    assert (
        "kv_source_layer_ids 2, 8, 14, 20 (compress ratios 2, 2, 2, 1; the other 34 compressed layers"
        in message
    )
    assert "indexer key caches on 2, 8, 14, 20 and indexers reusing them on 24, 28, 32, 36" in message


def test_before_0_30_the_architecture_is_unknown() -> None:
    config = json.loads(V41.read_text(encoding="utf-8"))
    with pytest.raises(ConfigError) as err:
        model_spec_from_hf_config(config, name="v41", vllm_version="0.29.0")
    assert err.value.field == "architectures"
    assert "DeepseekV41ForCausalLM is not in vLLM 0.29.0's model registry" in str(err.value)


@pytest.mark.parametrize(
    ("change", "field", "text"),
    [
        # attention.py: "only 0 (sliding window), 1 and 2 are supported" (layer 5 is a ratio-2 layer in the config)
        (
            lambda text: text["compress_ratios"].__setitem__(5, 4),
            "compress_ratios",
            "DeepSeek V4.1 layer 5 has compress_ratio=4; only 0 (sliding window), 1 and 2 are supported.",
        ),
        # attention.py: compressed layers need both source lists; layer 2 is the first compressed layer
        (
            lambda text: text.pop("index_source_layer_ids"),
            "kv_source_layer_ids",
            "DeepSeek V4.1 requires kv_source_layer_ids / index_source_layer_ids in the config for compressed "
            "layers (layer 2 has compress_ratio=2)",
        ),
        # max(s for s in sources if s <= layer_id): with sources from 8 up, layer 2 has none
        (
            lambda text: text.__setitem__("kv_source_layer_ids", [8, 14, 20]),
            "kv_source_layer_ids",
            "layer 2 has compress_ratio=2 but no kv / index source layer at or below it",
        ),
    ],
)
def test_a_config_vllm_refuses_gets_vllms_reason(change, field: str, text: str) -> None:
    config = json.loads(V41.read_text(encoding="utf-8"))
    change(config["text_config"])
    with pytest.raises(ConfigError) as err:
        model_spec_from_hf_config(config, name="v41", vllm_version="0.33.0")
    assert err.value.field == field and text in str(err.value)


def test_v4_keeps_its_compress_ratios() -> None:
    config = json.loads(V4.read_text(encoding="utf-8"))
    spec = model_spec_from_hf_config(config, name="v4", vllm_version="0.33.0")
    assert spec.compress_ratios is not None and set(spec.compress_ratios) <= {0, 4, 128}
