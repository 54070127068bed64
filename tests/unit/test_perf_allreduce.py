"""Which all-reduce vLLM runs for a TP message (app/core/perf/allreduce.py) and its wire bytes in a step."""

from __future__ import annotations

import pytest

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.perf.allreduce import MIB, NEVER, multimem_window
from app.core.perf.physics import allreduce_wire_share, step_physics, step_seconds
from app.core.perf.predict import fit_for
from app.core.perf.rates import rates_of, stage_seconds
from app.core.specs import ServeConfig

QWEN3_32B = "Qwen/Qwen3-32B"


def test_the_windows_read_from_the_wheels() -> None:
    # vLLM 0.14.0 distributed/device_communicators/all_reduce_utils.py: H100 ("9.0") at 8 ranks, custom
    # all-reduce below 256 KiB, symmetric memory below 64 MiB, and symm_mem.py multimem for 4 / 6 / 8 ranks
    w = multimem_window(compute_capability="9.0", tensor_parallel_size=8, vllm_version="0.14.0")
    assert (w.min_bytes, w.max_bytes) == (262_144, 67_108_864)
    assert w.applies(1_024_000) and not w.applies(262_143) and not w.applies(83_886_080)
    # at 4 ranks on H100 both limits are 32 MiB: the custom all-reduce takes every message symm-mem would
    assert multimem_window(compute_capability="9.0", tensor_parallel_size=4, vllm_version="0.33.0") == NEVER
    # B200 ("10.0"): multimem only at 6 / 8 ranks, between 1 MiB and 128 MiB
    b200 = multimem_window(compute_capability="10.0", tensor_parallel_size=8, vllm_version="0.19.0")
    assert (b200.min_bytes, b200.max_bytes) == (MIB, 128 * MIB)
    assert multimem_window(compute_capability="10.0", tensor_parallel_size=4, vllm_version="0.19.0") == NEVER
    # before 0.11.0 (not read) and on capabilities the tables lack (A100 "8.0"): the ring as before
    assert multimem_window(compute_capability="9.0", tensor_parallel_size=8, vllm_version="0.10.1") == NEVER
    assert multimem_window(compute_capability="8.0", tensor_parallel_size=8, vllm_version="0.14.0") == NEVER


@pytest.fixture(scope="module")
def qwen_tp8() -> tuple:
    """Qwen3-32B bf16 at TP 8 on H100 SXM, vLLM 0.14.0 (Scicom's layout, bench/data/perf/sources-r8)."""
    model, device = find_model(QWEN3_32B), find_device("nvidia-h100-sxm-80gb")
    serve = ServeConfig(tensor_parallel_size=8, max_model_len=16384)
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.14.0")
    return step_physics(estimate=est, model=model, device=device, serve=serve), est


def test_a_decode_steps_all_reduce_moves_half_the_ring_bytes(qwen_tp8: tuple) -> None:
    physics, _ = qwen_tp8
    # one token's hidden state: 5,120 x 2 B = 10,240 B; 100 decode tokens: 1,024,000 B, in the window
    assert physics.allreduce_token_bytes == 10_240
    assert allreduce_wire_share(physics, tokens=100) == 0.5
    # 25 tokens: 256,000 B < 256 KiB, the custom all-reduce (ring bytes as fitted)
    assert allreduce_wire_share(physics, tokens=25) == 1.0
    # an 8,192-token chunk: 83,886,080 B >= 64 MiB, NCCL's ring
    assert allreduce_wire_share(physics, tokens=8192) == 1.0
    # ring bytes a token: 2 all-reduces x 64 layers x 10,240 B x 2 x 7 / 8 = 2,293,760 B; 100 tokens at
    # half of that over one direction of NVLink 4 (900 / 2 = 450 GB/s): 114,688,000 B / 450e9 = 254.86 us
    assert physics.collective_bytes_per_token == pytest.approx(2_293_760)
    coefficients = fit_for(family="hopper", vllm_version="0.14.0")[1].bench_coefficients()
    cost = step_seconds(
        physics=physics,
        coefficients=coefficients,
        decode_tokens=100,
        prefill_tokens=0,
        decode_context_tokens=1000,
        prefill_context_tokens=0,
    )
    assert cost.wire_seconds == pytest.approx(114_688_000 / 450e9, rel=1e-9)


def test_pcie_and_cross_host_groups_keep_the_ring() -> None:
    model = find_model(QWEN3_32B)
    for device_id, tp in (("nvidia-h100-pcie-80gb", 4), ("nvidia-h100-sxm-80gb", 16)):
        device = find_device(device_id)
        serve = ServeConfig(tensor_parallel_size=tp, max_model_len=8192)
        est = estimate(model=model, device=device, serve=serve, vllm_version="0.14.0")
        physics = step_physics(estimate=est, model=model, device=device, serve=serve)
        assert physics.multimem == NEVER, device_id


def test_the_simulations_rates_give_the_same_seconds_inside_and_outside_the_window(qwen_tp8: tuple) -> None:
    physics, _ = qwen_tp8
    coefficients = fit_for(family="hopper", vllm_version="0.14.0")[1].bench_coefficients()
    rates = rates_of(physics=physics, coefficients=coefficients)
    for decode, prefill in ((100, 0), (20, 0), (0, 8192), (50, 2000)):
        by_rates = stage_seconds(
            rates,
            decode_tokens=decode,
            decode_context_sum=decode * 1000.0,
            prefill_tokens=prefill,
            prefill_context_sum=prefill * prefill / 2,
        )
        cost = step_seconds(
            physics=physics,
            coefficients=coefficients,
            decode_tokens=decode,
            prefill_tokens=prefill,
            decode_context_tokens=1000,
            prefill_context_tokens=prefill / 2,
        )
        assert by_rates == pytest.approx(cost.seconds, rel=1e-12), (decode, prefill)
