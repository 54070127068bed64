"""Config shapes and checkpoint layouts the fourth held-apart set (tests/data/configs/heldout_0_33d) found.

Each number is worked by hand from vLLM 0.33.0's code (the file and function named in the test) and the
published config.json / model.safetensors.index.json in that directory (SOURCES.md gives each one's repository
and commit). The set's blind score is in its SOURCES.md; these tests pin the general rules, not those files:
every test builds its own config where a smaller one shows the rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.budget import weights_bytes_for_stage
from app.core.catalog import find_device
from app.core.errors import ConfigError
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.specs import LayerKind, ServeConfig

HELD = Path(__file__).resolve().parents[1] / "data" / "configs" / "heldout_0_33d"


def _load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((HELD / name).read_text(encoding="utf-8"))
    return loaded


def _plan(config: dict[str, Any], *, tp: int, index: dict[str, Any] | None = None) -> Any:
    spec = model_spec_from_hf_config(config, name="t", safetensors_index=index)
    return spec, estimate(
        model=spec,
        device=find_device("h100"),
        serve=ServeConfig(tensor_parallel_size=tp, max_model_len=8_192),
        vllm_version="0.33.0",
    )


def test_lfm2_full_attn_idxs_gives_the_conv_layers() -> None:
    # LFM2-1.2B's config.json has `full_attn_idxs` [2, 5, 8, 10, 12, 14] and no `layer_types`; transformers'
    # Lfm2Config (configuration_lfm2.py __post_init__) builds layer_types from it, "conv" elsewhere. So 10 ShortConv
    # layers + 6 attention layers of 8 KV heads x 64 (2,048 / 32). TP 8: 1 KV head -> 256 B a token-layer, 6 x 256
    # = 1,536 B a token; the conv state 2,048 / 8 x (3 - 1) x 2 B = 1,024 fits one 16-token page of 4,096; groups of
    # size 6 (10 >= 1.5 x 6): conv in two groups of 5, full 6 (v1/core/kv_cache_planning.py
    # _get_kv_cache_groups_uniform_page_size).
    spec, est = _plan(_load("LiquidAI--LFM2-1.2B_config.json"), tp=8)
    assert spec.layer_kinds.count(LayerKind.MAMBA) == 10
    assert [i for i, kind in enumerate(spec.layer_kinds) if kind == LayerKind.FULL] == [2, 5, 8, 10, 12, 14]
    assert est.kv_bytes_per_token == 1_536
    assert (est.block_size, est.groups[0].page_size_bytes) == (16, 4_096)
    assert [[g.kind, g.num_layers] for g in est.groups] == [["mamba", 5], ["mamba", 5], ["full", 6]]


def test_lfm2_full_attn_idxs_out_of_range_names_the_field() -> None:
    config = _load("LiquidAI--LFM2-1.2B_config.json") | {"full_attn_idxs": [2, -1]}
    with pytest.raises(ConfigError, match="full_attn_idxs"):
        model_spec_from_hf_config(config, name="t")


def test_deepseek_v2_with_zero_qk_dims_is_plain_multi_head_attention() -> None:
    # DeepSeek-OCR-2's language model: DeepSeek-V2 with kv_lora_rank null and qk_nope = qk_rope = v_head = 0.
    # models/deepseek_v2.py DeepseekV2DecoderLayer: use_mha when both qk dims are 0 -> DeepseekAttention, 10 KV heads
    # of 1,280 / 10 = 128 (model_arch_config_convertor.py get_head_size: a head_dim of 0 counts as unset). TP 1:
    # 10 x 2 x 128 x 2 B = 5,120 B a token-layer, x 12 layers = 61,440 B a token; page 16 x 5,120 = 81,920.
    _, est = _plan(_load("sen-ye--DeepSeek-OCR2_config.json"), tp=1)
    assert est.kv_bytes_per_token == 61_440
    assert est.groups[0].page_size_bytes == 81_920
    assert [[g.kind, g.num_layers] for g in est.groups] == [["full", 12]]


def _spec_with_index(stem: str) -> Any:
    return model_spec_from_hf_config(
        _load(f"{stem}_config.json"),
        name=stem,
        safetensors_index=_load(f"{stem}_model.safetensors.index.json"),
    )


def test_an_index_whose_total_size_is_0_is_planned_from_the_config() -> None:
    # A Qwen3-VL-8B (Cosmos-Reason2) copy's index says "total_size": 0. vLLM never reads total_size (its loader
    # reads the shards), so the config is served: plan it from the parameter count, with no exact size.
    spec = _spec_with_index("nvidia--Cosmos-Reason2-8B")
    assert spec.weights_bytes_exact is None
    index = _load("nvidia--Cosmos-Reason2-8B_model.safetensors.index.json")
    with pytest.raises(ConfigError, match="safetensors_index"):
        model_spec_from_hf_config(
            _load("nvidia--Cosmos-Reason2-8B_config.json"),
            name="t",
            safetensors_index=index | {"metadata": {"total_size": -1}},
        )


def test_mimo_mtp_layers_stored_as_model_mtp_layers_come_off_total_size() -> None:
    # models/mimo.py: WeightsMapper({"model.mtp_layers.": None}) drops the stored MTP layer. Its parameters: attention
    # q 4,096^2 + k, v 2 x 4,096 x 1,024 + o 4,096^2 + q/k/v biases 6,144 = 41,949,184 (Qwen2 attention: no o bias,
    # though config.json says attention_bias: true, qwen2.py Qwen2Attention), MLP 3 x 4,096 x 11,008 = 135,266,304,
    # input_proj 8,192 x 4,096 = 33,554,432, five norms 20,480: 210,790,400 x 2 B = 421,580,800 off 15,666,819,072.
    spec = _spec_with_index("jj8127--mimo_kor")
    assert spec.weights_bytes_exact == 15_666_819_072 - 421_580_800
    # the body: 36 x (41,949,184 + 135,266,304 + 8,192 norms) + 2 x 151,680 x 4,096 + 4,096 = 7,622,619,136 = its
    # bf16 bytes, the index's total less the MTP layer, / 2
    assert spec.params_total == 7_622_619_136 == (15_666_819_072 - 421_580_800) // 2


def test_stored_rotary_buffers_are_not_loaded() -> None:
    # openPangu-Embedded-7B stores model.layers.N.self_attn.rotary_emb.inv_freq (34 of them, 128 / 2 float32 = 256 B);
    # models/utils.py AutoWeightsLoader maps "rotary_emb.inv_freq" to None: 16,061,784,576 - 34 x 256.
    assert _spec_with_index("IDLEOAK--openPangu-Embedded").weights_bytes_exact == 16_061_784_576 - 8_704


def test_a_tied_head_stored_twice_is_loaded_once() -> None:
    # falcon-180B-chat: config.json has no tie_word_embeddings, falcon.py defaults it to True, and the checkpoint
    # stores lm_head.weight beside transformer.word_embeddings.weight; AutoWeightsLoader loads one of the aliases.
    # 359,045,130,240 - 65,024 x 14,848 x 2 B = 357,114,177,536.
    spec = _spec_with_index("tiiuae--falcon-180B-chat")
    assert spec.weights_bytes_exact == 359_045_130_240 - 1_930_952_704
    # parameters (tied): 80 x (qkv 14,848 x 15,872 + dense 14,848^2 + MLP 2 x 14,848 x 59,392 + ln_attn, ln_mlp
    # weight and bias 4 x 14,848) + 65,024 x 14,848 + ln_f 2 x 14,848 = 178,557,088,768, the untied total_size / 2
    assert spec.params_total == 178_557_088_768 == 359_045_130_240 // 2 - 65_024 * 14_848


def test_falcon_7b_has_one_layernorm_a_layer() -> None:
    # falcon.py FalconDecoderLayer: parallel_attn without the new decoder -> one input_layernorm (weight + bias).
    # falcon-7b: 32 x (qkv 4,544 x (71 + 2) x 64 + dense 4,544^2 + MLP 2 x 4,544 x 18,176 + 2 x 4,544)
    # + 65,024 x 4,544 (tied) + ln_f 2 x 4,544 = 6,921,720,704 (the published 7B's count).
    config = json.loads((HELD.parent / "falcon-7b.config.json").read_text(encoding="utf-8"))
    spec = model_spec_from_hf_config(config, name="tiiuae/falcon-7b")
    assert spec.params_total == 6_921_720_704


def test_mlp_bias_counts_the_mlp_biases() -> None:
    # llama.py LlamaMLP bias=getattr(config, "mlp_bias", False). granite-3b-code-instruct-128k (mlp_bias and
    # attention_bias true, tied): 32 x (q/k/v/o 4 x 2,560^2 + their biases 4 x 2,560 + MLP 3 x 2,560 x 10,240 + MLP
    # biases 2 x 10,240 + 2,560 + norms 2 x 2,560) + 49,152 x 2,560 + 2,560 = 3,482,503,680 = total_size / 2.
    spec = _spec_with_index("ibm-granite--granite-3b-code-instruct-128k")
    assert spec.params_total == 3_482_503_680 == 6_965_007_360 // 2


def test_a_float32_checkpoint_is_loaded_in_bf16() -> None:
    # Reflection-Llama-3.1-70B is stored in float32: total_size 282,215,219,200 = 4 x 70,553,804,800 parameters.
    # --dtype auto downcasts float32 to bfloat16 on SM80+ (config/model.py _resolve_auto_dtype), so one device at
    # TP 1 holds 2 x 70,553,804,800 = 141,107,609,600 B: the body 282,215,219,200 - 2 x 128,262 x 8,192 x 4 B stored,
    # halved, plus embedding and lm_head 2 x 1,050,722,304 x 2 B.
    spec = _spec_with_index("mattshumer--Reflection-Llama-3.1-70B")
    serve = ServeConfig(tensor_parallel_size=1)
    loaded = weights_bytes_for_stage(
        model=spec, serve=serve, layer_range=(0, spec.num_layers), is_first=True, is_last=True
    )
    assert loaded == 141_107_609_600


def test_model_max_length_replaces_the_minimum_of_the_length_keys() -> None:
    # model_arch_config_convertor.py derive_max_model_len_and_key (0.19.0 - 0.33.0; config/model.py in 0.11.0):
    # the smallest of max_position_embeddings, n_positions, ... and then "For Command-R / Cohere, Cohere2 models"
    # `if tmp_max_len := getattr(hf_text_config, "model_max_length", None): derived = tmp_max_len`, for any config
    # (Command-R's has max_position_embeddings 8,192 and model_max_length 131,072). ALLaM-7B's config (4,096) with a
    # model_max_length of 131,072 derives 131,072; with 2,048, 2,048.
    config = _load("humain-ai--ALLaM-7B-Instruct-preview_config.json") | {"model_max_length": 131072}
    assert model_spec_from_hf_config(config, name="t").max_model_len_derived == 131_072
    smaller = config | {"model_max_length": 2048}
    assert model_spec_from_hf_config(smaller, name="t").max_model_len_derived == 2_048


def test_an_mlx_quantized_config_is_refused_naming_quant_method() -> None:
    # mlx-community's Qwen3-14B 4-bit: quantization_config {"group_size": 64, "bits": 4} and no quant_method.
    # model_arch_config_convertor.py _normalize_quantization_config makes the method "", no method's
    # override_quantization_method claims it (config/model.py _verify_quantization), so vLLM would load the packed
    # uint32 weights as bf16 and fail: refused, saying why.
    with pytest.raises(ConfigError) as err:
        model_spec_from_hf_config(_load("root-hypercube--Qwen3-14B-MLX-4bit_config.json"), name="t")
    assert err.value.field == "quantization_config.quant_method"
    assert "MLX" in str(err.value)


@pytest.mark.parametrize(("bits", "refused"), [(4, False), (8, True), (3, True)])
def test_awq_takes_4_bit_weights_only(bits: int, refused: bool) -> None:
    # 0.19.0 awq.py: "Currently, only 4-bit weight quantization is supported for AWQ"; 0.33.0 auto_awq.py
    # AutoAWQConfig TYPE_MAP = {4: uint4}, anything else "Unsupported num_bits".
    quant = {"quant_method": "awq", "bits": bits, "group_size": 128, "zero_point": True, "version": "gemm"}
    config = _load("tt-metal--qwen3-0.6b-base-think-sft_config.json") | {"quantization_config": quant}
    if refused:
        with pytest.raises(ConfigError) as err:
            model_spec_from_hf_config(config, name="t")
        assert err.value.field == "quantization_config.bits"
    else:
        spec = model_spec_from_hf_config(config, name="t")
        assert spec.quantization is not None and spec.quantization.group_size == 128
