"""Generate model_specs/*.yaml and device_specs/devices.yaml from the reference catalogs.

Run once; the YAML it writes is committed as data and validated at start-up by app.core.catalog:

    .venv/bin/python scripts/gen_model_specs.py [--reference /work/shared/reference]

Inputs: ``model_configs.json`` (64 records with HF config.json fields, sources and confidence) and
``devices.json`` (51 accelerators). The records are normalised (rope_scaling and layer_types are
written as prose, derived fields sit next to real keys), so each one is turned back into the
config.json shape vLLM reads: real key names per model family, derived fields dropped. Models the
reference lacks are written here from public model cards and marked ``confidence: likely``.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from app.core.hf_config import count_params  # noqa: E402

GIB = 2**30
RECALLED = "recalled from public model card; not verified here"

# --- record field -> config.json key -----------------------------------------------------------

# Real config keys copied as-is when the record has a non-null value.
PLAIN_KEYS = (
    "num_hidden_layers",
    "hidden_size",
    "intermediate_size",
    "moe_intermediate_size",
    "num_attention_heads",
    "vocab_size",
    "max_position_embeddings",
    "rope_theta",
    "partial_rotary_factor",
    "sliding_window",
    "use_sliding_window",
    "sliding_window_pattern",
    "kv_lora_rank",
    "q_lora_rank",
    "qk_rope_head_dim",
    "qk_nope_head_dim",
    "v_head_dim",
    "num_experts_per_tok",
    "n_shared_experts",
    "shared_expert_intermediate_size",
    "first_k_dense_replace",
    "num_nextn_predict_layers",
    # extra real keys some records carry
    "intermediate_size_mlp",
    "interleave_moe_layer_step",
    "attention_chunk_size",
    "use_qk_norm",
    "query_pre_attn_scalar",
    "attn_logit_softcapping",
    "final_logit_softcapping",
    "swiglu_limit",
    "rotary_dim",
    "attention_head_dim",
)
# Key order in the written config (the rest follow in insertion order), so files read alike.
KEY_ORDER = (
    "architectures",
    "model_type",
    "torch_dtype",
    "num_hidden_layers",
    "hidden_size",
    "intermediate_size",
    "num_attention_heads",
    "num_key_value_heads",
    "num_kv_heads",
    "head_dim",
    "attention_head_dim",
    "vocab_size",
    "max_position_embeddings",
    "tie_word_embeddings",
    "rope_theta",
    "rope_scaling",
    "partial_rotary_factor",
    "sliding_window",
    "use_sliding_window",
    "sliding_window_pattern",
    "layer_types",
)
# The key each family uses for the number of routed experts.
EXPERTS_KEY = {
    "mixtral": "num_local_experts",
    "gpt_oss": "num_local_experts",
    "minimax_m1": "num_local_experts",
    "minimax_m2": "num_local_experts",
    "llama4_text": "num_local_experts",
    "deepseek_v2": "n_routed_experts",
    "deepseek_v3": "n_routed_experts",
    "kimi_k2": "n_routed_experts",
    "glm4_moe": "n_routed_experts",
}
# DeepSeek-family configs spell the rope type as "type" (older transformers key).
ROPE_TYPE_KEY_OLD = {"deepseek_v2", "deepseek_v3", "kimi_k2"}

# --- aliases: HF ids of identical-architecture repos and short names ---------------------------

ALIASES: dict[str, list[str]] = {
    "meta-llama/Llama-2-7b-hf": ["meta-llama/Llama-2-7b-chat-hf", "llama-2-7b", "llama-2-7b-chat"],
    "meta-llama/Llama-2-13b-hf": ["meta-llama/Llama-2-13b-chat-hf", "llama-2-13b", "llama-2-13b-chat"],
    "meta-llama/Llama-2-70b-hf": ["meta-llama/Llama-2-70b-chat-hf", "llama-2-70b", "llama-2-70b-chat"],
    "meta-llama/Meta-Llama-3-8B": [
        "meta-llama/Meta-Llama-3-8B-Instruct",
        "llama-3-8b",
        "llama-3-8b-instruct",
    ],
    "meta-llama/Llama-3.1-8B": [
        "meta-llama/Llama-3.1-8B-Instruct",
        "meta-llama/Meta-Llama-3.1-8B",
        "meta-llama/Meta-Llama-3.1-8B-Instruct",
    ],
    "meta-llama/Llama-3.1-70B": [
        "meta-llama/Llama-3.1-70B-Instruct",
        "meta-llama/Meta-Llama-3.1-70B",
        "meta-llama/Meta-Llama-3.1-70B-Instruct",
    ],
    "meta-llama/Llama-3.1-405B": [
        "meta-llama/Llama-3.1-405B-Instruct",
        "meta-llama/Meta-Llama-3.1-405B",
        "meta-llama/Meta-Llama-3.1-405B-Instruct",
    ],
    "meta-llama/Llama-3.2-1B": ["meta-llama/Llama-3.2-1B-Instruct"],
    "meta-llama/Llama-3.2-3B": ["meta-llama/Llama-3.2-3B-Instruct"],
    "meta-llama/Llama-3.3-70B-Instruct": ["llama-3.3-70b"],
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": ["meta-llama/Llama-4-Scout-17B-16E", "llama-4-scout"],
    "meta-llama/Llama-4-Maverick-17B-128E-Instruct": [
        "meta-llama/Llama-4-Maverick-17B-128E",
        "llama-4-maverick",
    ],
    "mistralai/Mistral-7B-v0.3": ["mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b", "mistral-7b-instruct"],
    "mistralai/Mistral-Small-24B-Instruct-2501": [
        "mistralai/Mistral-Small-24B-Base-2501",
        "mistral-small-24b",
    ],
    "mistralai/Mistral-Large-Instruct-2407": [
        "mistralai/Mistral-Large-Instruct-2411",
        "mistral-large",
        "mistral-large-2407",
        "mistral-large-2411",
    ],
    "mistralai/Mixtral-8x7B-v0.1": [
        "mistralai/Mixtral-8x7B-Instruct-v0.1",
        "mixtral-8x7b",
        "mixtral-8x7b-instruct",
    ],
    "mistralai/Mixtral-8x22B-v0.1": ["mixtral-8x22b-base"],
    "mistralai/Mixtral-8x22B-Instruct-v0.1": ["mixtral-8x22b", "mixtral-8x22b-instruct"],
    "Qwen/Qwen2.5-0.5B": ["Qwen/Qwen2.5-0.5B-Instruct"],
    "Qwen/Qwen2.5-3B": ["Qwen/Qwen2.5-3B-Instruct"],
    "Qwen/Qwen2.5-Coder-32B-Instruct": ["qwen2.5-coder-32b"],
    "Qwen/QwQ-32B": ["qwq"],
    "Qwen/Qwen3-235B-A22B-Thinking-2507": ["Qwen/Qwen3-235B-A22B-Instruct-2507"],
    "Qwen/Qwen3-Coder-480B-A35B-Instruct": ["qwen3-coder-480b", "qwen3-coder"],
    "Qwen/Qwen3-Next-80B-A3B-Instruct": ["Qwen/Qwen3-Next-80B-A3B-Thinking", "qwen3-next-80b", "qwen3-next"],
    "deepseek-ai/DeepSeek-V2-Lite": ["deepseek-ai/DeepSeek-V2-Lite-Chat", "deepseek-v2-lite-chat"],
    "deepseek-ai/DeepSeek-V3": ["deepseek-ai/DeepSeek-V3-Base", "deepseek-ai/DeepSeek-V3-0324"],
    "deepseek-ai/DeepSeek-R1": ["deepseek-ai/DeepSeek-R1-0528"],
    "moonshotai/Kimi-K2-Instruct": ["moonshotai/Kimi-K2-Base", "kimi-k2"],
    "google/gemma-2-27b": ["google/gemma-2-27b-it"],
    "google/gemma-3-4b-it": ["gemma-3-4b"],
    "google/gemma-3-12b-it": ["gemma-3-12b"],
    "google/gemma-3-27b-it": ["gemma-3-27b"],
    "google/gemma-3-1b-it": ["gemma-3-1b"],
    "microsoft/Phi-3-mini-4k-instruct": ["phi-3-mini", "phi-3-mini-4k"],
    "01-ai/Yi-34B": ["01-ai/Yi-34B-Chat"],
    "01-ai/Yi-1.5-34B": ["01-ai/Yi-1.5-34B-Chat"],
    "tiiuae/falcon-40b": ["tiiuae/falcon-40b-instruct"],
    "ai21labs/AI21-Jamba-1.5-Mini": ["jamba-1.5-mini"],
    "MiniMaxAI/MiniMax-M1-80k": ["minimax-m1"],
    "nvidia/Nemotron-H-56B-Base-8K": ["nemotron-h-56b"],
}
ALIAS_NOTES = {
    "mistralai/Mistral-Large-Instruct-2407": "Mistral-Large-Instruct-2411 has the same architecture (alias).",
    "deepseek-ai/DeepSeek-V2-Lite": "DeepSeek-V2-Lite-Chat has the same architecture (alias).",
    "google/gemma-2-27b": "The -it repo has the same architecture (alias).",
}
# Records whose id changes (the requested instruct repo becomes the file id).
RENAMED_IDS = {"google/gemma-2-27b": "google/gemma-2-27b-it"}


# --- parsing the record's prose fields ---------------------------------------------------------


def _number(text: str) -> int | float | bool:
    if text in ("True", "False"):
        return text == "True"
    return float(text) if "." in text or "e" in text.lower() else int(text)


def parse_rope_scaling(text: str, *, model_type: str) -> dict[str, Any]:
    """'llama3 factor 8.0 (original_max_position_embeddings 8192, low_freq_factor 1.0)' -> dict."""
    match = re.fullmatch(r"(\w+) factor ([\d.]+)(?: \((.*)\))?", text.strip())
    if not match:
        raise ValueError(f"unparsed rope_scaling {text!r}")
    rope_type, factor, inner = match.groups()
    type_key = "type" if model_type in ROPE_TYPE_KEY_OLD else "rope_type"
    result: dict[str, Any] = {type_key: rope_type, "factor": _number(factor)}
    for part in re.split(r"[,;]\s*", inner or ""):
        if part:
            key, value = part.split()
            result[key] = _number(value)
    return result


def parse_layer_types(text: str) -> list[str]:
    """ "['sliding_attention', 'full_attention'] repeated x12" -> the 24-entry list."""
    match = re.fullmatch(r"(\[.*\]) repeated x(\d+)", text.strip())
    if not match:
        raise ValueError(f"unparsed layer_types {text!r}")
    return list(ast.literal_eval(match.group(1))) * int(match.group(2))


def _tied(record: dict[str, Any]) -> bool:
    if record["tie_word_embeddings"] is not None:
        return bool(record["tie_word_embeddings"])
    note = record.get("tie_word_embeddings_note") or ""
    if "default is true" in note:
        return True
    if "default is false" in note:
        return False
    raise ValueError(f"{record['hf_id']}: tie_word_embeddings unknown")


def record_to_config(record: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The config.json a record describes, and notes on class defaults made explicit."""
    notes: list[str] = []
    model_type = record["model_type"]
    text_type = record["text_model_type"] or model_type
    text: dict[str, Any] = {}
    if record["text_model_type"]:
        text["model_type"] = text_type
    for key in PLAIN_KEYS:
        if record.get(key) is not None:
            text[key] = record[key]
    if record["head_dim_source"].startswith("explicit in config"):
        text["head_dim"] = record["head_dim"]
    if text_type == "falcon":
        text["num_kv_heads"] = record["num_key_value_heads"]
        text["new_decoder_architecture"] = True
        text["parallel_attn"] = True
        text["bias"] = False
        text["max_position_embeddings"] = record["max_position_embeddings_effective"]
        notes.append(
            "config.json has no max_position_embeddings and no FFN key: FalconConfig defaults "
            "(2048 positions, FFN 4 x hidden) apply; max_position_embeddings is written out here."
        )
    else:
        text["num_key_value_heads"] = record["num_key_value_heads"]
    if record["num_experts"] is not None:
        text[EXPERTS_KEY.get(text_type, "num_experts")] = record["num_experts"]
    if record["rope_scaling"] is not None:
        text["rope_scaling"] = parse_rope_scaling(record["rope_scaling"], model_type=text_type)
    if record["layer_types"] is not None:
        text["layer_types"] = parse_layer_types(record["layer_types"])
    text["tie_word_embeddings"] = _tied(record)
    if record["tie_word_embeddings"] is None:
        notes.append(
            f"tie_word_embeddings is absent from config.json; class default {text['tie_word_embeddings']}."
        )
    _family_keys(record, text_type, text, notes)

    config: dict[str, Any] = {"architectures": [record["architecture"]], "model_type": model_type}
    dtype = record["torch_dtype"]
    if dtype is not None:
        config["torch_dtype"] = dtype.split()[0]
    if record["text_model_type"]:
        config["text_config"] = _ordered(text)
    else:
        config.update(text)
    quant = record["quantization_config"]
    if quant is not None:
        config["quantization_config"] = {k: v for k, v in quant.items() if k != "note"}
    return _ordered(config), notes


