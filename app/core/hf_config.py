"""A Hugging Face ``config.json`` -> :class:`ModelSpec`, following vLLM's own rules.

Everything here is a pure function of the JSON object. Rules are cited where they come from:
``vllm-accounting.md`` (the reference read from released vLLM sdists), vLLM's
``ModelConfig`` (``get_head_size``, ``get_total_num_kv_heads``, ``_get_and_verify_max_len``) and the
transformers config classes whose defaults fill keys that a config.json leaves out.

Any JSON object may come in (a pasted config, a fuzzer's dict); the only exception that leaves
this module is :class:`ConfigError`, naming the JSON key at fault.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import ValidationError

from app.core.errors import ConfigError
from app.core.specs import (
    LayerKind,
    MambaKind,
    MambaSpec,
    MLASpec,
    ModelSpec,
    QuantMethod,
    QuantSpec,
)
from app.core.text import Text

# --- sanity bounds: real models are far inside these; they stop absurd input from allocating
# --- a billion-entry layer list or overflowing a float.
MAX_LAYERS = 10_000  # largest real decoder stacks have ~200 layers (Nemotron-H 118 "layers")
MAX_DIM = 100_000_000  # hidden / FFN / vocab / head sizes (largest real vocab ~262k)
MAX_POSITIONS = 2**40  # position limits (largest real: 10,485,760 for Llama-4-Scout)
MAX_EXPERTS = 1_000_000

DEFAULT_MAX_MODEL_LEN = 2048  # vLLM `_get_and_verify_max_len`: no length key -> 2048 + warning
# vLLM's possible_keys for the model's length, in its order; it takes the minimum of those present.
MAX_LEN_KEYS = (
    "max_position_embeddings",  # OPT, Llama, ...
    "n_positions",  # GPT-2
    "max_seq_len",  # MPT
    "seq_length",  # ChatGLM2
    "model_max_length",  # Command-R
    "max_target_positions",  # Whisper
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)
# Reference §7 (0.33.0 `_get_and_verify_max_len`): the RoPE `factor` multiplies the derived length
# unless the rope type is one of these, or the model type is gemma3 (its 128K is already scaled).
# NOTE: vLLM 0.11 multiplied yarn as original_max_position_embeddings x factor; 0.33.0 does not.
ROPE_TYPES_NOT_SCALING_LEN = frozenset(
    {"su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling"}
)

DEFAULT_FFN_MULTIPLIER = 4  # GPT-2 / Falcon: no FFN key means 4 x hidden_size
GEMMA3_SLIDING_WINDOW_PATTERN = 6  # Gemma3TextConfig default: 5 local layers per global layer
LLAMA4_NOPE_LAYER_INTERVAL = 4  # Llama4TextConfig default: every 4th layer is NoPE/global
MXFP4_GROUP_SIZE = 32  # one e8m0 scale per 32 values (OCP MX spec)
NVFP4_GROUP_SIZE = 16  # one fp8 scale per 16 values
BNB_4BIT_BLOCK_SIZE = 64  # bitsandbytes nf4/fp4 default blocksize

# transformers config-class defaults for keys that real config.json files leave out. The values
# are what `AutoConfig` would fill in (reference model_configs.md; e.g. gemma-3's text_config lists
# neither vocab_size nor max_position_embeddings, falcon-40b has no FFN or position key).
CLASS_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma": {"tie_word_embeddings": True},
    "gemma2": {"tie_word_embeddings": True},
    "gemma3_text": {
        "tie_word_embeddings": True,
        "vocab_size": 262_208,
        "max_position_embeddings": 131_072,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "sliding_window": 4096,
        "sliding_window_pattern": GEMMA3_SLIDING_WINDOW_PATTERN,
    },
    "falcon": {"tie_word_embeddings": True, "max_position_embeddings": 2048},
    "qwen2": {"use_sliding_window": False},
    "qwen2_moe": {"use_sliding_window": False},
    "qwen3": {"use_sliding_window": False},
    "qwen3_moe": {"use_sliding_window": False},
    "qwen3_next": {"full_attention_interval": 4},
    "llama4_text": {"interleave_moe_layer_step": 1},
}
# Multimodal wrappers whose text tower config is the one vLLM sizes (vLLM get_hf_text_config).
TEXT_CONFIG_KEYS = ("text_config", "llm_config", "language_config")

# Models whose MLP is up -> act -> down (two matrices), not gated (three). Parameter count only.
UNGATED_MLP_MODEL_TYPES = frozenset(
    {"falcon", "phi", "gpt2", "gpt_neox", "gptj", "gpt_bigcode", "bloom", "opt", "mpt", "starcoder2"}
    | {"nemotron", "nemotron_h"}
)
# Models with q/k/v biases even though config.json has no bias key (Qwen2 family).
QKV_BIAS_MODEL_TYPES = frozenset({"qwen2", "qwen2_moe"})
# Models with per-head RMSNorm on q and k (head_dim weights each). Parameter count only.
QK_NORM_MODEL_TYPES = frozenset({"qwen3", "qwen3_moe", "qwen3_next", "gemma3_text", "gemma3"})
# Gated attention output (q_proj emits query + gate) — Qwen3-Next full-attention layers.
GATED_ATTENTION_MODEL_TYPES = frozenset({"qwen3_next"})

LAYER_TYPE_NAMES: dict[str, LayerKind] = {
    "full_attention": LayerKind.FULL,
    "attention": LayerKind.FULL,
    "global": LayerKind.FULL,
    "sliding_attention": LayerKind.SLIDING,
    "sliding_window": LayerKind.SLIDING,
    "local": LayerKind.SLIDING,
    "chunked_attention": LayerKind.CHUNKED,
    "linear_attention": LayerKind.MAMBA,
    "mamba": LayerKind.MAMBA,
    "mamba1": LayerKind.MAMBA,
    "mamba2": LayerKind.MAMBA,
    "mlp": LayerKind.NONE,
    "moe": LayerKind.NONE,
}
# Nemotron-H `hybrid_override_pattern`: one character per entry of num_hidden_layers.
HYBRID_PATTERN_CHARS: dict[str, LayerKind] = {
    "M": LayerKind.MAMBA,  # Mamba-2 mixer
    "*": LayerKind.FULL,  # attention
    "-": LayerKind.NONE,  # MLP-only block
    "E": LayerKind.NONE,  # MoE-only block (Nemotron-3)
}
DTYPE_NAMES: dict[str, Literal["bfloat16", "float16", "float32"]] = {
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
}
CONFIDENCES = ("verified", "likely", "recalled", "user")


# ----------------------------------------------------------------------------------------------
# Reading typed values out of an arbitrary JSON object
# ----------------------------------------------------------------------------------------------


def _as_int(key: str, value: Any, *, minimum: int, maximum: int) -> int:
    """A JSON integer (or integral float) within [minimum, maximum]; bools are not integers."""
    if isinstance(value, bool):
        raise ConfigError(key, Text("must be an integer, got {value!r}", value=value))
    if isinstance(value, float):
        if not value.is_integer():
            raise ConfigError(key, Text("must be an integer, got {value!r}", value=value))
        value = int(value)
    if not isinstance(value, int):
        raise ConfigError(key, Text("must be an integer, got {name}", name=type(value).__name__))
    if value < minimum or value > maximum:
        raise ConfigError(
            key,
            Text(
                "must be between {minimum} and {maximum}, got {value}",
                minimum=minimum,
                maximum=maximum,
                value=value,
            ),
        )
    return value


def _as_float(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(key, Text("must be a number, got {name}", name=type(value).__name__))
    result = float(value)
    if not math.isfinite(result):
        raise ConfigError(key, Text("must be finite, got {value!r}", value=value))
    return result


def _as_bool(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(key, Text("must be true or false, got {value!r}", value=value))
    return value


def _as_str(key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(key, Text("must be a string, got {name}", name=type(value).__name__))
    return value


def _as_mapping(key: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(key, Text("must be an object, got {name}", name=type(value).__name__))
    return value


def _as_list(key: str, value: Any) -> Sequence[Any]:
    if not isinstance(value, list | tuple):
        raise ConfigError(key, Text("must be a list, got {name}", name=type(value).__name__))
    return value


def _present(cfg: Mapping[str, Any], key: str) -> bool:
    return cfg.get(key) is not None


def _int(cfg: Mapping[str, Any], key: str, *, minimum: int = 1, maximum: int = MAX_DIM) -> int | None:
    """The integer at ``key``, or None when the key is absent or null."""
    value = cfg.get(key)
    if value is None:
        return None
    return _as_int(key, value, minimum=minimum, maximum=maximum)


def _first_int(
    cfg: Mapping[str, Any], keys: Sequence[str], *, minimum: int = 1, maximum: int = MAX_DIM
) -> int | None:
    """The first of ``keys`` that is present (vLLM/transformers alias lists)."""
    for key in keys:
        if _present(cfg, key):
            return _as_int(key, cfg[key], minimum=minimum, maximum=maximum)
    return None


def _required_int(cfg: Mapping[str, Any], keys: Sequence[str], *, maximum: int = MAX_DIM) -> int:
    value = _first_int(cfg, keys, maximum=maximum)
    if value is None:
        raise ConfigError(keys[0], "missing")
    return value


def _flag(cfg: Mapping[str, Any], key: str, *, default: bool = False) -> bool:
    value = cfg.get(key)
    return default if value is None else _as_bool(key, value)


# ----------------------------------------------------------------------------------------------
# The text config, with class defaults filled in
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Configs:
    top: Mapping[str, Any]
    text: Mapping[str, Any]  # text tower (== top for text-only models), class defaults applied
    model_type: str  # top-level model_type
    text_model_type: str


def _split_configs(config: Any) -> _Configs:
    top = _as_mapping("config", config)
    top_type = _as_str("model_type", top["model_type"]) if _present(top, "model_type") else ""
    text: Mapping[str, Any] = top
    for key in TEXT_CONFIG_KEYS:
        if _present(top, key):
            text = _as_mapping(key, top[key])
            break
    text_type = _as_str("model_type", text["model_type"]) if _present(text, "model_type") else top_type
    defaults = CLASS_DEFAULTS.get(text_type, {})
    merged = {**defaults, **{k: v for k, v in text.items() if v is not None}}
    return _Configs(top=top, text=merged, model_type=top_type, text_model_type=text_type)


def _lookup(cfgs: _Configs, key: str) -> Any:
    """A key read from the text tower first, then the top level (dtype, quantization, tying)."""
    if _present(cfgs.text, key):
        return cfgs.text[key]
    return cfgs.top.get(key)


# ----------------------------------------------------------------------------------------------
# Attention geometry
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Geometry:
    num_layers: int
    hidden_size: int
    num_heads: int
    num_kv_heads: int
    head_size: int  # as cached (MLA: the latent)
    head_size_v: int
    qk_head_dim: int  # per-head q/k width used by the projections
    v_head_dim: int
    vocab_size: int
    intermediate_size: int
    mla: MLASpec | None
    q_lora_rank: int | None
    qk_nope_head_dim: int


def _num_kv_heads(cfgs: _Configs, num_heads: int) -> int:
    """vLLM `ModelConfig.get_total_num_kv_heads`, same order of keys."""
    text = cfgs.text
    new_decoder_falcon = cfgs.text_model_type in {"falcon", "RefinedWeb", "RefinedWebModel"} and _flag(
        text, "new_decoder_architecture"
    )
    if not new_decoder_falcon and _flag(text, "multi_query"):
        return 1  # multi-query attention: one KV head
    # "n_head_kv"/"num_kv_heads": Falcon; "num_key_value_heads": Llama-2 on; ChatGLM's group count.
    kv = _first_int(text, ("n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num"))
    return num_heads if kv is None else kv


def _geometry(cfgs: _Configs) -> _Geometry:
    text = cfgs.text
    num_layers = _required_int(text, ("num_hidden_layers", "n_layer", "num_layers"), maximum=MAX_LAYERS)
    hidden = _required_int(text, ("hidden_size", "n_embd", "d_model"))
    heads = _required_int(text, ("num_attention_heads", "n_head", "num_heads"))
    vocab = _required_int(text, ("vocab_size", "padded_vocab_size"))
    kv_heads = _num_kv_heads(cfgs, heads)
    ffn = _first_int(text, ("intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim"), minimum=0)
    intermediate = DEFAULT_FFN_MULTIPLIER * hidden if ffn is None else ffn

    kv_lora_rank = _int(text, "kv_lora_rank")
    if kv_lora_rank is not None:
        # MLA (DeepSeek-V2/V3, Kimi-K2): detected by the config field, never by architecture name.
        # vLLM caches one latent "head" of kv_lora_rank + qk_rope_head_dim per token per layer.
        rope = _int(text, "qk_rope_head_dim", minimum=0)
        if rope is None:
            raise ConfigError("qk_rope_head_dim", Text("missing (needed with kv_lora_rank)"))
        nope = _int(text, "qk_nope_head_dim", minimum=0) or 0
        v_dim = _int(text, "v_head_dim") or (nope + rope)
        if nope + rope == 0:
            raise ConfigError("qk_nope_head_dim", Text("qk_nope_head_dim + qk_rope_head_dim must be > 0"))
        mla = MLASpec(kv_lora_rank=kv_lora_rank, qk_rope_head_dim=rope)
        return _Geometry(
            num_layers=num_layers,
            hidden_size=hidden,
            num_heads=heads,
            num_kv_heads=kv_heads,
            head_size=mla.latent_size,
            head_size_v=mla.latent_size,
            qk_head_dim=nope + rope,
            v_head_dim=v_dim,
            vocab_size=vocab,
            intermediate_size=intermediate,
            mla=mla,
            q_lora_rank=_int(text, "q_lora_rank"),
            qk_nope_head_dim=nope,
        )

    # vLLM get_head_size: explicit head_dim wins (Qwen3, gemma-2/3, Mistral-Small, gpt-oss...),
    # then `hidden_size_per_head` (PLaMo), else hidden_size // num_attention_heads.
    head = _first_int(text, ("head_dim", "attention_head_dim", "hidden_size_per_head"))
    if head is None:
        head = hidden // heads
        if head == 0:
            raise ConfigError(
                "head_dim",
                Text("hidden_size {hidden} // num_attention_heads {heads} is 0", hidden=hidden, heads=heads),
            )
    # v_head_dim only for non-MLA models that declare a different V size (rare).
    head_v = _int(text, "v_head_dim") or head
    return _Geometry(
        num_layers=num_layers,
        hidden_size=hidden,
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_size=head,
        head_size_v=head_v,
        qk_head_dim=head,
        v_head_dim=head_v,
        vocab_size=vocab,
        intermediate_size=intermediate,
        mla=None,
        q_lora_rank=None,
        qk_nope_head_dim=0,
    )


# ----------------------------------------------------------------------------------------------
# Layer kinds (reference §3.1) and the recurrent-state shape
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layers:
    kinds: tuple[LayerKind, ...]
    sliding_window: int | None
    chunk: int | None
    mamba: MambaSpec | None


def _pattern_kinds(
    key: str, values: Sequence[Any], num_layers: int, table: Mapping[Any, LayerKind]
) -> list[LayerKind]:
    if len(values) != num_layers:
        raise ConfigError(
            key,
            Text(
                "has {values} entries but num_hidden_layers is {num_layers}",
                values=len(values),
                num_layers=num_layers,
            ),
        )
    kinds = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, str | int) or value not in table:
            raise ConfigError(key, Text("unknown layer type {value!r}", value=value))
        kinds.append(table[value])
    return kinds


def _explicit_layer_kinds(text: Mapping[str, Any], num_layers: int) -> list[LayerKind] | None:
    """Layer kinds spelled out per layer by the config, or None."""
    if _present(text, "layer_types"):
        return _pattern_kinds(
            "layer_types", _as_list("layer_types", text["layer_types"]), num_layers, LAYER_TYPE_NAMES
        )
    if _present(text, "hybrid_override_pattern"):  # Nemotron-H
        pattern = _as_str("hybrid_override_pattern", text["hybrid_override_pattern"])
        return _pattern_kinds("hybrid_override_pattern", list(pattern), num_layers, HYBRID_PATTERN_CHARS)
    if _present(text, "attn_type_list"):  # MiniMax: 0 = lightning (linear) attention, 1 = softmax
        values = _as_list("attn_type_list", text["attn_type_list"])
        return _pattern_kinds("attn_type_list", values, num_layers, {0: LayerKind.MAMBA, 1: LayerKind.FULL})
    if _present(text, "layers_block_type"):  # Jamba / Bamba spelled out
        values = _as_list("layers_block_type", text["layers_block_type"])
        return _pattern_kinds("layers_block_type", values, num_layers, LAYER_TYPE_NAMES)
    if _present(text, "attn_layer_period"):  # Jamba: attention where i % period == offset
        period = _as_int("attn_layer_period", text["attn_layer_period"], minimum=1, maximum=MAX_LAYERS)
        offset = _int(text, "attn_layer_offset", minimum=0, maximum=MAX_LAYERS) or 0
        return [LayerKind.FULL if i % period == offset else LayerKind.MAMBA for i in range(num_layers)]
    if _present(text, "full_attention_interval") and _present(text, "linear_num_value_heads"):
        # Qwen3-Next: every `interval`-th layer is full attention, the rest Gated DeltaNet.
        interval = _as_int(
            "full_attention_interval", text["full_attention_interval"], minimum=1, maximum=MAX_LAYERS
        )
        return [LayerKind.FULL if (i + 1) % interval == 0 else LayerKind.MAMBA for i in range(num_layers)]
    if _present(text, "attention_chunk_size"):  # Llama-4 iRoPE: RoPE layers chunked, NoPE layers global
        if _present(text, "no_rope_layers"):  # 1 = uses RoPE (chunked), 0 = NoPE (global)
            values = _as_list("no_rope_layers", text["no_rope_layers"])
            return _pattern_kinds(
                "no_rope_layers", values, num_layers, {1: LayerKind.CHUNKED, 0: LayerKind.FULL}
            )
        nope_every = _first_int(text, ("nope_layer_interval", "no_rope_layer_interval"), maximum=MAX_LAYERS)
        nope_every = nope_every or LLAMA4_NOPE_LAYER_INTERVAL
        return [LayerKind.FULL if (i + 1) % nope_every == 0 else LayerKind.CHUNKED for i in range(num_layers)]
    return None


def _sliding_layer_kinds(cfgs: _Configs, num_layers: int) -> list[LayerKind]:
    text = cfgs.text
    if "gemma2" in cfgs.text_model_type:  # gemma-2: even layers local, odd layers global
        return [LayerKind.SLIDING if i % 2 == 0 else LayerKind.FULL for i in range(num_layers)]
    pattern = _int(text, "sliding_window_pattern", maximum=MAX_LAYERS)
    if pattern is None and "gemma3" in cfgs.text_model_type:
        pattern = GEMMA3_SLIDING_WINDOW_PATTERN
    if pattern is not None:  # gemma-3 / Cohere2: layer i is global iff (i + 1) % pattern == 0
        return [LayerKind.FULL if (i + 1) % pattern == 0 else LayerKind.SLIDING for i in range(num_layers)]
    if _flag(text, "use_sliding_window") and _present(text, "max_window_layers"):
        # Qwen2 with use_sliding_window: layers from max_window_layers on are local.
        first = _as_int("max_window_layers", text["max_window_layers"], minimum=0, maximum=MAX_LAYERS)
        return [LayerKind.SLIDING if i >= first else LayerKind.FULL for i in range(num_layers)]
    # Mistral / Phi-3: a non-null sliding_window with no per-layer list applies to every layer.
    return [LayerKind.SLIDING] * num_layers


def _sliding_window(text: Mapping[str, Any]) -> int | None:
    window = _int(text, "sliding_window", maximum=MAX_POSITIONS)
    # Qwen2/2.5/3: sliding_window is written but inert while use_sliding_window is false.
    if window is not None and "use_sliding_window" in text and not _flag(text, "use_sliding_window"):
        return None
    return window


def _mamba_spec(cfgs: _Configs, geometry: _Geometry) -> MambaSpec:
    text = cfgs.text
    if _present(text, "linear_num_value_heads") or _present(text, "linear_key_head_dim"):
        return MambaSpec(  # Gated DeltaNet (Qwen3-Next)
            kind=MambaKind.GATED_DELTA_NET,
            key_heads=_required_int(text, ("linear_num_key_heads",)),
            key_head_dim=_required_int(text, ("linear_key_head_dim",)),
            value_heads=_required_int(text, ("linear_num_value_heads",)),
            value_head_dim=_required_int(text, ("linear_value_head_dim",)),
            conv_kernel=_required_int(text, ("linear_conv_kernel_dim",)),
        )
    if _present(text, "mamba_d_state") and not _present(text, "mamba_n_heads"):
        expand = _required_int(text, ("mamba_expand",), maximum=1024)
        return MambaSpec(  # Mamba-1 (Jamba): d_inner = mamba_expand x hidden_size
            kind=MambaKind.MAMBA1,
            intermediate_size=expand * geometry.hidden_size,
            state_size=_required_int(text, ("mamba_d_state",)),
            conv_kernel=_required_int(text, ("mamba_d_conv",)),
        )
    if (
        _present(text, "mamba_num_heads")
        or _present(text, "mamba_n_heads")
        or _present(text, "ssm_state_size")
    ):
        heads = _required_int(text, ("mamba_num_heads", "mamba_n_heads"))
        head_dim = _required_int(text, ("mamba_head_dim", "mamba_d_head"))
        return MambaSpec(  # Mamba-2 (Nemotron-H / Bamba): d_inner = heads x head_dim
            kind=MambaKind.MAMBA2,
            intermediate_size=heads * head_dim,
            state_size=_required_int(text, ("ssm_state_size", "mamba_d_state")),
            conv_kernel=_required_int(text, ("conv_kernel", "mamba_d_conv")),
            n_groups=_required_int(text, ("n_groups", "mamba_n_groups")),
            num_heads=heads,
            head_dim=head_dim,
        )
    # Linear (lightning) attention, MiniMax: a head_dim x head_dim state per head.
    return MambaSpec(
        kind=MambaKind.LINEAR_ATTENTION, num_heads=geometry.num_heads, head_dim=geometry.head_size
    )


def _layers(cfgs: _Configs, geometry: _Geometry) -> _Layers:
    text = cfgs.text
    num_layers = geometry.num_layers
    kinds = _explicit_layer_kinds(text, num_layers)
    window = _sliding_window(text)
    if kinds is None:
        kinds = [LayerKind.FULL] * num_layers if window is None else _sliding_layer_kinds(cfgs, num_layers)
    if geometry.mla is not None:
        kinds = [LayerKind.MLA if kind == LayerKind.FULL else kind for kind in kinds]
    present = set(kinds)
    if LayerKind.SLIDING in present and window is None:
        raise ConfigError("sliding_window", Text("sliding layers are declared but sliding_window is missing"))
    chunk = None
    if LayerKind.CHUNKED in present:
        chunk = _int(text, "attention_chunk_size", maximum=MAX_POSITIONS)
        if chunk is None:
            raise ConfigError(
                "attention_chunk_size", Text("chunked layers are declared but the size is missing")
            )
    mamba = _mamba_spec(cfgs, geometry) if LayerKind.MAMBA in present else None
    return _Layers(
        kinds=tuple(kinds),
        sliding_window=window if LayerKind.SLIDING in present else None,
        chunk=chunk,
        mamba=mamba,
    )


# ----------------------------------------------------------------------------------------------
# max_model_len (reference §7)
# ----------------------------------------------------------------------------------------------


def derive_max_model_len(config: Mapping[str, Any]) -> int:
    """vLLM's derived ``max_model_len`` for a config.json (before any tokenizer limit)."""
    return _max_model_len(_split_configs(config))


