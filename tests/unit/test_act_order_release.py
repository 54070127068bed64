"""Group activation ordering by release: served until 0.29.0, refused from 0.30.0 in vLLM's words.

0.30.0 (and 0.33.0) model_executor/layers/quantization/utils/gptq_utils.py normalize_and_validate_gptq_desc_act,
run by auto_gptq.py AutoGPTQConfig.__init__: desc_act=True with a group size other than -1 raises "GPTQ group
activation ordering (desc_act=True) is no longer supported. ..."; a `dynamic` rule (not a "-:" skip) whose desc_act
(default: the config's) and group_size (default: the config's) give the same raises too. compressed_tensors.py
_quantization_scheme_map_from_config raises "Compressed-tensors group/dynamic activation ordering (actorder='group')
is no longer supported. ..." for a weights actorder of group or dynamic (compressed-tensors 0.17.0, 0.33.0's pin,
reads true as group). 0.29.0's wheel has neither check. The planner planned both at every release before.

Configs: tests/data/configs/heldout_0_33q/sgl-project--ome-quant-gptq-llama-2-7b_config.json (GPTQ group 128,
desc_act false) and tests/data/configs/llama-3.1-8b-instruct-w4a16.config.json (compressed-tensors W4A16 group 128),
each with the ordering set here. Worked by hand for the served plans at TP 2: Llama-2-7B 32 KV heads / 2 x 2 x 128 x
2 B x 32 layers = 262,144 B a token; Llama-3.1-8B 8 / 2 x 2 x 128 x 2 B x 32 = 65,536.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.errors import PlannerError
from app.core.hf_config import model_spec_from_hf_config
from tests.config_plans import kv_bytes_per_token

DATA = Path(__file__).resolve().parents[1] / "data/configs"
GPTQ = DATA / "heldout_0_33q/sgl-project--ome-quant-gptq-llama-2-7b_config.json"
W4A16 = DATA / "llama-3.1-8b-instruct-w4a16.config.json"


def _gptq(**quant: Any) -> dict[str, Any]:
    config = json.loads(GPTQ.read_text(encoding="utf-8"))
    config["quantization_config"] |= quant
    return config


def _w4a16(actorder: Any) -> dict[str, Any]:
    config = json.loads(W4A16.read_text(encoding="utf-8"))
    for group in config["quantization_config"]["config_groups"].values():
        group["weights"]["actorder"] = actorder
    return config


def _kv_bytes(config: dict[str, Any], version: str) -> int:
    return kv_bytes_per_token(config, version, tp=2, max_model_len=4096)


def _refusal(config: dict[str, Any], version: str) -> PlannerError:
    with pytest.raises(PlannerError) as err:
        model_spec_from_hf_config(config, name="m", vllm_version=version)
    return err.value


def test_gptq_desc_act_with_groups_refused_from_0_30() -> None:
    err = _refusal(_gptq(desc_act=True), "0.30.0")
    assert err.field == "quantization_config.desc_act"
    assert "GPTQ group activation ordering (desc_act=True) is no longer supported" in str(err)
    assert _kv_bytes(_gptq(desc_act=True), "0.29.0") == 262_144


def test_gptq_desc_act_with_one_group_a_channel_is_a_no_op() -> None:
    assert _kv_bytes(_gptq(desc_act=True, group_size=-1), "0.33.0") == 262_144


def test_a_dynamic_rule_that_turns_it_on_is_refused() -> None:
    dynamic = {r"+:.*\.mlp\..*": {"desc_act": True}, r"-:.*\.lm_head": {"desc_act": True}}
    assert "desc_act=True" in str(_refusal(_gptq(dynamic=dynamic), "0.33.0"))
    # a "-:" rule skips the module: nothing enabled
    assert _kv_bytes(_gptq(dynamic={r"-:.*\.mlp\..*": {"desc_act": True}}), "0.33.0") == 262_144


@pytest.mark.parametrize("actorder", ["group", "Dynamic", True])
def test_compressed_tensors_group_actorder_refused_from_0_30(actorder: Any) -> None:
    err = _refusal(_w4a16(actorder), "0.33.0")
    assert err.field == "quantization_config.config_groups"
    assert "(actorder='" in str(err) and "is no longer supported" in str(err)
    assert _kv_bytes(_w4a16(actorder), "0.29.0") == 65_536


@pytest.mark.parametrize("actorder", ["weight", "static", None, False])
def test_compressed_tensors_weight_actorder_is_served(actorder: Any) -> None:
    assert _kv_bytes(_w4a16(actorder), "0.33.0") == 65_536
