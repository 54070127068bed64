"""DeepSeek-V4.1 (model_type deepseek_v41 / deepseek_v41_text): what vLLM builds, read from its config, and the
precise refusal the planner gives while it does not size that cache.

vLLM lists DeepseekV41ForCausalLM from 0.30.0 (models/deepseek_v41; absent from 0.29.0's registry, so before 0.30.0
the architecture refusal of registry.check_architecture stands). 0.33.0 models/deepseek_v41/attention.py
DeepseekV4Attention.__init__ reads, per layer id (MTP layers included; past the list a layer is 0):

- ``compress_ratios[i]``: 0 = sliding window only, 1 = a full-length compressed cache, 2 = ratio-2 compressed;
  anything else is vLLM's ValueError "DeepSeek V4.1 layer {i} has compress_ratio={r}; only 0 (sliding window),
  1 and 2 are supported.";
- a compressed layer needs both ``kv_source_layer_ids`` and ``index_source_layer_ids`` (else vLLM's ValueError
  "DeepSeek V4.1 requires kv_source_layer_ids / index_source_layer_ids …") and reads the latest source at or below
  it (``max(s for s in sources if s <= layer_id)``: a compressed layer below the first source has none);
- every layer: a sliding-window cache (DeepseekV4SWACache, 32-token blocks, 584 B a token in the V4 record with
  576 B page alignment, 528 B / 512 B in the V4.1 MXFP8 record FlashMLA decodes on SM100 only);
- only a backbone layer in kv_source_layer_ids owns the compressed latent cache (get_kv_cache_spec: an
  MLAAttentionSpec with tokens_per_state = its ratio; None on every other layer) and a compressor
  (compressor.py CompressorStateCache: a CircularBufferSpec); the other compressed layers read the source's;
- an indexer only on index_source_layer_ids, its key cache (DeepseekV4IndexerCache, MLAAttentionSpec of the
  source's ratio) owned only by a layer that is also a kv source; the rest share their kv source's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.errors import ConfigError
from app.core.hf_config.coerce import _as_int, _as_list
from app.core.text import Text

DSV41_MODEL_TYPES = frozenset({"deepseek_v41", "deepseek_v41_text"})
DSV41_RATIOS = (0, 1, 2)  # attention.py: "only 0 (sliding window), 1 and 2 are supported"
MAX_LAYER_ID = 100_000


def _layer_ids(text: Mapping[str, Any], key: str) -> tuple[int, ...]:
    if text.get(key) is None:
        return ()
    return tuple(_as_int(key, v, minimum=0, maximum=MAX_LAYER_ID) for v in _as_list(key, text[key]))


def _ids(values: tuple[int, ...]) -> str:
    return ", ".join(map(str, values)) if values else "none"


def refusal(text: Mapping[str, Any], *, model_type: str, num_layers: int) -> ConfigError:
    """The error for a V4.1 config: vLLM's own where it would refuse the config, else the planner's, naming the
    caches this config has. E.g. DeepSeek-V4.1-Flash-Next (40 layers, ratios 0 x 2, 2 x 18, 1 x 20 and 3 MTP
    zeros, kv sources 2, 8, 14, 20, index sources 2 … 36): 38 compressed layers, 4 of them owning the compressed
    cache (ratios 2, 2, 2, 1), indexer key caches on 2, 8, 14, 20, indexers reusing them on 24, 28, 32, 36."""
    ratios = tuple(
        _as_int("compress_ratios", v, minimum=0, maximum=MAX_LAYER_ID)
        for v in _as_list("compress_ratios", text.get("compress_ratios") or [])
    )
    for layer, ratio in enumerate(ratios):
        if ratio not in DSV41_RATIOS:
            return ConfigError(
                "compress_ratios",
                Text(
                    "DeepSeek V4.1 layer {layer} has compress_ratio={ratio}; only 0 (sliding window), 1 and 2 are "
                    "supported. (vLLM models/deepseek_v41/attention.py)",
                    layer=layer,
                    ratio=ratio,
                ),
            )
    kv_sources = tuple(s for s in _layer_ids(text, "kv_source_layer_ids") if s < num_layers)
    index_sources = tuple(s for s in _layer_ids(text, "index_source_layer_ids") if s < num_layers)
    compressed = [layer for layer, ratio in enumerate(ratios) if ratio > 0]
    if compressed and (not kv_sources or not index_sources):
        return ConfigError(
            "kv_source_layer_ids",
            Text(
                "DeepSeek V4.1 requires kv_source_layer_ids / index_source_layer_ids in the config for compressed "
                "layers (layer {layer} has compress_ratio={ratio}). (vLLM models/deepseek_v41/attention.py)",
                layer=compressed[0],
                ratio=ratios[compressed[0]],
            ),
        )
    orphan = next(
        (
            layer
            for layer in compressed
            if not all(any(s <= layer for s in ids) for ids in (kv_sources, index_sources))
        ),
        None,
    )
    if orphan is not None:  # vLLM's max(s for s in sources if s <= layer_id) has nothing to take
        return ConfigError(
            "kv_source_layer_ids",
            Text(
                "layer {layer} has compress_ratio={ratio} but no kv / index source layer at or below it: vLLM "
                "takes the latest source at or below each compressed layer (models/deepseek_v41/attention.py), "
                "and there is none.",
                layer=orphan,
                ratio=ratios[orphan],
            ),
        )
    owners = tuple(s for s in index_sources if s in kv_sources)
    return ConfigError(
        "model_type",
        Text(
            "DeepSeek-V4.1 ({model_type}): vLLM 0.30.0+ serves it (models/deepseek_v41), but the planner does not "
            "size its cache yet: a sliding-window cache of {window} tokens on every layer, the compressed latent "
            "cache only on kv_source_layer_ids {sources} (compress ratios {source_ratios}; the other {readers} "
            "compressed layers read it), indexer key caches on {owners} and indexers reusing them on {sharing}. "
            "Refused rather than planned wrong.",
            model_type=model_type,
            window=text.get("sliding_window"),
            sources=_ids(kv_sources),
            source_ratios=_ids(tuple(ratios[s] if s < len(ratios) else 0 for s in kv_sources)),
            readers=len(compressed) - sum(1 for s in kv_sources if s in compressed),
            owners=_ids(owners),
            sharing=_ids(tuple(s for s in index_sources if s not in kv_sources)),
        ),
    )
