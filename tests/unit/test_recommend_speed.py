"""The recommendation's speed effects (issue 14 item 6, issue 15 item 5) and the cheapest layout.

Every speed here must be app.core.perf.predict.performance() of that configuration, called directly
on the core's estimate: the recommender has no speed model of its own. The hand checks are physics:
a decode step reads every weight on the device once, so halving the weights per device (TP 2 -> 4)
saves their read time at the device's bandwidth.
"""

from __future__ import annotations

import pytest

from app.core import catalog
from app.core.estimate import estimate
from app.core.perf.cost import device_hours_per_million_output_tokens
from app.core.perf.predict import Performance, fit_for, performance
from app.core.perf.schedule import Workload
from app.core.recommend import Recommendation, Step, recommend
from app.core.recommend.speed import COST_TIE_FRACTION
from app.core.specs import DeviceSpec, ModelSpec, ServeConfig
from app.core.versions import DEFAULT_VERSION

LLAMA_70B = "meta-llama/Llama-3.1-70B"
H100 = "nvidia-h100-sxm-80gb"
# The Speed section's defaults (app/web/planner/params.py): 16 clients of 1,024 in / 1,024 out
WORKLOAD = Workload(input_tokens=1024, output_tokens=1024, concurrency=16)


@pytest.fixture(scope="module")
def llama() -> ModelSpec:
    return catalog.find_model(LLAMA_70B)


@pytest.fixture(scope="module")
def h100() -> DeviceSpec:
    return catalog.find_device(H100)


def direct(
    model: ModelSpec, device: DeviceSpec, serve: ServeConfig, workload: Workload = WORKLOAD
) -> Performance:
    """performance() on the core's estimate, exactly as the Speed section calls it."""
    est = estimate(model=model, device=device, serve=serve)
    return performance(
        estimate=est, model=model, device=device, serve=serve, workload=workload, with_curve=False
    )


def step(rec: Recommendation, key: str) -> Step:
    return next(s for s in rec.steps if s.key == key)


def run(
    model: ModelSpec, device: DeviceSpec, *, tp: int, length: int, n: int, workload: Workload = WORKLOAD
) -> Recommendation:
    """From TP ``tp`` at max_model_len = S* = ``length`` toward ``n`` sequences, with the speed workload."""
    return recommend(
        model=model,
        device=device,
        serve=ServeConfig(tensor_parallel_size=tp, max_model_len=length),
        vllm_version=None,
        target_max_model_len=length,
        target_concurrency=n,
        workload=workload,
    )


def test_tp_2_to_4_tpot_falls_by_the_weight_read_it_saves(llama: ModelSpec, h100: DeviceSpec) -> None:
    # Llama-3.1-70B, 64 sequences of 8,192 on H100 from TP 2: fp8 KV (2.27 sequences fit), then TP 4
    # meets it (109.25 sequences). Predicted at 16 clients of 1,024/1,024 (calibrated: the shared file's
    # 75 bf16 Qwen3-32B H100 runs are in the Hopper family's 0.12 band, issue 23): TP step TPOT
    # 30.4 -> 19.3 ms, 392 -> 823 output tokens/s.
    rec = run(llama, h100, tp=2, length=8192, n=64)
    tp = step(rec, "tensor_parallel_size")
    assert tp.applied and tp.serve.tensor_parallel_size == 4 and tp.serve.kv_cache_dtype == "fp8"
    speed = tp.speed
    assert speed is not None and speed.changed and speed.before is not None and speed.after is not None
    before_cfg = tp.serve.model_copy(update={"tensor_parallel_size": 2})
    b, a = direct(llama, h100, before_cfg), direct(llama, h100, tp.serve)
    assert speed.before.tpot_ms == b.tpot_ms and speed.after.tpot_ms == a.tpot_ms
    assert speed.before.ttft_ms == b.ttft_ms and speed.after.ttft_ms == a.ttft_ms
    assert speed.before.output_tokens_per_s == b.output_tokens_per_s
    assert speed.after.output_tokens_per_s == a.output_tokens_per_s
    assert speed.basis == "calibrated" == a.basis
    # direction: TP 4 decodes faster and serves more tokens per second
    assert speed.after.tpot_ms.expected < speed.before.tpot_ms.expected
    assert speed.after.output_tokens_per_s.expected > speed.before.output_tokens_per_s.expected
    # magnitude by hand: 70,553,706,496 params x 2 B = 141.1 GB of weights; per device 70.55 GB at
    # TP 2, 35.28 GB at TP 4. At H100's 3.35 TB/s one read takes 21.06 vs 10.53 ms: 10.53 ms saved
    # per step at the data sheet, 10.53 / eta_bw at the Hopper fit's bandwidth efficiency (0.69 since the
    # round-8 refit capped it at 0.9: 15.4 ms). The rest of the step (KV reads, per-layer floors, 160
    # all-reduces) barely moves.
    saved_ms = (70_553_706_496 * 2 / 2 - 70_553_706_496 * 2 / 4) / 3.35e12 * 1000
    assert saved_ms == pytest.approx(10.53, abs=0.01)
    saved_ms /= fit_for(family="hopper", vllm_version=DEFAULT_VERSION)[1].bandwidth_efficiency
    drop = speed.before.tpot_ms.expected - speed.after.tpot_ms.expected
    assert 0.8 * saved_ms < drop < 1.5 * saved_ms


