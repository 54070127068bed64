"""The performance model: hand-worked step bytes, the exact pool's KV cliff, scheduling caps, weight
formats, and a calibrated prediction against a cited row of bench/data/perf/vllm_perf_measured.csv."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from app.core.budget import routed_expert_params
from app.core.catalog import find_device, find_model
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.kv import cdiv
from app.core.perf.cluster import ClusterFit
from app.core.perf.physics import (
    Coefficients,
    WeightFormat,
    compute_speedup,
    step_physics,
    step_seconds,
    touched_expert_fraction,
)
from app.core.perf.predict import COEFFICIENTS_FILE, fitted_families, performance
from app.core.perf.schedule import Workload, mean_step, requests_in_pool
from app.core.specs import ServeConfig

ROOT = Path(__file__).resolve().parents[2]
CSV = ROOT / "bench" / "data" / "perf" / "vllm_perf_measured.csv"
UNIT = Coefficients(
    bandwidth_efficiency=1.0,
    compute_efficiency=1.0,
    moe_compute_efficiency=1.0,
    step_overhead_s=0.0,
    layer_overhead_s=0.0,
    moe_layer_overhead_s=0.0,
    collective_latency_s=0.0,
    link_efficiency=1.0,
    token_overhead_s=0.0,
    exchange_efficiency=1.0,
    prefill_queue_factor=0.0,
    ttft_overhead_s=0.0,
)


def _setup(model: str, device: str, version: str = "0.19.0", **serve: object):
    spec = find_model(model)
    dev = find_device(device)
    cfg = ServeConfig(**serve)  # type: ignore[arg-type]
    est = estimate(model=spec, device=dev, serve=cfg, vllm_version=version)
    return spec, dev, cfg, est


def test_decode_step_bytes_llama_8b_bf16_worked_by_hand() -> None:
    # Llama-3.1-8B bf16, one H100, TP1: weights = 8,030,261,248 params x 2 B = 16,060,522,496 B (all read
    # once per step: dense). KV per token = 32 layers x 2 (K, V) x 8 KV heads x 128 x 2 B = 131,072 B.
    # A decode step of 4 sequences at 2,048 tokens of context reads 4 x 2,048 x 131,072 = 1,073,741,824 B of KV.
    model, device, serve, est = _setup("meta-llama/Llama-3.1-8B", "h100", max_model_len=8192)
    assert est.weights_bytes == 16_060_522_496
    assert est.kv_bytes_per_token == 131_072
    physics = step_physics(estimate=est, model=model, device=device, serve=serve)
    cost = step_seconds(
        physics=physics,
        coefficients=UNIT,
        decode_tokens=4,
        prefill_tokens=0,
        decode_context_tokens=2048,
        prefill_context_tokens=0,
    )
    assert cost.bytes_read == 16_060_522_496 + 1_073_741_824  # 17,134,264,320 B
    # at the data-sheet 3.35 TB/s: 17,134,264,320 / 3.35e12 = 5.1147 ms
    assert cost.memory_seconds == pytest.approx(5.1147e-3, rel=1e-4)
    assert physics.collectives_per_step == 0  # TP1: no all-reduce


def test_moe_reads_only_the_experts_its_tokens_route_to() -> None:
    # MiniMax-M2.5: 256 experts, top-8. One token touches 8/256 = 3.125 % of them; 64 tokens
    # 1 - (31/32)^64 = 1 - 0.1311 = 86.9 %; 512 tokens all but 0.0 %.
    assert touched_expert_fraction(num_experts=256, experts_per_token=8, tokens=1) == pytest.approx(0.03125)
    assert touched_expert_fraction(num_experts=256, experts_per_token=8, tokens=64) == pytest.approx(
        0.869, abs=1e-3
    )
    assert touched_expert_fraction(num_experts=256, experts_per_token=8, tokens=512) == pytest.approx(
        1.0, abs=1e-6
    )
    model, device, serve, est = _setup(
        "MiniMaxAI/MiniMax-M2.5", "h200", tensor_parallel_size=4, max_model_len=4096
    )
    physics = step_physics(estimate=est, model=model, device=device, serve=serve)
    # 224.7 B of the 228.7 B parameters are routed experts: (total - active) / (1 - 8/256)
    assert routed_expert_params(model) == pytest.approx(
        (228_689_764_864 - 11_030_553_088) / (1 - 8 / 256), rel=1e-9
    )
    one = step_seconds(
        physics=physics,
        coefficients=UNIT,
        decode_tokens=1,
        prefill_tokens=0,
        decode_context_tokens=0,
        prefill_context_tokens=0,
    )
    assert one.bytes_read == pytest.approx(physics.dense_weight_bytes + physics.expert_weight_bytes * 0.03125)
    assert one.bytes_read < 0.1 * est.weights_bytes  # a single token reads under a tenth of the weights


def test_sliding_window_layers_read_only_their_window() -> None:
    # gpt-oss-120b: 36 layers, 18 sliding (window 128) and 18 full, 8 KV heads x 64 x 2 (K, V) x 2 B =
    # 2,048 B per token per layer: 73,728 B per token, half of it in the sliding layers. One sequence
    # decoding at 8,192 tokens of context reads 73,728 x (0.5 x 8,192 + 0.5 x 128) = 73,728 x 4,160
    # = 306,708,480 B of KV (not 73,728 x 8,192 = 603,979,776 B as if every layer were full).
    model, device, serve, est = _setup("openai/gpt-oss-120b", "h100", max_model_len=9216)
    assert est.kv_bytes_per_token == 73_728
    physics = step_physics(estimate=est, model=model, device=device, serve=serve)
    assert physics.windowed_kv_share == 0.5 and physics.kv_window_tokens == 128

    def read(context: int) -> float:
        return step_seconds(
            physics=physics,
            coefficients=UNIT,
            decode_tokens=1,
            prefill_tokens=0,
            decode_context_tokens=context,
            prefill_context_tokens=0,
        ).bytes_read

    assert read(8192) - read(0) == pytest.approx(306_708_480)
    assert read(100) - read(0) == pytest.approx(73_728 * 100)  # inside the window every layer reads it all


def test_chunked_prefill_puts_a_prompt_into_a_share_of_the_steps() -> None:
    # MiniMax-M2.5 fp8, TP4 on H200, max_num_batched_tokens 8,192: 8 sequences decode at 8,704 tokens of
    # context while prompts of 8,192 tokens arrive at 64 tokens per step on average. Decodes go first, so a
    # prompt gets min(8,192, 8,192 - 8) = 8,184 tokens in one step: 64 / 8,184 of the steps carry a chunk
    # (touching every expert), the others decode alone and touch 1 - (31/32)^8 = 22.5 % of the experts.
    model, device, serve, est = _setup(
        "MiniMaxAI/MiniMax-M2.5", "h200", tensor_parallel_size=4, max_model_len=9216
    )
    assert est.max_num_batched_tokens == 8192 and est.kv_bytes_per_token == 63_488
    physics = step_physics(estimate=est, model=model, device=device, serve=serve)
    dense, experts = physics.dense_weight_bytes, physics.expert_weight_bytes
    share = 64 / 8184
    plain = dense + experts * (1 - (31 / 32) ** 8) + 63_488 * 8 * 8704
    with_chunk = dense + experts * (1 - (31 / 32) ** 8192) + 63_488 * (8 * 8704 + 8184)
    mean = mean_step(
        physics=physics,
        coefficients=UNIT,
        decode_tokens=8,
        prefill_tokens=64,
        input_tokens=8192,
        max_num_batched_tokens=8192,
        decode_context_tokens=8704,
    )
    assert mean.bytes_read == pytest.approx((1 - share) * plain + share * with_chunk, rel=1e-9)
    # a sliver of 64 prompt tokens in every step would touch 1 - (31/32)^72 = 89.8 % of the experts each step
    sliver = dense + experts * (1 - (31 / 32) ** 72) + 63_488 * (8 * 8704 + 64)
    assert mean.bytes_read < 0.5 * sliver


def test_weight_format_sets_the_tensor_core_rate() -> None:
    h100, b200, a100 = find_device("h100"), find_device("b200"), find_device("nvidia-a100-sxm4-80gb")
    assert compute_speedup(fmt=WeightFormat.FP8, device=h100) == 2.0
    assert compute_speedup(fmt=WeightFormat.FP8, device=a100) == 1.0  # FP8-Marlin: weight-only on SM80
    assert compute_speedup(fmt=WeightFormat.NVFP4, device=b200) == 4.0
    assert compute_speedup(fmt=WeightFormat.MXFP4, device=h100) == 1.0  # upcast on Hopper
    # gpt-oss's MXFP4 experts on Blackwell: vLLM 0.19.0 / 0.33.0 fused_moe/oracle/mxfp4.py offers only
    # BF16-activation backends by default and MXFP8 activations with VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1 (set
    # by public Blackwell serving scripts); neither is an FP4 x FP4 MMA, so at most the FP8 rate: 2x, not FP4's 4x
    assert compute_speedup(fmt=WeightFormat.MXFP4, device=b200) == 2.0
    assert compute_speedup(fmt=WeightFormat.INT4, device=b200) == 1.0  # w4a16: BF16 math


def test_data_parallel_shards_the_experts_over_every_rank() -> None:
    # MiniMax-M2.5 fp8, TP4: the experts' bytes per device drop to 1/4 with DP4 (16 ranks), the rest stays
    _, _, _, single = _setup("MiniMaxAI/MiniMax-M2.5", "b200", tensor_parallel_size=4, max_model_len=4096)
    _, _, _, dp4 = _setup(
        "MiniMaxAI/MiniMax-M2.5", "b200", tensor_parallel_size=4, data_parallel_size=4, max_model_len=4096
    )
    assert dp4.weights_bytes < 0.3 * single.weights_bytes
    assert dp4.num_gpu_blocks > single.num_gpu_blocks


def test_collective_bytes_tp_all_reduce_and_dp_expert_exchange_worked_by_hand() -> None:
    # MiniMax-M2.5 (62 layers, hidden 3,072; one token's hidden state = 3,072 x 2 B = 6,144 B).
    # TP4: 2 all-reduces per layer, ring 2 x 3/4 of the buffer: 2 x 62 x 6,144 x 1.5 = 1,142,784 B per token.
    # DP4 (attention TP1, experts over the 4 ranks): a gather and a reduce-scatter per MoE layer, each
    # moving the other 3 ranks' tokens: 2 x 62 x 6,144 x 3 = 2,285,568 B per token of the rank.
    model, device, serve, est = _setup(
        "MiniMaxAI/MiniMax-M2.5", "b200", tensor_parallel_size=4, max_model_len=4096
    )
    tp4 = step_physics(estimate=est, model=model, device=device, serve=serve)
    assert model.num_layers == 62 and model.hidden_size == 3072
    assert tp4.collective_bytes_per_token == pytest.approx(1_142_784)
    assert tp4.exchange_bytes_per_token == 0 and tp4.collectives_per_step == 124
    model, device, serve, est = _setup(
        "MiniMaxAI/MiniMax-M2.5",
        "b200",
        data_parallel_size=4,
        enable_expert_parallel=True,
        max_model_len=4096,
    )
    dp4 = step_physics(estimate=est, model=model, device=device, serve=serve)
    assert dp4.collective_bytes_per_token == 0
    assert dp4.exchange_bytes_per_token == pytest.approx(2_285_568)
    # 10 decode tokens at the data-sheet link (B200 NVLink 1,800 GB/s, 900 GB/s a direction), η = 1:
    # 10 x 2,285,568 / 900e9 = 25.40 us of exchange; and 10 x token_overhead_s of per-token work
    cost = step_seconds(
        physics=dp4,
        coefficients=UNIT,
        decode_tokens=10,
        prefill_tokens=0,
        decode_context_tokens=0,
        prefill_context_tokens=0,
    )
    assert dp4.link_bytes_per_s == pytest.approx(900e9)
    assert cost.exchange_seconds == pytest.approx(10 * 2_285_568 / 900e9)


def test_kv_cliff_is_where_the_exact_pool_stops_holding_every_request() -> None:
    # Llama-3.1-70B FP8 on one H200: a request of 1,024 + 8,192 tokens holds cdiv(9,216, 16) = 576 blocks;
    # the pool holds (blocks - 1 null block) // 576 of them; one more client and vLLM must preempt.
    model, device, serve, est = _setup("nvidia/Llama-3.1-70B-Instruct-FP8", "h200", max_model_len=9280)
    assert est.block_size == 16
    full = (est.num_gpu_blocks - 1) // cdiv(9216, 16)
    assert requests_in_pool(estimate=est, tokens=9216) == full
    below = performance(
        estimate=est, model=model, device=device, serve=serve, workload=Workload(1024, 8192, full)
    )
    above = performance(
        estimate=est, model=model, device=device, serve=serve, workload=Workload(1024, 8192, 4 * full)
    )
    assert below.kv_limited_from_concurrency == full + 1
    assert not below.kv_limited and above.kv_limited
    assert above.ttft_ms.expected > 10 * below.ttft_ms.expected  # the queue: the cliff in TTFT
    assert above.output_tokens_per_s.expected < 2 * below.output_tokens_per_s.expected  # throughput saturates
    cliff_points = [p for p in above.curve if p.kv_limited]
    assert cliff_points and min(p.concurrency for p in cliff_points) == full + 1


def test_max_num_seqs_caps_the_batch_and_the_rest_queue() -> None:
    model, device, serve, est = _setup(
        "nvidia/Llama-3.1-8B-Instruct-FP8", "h200", max_model_len=4096, max_num_seqs=8
    )
    perf = performance(
        estimate=est, model=model, device=device, serve=serve, workload=Workload(1024, 1024, 64)
    )
    assert perf.running_requests == 8 and perf.limit == "max_num_seqs"
    uncapped = performance(
        estimate=est, model=model, device=device, serve=serve, workload=Workload(1024, 1024, 8)
    )
    # 64 clients through 8 slots: each waits ~7 other requests' lifetimes (Little's law)
    assert perf.ttft_ms.expected > 5 * (1024 - 1) * uncapped.tpot_ms.expected
    assert perf.tpot_ms.expected == pytest.approx(uncapped.tpot_ms.expected, rel=0.05)


def _row(row_id: str) -> dict[str, str]:
    with CSV.open(encoding="utf-8") as fh:
        return next(r for r in csv.DictReader(fh) if r["id"] == row_id)


def test_calibrated_prediction_matches_a_measured_row() -> None:
    # bench/data/perf/vllm_perf_measured.csv row
    # 2026_04_06_llama_3_1_70b_h200_sxm_vllm_fp8_agg_1024x1024_c4_tp4_ep1_705: Llama-3.1-70B FP8, H200, TP4,
    # 1,024 in / 1,024 out at concurrency 4: TTFT 90.6 ms, TPOT 9.85 ms (version empty: fitted as 0.19.0).
    row = _row("2026_04_06_llama_3_1_70b_h200_sxm_vllm_fp8_agg_1024x1024_c4_tp4_ep1_705")
    measured_tpot, measured_ttft = float(row["silicon_tpot_ms"]), float(row["silicon_ttft_ms"])
    assert measured_tpot == pytest.approx(9.854, abs=1e-3)
    model, device, serve, est = _setup(
        "nvidia/Llama-3.1-70B-Instruct-FP8", "h200", tensor_parallel_size=4, max_model_len=2112
    )
    perf = performance(
        estimate=est, model=model, device=device, serve=serve, workload=Workload(1024, 1024, 4)
    )
    assert perf.basis == "calibrated" and perf.family == "hopper"
    assert perf.tpot_ms.low <= measured_tpot <= perf.tpot_ms.high
    assert perf.tpot_ms.expected == pytest.approx(measured_tpot, rel=0.25)  # fit's in-sample TPOT p75 band
    assert perf.ttft_ms.low <= measured_ttft <= perf.ttft_ms.high


def test_other_vendors_are_extrapolated_with_wider_bands() -> None:
    model, device, serve, est = _setup(
        "Qwen/Qwen3-32B", "mi300x", "0.12.0", tensor_parallel_size=2, max_model_len=4096
    )
    amd = performance(
        estimate=est, model=model, device=device, serve=serve, workload=Workload(1024, 1024, 16)
    )
    # the bf16 Qwen3-32B runs were measured on vLLM 0.12 (the Hopper <0.15 band)
    model, device, serve, est = _setup(
        "Qwen/Qwen3-32B", "h100", "0.12.0", tensor_parallel_size=2, max_model_len=4096
    )
    nv = performance(estimate=est, model=model, device=device, serve=serve, workload=Workload(1024, 1024, 16))
    assert amd.basis == "extrapolated" and nv.basis == "calibrated"
    assert amd.tpot_ms.high / amd.tpot_ms.low > 2 * nv.tpot_ms.high / nv.tpot_ms.low
    assert any("AMD" in note for note in amd.notes)


def test_workload_errors_name_their_field() -> None:
    model, device, serve, est = _setup("meta-llama/Llama-3.1-8B", "h100", max_model_len=4096)
    with pytest.raises(PlannerError) as info:
        performance(estimate=est, model=model, device=device, serve=serve, workload=Workload(4000, 1000, 4))
    assert info.value.field == "output_tokens"
    with pytest.raises(PlannerError) as info:
        performance(estimate=est, model=model, device=device, serve=serve, workload=Workload(100, 100, 0))
    assert info.value.field == "concurrency"


def test_coefficients_are_data_with_the_rows_they_came_from() -> None:
    raw = json.loads(COEFFICIENTS_FILE.read_text(encoding="utf-8"))
    assert set(fitted_families()) >= {"hopper", "blackwell"}
    with CSV.open(encoding="utf-8") as fh:
        ids = {r["id"] for r in csv.DictReader(fh)}
    for family in raw["families"].values():
        assert 0 < family["bandwidth_efficiency"] <= 1 and 0 < family["compute_efficiency"] <= 1
        rows = [row_id for residual in family["residuals"] for row_id in residual["rows"]]
        assert rows and set(rows) <= ids  # every fitted run is a row of the shared file


def test_cpu_offload_streams_the_offloaded_weights_over_pcie_every_step() -> None:
    # --cpu-offload-gb 4 on Llama-3.1-8B: 4 GiB = 4,294,967,296 B leave the device (budget.py) and are read
    # from pinned host memory in every forward pass (vLLM 0.19.0 maybe_offload_to_cpu, UVA): at one
    # direction of PCIe 5.0 x16, 64e9 B/s, that adds 4,294,967,296 / 64e9 = 67.109 ms to each step, while
    # the device reads 4 GiB less at 3.35 TB/s: 4,294,967,296 / 3.35e12 = 1.2821 ms less.
    model, device, serve, est = _setup("meta-llama/Llama-3.1-8B", "h100", max_model_len=8192)
    _, _, offload_serve, offload_est = _setup(
        "meta-llama/Llama-3.1-8B", "h100", max_model_len=8192, cpu_offload_gb=4
    )
    assert est.weights_bytes - offload_est.weights_bytes == 4_294_967_296

    def step(cfg: ServeConfig, e: object) -> float:
        physics = step_physics(estimate=e, model=model, device=device, serve=cfg)  # type: ignore[arg-type]
        return step_seconds(
            physics=physics,
            coefficients=UNIT,
            decode_tokens=4,
            prefill_tokens=0,
            decode_context_tokens=2048,
            prefill_context_tokens=0,
        ).seconds

    assert step(offload_serve, offload_est) - step(serve, est) == pytest.approx(
        67.109e-3 - 1.2821e-3, rel=1e-3
    )
    perf = performance(
        estimate=offload_est,
        model=model,
        device=device,
        serve=offload_serve,
        workload=Workload(input_tokens=1024, output_tokens=1024, concurrency=4),
        with_curve=False,
    )
    assert perf.basis == "extrapolated"
    assert any("--cpu-offload-gb 4" in note for note in perf.notes)


def test_a_tpot_only_cluster_keeps_the_models_widened_bands_for_what_it_did_not_measure() -> None:
    # Qwen3-32B TP 2 on MI300X at 0.12.0 is extrapolated (its bands widened: no measured AMD family fit). Your runs
    # measured TPOT only (a factor of 1.2, spread 5 %): the TPOT band becomes theirs, scaled; TTFT and throughput,
    # which no run measured, keep the model's widened bands unchanged, and the answer stays "extrapolated"
    model, device, serve, est = _setup(
        "Qwen/Qwen3-32B", "mi300x", "0.12.0", tensor_parallel_size=2, max_model_len=4096
    )
    work = Workload(1024, 1024, 16)
    alone = performance(
        estimate=est, model=model, device=device, serve=serve, workload=work, with_curve=False
    )
    cluster = ClusterFit(runs=1, factors={"tpot": 1.2}, log_spread={"tpot": 0.05})
    mine = performance(
        estimate=est,
        model=model,
        device=device,
        serve=serve,
        workload=work,
        with_curve=False,
        cluster=cluster,
    )
    assert mine.tpot_ms.expected == pytest.approx(1.2 * alone.tpot_ms.expected)
    assert mine.tpot_ms.high / mine.tpot_ms.expected == pytest.approx(math.exp(0.05))
    assert mine.ttft_ms == alone.ttft_ms and mine.output_tokens_per_s == alone.output_tokens_per_s
    assert mine.basis == alone.basis == "extrapolated"