def _max_model_len(cfgs: _Configs) -> int:
    text = cfgs.text
    lengths = [
        _as_int(key, text[key], minimum=1, maximum=MAX_POSITIONS)
        for key in MAX_LEN_KEYS
        if _present(text, key)
    ]
    derived = float(min(lengths)) if lengths else float(DEFAULT_MAX_MODEL_LEN)
    rope_key = "rope_scaling" if _present(text, "rope_scaling") else "rope_parameters"
    rope = text.get(rope_key)
    is_gemma3 = "gemma3" in cfgs.model_type or "gemma3" in cfgs.text_model_type
    if rope is not None and not is_gemma3:
        rope = _as_mapping(rope_key, rope)
        rope_type = rope.get("rope_type", rope.get("type"))
        if rope_type is not None:
            rope_type = _as_str(rope_key, rope_type)
        if rope_type not in ROPE_TYPES_NOT_SCALING_LEN:
            factor = _as_float(rope_key, rope["factor"]) if _present(rope, "factor") else 1.0
            if factor <= 0:
                raise ConfigError(rope_key, Text("factor must be positive, got {factor}", factor=factor))
            derived *= factor
    if not math.isfinite(derived) or derived > MAX_POSITIONS:
        raise ConfigError(rope_key, Text("derived max_model_len is implausibly large"))
    result = int(derived)
    if result < 1:
        raise ConfigError(rope_key, Text("derived max_model_len is below 1"))
    return result


