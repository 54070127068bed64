"""Reading typed values out of an arbitrary JSON object, and the text tower with class defaults.

Any JSON object may come in (a pasted config, a fuzzer's dict); the only exception that leaves
this package is :class:`ConfigError`, naming the JSON key at fault.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.core.errors import ConfigError
from app.core.text import Text

# --- sanity bounds: real models are far inside these; they stop absurd input from allocating
# --- a billion-entry layer list or overflowing a float.
MAX_LAYERS = 10_000  # largest real decoder stacks have ~200 layers (Nemotron-H 118 "layers")
MAX_DIM = 100_000_000  # hidden / FFN / vocab / head sizes (largest real vocab ~262k)
MAX_POSITIONS = 2**40  # position limits (largest real: 10,485,760 for Llama-4-Scout)
MAX_EXPERTS = 1_000_000

GEMMA3_SLIDING_WINDOW_PATTERN = 6  # Gemma3TextConfig default: 5 local layers per global layer
# Gemma3nTextConfig (transformers 4.57.6 and 5.18.0) fills an absent layer_types as full iff (i + 1) % 5 == 0, which
# vLLM 0.33.0 gemma3n.py reads: the layout geometry._sliding_layer_kinds draws from a sliding_window_pattern of 5
GEMMA3N_GLOBAL_LAYER_PERIOD = 5

# transformers config-class defaults for keys that real config.json files leave out. The values
# are what `AutoConfig` would fill in (reference model_configs.md; e.g. gemma-3's text_config lists
# neither vocab_size nor max_position_embeddings, falcon-40b has no FFN or position key).
CLASS_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma": {"tie_word_embeddings": True},
    "gemma2": {"tie_word_embeddings": True},
    "gemma3_text": {
        "tie_word_embeddings": True,
        "vocab_size": 262_208,
        "max_position_embeddings": 131_072,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "sliding_window": 4096,
        "sliding_window_pattern": GEMMA3_SLIDING_WINDOW_PATTERN,
    },
    # a config with neither layer_types nor sliding_window_pattern: its class's period of global layers (layer i
    # global iff (i + 1) % period == 0), by exact text model_type (a substring test "gemma3" gave gemma3n 6)
    "gemma3": {"sliding_window_pattern": GEMMA3_SLIDING_WINDOW_PATTERN},
    "gemma3n": {"sliding_window_pattern": GEMMA3N_GLOBAL_LAYER_PERIOD},
    "gemma3n_text": {"sliding_window_pattern": GEMMA3N_GLOBAL_LAYER_PERIOD},
    # vLLM 0.33.0 transformers_utils/configs/hy_v4.py HYV4Config's declared defaults for the DSA indexer and the
    # sparse layers' sink (the indexer's weights and cache are sized from these when a config leaves them out)
    "hy_v4": {"index_topk": 2048, "index_head_dim": 128, "index_n_heads": 16, "learnable_sink": True},
    "falcon": {"tie_word_embeddings": True, "max_position_embeddings": 2048},
    # PersimmonConfig's declared defaults (transformers models/persimmon/configuration_persimmon.py, the same from
    # 4.35 to 5.17): Fuyu's config.json nests a bare {"model_type": "persimmon"} text_config, so transformers'
    # FuyuConfig builds its text model from these (adept/fuyu-8b's own geometry)
    "persimmon": {
        "vocab_size": 262_144,
        "hidden_size": 4096,
        "intermediate_size": 16_384,
        "num_hidden_layers": 36,
        "num_attention_heads": 64,
        "max_position_embeddings": 16_384,
        "tie_word_embeddings": False,
    },
    "qwen2": {"use_sliding_window": False},
    "qwen2_moe": {"use_sliding_window": False},
    "qwen3": {"use_sliding_window": False},
    "qwen3_moe": {"use_sliding_window": False},
    "qwen3_next": {"full_attention_interval": 4},
    "llama4_text": {"interleave_moe_layer_step": 1},
    "nemotron_h": {"conv_kernel": 4},
    "mamba": {"tie_word_embeddings": True},  # MambaConfig default
    "falcon_mamba": {"tie_word_embeddings": True},  # NemotronHConfig default (mamba conv kernel)
}
# Decoder config classes whose `tie_word_embeddings` defaults to True (transformers 4.57: declared
# True, or not declared so PretrainedConfig's default True applies). Every other decoder class
# declares False. A config.json that omits the key is tied for these (e.g. aya-23-8B: 8.03B
# parameters, not 9.08B; starcoder2-7b: 7.17B).
TIED_BY_DEFAULT_MODEL_TYPES = (
    "bloom",
    "cohere",
    "cohere2",
    "ernie4_5",
    "ernie4_5_moe",
    "gemma3n_text",
    "gpt2",
    "gpt_bigcode",
    "gpt_neo",
    "jetmoe",
    "lfm2",
    "mpt",
    "opt",
    "recurrent_gemma",
    "smollm3",
    "starcoder2",
    "vaultgemma",
    "zamba",
    "zamba2",
)
for _model_type in TIED_BY_DEFAULT_MODEL_TYPES:
    CLASS_DEFAULTS.setdefault(_model_type, {}).setdefault("tie_word_embeddings", True)
# Multimodal wrappers whose text tower config is the one vLLM sizes (vLLM get_hf_text_config).
TEXT_CONFIG_KEYS = ("text_config", "llm_config", "language_config")

# ----------------------------------------------------------------------------------------------
# Reading typed values out of an arbitrary JSON object
# ----------------------------------------------------------------------------------------------


def _as_int(key: str, value: Any, *, minimum: int, maximum: int) -> int:
    """A JSON integer (or integral float) within [minimum, maximum]; bools are not integers."""
    if isinstance(value, bool):
        raise ConfigError(key, Text("must be an integer, got {value!r}", value=value))
    if isinstance(value, float):
        if not value.is_integer():
            raise ConfigError(key, Text("must be an integer, got {value!r}", value=value))
        value = int(value)
    if not isinstance(value, int):
        raise ConfigError(key, Text("must be an integer, got {name}", name=type(value).__name__))
    if value < minimum or value > maximum:
        raise ConfigError(
            key,
            Text(
                "must be between {minimum} and {maximum}, got {value}",
                minimum=minimum,
                maximum=maximum,
                value=value,
            ),
        )
    return value


def _as_float(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(key, Text("must be a number, got {name}", name=type(value).__name__))
    result = float(value)
    if not math.isfinite(result):
        raise ConfigError(key, Text("must be finite, got {value!r}", value=value))
    return result


def _as_bool(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(key, Text("must be true or false, got {value!r}", value=value))
    return value


def _as_str(key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(key, Text("must be a string, got {name}", name=type(value).__name__))
    return value


def _as_mapping(key: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(key, Text("must be an object, got {name}", name=type(value).__name__))
    return value


def _as_list(key: str, value: Any) -> Sequence[Any]:
    if not isinstance(value, list | tuple):
        raise ConfigError(key, Text("must be a list, got {name}", name=type(value).__name__))
    return value


def _present(cfg: Mapping[str, Any], key: str) -> bool:
    return cfg.get(key) is not None


def _int(cfg: Mapping[str, Any], key: str, *, minimum: int = 1, maximum: int = MAX_DIM) -> int | None:
    """The integer at ``key``, or None when the key is absent or null."""
    value = cfg.get(key)
    if value is None:
        return None
    return _as_int(key, value, minimum=minimum, maximum=maximum)


def _first_int(
    cfg: Mapping[str, Any], keys: Sequence[str], *, minimum: int = 1, maximum: int = MAX_DIM
) -> int | None:
    """The first of ``keys`` that is present (vLLM/transformers alias lists)."""
    for key in keys:
        if _present(cfg, key):
            return _as_int(key, cfg[key], minimum=minimum, maximum=maximum)
    return None


def _required_int(cfg: Mapping[str, Any], keys: Sequence[str], *, maximum: int = MAX_DIM) -> int:
    value = _first_int(cfg, keys, maximum=maximum)
    if value is None:
        raise ConfigError(keys[0], "missing")
    return value


def _flag(cfg: Mapping[str, Any], key: str, *, default: bool = False) -> bool:
    value = cfg.get(key)
    return default if value is None else _as_bool(key, value)


# ----------------------------------------------------------------------------------------------
# The text config, with class defaults filled in
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Configs:
    top: Mapping[str, Any]
    text: Mapping[str, Any]  # text tower (== top for text-only models), class defaults applied
    model_type: str  # top-level model_type
    text_model_type: str
    text_key: str = ""  # the TEXT_CONFIG_KEYS entry the text tower sits under ("" when it is the top config)


def _split_configs(config: Any) -> _Configs:
    top = _as_mapping("config", config)
    top_type = _as_str("model_type", top["model_type"]) if _present(top, "model_type") else ""
    text: Mapping[str, Any] = top
    text_key = ""
    for key in TEXT_CONFIG_KEYS:
        if _present(top, key):
            text, text_key = _as_mapping(key, top[key]), key
            break
    text_type = _as_str("model_type", text["model_type"]) if _present(text, "model_type") else top_type
    defaults = CLASS_DEFAULTS.get(text_type, {})
    merged = {**defaults, **_with_standard_names({k: v for k, v in text.items() if v is not None}, text_type)}
    _derive_transformers_fields(merged)
    return _Configs(top=top, text=merged, model_type=top_type, text_model_type=text_type, text_key=text_key)


# scripts/gen_attribute_maps.py
ATTRIBUTE_MAPS_FILE = Path(__file__).with_name("transformers_attribute_maps.json")
# spellings a config class takes at construction rather than through attribute_map: transformers 5.x
# models/bloom/configuration_bloom.py BloomConfig.__post_init__ pops the old `n_embed` kwarg into hidden_size
CONSTRUCTOR_RENAMES: dict[str, dict[str, str]] = {"bloom": {"hidden_size": "n_embed"}}


@cache
def _attribute_maps() -> dict[str, dict[str, str]]:
    maps: dict[str, dict[str, str]] = json.loads(ATTRIBUTE_MAPS_FILE.read_text(encoding="utf-8"))
    for model_type, renames in CONSTRUCTOR_RENAMES.items():
        maps[model_type] = {**maps.get(model_type, {}), **renames}
    return maps


# the attention geometry every reader here takes under its standard name; other mapped names (experts, FFN widths,
# MTP counts) have model-specific readers with their own spellings (DeepSeek-V4's attribute_map sends
# intermediate_size to moe_intermediate_size, which the dense-FFN reader must not take)
STANDARD_GEOMETRY_NAMES = frozenset(
    {"hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim"}
)


def _with_standard_names(stored: dict[str, Any], model_type: str) -> dict[str, Any]:
    """The standard geometry names transformers' config class answers for ``model_type`` (its ``attribute_map``:
    GPT-2's ``n_embd`` is ``hidden_size``, BLOOM's ``n_layer`` ``num_hidden_layers``), filled from the stored
    spelling where config.json gives only that one; vLLM reads the standard names."""
    for standard, spelling in _attribute_maps().get(model_type, {}).items():
        if standard in STANDARD_GEOMETRY_NAMES and standard not in stored and spelling in stored:
            stored[standard] = stored[spelling]
    return stored


# Per-layer lists whose length is the layer count when num_hidden_layers is left out (transformers'
# NemotronHConfig derives num_hidden_layers from layers_block_type; hybrid_override_pattern likewise)
LAYER_LIST_KEYS = ("layers_block_type", "hybrid_override_pattern", "layer_types")


def _derive_transformers_fields(text: dict[str, Any]) -> None:
    """Fields newer transformers config classes derive instead of storing (filled in place):
    num_hidden_layers from a per-layer list, and a per-layer `moe_intermediate_size` list taken as its
    mean over the MoE layers (the planner sizes one expert width; the routed-expert parameter total is kept)."""
    if text.get("num_hidden_layers") is None:
        for key in LAYER_LIST_KEYS:
            value = text.get(key)
            if isinstance(value, list | str) and 0 < len(value) <= MAX_LAYERS:
                text["num_hidden_layers"] = len(value)
                break
    widths = text.get("moe_intermediate_size")
    if isinstance(widths, list):
        sizes = [_as_int("moe_intermediate_size", w, minimum=0, maximum=MAX_DIM) for w in widths]
        moe = [w for w in sizes if w > 0]
        text["moe_intermediate_size"] = sum(moe) // len(moe) if moe else 0


def _lookup(cfgs: _Configs, key: str) -> Any:
    """A key read from the text tower first, then the top level (dtype, quantization, tying)."""
    if _present(cfgs.text, key):
        return cfgs.text[key]
    return cfgs.top.get(key)


def _lookup_flag(cfgs: _Configs, key: str) -> bool | None:
    """A boolean key read as :func:`_lookup` reads it (text tower, then top level); None when absent."""
    value = _lookup(cfgs, key)
    return None if value is None else _as_bool(key, value)


def _config_error(exc: ValidationError) -> ConfigError:
    error = exc.errors()[0]
    field = str(error["loc"][0]) if error["loc"] else "config"
    return ConfigError(field, error["msg"])
