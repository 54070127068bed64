"""Step 1 derives blocks from V1's "GPU KV cache size: N tokens" only with a block size something says.

V1 picks the block size per backend and model: 16 for FLASH_ATTN, 64 for the MLA backends, an aligned size for
hybrids (``Platform._align_hybrid_block_size``, 0.33.0), 128 on vllm-ascend (``vllm_ascend/utils.py::
refresh_block_size``). And for a model with several KV groups vLLM prints ``max_concurrency × max_model_len`` as
the tokens (v1/core/kv_cache_utils.py::_report_kv_cache_config, 0.33.0), not blocks × block size. So the doctor
says "block size not printed" instead of dividing by 16 (the GH200 DeepSeek-V4 walk, vllm#44376).
"""

from __future__ import annotations

from app.core import catalog
from app.core.diagnose import diagnose
from app.core.estimate import estimate
from app.core.specs import ServeConfig
from tests.log_sets import LOGS_DIR

B = LOGS_DIR / "heldout-2026-12b"


def _step_one(text: str, device: str | None = None) -> str:
    return str(diagnose(log_text=text, metrics_text=None, device_hint=device).steps[0].explanation)


def test_an_ascend_pool_with_no_block_size_printed_is_not_divided_by_16() -> None:
    # vllm-ascend#5917: "GPU KV cache size: 1,880,320 tokens"; vllm-ascend's blocks are 128 tokens, not 16
    step = _step_one((B / "ascend_one_card_instance1_fits_1880320_tokens.log").read_text())
    assert "block size not printed, so no block count is derived" in step
    assert "117,520" not in step and "block size 16" not in step  # 1,880,320 ÷ 16, the old guess
    assert "1,880,320 tokens" in step


def test_the_mamba_refusal_counts_state_blocks_not_token_pages() -> None:
    # vllm#38632: "exceeds available Mamba cache blocks (600)": 600 × 16 = 9,600 tokens was claimed before
    step = _step_one((B / "nv_b200_ci_mamba_worker_wrapped_1024_600.log").read_text())
    assert "600 Mamba cache blocks (printed)" in step
    assert "9,600" not in step


def test_a_known_model_with_several_kv_groups_gets_no_block_count_from_its_tokens() -> None:
    # DeepSeek-V4-Flash at TP 4 on H100, 0.33.0: the planner's own start-up lines under a header naming the
    # model; its five KV groups (kv_dsv4.py) have pages of their own, block size 256
    est = estimate(
        model=catalog.find_model("deepseek-ai/DeepSeek-V4-Flash"),
        device=catalog.find_device("h100"),
        serve=ServeConfig(tensor_parallel_size=4, max_num_seqs=64, max_model_len=32768),
        vllm_version="0.33.0",
    )
    assert (est.block_size, len(est.groups)) == (256, 5)
    head = [
        "INFO 12-01 10:00:00 [api_server.py:1] vLLM API server version 0.33.0",
        "INFO 12-01 10:00:00 [utils.py:233] non-default args: {'model': 'deepseek-ai/DeepSeek-V4-Flash', "
        "'tensor_parallel_size': 4, 'max_model_len': 32768, 'max_num_seqs': 64}",
    ]
    step = _step_one("\n".join(head + est.log_lines), device="h100")
    assert "5 KV groups with pages of their own" in step
    assert f"{est.kv_tokens // 256:,} blocks" not in step  # tokens ÷ 256 is not the block count
    assert f"{est.kv_tokens:,} tokens" in step


def test_a_uniform_catalog_model_still_gets_its_blocks() -> None:
    # v1_0.11.0_llama31_8b.log: Llama-3.1-8B, one full-attention group, FLASH_ATTN's 16:
    # 421,312 tokens ÷ 16 = 26,332 blocks
    step = _step_one((LOGS_DIR / "v1_0.11.0_llama31_8b.log").read_text())
    assert "26,332 blocks (= 421,312 tokens ÷ block size 16)" in step