def test_tp_2_to_8_issue_example(llama: ModelSpec, h100: DeviceSpec) -> None:
    # issue 14's example, TP 2 -> 8: 70B at 8,192 tokens with fp8 KV and a TP 2 start; N* = 200
    # needs TP 8 (TP 4 holds 109.25). TPOT falls and tokens/s rise; both equal performance().
    rec = run(llama, h100, tp=2, length=8192, n=200)
    tp = step(rec, "tensor_parallel_size")
    assert tp.applied and tp.serve.tensor_parallel_size == 8
    speed = tp.speed
    assert speed is not None and speed.before is not None and speed.after is not None
    before_cfg = tp.serve.model_copy(update={"tensor_parallel_size": 2})
    assert speed.before.tpot_ms == direct(llama, h100, before_cfg).tpot_ms
    assert speed.after.tpot_ms == direct(llama, h100, tp.serve).tpot_ms
    assert speed.after.tpot_ms.expected < speed.before.tpot_ms.expected
    assert speed.after.output_tokens_per_s.expected > speed.before.output_tokens_per_s.expected


def test_the_workload_is_the_one_given(llama: ModelSpec, h100: DeviceSpec) -> None:
    longer = Workload(input_tokens=4096, output_tokens=256, concurrency=64)
    rec = run(llama, h100, tp=2, length=8192, n=64, workload=longer)
    assert rec.speed_workload == longer
    tp = step(rec, "tensor_parallel_size")
    assert tp.speed is not None and tp.speed.after is not None
    assert tp.speed.after.ttft_ms == direct(llama, h100, tp.serve, longer).ttft_ms
    assert tp.speed.after.ttft_ms != direct(llama, h100, tp.serve).ttft_ms


def test_start_that_does_not_start_has_no_before(llama: ModelSpec, h100: DeviceSpec) -> None:
    # 32 x 32,768 from TP 2: 65.7 GiB of weights per device leave no KV pool at all, so the first
    # applied step (fp8 KV, still no room) has no speed on either side, and TP 8 has only an after.
    rec = run(llama, h100, tp=2, length=32768, n=32)
    kv = step(rec, "kv_cache_dtype")
    assert kv.speed is not None and kv.speed.before is None and kv.speed.after is None
    assert kv.speed.before_note == "does not start" and kv.speed.basis is None
    tp = step(rec, "tensor_parallel_size")
    assert tp.speed is not None and tp.speed.before is None and tp.speed.after is not None
    assert tp.speed.after.tpot_ms == direct(llama, h100, tp.serve).tpot_ms


def test_skipped_step_without_candidate_changes_nothing(llama: ModelSpec, h100: DeviceSpec) -> None:
    rec = run(llama, h100, tp=2, length=8192, n=64)
    util = step(rec, "gpu_memory_utilization")
    assert not util.applied
    assert util.speed is not None and not util.speed.changed
    assert util.speed.before == util.speed.after
    final = rec.final
    assert util.speed.before is not None and util.speed.before.tpot_ms == direct(llama, h100, final).tpot_ms


def test_offload_is_priced_as_pcie_traffic_and_says_it_is_extrapolated(h100: DeviceSpec) -> None:
    # Qwen2.5-72B, 256 x 32,768 at TP 8: offload is tried (16 GiB per device) and refused (it does not
    # reach the target). The offloaded weights cross PCIe every step (perf/physics.py: 16 GiB / 64e9 B/s
    # = 268 ms), so the step's "after" is far slower than "before", and extrapolated.
    qwen = catalog.find_model("Qwen/Qwen2.5-72B-Instruct")
    rec = run(qwen, h100, tp=8, length=32768, n=256)
    off = step(rec, "offload")
    assert not off.applied and off.speed is not None and off.speed.changed
    assert off.speed.before is not None and off.speed.after is not None
    assert off.speed.after.tpot_ms.expected - off.speed.before.tpot_ms.expected > 200
    assert off.speed.basis == "extrapolated"


def test_no_workload_no_speed(llama: ModelSpec, h100: DeviceSpec) -> None:
    rec = recommend(
        model=llama,
        device=h100,
        serve=ServeConfig(tensor_parallel_size=2, max_model_len=8192),
        vllm_version=None,
        target_max_model_len=8192,
        target_concurrency=64,
    )
    assert all(s.speed is None for s in rec.steps)
    assert rec.cheapest is None and rec.speed_workload is None


def test_workload_longer_than_the_length_is_said_not_raised(llama: ModelSpec, h100: DeviceSpec) -> None:
    too_long = Workload(input_tokens=8000, output_tokens=1024, concurrency=16)
    rec = run(llama, h100, tp=2, length=8192, n=64, workload=too_long)
    tp = step(rec, "tensor_parallel_size")
    assert tp.speed is not None and tp.speed.after is None and tp.speed.after_note is not None
    assert "exceed max_model_len (8,192)" in tp.speed.after_note
    assert rec.cheapest is None


