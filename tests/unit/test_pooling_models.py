"""Pooling models (embedding / reranker / classifier / reward) as vLLM 0.33.0 builds them: no LM head, no sampler.

Worked by hand for a Qwen3-0.6B-shaped config (hidden 1,024, 28 layers, 16 query / 8 KV heads of 128, MLP 3,072,
vocabulary 151,669, untied), bf16:
- per layer: q 1,024 x 2,048 + k, v 1,024 x 1,024 each + o 2,048 x 1,024 = 6,291,456, q/k norms 256, gated MLP
  3 x 1,024 x 3,072 = 9,437,184, two norms 2,048: 15,730,944; x 28 = 440,466,432;
- embedding 151,669 x 1,024 = 155,309,056; final norm 1,024;
- as Qwen3ForCausalLM (generate) the untied LM head adds another 155,309,056: 751,085,568 parameters;
- as Qwen3ForSequenceClassification vLLM 0.33.0 builds Qwen3ForCausalLM under models/adapters.py as_seq_cls_model
  (models/registry.py _normalize_arch: the registry lists no Qwen3ForSequenceClassification after 0.9.2, the
  "ForSequenceClassification" suffix maps to "ForCausalLM"), whose _create_pooling_model_cls builds it under
  no_init_weights(ParallelLMHead, LogitsProcessor): 440,466,432 + 155,309,056 + 1,024 = 595,776,512 parameters,
  1,191,553,024 B in bf16;
- the profile run pools instead of sampling (0.33.0 v1/worker/gpu/model_runner.py profile_run: _dummy_pooler_run when
  the runner is pooling), so the activation peak is the forward term alone: 8,192 tokens x 2 B x (3.5 x 3,072 +
  4 x 1,024) = 243,269,632 B, plus the 53,687,091 B base (app/core/budget.py activation_peak_bytes), where the
  generate plan's sampler is 1,024 rows x 151,669 x 4 B x 3.75 copies = 2,329,635,840 B.
Before: the classifier was refused at 0.33.0 ("removed from vLLM after 0.9.2"); a registered pooling architecture
was planned with the LM head and the sampler.
"""

from __future__ import annotations

import pytest

from app.core.catalog import find_device
from app.core.command import parse_serve_command
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.hf_config.registry import pooling_conversion
from app.core.specs import ServeConfig

QWEN3_SHAPE = {
    "model_type": "qwen3",
    "hidden_size": 1024,
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 3072,
    "vocab_size": 151669,
    "max_position_embeddings": 32768,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "rms_norm_eps": 1e-6,
    "rope_theta": 1000000,
}
H100 = find_device("h100")
BASE_BYTES = 53_687_091
FORWARD_BYTES = 8192 * 2 * (35 * 3072 // 10 + 4 * 1024)  # 243,269,632
SAMPLER_BYTES = 1024 * 151_669 * 4 * 375 // 100  # 2,329,635,840


def _plan(architecture: str, version: str = "0.33.0"):  # type: ignore[no-untyped-def]
    config = {**QWEN3_SHAPE, "architectures": [architecture]}
    model = model_spec_from_hf_config(config, name=architecture, vllm_version=version)
    return model, estimate(model=model, device=H100, serve=ServeConfig(), vllm_version=version)


def test_a_classifier_is_planned_without_lm_head_or_sampler() -> None:
    generate, gen = _plan("Qwen3ForCausalLM")
    pooling, pool = _plan("Qwen3ForSequenceClassification")
    assert not generate.pooling and generate.params_total == 751_085_568
    assert pooling.pooling and pooling.params_total == 595_776_512
    assert pool.weights_bytes == 1_191_553_024
    assert gen.activation_peak_bytes == SAMPLER_BYTES + BASE_BYTES
    assert pool.activation_peak_bytes == FORWARD_BYTES + BASE_BYTES == 296_956_723
    assert any(
        "converted to a pooling model (--runner pooling --convert classify" in str(w) for w in pool.warnings
    )


def test_the_suffix_conversion_is_by_release() -> None:
    # 0.10.1 config/__init__.py is the first release read with the suffix defaults (0.10.0 has none); 0.9.2's
    # registry still lists Qwen3ForSequenceClassification itself
    assert pooling_conversion("Qwen3ForSequenceClassification", (0, 33, 0)) == (
        "Qwen3ForCausalLM",
        "classify",
    )
    assert pooling_conversion("Qwen3ForSequenceClassification", (0, 19, 0)) == (
        "Qwen3ForCausalLM",
        "classify",
    )
    assert pooling_conversion("Qwen3ForSequenceClassification", (0, 9, 2)) is None  # listed itself
    assert pooling_conversion("Qwen3ForCausalLM", (0, 33, 0)) is None
    with pytest.raises(PlannerError, match=r"removed from vLLM after 0\.9\.2"):
        _plan("Qwen3ForSequenceClassification", "0.10.0")


def test_a_registered_embedding_class_has_no_lm_head() -> None:
    # Qwen2Model is in 0.33.0's _EMBEDDING_MODELS (registry.py): the same rule for a natively listed pooling class
    generate = model_spec_from_hf_config(
        {**QWEN3_SHAPE, "model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"]},
        name="g",
        vllm_version="0.33.0",
    )
    embed = model_spec_from_hf_config(
        {**QWEN3_SHAPE, "model_type": "qwen2", "architectures": ["Qwen2Model"]},
        name="e",
        vllm_version="0.33.0",
    )
    assert embed.pooling and generate.params_total - embed.params_total == 151_669 * 1024


