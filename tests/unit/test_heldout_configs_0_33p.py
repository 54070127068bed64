"""heldout_0_33p (tests/data/configs/heldout_0_33p, SOURCES.md): encoder-only embedding models at 0.33.0.

Their attention is EncoderOnlyAttention (0.33.0 models/bert.py, roberta.py), whose get_kv_cache_spec returns None:
no KV cache group at all. Blind, the planner gave them a decoder's full-attention group and a decoder's parameter
count (TP 2: bge-m3 49,152 B a token, [full, 24], 658,705,408 parameters).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.catalog import find_device
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.specs import LayerKind, ServeConfig
from tests.unit.test_pooling_models import QWEN3_SHAPE

HELD = Path(__file__).resolve().parents[1] / "data" / "configs" / "heldout_0_33p"


def _spec(stem: str):
    config = json.loads((HELD / f"{stem}_config.json").read_text(encoding="utf-8"))
    return model_spec_from_hf_config(config, name=stem, vllm_version="0.33.0")


@pytest.mark.parametrize(
    ("stem", "params"),
    [
        # (V 250,002 + 8,194 positions + 1 type) x 1,024 + 2,048 + 24 x 12,596,224 (worksheet_expected.py.txt)
        ("dogukanveziroglu--bge-m3-ml-tr-specialized", 566_705_152),
        # bge-small: (30,522 + 512 + 2) x 384 + 768 + 12 x 1,774,464
        ("SergiFuster--dailynoteclassifier-setfit-v1.5-16-shot", 33_212_160),
        # m3e-small: (21,128 + 512 + 2) x 512 + 1,024 + 4 x 3,152,384
        ("kittenzty--m3e-small", 23_691_264),
    ],
)
def test_an_encoder_only_config_has_no_kv_cache_and_bert_parameters(stem: str, params: int) -> None:
    spec = _spec(stem)
    assert set(spec.layer_kinds) == {LayerKind.ENCODER_ONLY} and spec.params_total == params
    est = estimate(
        model=spec,
        device=find_device("h100"),
        serve=ServeConfig(tensor_parallel_size=2),
        vllm_version="0.33.0",
    )
    assert (est.groups, est.kv_bytes_per_token, est.bytes_per_block) == ([], 0, 0)
    assert est.attention_backend == "FLASH_ATTN" and est.block_size == 16


def test_a_causal_embedding_model_keeps_its_kv_cache() -> None:
    # stella_en_1.5B_v5 (Qwen2ForCausalLM): decoder attention, so its cache stays; TP 2: 28 layers x 1 KV head x
    # 2 x 128 x 2 B = 14,336 B a token, page 16 x 512 = 8,192
    est = estimate(
        model=_spec("jblorenzo--stella_en_1.5B_v5"),
        device=find_device("h100"),
        serve=ServeConfig(tensor_parallel_size=2),
        vllm_version="0.33.0",
    )
    assert est.kv_bytes_per_token == 14_336 and [(g.kind, g.num_layers) for g in est.groups] == [("full", 28)]


def test_a_bidirectional_decoder_family_model_has_no_kv_cache() -> None:
    # EmbeddingGemma-300m (batch 2, blind miss at TP 1: 24,576 B a token in five sliding groups and a full one):
    # 0.33.0 models/config.py Gemma3TextModelConfig sets is_causal = not use_bidirectional_attention (true here), and
    # gemma3.py Gemma3Attention builds EncoderOnlyAttention for is_causal False: no KV cache on any layer
    gemma = _spec("sarashahine--eschool-chatbot-main-embeddinggemma-300m")
    assert set(gemma.layer_kinds) == {LayerKind.ENCODER_ONLY}
    est = estimate(model=gemma, device=find_device("h100"), serve=ServeConfig(), vllm_version="0.33.0")
    assert (est.groups, est.kv_bytes_per_token) == ([], 0)
    assert any("encoder-only attention, which has no KV cache" in str(w) for w in est.warnings)
    config = json.loads(
        (HELD / "sarashahine--eschool-chatbot-main-embeddinggemma-300m_config.json").read_text(
            encoding="utf-8"
        )
    )
    # without the flag Gemma3TextConfig's default (False) keeps it causal: 4 full + 20 sliding layers
    causal = model_spec_from_hf_config(
        {k: v for k, v in config.items() if k != "use_bidirectional_attention"},
        name="g",
        vllm_version="0.33.0",
    )
    assert LayerKind.ENCODER_ONLY not in causal.layer_kinds
    # llama.py / qwen2.py / qwen3.py read "is_causal" from the config; LlamaBidirectionalModel's hook
    # (LlamaBidirectionalConfig) forces it False
    qwen3 = {**QWEN3_SHAPE, "architectures": ["Qwen3ForCausalLM"]}
    for config, encoder_only in (
        (qwen3, False),
        ({**qwen3, "is_causal": False}, True),
        ({**qwen3, "architectures": ["LlamaBidirectionalModel"], "model_type": "llama"}, True),
    ):
        kinds = set(model_spec_from_hf_config(config, name="q", vllm_version="0.33.0").layer_kinds)
        assert (kinds == {LayerKind.ENCODER_ONLY}) is encoder_only
