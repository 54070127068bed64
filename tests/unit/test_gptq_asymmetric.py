"""Asymmetric GPTQ (`sym: false`, zero points) by release.

0.22.0+ (read in 0.22.0, 0.26.0, 0.30.0 and 0.33.0): quantization/auto_gptq.py AutoGPTQConfig, the one class behind
"gptq" / "gptq_marlin" / "auto_gptq" (quantization/__init__.py), raises in __init__ unless (bits, sym) is in TYPE_MAP
{(4, True): uint4b8, (8, True): uint8b128}: ValueError "Unsupported quantization config: bits=4, sym=False". No
kernel choice is reached. 0.21.0 (and 0.19.0, 0.20.2): gptq_marlin.py is_gptq_marlin_compatible turns it down (the
same TYPE_MAP), so the checkpoint's own "gptq" (gptq.py GPTQConfig, no sym check, qzeros read by ExLlama) serves it,
and GPTQLinearMethod.create_weights raises "The input size is not aligned with the quantized weight shape ..." when a
rank's input shard is not whole groups. Before this rule the planner planned `sym: false` at every release.

Config: tests/data/configs/heldout_0_33q/sgl-project--ome-quant-gptq-llama-2-7b_config.json (Llama-2-7B GPTQ, 4 bit,
group 128; SOURCES.md there) with sym set to false. Worked by hand: 32 KV heads, head 128, 32 layers; at TP 2,
16 a rank x 2 (K, V) x 128 x 2 B = 8,192 B a layer, x 32 = 262,144 B a token; at TP 8 down_proj's 11,008 inputs
give 1,376 a rank = 10 x 128 + 96 (not whole groups).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.errors import PlannerError
from app.core.hf_config import model_spec_from_hf_config
from app.core.versions import rules_for
from tests.config_plans import kv_bytes_per_token

GPTQ = (
    Path(__file__).resolve().parents[1]
    / "data/configs/heldout_0_33q/sgl-project--ome-quant-gptq-llama-2-7b_config.json"
)


def _config(*, sym: bool) -> dict[str, Any]:
    config = json.loads(GPTQ.read_text(encoding="utf-8"))
    config["quantization_config"]["sym"] = sym
    return config


def _kv_bytes(config: dict[str, Any], version: str, tp: int) -> int:
    return kv_bytes_per_token(config, version, tp=tp, max_model_len=4096)


@pytest.mark.parametrize("version", ["0.22.0", "0.33.0"])
def test_refused_with_vllms_message_from_0_22(version: str) -> None:
    with pytest.raises(PlannerError) as err:
        model_spec_from_hf_config(_config(sym=False), name="gptq", vllm_version=version)
    assert err.value.field == "quantization_config.sym"
    assert "Unsupported quantization config: bits=4, sym=False" in str(err.value)


def test_served_with_zero_points_at_0_21() -> None:
    spec = model_spec_from_hf_config(_config(sym=False), name="gptq", vllm_version="0.21.0")
    assert spec.quantization is not None and spec.quantization.zero_points
    assert _kv_bytes(_config(sym=False), "0.21.0", 2) == 262_144


def test_a_split_group_is_refused_at_0_21() -> None:
    with pytest.raises(PlannerError) as err:
        _kv_bytes(_config(sym=False), "0.21.0", 8)
    assert err.value.field == "tensor_parallel_size"
    assert "1,376 of down_proj's 11,008 inputs" in str(err.value) and "GPTQ group size 128" in str(err.value)


def test_symmetric_gptq_is_not_this_rule() -> None:
    # sym true at 0.33.0 TP 2 is served (AutoGPTQConfig uint4b8); 32 KV heads / 2 as above
    spec = model_spec_from_hf_config(_config(sym=True), name="gptq", vllm_version="0.33.0")
    assert spec.quantization is not None and not spec.quantization.zero_points
    assert _kv_bytes(_config(sym=True), "0.33.0", 2) == 262_144


@pytest.mark.parametrize(
    ("version", "symmetric_only"), [("0.21.0", False), ("0.22.0", True), ("0.33.0", True)]
)
def test_the_rule_is_the_release_s(version: str, symmetric_only: bool) -> None:
    assert rules_for(version).gptq_symmetric_only is symmetric_only


@pytest.mark.parametrize(
    ("version", "key"), [("0.33.0", "sym"), ("0.33.0", "desc_act"), ("0.21.0", "desc_act")]
)
def test_a_key_from_config_requires_is_refused_in_vllms_words(version: str, key: str) -> None:
    # base_config.py get_from_keys: AutoGPTQConfig.from_config (0.22.0+) reads bits, group_size, desc_act and sym;
    # gptq.py GPTQConfig.from_config (0.21.0) bits, group_size and desc_act
    config = _config(sym=True)
    del config["quantization_config"][key]
    with pytest.raises(PlannerError) as err:
        model_spec_from_hf_config(config, name="gptq", vllm_version=version)
    assert err.value.field == f"quantization_config.{key}"
    assert f"Cannot find any of ['{key}'] in the model's quantization config." in str(err.value)


def test_sym_is_optional_before_0_22() -> None:
    # 0.21.0 GPTQConfig has no sym key; gptq_marlin's is_gptq_marlin_compatible returns False for sym None
    config = _config(sym=True)
    del config["quantization_config"]["sym"]
    assert _kv_bytes(config, "0.21.0", 2) == 262_144
