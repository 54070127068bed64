"""Model-type and architecture tests that matched by substring or suffix and caught the wrong models (issue 22).

Every config here is hand-made and minimal (no public checkpoint of the shape was found in the repository's data): each
keeps only the fields the rule under test reads, and the expected values come from the vLLM 0.33.0 wheel and the
transformers config classes named beside them.
"""

from __future__ import annotations

from typing import Any

import pytest

from app.core.errors import ConfigError
from app.core.hf_config import model_spec_from_hf_config
from app.core.hf_config.registry import is_multimodal_architecture, is_pooling_architecture
from app.core.specs import LayerKind, SpeculativeConfig

F, S = LayerKind.FULL, LayerKind.SLIDING

# Hand-made Gemma-3n text tower with no `layer_types` and no `sliding_window_pattern`.
GEMMA3N_TEXT: dict[str, Any] = {
    "architectures": ["Gemma3nForCausalLM"],
    "model_type": "gemma3n_text",
    "hidden_size": 512,
    "intermediate_size": 1024,
    "num_attention_heads": 4,
    "num_key_value_heads": 1,
    "head_dim": 128,
    "num_hidden_layers": 10,
    "vocab_size": 32000,
    "sliding_window": 512,
    "max_position_embeddings": 32768,
    "torch_dtype": "bfloat16",
}


def test_gemma3n_default_layer_pattern_is_its_own_not_gemma3s() -> None:
    # vLLM 0.33.0 model_executor/models/gemma3n.py Gemma3nAttention: `config.layer_types[layer_idx]`; transformers
    # (4.57.6 and 5.18.0) Gemma3nTextConfig fills an absent layer_types as full iff (i + 1) % 5 == 0, so of 10 layers
    # 4 and 9 are full. `"gemma3" in model_type` took gemma3n_text for Gemma-3 and used Gemma3TextConfig's
    # sliding_window_pattern 6 instead (layer 5 full only).
    spec = model_spec_from_hf_config(GEMMA3N_TEXT, name="hand-made gemma3n")
    assert spec.layer_kinds == (S, S, S, S, F, S, S, S, S, F)


def test_gemma3_default_layer_pattern_still_six() -> None:
    # transformers Gemma3TextConfig: sliding_window_pattern defaults to 6 -> of 12 layers 5 and 11 are full.
    config = {**GEMMA3N_TEXT, "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text"}
    config["num_hidden_layers"] = 12
    spec = model_spec_from_hf_config(config, name="hand-made gemma3")
    assert spec.layer_kinds == (S, S, S, S, S, F, S, S, S, S, S, F)


def test_multimodal_forcausallm_keeps_its_tower_caveat() -> None:
    # vLLM 0.33.0 model_executor/models/registry.py lists DeepseekVLV2ForCausalLM in _MULTIMODAL_MODELS and
    # deepseek_vl2.py DeepseekVLV2ForCausalLM.__init__ builds `self.vision` from config.vision_config: the name ends in
    # ForCausalLM but the tower is loaded, so the planner (which does not count this layout) must say so.
    config = {
        "architectures": ["DeepseekVLV2ForCausalLM"],
        "model_type": "deepseek_vl_v2",
        "language_config": {
            "model_type": "deepseek_v2",
            "hidden_size": 1024,
            "intermediate_size": 2048,
            "num_attention_heads": 8,
            "num_key_value_heads": 8,
            "num_hidden_layers": 4,
            "vocab_size": 32000,
            "max_position_embeddings": 4096,
            "use_mla": False,
        },
        "vision_config": {"model_type": "vision", "layers": 4, "width": 1152},
        "torch_dtype": "bfloat16",
    }
    spec = model_spec_from_hf_config(config, name="hand-made deepseek-vl2")
    assert spec.uncounted_towers == ("vision_config (vision)",)


def test_text_only_forcausallm_still_has_no_tower() -> None:
    # Gemma3ForCausalLM is in _TEXT_GENERATION_MODELS (0.33.0 registry.py): a text-only export that kept its
    # vision_config loads no tower (gemma3.py builds none), so nothing is uncounted.
    config = {**GEMMA3N_TEXT, "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text"}
    config["vision_config"] = {"model_type": "siglip_vision_model"}
    assert model_spec_from_hf_config(config, name="hand-made gemma3 text").uncounted_towers == ()


@pytest.mark.parametrize(
    ("architecture", "multimodal"),
    [
        ("DeepseekVLV2ForCausalLM", True),  # 0.33.0 registry.py _MULTIMODAL_MODELS
        ("Phi4MMForCausalLM", True),  # same
        ("Gemma3ForConditionalGeneration", True),
        ("Gemma3ForCausalLM", False),  # _TEXT_GENERATION_MODELS
        ("NotARegisteredForCausalLM", False),
    ],
)
def test_is_multimodal_architecture(architecture: str, multimodal: bool) -> None:
    assert is_multimodal_architecture(architecture) is multimodal


# Hand-made Step5 text config: Step5Config's fields (0.33.0 transformers_utils/configs/step5.py), shrunk.
STEP5: dict[str, Any] = {
    "architectures": ["Step5ForCausalLM"],
    "model_type": "step5",
    "hidden_size": 1024,
    "intermediate_size": 2048,
    "num_attention_heads": 8,
    "num_attention_groups": 2,
    "head_dim": 128,
    "num_hidden_layers": 4,
    "vocab_size": 32000,
    "max_position_embeddings": 4096,
    "torch_dtype": "bfloat16",
}


