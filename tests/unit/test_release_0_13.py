"""vLLM 0.13.0 as a known release (review9a: 0.12-0.13 were planned with 0.11.0's rules).

Read from the 0.13.0 wheel (`pip download --no-deps vllm==0.13.0`), against 0.11.0 and 0.14.0:
- v1/worker/gpu_model_runner.py load_model: "Model loading took %.4f GiB memory and %.6f seconds" (0.11.0: "%.4f
  GiB and", 0.14.0: "%s GiB memory" with utils/mem_utils.format_gib);
- v1/worker/gpu_worker.py init_device: requested_memory = total_memory x gpu_memory_utilization, a float (0.14.0
  request_memory takes the ceil), and "Free memory on device (" (0.14.0 "device cuda:0");
- v1/core/kv_cache_utils.py: "No available memory for the cache blocks. … See …conserving_memory/ for more
  details." (0.11.0 ends at "initializing the engine."), the need summed over every layer (0.14.0: first group);
- engine/arg_utils.py: --kv-offloading-size, -O as --optimization-level; no "auto" --max-model-len (0.14.0
  human_readable_int_or_auto); config/cache.py BlockSize adds 256 and CacheDType fp8_ds_mla.
"""

from __future__ import annotations

from app.core.versions import KNOWN_VERSIONS, rules_for
from app.core.vllm_text_printed import too_small_error, weights_line

# Llama-3.1-8B's bf16 weights: 16,060,522,496 B = 14.95746... GiB
WEIGHTS = 16_060_522_496


def test_0_13_is_its_own_bracket() -> None:
    assert "0.13.0" in KNOWN_VERSIONS
    assert rules_for("0.13.1").version == "0.13.0"
    assert rules_for("0.12.0").version == "0.11.0"  # 0.12 was not read


def test_the_weights_line_as_0_13_prints_it() -> None:
    # 16,060,522,496 / 2**30 = 14.957458... -> "%.4f" 14.9575; 0.14.0 format_gib round(x, 2) -> 14.96
    assert weights_line(rules=rules_for("0.13.0"), weights_bytes=WEIGHTS) == (
        "Model loading took 14.9575 GiB memory and … seconds"
    )
    assert weights_line(rules=rules_for("0.11.0"), weights_bytes=WEIGHTS) == (
        "Model loading took 14.9575 GiB and … seconds"
    )
    assert weights_line(rules=rules_for("0.14.0"), weights_bytes=WEIGHTS) == (
        "Model loading took 14.96 GiB memory and … seconds"
    )


def test_0_13_keeps_0_11_budget_and_takes_0_14_flags() -> None:
    r13 = rules_for("0.13.0")
    assert (r13.requested_uses_ceil, r13.format_gib_style, r13.needed_formula) == (
        False,
        "fixed2",
        "sum_layers",
    )
    assert (r13.free_memory_device, r13.has_auto_fit, r13.async_scheduling_default) == (
        "device ",
        False,
        False,
    )
    assert r13.checkpoint_kv_dtype_modelopt is False  # resolve_kv_cache_dtype_string is 0.14.0's
    assert (r13.has_kv_offloading_flags, r13.has_fp8_ds_mla, r13.optimization_levels) == (True, True, True)
    assert r13.block_size_choices == (1, 8, 16, 32, 64, 128, 256)
    assert (r13.capture_size_consistency, r13.capture_spec_query_len) == (True, True)


def test_the_no_memory_error_gains_the_docs_link_at_0_13() -> None:
    args = {"no_memory": True, "max_model_len": 8192, "needed_bytes": 0, "available_bytes": 0}
    text = too_small_error(rules=rules_for("0.13.0"), estimated_len=0, tokens_capacity=0, **args)
    assert text == (
        "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the "
        "engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    )
    old = too_small_error(rules=rules_for("0.11.0"), estimated_len=0, tokens_capacity=0, **args)
    assert old.endswith("when initializing the engine.")
