"""An auto_map makes an unknown model_type readable only when it names an AutoConfig (app/core/hf_config/
remote_config.py). Config: heldout_0_33t's zoot-v3/zoot-v3 (ZootForConditionalGeneration, model_type "zoot", an
auto_map of AutoModelForCausalLM / AutoModelForSequenceClassification / AutoModel only; SOURCES.md there).
transformers 5.16.1 models/auto/configuration_auto.py AutoConfig.from_pretrained: has_remote_code = "auto_map" in
config_dict and "AutoConfig" in config_dict["auto_map"]; without it CONFIG_MAPPING["zoot"] raises KeyError ->
ValueError "... does not recognize this architecture", which vLLM 0.33.0 HFConfigParser.parse passes on.
The heldout_0_33t blind score missed it: the planner planned 32 layers x 8 KV heads of 128."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from app.core.catalog import find_device
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.hf_config.remote_config import names_remote_config
from app.core.specs import ServeConfig

CONFIG = Path(__file__).resolve().parents[1] / "data/configs/heldout_0_33t/zoot-v3--zoot-v3_config.json"


def _plan(config: dict[str, Any], tp: int = 2) -> Any:
    spec = model_spec_from_hf_config(config, name="zoot", vllm_version="0.33.0")
    return estimate(
        model=spec,
        device=find_device("h100"),
        serve=ServeConfig(tensor_parallel_size=tp, max_model_len=4096),
        vllm_version="0.33.0",
    )


def _config() -> dict[str, Any]:
    return json.loads(CONFIG.read_text(encoding="utf-8"))


def test_model_only_auto_map_does_not_make_an_unknown_model_type_readable() -> None:
    assert not names_remote_config(_config())
    with pytest.raises(PlannerError) as err:
        _plan(_config())
    assert err.value.field == "model_type"
    assert "does not recognize this architecture" in str(err.value)


def test_an_auto_config_entry_does() -> None:
    # the same config with remote configuration code: read with --trust-remote-code and served through the
    # Transformers backend (unregistered architecture): 32 layers x (8 KV heads / TP 2 = 4) x 2 x 128 x 2 B
    config = copy.deepcopy(_config())
    config["auto_map"]["AutoConfig"] = "configuration_zoot.ZootConfig"
    assert names_remote_config(config)
    est = _plan(config)
    assert est.kv_bytes_per_token == 32 * 4 * 2 * 128 * 2