# ----------------------------------------------------------------------------------------------
# dtype
# ----------------------------------------------------------------------------------------------


def _dtype(cfgs: _Configs) -> tuple[Literal["bfloat16", "float16", "float32"], bool]:
    """(dtype, assumed). The spec records what config.json says; ServeConfig.dtype overrides.

    With no dtype key vLLM takes the config as float32 and, under ``--dtype auto``, downcasts
    float32 to the platform's preferred dtype (bfloat16 on current CUDA GPUs; float16 in old
    releases). We therefore assume bfloat16 and flag it. A config that *says* float32 stays
    float32 here: vLLM's auto downcast is a serving choice applied with the ServeConfig.
    """
    for key in ("torch_dtype", "dtype"):
        value = _lookup(cfgs, key)
        if value is not None:
            name = _as_str(key, value).removeprefix("torch.")
            if name not in DTYPE_NAMES:
                raise ConfigError(key, Text("unsupported dtype {name!r}", name=name))
            return DTYPE_NAMES[name], False
    return "bfloat16", True


# ----------------------------------------------------------------------------------------------
# Parameter count
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParamBreakdown:
    """Parameter counts by part. ``experts`` is every routed expert; ``experts_active`` top-k."""

    embedding: int
    lm_head: int
    attention: int
    mixer: int  # mamba / linear-attention / gated-delta-net mixers
    mlp: int  # dense MLPs and shared experts
    experts: int
    experts_active: int
    router: int
    norms: int
    is_moe: bool

    @property
    def total(self) -> int:
        return (
            self.embedding
            + self.lm_head
            + self.attention
            + self.mixer
            + self.mlp
            + self.experts
            + self.router
            + self.norms
        )

    @property
    def active(self) -> int | None:
        if not self.is_moe:
            return None
        return self.total - self.experts + self.experts_active

    @property
    def non_embedding(self) -> int:
        return self.total - self.embedding - self.lm_head


