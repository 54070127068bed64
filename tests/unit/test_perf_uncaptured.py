"""Steps too large for the captured CUDA graphs launch their kernels one by one (app/core/perf/uncaptured.py).

vLLM 0.14.0 vllm/v1/cudagraph_dispatcher.py, CudagraphDispatcher.dispatch: a batch of more tokens than
compilation_config.max_cudagraph_capture_size returns CUDAGraphMode.NONE (no graph: the compiled model, every
kernel launched from the host). The V0 engine's ModelInputForGPUBuilder._use_captured_graph (0.6.x
worker/model_runner.py) needs a decode-only batch of at most the largest captured batch size (256).
"""

from __future__ import annotations

from dataclasses import replace

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.perf.physics import StepPhysics, step_physics
from app.core.perf.predict import fit_for
from app.core.perf.rates import rates_of
from app.core.perf.uncaptured import (
    V0_DECODE_GRAPH_MAX,
    graph_token_limit,
    launched_seconds,
    uncaptured,
)
from app.core.specs import ServeConfig

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
DEVICE = "nvidia-h100-sxm-80gb"


def _physics(version: str, **serve_kw: object) -> StepPhysics:
    model = find_model(MODEL)
    device = find_device(DEVICE)
    serve = ServeConfig(max_model_len=8192, **serve_kw)  # type: ignore[arg-type]
    est = estimate(model=model, device=device, serve=serve, vllm_version=version)
    assert (
        graph_token_limit(estimate=est, serve=serve, device=device)
        == step_physics(estimate=est, model=model, device=device, serve=serve).graph_token_limit
    )
    return step_physics(estimate=est, model=model, device=device, serve=serve)


def test_the_default_capture_ceiling_is_the_step_limit() -> None:
    # 0.14.0 config/vllm.py _set_cudagraph_sizes: max_cudagraph_capture_size = min(2 x max_num_seqs, 512) within
    # max_num_batched_tokens. max_num_seqs 256 -> 512; 64 -> 128; 256 batched tokens cut it at 256
    assert _physics("0.14.0", max_num_seqs=256).graph_token_limit == 512
    assert _physics("0.14.0", max_num_seqs=64).graph_token_limit == 128
    assert _physics("0.14.0", max_num_seqs=256, max_num_batched_tokens=256).graph_token_limit == 256


def test_eager_starts_and_v0_have_their_own_rule() -> None:
    assert (
        _physics("0.14.0", enforce_eager=True).graph_token_limit == 0
    )  # every step eager: StepPhysics.eager
    v0 = _physics("0.6.6")
    assert (v0.graph_token_limit, v0.v0_graphs) == (V0_DECODE_GRAPH_MAX, True)
    assert not _physics("0.14.0").v0_graphs


def test_which_steps_run_without_a_graph() -> None:
    # limit 512: 480 decodes + a 32-token chunk is 512 tokens (a graph), + 33 is 513 (none)
    assert not uncaptured(limit=512, v0=False, decode_tokens=480, prefill_tokens=32)
    assert uncaptured(limit=512, v0=False, decode_tokens=480, prefill_tokens=33)
    assert not uncaptured(
        limit=0, v0=False, decode_tokens=10_000, prefill_tokens=8192
    )  # eager start: its floor
    # V0: one prompt token makes the step eager; 257 decodes too
    assert uncaptured(limit=256, v0=True, decode_tokens=1, prefill_tokens=1)
    assert not uncaptured(limit=256, v0=True, decode_tokens=256, prefill_tokens=0)
    assert uncaptured(limit=256, v0=True, decode_tokens=257, prefill_tokens=0)


def test_launches_overlap_the_device_work() -> None:
    # 32 layers at 0.3 ms = 9.6 ms of launches: hidden under a 40 ms chunk, 5.6 ms more than a 4 ms step
    assert launched_seconds(device_s=0.040, launch_s=32 * 0.3e-3) == 0.040
    assert abs(launched_seconds(device_s=0.004, launch_s=32 * 0.3e-3) - 0.004 - 0.0056) < 1e-12


