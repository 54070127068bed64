"""A config.json cut down to what the planner reads, so any real config travels in a permalink.

ModelOpt MIXED_PRECISION checkpoints list a quant_algo for every module (nvidia/MiniMax-M3-NVFP4's
config.json is 2.3 MB of `quantized_layers`, 84 KB even deflated); the planner reads from those lists
only which algo the MLP modules use (:func:`app.core.hf_config.quantization._mixed_precision_algo`), from
`config_groups` only the group with the most targets, and from `ignore` / `exclude_modules` only the decoder
modules :mod:`app.core.hf_config.quant_ignore` sizes (not lm_head, embeddings or towers).
:func:`planner_config` keeps every other key as it is and replaces those lists by the one entry that
gives the same reading, so ``model_spec_from_hf_config(planner_config(c)) == model_spec_from_hf_config(c)``
(tests/unit/test_config_reduce.py checks it on every file of tests/data/configs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.hf_config.coerce import TEXT_CONFIG_KEYS
from app.core.hf_config.quant_ignore import is_counted
from app.core.hf_config.quantization import _largest_group, _mixed_precision_algo

QUANT_KEYS = ("quantization_config", "compression_config")
UNREAD_LISTS = ("ignore", "exclude_modules")  # the module lists cut to what quant_ignore reads
# the one module name the reduced `quantized_layers` keeps: an MLP module, so it is read as the MLP algo
REDUCED_LAYER_NAME = "mlp"


def _reduce_quant(q: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = dict(q)
    for key in UNREAD_LISTS:  # cut to the entries the planner reads (quant_ignore.unconverted_fraction)
        if isinstance(out.get(key), list):
            substring = key == "exclude_modules"
            out[key] = [n for n in out[key] if isinstance(n, str) and is_counted(n, substring=substring)]
    inner = out.get("quantization")
    if isinstance(inner, Mapping):
        out["quantization"] = _reduce_quant(inner)
    layers = out.get("quantized_layers")
    if isinstance(layers, Mapping) and layers:
        out["quantized_layers"] = {REDUCED_LAYER_NAME: {"quant_algo": _mixed_precision_algo(layers)}}
    groups = out.get("config_groups")
    if isinstance(groups, Mapping) and groups:
        name = next(key for key, value in groups.items() if value is _largest_group(groups))
        group = groups[name]
        if isinstance(group, Mapping):
            group = {k: v for k, v in group.items() if k != "targets"}
            group["targets"] = ["Linear"]
        out["config_groups"] = {name: group}
    return out


def planner_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with its quantization lists cut to the entries the planner reads (see the module doc).
    Raises what reading the config would raise (ConfigError) for malformed quantization blocks."""
    out: dict[str, Any] = dict(config)
    for key in QUANT_KEYS:
        if isinstance(out.get(key), Mapping):
            out[key] = _reduce_quant(out[key])
    for key in TEXT_CONFIG_KEYS:
        text = out.get(key)
        if isinstance(text, Mapping):
            out[key] = {
                k: (_reduce_quant(v) if k in QUANT_KEYS and isinstance(v, Mapping) else v)
                for k, v in text.items()
            }
    return out