def _ordered(config: dict[str, Any]) -> dict[str, Any]:
    """KEY_ORDER keys first, then the rest as inserted, quantization_config last."""
    first = [key for key in KEY_ORDER if key in config]
    rest = [key for key in config if key not in first and key != "quantization_config"]
    tail = ["quantization_config"] if "quantization_config" in config else []
    return {key: config[key] for key in first + rest + tail}


def _family_keys(record: dict[str, Any], text_type: str, text: dict[str, Any], notes: list[str]) -> None:
    hybrid = record["hybrid"] or {}
    if text_type in ("deepseek_v2", "deepseek_v3", "kimi_k2"):
        text["moe_layer_freq"] = 1
    if text_type in ("qwen3_moe", "qwen3_next"):
        text["decoder_sparse_step"] = 1
        text["mlp_only_layers"] = []
    if text_type == "qwen3_next":
        for key in (
            "full_attention_interval",
            "linear_num_key_heads",
            "linear_num_value_heads",
            "linear_key_head_dim",
            "linear_value_head_dim",
            "linear_conv_kernel_dim",
        ):
            text[key] = hybrid[key]
    if text_type == "jamba":
        # attn_layer_period 8 / offset 4 and expert_layer_period 2 / offset 1 (record notes).
        text.update(attn_layer_period=8, attn_layer_offset=4, expert_layer_period=2, expert_layer_offset=1)
        for key in ("mamba_d_state", "mamba_d_conv", "mamba_expand", "mamba_dt_rank"):
            text[key] = hybrid[key]
    if text_type == "nemotron_h":
        text["hybrid_override_pattern"] = hybrid["hybrid_override_pattern"]
        for record_key, key in (
            ("mamba_num_heads", "mamba_num_heads"),
            ("mamba_head_dim", "mamba_head_dim"),
            ("ssm_state_size", "ssm_state_size"),
            ("n_groups", "n_groups"),
            ("conv_kernel", "conv_kernel"),
            ("chunk_size", "chunk_size"),
        ):
            text[key] = hybrid[record_key]
    if text_type == "minimax_m1":
        text["attn_type_list"] = ([0] * 7 + [1]) * 10  # record: "[0]*7+[1] x 10"
    if text_type == "minimax_m2":
        text["attn_type_list"] = [1] * record["num_hidden_layers"]  # record: "attn_type_list all 1"
    if text_type == "gpt_oss":
        text["attention_bias"] = True
    if text_type == "glm4_moe":
        text["attention_bias"] = True  # record notes: qkv bias
        text["use_qk_norm"] = record["hf_id"] == "zai-org/GLM-4.5"  # Air: "No QK norm"
    if text_type == "gemma3_text" and record["text_model_type"]:
        notes.append(
            "gemma-3 4b/12b/27b config.json lists only a few text keys; vocab_size, "
            "max_position_embeddings, rope_theta and sliding_window_pattern (6) are Gemma3TextConfig "
            "defaults, written out here."
        )


