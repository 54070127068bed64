"""Physics added for issue 23 round 3: the host's per-step work (in series without async scheduling,
overlapped with it), data-parallel MoE lockstep, tensor parallel across hosts, and the regime it names."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.core.catalog import find_device, find_model
from app.core.command import parse_serve_command
from app.core.estimate import estimate
from app.core.perf.bench import simulate_bench
from app.core.perf.bench_args import BenchArgs
from app.core.perf.physics import (
    INTER_NODE_BYTES_PER_S,
    async_scheduling,
    context_cv,
    lockstep_factor,
    slower_device,
    step_physics,
    with_host,
)
from app.core.perf.predict import device_compute_time_fit, device_time_fit, fit_for, performance
from app.core.perf.schedule import Workload
from app.core.serve_flags import render_flags
from app.core.specs import ServeConfig
from app.core.versions import rules_for

SMALL = "Qwen/Qwen3-0.6B"
A100 = "nvidia-a100-sxm4-80gb"
# one client, 8 prompts of 128 in / 128 out: tenstorrent's GPU reference runs (bench/data/perf/sources.jsonl)
ONE_CLIENT = BenchArgs(num_prompts=8, max_concurrency=1, random_input_len=128, random_output_len=128)


def test_with_host_adds_in_series_and_overlaps_under_async() -> None:
    # 1.0 ms of device work, 2.5 ms of host work: 3.5 ms in series, 2.5 ms overlapped (the host paces)
    assert with_host(device_s=1.0e-3, host_s=2.5e-3, overlapped=False) == pytest.approx(3.5e-3)
    assert with_host(device_s=1.0e-3, host_s=2.5e-3, overlapped=True) == pytest.approx(2.5e-3)
    assert with_host(device_s=4.0e-3, host_s=2.5e-3, overlapped=True) == pytest.approx(4.0e-3)


def test_async_scheduling_follows_the_release_and_pipeline_parallel() -> None:
    # 0.11.0 config/scheduler.py: async_scheduling: bool = False; 0.14.0: None -> on unless PP > 1
    assert async_scheduling(vllm_version="0.11.0", serve=ServeConfig()) is False
    assert async_scheduling(vllm_version="0.14.0", serve=ServeConfig()) is True
    assert async_scheduling(vllm_version="0.19.0", serve=ServeConfig(pipeline_parallel_size=2)) is False
    assert async_scheduling(vllm_version="0.6.3", serve=ServeConfig()) is False  # the V0 engine


@pytest.mark.parametrize(
    ("flag", "version", "overlapped"),
    [
        ("--async-scheduling", "0.11.0", True),  # 0.10.2+ has the flag; off by default before 0.14.0
        ("--no-async-scheduling", "0.19.0", False),  # on by default from 0.14.0
        ("", "0.11.0", False),
        ("", "0.19.0", True),
    ],
)
def test_async_scheduling_read_from_a_pasted_command(flag: str, version: str, overlapped: bool) -> None:
    parsed = parse_serve_command(f"vllm serve {SMALL} --max-model-len 512 {flag}", vllm_version=version)
    assert parsed.serve.async_scheduling == ({"": None, "--async-scheduling": True}.get(flag, False))
    model, device = find_model(SMALL), find_device(A100)
    est = estimate(model=model, device=device, serve=parsed.serve, vllm_version=version)
    assert (
        step_physics(estimate=est, model=model, device=device, serve=parsed.serve).host_overlapped
        is overlapped
    )
    # written back only where it differs from the release's default
    rendered = render_flags(parsed.serve, rules_for(version))
    assert ([flag] if flag else []) == [f for f in rendered if "async" in f]


def test_async_scheduling_stays_off_where_vllm_cannot_overlap() -> None:
    # PP > 1 and the V0 engine step the host in series whatever the flag says
    assert (
        async_scheduling(
            vllm_version="0.19.0", serve=ServeConfig(pipeline_parallel_size=2, async_scheduling=True)
        )
        is False
    )
    assert async_scheduling(vllm_version="0.6.3", serve=ServeConfig(async_scheduling=True)) is False


def test_slower_device_stretches_the_device_step_not_the_host() -> None:
    est, physics, coefficients = _small("0.11.0")
    none = replace(coefficients, host_step_s=0.0, host_request_s=0.0)
    host = replace(coefficients, host_step_s=2.0e-3, host_request_s=50e-6)
    base = simulate_bench(estimate=est, physics=physics, coefficients=none, args=ONE_CLIENT).values
    slow = simulate_bench(
        estimate=est, physics=physics, coefficients=slower_device(none, factor=2.0), args=ONE_CLIENT
    ).values
    # every device term twice as long: one request decoding alone has a TPOT twice the device's
    assert slow["mean_tpot_ms"] == pytest.approx(2 * base["mean_tpot_ms"], rel=1e-6)
    both = simulate_bench(
        estimate=est, physics=physics, coefficients=slower_device(host, factor=2.0), args=ONE_CLIENT
    ).values
    # the host's 2.05 ms a step (in series at 0.11.0) is CPU work: not doubled
    assert both["mean_tpot_ms"] - slow["mean_tpot_ms"] == pytest.approx(2.05, rel=1e-6)
    assert slower_device(coefficients, factor=1.0) is coefficients


def _small(version: str) -> tuple:
    model, device = find_model(SMALL), find_device(A100)
    serve = ServeConfig(max_model_len=512)
    est = estimate(model=model, device=device, serve=serve, vllm_version=version)
    physics = step_physics(estimate=est, model=model, device=device, serve=serve)
    coefficients = fit_for(family="hopper", vllm_version=version)[1].coefficients()
    return est, physics, coefficients


def test_one_client_pays_the_host_step_in_series_before_0_14() -> None:
    est, physics, coefficients = _small("0.11.0")
    assert physics.host_overlapped is False
    none = replace(coefficients, host_step_s=0.0, host_request_s=0.0)
    host = replace(coefficients, host_step_s=2.0e-3, host_request_s=50e-6)
    base = simulate_bench(estimate=est, physics=physics, coefficients=none, args=ONE_CLIENT).values
    slow = simulate_bench(estimate=est, physics=physics, coefficients=host, args=ONE_CLIENT).values
    # one request decoding alone: every decode step gains 2.0 ms + 1 x 0.05 ms = 2.05 ms
    assert slow["mean_tpot_ms"] - base["mean_tpot_ms"] == pytest.approx(2.05, rel=1e-6)


def test_async_scheduling_hides_the_host_behind_a_longer_device_step() -> None:
    est, physics, coefficients = _small("0.19.0")
    assert physics.host_overlapped is True
    none = replace(coefficients, host_step_s=0.0, host_request_s=0.0)
    base = simulate_bench(estimate=est, physics=physics, coefficients=none, args=ONE_CLIENT)
    device_ms = base.values["mean_tpot_ms"]
    # a host step shorter than the device's costs nothing; a longer one paces every decode step
    hidden = replace(coefficients, host_step_s=0.5 * device_ms / 1000, host_request_s=0.0)
    paced = replace(coefficients, host_step_s=2 * device_ms / 1000, host_request_s=0.0)
    assert simulate_bench(estimate=est, physics=physics, coefficients=hidden, args=ONE_CLIENT).values[
        "mean_tpot_ms"
    ] == pytest.approx(device_ms, rel=1e-9)
    host_bound = simulate_bench(estimate=est, physics=physics, coefficients=paced, args=ONE_CLIENT)
    assert host_bound.values["mean_tpot_ms"] == pytest.approx(2 * device_ms, rel=1e-6)
    assert host_bound.regime == "host" and base.regime != "host"


def test_lockstep_factor_by_hand() -> None:
    # 1,024 in / 1,024 out: one request's context is 1024 + U x 1024, sd 1024 / sqrt(12) = 295.6 around
    # 1536: cv 0.19245. Four ranks of 16 requests: Blom's z_4 = inv_cdf(3.625 / 4.25) = 1.04913, so the
    # slowest rank reads 1 + 1.04913 x 0.19245 / 4 = 1.05048 of the mean KV.
    cv = context_cv(input_tokens=1024, output_tokens=1024)
    assert cv == pytest.approx(0.19245, rel=1e-4)
    assert lockstep_factor(ranks=4, batch=16, context_cv=cv) == pytest.approx(1.05048, rel=1e-4)
    assert lockstep_factor(ranks=1, batch=16, context_cv=cv) == 1.0  # a dense model's ranks step alone


def test_dp_moe_steps_at_the_slowest_rank(monkeypatch: pytest.MonkeyPatch) -> None:
    model, device = find_model("Qwen/Qwen3-235B-A22B-FP8"), find_device("nvidia-h200-141gb")
    serve = ServeConfig(data_parallel_size=4, enable_expert_parallel=True, max_model_len=2304)
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.19.0")
    # 64 clients of 1,024 / 1,024 over 4 ranks: 16 decode per rank, so the KV read (and only it) is
    # stretched by at most the factor worked by hand above, 1.0505
    workload = Workload(input_tokens=1024, output_tokens=1024, concurrency=64)

    def tpot() -> float:
        return performance(
            estimate=est, model=model, device=device, serve=serve, workload=workload, with_curve=False
        ).tpot_ms.expected

    lockstep = tpot()
    monkeypatch.setattr("app.core.perf.schedule.lockstep_ranks", lambda physics: 1)
    alone = tpot()
    assert 1.0 < lockstep / alone < 1.0505


def test_tp_across_hosts_all_reduces_over_the_network() -> None:
    physics, perf = _seventy_b(device="nvidia-h100-sxm-80gb", tp=16)
    # 16 > the 8 H100s of a node: one 400 Gb/s NIC per GPU, 50 GB/s each way (not NVLink's 450)
    assert physics.link_bytes_per_s == INTER_NODE_BYTES_PER_S == 50 * 10**9
    assert perf.basis == "extrapolated"
    assert any("the hosts' network" in str(note) or "all-reduces over" in str(note) for note in perf.notes)


def test_enforce_eager_pays_each_layers_launch_in_every_step() -> None:
    model, device = find_model(SMALL), find_device(A100)
    version = "0.11.0"
    coefficients = replace(
        fit_for(family="hopper", vllm_version=version)[1].coefficients(),
        host_step_s=0.0,
        host_request_s=0.0,
        eager_layer_s=0.0,
    )
    with_launch = replace(coefficients, eager_layer_s=100e-6)
    tpot = {}
    for eager in (False, True):
        serve = ServeConfig(max_model_len=512, enforce_eager=eager)
        est = estimate(model=model, device=device, serve=serve, vllm_version=version)
        physics = step_physics(estimate=est, model=model, device=device, serve=serve)
        assert physics.eager is eager
        for name, coeffs in (("base", coefficients), ("launch", with_launch)):
            run = simulate_bench(estimate=est, physics=physics, coefficients=coeffs, args=ONE_CLIENT)
            tpot[(eager, name)] = run.values["mean_tpot_ms"]
    # Qwen3-0.6B has 28 decoder layers: 28 x 0.1 ms = 2.8 ms more a decode step, only when eager
    assert tpot[(True, "launch")] - tpot[(True, "base")] == pytest.approx(2.8, rel=1e-6)
    assert tpot[(False, "launch")] == pytest.approx(tpot[(False, "base")], rel=1e-12)


def test_a_devices_kernel_factor_stretches_its_device_terms_only() -> None:
    factors = device_time_fit()
    # fitted by bench/perf_loso.py on the MI300X runs of dstackai, sariekr, the recipes and wfwan
    mi300x = factors["amd-mi300x-192gb"]
    assert mi300x > 1.0
    plain = fit_for(family="hopper", vllm_version="0.19.0")[1].coefficients()
    on = fit_for(family="hopper", vllm_version="0.19.0", device="amd-mi300x-192gb")[1].coefficients()
    assert on.bandwidth_efficiency == pytest.approx(plain.bandwidth_efficiency / mi300x)
    assert on.layer_overhead_s == pytest.approx(plain.layer_overhead_s * mi300x)
    assert (on.host_step_s, on.ttft_overhead_s) == (plain.host_step_s, plain.ttft_overhead_s)  # CPU work
    assert (
        fit_for(family="hopper", vllm_version="0.19.0", device="nvidia-h100-sxm-80gb")[1].device_time_factor
        == 1.0
    )
    _physics, perf = _seventy_b(device="amd-mi300x-192gb", tp=2)
    assert any("kernels take" in str(note) for note in perf.notes)
    # its FLOPs apart (device_compute_time, physics+prefill+v0): the GEMMs' factor is not the decode one,
    # and the note names both
    compute = device_compute_time_fit()["amd-mi300x-192gb"]
    assert compute != mi300x
    assert on.compute_efficiency == pytest.approx(plain.compute_efficiency / compute)
    assert on.moe_compute_efficiency == pytest.approx(plain.moe_compute_efficiency / compute)
    assert any("matrix multiplications" in str(note) for note in perf.notes)


def _seventy_b(*, device: str, tp: int) -> tuple:
    """Llama-3.1-70B at this TP, 8 clients of 1,024 in / 256 out: its step physics and its speed answer."""
    model, dev = find_model("meta-llama/Llama-3.1-70B"), find_device(device)
    serve = ServeConfig(tensor_parallel_size=tp, max_model_len=4096)
    est = estimate(model=model, device=dev, serve=serve, vllm_version="0.19.0")
    workload = Workload(input_tokens=1024, output_tokens=256, concurrency=8)
    perf = performance(
        estimate=est, model=model, device=dev, serve=serve, workload=workload, with_curve=False
    )
    return step_physics(estimate=est, model=model, device=dev, serve=serve), perf
