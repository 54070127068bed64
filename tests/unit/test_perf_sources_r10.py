"""bench/data/perf/sources-r10/: what is particular to round 10's held-apart measured runs (the checks every
blind batch passes are tests/unit/test_perf_sources_blind.py's)."""

from __future__ import annotations

from app.core.specs import QuantMethod
from bench import perf_sources as P
from tests.perf_blind import batch_rows


def test_a_quantization_flag_on_a_bf16_checkpoint_plans_online_fp8() -> None:
    # violet-quartz experiments/exp_quantized_model.md: `vllm serve qwen2_5-7b-instruct --quantization fp8
    # --no-enable-prefix-caching` on one RTX 4090 at 0.25.1 (vLLM's online dynamic FP8). The loader dropped the
    # flag (not in SERVE_FLAGS) and planned bf16 weights: 15,231,233,024 B for both runs. Read as the CLI reads
    # it (app/core/plan.apply_quantization_flag), the FP8 run's linear weights take one byte a parameter, so the
    # weights fall below 0.6 x bf16's (embedding and lm_head stay bf16) and the KV pool grows.
    rows = [r for r in batch_rows("sources-r10") if r["source"] == "violet-quartz/vllm-serving-experiments"]
    bf16 = next(r for r in rows if "quantization" not in r["server"] and r["max_concurrency"] == 8)
    fp8 = next(r for r in rows if r["server"].get("quantization") == "fp8" and r["max_concurrency"] == 8)
    run_bf16, run_fp8 = P.plan_run(bf16), P.plan_run(fp8)
    assert not isinstance(run_bf16, str) and not isinstance(run_fp8, str)
    assert run_bf16.model.quantization is None and run_bf16.estimate.weights_bytes == 15_231_233_024
    assert run_fp8.serve.quantization == "fp8"
    assert run_fp8.model.quantization is not None and run_fp8.model.quantization.method is QuantMethod.FP8
    assert run_fp8.estimate.weights_bytes < 0.6 * run_bf16.estimate.weights_bytes
    assert run_fp8.estimate.num_gpu_blocks > run_bf16.estimate.num_gpu_blocks


def test_no_fitted_row_states_a_quantization_flag() -> None:
    # reading `server.quantization` moves no fitted run: none of the rows the fits read states one
    assert not [r["source"] for r in P.source_rows() if "quantization" in r.get("server", {})]
