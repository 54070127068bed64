"""A config.json with no `architectures` but a transformers model_type (issue 22, round 11): vLLM 0.30.0-0.34.0
transformers_utils/config.py get_config writes ``architectures = [MODEL_MAPPING_NAMES[model_type]]`` (the base
model class, e.g. "LlamaModel"), and config/model.py _SUFFIX_TO_DEFAULTS ("Model" -> ("pooling", "embed")) or the
registry's _EMBEDDING_MODELS run it as a pooling model. MODEL_MAPPING_NAMES read from the pinned transformers
(scripts/gen_transformers_fallback.py: 5.17.0, 5.19.0, 5.20.2, 5.22.2).
"""

from __future__ import annotations

from app.core.catalog import find_device
from app.core.command import parse_pasted
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.hf_config.registry import is_pooling_architecture, pooling_by_suffix, unnamed_architecture

LLAMA_8B_NO_ARCH = {  # Llama-3.1-8B's geometry, no `architectures`
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 8192,
    "torch_dtype": "bfloat16",
    "rope_theta": 500000.0,
}


def test_the_release_names_the_base_class() -> None:
    # transformers 5.20.2 models/auto/modeling_auto.py MODEL_MAPPING_NAMES: ("llama", "LlamaModel"), ("qwen3", "Qwen3Model")
    assert unnamed_architecture(model_type="llama", release="0.33.0") == "LlamaModel"
    assert unnamed_architecture(model_type="qwen3", release="0.34.0") == "Qwen3Model"
    assert (
        unnamed_architecture(model_type="llama", release=None) == ""
    )  # a release whose fallback was not read
    assert unnamed_architecture(model_type="no_such_type", release="0.33.0") == ""


def test_a_base_class_is_a_pooling_model() -> None:
    # registry.py _EMBEDDING_MODELS lists "LlamaModel"; "Qwen3Model" is not registered: the Transformers backend,
    # its runner from the suffix rule ("Model" -> pooling) - while "...ForCausalLM" and "...LMHeadModel" generate
    assert is_pooling_architecture("LlamaModel") and is_pooling_architecture("Qwen3Model")
    assert not is_pooling_architecture("LlamaForCausalLM") and not pooling_by_suffix("GPT2LMHeadModel")


def test_it_is_planned_as_that_pooling_model() -> None:
    # 0.33.0: the plan says which class vLLM takes, and a pooling model's full graphs are overridden to PIECEWISE
    # (config/vllm.py "Pooling models do not support full cudagraphs"): one graph a size, 0.5 x 978,006,999 =
    # 489,003,499 B for the 32 layers at 51 sizes, where the generative plan had 978,006,999
    model = model_spec_from_hf_config(LLAMA_8B_NO_ARCH, name="x")
    est = estimate(model=model, device=find_device("h100"), serve=parse_pasted("vllm serve x").serve)
    assert "LlamaModel, and runs it as a pooling (embed) model" in est.warnings[0]
    assert est.cuda_graph_bytes == 489_003_499
    # 0.19.0 was not read for the fallback: the earlier note, planned from model_type as a generative model
    old = estimate(
        model=model,
        device=find_device("h100"),
        serve=parse_pasted("vllm serve x", vllm_version="0.19.0").serve,
        vllm_version="0.19.0",
    )
    assert "Planned from model_type 'llama'" in old.warnings[0] and old.cuda_graph_bytes == 978_006_999
