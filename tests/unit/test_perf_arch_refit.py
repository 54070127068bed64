"""Round 10 (speedfit10): the step coefficients refit through the simulated benchmark, per CUDA
architecture (bench/perf_refit.py, bench/perf_loso.py's ``+arch``), stored in coefficients.json's
bench_arch_time and applied to the simulated `vllm bench serve` run only (the steady state keeps the
closed-form fit it was fitted with)."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.perf import predict
from app.core.perf.bench import simulate_bench
from app.core.perf.bench_args import BenchArgs
from app.core.perf.physics import slower_device, step_physics
from app.core.perf.predict import compare_run, cuda_arch, fit_for
from app.core.specs import ServeConfig
from bench import perf_refit as R

ARGS = BenchArgs(num_prompts=16, max_concurrency=4, random_input_len=512, random_output_len=64)


@pytest.mark.parametrize(
    ("device", "key"),
    [
        ("nvidia-h100-sxm-80gb", "cuda-sm90"),
        ("nvidia-h200-141gb", "cuda-sm90"),  # one architecture, one kernel stack: one factor
        ("nvidia-rtx-4090-24gb", "cuda-sm89"),
        ("nvidia-b200", "cuda-sm100"),
        ("nvidia-b300", "cuda-sm103"),
        ("nvidia-a100-sxm4-80gb", "cuda-sm80"),
        ("amd-mi300x-192gb", ""),  # outside CUDA: its own device_time factor, never an architecture's
    ],
)
def test_each_cuda_device_is_keyed_by_its_architecture(device: str, key: str) -> None:
    assert cuda_arch(find_device(device)) == key


def test_the_loso_keys_shared_file_systems_and_catalog_ids_alike() -> None:
    # the shared file names its systems h100_sxm, b200_sxm, ... (fit_perf.SYSTEMS); other sources by catalog id
    assert R.arch_key("h100_sxm") == R.arch_key("nvidia-h100-sxm-80gb") == "cuda-sm90"
    assert R.arch_key("b300_sxm") == "cuda-sm103"
    assert R.arch_key("amd-mi355x-288gb") == "" and R.arch_key("no-such-device") == ""


def test_an_architecture_factor_stretches_the_simulated_benchmark_only(monkeypatch: Any) -> None:
    monkeypatch.setattr(predict, "bench_arch_fit", lambda: {"cuda-sm90": (1.5, 1.25)})
    plain = fit_for(family="hopper", vllm_version="0.19.0")[1]
    on = fit_for(family="hopper", vllm_version="0.19.0", arch="cuda-sm90")[1]
    assert on.bench_factors == (1.5, 1.25)
    bench, base = on.bench_coefficients(), plain.bench_coefficients()
    # decode terms / 1.5 (bandwidth) and x 1.5 (floors); FLOPs / 1.25; CPU work (host, TTFT overhead) stays
    assert bench.bandwidth_efficiency == pytest.approx(base.bandwidth_efficiency / 1.5)
    assert bench.layer_overhead_s == pytest.approx(base.layer_overhead_s * 1.5)
    assert bench.compute_efficiency == pytest.approx(base.compute_efficiency / 1.25)
    assert bench.moe_compute_efficiency == pytest.approx(base.moe_compute_efficiency / 1.25)
    assert (bench.host_step_s, bench.ttft_overhead_s) == (base.host_step_s, base.ttft_overhead_s)
    assert on.coefficients() == plain.coefficients()  # the steady state keeps the closed-form fit
    # an architecture the refit never saw: the family's fit as it is
    assert fit_for(family="hopper", vllm_version="0.19.0", arch="cuda-sm75")[1] == plain


def test_a_measured_run_is_compared_with_its_architecture_s_refit(monkeypatch: Any) -> None:
    # compare_run (your runs) and performance (the page) take fit_for with the device's architecture: an H100's
    # simulated run is the one simulate_bench gives on the Hopper fit stretched by sm90's factors
    model, device = find_model("meta-llama/Llama-3.1-8B-Instruct"), find_device("nvidia-h100-sxm-80gb")
    serve = ServeConfig(max_model_len=4096)
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.19.0")
    physics = step_physics(estimate=est, model=model, device=device, serve=serve)
    monkeypatch.setattr(predict, "bench_arch_fit", lambda: {"cuda-sm90": (2.0, 1.5)})
    got = compare_run(estimate=est, model=model, device=device, serve=serve, args=ARGS, measured={}).predicted
    base = fit_for(family="hopper", vllm_version="0.19.0")[1].bench_coefficients()
    want = simulate_bench(
        estimate=est,
        physics=physics,
        coefficients=slower_device(base, factor=2.0, compute_factor=1.5),
        args=ARGS,
    ).values
    assert got == pytest.approx(want)
    plain = simulate_bench(estimate=est, physics=physics, coefficients=base, args=ARGS).values
    assert got["mean_tpot_ms"] > 1.3 * plain["mean_tpot_ms"]  # an 8B decode at 4 clients reads its weights


class _Keyed:
    def __init__(self, key: str) -> None:
        self.device_key = key


def test_fit_arch_picks_each_architecture_s_grid_point_or_one_for_all() -> None:
    # a made-up objective whose best decode factor is 0.8 for sm90's runs and 1.25 for sm100's (and the best
    # compute factor 1.1 for both): per architecture each gets its own; pooled (+cuda) one pair for all,
    # the grid point of least summed squared loss (0.8 -> 0 + 0.2025, 0.9 -> 0.01 + 0.1225 = 0.1325,
    # 1.0 -> 0.04 + 0.0625 = 0.1025, 1.1 -> 0.09 + 0.0225 = 0.1125): 1.0. Non-CUDA runs take no part
    best = {"cuda-sm90": 0.8, "cuda-sm100": 1.25}
    train = {"A": [_Keyed("cuda-sm90"), _Keyed("amd-mi300x-192gb")], "B": [_Keyed("cuda-sm100")]}

    def objective(runs: Any, decode: Any, compute: Any, kinds: tuple[str, ...]) -> float:
        keys = {r.device_key for rows in runs.values() for r in rows}
        assert keys <= set(best)
        d = dict(decode)
        c = dict(compute)
        return sum((d[k] - best[k]) ** 2 + ((c[k] - 1.1) ** 2 if k in c else 0.0) for k in keys)

    decode, compute = R.fit_arch(train, objective)
    assert dict(decode) == {"cuda-sm90": 0.8, "cuda-sm100": 1.25}
    assert dict(compute) == {"cuda-sm90": 1.1, "cuda-sm100": 1.1}
    decode, compute = R.fit_arch(train, objective, pooled=True)
    assert dict(decode) == {"cuda-sm90": 1.0, "cuda-sm100": 1.0}
    assert dict(compute) == {"cuda-sm90": 1.1, "cuda-sm100": 1.1}
