"""An AWQ group must not straddle a tensor-parallel shard: vLLM cannot build the row-parallel layer otherwise.

Config: tests/data/configs/heldout_0_33q/sgl-project--ome-quant-awq-llama-2-7b_config.json (Llama-2-7B AWQ, 4 bit,
group 128; SOURCES.md there). 0.33.0 layers/quantization/auto_awq.py AutoAWQConfig.get_quant_method asks
utils/marlin_utils.py check_marlin_supports_layer(allow_tile_padding=True), which needs input_size_per_partition %
group_size == 0 (or a group as wide as the whole input); otherwise it falls back to AutoAWQLinearMethod, whose
create_weights (BaseAWQLinearMethod) raises "The input size is not aligned with the quantized weight shape. This can
be caused by too large tensor parallel size." 0.10.2 (awq_marlin.py falls back to awq.py AWQLinearMethod, which
raises the same) and 0.6.3 (awq.py raises; marlin_utils.verify_marlin_supports_shape raises for Marlin) agree.

Worked by hand: down_proj's input is intermediate_size 11,008; at TP 8 a rank holds 11,008 / 8 = 1,376, and
1,376 = 10 x 128 + 96, so a group straddles two ranks: refused. At TP 2, 5,504 = 43 x 128: served. o_proj's input
32 x 128 = 4,096 splits into 512 = 4 x 128 at TP 8. The blind score of heldout_0_33q missed this (the planner
planned TP 8). GPTQ at the same shape is served (ExllamaLinearKernel checks only the full input, 11,008 % 128 == 0),
so the rule is AWQ's alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.catalog import find_device
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.specs import ServeConfig

SET = Path(__file__).resolve().parents[1] / "data/configs/heldout_0_33q"
AWQ = SET / "sgl-project--ome-quant-awq-llama-2-7b_config.json"
GPTQ = SET / "sgl-project--ome-quant-gptq-llama-2-7b_config.json"


def _plan(path: Path, tp: int, *, group_size: int | None = None):
    config = json.loads(path.read_text(encoding="utf-8"))
    if group_size is not None:
        config["quantization_config"]["group_size"] = group_size
    spec = model_spec_from_hf_config(config, name=path.stem, vllm_version="0.33.0")
    return estimate(
        model=spec,
        device=find_device("h100"),
        serve=ServeConfig(tensor_parallel_size=tp, max_model_len=4096),
        vllm_version="0.33.0",
    )


def test_awq_group_straddling_the_tp_8_shard_is_refused() -> None:
    with pytest.raises(PlannerError) as err:
        _plan(AWQ, 8)
    assert err.value.field == "tensor_parallel_size"
    message = str(err.value)
    assert "1,376 of down_proj's 11,008 inputs" in message and "AWQ group size 128" in message


def test_awq_at_tp_2_is_served() -> None:
    # 5,504 = 43 x 128 a rank; 32 KV heads / 2 = 16 a rank x 2 (K, V) x 128 x 2 B = 8,192 B a layer, x 32 layers
    assert _plan(AWQ, 2).kv_bytes_per_token == 262_144


def test_awq_group_64_still_straddles_group_32_fits() -> None:
    # 1,376 = 21 x 64 + 32: still straddles; group 32: 1,376 = 43 x 32 fits, served (4 KV heads a rank: 65,536 B)
    with pytest.raises(PlannerError):
        _plan(AWQ, 8, group_size=64)
    assert _plan(AWQ, 8, group_size=32).kv_bytes_per_token == 65_536


def test_awq_per_channel_is_not_grouped() -> None:
    # group_size -1: one scale a whole input row (check_marlin_supports_layer: group_size == -1 passes)
    assert _plan(AWQ, 8, group_size=-1).kv_bytes_per_token == 65_536


def test_gptq_at_the_same_shard_is_served() -> None:
    assert _plan(GPTQ, 8).kv_bytes_per_token == 65_536
