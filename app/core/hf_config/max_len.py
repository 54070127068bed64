"""The derived max_model_len of a config.json, as vLLM 0.33.0's ``config/model.py _get_and_verify_max_len`` reads
it (keys from ``model_arch_config_convertor.py derive_max_model_len_and_key``), and the older releases' variants."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from app.core.errors import ConfigError
from app.core.hf_config.coerce import (
    MAX_POSITIONS,
    _as_float,
    _as_int,
    _as_mapping,
    _as_str,
    _Configs,
    _present,
    _split_configs,
)
from app.core.text import Text

DEFAULT_MAX_MODEL_LEN = 2048  # vLLM `_get_and_verify_max_len`: no length key -> 2048 + warning
# vLLM's possible_keys for the model's length, in its order; it takes the minimum of those present.
MAX_LEN_KEYS = (
    "max_position_embeddings",  # OPT, Llama, ...
    "n_positions",  # GPT-2
    "max_seq_len",  # MPT
    "seq_length",  # ChatGLM2
    "model_max_length",  # Command-R
    "max_target_positions",  # Whisper
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)
# vLLM then replaces that minimum by `model_max_length` when the config has one (0.11.0 config/model.py
# _get_and_verify_max_len, 0.19.0 - 0.33.0 model_arch_config_convertor.py derive_max_model_len_and_key: "For
# Command-R / Cohere, Cohere2 models"), so a larger model_max_length raises the derived length
OVERRIDING_LEN_KEY = "model_max_length"
# Reference §7 (0.33.0 `_get_and_verify_max_len`): the RoPE `factor` multiplies the derived length
# unless the rope type is one of these, or the model type is gemma3 (its 128K is already scaled).
# NOTE: vLLM 0.11 multiplied yarn as original_max_position_embeddings x factor; 0.33.0 does not.
ROPE_TYPES_NOT_SCALING_LEN = frozenset(
    {"su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling"}
)


# ----------------------------------------------------------------------------------------------
# max_model_len (reference §7)
# ----------------------------------------------------------------------------------------------


def derive_max_model_len(config: Mapping[str, Any]) -> int:
    """vLLM's derived ``max_model_len`` for a config.json (before any tokenizer limit)."""
    return _max_model_len(_split_configs(config))


def _yarn_scaled_max_model_len(cfgs: _Configs) -> int | None:
    """The derived length under vLLM <= 0.27.1's yarn rule, when it differs (else None)."""
    scaled = _max_model_len(cfgs, yarn_scales=True)
    return None if scaled == _max_model_len(cfgs) else scaled


def _rope_dicts(text: Mapping[str, Any]) -> tuple[str, list[Mapping[str, Any]]]:
    """The rope parameter dicts, one per layer type when nested (0.33.0 transformers_utils/config.py
    iter_rope_parameters: Gemma-4's {"full_attention": {...}, "sliding_attention": {...}})."""
    rope_key = "rope_scaling" if _present(text, "rope_scaling") else "rope_parameters"
    rope = text.get(rope_key)
    if rope is None:
        return rope_key, []
    rope = _as_mapping(rope_key, rope)
    if rope and all(isinstance(value, Mapping) for value in rope.values()):
        return rope_key, [value for value in rope.values() if value]
    return rope_key, [rope] if rope else []


def _rope_type(rope_key: str, rope: Mapping[str, Any]) -> str | None:
    rope_type = rope.get("rope_type", rope.get("type"))
    return None if rope_type is None else _as_str(rope_key, rope_type)


def _longrope_default_max_model_len(cfgs: _Configs) -> int | None:
    """vLLM 0.14+: with no --max-model-len a LongRoPE model (rope type "longrope", or legacy "su" that
    vLLM renames) serves the config's top-level original_max_position_embeddings (default: derived)."""
    rope_key, ropes = _rope_dicts(cfgs.text)
    if not any(_rope_type(rope_key, rope) in ("longrope", "su") for rope in ropes):
        return None
    if not _present(cfgs.top, "original_max_position_embeddings"):
        return None
    value = cfgs.top["original_max_position_embeddings"]
    return _as_int("original_max_position_embeddings", value, minimum=1, maximum=MAX_POSITIONS)


def _max_model_len(cfgs: _Configs, *, yarn_scales: bool = False) -> int:
    """The derived length; ``yarn_scales``: vLLM <= 0.27.1's rule, where a yarn rope derives
    original_max_position_embeddings x factor instead of leaving max_position_embeddings as it is.
    With several rope dicts (per layer type) the factor of the last scaling one applies, as 0.33.0's
    _get_and_verify_max_len loops over them."""
    text = cfgs.text
    lengths = [
        _as_int(key, text[key], minimum=1, maximum=MAX_POSITIONS)
        for key in MAX_LEN_KEYS
        if _present(text, key)
    ]
    derived = float(min(lengths)) if lengths else float(DEFAULT_MAX_MODEL_LEN)
    if _present(
        text, OVERRIDING_LEN_KEY
    ):  # Command-R / Cohere: this key wins over the minimum, larger or not
        derived = float(
            _as_int(OVERRIDING_LEN_KEY, text[OVERRIDING_LEN_KEY], minimum=1, maximum=MAX_POSITIONS)
        )
    rope_key, ropes = _rope_dicts(text)
    is_gemma3 = "gemma3" in cfgs.model_type or "gemma3" in cfgs.text_model_type
    if ropes and not is_gemma3:
        factor = 1.0
        for rope in ropes:
            rope_type = _rope_type(rope_key, rope)
            yarn_scaled = yarn_scales and rope_type == "yarn"
            if yarn_scaled and _present(rope, "original_max_position_embeddings"):
                derived = float(
                    _as_int(
                        rope_key, rope["original_max_position_embeddings"], minimum=1, maximum=MAX_POSITIONS
                    )
                )
            if yarn_scaled or rope_type not in ROPE_TYPES_NOT_SCALING_LEN:
                factor = _as_float(rope_key, rope["factor"]) if _present(rope, "factor") else factor
        if factor <= 0:
            raise ConfigError(rope_key, Text("factor must be positive, got {factor}", factor=factor))
        derived *= factor
    if not math.isfinite(derived) or derived > MAX_POSITIONS:
        raise ConfigError(rope_key, Text("derived max_model_len is implausibly large"))
    result = int(derived)
    if result < 1:
        raise ConfigError(rope_key, Text("derived max_model_len is below 1"))
    return result
