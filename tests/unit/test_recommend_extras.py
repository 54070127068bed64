"""The recommender knows the extras (issue 16, What to build 3): a draft model, LoRA slots and a loaded
vision tower free memory when dropped, the effect quotes the extras ledger's own bytes, the cost says
what is lost, and the prune pass treats these steps like the others.

Every byte count below is worked by hand from config.json dimensions and vLLM 0.19.0's allocations
(the same derivations as tests/unit/test_extras.py, cited per test).
"""

from __future__ import annotations

from app.core.catalog import find_device, find_model
from app.core.recommend import PRUNE_ORDER, RULES, Recommendation, Step, recommend
from app.core.specs import ServeConfig

LLAMA_70B = "meta-llama/Llama-3.1-70B"
QWEN_VL = "Qwen/Qwen2.5-VL-7B-Instruct"
DRAFT = {"model": "meta-llama/Llama-3.2-1B-Instruct", "num_speculative_tokens": 5}


def _run(model: str, serve: ServeConfig, *, device: str, s: int, n: int, per_node: int) -> Recommendation:
    # fp8 KV and offload are kept out (allow_fp8_kv off, latency preference) so the extras rows decide
    return recommend(
        model=find_model(model),
        device=find_device(device),
        serve=serve,
        vllm_version="0.19.0",
        target_max_model_len=s,
        target_concurrency=n,
        devices_per_node=per_node,
        allow_fp8_kv=False,
        preference="latency",
    )


def _step(rec: Recommendation, key: str) -> Step:
    found = [s for s in rec.steps if s.key == key]
    assert len(found) == 1, [s.key for s in rec.steps]
    return found[0]


def test_the_extras_rows_sit_after_the_seed_levers_and_before_offload() -> None:
    keys = [rule.key for rule in RULES]
    for early in ("max_model_len", "kv_cache_dtype", "tensor_parallel_size", "gpu_memory_utilization"):
        assert keys.index(early) < keys.index("speculative_config")
    assert keys.index("speculative_config") < keys.index("lora") < keys.index("limit_mm_per_prompt")
    assert keys.index("limit_mm_per_prompt") < keys.index("offload")
    assert {"speculative_config", "lora", "limit_mm_per_prompt"} <= set(PRUNE_ORDER)


def test_no_extras_row_without_extras() -> None:
    rec = _run(
        LLAMA_70B,
        ServeConfig(tensor_parallel_size=4),
        device="h100",
        s=131072,
        n=8,
        per_node=4,
    )
    assert not {"speculative_config", "lora", "limit_mm_per_prompt"} & {s.key for s in rec.steps}


def test_dropping_the_draft_frees_the_ledgers_bytes_and_says_the_speed_up_goes() -> None:
    """Llama-3.1-70B TP 4 (a 4-device node, so no TP 8) + Llama-3.2-1B-Instruct draft, S* 128k, N* 4.
    Draft weights per device: 1,235,814,400 params x 2 B / 4 = 617,907,200 B; its KV: 16 layers x 2 x
    (8 / 4) x 64 x 2 B = 8,192 B per token on top of the target's 80 x 2 x 2 x 128 x 2 = 81,920 B.
    The ledger's line is 617,907,200 + 8,192 = 617,915,392 B = 0.58 GiB."""
    serve = ServeConfig(tensor_parallel_size=4, speculative_config=DRAFT)
    rec = _run(LLAMA_70B, serve, device="h100", s=131072, n=4, per_node=4)
    step = _step(rec, "speculative_config")
    assert step.applied
    assert step.before.weights_bytes - step.after.weights_bytes == 617_907_200
    assert (step.before.kv_bytes_per_token, step.after.kv_bytes_per_token) == (90_112, 81_920)
    assert "Frees 0.58 GiB per device" in step.effect
    assert "Draft model meta-llama/Llama-3.2-1B-Instruct" in step.effect
    assert "90,112 → 81,920 B per token" in step.effect
    assert "No speculative speed-up" in step.cost and "up to 5" in step.cost
    assert "outputs are the same" in step.cost
    assert step.serve.speculative_config is None
    assert "--speculative-config" not in rec.command


def test_lora_slots_are_halved_until_the_target_is_met_and_the_draft_is_then_pruned() -> None:
    """Llama-3.1-70B TP 4, --enable-lora --max-loras 8 --max-lora-rank 128, plus the 1B draft; S* 95,000, N* 4.

    One LoRA slot per device at TP 4, rank 128 (lora/layers/*.py create_lora_weights, 0.19.0):
      qkv A 3 x 128 x 8192 = 3,145,728         B (64/4 x 128 + 2 x 8/4 x 128) x 128 = 327,680
      o   A 128 x 2048 = 262,144               B 8192 x 128 = 1,048,576
      gate_up A 2 x 128 x 8192 = 2,097,152     B 2 x (28672/4) x 128 = 1,835,008
      down A 128 x 7168 = 917,504              B 8192 x 128 = 1,048,576
      = 10,682,368 per layer x 80 = 854,589,440
      embed_tokens 128256 x 128 + 8192 x 128 = 17,465,344; lm_head the same = 17,465,344
      slot = 889,520,128 elements x 2 B = 1,779,040,256 B; 8 slots = 14,232,322,048 B (13.25 GiB)
    Dropping the draft alone is not enough; halving to 4 slots frees 4 x 1,779,040,256 = 7,116,161,024 B
    (6.63 GiB), more than needed, so the prune pass puts the draft back."""
    serve = ServeConfig(
        tensor_parallel_size=4,
        speculative_config=DRAFT,
        enable_lora=True,
        max_loras=8,
        max_lora_rank=128,
        max_num_seqs=4,
        max_num_batched_tokens=2048,
        gpu_memory_utilization=0.95,
    )
    rec = _run(LLAMA_70B, serve, device="h100", s=95000, n=4, per_node=4)
    lora = _step(rec, "lora")
    assert lora.applied and not lora.undone
    assert (lora.serve.max_loras, lora.serve.max_lora_rank) == (4, 128)
    assert lora.before.weights_bytes - lora.after.weights_bytes == 7_116_161_024
    assert "Frees 6.63 GiB per device" in lora.effect and "13.25 GiB → 6.63 GiB" in lora.effect
    assert "LoRA slots (8 × rank 128)" in lora.effect
    assert "At most 4 adapters in one batch (was 8)" in lora.cost
    assert "rank above" not in lora.cost  # the rank was not lowered
    draft = _step(rec, "speculative_config")
    assert draft.undone and not draft.applied  # undone: not in the final configuration
    assert draft.undone_reason is not None and "max_loras 8 → 4" in draft.undone_reason
    assert rec.meets_target
    assert rec.final.speculative_config is not None and rec.final.max_loras == 4
    assert "--speculative-config" in rec.command and "--max-loras 4 --max-lora-rank 128" in rec.command


