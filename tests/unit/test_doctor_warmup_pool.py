"""The doctor on a 0.34.0 start-up under the extensible KV cache: the pool is the one measured after warmup.

vLLM 0.34.0 prints "Available KV cache memory: %s GiB" in v1/worker/gpu_worker.py
Worker.determine_available_memory, the tentative budget before warmup, then, in
v1/worker/extensible_kv_cache.py measure_kv_cache_blocks, "Memory after warmup: … %d KV cache blocks (%s GiB)
fit within the requested %s GiB" with the blocks it allocated (both format strings read from the 0.34.0 wheel).
The lines below follow those format strings with the planner's own 0.34.0 figures for Llama-3.1-8B on one H100
(30,301 blocks of 2 MiB: 16 tokens x 131,072 B; 59.18 GiB; 484,816 tokens = 30,301 x 16); until this rule the
doctor took the tentative 62.01 GiB as the pool.
"""

from __future__ import annotations

from app.core.diagnose import diagnose
from app.core.logs.reading import gib_bytes

TENTATIVE = "(EngineCore pid=1) INFO 12-01 10:00:09 [gpu_worker.py:796] Available KV cache memory: 62.01 GiB"
WARMUP = (
    "(EngineCore pid=1) INFO 12-01 10:00:20 [extensible_kv_cache.py:694] Memory after warmup: 2.5 GiB free, "
    "59.18 GiB committed to the KV cache, 1.88 GiB kept for transient activations (1.88 GiB allocated at peak, "
    "0.0 GiB of torch reservation growth); 30301 KV cache blocks (59.18 GiB) fit within the requested 79.1 GiB. "
    "Torch may reserve up to 18.0 GiB."
)
HEAD = [
    "INFO 12-01 10:00:00 [api_server.py:1] vLLM API server version 0.34.0",
    "(EngineCore pid=1) INFO 12-01 10:00:05 [gpu_model_runner.py:1] Model loading took 14.96 GiB memory and 3.1 seconds",
]
SIZE = "(EngineCore pid=1) INFO 12-01 10:00:20 [kv_cache_utils.py:1] GPU KV cache size: 484,816 tokens"


def test_the_pool_after_warmup_replaces_the_tentative_budget() -> None:
    d = diagnose(log_text="\n".join([*HEAD, TENTATIVE, WARMUP, SIZE]), metrics_text=None)
    assert d.facts.kv_cache_bytes == gib_bytes("59.18")  # not 62.01
    assert d.facts.num_gpu_blocks == 30_301
    # one run's tentative and final pools are not two ranks that disagree
    assert not any("ranks printed different" in note for note in d.notes)


def test_without_the_warmup_line_the_tentative_budget_is_still_read() -> None:
    d = diagnose(log_text="\n".join([*HEAD, TENTATIVE, SIZE]), metrics_text=None)
    assert d.facts.kv_cache_bytes == gib_bytes("62.01")