def test_the_launch_cost_is_off_unless_chosen_and_never_doubles_an_eager_start() -> None:
    physics = _physics("0.14.0")
    coefficients = replace(
        fit_for(family="hopper", vllm_version="0.14.0")[1].coefficients(), eager_layer_s=0.3e-3
    )
    assert rates_of(physics=physics, coefficients=coefficients).uncaptured_launch_s == 0.0
    on = replace(coefficients, uncaptured_launch=True)
    # Llama-3.1-8B: 32 decoder layers x 0.3 ms
    assert abs(rates_of(physics=physics, coefficients=on).uncaptured_launch_s - 32 * 0.3e-3) < 1e-12
    eager = _physics("0.14.0", enforce_eager=True)
    assert rates_of(physics=eager, coefficients=on).uncaptured_launch_s == 0.0


def test_the_loso_option_reaches_the_prediction() -> None:
    # bench/perf_loso.py +uncap / +uncapsum: the fitted correction keeps the flags through the TTFT grid (a first
    # draft rebuilt the Correction there without them and every fold scored as the baseline), and the run is
    # looked up at its own variant key, the fold's eager time applied to a run that is not --enforce-eager
    from types import SimpleNamespace

    from tests.unit.test_perf_loso_bands import _perf_loso

    L = _perf_loso()
    context = SimpleNamespace(
        physics=SimpleNamespace(eager=False),
        coefficients=SimpleNamespace(ttft_overhead_s=0.005, ttft_per_prompt_token_s=8e-6),
        cluster="unknown-device model tp1",
        engine="v1",
    )
    run = L.Run("s", {"mean_ttft_ms": 100.0}, {}, context=context)
    run.variants[(0.0, 0.0, 1.0, 0.0004, 1.0, "uncap", "uncapsum")] = {"mean_ttft_ms": 130.0}
    on = L.Correction(mode="physics+uncapsum", eager_layer_s=0.0004, uncaptured=True, uncaptured_serial=True)
    assert on.predict(run)["mean_ttft_ms"] == 130.0
    fitted = L._fit_ttft("physics+uncapsum", {"s": [run]}, on)
    assert (fitted.uncaptured, fitted.uncaptured_serial) == (True, True)


def test_the_shipped_coefficients_leave_it_off() -> None:
    # round 16c: +uncapsum passed the LOSO keep rule but is not shipped (docs/accuracy.md, round 16c):
    # coefficients.json's host section carries no uncaptured_launch key, so the planner's answers are unchanged
    coefficients = fit_for(family="hopper", vllm_version="0.14.0")[1].bench_coefficients()
    assert (coefficients.uncaptured_launch, coefficients.uncaptured_serial) == (False, False)


def test_a_share_of_the_launches_adds_to_the_step() -> None:
    # +uncapsumfit: half of Llama-3.1-8B's 32 x 0.3 ms = 4.8 ms in series; an explicit step of 600 prompt tokens at
    # 0.14.0's limit of 512 pays it, one of 500 does not
    from app.core.perf.simulate import EngineLimits, _Engine

    physics = _physics("0.14.0")
    coefficients = replace(
        fit_for(family="hopper", vllm_version="0.14.0")[1].coefficients(),
        eager_layer_s=0.3e-3,
        uncaptured_launch=True,
        uncaptured_serial=True,
        uncaptured_share=0.5,
    )
    rates = rates_of(physics=physics, coefficients=coefficients)
    assert abs(rates.uncaptured_launch_s - 32 * 0.3e-3 * 0.5) < 1e-12
    plain = rates_of(physics=physics, coefficients=replace(coefficients, uncaptured_launch=False))
    limits = EngineLimits(
        max_num_seqs=256,
        max_num_batched_tokens=8192,
        pool_blocks=1000,
        block_size=16,
        growth_groups=1,
        fixed_blocks=0,
        prefix_cache=False,
        pipeline_stages=1,
        stage_hop_s=0.0,
    )

    def step(r: object, prefill: int) -> float:
        engine = _Engine.__new__(_Engine)
        engine.r, engine.lim = r, limits  # type: ignore[assignment]
        return engine.device_seconds(0.0, 0.0, float(prefill), prefill * prefill / 2)

    assert abs(step(rates, 600) - step(plain, 600) - 0.0048) < 1e-12
    assert step(rates, 500) == step(plain, 500)