# --- the cheapest layout meeting the target ---------------------------------------------------------------


def test_cheapest_recommended_tp4_fp8_against_tp8_bf16(llama: ModelSpec, h100: DeviceSpec) -> None:
    # Final TP 4 + fp8 KV; the trade (bf16 KV, the smallest larger TP that meets 64 x 8,192) is TP 8.
    rec = run(llama, h100, tp=2, length=8192, n=64)
    cheap = rec.cheapest
    assert cheap is not None and cheap.recommended_is_cheapest and cheap.serve == rec.final
    layouts = [(c.serve.tensor_parallel_size, c.serve.kv_cache_dtype, c.recommended) for c in cheap.layouts]
    assert layouts == [(4, "fp8", True), (8, "auto", False)]
    for c in cheap.layouts:
        tps = direct(llama, h100, c.serve).output_tokens_per_s.expected
        assert c.output_tokens_per_s == tps and c.devices == c.serve.tensor_parallel_size
        # devices x hours for a million output tokens: e.g. 4 x 1e6 / (823 tok/s x 3600 s) = 1.35
        assert c.device_hours_per_million_output_tokens == pytest.approx(c.devices * 1e6 / (tps * 3600))
    first, second = cheap.layouts
    assert first.device_hours_per_million_output_tokens < second.device_hours_per_million_output_tokens
    assert "the recommended one (TP 4, fp8 KV cache) is the cheapest to run" in cheap.sentence
    assert "for TP 8, bfloat16 KV cache" in cheap.sentence


def test_cheapest_is_an_alternative_when_the_pool_limits_the_recommended(
    llama: ModelSpec, h100: DeviceSpec
) -> None:
    # 1 x 8,192 from TP 1: TP 2 meets it and the prune pass drops fp8 KV. At 16 clients of 2,048
    # tokens both pools are KV-limited, but fp8 doubles the pool: 9,296 -> 18,608 KV tokens per
    # device = 581 -> 1,163 blocks of 16; less the null block, over 96 blocks per request on average
    # (1,024 in + 1,024 / 2 out = 1,536 tokens) that is 6 -> 12 requests running at once. Twice the
    # batch on the same two devices: about twice the tokens/s, so fp8 KV is the cheaper to run.
    rec = run(llama, h100, tp=1, length=8192, n=1)
    assert rec.final.tensor_parallel_size == 2 and rec.final.kv_cache_dtype == "auto"
    cheap = rec.cheapest
    assert cheap is not None and not cheap.recommended_is_cheapest
    assert cheap.serve == rec.final.model_copy(update={"kv_cache_dtype": "fp8"})
    assert [estimate(model=llama, device=h100, serve=c).kv_tokens for c in (rec.final, cheap.serve)] == [
        9_296,
        18_608,
    ]
    bf16, fp8 = direct(llama, h100, rec.final), direct(llama, h100, cheap.serve)
    assert bf16.kv_limited and fp8.kv_limited
    assert (bf16.running_requests, fp8.running_requests) == (580 // 96, 1162 // 96) == (6, 12)
    best, recommended = cheap.layouts
    assert recommended.recommended and recommended.serve == rec.final
    assert best.device_hours_per_million_output_tokens < recommended.device_hours_per_million_output_tokens
    assert cheap.sentence.startswith("Cheapest to run of 2 layouts that meet the target: TP 2, fp8 KV cache")
    assert "costs accuracy" in cheap.sentence


def test_a_near_tie_goes_to_the_recommended(llama: ModelSpec, h100: DeviceSpec) -> None:
    # 32 x 32,768 from TP 2: TP 8 with bf16 KV (after the prune pass) against TP 8 with fp8 KV (before
    # it): the same 8 devices, tokens/s within 2 %, so the recommended one is named, as a tie.
    rec = run(llama, h100, tp=2, length=32768, n=32)
    cheap = rec.cheapest
    assert cheap is not None and cheap.recommended_is_cheapest and cheap.serve == rec.final
    hours = [c.device_hours_per_million_output_tokens for c in cheap.layouts]
    assert min(hours) < hours[0] <= min(hours) * (1 + COST_TIE_FRACTION)
    assert "within 5% of the cheapest" in cheap.sentence


def test_nothing_to_compare_no_sentence(llama: ModelSpec, h100: DeviceSpec) -> None:
    # Already met at TP 4: no lever moved, so there is no other layout the table reached.
    rec = run(llama, h100, tp=4, length=8192, n=1)
    assert rec.meets_target and rec.cheapest is None


def test_device_hours_match_fleet_pricing() -> None:
    # 8 devices at 1,000 tokens/s: a million tokens take 1,000 s = 0.2778 h, x 8 = 2.222 device-hours
    assert device_hours_per_million_output_tokens(devices=8, output_tokens_per_s=1000.0) == pytest.approx(
        2.2222, abs=1e-4
    )
