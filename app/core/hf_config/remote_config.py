"""Whether a config.json names remote *configuration* code, as transformers decides it.

transformers' AutoConfig.from_pretrained (5.16.1 models/auto/configuration_auto.py) takes the checkpoint's own config
class only when ``auto_map`` has an ``AutoConfig`` entry (``has_remote_code = "auto_map" in config_dict and
"AutoConfig" in config_dict["auto_map"]``); otherwise it looks model_type up in CONFIG_MAPPING and raises "does not
recognize this architecture" for a type it does not know. An auto_map that names only model classes
(AutoModel, AutoModelForCausalLM, ...) is remote *model* code, which vLLM's Transformers backend can use once the
config is read, but it does not make an unknown model_type readable. vLLM 0.33.0 transformers_utils/config.py
HFConfigParser.parse calls that AutoConfig for any model_type outside its own _CONFIG_REGISTRY.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

AUTO_CONFIG_KEY = "AutoConfig"


def names_remote_config(top: Mapping[str, Any]) -> bool:
    """True when the top-level config's auto_map gives transformers a config class to import."""
    auto_map = top.get("auto_map")
    return isinstance(auto_map, Mapping) and AUTO_CONFIG_KEY in auto_map
