"""app.core.estimate: one call from (model, device, flags, release) to what vLLM would print.

Each expected value is worked by hand in the comment or read from vLLM's source (cited).
"""

from __future__ import annotations

import pytest

from app.core import kv as K
from app.core.catalog import find_device, find_model
from app.core.errors import InvalidServeConfigError
from app.core.estimate import estimate, validate_devices
from app.core.specs import ServeConfig
from app.core.versions import rules_for
from tests.specs_factory import H100 as H100_LIKE
from tests.specs_factory import dense, gpt_oss_like, layout

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


# moved from test_kv.py: estimate() end to end (the error texts, the dtype, the capacity curve)


def test_dtype_float32_doubles_auto_kv() -> None:
    # `--dtype float32` with `--kv-cache-dtype auto`: 4-byte KV -> 2 x 32 x 8 x 128 x 4 = 262,144 B/token
    est = estimate(
        model=dense(),
        device=H100_LIKE,
        serve=ServeConfig(max_model_len=4096, dtype="float32"),
        vllm_version="0.33.0",
    )
    assert est.kv_bytes_per_token == 262_144
    assert est.kv_dtype_bytes_per_element == 4


def test_too_long_error_text_and_estimate_0_33() -> None:
    # A pool that cannot hold one 131,072-token request: the error names both sizes and vLLM's
    # binary-searched estimate, which must itself fit: needed(L*) <= available - one block (null block).
    est = estimate(
        model=dense(),
        device=H100_LIKE,
        serve=ServeConfig(max_model_len=131_072, gpu_memory_utilization=0.3),
        vllm_version="0.33.0",
    )
    assert not est.fits
    assert est.error is not None
    assert est.error.startswith(
        "To serve at least one request with the model's max seq len (131072), (16.0 GiB KV"
    )
    largest = est.estimated_max_model_len
    assert largest is not None and 0 < largest < 131_072
    check = est.kv_cache_bytes - est.bytes_per_block  # 0.30+: the null block is held back
    lay = layout(dense(), version="0.33.0")
    rules = rules_for("0.33.0")

    def needed(length: int) -> int:
        return K.needed_bytes(
            layout=lay, max_model_len=length, inflight_tokens=16_384, prefix_caching=True, rules=rules
        )

    assert needed(largest) <= check < needed(largest + 1)
    # full attention needs cdiv(L, 16) blocks of 2 MiB: the answer is a whole number of blocks of tokens
    assert largest % 16 == 0
    assert f"the estimated maximum model length is {largest}." in est.error


def test_v0_error_text_uses_blocks_times_block_size() -> None:
    est = estimate(
        model=dense(),
        device=H100_LIKE,
        serve=ServeConfig(max_model_len=131_072, gpu_memory_utilization=0.3),
        vllm_version="0.6.6",
    )
    assert est.error is not None
    tokens = est.num_gpu_blocks * 16
    assert est.error.startswith(
        f"The model's max seq len (131072) is larger than the maximum number of tokens that can be stored in KV "
        f"cache ({tokens})."
    )


def test_capacity_curve_equals_full_estimates() -> None:
    # the fast curve must give exactly what a full estimate at each length gives
    from app.core.estimate import capacity_curve

    for version in ("0.6.6", "0.19.0", "0.33.0"):
        serve = ServeConfig(max_model_len=8192, gpu_memory_utilization=0.5)
        for length, conc in capacity_curve(
            model=gpt_oss_like(), device=H100_LIKE, serve=serve, vllm_version=version, points=10
        ):
            full = estimate(
                model=gpt_oss_like(),
                device=H100_LIKE,
                serve=serve.model_copy(update={"max_model_len": length}),
                vllm_version=version,
            )
            assert conc == (full.max_concurrency if full.fits else 0.0), (version, length)
