"""config.json fields that turn attention sinks on for every layer (app/core/attention_sinks.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# the architectures built on granite_layer_attn_params (0.33.0 registry.py: granite.py GraniteForCausalLM, also for
# GraniteSWAForCausalLM; granitemoe.py GraniteMoeForCausalLM; granitemoeshared.py, also for GraniteMoeSWAForCausalLM,
# builds GraniteMoeAttention)
GRANITE_SINK_ARCHITECTURES = frozenset(
    {
        "GraniteForCausalLM",
        "GraniteSWAForCausalLM",
        "GraniteMoeForCausalLM",
        "GraniteMoeSharedForCausalLM",
        "GraniteMoeSWAForCausalLM",
    }
)


def config_attention_sinks(text: Mapping[str, Any], *, architecture: str) -> bool:
    """0.30.0-0.33.0 granite.py granite_layer_attn_params: ``getattr(config, "attention_sinks", layer_types is not
    None)`` (transformers 5.20.2 GraniteConfig declares neither field, so only config.json's keys count). E.g.
    {"layer_types": [...]} -> True; with "attention_sinks": false -> False; neither -> False."""
    if architecture not in GRANITE_SINK_ARCHITECTURES:
        return False
    if "attention_sinks" in text:
        return bool(text["attention_sinks"])
    return text.get("layer_types") is not None
