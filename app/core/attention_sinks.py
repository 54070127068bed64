"""Which models hand every attention layer learned sinks, the extra per-head softmax logit some backends cannot
take (AttentionBackend.supports_sink; ROCM_ATTN refuses: "attention sinks not supported").

Two ways a model gets them, both read from the wheels:

- by architecture: gpt_oss.py OAIAttention passes ``sinks=self.sinks`` on every layer (0.11.0-0.33.0);
- by a config field (ModelSpec.attention_sinks, read by hf_config/sinks.py): Granite's
  granite_layer_attn_params (granite.py, also granitemoe.py / granitemoeshared.py, 0.30.0-0.33.0) gives every
  layer ``has_sink = getattr(config, "attention_sinks", layer_types is not None)``, the same for each layer;
  VersionRules.config_sinks says the release reads it (0.22.0's granite.py has no sinks).

Sinks only on the sliding layers: mimo_v2.py ``add_swa_attention_sink_bias`` layers run the DiffKV backends that
MiMo-V2 picks itself (backends_diffkv.py, sinks included); laguna.py ``swa_attention_sink_enabled`` (no published
Laguna config sets it, and transformers 5.20.2's LagunaConfig has no such field) is not modelled: vLLM would pick
those layers' backend apart from the full layers'.
"""

from __future__ import annotations

from app.core.specs import ModelSpec
from app.core.versions import VersionRules

SINK_ARCHITECTURES = frozenset({"GptOssForCausalLM"})


def has_sinks(*, model: ModelSpec, rules: VersionRules) -> bool:
    """Every attention layer carries sinks under this release. E.g. gpt-oss -> True; a Granite config.json with
    layer_types -> True from 0.30.0, False at 0.22.1; a Granite without either field -> False."""
    return model.architecture in SINK_ARCHITECTURES or (rules.config_sinks and model.attention_sinks)
