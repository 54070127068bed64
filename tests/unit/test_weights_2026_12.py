"""Weight bytes from config.json alone against current checkpoints' real sizes (issue 22 item 2).

Truth: tests/data/configs/weights-2026-12/totals.json — each checkpoint's model.safetensors.index.json
`metadata.total_size`, or for DeepSeek-V4-Flash the checkpoint size vLLM itself printed; where each value
was read is in SOURCES.md there. Numbers below are worked by hand from the configs in that directory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.budget import weights_bytes_for_stage
from app.core.catalog import find_device
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config, param_breakdown
from app.core.hf_config.mtp import mtp_unquantized
from app.core.specs import GIB, ModelSpec, QuantMethod, ServeConfig

DATA = Path(__file__).resolve().parents[1] / "data" / "configs" / "weights-2026-12"
TOTALS: list[dict[str, Any]] = json.loads((DATA / "totals.json").read_text(encoding="utf-8"))["checkpoints"]


def _config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / name).read_text(encoding="utf-8"))
    return data


def _spec(name: str, hf_quant: str | None = None) -> ModelSpec:
    quant = _config(hf_quant) if hf_quant else None
    return model_spec_from_hf_config(_config(name), name=name, hf_quant_config=quant)


def _weights(model: ModelSpec, tp: int = 1) -> int:
    serve = ServeConfig(tensor_parallel_size=tp)
    return weights_bytes_for_stage(
        model=model, serve=serve, layer_range=(0, model.num_layers), is_first=True, is_last=True
    )


def _total(checkpoint_id: str) -> dict[str, Any]:
    return next(row for row in TOTALS if row["id"] == checkpoint_id)


# Checkpoints without an MTP layer or a vision tower: what vLLM loads is every stored tensor, so the
# planner's bytes from the config alone must be total_size to the byte. E.g. Qwen3-8B: 8,190,735,360
# parameters x 2 B (bf16) = 16,381,470,720; gpt-oss-120b: MXFP4 experts (0.5 B + one e8m0 scale per 32)
# and bf16 attention / router / embeddings = 65,248,815,744.
EXACT = ["openai/gpt-oss-120b", "openai/gpt-oss-20b", "Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-8B", "Qwen/Qwen3-32B"]


@pytest.mark.parametrize("checkpoint_id", EXACT)
def test_weights_from_config_equal_total_size(checkpoint_id: str) -> None:
    row = _total(checkpoint_id)
    assert _weights(_spec(row["config"])) == row["total_size"]


def test_deepseek_v4_flash_experts_are_mxfp4_beside_fp8() -> None:
    # 0.33.0 models/deepseek_v4/quant_config.py DeepseekV4FP8Config.get_quant_method: expert_dtype "fp4"
    # (config.json) -> Mxfp4MoEMethod for the routed experts; the other linears Fp8 blocks.
    model = _spec("deepseek-ai--DeepSeek-V4-Flash_config.json")
    assert model.quantization is not None
    assert model.quantization.method == QuantMethod.FP8
    assert model.quantization.expert_method == QuantMethod.MXFP4
    parts = param_breakdown(_config("deepseek-ai--DeepSeek-V4-Flash_config.json"))
    # 256 experts x 3 x 4,096 x 2,048 x 43 layers
    assert parts.experts == 277_025_390_592
    # by hand: experts x (0.5 + 1/32) = 147,169,738,752; the other 6,304,046,208 body parameters at
    # 1 B (FP8); embed_tokens + lm_head 2 x 129,280 x 4,096 x 2 B (bf16) = 2,118,123,520
    assert _weights(model) == 147_169_738_752 + 6_304_046_208 + 2_118_123_520 == 155_591_908_480
    # TP 2 halves it: 72.45 GiB per rank (was 135.97 GiB with every expert at 1 B/param, a load OOM on a
    # 96 GB GH200 where vllm#44376 started it and sized 5.44 GiB of KV cache)
    assert _weights(model, tp=2) == 77_795_954_240
    assert round(_weights(model, tp=2) / GIB, 2) == 72.45


def test_deepseek_v4_flash_against_the_checkpoint_vllm_printed() -> None:
    # vllm#40802: "Checkpoint size: 148.66 GiB" (46 shards; 0.33.0 weight_utils._get_checkpoints_size_bytes
    # sums the files). The files also hold the MTP layer (num_nextn_predict_layers 1), which vLLM loads only
    # as a speculative draft: the rest must be more than nothing and at most about one more layer.
    model = _spec("deepseek-ai--DeepSeek-V4-Flash_config.json")
    checkpoint = _total("deepseek-ai/DeepSeek-V4-Flash")["checkpoint_file_gib"] * GIB
    planned = _weights(model)
    per_layer = (planned - 2_118_123_520) / model.num_layers  # 3,569,157,790 B per decoder layer
    rest = checkpoint - planned  # 4,030,551,076 B = 1.13 layers (MTP layer + its e/h projections)
    assert 0 < rest < 1.25 * per_layer


def test_deepseek_v4_nvfp4_experts_from_moe_quant_algo() -> None:
    # nvidia's checkpoint keeps quant_method fp8 and says moe_quant_algo NVFP4: ModelOptNvFp4FusedMoE,
    # 0.5 B + one fp8 scale per 16 values = 0.5625 B per expert parameter
    model = _spec(
        "nvidia--DeepSeek-V4-Flash-NVFP4_config.json", "nvidia--DeepSeek-V4-Flash-NVFP4_hf_quant_config.json"
    )
    assert model.quantization is not None
    assert model.quantization.expert_method == QuantMethod.NVFP4
    assert _weights(model) == 277_025_390_592 * 9 // 16 + 6_304_046_208 + 2_118_123_520 == 164_248_951_936


def test_deepseek_v4_low_rank_attention_and_compressors() -> None:
    # 0.33.0 models/deepseek_v4/attention.py, per layer: fused_wqa_wkv 4,096 x 1,024 (q_a) + q_norm 1,024 +
    # wq_b 1,024 x 64 x 512 = 37,749,760; k, v 4,096 x (512 + 512) = 4,194,304; wo_a 64 x 512 x 1,024 +
    # wo_b 8 x 1,024 x 4,096 = 67,108,864 -> 109,052,928 x 43 = 4,689,275,904. Compressors (compressor.py):
    # 21 ratio-4 layers x (4,096 x 2 x 2 x 512 + 4 x 2 x 512 + 512 = 8,393,216, plus an indexer
    # 1,024 x 64 x 128 + 4,096 x 64 + its compressor 4,096 x 4 x 128 + 4 x 2 x 128 + 128 = 10,749,056)
    # = 401,987,712; 20 ratio-128 layers x (4,096 x 2 x 512 + 128 x 512 + 512) = 85,207,040.
    parts = param_breakdown(_config("deepseek-ai--DeepSeek-V4-Flash_config.json"))
    assert parts.attention == 4_689_275_904 + 401_987_712 + 85_207_040
    # the card: 284B total, 13B activated
    assert round(parts.total / 1e9) == 284


def test_deepseek_r1_index_holds_one_mtp_layer_more() -> None:
    # total_size 688,586,727,753 holds layer 61 (the nextn layer: one MoE layer at FP8 with its own
    # embed_tokens and shared_head copies in bf16) that DeepseekV3ForCausalLM skips when loading.
    model = _spec("deepseek-ai--DeepSeek-R1_config.json")
    planned = _weights(model)
    assert planned == 672_879_762_432
    embeddings = 2 * 129_280 * 7_168 * 2  # embed_tokens + lm_head, bf16: 3,706,880,000
    moe_layer = (planned - embeddings) / 58  # the 58 MoE layers hold nearly all of the body
    rest = _total("deepseek-ai/DeepSeek-R1")["total_size"] - planned  # 15,706,965,321
    assert moe_layer < rest < moe_layer + embeddings + 0.5 * GIB


def test_qwen3_5_27b_gap_is_the_mtp_layer() -> None:
    # attn_output_gate: q_proj 5,120 x 24 x 256 x 2 on each of the 16 full-attention layers, plus their q_norm and
    # k_norm of head_dim 256 each (0.33.0 qwen3_next.py Qwen3NextAttention, which qwen3_5.py builds)
    model = _spec("Qwen--Qwen3.5-27B_config.json")
    parts = param_breakdown(_config("Qwen--Qwen3.5-27B_config.json"))
    assert parts.attention == 16 * (5_120 * 24 * 256 * 2 + 5_120 * 4 * 256 * 2 + 24 * 256 * 5_120 + 2 * 256)
    # the vision tower is counted from vision_config (loaded with the model, qwen3_5.py builds
    # Qwen3_VisionTransformer): 27 blocks x 15,239,504 + patch embed 3 x 2 x 16 x 16 x 1,152 + 1,152 =
    # 1,770,624 + position embeddings 2,304 x 1,152 = 2,654,208 + merger (LayerNorm 2 x 1,152, fc1 4,608^2 +
    # 4,608, fc2 4,608 x 5,120 + 5,120) 44,838,656 = 460,730,096
    assert model.vision_params == 460_730_096
    rest = _total("Qwen3.5/3.6-27B layout")["total_size"] - _weights(model)  # 849,415,168 B
    # by hand, bf16: what is left is the MTP layer, which vLLM does not load (full attention 104,857,600 + MLP
    # 3 x 5,120 x 17,408 + fc 2 x 5,120 x 5,120 = 424,673,280 and its norms)
    assert rest == pytest.approx(424_673_280 * 2, rel=1e-4)


def _indexed(name: str, total_size: int, hf_quant: dict[str, Any] | None = None) -> ModelSpec:
    return model_spec_from_hf_config(
        _config(name),
        name=name,
        safetensors_index={"metadata": {"total_size": total_size}},
        hf_quant_config=hf_quant,
    )


@pytest.mark.parametrize(
    ("checkpoint_id", "mtp_bytes"),
    [
        # MTP layer by hand (bf16): 27B full attention 104,857,600 + q/k norms 2 x 256 + MLP 267,386,880 + 2 norms
        # 10,240 = 372,255,232 decoder; fc 2 x 5,120^2 + 3 norms = 52,444,160 -> x 2 B = 849,398,784
        ("Qwen3.5/3.6-27B layout", 849_398_784),
        # 35B-A3B (hidden 2,048, 256 experts of 512, shared 512): attention 2,048 x (16 x 256 x 2 + 2 x 2 x
        # 256) + 16 x 256 x 2,048 + q/k norms 512 = 27,263,488; experts 256 x 3 x 2,048 x 512 = 805,306,368;
        # shared 3 x 2,048 x 512 + gate 2,048 = 3,147,776; router 524,288; 2 norms 4,096 -> 836,246,016 + fc
        # 2 x 2,048^2 + 3 x 2,048 = 8,394,752 -> 844,640,768 x 2 B (this comment once summed to 836,245,504, 512 short:
        # the q/k norms the planner did not count for qwen3_5 until heldout_0_33c found it)
        ("Qwen/Qwen3.6-35B-A3B", 1_689_281_536),
    ],
)
def test_index_total_size_less_the_mtp_layer_vllm_skips(checkpoint_id: str, mtp_bytes: int) -> None:
    # qwen3_5.py WeightsMapper({"mtp.": None}): the mtp.* tensors are in total_size but not loaded; the
    # vision tower is (not text-only). What is left equals the count from config.json alone (body + tower)
    row = _total(checkpoint_id)
    exact = _indexed(row["config"], row["total_size"]).weights_bytes_exact
    assert exact == row["total_size"] - mtp_bytes
    assert exact == pytest.approx(_weights(_spec(row["config"])), rel=1e-6)


def test_deepseek_r1_index_less_layer_61() -> None:
    # deepseek_v2.py load_weights skips layer 61 (get_spec_layer_idx_from_weight_name). Its decoder part
    # (11,507,286,016 parameters) is FP8 like the body: (688,586,727,753 - 2 x 129,280 x 7,168 x 2 -
    # 1,956,140,032 x 2) / (body + decoder) = 1.00042 B a parameter; eh_proj, norms and the embed_tokens /
    # shared_head.head copies (1,956,140,032) in bf16
    row = _total("deepseek-ai/DeepSeek-R1")
    model = _indexed(row["config"], row["total_size"])
    assert model.weights_bytes_exact == 673_162_303_026
    # within 0.05 % of the 672,879,762,432 B counted from config.json alone (was +2.33 % with total_size)
    assert _weights(model) / _weights(_spec(row["config"])) - 1 < 0.0005


def test_mtp_layer_left_unquantized_is_subtracted_in_bf16() -> None:
    # nvidia's DeepSeek-V3-0324-NVFP4 lists "model.layers.61*" in exclude_modules: its MTP layer is bf16
    # (2 B a parameter) whatever the body's bytes per parameter
    held = Path(__file__).resolve().parents[1] / "data" / "configs" / "heldout_0_33b"
    config = json.loads((held / "nvidia--DeepSeek-V3-0324-NVFP4_config.json").read_text(encoding="utf-8"))
    quant = json.loads(
        (held / "nvidia--DeepSeek-V3-0324-NVFP4_hf_quant_config.json").read_text(encoding="utf-8")
    )
    total = 400_000_000_000  # any total: the subtraction does not depend on it once the layer is bf16
    spec = model_spec_from_hf_config(
        config, name="v3", safetensors_index={"metadata": {"total_size": total}}, hf_quant_config=quant
    )
    assert spec.weights_bytes_exact == total - (11_507_286_016 + 1_956_140_032) * 2


def test_vision_tower_counted_and_dropped_in_text_only_mode() -> None:
    # Gemma-3-12B (tests/data/configs/real): SigLIP 27 x 15,239,504 + patch 3 x 14^2 x 1,152 + 1,152 +
    # 64^2 positions x 1,152 + post LayerNorm 2,304 = 416,866,032; projector 1,152 x 3,840 + 1,152 =
    # 4,424,832 -> 421,290,864 parameters, in the weights unless every modality is limited to 0
    # (text-only mode: the tower is not built, interfaces.py _mark_tower_model)
    real = Path(__file__).resolve().parents[1] / "data" / "configs" / "real"
    config = json.loads((real / "google__gemma-3-12b-it.config.json").read_text(encoding="utf-8"))
    model = model_spec_from_hf_config(config, name="gemma-3-12b")
    assert model.vision_params == 421_290_864

    def weights(limits: dict[str, int] | None) -> int:
        serve = ServeConfig(max_model_len=8_192, limit_mm_per_prompt=limits)
        est = estimate(model=model, device=find_device("h100"), serve=serve, vllm_version="0.33.0")
        return est.weights_bytes

    assert weights(None) - weights({"image": 0}) == 421_290_864 * 2


def test_one_excluded_module_leaves_the_mtp_layer_quantized() -> None:
    # "model.layers.61.mlp.gate" in an exclude list keeps the rest of layer 61 quantized; "model.layers.61*" or
    # "model.layers.61.*" leaves the whole layer in the checkpoint dtype
    assert not mtp_unquantized({"ignore": ["model.layers.61.mlp.gate"]}, num_layers=61)
    assert mtp_unquantized({"quantization": {"exclude_modules": ["model.layers.61*"]}}, num_layers=61)
    assert mtp_unquantized({"modules_to_not_convert": ["model.layers.61.*"]}, num_layers=61)
    assert not mtp_unquantized({"ignore": ["model.layers.610*"]}, num_layers=61)