@pytest.mark.parametrize("sparse_config", ["absent", None])
def test_step5_without_sparse_config_is_refused(sparse_config: object) -> None:
    # vLLM 0.33.0 (and 0.34.0) models/step5/nvidia/model.py Step5DecoderLayer.__init__: `if not
    # checkpoint_has_step5_sparse_config(config): raise NotImplementedError("Step5 requires a checkpoint with a
    # sparse_config section; dense-only checkpoints are not supported.")`; config.py _get_sparse_config_section reads
    # `sparse_config` and treats None as absent.
    config = dict(STEP5) if sparse_config == "absent" else {**STEP5, "sparse_config": sparse_config}
    with pytest.raises(ConfigError) as caught:
        model_spec_from_hf_config(config, name="hand-made step5")
    assert caught.value.field == "sparse_config"
    assert "dense-only" in str(caught.value)


def test_step5_vl_reads_sparse_config_from_its_text_config() -> None:
    # Step5ForConditionalGeneration (0.33.0 models/step5/nvidia/vl.py) builds the Step5 text model from text_config
    # (Step5VLConfig.text_config is a Step5Config), so the section is looked for there.
    text = {k: v for k, v in STEP5.items() if k != "architectures"}
    top = {"architectures": ["Step5ForConditionalGeneration"], "model_type": "step5_vl", "text_config": text}
    with pytest.raises(ConfigError) as caught:
        model_spec_from_hf_config(top, name="hand-made step5-vl")
    assert caught.value.field == "text_config.sparse_config"
    with_section = {**top, "text_config": {**text, "sparse_config": {"enabled": True}}}
    assert model_spec_from_hf_config(with_section, name="hand-made step5-vl").num_layers == 4


@pytest.mark.parametrize("legacy", ["step5_sparse_config", "step3p5_sparse_config"])
def test_step5_legacy_sparse_section_is_refused(legacy: str) -> None:
    # 0.33.0 models/step5/nvidia/config.py _UNSUPPORTED_SPARSE_SECTION_NAMES: either key set raises
    # NotImplementedError("Step5 reads the sparse layout from sparse_config; <name> is unsupported.") even when
    # sparse_config is there too.
    config = {**STEP5, "sparse_config": {"enabled": True}, legacy: {"enabled": True}}
    with pytest.raises(ConfigError) as caught:
        model_spec_from_hf_config(config, name="hand-made step5")
    assert caught.value.field == legacy


def test_step5_with_sparse_config_is_planned() -> None:
    spec = model_spec_from_hf_config({**STEP5, "sparse_config": {"enabled": True}}, name="hand-made step5")
    assert spec.num_layers == 4


@pytest.mark.parametrize(
    ("draft", "method"),
    [
        ("yuhuili/EAGLE-LLaMA3-Instruct-8B", "eagle"),  # the examples vLLM's own comment gives
        ("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "eagle3"),
        ("AngelSlim/Qwen3-8B_eagle3", "eagle3"),
        (
            "someorg/Qwen3-8B_eagle",
            "draft_model",
        ),  # hand-made name: "eagle" with no hyphen is no EAGLE-1 match
        ("someorg/eagle-head-eagle3", "eagle"),  # hand-made: "eagle-" is tested first
    ],
)
def test_speculative_method_from_the_draft_name(draft: str, method: str) -> None:
    # vLLM 0.19.0 and 0.33.0 config/speculative.py SpeculativeConfig (no --speculative-config method): `"eagle-" in
    # model.lower()` -> eagle, else `"eagle3" in model.lower()` -> eagle3, else (no dflash/dspark/MTP match)
    # draft_model. The planner took any "eagle" for EAGLE-1 and tested "eagle3" first.
    assert SpeculativeConfig(model=draft).resolved_method == method


@pytest.mark.parametrize(("model_type", "derived"), [("gemma3n_text", 32_768), ("llama", 262_144)])
def test_rope_factor_skip_keeps_vllms_own_substring_test(model_type: str, derived: int) -> None:
    # A guard, not a fix: vLLM 0.33.0 config/model.py _get_and_verify_max_len skips the rope factor when
    # `"gemma3" in hf_text_config.model_type`, a substring test of its own, so Gemma-3n is skipped too: 32,768 stays
    # 32,768, while a llama with a linear factor 8 gets 32,768 x 8 = 262,144. max_len.py must keep the substring.
    config = {
        **GEMMA3N_TEXT,
        "model_type": model_type,
        "rope_scaling": {"rope_type": "linear", "factor": 8.0},
    }
    if model_type == "llama":
        config = {**config, "architectures": ["LlamaForCausalLM"]}
        config.pop("sliding_window")
    assert model_spec_from_hf_config(config, name="hand-made").max_model_len_derived == derived


@pytest.mark.parametrize(
    ("architecture", "pooling"),
    [
        (
            "SomeNewForSequenceClassification",
            True,
        ),  # hand-made names outside every registry (Transformers backend)
        ("SomeNewForTokenClassification", True),
        ("SomeNewForRewardModeling", True),
        ("SomeNewForTextEncoding", True),
        ("SomeNewModel", True),
        ("SomeNewLMHeadModel", False),
        ("SomeNewChatModel", False),
        ("SomeNewForCausalLM", False),
    ],
)
def test_runner_of_an_unregistered_name_follows_vllms_suffix_table(architecture: str, pooling: bool) -> None:
    # vLLM 0.33.0 config/model.py _SUFFIX_TO_DEFAULTS, first match (try_match_architecture_defaults): ForCausalLM /
    # ForConditionalGeneration / ChatModel / LMHeadModel generate; ForTextEncoding, EmbeddingModel, For*Classification,
    # ClassificationModel, ForRewardModeling, RewardModel and last a bare Model pooling. Only "...Model" was taken.
    assert is_pooling_architecture(architecture) is pooling