@dataclass(frozen=True)
class _Moe:
    num_experts: int
    top_k: int
    expert_size: int
    num_shared: int
    shared_size: int  # total FFN width of the shared expert(s), gated
    shared_gate: bool  # Qwen2-MoE / Qwen3-Next sigmoid gate on the shared expert
    is_moe_layer: Callable[[int], bool]


def _moe(cfgs: _Configs, geometry: _Geometry) -> _Moe | None:
    text = cfgs.text
    experts = _first_int(
        text,
        ("n_routed_experts", "num_local_experts", "num_experts", "moe_num_experts"),
        minimum=0,
        maximum=MAX_EXPERTS,
    )
    if not experts:
        return None
    top_k = _first_int(text, ("num_experts_per_tok", "experts_per_token", "moe_k", "moe_top_k"), minimum=0)
    top_k = min(top_k or 1, experts)
    moe_size = _int(text, "moe_intermediate_size", minimum=0)
    expert_size = geometry.intermediate_size if moe_size is None else moe_size
    shared_size, shared_gate = 0, False
    n_shared = (
        _first_int(text, ("n_shared_experts", "num_shared_experts"), minimum=0, maximum=MAX_EXPERTS) or 0
    )
    if n_shared:
        shared_size = n_shared * expert_size  # DeepSeek / GLM: n shared experts of the expert size
    elif _present(text, "shared_expert_intermediate_size"):  # Qwen-MoE: one gated shared expert
        shared_size = _as_int(
            "shared_expert_intermediate_size",
            text["shared_expert_intermediate_size"],
            minimum=0,
            maximum=MAX_DIM,
        )
        shared_gate = shared_size > 0
        n_shared = int(shared_gate)
    elif "llama4" in cfgs.text_model_type:  # Llama-4: one shared expert per MoE layer
        shared_size, n_shared = geometry.intermediate_size, 1

    is_moe_layer: Callable[[int], bool]
    if _present(text, "first_k_dense_replace") or _present(text, "moe_layer_freq"):
        first_dense = _int(text, "first_k_dense_replace", minimum=0, maximum=MAX_LAYERS) or 0
        freq = _int(text, "moe_layer_freq", maximum=MAX_LAYERS) or 1
        is_moe_layer = lambda i: i >= first_dense and i % freq == 0  # noqa: E731
    elif _present(text, "interleave_moe_layer_step"):  # Llama-4: layers step-1, 2*step-1, ...
        step = _as_int(
            "interleave_moe_layer_step", text["interleave_moe_layer_step"], minimum=1, maximum=MAX_LAYERS
        )
        is_moe_layer = lambda i: (i + 1) % step == 0  # noqa: E731
    elif _present(text, "expert_layer_period"):  # Jamba
        period = _as_int("expert_layer_period", text["expert_layer_period"], minimum=1, maximum=MAX_LAYERS)
        offset = _int(text, "expert_layer_offset", minimum=0, maximum=MAX_LAYERS) or 0
        is_moe_layer = lambda i: i % period == offset  # noqa: E731
    else:  # Qwen-MoE: decoder_sparse_step and mlp_only_layers; others all-MoE
        step = _int(text, "decoder_sparse_step", maximum=MAX_LAYERS) or 1
        dense_only = set()
        if _present(text, "mlp_only_layers"):
            for value in _as_list("mlp_only_layers", text["mlp_only_layers"]):
                dense_only.add(_as_int("mlp_only_layers", value, minimum=0, maximum=MAX_LAYERS))
        is_moe_layer = lambda i: i not in dense_only and (i + 1) % step == 0  # noqa: E731
    return _Moe(experts, top_k, expert_size, n_shared, shared_size, shared_gate, is_moe_layer)


