"""app.core.estimate: one call from (model, device, flags, release) to what vLLM would print.

Each expected value is worked by hand in the comment or read from vLLM's source (cited).
"""

from __future__ import annotations

import pytest

from app.core.catalog import find_device, find_model
from app.core.errors import InvalidServeConfigError
from app.core.estimate import estimate, validate_devices
from app.core.specs import ServeConfig

H100 = "nvidia-h100-sxm-80gb"
LLAMA_70B = "meta-llama/Llama-3.1-70B"


def test_fewer_devices_than_tp_times_pp_is_vllms_refusal() -> None:
    # TP 8 on 4 devices: world size 8 > 4 GPUs, vLLM's config/parallel.py (0.19.0–0.33.0) raises
    # "World size (8) is larger than the number of available GPUs (4) in this node."
    serve = ServeConfig(tensor_parallel_size=8)
    with pytest.raises(InvalidServeConfigError) as refused:
        estimate(model=find_model(LLAMA_70B), device=find_device(H100), serve=serve, devices=4)
    assert refused.value.field == "devices"
    assert "World size (8) is larger than the number of available GPUs (4) in this node" in str(
        refused.value.message
    )
    # TP 4 × PP 2 = 8 ranks on 6 devices: refused too; on 8 it starts (TP 4 holds 70B's 141 GB)
    with pytest.raises(InvalidServeConfigError, match=r"World size \(8\)"):
        validate_devices(serve=ServeConfig(tensor_parallel_size=4, pipeline_parallel_size=2), devices=6)
    validate_devices(serve=ServeConfig(tensor_parallel_size=4, pipeline_parallel_size=2), devices=8)
    validate_devices(serve=serve, devices=None)  # not given: one replica's worth
    est = estimate(model=find_model(LLAMA_70B), device=find_device(H100), serve=serve, devices=8)
    assert est.verdict == "fits"
