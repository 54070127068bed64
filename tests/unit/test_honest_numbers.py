"""Ranges derived from the calibration residuals must contain what real vLLM printed, and version
switches must change exactly the numbers the reference says they change."""

from __future__ import annotations

import statistics

from app.core import catalog
from app.core.estimate import estimate
from app.core.specs import GIB, ServeConfig
from bench import calibration


def test_kv_range_covers_real_logs_and_stays_narrow() -> None:
    inside, widths = 0, []
    cases = [c for c in calibration.cases(require_version=True) if c.reported.get("kv_cache_gib") is not None]
    for case in cases:
        est = estimate(model=case.model, device=case.device, serve=case.serve, vllm_version=case.vllm_version)
        band = est.ranges["kv_cache_bytes"]
        reported = (case.reported.get("kv_cache_gib_binding_rank") or case.reported["kv_cache_gib"]) * GIB
        inside += band.low <= reported <= band.high
        widths.append((band.high - band.low) / GIB)
    coverage = inside / len(cases)
    # measured: 42 records, coverage and median width printed in docs/accuracy.md
    assert len(cases) >= 40
    assert coverage >= 0.85, coverage
    assert statistics.median(widths) < 2.0, statistics.median(widths)


def test_borderline_and_safe_length() -> None:
    # Llama-3.1-8B on an H100 at utilization 0.3: the pool is ~5.7 GiB; 131,072 tokens need 16 GiB -> no start.
    model, device = catalog.find_model("llama-3.1-8b"), catalog.find_device("h100")
    est = estimate(
        model=model, device=device, serve=ServeConfig(max_model_len=131_072, gpu_memory_utilization=0.3)
    )
    assert not est.fits and not est.borderline
    assert est.safe_max_model_len is not None and est.estimated_max_model_len is not None
    assert 0 < est.safe_max_model_len < est.estimated_max_model_len
    # at exactly the largest length that starts, the low end of the range no longer fits: borderline
    edge = estimate(
        model=model,
        device=device,
        serve=ServeConfig(max_model_len=est.estimated_max_model_len, gpu_memory_utilization=0.3),
    )
    assert edge.fits and edge.borderline
    safe = estimate(
        model=model,
        device=device,
        serve=ServeConfig(max_model_len=est.safe_max_model_len, gpu_memory_utilization=0.3),
    )
    assert safe.fits and not safe.borderline


def _llama(version: str, **flags: object) -> object:
    model, device = catalog.find_model("llama-3.1-8b"), catalog.find_device("h100")
    return estimate(
        model=model,
        device=device,
        serve=ServeConfig(max_model_len=8192, **flags),  # type: ignore[arg-type]
        vllm_version=version,
    )


def test_version_switches_change_what_the_reference_says() -> None:
    v08, v011, v019, v024, v033 = (_llama(v) for v in ("0.8.5", "0.11.0", "0.19.0", "0.24.0", "0.33.0"))
    # default utilization: 0.9 through 0.19 (0.14 in the reference), 0.92 from 0.20 (§2.1)
    assert [e.gpu_memory_utilization for e in (v08, v011, v019, v024, v033)] == [0.9, 0.9, 0.9, 0.92, 0.92]
    # CUDA graphs subtracted before KV sizing only from 0.20 (§1, §2.6)
    assert [e.cuda_graph_budgeted for e in (v08, v011, v019, v024, v033)] == [False, False, False, True, True]
    # 0.8.5 prints tokens = blocks x 16; 0.11/0.19 num_blocks // groups x 16; 0.24/0.33 int(conc x L)
    assert v08.kv_tokens == v08.num_gpu_blocks * 16
    assert v019.kv_tokens == v019.num_gpu_blocks * 16
    assert v033.kv_tokens == int(v033.num_gpu_blocks / 512 * 8192)
    # log wording: 0.8.5 "Model loading took X GiB and", 0.19 "GiB memory and", 0.33 merged capacity line
    assert any(line.startswith("Model loading took ") and " GiB and " in line for line in v08.log_lines)
    assert any(" GiB memory and " in line for line in v019.log_lines)
    assert any(
        line.startswith("GPU KV cache size: ") and "Maximum concurrency" in line for line in v033.log_lines
    )
    assert any(line.startswith("GPU KV cache size: ") and "Maximum" not in line for line in v024.log_lines)
    # 0.8.5 prints no "Available KV cache memory" line; 0.11+ do
    assert not any("Available KV cache memory" in line for line in v08.log_lines)
    assert any(
        line == "Available KV cache memory: 60.15 GiB" or "Available KV cache memory" in line
        for line in v011.log_lines
    )


def test_sliding_window_capacity_differs_between_0_19_and_0_33() -> None:
    # gemma-2-9b: 21 sliding (W=4096) + 21 full layers. 0.19 tokens = num_blocks // 2 x 16 (the "naive"
    # formula); 0.33 tokens = int(concurrency x L) with SWA groups needing only cdiv(min(W-1+IF, L), 16)+1.
    model, device = catalog.find_model("google/gemma-2-9b-it"), catalog.find_device("h100")
    serve = ServeConfig(max_model_len=32768, gpu_memory_utilization=0.95, max_num_batched_tokens=8192)
    old = estimate(model=model, device=device, serve=serve, vllm_version="0.19.0")
    new = estimate(model=model, device=device, serve=serve, vllm_version="0.33.0")
    assert old.kv_tokens == old.num_gpu_blocks // 2 * 16
    # 0.33: full group 2048 blocks, SWA cdiv(min(4095 + 16384, 32768), 16) + 1 = 1281 -> 3329 per request
    assert [g.blocks_per_request for g in new.groups] == [1281, 2048] or [
        g.blocks_per_request for g in new.groups
    ] == [2048, 1281]
    assert new.kv_tokens == int(new.num_gpu_blocks / 3329 * 32768)