def test_lora_candidates_go_to_one_slot_then_lower_ranks_vllm_accepts() -> None:
    """Without the draft, S* 128k x N* 4 needs more than 8 -> 1 slot: the rank then drops through vLLM's
    allowed values (config/lora.py MaxLoRARanks: 1, 8, 16, 32, 64, ...) to 8."""
    serve = ServeConfig(
        tensor_parallel_size=4,
        enable_lora=True,
        max_loras=8,
        max_lora_rank=64,
        max_num_seqs=5,
        max_num_batched_tokens=2048,
        gpu_memory_utilization=0.95,
    )
    rec = _run(LLAMA_70B, serve, device="h100", s=131072, n=5, per_node=4)
    lora = _step(rec, "lora")
    assert lora.applied and (lora.serve.max_loras, lora.serve.max_lora_rank) == (1, 8)
    assert "Adapters of rank above 8 (up to 64 before) can no longer be loaded." in lora.cost
    assert not rec.meets_target  # 5 x 128k does not fit on four H100s whatever the slots


def test_text_only_mode_drops_the_tower_when_that_reaches_the_target() -> None:
    """Qwen2.5-VL-7B on one L4, S* 32,768, N* 3, max_num_batched_tokens 2048 after the prefill row.
    The ledger's "Vision tower and encoder cache": tower 676,550,144 params x 2 B = 1,353,100,288 B
    plus the encoder outputs 2048 x 3584 x 2 B = 14,680,064 B = 1,367,780,352 B (1.27 GiB); with image=0
    and video=0 vLLM does not load the tower (model_executor/models/interfaces.py _mark_tower_model).
    KV per block 16 x 28 x 2 x 4 x 128 x 2 B = 917,504 B; a 32,768-token request takes 2,048 blocks."""
    serve = ServeConfig(max_num_seqs=3, max_num_batched_tokens=8192, gpu_memory_utilization=0.95)
    rec = _run(QWEN_VL, serve, device="nvidia-l4-24gb", s=32768, n=3, per_node=1)
    step = _step(rec, "limit_mm_per_prompt")
    assert step.applied
    assert step.after.kv_cache_bytes - step.before.kv_cache_bytes == 1_367_780_352
    assert step.before.kv_tokens == step.before.kv_cache_bytes // 917_504 * 16
    assert step.after.kv_tokens == step.after.kv_cache_bytes // 917_504 * 16
    assert step.after.concurrency_at_target_len >= 3 > step.before.concurrency_at_target_len
    assert step.serve.limit_mm_per_prompt == {"image": 0, "video": 0}
    assert "Frees 1.27 GiB per device" in step.effect and "Vision tower and encoder cache" in step.effect
    assert "No image or video input" in step.cost
    assert rec.meets_target
    assert """--limit-mm-per-prompt '{"image":0,"video":0}'""" in rec.command


def test_text_only_mode_is_not_applied_when_it_does_not_reach_the_target() -> None:
    # N* 4 needs 4 x 2,048 = 8,192 blocks; text-only mode reaches 3.48 sequences: the row says so
    serve = ServeConfig(max_num_seqs=4, max_num_batched_tokens=8192, gpu_memory_utilization=0.95)
    rec = _run(QWEN_VL, serve, device="nvidia-l4-24gb", s=32768, n=4, per_node=1)
    step = _step(rec, "limit_mm_per_prompt")
    assert not step.applied
    assert "does not reach the target" in step.reason and "3.48 sequences" in step.reason
    assert rec.final.limit_mm_per_prompt is None


def test_existing_limits_keep_their_keys_and_serve_configs_with_limits_hash() -> None:
    # a ServeConfig with limit_mm_per_prompt (a dict) is a cache key in the recommender
    serve = ServeConfig(limit_mm_per_prompt={"image": 2})
    assert hash(serve) == hash(ServeConfig(limit_mm_per_prompt={"image": 2}))
    rec = _run(
        QWEN_VL,
        serve.model_copy(
            update={"max_num_seqs": 3, "max_num_batched_tokens": 8192, "gpu_memory_utilization": 0.95}
        ),
        device="nvidia-l4-24gb",
        s=32768,
        n=3,
        per_node=1,
    )
    assert _step(rec, "limit_mm_per_prompt").serve.limit_mm_per_prompt == {"image": 0, "video": 0}