def test_task_embed_is_gone_from_0_33_0_and_runner_pooling_is_read() -> None:
    # --task was replaced by --runner / --convert: in 0.6.6-0.12.0's engine/arg_utils.py, not from 0.13.0
    with pytest.raises(
        PlannerError, match=r"--task \(vLLM 0\.33\.0 does not have it; 0\.12\.0 was the last release"
    ):
        parse_serve_command("vllm serve m --task embed", vllm_version="0.33.0")
    # Qwen3-Embedding's config.json names Qwen3ForCausalLM: `--runner pooling` has 0.33.0 build it under
    # as_embedding_model (config/model.py _get_default_convert_type falls back to "embed"), no LM head, no sampler:
    # the same 595,776,512 parameters and 296,956,723 B peak as the classifier above (before: the flag was ignored,
    # 751,085,568 parameters)
    serve = parse_serve_command("vllm serve m --runner pooling", vllm_version="0.33.0").serve
    assert serve.runner == "pooling"
    model = model_spec_from_hf_config({**QWEN3_SHAPE, "architectures": ["Qwen3ForCausalLM"]}, name="e")
    est = estimate(model=model, device=H100, serve=serve, vllm_version="0.33.0")
    assert est.weights_bytes == 595_776_512 * 2 and est.activation_peak_bytes == 296_956_723
    assert any(
        "--runner pooling: vLLM 0.33.0 builds Qwen3ForCausalLM as a pooling model" in str(w)
        for w in est.warnings
    )
    # an embedding-only class refuses the generate runner (config/model.py ModelConfig.__post_init__ ValueError)
    embed = model_spec_from_hf_config(
        {**QWEN3_SHAPE, "model_type": "qwen2", "architectures": ["Qwen2Model"]}, name="q"
    )
    with pytest.raises(PlannerError, match="Embedding models do not support `--runner generate`"):
        estimate(model=embed, device=H100, serve=ServeConfig(runner="generate"), vllm_version="0.33.0")


