"""A model with no KV cache spec at all (encoder-only attention) as vLLM 0.33.0 starts it.

0.33.0 v1/engine/core.py EngineCore._initialize_kv_caches: ``has_kv_cache = any(kv_cache_spec ...)``; when False it
skips ``model_executor.determine_available_memory()`` (the memory profile that prints "Estimated CUDA graph memory",
the "CUDA graph memory profiling is enabled" hint and "Available KV cache memory: %s GiB", v1/worker/gpu_worker.py)
and passes ``available_gpu_memory = [0]``; v1/core/kv_cache_planning.py get_kv_cache_configs skips
_check_enough_kv_cache_memory for a worker with no groups ("if not groups: continue") and
get_kv_cache_config_from_groups returns the null block only, no tensors; core.py calls update_kv_cache_capacity
(the "GPU KV cache size: … tokens, Maximum concurrency …" line, v1/core/kv_cache_utils.py) only "if
kv_cache_groups". Worker.compile_or_warm_up_model still captures the graphs. So the start-up prints the weights
line and the graph capture, no KV line, allocates no pool and never refuses for want of one.

The model: bge-m3-ml-tr-specialized (tests/data/configs/heldout_0_33p, XLMRobertaModel, 24 layers of 1,024):
566,705,152 parameters (test_heldout_configs_0_33p) x 2 B bf16 = 1,133,410,304 B = 1.0556 GiB -> "1.06 GiB".
Before: the predicted log printed "Available KV cache memory: 70.74 GiB" and "GPU KV cache size: 0 tokens, …", the
estimate carried a 75,960,833,902 B KV pool; at --gpu-memory-utilization 0.02 it refused with "No available memory
for the cache blocks".
"""

from __future__ import annotations

import json
from pathlib import Path

from app.core.catalog import find_device
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.specs import ServeConfig

HELD = Path(__file__).resolve().parents[1] / "data" / "configs" / "heldout_0_33p"
STEM = "dogukanveziroglu--bge-m3-ml-tr-specialized"


def _bge_m3():
    config = json.loads((HELD / f"{STEM}_config.json").read_text(encoding="utf-8"))
    return model_spec_from_hf_config(config, name=STEM, vllm_version="0.33.0")


def test_an_encoder_only_start_up_prints_no_kv_line_and_holds_no_pool() -> None:
    est = estimate(model=_bge_m3(), device=find_device("h100"), serve=ServeConfig(), vllm_version="0.33.0")
    assert est.weights_bytes == 1_133_410_304
    memory = [line for line in est.log_lines if "memory" in line.lower() or "KV" in line]
    assert memory == ["Model loading took 1.06 GiB memory and … seconds"]
    assert est.log_lines[-1].startswith("Graph capturing finished in … secs, took ")
    assert not any("KV cache" in line or "CUDA graph memory" in line for line in est.log_lines)
    assert (est.kv_cache_bytes, est.kv_tokens, est.groups, est.fits) == (0, 0, [], True)
    assert est.verdict == "fits"


def test_no_capacity_refusal_without_kv_layers() -> None:
    # H100 (84,932,978,278 B) x 0.02 = 1.58 GiB requested: less than weights (1.06 GiB) + activation +
    # non-torch + graphs, which refused a model with a KV cache with "No available memory for the cache blocks";
    # with no KV layer vLLM never runs that check (get_kv_cache_configs skips a worker with no groups)
    est = estimate(
        model=_bge_m3(),
        device=find_device("h100"),
        serve=ServeConfig(gpu_memory_utilization=0.02),
        vllm_version="0.33.0",
    )
    assert (est.fits, est.error, est.kv_cache_bytes) == (True, None, 0)
    assert est.verdict == "fits"


def test_the_0_34_start_up_prints_no_kv_line_either() -> None:
    # 0.34.0 v1/engine/core.py _initialize_kv_caches keeps the has_kv_cache skip, so the extensible cache's
    # "Available KV cache memory" tentative line and its "Memory after warmup" line are not printed
    est = estimate(model=_bge_m3(), device=find_device("h100"), serve=ServeConfig(), vllm_version="0.34.0")
    assert not any("KV cache" in line or "warmup" in line for line in est.log_lines)
    assert (est.kv_cache_bytes, est.fits) == (0, True)