def _attention_params(cfgs: _Configs, g: _Geometry) -> tuple[int, int]:
    """(standard attention layer params, MLA layer params) — one of them is used per model."""
    text = cfgs.text
    h = g.hidden_size
    if g.mla is not None:
        rank, rope = g.mla.kv_lora_rank, g.mla.qk_rope_head_dim
        if g.q_lora_rank:  # q_a_proj + q_a_layernorm + q_b_proj
            q = h * g.q_lora_rank + g.q_lora_rank + g.q_lora_rank * g.num_heads * g.qk_head_dim
        else:
            q = h * g.num_heads * g.qk_head_dim
        kv = h * (rank + rope) + rank + rank * g.num_heads * (g.qk_nope_head_dim + g.v_head_dim)
        o = g.num_heads * g.v_head_dim * h
        return 0, q + kv + o
    q_width = g.num_heads * g.head_size
    if cfgs.text_model_type in GATED_ATTENTION_MODEL_TYPES:
        q_width *= 2  # query + output gate
    k_width = g.num_kv_heads * g.head_size
    v_width = g.num_kv_heads * g.head_size_v
    params = h * (q_width + k_width + v_width) + g.num_heads * g.head_size_v * h
    qkv_bias = _flag(text, "attention_bias") or _flag(text, "bias") or _flag(text, "qkv_bias")
    if qkv_bias or cfgs.text_model_type in QKV_BIAS_MODEL_TYPES:
        params += q_width + k_width + v_width
    if (
        _flag(text, "use_qk_norm")
        or _flag(text, "qk_layernorm")
        or cfgs.text_model_type in QK_NORM_MODEL_TYPES
    ):
        params += 2 * g.head_size
    return params, 0


