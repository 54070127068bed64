"""The MXFP4 MoE backend and expert padding per release x SM (app/core/mxfp4_backends.py, versions_mxfp4.py),
read from the wheels' quantization/mxfp4.py get_mxfp4_backend (0.10.2-0.18.0) and fused_moe/oracle/mxfp4.py
(0.19.0 on); the table and the hand-worked bytes were committed first in bench/data/mxfp4-backends/EXPECTATIONS.md."""

from __future__ import annotations

import pytest

from app.core import budget as B
from app.core import catalog
from app.core.estimate.entry import estimate
from app.core.specs import GIB, ServeConfig
from app.core.versions import rules_for

RELEASES = (
    "0.10.2",
    "0.11.0",
    "0.12.0",
    "0.13.0",
    "0.17.0",
    "0.19.0",
    "0.22.1",
    "0.26.0",
    "0.30.0",
    "0.33.0",
)
MARLIN = ("marlin", 256, 128)
TRITON = ("triton", 1, 64)
TRTLLM_256 = ("flashinfer_trtllm", 256, 256)
TRTLLM_128 = ("flashinfer_trtllm", 256, 128)


def _padding(device: str, release: str, capability: str | None = None) -> tuple[str, int, int]:
    spec = catalog.find_device(device)
    if capability is not None:  # a device the catalog lacks (Jetson Thor, SM110)
        spec = spec.model_copy(update={"compute_capability": capability})
    return B.mxfp4_padding(device=spec, rows=rules_for(release).mxfp4_backends)


@pytest.mark.parametrize("device", ["rtx5090", "rtx-pro-6000", "gb10"])
@pytest.mark.parametrize("release", [*RELEASES, "0.34.0"])
def test_sm12x_is_marlin_at_every_release(device: str, release: str) -> None:
    # 0.10.2/0.11.0: no triton_kernels in the wheel -> Marlin; 0.12.0-0.30.0: Triton only on (9,0) <= cc < (11,0);
    # 0.32.0+: Triton admitted to < (13,0) but moved after BATCHED_MARLIN on family 120 (_get_priority_backends_for_
    # gpt_oss); FlashInfer CUTLASS's BF16-activation MXFP4 path needs cc 9.0, TRT-LLM family 100
    assert _padding(device, release) == MARLIN


@pytest.mark.parametrize(
    ("release", "expected"),
    [("0.10.2", MARLIN), ("0.11.0", MARLIN), ("0.12.0", TRITON), ("0.13.0", TRITON), ("0.33.0", TRITON)],
)
def test_h100_takes_triton_once_the_wheel_ships_triton_kernels(
    release: str, expected: tuple[str, int, int]
) -> None:
    assert _padding("h100", release) == expected


@pytest.mark.parametrize(
    ("release", "expected"),
    [
        ("0.11.0", TRTLLM_256),
        ("0.19.0", TRTLLM_256),
        ("0.26.0", TRTLLM_256),
        ("0.27.1", TRTLLM_128),
        ("0.33.0", TRTLLM_128),
    ],
)
def test_b200_trtllm_intermediate_multiple_drops_to_128_in_0_27(
    release: str, expected: tuple[str, int, int]
) -> None:
    # 0.26.0 mxfp4_round_up_hidden_size_and_intermediate_size: TRTLLM_BACKENDS -> 256 / 256; 0.27.1: 256 / 128
    assert _padding("b200", release) == expected


@pytest.mark.parametrize(
    ("release", "expected"),
    [("0.11.0", MARLIN), ("0.12.0", TRITON), ("0.13.0", TRTLLM_256), ("0.33.0", TRTLLM_128)],
)
def test_b300_sm103(release: str, expected: tuple[str, int, int]) -> None:
    # 0.11.0 / 0.12.0 ask FlashInfer for exactly is_device_capability(100); 0.13.0 for the family
    assert _padding("b300", release) == expected


@pytest.mark.parametrize(
    ("release", "expected"), [("0.30.0", MARLIN), ("0.32.0", TRITON), ("0.33.0", TRITON), ("0.34.0", MARLIN)]
)
def test_sm110_thor(release: str, expected: tuple[str, int, int]) -> None:
    # 0.32.0 widens Triton to < (13,0) and demotes only family 120; 0.34.0 demotes family 110 too
    assert _padding("b200", release, capability="11.0") == expected


