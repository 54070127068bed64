"""Attention geometry, layer kinds, the recurrent-state shape, max_model_len and dtype (vLLM rules)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from app.core.errors import ConfigError
from app.core.hf_config.coerce import (
    GEMMA3_SLIDING_WINDOW_PATTERN,
    MAX_LAYERS,
    MAX_POSITIONS,
    _as_float,
    _as_int,
    _as_list,
    _as_mapping,
    _as_str,
    _Configs,
    _first_int,
    _flag,
    _int,
    _lookup,
    _present,
    _required_int,
    _split_configs,
)
from app.core.specs import LayerKind, MambaKind, MambaSpec, MLASpec
from app.core.text import Text

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
LLAMA4_NOPE_LAYER_INTERVAL = 4  # Llama4TextConfig default: every 4th layer is NoPE/global

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