def test_an_encoder_only_model_is_said_to_have_no_kv_cache() -> None:
    # 0.33.0 models/bert.py BertSelfAttention builds EncoderOnlyAttention, whose get_kv_cache_spec returns None: a
    # BertModel (bge-base shape) has no KV cache, which the plan now says; Qwen2Model (causal attention) keeps its KV
    bert = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
        "vocab_size": 30522,
        "max_position_embeddings": 512,
        "torch_dtype": "float32",
    }
    model = model_spec_from_hf_config(bert, name="bge", vllm_version="0.33.0")
    est = estimate(model=model, device=H100, serve=ServeConfig(), vllm_version="0.33.0")
    assert model.pooling and any(
        "encoder-only attention, which has no KV cache" in str(w) for w in est.warnings
    )
    # ... and the plan has none: no group, 0 B a token, nothing cached; only --max-num-seqs (1,024 on an H100 at
    # 0.33.0, the default est.max_num_seqs reports) bounds the batch, so it fits at the default length
    assert (est.groups, est.kv_bytes_per_token, est.kv_tokens) == ([], 0, 0)
    assert est.max_concurrency == est.max_num_seqs == 1024 and est.verdict == "fits"
    # BERT-base as vLLM's BertModel builds it (no pooler, no LM head): embeddings (30,522 + 512 + 2) x 768 =
    # 23,835,648, their LayerNorm 1,536, 12 layers x (QKV 1,771,776 + out 590,592 + MLP 4,722,432 + 2 LayerNorms
    # 3,072 = 7,087,872) = 85,054,464: 108,891,648 (HF's 109,482,240 less the pooler's 768 x 768 + 768)
    assert model.params_total == 108_891_648
    qwen2 = model_spec_from_hf_config(
        {**QWEN3_SHAPE, "model_type": "qwen2", "architectures": ["Qwen2Model"]}, name="q"
    )
    notes = estimate(model=qwen2, device=H100, serve=ServeConfig(), vllm_version="0.33.0").warnings
    assert any("runs Qwen2Model with its pooling runner: no LM head" in str(w) for w in notes)
    assert not any("no KV cache" in str(w) for w in notes)


def test_convert_embed_makes_the_runner_pooling() -> None:
    # 0.33.0 config/model.py ModelConfig._get_runner_type: under --runner auto, --convert embed / classify resolves
    # the runner to pooling, so Qwen3ForCausalLM is planned as the embedding model --runner pooling gives: the same
    # 595,776,512 parameters and 296,956,723 B peak as above (before: --convert was not read, 751,085,568 parameters
    # with an LM head and a sampler)
    serve = parse_serve_command("vllm serve m --convert embed", vllm_version="0.33.0").serve
    assert (serve.runner, serve.convert, serve.resolved_runner) == (None, "embed", "pooling")
    model = model_spec_from_hf_config({**QWEN3_SHAPE, "architectures": ["Qwen3ForCausalLM"]}, name="e")
    est = estimate(model=model, device=H100, serve=serve, vllm_version="0.33.0")
    assert est.weights_bytes == 595_776_512 * 2 and est.activation_peak_bytes == 296_956_723
    # --convert auto / none leave the architecture's runner; an explicit --runner wins over --convert
    assert (
        parse_serve_command("vllm serve m --convert auto", vllm_version="0.33.0").serve.resolved_runner
        is None
    )
    assert (
        parse_serve_command("vllm serve m --convert none", vllm_version="0.33.0").serve.resolved_runner
        is None
    )
    both = parse_serve_command("vllm serve m --runner generate --convert embed", vllm_version="0.33.0").serve
    assert both.resolved_runner == "generate"


def test_the_runner_note_names_the_convert_passed() -> None:
    # 0.33.0 config/model.py ModelConfig._get_convert_type returns an explicit --convert as given; classify wraps the
    # model with models/adapters.py as_seq_cls_model (before: the note said "--convert embed" whatever was passed)
    model = model_spec_from_hf_config({**QWEN3_SHAPE, "architectures": ["Qwen3ForCausalLM"]}, name="c")
    notes = {}
    for convert in ("classify", "embed"):
        serve = parse_serve_command(f"vllm serve m --convert {convert}", vllm_version="0.33.0").serve
        est = estimate(model=model, device=H100, serve=serve, vllm_version="0.33.0")
        notes[convert] = next(w for w in est.warnings if w.startswith("--runner pooling"))
    assert "(--convert classify, models/adapters.py as_seq_cls_model)" in notes["classify"]
    assert "(--convert embed, models/adapters.py as_embedding_model)" in notes["embed"]
    # --runner pooling with --convert auto: _get_default_convert_type's fallback, embed
    auto = parse_serve_command("vllm serve m --runner pooling", vllm_version="0.33.0").serve
    est = estimate(model=model, device=H100, serve=auto, vllm_version="0.33.0")
    assert any("(--convert embed, models/adapters.py as_embedding_model)" in w for w in est.warnings)