def _mixer_params(spec: MambaSpec, cfgs: _Configs, g: _Geometry) -> int:
    h = g.hidden_size
    if spec.kind == MambaKind.MAMBA1:
        d_inner, state, kernel = spec.intermediate_size, spec.state_size, spec.conv_kernel
        dt_rank_raw = cfgs.text.get("mamba_dt_rank")
        if dt_rank_raw is None or dt_rank_raw == "auto":
            dt_rank = math.ceil(h / 16)  # Mamba default: ceil(hidden_size / 16)
        else:
            dt_rank = _as_int("mamba_dt_rank", dt_rank_raw, minimum=1, maximum=MAX_DIM)
        return (
            h * 2 * d_inner  # in_proj (x and z)
            + d_inner * kernel
            + d_inner  # depthwise conv + bias
            + d_inner * (dt_rank + 2 * state)  # x_proj -> dt, B, C
            + dt_rank * d_inner
            + d_inner  # dt_proj
            + d_inner * state
            + d_inner  # A_log, D
            + d_inner * h  # out_proj
            + dt_rank
            + 2 * state  # Jamba's dt/B/C layernorms
        )
    if spec.kind == MambaKind.MAMBA2:
        d_inner, heads = spec.intermediate_size, spec.num_heads
        conv_dim = d_inner + 2 * spec.n_groups * spec.state_size
        return (
            h * (d_inner + conv_dim + heads)
            + conv_dim * (spec.conv_kernel + 1)
            + 3 * heads
            + d_inner
            + d_inner * h
        )
    if spec.kind == MambaKind.GATED_DELTA_NET:
        k_dim = spec.key_heads * spec.key_head_dim
        v_dim = spec.value_heads * spec.value_head_dim
        return (
            h * (2 * k_dim + 2 * v_dim)  # in_proj_qkvz
            + h * 2 * spec.value_heads  # in_proj_ba
            + (2 * k_dim + v_dim) * spec.conv_kernel  # conv1d
            + 2 * spec.value_heads  # dt_bias, A_log
            + spec.value_head_dim  # gated RMSNorm
            + v_dim * h  # out_proj
        )
    width = spec.num_heads * spec.head_dim  # lightning attention: qkv, output gate, out, norm
    return h * 3 * width + h * width + width * h + width


def _tied(cfgs: _Configs) -> bool:
    value = _lookup(cfgs, "tie_word_embeddings")
    # Missing key: decoder config classes default to untied, except those listed in CLASS_DEFAULTS.
    return False if value is None else _as_bool("tie_word_embeddings", value)


