"""What vLLM 0.33.0 refuses and what it serves through the Transformers backend (issue 22 item 7: MiniMax-M3,
Step-3.7). Read from 0.33.0's model_executor/models/registry.py (_ModelRegistry.inspect_model_cls,
_try_resolve_transformers, _raise_for_unsupported) and transformers_utils/config.py (HFConfigParser.parse),
with transformers 5.20.2, the newest 0.33.0 allows (app/core/hf_config/transformers_fallback.json, written by
scripts/gen_transformers_fallback.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.catalog import find_device
from app.core.errors import ConfigError
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.hf_config.registry import transformers_fallback
from app.core.specs import ServeConfig

DATA = Path(__file__).resolve().parents[1] / "data" / "configs"


def _config(name: str) -> dict[str, Any]:
    path = DATA / "current" / f"{name}_config.json"
    if not path.exists():
        path = DATA / "real" / f"{name}.config.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _plan(config: dict[str, Any], version: str = "0.33.0") -> Any:
    return estimate(
        model=model_spec_from_hf_config(config, name="m"),
        device=find_device("h100"),
        serve=ServeConfig(tensor_parallel_size=8, max_model_len=8_192),
        vllm_version=version,
    )


def test_minimax_m3_text_config_does_not_parse_at_0_33() -> None:
    # model_type "minimax_m3": vLLM's _CONFIG_REGISTRY has minimax_m3_vl and minimax_m3_mtp only, transformers 5.20.2
    # has minimax_m3_vl*, the config has no auto_map -> AutoConfig.from_pretrained raises transformers' ValueError
    # (models/auto/configuration_auto.py) before the registry is asked
    with pytest.raises(ConfigError) as err:
        _plan(_config("MiniMaxAI--MiniMax-M3"))
    assert err.value.field == "model_type"
    assert "model type `minimax_m3` but Transformers does not recognize this architecture" in str(err.value)
    # the published VL checkpoint (MiniMaxM3SparseForConditionalGeneration, model_type minimax_m3_vl) is served
    model_types, _, _ = transformers_fallback()
    assert "minimax_m3_vl" in model_types and "minimax_m3" not in model_types


def test_step_3_7_flash_is_refused_with_vllms_words() -> None:
    # model_type step3p7 parses (transformers 5.20.2 Step3p7Config); Step3p7FlashForCausalLM is in no vLLM registry
    # (0.33.0 registers Step3p7ForConditionalGeneration), transformers exports no such class and the config has no
    # auto_map: _try_resolve_transformers returns None, _raise_for_unsupported says this
    for name in ("stepfun-ai--Step-3.7-Flash", "stepfun-ai--Step-3.7-Flash-FP8"):
        with pytest.raises(ConfigError) as err:
            _plan(_config(name))
        assert err.value.field == "architectures"
        assert "Model architectures ['Step3p7FlashForCausalLM'] are not supported for now" in str(err.value)


def test_an_architecture_transformers_has_is_served_by_the_transformers_backend() -> None:
    # Rule test on a real config with its architecture renamed: HeliumForCausalLM is in no vLLM registry but
    # transformers 5.20.2 exports it (models/helium/modeling_helium.py calls ALL_ATTENTION_FUNCTIONS.get_interface),
    # so 0.33.0 serves it as TransformersForCausalLM; the planner plans it and says so
    config = {
        **_config("meta-llama__Llama-3.1-8B"),
        "architectures": ["HeliumForCausalLM"],
        "model_type": "helium",
    }
    est = _plan(config)
    assert est.fits
    assert any("Transformers modeling backend" in str(w) for w in est.warnings)
    # 0.32.0 runs the same fallback code with transformers 5.19.0, which exports HeliumForCausalLM too (round 6
    # read it); 0.30.0 too (the same _try_resolve_transformers, read round 10) with transformers 5.17.0, the newest
    # when its wheel was built (models/helium/modeling_helium.py exports HeliumForCausalLM there as well); at
    # 0.27.1, whose fallback was not read, the refusal stays
    assert any(
        "transformers 5.19.0 has the class" in str(w) for w in _plan(config, version="0.32.0").warnings
    )
    assert any(
        "transformers 5.17.0 has the class" in str(w) for w in _plan(config, version="0.30.0").warnings
    )
    assert any(
        "transformers 5.17.0 has the class" in str(w) for w in _plan(config, version="0.31.0").warnings
    )  # 0.31.x planned with 0.30.0's rules; 0.31.0 requires transformers <5.18.0: the same 5.17.0
    with pytest.raises(ConfigError):
        _plan(config, version="0.27.1")
    # remote code (auto_map) goes the same way at 0.33.0; a name nothing knows does not
    remote = {
        **config,
        "architectures": ["NoSuchModelForCausalLM"],
        "auto_map": {"AutoModelForCausalLM": "m.M"},
    }
    assert any("auto_map" in str(w) for w in _plan(remote).warnings)
    with pytest.raises(ConfigError):
        _plan({**config, "architectures": ["NoSuchModelForCausalLM"]})