# --- models the reference lacks (likely records) -----------------------------------------------


def _llama_like(
    arch: str,
    model_type: str,
    *,
    layers: int,
    hidden: int,
    heads: int,
    kv: int,
    inter: int,
    vocab: int,
    max_pos: int,
    tied: bool,
    dtype: str = "bfloat16",
    **extra: Any,
) -> dict[str, Any]:
    config: dict[str, Any] = {
        "architectures": [arch],
        "model_type": model_type,
        "num_hidden_layers": layers,
        "hidden_size": hidden,
        "intermediate_size": inter,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "vocab_size": vocab,
        "max_position_embeddings": max_pos,
        "tie_word_embeddings": tied,
        "torch_dtype": dtype,
    }
    config.update(extra)
    return config


def _record_by_id(records: list[dict[str, Any]], hf_id: str) -> dict[str, Any]:
    return next(r for r in records if r["hf_id"] == hf_id)


def extra_entries(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Models requested for the catalog that model_configs.json does not hold."""
    entries: list[dict[str, Any]] = []

    def add(
        hf_id: str,
        config: dict[str, Any],
        *,
        aliases: Iterable[str],
        source: list[str],
        unverified: list[str],
        notes: str,
        confidence: str = "likely",
    ) -> None:
        entries.append(
            {
                "id": hf_id,
                "aliases": list(aliases),
                "source": source,
                "confidence": confidence,
                "unverified_fields": unverified,
                "params_total": None,
                "params_active": None,
                "notes": notes,
                "config": config,
            }
        )

    llama2 = _record_by_id(records, "meta-llama/Llama-2-7b-hf")
    add(
        "codellama/CodeLlama-7b-hf",
        _llama_like(
            "LlamaForCausalLM",
            "llama",
            layers=32,
            hidden=4096,
            heads=32,
            kv=32,
            inter=11008,
            vocab=32016,
            max_pos=16384,
            tied=False,
            rope_theta=1_000_000.0,
        ),
        aliases=["codellama/CodeLlama-7b-Instruct-hf", "codellama-7b"],
        source=[RECALLED, *llama2["source"]],
        unverified=["vocab_size 32016", "rope_theta", "max_position_embeddings", "torch_dtype"],
        notes="Llama-2-7b architecture with vocab 32016 (infilling tokens), rope_theta 1e6, 16K positions.",
    )
    small = _record_by_id(records, "mistralai/Mistral-Small-24B-Instruct-2501")
    add(
        "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
        {
            "architectures": ["Mistral3ForConditionalGeneration"],
            "model_type": "mistral3",
            "torch_dtype": "bfloat16",
            "text_config": {
                "model_type": "mistral",
                "num_hidden_layers": 40,
                "hidden_size": 5120,
                "intermediate_size": 32768,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "head_dim": 128,
                "vocab_size": 131072,
                "max_position_embeddings": 131072,
                "rope_theta": 1_000_000_000.0,
                "tie_word_embeddings": False,
            },
        },
        aliases=["mistralai/Mistral-Small-3.1-24B-Base-2503", "mistral-small-3.1", "mistral-small-3.1-24b"],
        source=[RECALLED, *small["source"]],
        unverified=["max_position_embeddings 131072", "rope_theta", "vision tower not described"],
        notes=(
            "Multimodal (Pixtral vision encoder); text tower has the Mistral-Small-24B-2501 dims with a "
            "128K context (model_configs.json notes: 3.1/3.2 use 131072 in text_config). head_dim 128, "
            "not 5120/32 = 160. params exclude the vision tower."
        ),
    )
    for size in ("1.5B", "7B", "14B", "32B", "72B"):
        base = _record_by_id(records, f"Qwen/Qwen2.5-{size}")
        config, _ = record_to_config(base)
        config["max_position_embeddings"] = 32768
        add(
            f"Qwen/Qwen2.5-{size}-Instruct",
            config,
            aliases=[],
            source=[
                "max_position_embeddings 32768 for -Instruct: model_configs.json notes (Qwen2.5-32B: "
                "'Instruct uses 32768'; Qwen2.5-7B: 'Instruct 32768'); not verified here",
                *base["source"],
            ],
            unverified=[
                "max_position_embeddings",
                "sliding_window value (inert)",
                *base["unverified_fields"],
            ],
            notes=(
                f"Same architecture as Qwen/Qwen2.5-{size}; the Instruct config ships "
                "max_position_embeddings 32768 (YaRN for 128K is documented but not set in config.json)."
            ),
        )
    add(
        "Qwen/Qwen1.5-MoE-A2.7B",
        {
            "architectures": ["Qwen2MoeForCausalLM"],
            "model_type": "qwen2_moe",
            "num_hidden_layers": 24,
            "hidden_size": 2048,
            "intermediate_size": 5632,
            "moe_intermediate_size": 1408,
            "shared_expert_intermediate_size": 5632,
            "num_attention_heads": 16,
            "num_key_value_heads": 16,
            "num_experts": 60,
            "num_experts_per_tok": 4,
            "decoder_sparse_step": 1,
            "vocab_size": 151936,
            "max_position_embeddings": 8192,
            "rope_theta": 1_000_000.0,
            "use_sliding_window": False,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
        },
        aliases=["Qwen/Qwen1.5-MoE-A2.7B-Chat", "qwen1.5-moe"],
        source=[RECALLED],
        unverified=["all fields"],
        notes="60 routed experts (top-4) + 1 shared expert of 5632 (4 x 1408); card 14.3B / 2.7B active.",
    )
    add(
        "moonshotai/Kimi-VL-A3B-Instruct",
        {
            "architectures": ["KimiVLForConditionalGeneration"],
            "model_type": "kimi_vl",
            "torch_dtype": "bfloat16",
            "text_config": {
                "model_type": "deepseek_v3",
                "num_hidden_layers": 27,
                "hidden_size": 2048,
                "intermediate_size": 11264,
                "moe_intermediate_size": 1408,
                "num_attention_heads": 16,
                "num_key_value_heads": 16,
                "kv_lora_rank": 512,
                "q_lora_rank": None,
                "qk_rope_head_dim": 64,
                "qk_nope_head_dim": 128,
                "v_head_dim": 128,
                "n_routed_experts": 64,
                "num_experts_per_tok": 6,
                "n_shared_experts": 2,
                "first_k_dense_replace": 1,
                "moe_layer_freq": 1,
                "vocab_size": 163840,
                "max_position_embeddings": 131072,
                "tie_word_embeddings": False,
            },
        },
        aliases=["moonshotai/Kimi-VL-A3B-Thinking", "kimi-vl-a3b", "kimi-vl"],
        source=[RECALLED],
        unverified=["intermediate_size 11264 (Moonlight)", "max_position_embeddings 131072", "rope_scaling"],
        notes=(
            "Text tower is a Moonlight-style DeepSeek-V3 MLA MoE (kv_lora_rank 512 + rope 64 = 576 latent); "
            "MoonViT vision tower not counted in params."
        ),
    )
    qwen72 = _record_by_id(records, "Qwen/Qwen2.5-72B")
    kimi_dev, _ = record_to_config(qwen72)
    add(
        "moonshotai/Kimi-Dev-72B",
        kimi_dev,
        aliases=["kimi-dev"],
        source=[RECALLED, *qwen72["source"]],
        unverified=["all fields (Qwen2.5-72B base dims assumed)", "max_position_embeddings"],
        notes="Fine-tune of Qwen2.5-72B (Qwen2ForCausalLM); dims copied from the Qwen/Qwen2.5-72B record.",
    )
    add(
        "google/gemma-7b",
        _llama_like(
            "GemmaForCausalLM",
            "gemma",
            layers=28,
            hidden=3072,
            heads=16,
            kv=16,
            inter=24576,
            vocab=256000,
            max_pos=8192,
            tied=True,
            head_dim=256,
        ),
        aliases=["google/gemma-7b-it", "gemma-7b-it"],
        source=[RECALLED],
        unverified=["all fields", "torch_dtype"],
        notes="MHA (16 KV heads x 256); 8.54B parameters including the 0.79B tied embedding.",
    )
    add(
        "google/gemma-2-2b-it",
        _llama_like(
            "Gemma2ForCausalLM",
            "gemma2",
            layers=26,
            hidden=2304,
            heads=8,
            kv=4,
            inter=9216,
            vocab=256000,
            max_pos=8192,
            tied=True,
            head_dim=256,
            sliding_window=4096,
            query_pre_attn_scalar=256,
            attn_logit_softcapping=50.0,
            final_logit_softcapping=30.0,
        ),
        aliases=["google/gemma-2-2b", "gemma-2-2b"],
        source=[RECALLED],
        unverified=["torch_dtype", "query_pre_attn_scalar"],
        notes="gemma-2 alternation: 13 sliding (4096) + 13 global layers. head_dim 256 (2304/8 = 288).",
    )
    gemma9 = _record_by_id(records, "google/gemma-2-9b")
    gemma9_it, gemma9_notes = record_to_config(gemma9)
    gemma9_it["torch_dtype"] = "bfloat16"
    add(
        "google/gemma-2-9b-it",
        gemma9_it,
        aliases=["gemma-2-9b-it"],
        source=gemma9["source"],
        unverified=["torch_dtype bfloat16 (mlc copy; the base repo says float32)"],
        notes="Same architecture as google/gemma-2-9b; the -it config declares bfloat16. "
        + " ".join(gemma9_notes),
        confidence="verified",
    )
    add(
        "microsoft/phi-2",
        _llama_like(
            "PhiForCausalLM",
            "phi",
            layers=32,
            hidden=2560,
            heads=32,
            kv=32,
            inter=10240,
            vocab=51200,
            max_pos=2048,
            tied=False,
            dtype="float16",
            partial_rotary_factor=0.4,
            rope_theta=10000.0,
        ),
        aliases=["phi-2"],
        source=[RECALLED],
        unverified=["all fields"],
        notes="Parallel attention + non-gated GELU MLP with biases; partial rotary 0.4; float16 checkpoint.",
    )
    add(
        "ibm-granite/granite-3.1-2b-instruct",
        _llama_like(
            "GraniteForCausalLM",
            "granite",
            layers=40,
            hidden=2048,
            heads=32,
            kv=8,
            inter=8192,
            vocab=49155,
            max_pos=131072,
            tied=True,
        ),
        aliases=["ibm-granite/granite-3.1-2b-base", "granite-3.1-2b"],
        source=[RECALLED],
        unverified=["all fields"],
        notes="GQA 32 query / 8 KV heads of 64; tied embeddings; 128K positions.",
    )
    add(
        "ibm-granite/granite-3.1-8b-instruct",
        _llama_like(
            "GraniteForCausalLM",
            "granite",
            layers=40,
            hidden=4096,
            heads=32,
            kv=8,
            inter=12800,
            vocab=49155,
            max_pos=131072,
            tied=True,
        ),
        aliases=[
            "ibm-granite/granite-3.1-8b-base",
            "granite-3.1-8b",
            "ibm-granite/granite-3.3-8b-instruct",
            "granite-3.3-8b-instruct",
            "granite-3.3-8b",
        ],
        source=[RECALLED],
        unverified=["all fields", "granite-3.3-8b-instruct treated as identical (vocab not re-checked)"],
        notes="granite-3.3-8b-instruct has the same architecture (alias).",
    )
    add(
        "ibm-granite/granite-vision-3.3-2b",
        {
            "architectures": ["LlavaNextForConditionalGeneration"],
            "model_type": "llava_next",
            "torch_dtype": "bfloat16",
            "text_config": {
                "model_type": "granite",
                "num_hidden_layers": 40,
                "hidden_size": 2048,
                "intermediate_size": 8192,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "vocab_size": 49155,
                "max_position_embeddings": 131072,
                "tie_word_embeddings": True,
            },
        },
        aliases=["granite-vision-3.3-2b", "granite-vision"],
        source=[RECALLED],
        unverified=[
            "all fields (text tower = granite-3.1-2b-instruct assumed)",
            "vision tower not described",
        ],
        notes="LLaVA-NeXT with a SigLIP vision tower; text tower = granite-3.1-2b. params exclude vision.",
    )
    return entries


# --- putting files together --------------------------------------------------------------------


def record_entry(record: dict[str, Any]) -> dict[str, Any]:
    config, notes = record_to_config(record)
    computed = record["params_computed_from_config"]
    total = computed.get("total") if isinstance(computed, dict) else None
    active = computed.get("active_per_token") if isinstance(computed, dict) else None
    text_notes = [record["notes"]] if record["notes"] else []
    text_notes += notes
    if record["hf_id"] in ALIAS_NOTES:
        text_notes.append(ALIAS_NOTES[record["hf_id"]])
    text_notes.append(f"Model card: {record['total_params']}.")
    return {
        "id": RENAMED_IDS.get(record["hf_id"], record["hf_id"]),
        "aliases": [a for a in ALIASES.get(record["hf_id"], []) if a != RENAMED_IDS.get(record["hf_id"])]
        + ([record["hf_id"]] if record["hf_id"] in RENAMED_IDS else []),
        "source": record["source"],
        "confidence": record["confidence"],
        "unverified_fields": record["unverified_fields"],
        "params_total": total,
        "params_active": active,
        "notes": " ".join(text_notes),
        "config": config,
    }


def finish(entry: dict[str, Any]) -> dict[str, Any]:
    """Fill params from the counter where the reference had no computed total."""
    if entry["params_total"] is None:
        total, active = count_params(entry["config"])
        entry["params_total"] = total
        entry["params_active"] = active
        entry["notes"] = (entry["notes"] + " params_total/params_active counted by count_params.").strip()
    return entry


class _Dumper(yaml.SafeDumper):  # type: ignore[misc]
    pass


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    flow = bool(data) and all(
        isinstance(x, int | float | bool) or (isinstance(x, str) and len(x) < 24) for x in data
    )
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow and len(data) > 2)


_Dumper.add_representer(list, _represent_list)


def file_name(hf_id: str) -> str:
    """ "meta-llama/Llama-3.1-8B" -> "meta_llama_llama_3.1_8b.yaml"."""
    return re.sub(r"[^A-Za-z0-9.]+", "_", hf_id).lower() + ".yaml"


def write_spec_files(
    texts: dict[str, str], out_dir: Path, *, force: bool = False
) -> tuple[list[str], list[str]]:
    """Write each file name -> text into ``out_dir``: (written, kept). A file that exists with other text is kept
    unless ``force``: model_specs/ holds presets added by hand after the first run (round 8: 54 of 135) and
    generated files edited since (10: corrected params_total, Llama-3.1-405B's other revision), which a rerun
    must not lose. Nothing is deleted."""
    out_dir.mkdir(exist_ok=True)
    written, kept = [], []
    for name, text in texts.items():
        path = out_dir / name
        if path.exists() and path.read_text(encoding="utf-8") != text and not force:
            kept.append(name)
            continue
        path.write_text(text, encoding="utf-8")
        written.append(name)
    return written, kept


def write_models(
    records: list[dict[str, Any]], out_dir: Path, *, force: bool = False
) -> tuple[int, list[str]]:
    entries = [record_entry(r) for r in records] + extra_entries(records)
    header = "# Generated by scripts/gen_model_specs.py from the reference model catalog; data, not code.\n"
    texts = {
        file_name(entry["id"]): header
        + yaml.dump(finish(entry), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110)
        for entry in entries
    }
    written, kept = write_spec_files(texts, out_dir, force=force)
    return len(written), kept


# --- devices -----------------------------------------------------------------------------------

PLATFORMS = {
    "NVIDIA": "cuda",
    "AMD": "rocm",
    "Intel (Habana)": "hpu",
    "Google": "tpu",
    "Huawei": "npu",
    "AWS": "neuron",
}
SERVER_SKUS = {"huawei-atlas-800i-a2", "huawei-atlas-800i-a3"}  # whole-server totals, not one device
DEVICE_ALIASES: dict[str, list[str]] = {
    "nvidia-h100-sxm-80gb": ["h100", "h100-sxm", "h100-sxm5", "h100-80gb", "NVIDIA H100 80GB HBM3"],
    "nvidia-h100-pcie-80gb": ["h100-pcie", "NVIDIA H100 PCIe"],
    "nvidia-h100-nvl-94gb": ["h100-nvl", "NVIDIA H100 NVL"],
    "nvidia-h200-141gb": ["h200", "h200-sxm", "NVIDIA H200"],
    "nvidia-h20-96gb": ["h20", "NVIDIA H20"],
    "nvidia-h20-3e-141gb": ["h20-3e", "h20-141gb"],
    "nvidia-h800-80gb": ["h800", "NVIDIA H800"],
    "nvidia-b200": ["b200", "NVIDIA B200"],
    "nvidia-gb200": ["gb200"],
    "nvidia-b300": ["b300"],
    "nvidia-gb300": ["gb300"],
    "nvidia-a100-sxm4-80gb": [
        "a100",
        "a100-80",
        "a100-80gb",
        "a100-sxm",
        "a100-sxm4",
        "NVIDIA A100-SXM4-80GB",
    ],
    "nvidia-a100-pcie-80gb": ["a100-pcie", "a100-pcie-80", "NVIDIA A100 80GB PCIe"],
    "nvidia-a100-sxm4-40gb": ["a100-40", "a100-40gb", "a100-sxm4-40", "NVIDIA A100-SXM4-40GB"],
    "nvidia-a100-pcie-40gb": ["a100-pcie-40", "NVIDIA A100-PCIE-40GB"],
    "nvidia-a800-80gb": ["a800", "a800-80gb"],
    "nvidia-l40s-48gb": ["l40s", "NVIDIA L40S"],
    "nvidia-l40-48gb": ["l40", "NVIDIA L40"],
    "nvidia-l4-24gb": ["l4", "NVIDIA L4"],
    "nvidia-a10g-24gb": ["a10g", "NVIDIA A10G"],
    "nvidia-a10-24gb": ["a10", "NVIDIA A10"],
    "nvidia-a40-48gb": ["a40", "NVIDIA A40"],
    "nvidia-rtx-a6000-48gb": ["rtx-a6000", "a6000", "NVIDIA RTX A6000"],
    "nvidia-rtx-6000-ada-48gb": ["rtx-6000-ada", "rtx6000-ada", "NVIDIA RTX 6000 Ada Generation"],
    "nvidia-rtx-pro-6000-blackwell-96gb": ["rtx-pro-6000", "rtx-pro-6000-blackwell", "rtx6000-pro"],
    "nvidia-rtx-4090-24gb": ["rtx4090", "rtx-4090", "4090", "NVIDIA GeForce RTX 4090"],
    "nvidia-rtx-5090-32gb": ["rtx5090", "rtx-5090", "5090", "NVIDIA GeForce RTX 5090"],
    "nvidia-rtx-3090-24gb": ["rtx3090", "rtx-3090", "3090", "NVIDIA GeForce RTX 3090"],
    "nvidia-v100-sxm2-32gb": ["v100", "v100-32", "v100-32gb", "v100-sxm2"],
    "nvidia-v100-16gb": ["v100-16", "v100-16gb"],
    "nvidia-t4-16gb": ["t4", "Tesla T4"],
    "amd-mi300x-192gb": ["mi300x", "AMD Instinct MI300X"],
    "amd-mi325x-256gb": ["mi325x"],
    "amd-mi355x-288gb": ["mi355x"],
    "amd-mi250x-128gb": ["mi250x"],
    "amd-mi210-64gb": ["mi210"],
    "intel-gaudi2-96gb": ["gaudi2", "gaudi-2", "hl-225"],
    "intel-gaudi3-128gb": ["gaudi3", "gaudi-3"],
    "google-tpu-v5e": ["tpu-v5e", "v5e", "v5litepod"],
    "google-tpu-v5p": ["tpu-v5p", "v5p"],
    "google-tpu-v6e": ["tpu-v6e", "v6e", "trillium"],
    "huawei-ascend-910b-64gb": [
        "910b",
        "ascend-910b",
        "910b-64gb",
        "910b1",
        "910b2",
        "910b3",
        "atlas-800i-a2",
        "atlas-800t-a2",
    ],
    "huawei-ascend-910b4-32gb": ["910b4", "ascend-910b4", "atlas-800i-a2-32g"],
    "huawei-ascend-910c": ["910c", "ascend-910c", "atlas-800i-a3", "atlas-a3"],
    "aws-trainium1": ["trainium1", "trainium", "trn1"],
    "aws-trainium2": ["trainium2", "trn2"],
    "aws-trainium3": ["trainium3", "trn3"],
    "aws-inferentia2": ["inferentia2", "inf2"],
}
# Per-device bidirectional GB/s read from each record's interconnect text. PCIe-only parts get the
# PCIe link (Gen3 32 / Gen4 64 / Gen5 128); optional NVLink bridges are noted, not assumed.
INTERCONNECT_GBPS: dict[str, tuple[float | None, str]] = {
    "nvidia-h100-sxm-80gb": (900, "NVLink 4 via NVSwitch"),
    "nvidia-h100-pcie-80gb": (128, "PCIe Gen5 x16; optional NVLink bridge pairs reach 600"),
    "nvidia-h100-nvl-94gb": (128, "PCIe Gen5 x16; NVLink bridge pairs reach 600 between two cards"),
    "nvidia-h200-141gb": (900, "NVLink 4 (NV18) on HGX"),
    "nvidia-h20-96gb": (900, "full Hopper NVLink"),
    "nvidia-h20-3e-141gb": (900, "NVLink (recalled)"),
    "nvidia-h800-80gb": (400, "NVLink cut to 8 links (NV8); ~160 GB/s one-way measured by DeepSeek"),
    "nvidia-b200": (1800, "NVLink 5"),
    "nvidia-gb200": (1800, "NVLink 5 in NVL72"),
    "nvidia-b300": (1800, "NVLink 5"),
    "nvidia-gb300": (1800, "NVLink 5 in NVL72"),
    "nvidia-a100-sxm4-80gb": (600, "NVLink 3 (NV12) via NVSwitch"),
    "nvidia-a100-pcie-80gb": (64, "PCIe Gen4 x16; optional NVLink bridge pairs reach 600"),
    "nvidia-a100-sxm4-40gb": (600, "NVLink 3"),
    "nvidia-a100-pcie-40gb": (64, "PCIe Gen4 x16; optional NVLink bridge pairs"),
    "nvidia-a800-80gb": (400, "NVLink limited to 400 GB/s"),
    "nvidia-l40s-48gb": (64, "PCIe Gen4 x16 only"),
    "nvidia-l40-48gb": (64, "PCIe Gen4 x16 only"),
    "nvidia-l4-24gb": (64, "PCIe Gen4 x16"),
    "nvidia-a10g-24gb": (64, "PCIe Gen4 x16 only"),
    "nvidia-a10-24gb": (64, "PCIe Gen4 x16 only"),
    "nvidia-a40-48gb": (64, "PCIe Gen4 x16; NVLink bridge pairs 112.5"),
    "nvidia-rtx-a6000-48gb": (64, "PCIe Gen4 x16; NVLink bridge pairs 112.5"),
    "nvidia-rtx-6000-ada-48gb": (64, "PCIe Gen4 x16 only"),
    "nvidia-rtx-pro-6000-blackwell-96gb": (128, "PCIe Gen5 x16 only"),
    "nvidia-rtx-4090-24gb": (64, "PCIe Gen4 x16; GeForce P2P disabled by default"),
    "nvidia-rtx-5090-32gb": (128, "PCIe Gen5 x16 only"),
    "nvidia-rtx-3090-24gb": (64, "PCIe Gen4 x16; NVLink bridge pairs 112.5"),
    "nvidia-v100-sxm2-32gb": (300, "NVLink 2 (SXM2; hybrid cube-mesh); PCIe cards: Gen3 32"),
    "nvidia-v100-16gb": (300, "NVLink 2 on SXM2"),
    "nvidia-t4-16gb": (32, "PCIe Gen3 x16"),
    "amd-mi300x-192gb": (896, "Infinity Fabric, 7 links aggregate"),
    "amd-mi325x-256gb": (896, "7 Infinity Fabric links as MI300X (aggregate not stated in the record)"),
    "amd-mi355x-288gb": (None, "Infinity Fabric; no figure in the record"),
    "amd-mi250x-128gb": (None, "Infinity Fabric; no figure in the record"),
    "amd-mi210-64gb": (64, "PCIe Gen4 x16; Infinity Fabric bridge for up to 4 cards"),
    "intel-gaudi2-96gb": (525, "21 x 100GbE intra-node = 262.5 GB/s each way"),
    "intel-gaudi3-128gb": (1200, "21 x 200GbE intra-node, ~1.2 TB/s per card (record)"),
    "google-tpu-v5e": (200, "ICI 1600 Gbps per chip (direction not stated)"),
    "google-tpu-v5p": (1200, "ICI 1200 GBps bidirectional per chip"),
    "google-tpu-v6e": (800, "ICI 800 GBps bidirectional (some docs: 3584 Gbps)"),
    "huawei-ascend-910b-64gb": (392, "HCCS full mesh: 56 GB/s per NPU pair x 7 peers = 392 aggregate"),
    "huawei-ascend-910b4-32gb": (392, "HCCS full mesh as 910B: 56 per pair, 392 aggregate"),
    "huawei-ascend-910c": (None, "HCCS between HiAM modules; no per-device figure in the record"),
    "aws-trainium1": (None, "NeuronLink-v2; no per-device figure in the record"),
    "aws-trainium2": (None, "NeuronLink-v3; no per-device figure in the record"),
    "aws-trainium3": (2560, "NeuronLink-v4, 2.56 TB/s per device"),
    "aws-inferentia2": (None, "NeuronLink-v2 ring; no per-device figure in the record"),
}
FP8_KV_MIN_SM = 89  # Ada/Hopper/Blackwell: fp8 KV through the default CUDA backends
FP8_KV_ROCM_ARCHS = ("gfx942", "gfx950")  # MI300-class: fp8 KV supported on ROCm


def _compute_capability(record: dict[str, Any]) -> str | None:
    raw = record.get("compute_capability")
    if PLATFORMS[record["vendor"]] != "cuda" or raw is None:
        return None
    return str(raw).split()[0]


def device_entry(record: dict[str, Any]) -> dict[str, Any]:
    platform = PLATFORMS[record["vendor"]]
    cc = _compute_capability(record)
    notes = [n for n in (record.get("planner_total_gib_note"), record.get("notes")) if n]
    fp8_kv = False
    if cc is not None:
        major, minor = cc.split(".")
        fp8_kv = int(major) * 10 + int(minor) >= FP8_KV_MIN_SM
        if not fp8_kv:
            notes.append(
                "fp8_kv false: the default backend (FlashAttention-2) has no fp8 KV cache on this "
                "architecture; FlashInfer/Triton can store fp8 KV if selected explicitly."
            )
    elif platform == "rocm":
        fp8_kv = str(record.get("compute_capability")) in FP8_KV_ROCM_ARCHS
        notes.append(f"ROCm arch {record.get('compute_capability')}.")
    int8_kv = platform == "npu"
    if int8_kv:
        notes.append("int8 (C8) KV cache through vllm-ascend's quantization description; no fp8.")
    gbps, gbps_note = INTERCONNECT_GBPS[record["id"]]
    notes.append(f"interconnect_gbps: {gbps_note}.")
    if record.get("typical_node_gpus") is None:
        notes.append("typical node size unknown; default 8 used.")
    entry: dict[str, Any] = {
        "id": record["id"],
        "name": record["name"],
        "vendor": record["vendor"],
        "platform": platform,
        "memory_total_bytes": round(record["planner_total_gib"] * GIB),
        "memory_nominal_gib": record["memory_gib_nominal"],
        "compute_capability": cc,
        "fp8_kv": fp8_kv,
        "int8_kv": int8_kv,
        "memory_bandwidth_tbps": record.get("memory_bandwidth_tbps"),
        "bf16_dense_tflops": record.get("bf16_dense_tflops"),
        "interconnect": record["interconnect"],
        "interconnect_gbps": gbps,
        "typical_node_devices": record.get("typical_node_gpus") or 8,
        "peer_link": None,  # not in the reference: device_specs/devices_hand.yaml
        "aliases": DEVICE_ALIASES[record["id"]],
        "notes": " ".join(notes),
        "confidence": record["confidence"],
        "sources": [s if isinstance(s, str) else json.dumps(s) for s in record.get("sources", [])],
    }
    return entry


# the figures the reference lacks, kept by hand and laid over each generated entry (so a rerun keeps them)
HAND_FILE = REPO_ROOT / "device_specs" / "devices_hand.yaml"
HAND_FIGURES = ("bf16_dense_tflops", "memory_bandwidth_tbps")


def load_hand(path: Path = HAND_FILE) -> dict[str, Any]:
    hand: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return hand


def with_hand_figures(entry: dict[str, Any], hand: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``entry`` with devices_hand.yaml's peer_link, figures and added sources; and a line for each reference
    figure a hand one replaces (printed, so a reference that gained the figure is seen)."""
    out, replaced = dict(entry), []
    out["peer_link"] = hand["peer_link"].get(entry["id"], entry["peer_link"])
    figures = hand["figures"].get(entry["id"], {})
    for field in HAND_FIGURES:
        if field not in figures:
            continue
        if entry[field] is not None and entry[field] != figures[field]:
            replaced.append(f"{entry['id']} {field}: reference {entry[field]}, hand {figures[field]} kept")
        out[field] = figures[field]
    out["sources"] = [
        *entry["sources"],
        *(s for s in figures.get("sources", []) if s not in entry["sources"]),
    ]
    return out, replaced


def render_devices(devices: list[dict[str, Any]], skipped: list[str]) -> str:
    """devices.yaml's text: the header, then the entries as yaml.dump writes them."""
    header = (
        "# Generated by scripts/gen_model_specs.py from the reference device catalog and device_specs/devices_hand.yaml\n"
        "# (the figures the reference lacks, kept by hand); data, not code: edit those two, not this file.\n"
        "# memory_total_bytes = round(planner_total_gib x 2**30): what the runtime reports as total.\n"
        "# Skipped: " + "; ".join(skipped) + ".\n"
        "# Atlas server aliases (atlas-800i-a2, atlas-800i-a3) resolve to their per-NPU device.\n"
    )
    body = yaml.dump({"devices": devices}, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110)
    return header + body


def write_devices(
    records: list[dict[str, Any]], out_file: Path, hand: dict[str, Any] | None = None
) -> tuple[int, list[str]]:
    hand = load_hand() if hand is None else hand
    skipped: list[str] = []
    devices = []
    for record in records:
        if record["id"] in SERVER_SKUS:
            skipped.append(f"{record['id']} (whole-server total, not one device)")
            continue
        if record["planner_total_gib"] is None:
            skipped.append(f"{record['id']} (no planner_total_gib)")
            continue
        entry, replaced = with_hand_figures(device_entry(record), hand)
        for line in replaced:
            print(line)
        devices.append(entry)
    out_file.parent.mkdir(exist_ok=True)
    out_file.write_text(render_devices(devices, skipped), encoding="utf-8")
    return len(devices), skipped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, default=Path("/work/shared/reference"))
    parser.add_argument(
        "--force", action="store_true", help="overwrite model spec files edited since they were generated"
    )
    args = parser.parse_args()
    records = json.loads((args.reference / "model_configs.json").read_text(encoding="utf-8"))
    count, kept = write_models(records, REPO_ROOT / "model_specs", force=args.force)
    print(
        f"wrote {count} model spec files; kept {len(kept)} that differ (edited by hand?): {', '.join(kept)}"
    )
    devices = json.loads((args.reference / "devices.json").read_text(encoding="utf-8"))
    written, skipped = write_devices(devices, REPO_ROOT / "device_specs" / "devices.yaml")
    print(f"wrote {written} devices; skipped {', '.join(skipped)}")


if __name__ == "__main__":
    main()