def _breakdown(cfgs: _Configs, g: _Geometry, layers: _Layers, moe: _Moe | None) -> ParamBreakdown:
    h = g.hidden_size
    gated = cfgs.text_model_type not in UNGATED_MLP_MODEL_TYPES
    matrices = 3 if gated else 2
    dense_mlp_size = g.intermediate_size
    if moe is not None and "llama4" in cfgs.text_model_type:
        dense_mlp_size = _int(cfgs.text, "intermediate_size_mlp", minimum=0) or g.intermediate_size
    attention_params, mla_params = _attention_params(cfgs, g)
    mixer_params = _mixer_params(layers.mamba, cfgs, g) if layers.mamba is not None else 0
    # Nemotron-H counts mixer and MLP blocks as separate "layers" with one norm each.
    separate_blocks = _present(cfgs.text, "hybrid_override_pattern")

    attention = mixer = mlp = experts = experts_active = router = norms = 0
    for index, kind in enumerate(layers.kinds):
        if kind == LayerKind.MLA:
            attention += mla_params
        elif kind in (LayerKind.FULL, LayerKind.SLIDING, LayerKind.CHUNKED):
            attention += attention_params
        elif kind == LayerKind.MAMBA:
            mixer += mixer_params
        if separate_blocks:
            norms += h
            if kind == LayerKind.NONE:
                mlp += matrices * h * g.intermediate_size
            continue
        norms += 2 * h  # input and post-attention norms
        if moe is not None and moe.is_moe_layer(index):
            per_expert = 3 * h * moe.expert_size
            experts += moe.num_experts * per_expert
            experts_active += moe.top_k * per_expert
            mlp += 3 * h * moe.shared_size + (h if moe.shared_gate else 0)
            router += h * moe.num_experts
        else:
            mlp += matrices * h * dense_mlp_size
    embedding = g.vocab_size * h
    return ParamBreakdown(
        embedding=embedding,
        lm_head=0 if _tied(cfgs) else embedding,
        attention=attention,
        mixer=mixer,
        mlp=mlp,
        experts=experts,
        experts_active=experts_active,
        router=router,
        norms=norms + h,  # + final norm
        is_moe=moe is not None,
    )


def param_breakdown(config: Mapping[str, Any]) -> ParamBreakdown:
    """Parameters by part, counted from the config (no MTP layers, no vision tower)."""
    cfgs = _split_configs(config)
    geometry = _geometry(cfgs)
    try:
        return _breakdown(cfgs, geometry, _layers(cfgs, geometry), _moe(cfgs, geometry))
    except ValidationError as exc:
        raise _config_error(exc) from exc


def count_params(config: Mapping[str, Any]) -> tuple[int, int | None]:
    """(total, active per token) counted from a config.json; active is None for dense models.

    Counts input embedding, lm_head unless tied, attention (incl. MLA low-rank projections),
    MLPs, routed and shared experts, routers, mamba/linear mixers and norms. Excludes MTP/nextn
    layers, vision towers and quantization scales. Active includes the embedding and lm_head.
    """
    breakdown = param_breakdown(config)
    return breakdown.total, breakdown.active


# ----------------------------------------------------------------------------------------------
# Quantization
# ----------------------------------------------------------------------------------------------


def _int_bits(key: str, value: Any) -> int:
    return _as_int(key, value, minimum=1, maximum=64)


def _group_size(key: str, value: Any, *, per_channel: int) -> int:
    """A group size; -1/None mean one scale per output channel (a row of ``per_channel`` inputs)."""
    if value is None:
        return per_channel
    size = _as_int(key, value, minimum=-1, maximum=MAX_DIM)
    return per_channel if size <= 0 else size


def _compressed_tensors(q: Mapping[str, Any], hidden: int) -> QuantSpec:
    groups = _as_mapping("quantization_config", q.get("config_groups"))
    if not groups:
        raise ConfigError("quantization_config", Text("compressed-tensors config_groups is empty"))
    group = _as_mapping("quantization_config", next(iter(groups.values())))
    weights = _as_mapping("quantization_config", group.get("weights"))
    bits = _int_bits("quantization_config", weights.get("num_bits"))
    kind = weights.get("type", "int")
    group_size = _group_size("quantization_config", weights.get("group_size"), per_channel=hidden)
    name = "compressed-tensors"
    if kind == "float" and bits == 8:
        return QuantSpec(method=QuantMethod.FP8, group_size=group_size, source_name=name)
    if kind == "float" and bits == 4:
        return QuantSpec(method=QuantMethod.NVFP4, group_size=NVFP4_GROUP_SIZE, source_name=name)
    if kind == "int" and bits == 8:
        return QuantSpec(method=QuantMethod.INT8, group_size=group_size, source_name=name)
    if kind == "int" and bits == 4:
        return QuantSpec(method=QuantMethod.INT4, group_size=group_size, source_name=name)
    raise ConfigError(
        "quantization_config",
        Text("unsupported compressed-tensors weights: {kind} {bits}-bit", kind=kind, bits=bits),
    )


