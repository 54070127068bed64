"""A config.json that names its text model instead of carrying it (``text_model_id``), read as vLLM reads it.

0.33.0 ``transformers_utils/configs/ultravox.py UltravoxConfig.__setattr__``: assigning ``text_model_id`` loads
that model's own config (``get_config(text_model_id)``), and ``UltravoxConfig.text_config`` is its text config;
the checkpoint's config.json then has no ``text_config`` at all (e.g. fixie-ai's Ultravox v0.6 on
meta-llama/Llama-3.1-8B-Instruct). vLLM downloads that config; the planner reads the same config.json from its
own catalog (model_specs/, by HF id or alias) and otherwise says which config to paste.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.errors import ConfigError
from app.core.hf_config.coerce import TEXT_CONFIG_KEYS
from app.core.text import Text

TEXT_MODEL_ID_KEY = "text_model_id"


def with_text_model(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """``config`` with the text config its ``text_model_id`` names put in as ``text_config`` (the id wins over a
    text config also given, as ``__setattr__`` loads it after ``__init__``); unchanged without an id."""
    ref = (
        config.get(TEXT_MODEL_ID_KEY) if isinstance(config, Mapping) else None
    )  # a non-object: split_configs
    if ref is None:
        return config
    if not isinstance(ref, str) or not ref.strip():
        raise ConfigError(
            TEXT_MODEL_ID_KEY, Text("must be a Hugging Face model id, got {value!r}", value=ref)
        )
    from app.core.catalog import preset_config  # the catalog builds its own specs through this package

    text = preset_config(ref)
    if text is None and any(isinstance(config.get(key), Mapping) for key in TEXT_CONFIG_KEYS):
        return config  # an id the catalog lacks, with the text config pasted in: read that
    if text is None:
        raise ConfigError(
            TEXT_MODEL_ID_KEY,
            Text(
                "names {ref}, whose config.json vLLM downloads and sizes as the language model; the planner has "
                "no copy of it: paste that config.json as this config's text_config",
                ref=ref,
            ),
        )
    return {**config, "text_config": text}
