"""A wider set of real config.json files (tests/data/configs/real, sources in SOURCES.md): 20 more
architectures, sized the way vLLM 0.19.0 sizes them, with the numbers worked by hand from vLLM's
code (config/model.py `_get_and_verify_max_len`, v1/core/kv_cache_utils.py grouping,
v1/kv_cache_interface.py pages, the model files) in the comments.

Row: KV bytes per token (every attention layer, TP 1, `auto` KV in the model dtype: 2 B for bf16
and fp16), block size, page of one layer, (kind, layers) per KV group, derived max_model_len.
Plain attention: kv/token = 2 (K, V) x layers x kv_heads x head_dim x 2 B; page = 16 x 2 x kv x hd x 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core import kv as K
from app.core.hf_config import model_spec_from_hf_config, param_breakdown
from app.core.versions import rules_for

REAL = Path(__file__).resolve().parents[1] / "data" / "configs" / "real"
RULES = rules_for("0.19.0")


def _config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REAL / f"{name}.config.json").read_text(encoding="utf-8"))
    return data


F, S, M, A = "full", "sliding", "mla", "mamba"

CASES = [
    # Mistral v0.3: 2 x 32 x 8 x 128 x 2 = 131,072; sliding_window null -> full; 32,768 positions
    ("mistralai__Mistral-7B-v0.3", 131_072, 16, 65_536, [(F, 32)], 32_768),
    # Mixtral: same attention as Mistral; experts carry no cache
    ("mistralai__Mixtral-8x7B-v0.1", 131_072, 16, 65_536, [(F, 32)], 32_768),
    # Ministral-3 (Mistral3ForConditionalGeneration): text tower 2 x 26 x 8 x 128 x 2 = 106,496;
    # yarn: derived = original_max_position_embeddings 16,384 x factor 16 = 262,144
    ("mistralai__Ministral-3-3B-Reasoning-2512", 106_496, 16, 65_536, [(F, 26)], 262_144),
    # Qwen1.5-MoE: MHA 16 KV heads: 2 x 24 x 16 x 128 x 2 = 196,608; page 16 x 2 x 16 x 128 x 2
    ("Qwen__Qwen1.5-MoE-A2.7B", 196_608, 16, 131_072, [(F, 24)], 32_768),
    # DeepSeek-V2-Lite MLA: one latent of kv_lora_rank 512 + rope 64 = 576 per layer:
    # 27 x 576 x 2 = 31,104; page 16 x 576 x 2 = 18,432; yarn 4,096 x 40 = 163,840
    ("deepseek-ai__DeepSeek-V2-Lite", 31_104, 16, 18_432, [(M, 27)], 163_840),
    # DeepSeek-MoE 16B (MHA): 2 x 28 x 16 x 128 x 2 = 229,376
    ("deepseek-ai__deepseek-moe-16b-base", 229_376, 16, 131_072, [(F, 28)], 4_096),
    # StableLM-3B: head 2,560 / 32 = 80: 2 x 32 x 32 x 80 x 2 = 327,680; page 16 x 2 x 32 x 80 x 2
    ("stabilityai__stablelm-3b-4e1t", 327_680, 16, 163_840, [(F, 32)], 4_096),
    # Baichuan2-7B (MHA, no num_key_value_heads): 2 x 32 x 32 x 128 x 2 = 524,288
    ("baichuan-inc__Baichuan2-7B-Base", 524_288, 16, 262_144, [(F, 32)], 4_096),
    # ChatGLM3: multi_query_group_num 2 KV heads x kv_channels 128: 2 x 28 x 2 x 128 x 2 = 28,672;
    # max length from `seq_length` (one of vLLM's possible_keys)
    ("THUDM__chatglm3-6b", 28_672, 16, 16_384, [(F, 28)], 8_192),
    # InternLM2.5: 2 x 32 x 8 x 128 x 2 = 131,072; rope "dynamic" x2 is scaled: 32,768 x 2
    ("internlm__internlm2_5-7b", 131_072, 16, 65_536, [(F, 32)], 65_536),
    # StarCoder2: sliding_window 4,096 on every layer (Attention takes cache_config.sliding_window):
    # one sliding group; 2 x 32 x 4 x 128 x 2 = 65,536
    ("bigcode__starcoder2-7b", 65_536, 16, 32_768, [(S, 32)], 16_384),
    # GPTBigCode multi_query: 1 KV head x 2,048 / 16 = 128: 2 x 24 x 1 x 128 x 2 = 12,288
    ("bigcode__gpt_bigcode-santacoder", 12_288, 16, 8_192, [(F, 24)], 2_048),
    # Cohere (aya-23): 2 x 32 x 8 x 128 x 2 = 131,072 (fp16, also 2 B)
    ("CohereForAI__aya-23-8B", 131_072, 16, 65_536, [(F, 32)], 8_192),
    # MiniCPM: head 2,304 / 36 = 64: 2 x 40 x 36 x 64 x 2 = 368,640; page 16 x 2 x 36 x 64 x 2
    ("openbmb__MiniCPM-2B-sft-bf16", 368_640, 16, 147_456, [(F, 40)], 4_096),
    # Gemma-2: even layers sliding (4,096), odd full: 13 + 13 / 21 + 21 / 23 + 23.
    # 2b: 2 x 26 x 4 x 256 x 2 = 106,496; 9b: 2 x 42 x 8 x 256 x 2 = 344,064;
    # 27b: 2 x 46 x 16 x 128 x 2 = 376,832 (page 16 x 2 x 16 x 128 x 2 = 131,072)
    ("google__gemma-2-2b", 106_496, 16, 65_536, [(S, 13), (F, 13)], 8_192),
    ("google__gemma-2-9b", 344_064, 16, 131_072, [(S, 21), (F, 21)], 8_192),
    ("google__gemma-2-27b", 376_832, 16, 131_072, [(S, 23), (F, 23)], 8_192),
    # Gemma-3 1B: every 6th layer full (5, 11, 17, 23): 22 sliding + 4 full; 2 x 26 x 1 x 256 x 2
    # = 26,624. Group size min(22, 4) = 4 (22 >= 1.5 x 4): sliding in cdiv(22, 4) = 6 groups
    # layers[i::6] -> 4, 4, 4, 4, 3, 3; full 1 group of 4.
    (
        "google__gemma-3-1b-it",
        26_624,
        16,
        16_384,
        [(S, 4), (S, 4), (S, 4), (S, 4), (S, 3), (S, 3), (F, 4)],
        32_768,
    ),
    # Phi-3.5-mini: MHA, head 3,072 / 32 = 96: 2 x 32 x 32 x 96 x 2 = 393,216; page 16 x 2 x 32 x 96 x 2
    # = 196,608. sliding_window 262,144 makes every layer sliding (Attention falls back to
    # cache_config.sliding_window). longrope does not scale: derived 131,072.
    ("microsoft__Phi-3.5-mini-instruct", 393_216, 16, 196_608, [(S, 32)], 131_072),
    # Phi-4-mini: 24 heads of 128, 8 KV heads: 2 x 32 x 8 x 128 x 2 = 131,072
    ("microsoft__Phi-4-mini-instruct", 131_072, 16, 65_536, [(S, 32)], 131_072),
    # Llama-3.2-1B: head_dim 64: 2 x 16 x 8 x 64 x 2 = 32,768; page 16 x 2 x 8 x 64 x 2 = 32,768
    ("meta-llama__Llama-3.2-1B", 32_768, 16, 32_768, [(F, 16)], 131_072),
    # SmolLM2-360M: head 960 / 15 = 64, 5 KV heads: 2 x 32 x 5 x 64 x 2 = 40,960; page 20,480
    ("HuggingFaceTB__SmolLM2-360M", 40_960, 16, 20_480, [(F, 32)], 8_192),
    # Qwen2-0.5B: head 896 / 14 = 64, 2 KV heads: 2 x 24 x 2 x 64 x 2 = 12,288; page 8,192;
    # use_sliding_window false: full
    ("Qwen__Qwen2-0.5B", 12_288, 16, 8_192, [(F, 24)], 32_768),
    # Gemma-3 12B (multimodal; text tower sized): layer_types 5 sliding : 1 full -> 40 + 8;
    # 2 x 48 x 8 x 256 x 2 = 393,216. Groups of min(40, 8) = 8: 5 sliding + 1 full. gemma3 skips the
    # rope factor (linear x8): 131,072.
    (
        "google__gemma-3-12b-it",
        393_216,
        16,
        131_072,
        [(S, 8), (S, 8), (S, 8), (S, 8), (S, 8), (F, 8)],
        131_072,
    ),
    # Llama-4 Scout: every 4th layer NoPE/global (12 full), the others chunked local attention of
    # 8,192 (36): 2 x 48 x 8 x 128 x 2 = 196,608. Groups of 12: 3 chunked + 1 full (the hybrid
    # manager is allowed: VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE defaults to 1).
    # llama3 rope does not scale: 10,485,760.
    (
        "meta-llama__Llama-4-Scout-17B-16E-Instruct",
        196_608,
        16,
        65_536,
        [("chunked", 12), ("chunked", 12), ("chunked", 12), (F, 12)],
        10_485_760,
    ),
    # gpt-oss-120b: layer_types alternate sliding (window 128) and full, 18 + 18; head_dim 64, 8 KV
    # heads: 2 x 36 x 8 x 64 x 2 = 73,728; page 16 x 2 x 8 x 64 x 2 = 32,768. 18 < 1.5 x 18: group
    # size 18, one group each. No torch_dtype: float32 default, served as bf16. yarn 4,096 x 32.
    ("openai__gpt-oss-120b", 73_728, 16, 32_768, [(S, 18), (F, 18)], 131_072),
    # Qwen3-Next: 12 full (every 4th) + 36 gated-delta-net layers. KV 2 x 12 x 2 x 256 x 2 = 24,576.
    # GDN state (TP 1): conv (16 x 128 x 2 + 32 x 128 = 8,192) x (4 - 1) = 24,576 + temporal
    # 32 x 128 x 128 = 524,288 -> 548,864 x 2 B = 1,097,728 B. Attention block raised to hold it:
    # 16 x cdiv(1,097,728, 16 x 2,048) = 16 x 34 = 544; page 544 x 2,048 = 1,114,112.
    # Groups of min(36, 12) = 12: 3 mamba + 1 full.
    (
        "Qwen__Qwen3-Next-80B-A3B-Thinking",
        24_576,
        544,
        1_114_112,
        [(A, 12), (A, 12), (A, 12), (F, 12)],
        262_144,
    ),
]


@pytest.mark.parametrize(("name", "per_token", "block", "page", "groups", "max_len"), CASES)
def test_wide_real_config_sizing_matches_vllm(
    name: str, per_token: int, block: int, page: int, groups: list[tuple[str, int]], max_len: int
) -> None:
    spec = model_spec_from_hf_config(_config(name), name=name)
    layout = K.build_layout(
        model=spec,
        layer_range=(0, spec.num_layers),
        tensor_parallel_size=1,
        block_size=16,
        kv_cache_dtype="auto",
        model_dtype=spec.torch_dtype,
        rules=RULES,
    )
    assert layout.kv_bytes_per_token == per_token
    assert layout.block_size == block
    assert layout.page_size_bytes == page
    assert [(g.kind.value, g.num_layers) for g in layout.groups] == groups
    assert spec.max_model_len_derived == max_len


# Parameter counts against the models' published counts (the safetensors totals shown on the
# model pages), worked by hand where the arithmetic is short.
PARAMS = [
    # embed 32,768 x 4,096 = 134,217,728 (x2 untied); layer: q/o 2 x 4,096^2 + k/v 2 x 4,096 x 1,024
    # + MLP 3 x 4,096 x 14,336 + 2 norms = 218,112,000; x 32 + 2 x 134,217,728 + 4,096
    ("mistralai__Mistral-7B-v0.3", 7_248_023_552),
    # Mixtral-8x7B: 46.7B published; 8 experts x 3 x 4,096 x 14,336 per layer + router 4,096 x 8
    ("mistralai__Mixtral-8x7B-v0.1", 46_702_792_704),
    # DeepSeek-V2-Lite: 15.7B published (model card "16B total")
    ("deepseek-ai__DeepSeek-V2-Lite", 15_706_484_224),
    # Gemma-2/3: four norms per layer (input, post-attn, pre/post-feedforward), tied embeddings.
    # gemma-2-2b: published 2,614,341,888; 9b: 9,241,705,984; 27b: 27,227,128,320; 3-1b: 999,885,952
    ("google__gemma-2-2b", 2_614_341_888),
    ("google__gemma-2-9b", 9_241_705_984),
    ("google__gemma-2-27b", 27_227_128_320),
    ("google__gemma-3-1b-it", 999_885_952),
    # aya-23-8B: CohereConfig ties by default (key absent): 8.03B, not 9.08B with a second
    # 256,000 x 4,096 = 1,048,576,000 head
    ("CohereForAI__aya-23-8B", 8_028_164_096),
    # Llama-3.2-1B 1,235,814,400; SmolLM2-360M 361,821,120; Qwen2-0.5B 494,032,768 (all tied)
    ("meta-llama__Llama-3.2-1B", 1_235_814_400),
    ("HuggingFaceTB__SmolLM2-360M", 361_821_120),
    ("Qwen__Qwen2-0.5B", 494_032_768),
    # gpt-oss-120b: 116,829,156,672 published (model card 116.83B): the 36 x 128 expert biases
    # (2 x 2,880 + 2,880), router biases, sinks and o_proj biases included
    ("openai__gpt-oss-120b", 116_829_156_672),
    # Phi-3.5-mini 3,821,079,552 and Phi-4-mini 3,836,021,760 (tied, vocab 200,064) published
    ("microsoft__Phi-3.5-mini-instruct", 3_821_079_552),
    ("microsoft__Phi-4-mini-instruct", 3_836_021_760),
]


@pytest.mark.parametrize(("name", "total"), PARAMS)
def test_wide_real_config_parameters(name: str, total: int) -> None:
    assert param_breakdown(_config(name)).total == total


def test_config_class_default_ties_the_head() -> None:
    # GPTBigCodeConfig and Starcoder2Config do not declare tie_word_embeddings: PretrainedConfig's
    # default True applies and vLLM's lm_head is the embedding. santacoder: 49,280 x 2,048 =
    # 100,925,440 parameters not counted twice.
    parts = param_breakdown(_config("bigcode__gpt_bigcode-santacoder"))
    assert parts.lm_head == 0
    assert parts.embedding == 100_925_440
    assert param_breakdown(_config("bigcode__starcoder2-7b")).lm_head == 0
    # a class that declares False stays untied (Mistral)
    assert param_breakdown(_config("mistralai__Mistral-7B-v0.3")).lm_head == 134_217_728


def _estimate(name: str, version: str, **serve: Any) -> Any:
    from app.core.catalog import find_device
    from app.core.estimate import estimate
    from app.core.specs import ServeConfig

    spec = model_spec_from_hf_config(_config(name), name=name)
    return estimate(model=spec, device=find_device("h100"), serve=ServeConfig(**serve), vllm_version=version)


def test_longrope_serves_the_original_length_when_none_is_given() -> None:
    # 0.14.0+ _get_and_verify_max_len: max_model_len None and a longrope rope -> the config's
    # original_max_position_embeddings (4,096), not the derived 131,072 (0.11.0 still took 131,072)
    assert _estimate("microsoft__Phi-4-mini-instruct", "0.19.0").max_model_len == 4_096
    assert _estimate("microsoft__Phi-4-mini-instruct", "0.33.0").max_model_len == 4_096
    assert _estimate("microsoft__Phi-4-mini-instruct", "0.11.0").max_model_len == 131_072
    # a length the user gives is kept, up to the derived maximum without a warning
    est = _estimate("microsoft__Phi-4-mini-instruct", "0.19.0", max_model_len=131_072)
    assert est.max_model_len == 131_072
    assert not any("derived maximum" in str(w) for w in est.warnings)


def test_yarn_rule_follows_the_release() -> None:
    # A Qwen2.5 config with the model card's yarn override: max_position_embeddings 32,768,
    # rope yarn factor 4 over original 32,768. 0.19.0 (<= 0.27.1): 32,768 x 4 = 131,072;
    # 0.30.0+: yarn does not scale, 32,768.
    from app.core.estimate import model_for_release

    config = json.loads((REAL.parent / "qwen2.5-7b-instruct-yarn.config.json").read_text(encoding="utf-8"))
    spec = model_spec_from_hf_config(config, name="q")
    assert spec.max_model_len_derived == 32_768
    assert model_for_release(model=spec, rules=RULES).max_model_len_derived == 131_072
    assert model_for_release(model=spec, rules=rules_for("0.27.1")).max_model_len_derived == 131_072
    assert model_for_release(model=spec, rules=rules_for("0.30.0")).max_model_len_derived == 32_768
    # configs whose max_position_embeddings already equals original x factor agree in every release
    v2 = model_spec_from_hf_config(_config("deepseek-ai__DeepSeek-V2-Lite"), name="v2")
    assert v2.max_model_len_yarn_scaled is None
