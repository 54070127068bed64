"""GLM-5.3-Flash (glm5_next, vLLM 0.33.0 models/glm5next): the kpool indexer cache and the hybrid block size.

The config is the real one kept in tests/data/configs/current-2026-12 (0xSero/glm-5.3-flash-spark-mosaic,
artifact-metadata/k2-k256/config.json) with its `quantization_config` REMOVED: as shipped it is EXL3, which 0.33.0
refuses (that set's expected*.json), so these tests plan the same geometry unquantized (bf16) to pin the cache
rules. Derived config, labelled as such; nothing else is changed.

Hand-worked from the 0.33.0 wheel:
- layers (common/model.py _is_kda_layer: layer_types[i] == "linear_attention"): 34 KDA + 11 sparse MLA
  (`deepseek_sparse_attention`, layers 3, 7, ..., 43); the MTP layer is not built without a speculative config.
- MLA latent (MLAAttentionSpec, head_size_v 0): kv_lora_rank 512 + qk_rope_head_dim 0 = 512 x 2 B = 1,024 B a token.
- indexer (common/attention.py Glm5NextIndexerCache.get_kv_cache_spec): DeepseekV32IndexerCache's uint8
  MLAAttentionSpec of 128 + 128 // 128 x 4 = 132 B a state, with `tokens_per_state = index_kpool` = 4, so
  (kv_cache_interface.py AttentionSpec.num_states = block_size // tokens_per_state) 132 / 4 = 33 B a token.
- per token over the 11 attention layers: 11 x (1,024 + 33) = 11,627 B (main's planner: 11 x (1,024 + 132) = 12,716).
- hybrid block (platforms/interface.py Platform._align_hybrid_block_size): the attention page of ONE token is the
  MLAAttentionSpec latent alone (1,024 B; the indexer is not in it); step = max(kernel block, block size, 128 for
  MLA) = 128; KDA state (mamba_utils.kda_state_shape / kda_state_dtype: conv bf16, recurrent fp32):
  TP 8: conv 3 x 8,192 / 8 = 3,072 x (4 - 1) x 2 B = 18,432 + recurrent 64 / 8 = 8 x 128 x 128 x 4 B = 524,288
        -> 542,720 B; block = 128 x cdiv(542,720, 128 x 1,024) = 128 x 5 = 640 (main: 512, from 1,156 B a token)
  TP 2: conv 12,288 x 3 x 2 = 73,728 + recurrent 32 x 128 x 128 x 4 = 2,097,152 -> 2,170,880 B;
        block = 128 x cdiv(2,170,880, 131,072) = 128 x 17 = 2,176 (main: 1,920)
  TP 1: conv 24,576 x 3 x 2 = 147,456 + recurrent 64 x 128 x 128 x 4 = 4,194,304 -> 4,341,760 B;
        block = 128 x cdiv(4,341,760, 131,072) = 128 x 34 = 4,352; counting the indexer's 33 B in the one-token
        page (1,057 B) would give 128 x cdiv(4,341,760, 135,296) = 128 x 33 = 4,224 (at TP 8 and 2 both give
        the same block, so only TP 1 tells the two apart)
- backend (platforms/cuda.py _get_backend_priorities, SM90, 0.30.0 and 0.34.0 the same): sparse MLA with head
  size 512 (latent 512, no rope) puts FLASHINFER_MLA_SPARSE_SM90 ahead of FLASH_ATTN_MLA_SPARSE / FLASHMLA_SPARSE
  (576 keeps it last); flashinfer_mla_sparse_sm90.py takes auto, kv_lora_rank 512 and qk_rope_head_dim 0, and
  MultipleOf(64) like the others, so the block is unchanged. main's planner: FLASH_ATTN_MLA_SPARSE.
- page of an attention layer (the MLA and indexer specs share one block table, as for GLM-5.3's DSA):
  TP 8: 640 x 1,024 + 640 / 4 x 132 = 655,360 + 21,120 = 676,480 B.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.catalog import find_device
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.specs import ServeConfig

CONFIG = (
    Path(__file__).resolve().parents[1]
    / "data/configs/current-2026-12/0xSero--glm-5.3-flash-spark-mosaic-k2-k256_config.json"
)


def _config(**text_overrides: Any) -> dict[str, Any]:
    config = json.loads(CONFIG.read_text(encoding="utf-8"))
    del config["quantization_config"]  # EXL3: refused by 0.33.0 (see the module docstring)
    config["text_config"].update(text_overrides)
    return config


def test_indexer_stores_one_state_per_kpool_tokens() -> None:
    spec = model_spec_from_hf_config(_config(), name="glm5next", vllm_version="0.33.0")
    assert spec.indexer_bytes_per_token == 33  # 132 B a state / index_kpool 4


@pytest.mark.parametrize(
    ("tp", "block", "per_token"),
    [
        (8, 640, 11 * (1024 + 33)),
        (2, 2176, 11 * (1024 + 33)),
        (1, 4352, 11 * (1024 + 33)),
    ],
)
def test_hybrid_block_and_bytes_per_token(tp: int, block: int, per_token: int) -> None:
    spec = model_spec_from_hf_config(_config(), name="glm5next", vllm_version="0.33.0")
    est = estimate(
        model=spec,
        device=find_device("h100"),
        serve=ServeConfig(tensor_parallel_size=tp, max_model_len=8192),
        vllm_version="0.33.0",
    )
    assert est.block_size == block
    assert (est.attention_backend, est.kv_cache_dtype) == ("FLASHINFER_MLA_SPARSE_SM90", "auto")
    assert est.kv_bytes_per_token == per_token
    assert [(g.kind, g.num_layers) for g in est.groups if g.kind == "mla"] == [("mla", 11)]
    if tp == 8:
        assert max(g.page_size_bytes for g in est.groups) == 640 * 1024 + 640 // 4 * 132  # 676,480


@pytest.mark.parametrize("kpool", [1, 8])
def test_kpool_the_cache_code_cannot_take_is_refused(kpool: int) -> None:
    # 1: Glm5NextIndexerCache asserts index_kpool > 1; 8: 132 B a state over 8 tokens is no whole byte count
    # a token, which this planner does not model: refused naming the field rather than sized wrong.
    with pytest.raises(PlannerError, match="index_kpool"):
        model_spec_from_hf_config(_config(index_kpool=kpool), name="glm5next", vllm_version="0.33.0")
