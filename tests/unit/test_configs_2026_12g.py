"""Rules the seventh held-apart set (tests/data/configs/heldout_0_33g, SOURCES.md) found.

Each number is worked by hand from the named vLLM release's code and the config.json in that directory
(SOURCES.md gives its repository and commit). The set's blind score is in its SOURCES.md.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from app.core.catalog import find_device
from app.core.defaults import default_prefix_caching
from app.core.errors import ConfigError
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.hf_config.registry import SSM_DTYPE_HOOK, has_config_hook, is_pooling_architecture
from app.core.specs import ServeConfig
from app.core.versions import rules_for

HELD = Path(__file__).resolve().parents[1] / "data" / "configs" / "heldout_0_33g"
EVIE = "Tencent--EVIE-Preview-4.5B"  # ColQwen3_5 on the Qwen3.5-4B hybrid: 24 Gated DeltaNet + 8 full layers


def _evie(**top: Any) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((HELD / f"{EVIE}_config.json").read_text(encoding="utf-8"))
    return copy.deepcopy(config) | top


def _plan(config: dict[str, Any], *, release: str, tp: int = 8) -> Any:
    return estimate(
        model=model_spec_from_hf_config(config, name="t"),
        device=find_device("h100"),
        serve=ServeConfig(tensor_parallel_size=tp, max_model_len=8_192),
        vllm_version=release,
    )


def test_colqwen3_5_without_a_retrieval_contract_is_refused_from_0_27() -> None:
    config = _evie()
    assert (
        "retrieval_attention_contract" not in config
        and "retrieval_attention_contract" not in config["text_config"]
    )
    # 0.27.0+ model_executor/models/config.py ColQwen3_5Config.verify_and_update_model_config, run by
    # config/model.py ModelConfig._try_verify_and_update_model_config: "ColQwen3.5 checkpoints must declare
    # retrieval_attention_contract as 'causal' or 'bidirectional'" (0.26.0's ColQwen3_5Config has no such hook)
    for release in ("0.27.0", "0.33.0"):
        with pytest.raises(ConfigError) as refused:
            _plan(config, release=release)
        assert refused.value.field == "retrieval_attention_contract"
    assert _plan(config, release="0.26.0").block_size > 0
    # a value outside {'causal', 'bidirectional'} is refused the same way ("unsupported or conflicting")
    with pytest.raises(ConfigError):
        _plan(_evie(retrieval_attention_contract="sideways"), release="0.33.0")


def test_colqwen3_5_is_a_pooling_hybrid_without_prefix_caching() -> None:
    # registry.py lists ColQwen3_5 among the late-interaction (pooling) models; config/model.py
    # is_prefix_caching_supported: a pooling model that is not decoder-only ("hybrid") has no prefix caching,
    # while the same layers as a generative Qwen3.5 have it (0.26.0+)
    pooling = model_spec_from_hf_config(_evie(retrieval_attention_contract="causal"), name="t")
    generative = model_spec_from_hf_config(_evie(architectures=["Qwen3_5ForConditionalGeneration"]), name="t")
    assert is_pooling_architecture("ColQwen3_5") and not is_pooling_architecture(
        "Qwen3_5ForConditionalGeneration"
    )
    rules = rules_for("0.33.0")
    assert not default_prefix_caching(model=pooling, rules=rules)
    assert default_prefix_caching(model=generative, rules=rules)


def test_colqwen3_5_reads_mamba_ssm_dtype_and_aligns_without_the_checkpoint_grid() -> None:
    config = _evie(retrieval_attention_contract="causal")
    assert (
        config["text_config"]["mamba_ssm_dtype"] == "float32" and config["text_config"]["dtype"] == "float32"
    )
    # ColQwen3_5Config derives from Qwen3_5ForConditionalGenerationConfig, whose verify_and_update_config sets
    # mamba_ssm_cache_dtype from mamba_ssm_dtype (models/config.py; MODELS_CONFIG_MAP maps ColQwen3_5 to it from
    # 0.19.0). GDN state at TP 8 (mamba_utils.gated_delta_net_state_shape): conv (16 x 128 x 2 + 32 x 128) / 8 =
    # 1,024 x 3 taps x 2 B (bf16: the float32 checkpoint is served in bf16) = 6,144; recurrent 32 / 8 x 128 x 128
    # x 4 B = 262,144 -> 268,288 B. Attention page a token: max(1, 4 // 8) x 2 x 256 x 2 B = 1,024.
    # No prefix caching -> mamba_cache_mode "none" (models/config.py MambaModelConfig): platforms/interface.py
    # _align_hybrid_block_size steps by max(FLASH_ATTN's 16, 16) only: 16 x cdiv(268,288, 16 x 1,024) = 272
    est = _plan(config, release="0.33.0")
    assert (est.block_size, est.groups[0].page_size_bytes) == (272, 272 * 1_024)
    # TP 2: conv 4,096 x 3 x 2 = 24,576 + recurrent 16 x 128 x 128 x 4 = 1,048,576 -> 1,073,152 B; page a token
    # 2 x 2 x 256 x 2 = 2,048: 16 x cdiv(1,073,152, 32,768) = 16 x 33 = 528
    est2 = _plan(config, release="0.33.0", tp=2)
    assert (est2.block_size, est2.groups[0].page_size_bytes) == (528, 528 * 2_048)
    # the generative Qwen3.5 with these layers: prefix caching on, "align" mode, lcm with FlashInfer GDN's 64:
    # 64 x cdiv(268,288, 64 x 1,024) = 320
    generative = _plan(_evie(architectures=["Qwen3_5ForConditionalGeneration"]), release="0.33.0")
    assert generative.block_size == 320


def test_the_qwen3_5_ssm_dtype_hook_follows_each_release_config_map() -> None:
    # scripts/gen_model_config_map.py over the wheels 0.13.0 ... 0.33.0: Qwen3_5ForConditionalGeneration from
    # 0.17.0, ColQwen3_5 0.19.0, Qwen3_5ForCausalLM 0.27.0, Qwen4Exp 0.29.0, D3ForSequenceClassification 0.33.0;
    # Nemotron-H (its own hook) and Qwen3-Next (none) are not in it
    assert has_config_hook(SSM_DTYPE_HOOK, architecture="ColQwen3_5", release="0.19.0")
    assert not has_config_hook(SSM_DTYPE_HOOK, architecture="Qwen3_5ForCausalLM", release="0.26.0")
    assert has_config_hook(SSM_DTYPE_HOOK, architecture="Qwen3_5ForCausalLM", release="0.27.0")
    assert has_config_hook(SSM_DTYPE_HOOK, architecture="D3ForSequenceClassification", release="0.33.0")
    assert not has_config_hook(SSM_DTYPE_HOOK, architecture="D3ForSequenceClassification", release="0.32.0")
    assert not has_config_hook(SSM_DTYPE_HOOK, architecture="Qwen3NextForCausalLM", release="0.33.0")


def _weights(config: dict[str, Any], hf_quant: dict[str, Any] | None = None, index: Any = None) -> int:
    from app.core.budget import weights_bytes_for_stage

    spec = model_spec_from_hf_config(config, name="w", hf_quant_config=hf_quant, safetensors_index=index)
    whole = {
        "layer_range": (0, spec.num_layers),
        "is_first": True,
        "is_last": True,
    }  # one device, every layer
    return weights_bytes_for_stage(model=spec, serve=ServeConfig(tensor_parallel_size=1), **whole)  # type: ignore[arg-type]


GEMMA4_CT = "Ade7121976--split_models"  # gemma-4-26B-A4B, compressed-tensors int4 group 32


def test_gemma4_moe_layers_keep_their_dense_mlp() -> None:
    from app.core.hf_config import count_params, param_breakdown

    config = json.loads((HELD / f"{GEMMA4_CT}_config.json").read_text(encoding="utf-8"))
    # 0.33.0 models/gemma4.py Gemma4DecoderLayer: self.mlp = Gemma4MLP(intermediate_size) in every layer, the
    # experts (128 x 704) beside it when num_experts is set: 30 x 3 x 2,816 x 2,112 = 535,265,280 dense-MLP
    # parameters (the index stores them: model.language_model.layers.N.mlp.{gate,up,down}_proj.weight)
    parts = param_breakdown(config)
    assert parts.mlp == 30 * 3 * 2_816 * 2_112 == 535_265_280
    assert parts.experts == 30 * 128 * 3 * 2_816 * 704
    # text total: embedding 262,144 x 2,816 (tied) + attention 1,124,597,760 + MLP + experts + routers
    # 30 x 2,816 x 128 + norms 171,776 = 25,247,031,040 (the card's "25.2B"; 24.71B without the MLP)
    assert count_params(config)[0] == 25_247_031_040


def test_modules_a_quantized_checkpoint_leaves_unconverted_stay_16_bit() -> None:
    config = json.loads((HELD / f"{GEMMA4_CT}_config.json").read_text(encoding="utf-8"))
    index = json.loads((HELD / f"{GEMMA4_CT}_model.safetensors.index.json").read_text(encoding="utf-8"))
    # compressed-tensors ignore lists every layer's mlp.{gate,up,down}_proj and router.proj (vLLM 0.33.0
    # compressed_tensors.py should_ignore_layer -> UnquantizedLinearMethod): 535,265,280 + 10,813,440 of the
    # 24,508,833,536-parameter body stay bf16; the vision tower entries are sized apart
    spec = model_spec_from_hf_config(config, name="g")
    assert spec.quantization is not None
    assert spec.quantization.quantized_fraction == pytest.approx(
        1 - (535_265_280 + 10_813_440) / 24_508_833_536
    )
    # from the parameters alone the weights land on the index: 17,193,190,864 B against total_size
    # 17,191,252,228 (+0.011 %; the planner gave 16,107,115,984, -6.3 %, before both fixes)
    assert index["metadata"]["total_size"] == 17_191_252_228
    assert abs(_weights(config) - 17_191_252_228) < 0.0002 * 17_191_252_228


def test_unconverted_names_follow_each_formats_matching() -> None:
    from app.core.hf_config.params import ParamBreakdown
    from app.core.hf_config.quant_ignore import unconverted_fraction

    parts = ParamBreakdown(
        embedding=10, lm_head=10, attention=400, mixer=300, mlp=300, experts=0, experts_active=0,
        router=0, norms=0, is_moe=False,
    )  # fmt: skip
    body = 1_000

    def left(names: list[str]) -> float:
        return unconverted_fraction({"ignore": names}, breakdown=parts, num_layers=4, heads=8, kv_heads=2)

    # a ModelOpt fnmatch pattern or a compressed-tensors re: covers the whole block in every layer it names
    assert left(["model.layers.0.self_attn*", "model.layers.1.self_attn*"]) == pytest.approx(
        400 * 2 / 4 / body
    )
    assert left(["re:.*self_attn.*"]) == pytest.approx(400 / body)
    # a bare parent name matches no linear (compressed_tensors/utils.py check_equal_or_regex_match: exact names)
    assert left(["model.layers.0.linear_attn", "model.layers.0.mlp"]) == 0.0
    # leaf projections: q and o are heads x head wide, k and v KV heads x head: k = 2 / (2 x (8 + 2)) = 1/10
    assert left([f"model.layers.{i}.self_attn.k_proj" for i in range(4)]) == pytest.approx(400 / 10 / body)
    assert left([f"model.layers.{i}.mlp.down_proj" for i in range(4)]) == pytest.approx(300 / 3 / body)
    # lm_head, embeddings and towers are not the body
    assert left(["lm_head", "model.embed_tokens", "model.visual.blocks.0.attn.qkv"]) == 0.0


def test_modelopt_exclude_names_match_as_substrings() -> None:
    from app.core.hf_config.params import ParamBreakdown
    from app.core.hf_config.quant_ignore import unconverted_fraction

    parts = ParamBreakdown(
        embedding=0, lm_head=0, attention=400, mixer=0, mlp=600, experts=0, experts_active=0,
        router=0, norms=0, is_moe=False,
    )  # fmt: skip
    # 0.33.0 modelopt.py is_layer_excluded: besides exact / fnmatch matches, ``exclude_module in prefix``, so
    # a bare "model.layers.1.self_attn" excludes that layer's qkv_proj and o_proj (2 of 4 layers: 400 / 2)
    cfg = {"quantization": {"exclude_modules": ["model.layers.0.self_attn", "model.layers.1.self_attn"]}}
    left = unconverted_fraction(cfg, breakdown=parts, num_layers=4, heads=8, kv_heads=2)
    assert left == pytest.approx(200 / 1_000)
    # the same names in compressed-tensors' ignore match no linear (exact names or re:)
    assert (
        unconverted_fraction(
            {"ignore": cfg["quantization"]["exclude_modules"]},
            breakdown=parts,
            num_layers=4,
            heads=8,
            kv_heads=2,
        )
        == 0.0
    )
