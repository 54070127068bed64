"""auto-round checkpoints (quant_method "auto-round") as vLLM's INC method loads them (app/core/hf_config/
quant_autoround.py). The config is heldout_0_33t's dungnx3112/4PE_U250 (Llama-2-7B shape, auto_round:auto_gptq,
4 bit, group 128, sym, float16); SOURCES.md there."""

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
from app.core.specs import QuantMethod, ServeConfig

CONFIG = Path(__file__).resolve().parents[1] / "data/configs/heldout_0_33t/dungnx3112--4PE_U250_config.json"


def _config(**quant: Any) -> dict[str, Any]:
    config = json.loads(CONFIG.read_text(encoding="utf-8"))
    cfg = copy.deepcopy(config)
    cfg["quantization_config"].update(quant)
    return cfg


def test_auto_round_is_planned_as_vllms_inc_int4() -> None:
    # 0.33.0 INCConfig.override_quantization_method: "auto-round" -> "inc"; GPTQ packing, 4 bit, sym -> int4 g128
    spec = model_spec_from_hf_config(_config(), name="t", vllm_version="0.33.0")
    assert spec.quantization is not None
    assert (spec.quantization.method, spec.quantization.group_size) == (QuantMethod.INT4, 128)
    assert (spec.quantization.source_name, spec.quantization.zero_points) == ("inc", False)
    # Llama-2-7B: 32 x (4 x 4,096^2 + 3 x 4,096 x 11,008 + 2 x 4,096) + 2 x 32,000 x 4,096 + 4,096
    assert spec.params_total == 6_738_415_616


@pytest.mark.parametrize(("tp", "per_token"), [(8, 65_536), (2, 262_144)])
def test_auto_round_llama_is_served_at_tp8_and_tp2(tp: int, per_token: int) -> None:
    # fp16 cache: 32 layers x (32 // tp) heads x 2 x 128 x 2 B; TP 8's 1,376-wide down_proj shard: fp16 -> Exllama
    spec = model_spec_from_hf_config(_config(), name="t", vllm_version="0.33.0")
    est = estimate(
        model=spec,
        device=find_device("h100"),
        serve=ServeConfig(tensor_parallel_size=tp, max_model_len=4096),
        vllm_version="0.33.0",
    )
    assert est.kv_bytes_per_token == per_token
    assert est.groups[0].page_size_bytes == 16 * per_token // 32


def test_asymmetric_gptq_packing_is_refused_at_0_33_and_served_at_0_18() -> None:
    # 0.33.0 inc_wna16_linear.py _build_gptq_method raises for sym false; 0.18.0 inc.py fell back to GPTQConfig
    with pytest.raises(PlannerError) as err:
        model_spec_from_hf_config(_config(sym=False), name="t", vllm_version="0.33.0")
    assert err.value.field == "quantization_config.sym"
    spec = model_spec_from_hf_config(_config(sym=False), name="t", vllm_version="0.18.0")
    assert spec.quantization is not None and spec.quantization.zero_points


@pytest.mark.parametrize(
    ("quant", "field"),
    [
        ({"bits": 3}, "quantization_config.bits"),
        ({"packing_format": "auto_round:gguf"}, "quantization_config.packing_format"),
        ({"data_type": "nv_fp"}, "quantization_config.data_type"),
    ],
)
def test_formats_outside_the_int_sets_are_refused_naming_the_field(quant: dict[str, Any], field: str) -> None:
    with pytest.raises(PlannerError) as err:
        model_spec_from_hf_config(_config(**quant), name="t", vllm_version="0.33.0")
    assert err.value.field == field


def test_awq_packing_has_zero_points() -> None:
    spec = model_spec_from_hf_config(
        _config(packing_format="auto_round:auto_awq"), name="t", vllm_version="0.33.0"
    )
    assert spec.quantization is not None and spec.quantization.zero_points


def test_bf16_gptq_packing_with_a_split_group_is_refused_at_tp8() -> None:
    # the GPTQ packing is AutoGPTQLinearMethod (0.33.0 inc_wna16_linear.py), so the WNA16 kernel choice applies:
    # TP 8 down_proj shard 11,008 / 8 = 1,376 = 10 x 128 + 96; bf16 activations: Exllama needs fp16, Machete a
    # shard of 64s (1,376 % 64 = 32), Marlin whole groups -> "Failed to find a kernel" (quant_shards.py)
    config = _config()
    config["dtype"] = "bfloat16"
    spec = model_spec_from_hf_config(config, name="t", vllm_version="0.33.0")
    with pytest.raises(PlannerError) as err:
        estimate(
            model=spec,
            device=find_device("h100"),
            serve=ServeConfig(tensor_parallel_size=8, max_model_len=4096),
            vllm_version="0.33.0",
        )
    assert err.value.field == "tensor_parallel_size"


@pytest.mark.parametrize(("tp", "served"), [(8, False), (2, True)])
def test_awq_packing_with_a_split_group_is_refused(tp: int, served: bool) -> None:
    # 0.33.0 inc_wna16_linear.py _build_awq_method: AutoAWQMarlinLinearMethod whenever Marlin supports uint4 / g128,
    # no per-layer fallback; its create_weights picks a kernel with choose_mp_linear_kernel(zero_points=True).
    # TP 8: 1,376-wide shard, zero points: Marlin needs whole groups, Exllama symmetric weights, Machete 1,376 % 64
    # = 32 -> refused. TP 2: 5,504 = 43 x 128 -> Marlin.
    spec = model_spec_from_hf_config(
        _config(packing_format="auto_round:auto_awq"), name="t", vllm_version="0.33.0"
    )
    serve = ServeConfig(tensor_parallel_size=tp, max_model_len=4096)
    if served:
        est = estimate(model=spec, device=find_device("h100"), serve=serve, vllm_version="0.33.0")
        assert est.kv_bytes_per_token == 32 * (32 // tp) * 2 * 128 * 2
        return
    with pytest.raises(PlannerError) as err:
        estimate(model=spec, device=find_device("h100"), serve=serve, vllm_version="0.33.0")
    assert err.value.field == "tensor_parallel_size"
