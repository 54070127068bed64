"""Data-parallel expert-parallel MoE physics: the exchange, idle ranks, the prompt chunks' exchange,
and a device's FLOPs factor apart from the rest of its step."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.perf.physics import (
    Coefficients,
    host_seconds,
    host_step_seconds,
    on_busy_ranks,
    slower_device,
    step_physics,
)
from app.core.perf.predict import fit_for, host_fit, v0_host_fit
from app.core.specs import ServeConfig
from app.core.versions import rules_for
from tests.perf_steps import step_both_ways

MAVERICK = "meta-llama/Llama-4-Maverick-17B-128E-Instruct"


@pytest.fixture(scope="module")
def maverick_dp8() -> tuple:
    """Llama-4-Maverick at TP 1 x DP 8 with expert parallel on MI355X (moreh-dev's layout, vLLM 0.10.1)."""
    model, device = find_model(MAVERICK), find_device("amd-mi355x-288gb")
    serve = ServeConfig(
        tensor_parallel_size=1, data_parallel_size=8, enable_expert_parallel=True, max_model_len=8192
    )
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.10.1")
    return model, step_physics(estimate=est, model=model, device=device, serve=serve)


def test_the_dp_exchange_bytes(maverick_dp8: tuple) -> None:
    # dispatch + combine on each MoE layer (24 of Maverick's 48: interleave_moe_layer_step 2), 5,120
    # bf16 values a token, to the other 7 ranks: 2 x 24 x 10,240 B x 7 = 3,440,640 B
    _, physics = maverick_dp8
    assert physics.exchange_bytes_per_token == 2 * 24 * 5120 * 2 * 7
    assert physics.collectives_per_step == 2 * 24  # TP 1: no all-reduce, the two all-to-alls a MoE layer


def test_one_busy_rank_spreads_its_experts_over_every_device(maverick_dp8: tuple) -> None:
    # top-1 of 128 experts on 24 layers: 2 x 24 x 3 x 5,120 x 8,192 = 6,039,797,760 FLOPs a token,
    # which with all 8 ranks busy each device spends on the 8 ranks' tokens for its 16 experts. One
    # client keeps one rank busy: its token's experts run 1/8 on each device, 754,974,720 FLOPs a device
    _, physics = maverick_dp8
    assert physics.expert_flops_per_token == pytest.approx(6_039_797_760)
    one = on_busy_ranks(physics, busy=1)
    assert one.expert_flops_per_token == pytest.approx(754_974_720)
    assert (one.moe_tokens_scale, one.data_parallel_size) == (1, 1)
    assert one.exchange_bytes_per_token == physics.exchange_bytes_per_token  # it still sends to all 7
    four = on_busy_ranks(physics, busy=4)
    assert four.expert_flops_per_token == pytest.approx(6_039_797_760 / 2)
    assert on_busy_ranks(physics, busy=8) is physics


def test_a_prompt_chunks_exchange_moves_at_the_bulk_link_rate(maverick_dp8: tuple) -> None:
    # decode tokens' exchange at exchange_efficiency (few tokens a message, padded across the ranks); a
    # 4,096-token chunk's 4,096 x 3,440,640 B = 14.1 GB at the link efficiency of the TP all-reduces
    _, physics = maverick_dp8
    coefficients = fit_for(family="hopper", vllm_version="0.10.1")[1].coefficients()
    link = physics.link_bytes_per_s
    prefill, prefill_s = step_both_ways(
        physics=physics,
        coefficients=coefficients,
        decode_tokens=0,
        prefill_tokens=4096,
        decode_context_tokens=0,
        prefill_context_tokens=2048,
    )
    assert prefill.exchange_seconds == 0.0
    assert prefill.wire_seconds == pytest.approx(4096 * 3_440_640 / link)
    decode, decode_s = step_both_ways(
        physics=physics, coefficients=coefficients, decode_tokens=16, prefill_tokens=0
    )
    assert decode.exchange_seconds == pytest.approx(16 * 3_440_640 / link)
    assert decode.wire_seconds == 0.0
    # the simulation's rates price both the same way
    assert (prefill_s, decode_s) == (
        pytest.approx(prefill.seconds, rel=1e-12),
        pytest.approx(decode.seconds, rel=1e-12),
    )


def test_rates_give_the_step_model_seconds_with_the_dp_exchange(maverick_dp8: tuple) -> None:
    # the simulation's folded rates and step_seconds are one physics (perf_steps: a mixed step of 40
    # decodes and a 2,000-token chunk), the DP exchange included
    _, physics = maverick_dp8
    coefficients = fit_for(family="hopper", vllm_version="0.10.1")[1].coefficients()
    cost, seconds = step_both_ways(physics=physics, coefficients=coefficients)
    assert cost.exchange_seconds > 0
    assert seconds == pytest.approx(cost.seconds, rel=1e-12)


def test_a_devices_flops_take_their_own_factor() -> None:
    # factor 2 for bytes, floors and wire; 1.25 for the GEMMs: Hopper's bandwidth efficiency 1.0 becomes
    # 0.5 and its compute efficiency 1.0 becomes 0.8 (an MI300X's 1,307 TFLOPS run at 1,046)
    base = Coefficients(1.0, 1.0, 0.3, 1e-6, 30e-6, 34e-6, 26e-6, 0.46, 7e-6, 0.058, 0.08, 0.03)
    split = slower_device(base, factor=2.0, compute_factor=1.25)
    assert (split.bandwidth_efficiency, split.compute_efficiency) == (0.5, 0.8)
    assert split.moe_compute_efficiency == pytest.approx(0.3 / 1.25)
    assert split.layer_overhead_s == pytest.approx(60e-6)
    assert split.link_efficiency == pytest.approx(0.23)
    same = slower_device(base, factor=2.0)
    assert same.compute_efficiency == 0.5  # no compute factor: the one factor for everything
    assert slower_device(base, factor=1.0, compute_factor=1.0) is base


def test_a_v0_release_takes_the_v0_engines_host_work() -> None:
    # vLLM 0.6.3 runs the V0 engine (versions.py): its host work per step and per request is the V0 pair
    # bench/perf_loso.py fitted on the V0 runs on CUDA devices (dstackai, the T4 post, vllm#9722), not V1's
    v0, v1 = v0_host_fit(), host_fit()
    assert rules_for("0.6.3").engine == "v0" and rules_for("0.19.0").engine == "v1"
    old = fit_for(family="hopper", vllm_version="0.6.3")[1].coefficients()
    new = fit_for(family="hopper", vllm_version="0.19.0")[1].coefficients()
    assert (old.host_step_s, old.host_request_s) == (v0["host_step_s"], v0["host_request_s"])
    assert (new.host_step_s, new.host_request_s) == (v1["host_step_s"], v1["host_request_s"])
    assert old.host_step_s > new.host_step_s
    assert old.eager_layer_s == new.eager_layer_s  # the rest of the host fit is shared


def test_the_v0_host_step_grows_with_the_tp_group_it_broadcasts_to() -> None:
    # V0's driver broadcasts each step's model input to the other TP ranks (vLLM 0.6.3 worker_base.py,
    # broadcast_tensor_dict; nothing at TP 1): the per-step host work is host_step_s plus host_rank_step_s for
    # every rank beyond the first. Worked by hand with 5 ms + 2 ms a rank and 0.1 ms a request, 16 requests:
    # TP 1: 5 + 1.6 = 6.6 ms; TP 8: 5 + 14 + 1.6 = 20.6 ms
    base = fit_for(family="hopper", vllm_version="0.19.0")[1].coefficients()
    c = replace(base, host_step_s=5e-3, host_rank_step_s=2e-3, host_request_s=100e-6)
    assert host_seconds(c, requests=16, tensor_parallel_size=1) == pytest.approx(6.6e-3)
    assert host_seconds(c, requests=16, tensor_parallel_size=8) == pytest.approx(20.6e-3)
    assert host_step_seconds(c, tensor_parallel_size=4) == pytest.approx(11e-3)
    # V1's fit has no per-rank part: its host work is the same at every TP
    assert host_seconds(base, requests=16, tensor_parallel_size=8) == host_seconds(
        base, requests=16, tensor_parallel_size=1
    )
    # a V0 release's coefficients carry the V0 fit's per-rank part (0 where the fit has none)
    old = fit_for(family="hopper", vllm_version="0.6.3")[1].coefficients()
    assert old.host_rank_step_s == v0_host_fit().get("host_rank_step_s", 0.0)
