"""Hybrid (attention + Mamba) rules release by release, 0.19.0 -> 0.33.0, read from the wheels
(`pip download --no-deps vllm==X`), with the numbers worked by hand in the comments.

Qwen3-Next-80B (the real config in tests/data/configs/real, 48 layers: 12 full attention, 36 Gated
DeltaNet) at TP 4, bf16:
- attention page of one token: max(1, 2 KV heads // 4) = 1 head x (256 + 256) x 2 B = 1,024 B
- GDN state (mamba_utils.MambaStateShapeCalculator.gated_delta_net_state_shape): conv
  (2 x 128 x 16 + 128 x 32) / 4 = 2,048 x (4 - 1) = 6,144; temporal 32 / 4 = 8 x 128 x 128 = 131,072;
  137,216 elements x 2 B = 274,432 B.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.backends import BackendChoice, hybrid_align
from app.core.catalog import find_device
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.result import ErrorKind
from app.core.specs import LayerKind, ModelSpec, ServeConfig
from app.core.versions import rules_for

REAL = Path(__file__).resolve().parents[1] / "data" / "configs" / "real"


def _spec(name: str) -> ModelSpec:
    config: dict[str, Any] = json.loads((REAL / f"{name}.config.json").read_text(encoding="utf-8"))
    return model_spec_from_hf_config(config, name=name)


QWEN3_NEXT = "Qwen__Qwen3-Next-80B-A3B-Thinking"


def _est(version: str, device: str = "h100", **serve: Any) -> Any:
    return estimate(
        model=_spec(QWEN3_NEXT),
        device=find_device(device),
        serve=ServeConfig(tensor_parallel_size=4, **serve),
        vllm_version=version,
    )


@pytest.mark.parametrize(
    ("version", "device", "block", "mamba_blocks"),
    [
        # 0.19.0 models/config.py HybridAttentionMambaModelConfig: 16 x cdiv(274,432, 16 x 1,024) = 16 x 17;
        # ModelConfig.is_prefix_caching_supported: hybrids off -> Mamba "none" mode, one block a request
        ("0.19.0", "h100", 272, 1),
        # 0.24.0: Platform._align_hybrid_block_size, step max(FLASH_ATTN's 16, 16) = 16 -> 272; prefix still off
        ("0.24.0", "h100", 272, 1),
        # 0.26.0: hybrids support prefix caching -> "align" mode, 2 blocks (MambaSpec.max_memory_usage_bytes)
        ("0.26.0", "h100", 272, 2),
        # 0.32.0: GDN declares no checkpoint alignment yet -> still 272 and 2 blocks
        ("0.32.0", "h100", 272, 2),
        # 0.33.0 on SM90: FlashInfer GDN prefill, checkpoint alignment 64: step lcm(16, 64) = 64,
        # 64 x cdiv(274,432, 64 x 1,024) = 64 x 5 = 320; num_prefill_checkpoint_blocks 1 -> 2 + 1 = 3
        ("0.33.0", "h100", 320, 3),
        # 0.33.0 on an A100 (SM80): Triton/FLA prefill, no checkpoint alignment -> 272, 2 blocks
        ("0.33.0", "a100-80gb", 272, 2),
    ],
)
def test_qwen3_next_block_and_mamba_blocks_by_release(
    version: str, device: str, block: int, mamba_blocks: int
) -> None:
    est = _est(version, device)
    assert est.block_size == block
    mamba = [g for g in est.groups if g.kind == "mamba"]
    full = [g for g in est.groups if g.kind == "full"]
    # 36 GDN + 12 full: groups of min(36, 12) = 12 -> 3 mamba groups + 1 full (36 >= 1.5 x 12)
    assert [g.num_layers for g in mamba] == [12, 12, 12] and [g.num_layers for g in full] == [12]
    assert {g.blocks_per_request for g in mamba} == {mamba_blocks}
    # one page per layer per block: block x 1,024 B; the mamba state padded to it
    assert {g.page_size_bytes for g in est.groups} == {block * 1_024}
    assert est.bytes_per_block == 12 * block * 1_024
    # full attention of 262,144 tokens: cdiv(262,144, 320) = 820; cdiv(262,144, 272) = 964
    assert full[0].blocks_per_request == -(-262_144 // block)


def test_qwen3_next_mamba_blocks_check_at_0_33() -> None:
    # config/compilation.py CompilationConfig.resolve_cudagraph_mode_and_sizes (0.20.2 ... 0.33.0): full CUDA
    # graphs + Mamba layers + max_num_seqs > kv_cache_config.num_blocks -> ValueError. A pool of exactly 854
    # blocks: --kv-cache-memory-bytes 854 x 3,932,160 (12 layers x 320 x 1,024 B a block) = 3,358,064,640.
    pool = 854 * 12 * 320 * 1_024
    refused = _est("0.33.0", max_num_seqs=855, kv_cache_memory_bytes=pool)
    assert refused.num_gpu_blocks == 854
    assert not refused.fits and refused.error_kind == ErrorKind.MAMBA_BLOCKS
    assert refused.error == (
        "max_num_seqs (855) exceeds available Mamba cache blocks (854). Each decode sequence requires one "
        "Mamba cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most 854 "
        "or increase gpu_memory_utilization."
    )
    assert refused.log_lines[-1] == refused.error  # raised at graph capture, after the KV cache line
    # 854 sequences fit the 854 blocks; --enforce-eager captures no graph (cudagraph_mode NONE)
    assert _est("0.33.0", max_num_seqs=854, kv_cache_memory_bytes=pool).fits
    assert _est("0.33.0", max_num_seqs=855, kv_cache_memory_bytes=pool, enforce_eager=True).fits
    # 0.19.0 has no such check (absent from its config/compilation.py): it starts
    old = _est("0.19.0", max_num_seqs=2 * 854, kv_cache_memory_bytes=pool)
    assert old.fits and old.error is None


def test_qwen3_next_one_sequence_above_the_budgeted_pool() -> None:
    # Without a fixed pool: find max_num_seqs one above the blocks the planner sizes at that max_num_seqs
    # (the activation and graph terms move with max_num_seqs, so iterate to the fixed point).
    seqs = 1_024
    for _ in range(20):
        blocks = _est("0.33.0", max_num_seqs=seqs, enforce_eager=False).num_gpu_blocks
        if seqs == blocks + 1:
            break
        seqs = blocks + 1
    est = _est("0.33.0", max_num_seqs=seqs)
    assert est.error_kind == ErrorKind.MAMBA_BLOCKS
    assert f"max_num_seqs ({seqs}) exceeds available Mamba cache blocks ({seqs - 1})" in (est.error or "")
    assert _est("0.33.0", max_num_seqs=seqs, enforce_eager=True).fits
    assert _est("0.19.0", max_num_seqs=seqs).fits


def test_nemotron_h_mamba2_checkpoint_block_from_0_32() -> None:
    # Nemotron-3 Nano (Mamba-2 hybrid): 0.32.0 mamba_mixer2.MambaMixer2.get_kv_cache_spec sets
    # num_prefill_checkpoint_blocks=1 -> 3 blocks a request in "align" mode; 0.30.0 2. Mamba-2 declares no
    # prefill-checkpoint alignment (MambaBase.get_prefill_checkpoint_alignment -> None), so no lcm.
    spec = _spec("nemotron-h-moe-52-layers.selected-fields")

    def mamba_blocks(version: str) -> set[int]:
        est = estimate(model=spec, device=find_device("h100"), serve=ServeConfig(), vllm_version=version)
        return {g.blocks_per_request for g in est.groups if g.kind == "mamba"}

    assert mamba_blocks("0.30.0") == {2}
    assert mamba_blocks("0.33.0") == {3}
    assert mamba_blocks("0.24.0") == {1}  # prefix caching off for hybrids before 0.26.0


def _mla_hybrid() -> ModelSpec:
    base = _spec(QWEN3_NEXT)
    from app.core.specs import MLASpec

    return base.model_copy(update={"mla": MLASpec(kv_lora_rank=512, qk_rope_head_dim=64)})


@pytest.mark.parametrize(
    ("version", "backend", "min_kernel", "step"),
    [
        # 0.19.0 HybridAttentionMambaModelConfig: MLA hybrids 64, CUTLASS_MLA 128
        ("0.19.0", "FLASH_ATTN_MLA", 16, 64),
        ("0.19.0", "CUTLASS_MLA", 128, 128),
        # 0.26.0 _align_hybrid_block_size: max(FLASH_ATTN_MLA's MultipleOf(16), block 16) = 16
        ("0.26.0", "FLASH_ATTN_MLA", 16, 16),
        # 0.27.1: "make the manager block size a multiple of 128" for MLA hybrids
        ("0.27.1", "FLASH_ATTN_MLA", 16, 128),
        # FLASHMLA's fixed [64] kernel: max(64, 64) = 64 before 0.27, 128 after
        ("0.24.0", "FLASHMLA", 64, 64),
        ("0.33.0", "FLASHMLA", 64, 128),
    ],
)
def test_mla_hybrid_alignment_by_release(version: str, backend: str, min_kernel: int, step: int) -> None:
    model = _mla_hybrid()
    assert LayerKind.MAMBA in model.layer_kinds
    choice = BackendChoice(name=backend, block_size=max(16, min_kernel), min_kernel_block=min_kernel)
    align = hybrid_align(
        model=model,
        device=find_device("a100-80gb"),
        rules=rules_for(version),
        choice=choice,
        prefix_caching=True,
    )
    assert align.step_tokens == step


def test_hybrid_alignment_sizes_the_attention_page_without_the_indexer() -> None:
    # 0.33.0 platforms/interface.py Platform._align_hybrid_block_size: the one-token page it sizes the block by
    # is a FullAttentionSpec (or, MLA, an MLAAttentionSpec of the latent) alone, never the indexer's spec. Qwen3-Next
    # given (model_copy, labelled hypothetical) a MiniMax-M3-style bf16 index-key cache of 128 x 2 = 256 B a
    # token on every attention layer, at 0.24.0 TP 4: step 16, 16 x cdiv(274,432, 16 x 1,024) = 16 x 17 = 272, as
    # without it (counting the indexer, 16 x cdiv(274,432, 16 x 1,280) = 16 x 14 = 224). The page itself does carry
    # the indexer (one block table): 272 x (1,024 + 256) = 348,160 B, the Mamba state padded to it.
    spec = _spec(QWEN3_NEXT).model_copy(update={"indexer_bytes_per_token": 256})
    est = estimate(
        model=spec,
        device=find_device("h100"),
        serve=ServeConfig(tensor_parallel_size=4),
        vllm_version="0.24.0",
    )
    assert est.block_size == 272
    assert {g.page_size_bytes for g in est.groups} == {272 * 1_280}
