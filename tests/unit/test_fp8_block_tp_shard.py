"""An FP8 weight block must not be cut by a tensor-parallel shard: vLLM cannot build the layer otherwise.

Rule (app/core/quant_shards.py check_fp8_block_shards), read from the wheels (pip download --no-deps vllm==X):
0.33.0 layers/quantization/utils/fp8_utils.py validate_fp8_block_shape (a row-parallel input shard must be whole
block_k: "Weight input_size_per_partition = N is not divisible by weight quantization block_k = K."; a column-
parallel output partition whole block_n: "Weight output_partition_size = N ...") and validate_fp8_block_shape_moe
(the experts' per-rank intermediate: "The output_size of gate's and up's weight = N is not divisible by weight
quantization block_n = K."). 0.7.3 / 0.10.2 fp8.py: the same tests inline. From 0.14.0 (absent in 0.13.0) linear.py
_maybe_allow_fp8_block_shape_mismatch lets an Fp8Config merged layer (gate_up, qkv) through; from 0.30.0 (absent in
0.27.1) fused_moe/oracle/fp8.py refine_fp8_moe_block_shape refines Fp8MoEMethod's expert blocks to
gcd(block_n, block_k, shard, hidden) when >= 32. compressed-tensors (compressed_tensors_moe_w8a8_fp8.py) does neither.

Configs (all [128, 128] blocks): tests/data/configs/current/Qwen--Qwen3-30B-A3B-FP8_config.json (hidden 2,048, 128
experts of 768, every layer MoE, 32 heads, 4 KV heads, 48 layers), weights-2026-12/deepseek-ai--DeepSeek-V3_config.json
(hidden 7,168, dense intermediate 18,432 on the first 3 layers, experts 2,048, one shared expert of 2,048),
heldout_0_33q/sgl-project--ome-qwen3_8b_fp8_config.json (dense: intermediate 12,288, 32 heads, 8 KV heads, 36 layers),
heldout_0_33/poolside--Laguna-XS.2-FP8_config.json (compressed-tensors, strategy "block", block_structure [128, 128];
experts 512, shared expert 512, 48 heads, 8 KV heads).
The vLLM wording is the one widely reported, e.g. https://github.com/vllm-project/vllm/issues/17569 ("The output_size
of gate's and up's weight = 192 is not divisible by weight quantization block_n = 128.").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.catalog import find_device, find_model
from app.core.errors import PlannerError
from app.core.estimate import estimate, validate_parallel
from app.core.hf_config import model_spec_from_hf_config
from app.core.recommend import recommend
from app.core.specs import ModelSpec, ServeConfig
from app.core.versions import rules_for

DATA = Path(__file__).resolve().parents[1] / "data/configs"
QWEN3_MOE = DATA / "current/Qwen--Qwen3-30B-A3B-FP8_config.json"
DEEPSEEK_V3 = DATA / "weights-2026-12/deepseek-ai--DeepSeek-V3_config.json"
QWEN3_8B = DATA / "heldout_0_33q/sgl-project--ome-qwen3_8b_fp8_config.json"
LAGUNA = DATA / "heldout_0_33/poolside--Laguna-XS.2-FP8_config.json"


def _spec(path: Path, version: str, **overrides: object) -> ModelSpec:
    config = json.loads(path.read_text(encoding="utf-8")) | overrides
    return model_spec_from_hf_config(config, name=path.stem, vllm_version=version)


def _kv_bytes(path: Path, version: str, tp: int, *, ep: bool = False) -> int:
    return estimate(
        model=_spec(path, version),
        device=find_device("h100"),
        serve=ServeConfig(tensor_parallel_size=tp, max_model_len=4096, enable_expert_parallel=ep),
        vllm_version=version,
    ).kv_bytes_per_token


def _refusal(path: Path, version: str, tp: int, *, ep: bool = False, **overrides: object) -> str:
    with pytest.raises(PlannerError) as err:
        validate_parallel(
            model=_spec(path, version, **overrides),
            serve=ServeConfig(tensor_parallel_size=tp, enable_expert_parallel=ep),
            device=find_device("h100"),
            rules=rules_for(version),
        )
    assert err.value.field == "tensor_parallel_size"
    return str(err.value)


def _served(path: Path, version: str, tp: int, *, ep: bool = False) -> None:
    validate_parallel(
        model=_spec(path, version),
        serve=ServeConfig(tensor_parallel_size=tp, enable_expert_parallel=ep),
        device=find_device("h100"),
        rules=rules_for(version),
    )


# --- Qwen3-30B-A3B-FP8: the experts -----------------------------------------------------------------------------


def test_qwen3_moe_fp8_tp_8_refused_before_0_30() -> None:
    # 768 / 8 = 96 a rank, 96 % 128 = 96: Fp8MoEMethod.create_weights raises (0.27.1: no refinement)
    message = _refusal(QWEN3_MOE, "0.27.1", 8)
    assert "96 of experts.gate_up_proj's 768 outputs" in message
    assert (
        "The output_size of gate's and up's weight = 96 is not divisible by weight quantization block_n = 128."
        in message
    )


def test_qwen3_moe_fp8_tp_4_refused_before_0_30() -> None:
    # 768 / 4 = 192 = 1.5 x 128
    assert "weight = 192 is not divisible by weight quantization block_n = 128" in _refusal(
        QWEN3_MOE, "0.10.2", 4
    )


def test_qwen3_moe_fp8_tp_2_served() -> None:
    # 768 / 2 = 384 = 3 x 128; 4 KV heads / 2 = 2 a rank x 2 (K, V) x 128 x 2 B = 1,024 B a layer x 48 = 49,152
    assert _kv_bytes(QWEN3_MOE, "0.27.1", 2) == 49_152


def test_qwen3_moe_fp8_tp_8_served_from_0_30_by_refined_blocks() -> None:
    # gcd(128, 128, 96, 2,048) = 32 >= 32: the scales are refined to 32 x 32; 1 KV head a rank: 512 B x 48 = 24,576
    assert _kv_bytes(QWEN3_MOE, "0.30.0", 8) == 24_576
    assert _kv_bytes(QWEN3_MOE, "0.33.0", 8) == 24_576


def test_qwen3_moe_fp8_tp_16_refused_even_with_refinement() -> None:
    # 768 / 16 = 48: gcd(128, 128, 48, 2,048) = 16 < 32, no refinement, validate_fp8_block_shape_moe raises
    assert "weight = 48 is not divisible by weight quantization block_n = 128" in _refusal(
        QWEN3_MOE, "0.33.0", 16
    )


def test_expert_parallel_keeps_the_experts_whole() -> None:
    # --enable-expert-parallel: each rank holds whole experts (768 wide), nothing left to cut; attention as at TP 8
    assert _kv_bytes(QWEN3_MOE, "0.27.1", 8, ep=True) == 24_576


# --- DeepSeek-V3: the dense layers ------------------------------------------------------------------------------


def test_deepseek_v3_tp_8_and_16_served() -> None:
    # dense 18,432 / 16 = 1,152 = 9 x 128; experts and the shared expert 2,048 / 16 = 128
    for version in ("0.10.2", "0.33.0"):
        _served(DEEPSEEK_V3, version, 8)
        _served(DEEPSEEK_V3, version, 16)


def test_deepseek_v3_tp_32_refused_by_the_dense_down_proj() -> None:
    # 18,432 / 32 = 576 = 4.5 x 128: down_proj's input shard (row-parallel) from 0.14.0 on, gate_up_proj's merged
    # output before (0.13.0 checks the merged partitions: 576 % 128 = 64). Expert parallel does not split dense layers.
    message = _refusal(DEEPSEEK_V3, "0.33.0", 32)
    assert "576 of down_proj's 18,432 inputs" in message
    assert (
        "Weight input_size_per_partition = 576 is not divisible by weight quantization block_k = 128."
        in message
    )
    assert "576 of down_proj's" in _refusal(DEEPSEEK_V3, "0.33.0", 32, ep=True)
    older = _refusal(DEEPSEEK_V3, "0.13.0", 32)
    assert (
        "Weight output_partition_size = 576 is not divisible by weight quantization block_n = 128." in older
    )
    assert "gate_up_proj's 18,432 outputs" in older


# --- a dense FP8 model ------------------------------------------------------------------------------------------


def test_dense_qwen3_8b_fp8_tp_8_served() -> None:
    # down_proj 12,288 / 8 = 1,536 = 12 x 128; o_proj 32 x 128 / 8 = 512 = 4 x 128; qkv 512 + 128 + 128
    # 8 KV heads / 8 = 1 a rank: 2 x 128 x 2 B = 512 B a layer x 36 = 18,432
    assert _kv_bytes(QWEN3_8B, "0.33.0", 8) == 18_432
    assert _kv_bytes(QWEN3_8B, "0.10.2", 8) == 18_432


# --- compressed-tensors block FP8: no 0.14.0 / 0.30.0 allowance -------------------------------------------------


def test_compressed_tensors_block_shared_expert_refused_at_tp_8() -> None:
    # Laguna's shared expert 512 / 8 = 64 a rank: CompressedTensorsConfig has no weight_block_size, so the
    # column-parallel partition is checked under 0.33.0 too: 64 % 128
    message = _refusal(LAGUNA, "0.33.0", 8)
    assert "64 of shared_experts.gate_up_proj's 512 outputs" in message
    assert (
        "Weight output_partition_size = 64 is not divisible by weight quantization block_n = 128." in message
    )


def test_compressed_tensors_block_experts_are_not_refined() -> None:
    # without the shared expert, the experts 512 / 8 = 64: Fp8Config would refine (gcd(128, 128, 64, 2,048) = 64),
    # CompressedTensorsW8A8Fp8MoEMethod validates and raises
    message = _refusal(LAGUNA, "0.33.0", 8, shared_expert_intermediate_size=0)
    assert (
        "The output_size of gate's and up's weight = 64 is not divisible by weight quantization block_n = 128."
        in message
    )


def test_compressed_tensors_block_tp_4_served() -> None:
    # 512 / 4 = 128: whole blocks everywhere
    _served(LAGUNA, "0.33.0", 4)


# --- the recommender uses the same rule -------------------------------------------------------------------------


def test_recommender_never_proposes_a_refused_tp() -> None:
    # L4 (24 GB), a long context and 64 sequences push TP up: under 0.33.0 to 8 (served, refined blocks); under
    # 0.27.1 TP 4 and 8 are refused (192 and 96 a rank), so TP 2 is the most it may propose
    def final_tp(version: str) -> int:
        rec = recommend(
            model=_spec(QWEN3_MOE, version),
            device=find_device("l4"),
            serve=ServeConfig(),
            vllm_version=version,
            target_max_model_len=32_768,
            target_concurrency=64,
            devices_per_node=8,
        )
        return rec.final.tensor_parallel_size

    assert final_tp("0.27.1") == 2
    assert final_tp("0.33.0") == 8


def test_minimax_m2_7_tp_8_refused_before_refinement_served_after() -> None:
    # the load failure reported for `vllm serve MiniMaxAI/MiniMax-M2.7 -tp 8` in
    # https://github.com/vllm-project/vllm/pull/48173: experts 1,536 / 8 = 192, "The output_size of gate's and up's
    # weight = 192 is not divisible by weight quantization block_n = 128."; from 0.30.0 gcd(128, 128, 192, 3,072) = 64
    model = find_model("MiniMaxAI/MiniMax-M2.7")
    serve = ServeConfig(tensor_parallel_size=8)
    with pytest.raises(
        PlannerError, match="weight = 192 is not divisible by weight quantization block_n = 128"
    ):
        validate_parallel(model=model, serve=serve, device=find_device("h100"), rules=rules_for("0.19.0"))
    validate_parallel(model=model, serve=serve, device=find_device("h100"), rules=rules_for("0.33.0"))