def _quantization(
    cfgs: _Configs, geometry: _Geometry, breakdown: Callable[[], ParamBreakdown]
) -> QuantSpec | None:
    raw = _lookup(cfgs, "quantization_config")
    if raw is None:
        raw = _lookup(cfgs, "compression_config")  # older compressed-tensors checkpoints
    if raw is None:
        return None
    q = _as_mapping("quantization_config", raw)
    method = _as_str("quantization_config", q.get("quant_method", "")).lower()
    hidden = geometry.hidden_size
    if method in ("fp8", "fbgemm_fp8"):
        block = q.get("weight_block_size")
        group = (
            _as_int(
                "quantization_config", _as_list("quantization_config", block)[0], minimum=1, maximum=MAX_DIM
            )
            if block
            else hidden
        )
        return QuantSpec(method=QuantMethod.FP8, group_size=group, source_name=method)
    if method == "compressed-tensors":
        return _compressed_tensors(q, hidden)
    if method in ("gptq", "awq"):
        bits = _int_bits("quantization_config", q.get("bits", q.get("w_bit")))
        group = _group_size(
            "quantization_config", q.get("group_size", q.get("q_group_size")), per_channel=hidden
        )
        if bits == 8:
            return QuantSpec(method=QuantMethod.INT8, group_size=group, source_name=method)
        if bits == 4:
            return QuantSpec(method=QuantMethod.INT4, group_size=group, source_name=method)
        raise ConfigError(
            "quantization_config", Text("unsupported {method} bits {bits}", method=method, bits=bits)
        )
    if method == "mxfp4":
        # gpt-oss: only the MoE experts are MXFP4; attention, router, embeddings, lm_head stay bf16.
        parts = breakdown()
        fraction = parts.experts / parts.non_embedding if parts.experts and parts.non_embedding else 1.0
        return QuantSpec(
            method=QuantMethod.MXFP4,
            group_size=MXFP4_GROUP_SIZE,
            quantized_fraction=min(1.0, fraction),
            source_name="mxfp4",
        )
    if method == "modelopt":
        inner = q.get("quantization")
        algo_source = _as_mapping("quantization_config", inner) if inner is not None else q
        algo = _as_str("quantization_config", algo_source.get("quant_algo", "")).upper()
        if algo == "NVFP4":
            return QuantSpec(
                method=QuantMethod.NVFP4, group_size=NVFP4_GROUP_SIZE, source_name="modelopt_fp4"
            )
        if algo == "FP8":
            return QuantSpec(method=QuantMethod.FP8, group_size=hidden, source_name="modelopt")
        raise ConfigError("quantization_config", Text("unsupported modelopt quant_algo {algo!r}", algo=algo))
    if method == "bitsandbytes":
        if _flag(q, "load_in_8bit"):
            return QuantSpec(method=QuantMethod.INT8, group_size=hidden, source_name=method)
        return QuantSpec(method=QuantMethod.INT4, group_size=BNB_4BIT_BLOCK_SIZE, source_name=method)
    raise ConfigError("quantization_config", Text("unsupported quant_method {method!r}", method=method))


# ----------------------------------------------------------------------------------------------
# Public entry point
# ----------------------------------------------------------------------------------------------


def _architecture(top: Mapping[str, Any]) -> str:
    value = top.get("architectures")
    if value is None:
        return ""
    archs = _as_list("architectures", value)
    return _as_str("architectures", archs[0]) if archs else ""


def _weights_bytes(index: Mapping[str, Any] | None) -> int | None:
    if index is None:
        return None
    metadata = _as_mapping("safetensors_index", _as_mapping("safetensors_index", index).get("metadata"))
    if metadata.get("total_size") is None:
        raise ConfigError("safetensors_index", Text("metadata.total_size missing"))
    return _as_int("safetensors_index", metadata["total_size"], minimum=1, maximum=2**60)


def _config_error(exc: ValidationError) -> ConfigError:
    error = exc.errors()[0]
    field = str(error["loc"][0]) if error["loc"] else "config"
    return ConfigError(field, error["msg"])


def model_spec_from_hf_config(
    config: Mapping[str, Any],
    *,
    name: str,
    params_total: int | None = None,
    params_active: int | None = None,
    safetensors_index: Mapping[str, Any] | None = None,
    source: str = "",
    confidence: str = "user",
) -> ModelSpec:
    """Turn a config.json object into a ModelSpec the way vLLM reads it.

    ``params_total``/``params_active`` override the count from the config (model-card figures);
    ``safetensors_index`` is a model.safetensors.index.json object giving the exact weight bytes.
    """
    if confidence not in CONFIDENCES:
        raise ConfigError(
            "confidence", Text("must be one of {confidences}", confidences=", ".join(CONFIDENCES))
        )
    try:
        return _model_spec(
            config,
            name=name,
            params_total=params_total,
            params_active=params_active,
            safetensors_index=safetensors_index,
            source=source,
            confidence=confidence,
        )
    except ValidationError as exc:
        raise _config_error(exc) from exc


def _model_spec(
    config: Mapping[str, Any],
    *,
    name: str,
    params_total: int | None,
    params_active: int | None,
    safetensors_index: Mapping[str, Any] | None,
    source: str,
    confidence: str,
) -> ModelSpec:
    cfgs = _split_configs(config)
    geometry = _geometry(cfgs)
    layers = _layers(cfgs, geometry)
    moe = _moe(cfgs, geometry)
    breakdown_cache: list[ParamBreakdown] = []

    def breakdown() -> ParamBreakdown:
        if not breakdown_cache:
            breakdown_cache.append(_breakdown(cfgs, geometry, layers, moe))
        return breakdown_cache[0]

    if params_total is None:
        params_total = breakdown().total
        if params_active is None:
            params_active = breakdown().active
    dtype, dtype_assumed = _dtype(cfgs)
    return ModelSpec(
        name=name,
        architecture=_architecture(cfgs.top),
        model_type=cfgs.model_type,
        num_layers=geometry.num_layers,
        hidden_size=geometry.hidden_size,
        intermediate_size=geometry.intermediate_size,
        moe_intermediate_size=moe.expert_size if moe else 0,
        num_experts=moe.num_experts if moe else 0,
        num_experts_per_tok=moe.top_k if moe else 0,
        num_shared_experts=moe.num_shared if moe else 0,
        num_attention_heads=geometry.num_heads,
        num_kv_heads=geometry.num_kv_heads,
        head_size=geometry.head_size,
        head_size_v=geometry.head_size_v,
        vocab_size=geometry.vocab_size,
        tie_word_embeddings=_tied(cfgs),
        max_model_len_derived=_max_model_len(cfgs),
        layer_kinds=layers.kinds,
        sliding_window_tokens=layers.sliding_window,
        attention_chunk_tokens=layers.chunk,
        mla=geometry.mla,
        mamba=layers.mamba,
        params_total=params_total,
        params_active=params_active,
        torch_dtype=dtype,
        dtype_assumed=dtype_assumed,
        quantization=_quantization(cfgs, geometry, breakdown),
        weights_bytes_exact=_weights_bytes(safetensors_index),
        source=source,
        confidence=cast(Literal["verified", "likely", "recalled", "user"], confidence),
    )