@pytest.mark.parametrize("release", RELEASES)
def test_a100_is_marlin(release: str) -> None:
    assert _padding("a100", release) == MARLIN


# extra values = layers x experts x 3 x (round(H) x round(I/TP) - H x I/TP), x 17/32 B (4-bit + an e8m0 per 32);
# gpt-oss hidden = moe_intermediate = 2880. Marlin at TP 1: 3 x (3072 x 2944 - 2880 x 2880) = 2,248,704 an expert
#   20b (24 x 32): 1,727,004,672 values -> 917,471,232 B; 120b (36 x 128): 10,362,028,032 -> 5,504,827,392 B
# TRT-LLM 256/256 at TP 1: 3 x (3072 x 3072 - 2880 x 2880) = 3,428,352 -> 20b 1,398,767,616 B, 120b 8,392,605,696 B
# TP 2 (I = 1440): Marlin 3 x (3072 x 1536 - 2880 x 1440) = 1,714,176 -> 120b 4,196,302,848 B;
#   Triton (1440 -> 1472) 3 x 2880 x 32 = 276,480 -> 120b 676,823,040 B
@pytest.mark.parametrize(
    ("model", "device", "release", "tp", "expected"),
    [
        ("openai/gpt-oss-20b", "rtx5090", "0.33.0", 1, 917_471_232),
        ("openai/gpt-oss-20b", "gb10", "0.13.0", 1, 917_471_232),
        ("openai/gpt-oss-120b", "gb10", "0.19.0", 1, 5_504_827_392),
        ("openai/gpt-oss-120b", "rtx-pro-6000", "0.33.0", 1, 5_504_827_392),
        ("openai/gpt-oss-120b", "rtx-pro-6000", "0.17.0", 2, 4_196_302_848),
        ("openai/gpt-oss-20b", "b200", "0.26.0", 1, 1_398_767_616),
        ("openai/gpt-oss-120b", "b200", "0.19.0", 1, 8_392_605_696),
        ("openai/gpt-oss-20b", "b200", "0.30.0", 1, 917_471_232),
        ("openai/gpt-oss-120b", "h100", "0.33.0", 2, 676_823_040),
        ("openai/gpt-oss-120b", "h100", "0.33.0", 1, 0),
        ("openai/gpt-oss-20b", "a100", "0.13.0", 1, 917_471_232),
    ],
)
def test_padding_bytes_hand_worked(model: str, device: str, release: str, tp: int, expected: int) -> None:
    spec = catalog.find_model(model)
    got = B.mxfp4_expert_padding_bytes(
        model=spec,
        quant=spec.quantization,
        device=catalog.find_device(device),
        tensor_parallel_size=tp,
        num_layers=spec.num_layers,
        rows=rules_for(release).mxfp4_backends,
    )
    assert got == expected


def test_an_rtx_5090_loads_gpt_oss_with_marlin_s_padding_end_to_end() -> None:
    # same model and release, two devices: the weights differ by the padding alone (917,471,232 B, Marlin vs Triton)
    model = catalog.find_model("openai/gpt-oss-20b")
    serve = ServeConfig(max_model_len=8192)
    rtx = estimate(model=model, device=catalog.find_device("rtx5090"), serve=serve, vllm_version="0.33.0")
    h100 = estimate(model=model, device=catalog.find_device("h100"), serve=serve, vllm_version="0.33.0")
    assert rtx.weights_bytes - h100.weights_bytes == 917_471_232


def test_the_gb10_0_13_container_log_s_weights() -> None:
    # tests/data/logs/heldout-2026-12zc/nv_0_13_0_nv26_01_container_gpt_oss_20b_mxfp4_util_0_25_kv_12_94_282624_
    # graph_0_86.log: "[mxfp4.py:161] Using Marlin backend", "Model loading took 13.7193 GiB" (GB10, 0.13.0, TP 1).
    # The planner had 12.8162 GiB (Triton's padding, none for 2880); with Marlin's 13.6706 GiB (in-sample: the log
    # was opened before the rule was coded; the rule itself is the wheel's)
    model = catalog.find_model("openai/gpt-oss-20b")
    serve = ServeConfig(gpu_memory_utilization=0.25, max_model_len=8192)
    est = estimate(model=model, device=catalog.find_device("gb10"), serve=serve, vllm_version="0.13.0")
    assert abs(est.weights_bytes / GIB - 13.7193) < 0.05
