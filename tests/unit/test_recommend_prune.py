"""The prune pass: once the target is met, earlier steps that are no longer needed are undone,
costliest first, and the recommendation says so (issue 13: fp8 KV kept after TP 8 alone met it)."""

from __future__ import annotations

from app.core.catalog import find_device, find_model
from app.core.recommend import recommend
from app.core.specs import ServeConfig

LLAMA_70B = "meta-llama/Llama-3.1-70B-Instruct"


def _run(target_concurrency: int):  # type: ignore[no-untyped-def]
    return recommend(
        model=find_model(LLAMA_70B),
        device=find_device("h100"),
        serve=ServeConfig(),
        vllm_version="0.19.0",
        target_max_model_len=131072,
        target_concurrency=target_concurrency,
    )


def test_fp8_kv_is_undone_once_tp8_alone_meets_the_target() -> None:
    # 70B bf16 KV at TP 8: 2 x 80 layers x 1 head x 128 x 2 B = 40,960 B/token; 128k x 8 sequences
    # = 40 GiB of KV, which the ~50 GiB pool per H100 at TP 8 holds. fp8 (applied first, when TP 1 had
    # no pool at all) is then an accuracy cost for nothing.
    rec = _run(8)
    by_key = {s.key: s for s in rec.steps}
    assert by_key["tensor_parallel_size"].applied
    assert by_key["tensor_parallel_size"].serve.tensor_parallel_size == 8
    fp8 = by_key["kv_cache_dtype"]
    assert fp8.undone and not fp8.applied and "tensor_parallel_size 1 → 8" in fp8.undone_reason
    assert "kv_cache_dtype fp8 → auto" in fp8.undone_reason
    assert rec.meets_target and rec.final.kv_cache_dtype == "auto" and rec.final.tensor_parallel_size == 8
    assert "--kv-cache-dtype" not in rec.command


def test_a_step_still_needed_is_kept() -> None:
    # 128k x 12 at TP 8 in bf16 would need 60 GiB of KV per device: fp8 stays
    rec = _run(12)
    fp8 = next(s for s in rec.steps if s.key == "kv_cache_dtype")
    assert fp8.applied and not fp8.undone
    assert rec.final.kv_cache_dtype == "fp8"
