"""Round 10 (issue 22) config rules that heldout_0_33j's blind run showed, each read from the vLLM 0.33.0 wheel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.catalog import find_device
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.hf_config.params import ParamBreakdown
from app.core.hf_config.quant_ignore import unconverted_fraction
from app.core.specs import ServeConfig

DATA = Path(__file__).resolve().parents[1] / "data" / "configs"
LLAMA_BODY = {
    "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "max_position_embeddings": 8192, "vocab_size": 128256,
}  # fmt: skip


def _plan(cfg: dict[str, object]) -> object:
    spec = model_spec_from_hf_config(cfg, name="x", vllm_version="0.33.0")
    return estimate(
        model=spec, device=find_device("h100"), serve=ServeConfig(max_model_len=8192), vllm_version="0.33.0"
    )


def test_no_architectures_and_a_remote_code_model_type_is_vllms_no_architectures_error() -> None:
    # 0.33.0 transformers_utils/config.py get_config: a config without `architectures` gets one only from
    # transformers' MODEL_MAPPING_NAMES[model_type]; "llama3v" is defined only by the checkpoint's auto_map code, so
    # architectures stay empty and models/registry.py inspect_model_cls raises "No model architectures are specified"
    cfg = LLAMA_BODY | {"model_type": "llama3v", "auto_map": {"AutoConfig": "config.Config"}}
    with pytest.raises(PlannerError, match="No model architectures are specified"):
        _plan(cfg)


def test_no_architectures_with_a_transformers_model_type_is_still_planned() -> None:
    # "llama" is a transformers model type: get_config fills architectures from MODEL_MAPPING_NAMES, so this is
    # not refused; 8 KV heads x 128 x 2 x 2 B x 32 layers = 131,072 B a token at TP 1
    assert _plan(LLAMA_BODY | {"model_type": "llama"}).kv_bytes_per_token == 131_072  # type: ignore[attr-defined]


def test_first_generation_chatglm_layout_is_refused_naming_its_2d_positions() -> None:
    # ChatGLM-6B v1 (THUDM/chatglm-6b config keys): 2-D rotary, 130,528-row vocabulary. vLLM 0.33.0 models/chatglm.py
    # is ChatGLM2+'s GLMTransformer (1-D rotary; padded_vocab_size 65,024 by default in
    # transformers_utils/configs/chatglm.py), so the weights do not map
    v1 = {
        "architectures": ["ChatGLMForConditionalGeneration"], "model_type": "chatglm", "hidden_size": 4096,
        "inner_hidden_size": 16384, "num_attention_heads": 32, "num_layers": 28, "max_sequence_length": 2048,
        "position_encoding_2d": True, "vocab_size": 130528,
    }  # fmt: skip
    with pytest.raises(PlannerError, match="position_encoding_2d"):
        _plan(v1)


def test_chatglm2_plus_layout_still_plans() -> None:
    # glm-4-9b-chat's keys: multi_query_group_num 2 x kv_channels 128, 40 layers -> 2 x 2 x 128 x 2 B x 40 = 40,960
    # B a token at TP 1
    glm4 = {
        "architectures": ["ChatGLMModel"], "model_type": "chatglm", "hidden_size": 4096, "ffn_hidden_size": 13696,
        "kv_channels": 128, "multi_query_attention": True, "multi_query_group_num": 2, "num_attention_heads": 32,
        "num_layers": 40, "num_hidden_layers": 40, "padded_vocab_size": 151552, "seq_length": 131072,
    }  # fmt: skip
    assert _plan(glm4).kv_bytes_per_token == 40_960  # type: ignore[attr-defined]


PARTS = ParamBreakdown(
    embedding=0, lm_head=0, attention=400, mixer=0, mlp=600, experts=0, experts_active=0,
    router=0, norms=0, is_moe=False,
)  # fmt: skip


def _gptq_left(dynamic: dict[str, object]) -> float:
    cfg = {"quant_method": "gptq", "bits": 4, "group_size": 128, "dynamic": dynamic}
    return unconverted_fraction(cfg, breakdown=PARTS, num_layers=4, heads=8, kv_heads=2)


def test_gptq_dynamic_negative_keys_leave_their_modules_unquantized() -> None:
    # 0.33.0 utils/gptq_utils.py get_dynamic_override: "-:<regex>" re.match-ed against the module prefix returns
    # False and get_linear_quant_method builds UnquantizedLinearMethod. Layer 0's qkv_proj, o_proj, gate_up_proj,
    # down_proj all match: (400 + 600) / 4 layers = 250 of the 1,000 body
    assert _gptq_left({"-:.*layers\\.0\\..*": {}}) == pytest.approx(0.25)
    # re.match anchors at the start only: "model.layers.1.mlp" matches layer 1's gate_up_proj and down_proj
    # (layers 10-19 do not exist in 4): 600 / 4 = 150
    assert _gptq_left({"-:model.layers.1.mlp": {}}) == pytest.approx(0.15)


def test_gptq_dynamic_first_matching_key_decides_and_prefixes_are_vllms_fused_modules() -> None:
    # keys are walked in order: the MLP matches the positive "+:" key first (quantized, 8 bits), so the catch-all
    # negative leaves only the attention, 400 of 1,000
    assert _gptq_left({"+:.*mlp.*": {"bits": 8}, "-:.*": {}}) == pytest.approx(0.4)
    # vLLM's prefix is the fused self_attn.qkv_proj: a key naming q_proj alone matches no module
    assert _gptq_left({"-:.*self_attn\\.q_proj": {}}) == 0.0
    # a GPTQ config without negative keys leaves nothing (positive overrides only change bits)
    assert _gptq_left({"+:.*": {"bits": 8}}) == 0.0


def _plan_at(cfg: dict[str, object], version: str) -> tuple[Any, Any]:
    spec = model_spec_from_hf_config(cfg, name="fuyu", vllm_version=version)
    est = estimate(
        model=spec,
        device=find_device("h100"),
        serve=ServeConfig(tensor_parallel_size=8, max_model_len=8192),
        vllm_version=version,
    )
    return spec, est


def test_fuyu_bare_persimmon_text_config_takes_persimmon_class_defaults_where_vllm_serves_it() -> None:
    # adept/fuyu-8b's config.json nests text_config {"model_type": "persimmon"} only; transformers' FuyuConfig
    # builds PersimmonConfig(**text_config), whose declared defaults (configuration_persimmon.py) are 36 layers,
    # 64 heads of 4096 / 64 = 64, 16,384 positions. vLLM 0.22.0 fuyu.py runs PersimmonForCausalLM on that text
    # config. H100 TP 8: 64 / 8 = 8 KV heads x 2 x 64 x 2 B x 36 layers = 73,728 B a token
    cfg = json.loads(
        (DATA / "heldout_0_33h" / "ypkang--adept-fuyu-8b_config.json").read_text(encoding="utf-8")
    )
    spec, est = _plan_at(cfg, "0.22.0")
    assert (spec.num_layers, spec.max_model_len_derived, est.kv_bytes_per_token) == (36, 16384, 73_728)
    # PersimmonMLP is dense_h_to_4h -> relu2 -> dense_4h_to_h (two matrices): embeddings + lm_head
    # 2 x 262,144 x 4,096 = 2,147,483,648; 36 x (4 x 4,096^2 + 2 x 4,096 x 16,384) = 7,247,757,312; LayerNorm weights
    # 36 x 2 x 4,096 + 4,096 = 299,008 -> 9,395,539,968 (the index's 9,408,238,592 adds biases and the patch embed)
    assert spec.params_total == 9_395_539_968
    with pytest.raises(PlannerError, match=r"until v0\.25\.0"):  # registry.py _PREVIOUSLY_SUPPORTED_MODELS
        _plan_at(cfg, "0.33.0")


def test_gptq_dynamic_work_is_bounded_for_a_hostile_paste() -> None:
    # 5,000 long keys, a catch-all negative last: only the first 32 keys are read (the negative is past them ->
    # nothing), and with it moved inside them the scan stops at 50,000 // (32 keys x 5 modules) = 312 layers of
    # 10,000, so 312 / 10,000 of the body is counted (work counted, not timed)
    keys = {f"+:.*x{i}(a|b)*c.*": {} for i in range(5000)}
    assert (
        unconverted_fraction(
            {"quant_method": "gptq", "dynamic": keys | {"-:.*": {}}},
            breakdown=PARTS,
            num_layers=10_000,
            heads=8,
            kv_heads=2,
        )
        == 0.0
    )
    inside = {f"+:.*x{i}(a|b)*c.*": {} for i in range(31)} | {"-:.*": {}}
    assert unconverted_fraction(
        {"quant_method": "gptq", "dynamic": inside}, breakdown=PARTS, num_layers=10_000, heads=8, kv_heads=2
    ) == pytest.approx(312 / 10_000)


def test_gptq_dynamic_key_with_a_lone_surrogate_matches_nothing_instead_of_a_500() -> None:
    # review10: the JSON escape "\ud800" decodes to a lone surrogate, which RE2's UTF-8 encoder raises
    # UnicodeEncodeError on (a 500 on /api/estimate). vLLM's re would compile it and match no module name, so
    # the key leaves nothing unquantized; the layer-0 key beside it still does: 1,000 / 4 layers = 250 -> 0.25
    assert _gptq_left({"-:\ud800": {}}) == 0.0
    assert _gptq_left({"-:\ud800": {}, "-:.*layers\\.0\\..*": {}}) == pytest.approx(0.25)
