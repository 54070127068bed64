"""Attention geometry, layer kinds, the recurrent-state shape, max_model_len and dtype (vLLM rules)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from app.core import kinds
from app.core.errors import ConfigError
from app.core.hf_config import dsv41, hy_v4
from app.core.hf_config.coerce import (
    MAX_LAYERS,
    MAX_POSITIONS,
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
)
from app.core.hf_config.registry import is_bidirectional, is_encoder_only_architecture
from app.core.specs import AttentionShape, LayerKind, MambaKind, MambaSpec, MLASpec
from app.core.text import Text

DEFAULT_FFN_MULTIPLIER = 4  # GPT-2 / Falcon: no FFN key means 4 x hidden_size
LLAMA4_NOPE_LAYER_INTERVAL = 4  # Llama4TextConfig default: every 4th layer is NoPE/global

LAYER_TYPE_NAMES: dict[str, LayerKind] = {
    "full_attention": LayerKind.FULL,
    "deepseek_sparse_attention": LayerKind.FULL,  # GLM-5.2: MLA with an indexer (MLA when kv_lora_rank)
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
    "conv": LayerKind.MAMBA,  # LFM2 / LFM2-VL ShortConv blocks (vLLM lfm2.py: a MambaBase layer)
}
# Nemotron-H `hybrid_override_pattern`: one character per entry of num_hidden_layers.
HYBRID_PATTERN_CHARS: dict[str, LayerKind] = {
    "M": LayerKind.MAMBA,  # Mamba-2 mixer
    "*": LayerKind.FULL,  # attention
    "-": LayerKind.NONE,  # MLP-only block
    "E": LayerKind.NONE,  # MoE-only block (Nemotron-3)
}
# vLLM caches MLA latents only for these model types (model_arch_config_convertor.is_deepseek_mla,
# 0.19.0/0.33.0); any other config with kv_lora_rank (MiniCPM3) gets plain attention whose K is
# qk_nope + qk_rope wide, V zero-padded to the same width, one KV head per query head (minicpm3.py).
MLA_MODEL_TYPES = frozenset(
    {"deepseek_v2", "deepseek_v3", "deepseek_v32", "deepseek_v4", "deepseek_mtp", "kimi_k2", "kimi_linear"}
    | {"longcat_flash", "pangu_ultra_moe", "glm_moe_dsa", "glm5_next", "glm5_next_text", "glm4_moe_lite"}
    | {"bailing_hybrid", "dots3_note", "axk1", "k3_dspark", "hy_v4"}
)
# Attention-free state-space models (vLLM MambaModelArchConfigConvertor: head size 0, no KV heads).
ATTENTION_FREE_MODEL_TYPES = frozenset({"mamba", "mamba2", "falcon_mamba"})
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
    latent_kv_rank: int | None = None  # kv_lora_rank of a non-MLA-cached model (MiniCPM3): params only


def _check_kv_heads(*, heads: int, kv_heads: int) -> None:
    """The loaders' head checks: grouped-query attention needs heads = k x kv_heads."""
    if kv_heads > heads:
        raise ConfigError(
            "num_key_value_heads",
            Text(
                "{kv_heads} KV heads but only {heads} attention heads; the model cannot be built",
                kv_heads=kv_heads,
                heads=heads,
            ),
        )
    if heads % kv_heads:
        raise ConfigError(
            "num_key_value_heads",
            Text(
                "{heads} attention heads are not a multiple of {kv_heads} KV heads",
                heads=heads,
                kv_heads=kv_heads,
            ),
        )


# KV heads a model type keeps in a nested block instead of the top-level keys: model type -> (block, key,
# the config class's default). vLLM transformers_utils/model_arch_config_convertor.py
# DbrxModelArchConfigConvertor.get_total_num_kv_heads (0.33.0; the same `model_type == "dbrx"` branch of
# config.py get_total_num_kv_heads in 0.6 - 0.10) reads attn_config.kv_n_heads, and transformers'
# DbrxAttentionConfig (configuration_dbrx.py) gives kv_n_heads = 1 when the block or the key is absent.
NESTED_KV_HEADS: dict[str, tuple[str, str, int]] = {"dbrx": ("attn_config", "kv_n_heads", 1)}


def _num_kv_heads(cfgs: _Configs, num_heads: int) -> int:
    """vLLM `ModelConfig.get_total_num_kv_heads`, same order of keys."""
    text = cfgs.text
    nested = NESTED_KV_HEADS.get(cfgs.text_model_type)
    if nested is not None:
        block, key, default = nested
        kv_nested = _int(_as_mapping(block, text.get(block) or {}), key)  # null block: DbrxConfig's default
        return default if kv_nested is None else kv_nested
    new_decoder_falcon = cfgs.text_model_type in {"falcon", "RefinedWeb", "RefinedWebModel"} and _flag(
        text, "new_decoder_architecture"
    )
    if not new_decoder_falcon and _flag(text, "multi_query"):
        return 1  # multi-query attention: one KV head
    # "n_head_kv"/"num_kv_heads": Falcon; "num_key_value_heads": Llama-2 on; ChatGLM's group count.
    kv = _first_int(text, ("n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num"))
    return num_heads if kv is None else kv


def is_attention_free(cfgs: _Configs) -> bool:
    return cfgs.text_model_type in ATTENTION_FREE_MODEL_TYPES


def _geometry(cfgs: _Configs) -> _Geometry:
    text = cfgs.text
    num_layers = _required_int(text, ("num_hidden_layers", "n_layer", "num_layers"), maximum=MAX_LAYERS)
    hidden = _required_int(text, ("hidden_size", "n_embd", "d_model"))
    vocab = _required_int(text, ("vocab_size", "padded_vocab_size"))
    ffn = _first_int(text, ("intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim"), minimum=0)
    intermediate = DEFAULT_FFN_MULTIPLIER * hidden if ffn is None else ffn
    make = partial(_Geometry, num_layers=num_layers, hidden_size=hidden, vocab_size=vocab)
    if is_attention_free(cfgs):
        # No attention: ModelSpec still wants head counts for TP checks, so the mixer's own heads are
        # used (Mamba-2 `num_heads`; Mamba-1 has none and is sharded over d_inner: one "head").
        mixer_heads = _int(text, "num_heads") or 1
        return make(
            num_heads=mixer_heads,
            num_kv_heads=mixer_heads,
            head_size=1,
            head_size_v=1,
            qk_head_dim=0,
            v_head_dim=0,
            intermediate_size=0,
            mla=None,
            q_lora_rank=None,
            qk_nope_head_dim=0,
        )
    heads = _required_int(text, ("num_attention_heads", "n_head", "num_heads"))
    kv_heads = _num_kv_heads(cfgs, heads)
    block_kv = _block_kv_heads(text, heads)
    if block_kv:  # NemotronNasModelArchConfigConvertor: the first attention block's KV heads
        kv_heads = next(kv for kv in block_kv if kv)
    kv_lora_rank = _int(text, "kv_lora_rank")
    if kv_lora_rank is not None:
        return _latent_geometry(
            cfgs, make, heads=heads, kv_heads=kv_heads, kv_lora_rank=kv_lora_rank, intermediate=intermediate
        )
    _check_kv_heads(heads=heads, kv_heads=kv_heads)
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
    head_v = _int(text, "v_head_dim", minimum=0) or head  # 0 = unset (DeepseekVLV2TextConfig materialises it)
    return make(
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_size=head,
        head_size_v=head_v,
        qk_head_dim=head,
        v_head_dim=head_v,
        intermediate_size=intermediate,
        mla=None,
        q_lora_rank=None,
        qk_nope_head_dim=0,
    )


def _latent_geometry(
    cfgs: _Configs,
    make: Callable[..., _Geometry],
    *,
    heads: int,
    kv_heads: int,
    kv_lora_rank: int,
    intermediate: int,
) -> _Geometry:
    """A config with `kv_lora_rank`: MLA (DeepSeek-V2/V3, Kimi-K2), or MiniCPM3's latent projections
    over a plain multi-head cache. Detected by the config field, never by architecture name."""
    text = cfgs.text
    if cfgs.text_model_type not in MLA_MODEL_TYPES:
        # MiniCPM3: latent projections, but vLLM builds Attention(heads, qk_nope + qk_rope,
        # num_kv_heads=heads) and pads V to that width, so the cache is plain multi-head attention.
        qk_dim = (_int(text, "qk_nope_head_dim", minimum=0) or 0) + (
            _int(text, "qk_rope_head_dim", minimum=0) or 0
        )
        if qk_dim == 0:
            raise ConfigError("qk_nope_head_dim", Text("qk_nope_head_dim + qk_rope_head_dim must be > 0"))
        return make(
            num_heads=heads,
            num_kv_heads=heads,
            head_size=qk_dim,
            head_size_v=qk_dim,
            qk_head_dim=qk_dim,
            v_head_dim=_int(text, "v_head_dim") or qk_dim,
            intermediate_size=intermediate,
            mla=None,
            q_lora_rank=_int(text, "q_lora_rank"),
            qk_nope_head_dim=_int(text, "qk_nope_head_dim", minimum=0) or 0,
            latent_kv_rank=kv_lora_rank,
        )
    # vLLM caches one latent "head" of kv_lora_rank + qk_rope_head_dim per token per layer.
    rope = _int(text, "qk_rope_head_dim", minimum=0)
    if rope is None:
        raise ConfigError("qk_rope_head_dim", Text("missing (needed with kv_lora_rank)"))
    nope = _int(text, "qk_nope_head_dim", minimum=0) or 0
    v_dim = _int(text, "v_head_dim") or (nope + rope)
    if nope + rope == 0:
        raise ConfigError("qk_nope_head_dim", Text("qk_nope_head_dim + qk_rope_head_dim must be > 0"))
    mla = MLASpec(kv_lora_rank=kv_lora_rank, qk_rope_head_dim=rope, qk_nope_head_dim=nope, v_head_dim=v_dim)
    return make(
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_size=mla.latent_size,
        head_size_v=mla.latent_size,
        qk_head_dim=nope + rope,
        v_head_dim=v_dim,
        intermediate_size=intermediate,
        mla=mla,
        q_lora_rank=_int(text, "q_lora_rank"),
        qk_nope_head_dim=nope,
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


def nas_block_parts(text: Mapping[str, Any], part: Literal["attention", "ffn"]) -> list[Mapping[str, Any]]:
    """Nemotron-NAS / DeciLM ``block_configs``: the ``attention`` or ``ffn`` entry of every block, in
    order ({} where a block has none); [] for a config without block_configs."""
    if not _present(text, "block_configs"):
        return []
    parts = []
    for block in _as_list("block_configs", text["block_configs"]):
        entry = _as_mapping("block_configs", block).get(part)
        parts.append({} if entry is None else _as_mapping("block_configs", entry))
    return parts


def check_offset_below_period(*, offset_key: str, offset: int, period_key: str, period: int) -> None:
    """transformers JambaConfig refuses an offset that is not below its period."""
    if offset >= period:
        raise ConfigError(
            offset_key,
            Text(
                "{offset_key} {offset} must be less than {period_key} {period} (transformers refuses this config)",
                offset_key=offset_key,
                offset=offset,
                period_key=period_key,
                period=period,
            ),
        )


def _explicit_layer_kinds(text: Mapping[str, Any], num_layers: int) -> list[LayerKind] | None:
    """Layer kinds spelled out per layer by the config, or None."""
    if _present(text, "layer_types"):
        names = LAYER_TYPE_NAMES | hy_v4.LAYER_TYPE_NAMES if hy_v4.is_hy_v4(text) else LAYER_TYPE_NAMES
        return _pattern_kinds("layer_types", _as_list("layer_types", text["layer_types"]), num_layers, names)
    if _present(
        text, "full_attn_idxs"
    ):  # LFM2 before layer_types: transformers Lfm2Config builds it, rest "conv"
        full = {
            _as_int("full_attn_idxs", i, minimum=0, maximum=MAX_LAYERS)
            for i in _as_list("full_attn_idxs", text["full_attn_idxs"])
        }
        return [LayerKind.FULL if i in full else LayerKind.MAMBA for i in range(num_layers)]
    if _present(text, "block_configs"):  # Nemotron-NAS / DeciLM: attention.no_op blocks have none
        kinds = ["none" if a.get("no_op") else "full" for a in nas_block_parts(text, "attention")]
        return _pattern_kinds(
            "block_configs", kinds, num_layers, {"none": LayerKind.NONE, "full": LayerKind.FULL}
        )
    if _present(text, "hybrid_layer_pattern"):  # MiMo-V2: 1 = sliding-window layer, 0 = full
        values = _as_list("hybrid_layer_pattern", text["hybrid_layer_pattern"])
        return _pattern_kinds(
            "hybrid_layer_pattern", values, num_layers, {1: LayerKind.SLIDING, 0: LayerKind.FULL}
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
        check_offset_below_period(
            offset_key="attn_layer_offset", offset=offset, period_key="attn_layer_period", period=period
        )
        return [LayerKind.FULL if i % period == offset else LayerKind.MAMBA for i in range(num_layers)]
    if _present(text, "linear_attn_config"):  # Kimi-Linear / Kimi-K3: is_kda_layer(i) = (i + 1) in kda_layers
        kda = _as_mapping("linear_attn_config", text["linear_attn_config"]).get("kda_layers") or []
        numbers = {_as_int("linear_attn_config.kda_layers", n, minimum=1, maximum=MAX_LAYERS) for n in kda}
        return [LayerKind.MAMBA if i + 1 in numbers else LayerKind.FULL for i in range(num_layers)]
    if _present(text, "full_attention_interval") and _present(text, "linear_num_value_heads"):
        # Qwen3-Next: every `interval`-th layer is full attention, the rest Gated DeltaNet.
        interval = _as_int(
            "full_attention_interval", text["full_attention_interval"], minimum=1, maximum=MAX_LAYERS
        )
        return [LayerKind.FULL if (i + 1) % interval == 0 else LayerKind.MAMBA for i in range(num_layers)]
    if _present(text, "attention_chunk_size"):  # Llama-4 iRoPE: RoPE layers chunked, NoPE layers global
        values = (
            _as_list("no_rope_layers", text["no_rope_layers"]) if _present(text, "no_rope_layers") else []
        )
        if values:  # 1 = uses RoPE (chunked), 0 = NoPE (global); an empty list means the interval below
            # (transformers Llama4TextConfig: `no_rope_layers if no_rope_layers else default_no_rope_layers`)
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
    pattern = _int(text, "sliding_window_pattern", maximum=MAX_LAYERS)  # gemma-3(n): CLASS_DEFAULTS fills it
    if pattern is not None:  # gemma-3(n) / Cohere2: layer i is global iff (i + 1) % pattern == 0
        return [LayerKind.FULL if (i + 1) % pattern == 0 else LayerKind.SLIDING for i in range(num_layers)]
    if _flag(text, "use_sliding_window") and _present(text, "max_window_layers"):
        # Qwen2 with use_sliding_window: layers from max_window_layers on are local.
        first = _as_int("max_window_layers", text["max_window_layers"], minimum=0, maximum=MAX_LAYERS)
        return [LayerKind.SLIDING if i >= first else LayerKind.FULL for i in range(num_layers)]
    # Mistral / Phi-3: a non-null sliding_window with no per-layer list applies to every layer.
    return [LayerKind.SLIDING] * num_layers


def _sliding_window(text: Mapping[str, Any]) -> int | None:
    if _present(text, "hybrid_layer_pattern") and _present(text, "sliding_window_size"):
        return _int(text, "sliding_window_size", maximum=MAX_POSITIONS)  # MiMo-V2 (mimo_v2.py)
    window = _int(text, "sliding_window", maximum=MAX_POSITIONS)
    # Qwen2/2.5/3: sliding_window is written but inert while use_sliding_window is false.
    if window is not None and "use_sliding_window" in text and not _flag(text, "use_sliding_window"):
        return None
    return window


def _mamba_spec(cfgs: _Configs, geometry: _Geometry) -> MambaSpec:
    text = cfgs.text
    if cfgs.text_model_type == "mamba2":  # Mamba2Config: d_inner = expand x hidden (vLLM mamba2.py)
        expand = _int(text, "expand", maximum=1024) or 2
        return MambaSpec(
            kind=MambaKind.MAMBA2,
            intermediate_size=expand * geometry.hidden_size,
            state_size=_required_int(text, ("state_size",)),
            conv_kernel=_required_int(text, ("conv_kernel",)),
            n_groups=_int(text, "n_groups") or 1,
            num_heads=_required_int(text, ("num_heads",)),
            head_dim=_required_int(text, ("head_dim",)),
        )
    if cfgs.text_model_type in ("mamba", "falcon_mamba"):  # MambaConfig: intermediate_size is d_inner
        return MambaSpec(
            kind=MambaKind.MAMBA1,
            intermediate_size=_required_int(text, ("intermediate_size",)),
            state_size=_required_int(text, ("state_size",)),
            conv_kernel=_required_int(text, ("conv_kernel",)),
        )
    if _present(text, "linear_attn_config"):  # KDA (kimi_k3/nvidia/kda.py KimiK3DeltaAttention)
        kda = _as_mapping("linear_attn_config", text["linear_attn_config"])
        return MambaSpec(
            kind=MambaKind.KDA,
            num_heads=_required_int(kda, ("num_heads",)),
            head_dim=_required_int(kda, ("head_dim",)),
            conv_kernel=_required_int(kda, ("short_conv_kernel_size",)),
            bounded_gate=kda.get("gate_lower_bound") is not None,
        )
    if _present(text, "conv_L_cache"):  # LFM2 ShortConv (mamba_utils.short_conv_state_shape)
        return MambaSpec(
            kind=MambaKind.SHORT_CONV,
            intermediate_size=_required_int(text, ("conv_dim",)),
            conv_kernel=_required_int(text, ("conv_L_cache",)),
        )
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


def _first_architecture(top: Mapping[str, Any]) -> str:
    archs = top.get("architectures")
    return archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else ""


def _layers(cfgs: _Configs, geometry: _Geometry) -> _Layers:
    text = cfgs.text
    num_layers = geometry.num_layers
    architecture = _first_architecture(cfgs.top)
    if is_encoder_only_architecture(architecture) or is_bidirectional(architecture, cfgs.text):
        # BertModel, XLMRobertaModel, ModernBertModel, EmbeddingGemma, ...: every attention layer is 0.33.0's
        # EncoderOnlyAttention (models/bert.py, roberta.py, modernbert.py; gemma3.py / llama.py / qwen*.py when
        # is_causal is False), which has no KV cache spec (a sliding window included), so the engine profiles no
        # KV pool (v1/engine/core.py: "Attention free models")
        return _Layers(
            kinds=(LayerKind.ENCODER_ONLY,) * num_layers, sliding_window=None, chunk=None, mamba=None
        )
    kinds = _explicit_layer_kinds(text, num_layers)
    if is_attention_free(cfgs):
        kinds = [LayerKind.MAMBA] * num_layers
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
    shared = _int(text, "num_kv_shared_layers", minimum=0, maximum=num_layers) or 0
    if shared:  # Gemma-3n / Gemma-4: the last layers reuse an earlier layer's cache (no KV spec)
        kinds = kinds[: num_layers - shared] + [LayerKind.SHARED] * shared
    mamba = _mamba_spec(cfgs, geometry) if LayerKind.MAMBA in present else None
    return _Layers(
        kinds=tuple(kinds),
        sliding_window=window if LayerKind.SLIDING in present else None,
        chunk=chunk,
        mamba=mamba,
    )


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
# Layers whose attention differs (per-layer KV heads / head sizes) and the extra caches
# ----------------------------------------------------------------------------------------------


def _block_kv_heads(text: Mapping[str, Any], heads: int) -> list[int]:
    """Nemotron-NAS block_configs: heads // n_heads_in_group per block, 0 for no-op attention."""
    if not _present(text, "block_configs"):
        return []
    out = []
    for index, attention in enumerate(nas_block_parts(text, "attention")):
        if attention.get("no_op"):
            out.append(0)
            continue
        if attention.get("replace_with_linear"):
            raise ConfigError(
                "block_configs",
                Text("block {index}: attention replace_with_linear is not built by vLLM", index=index),
            )
        group = _as_int("block_configs", attention.get("n_heads_in_group"), minimum=1, maximum=heads)
        if heads % group:
            raise ConfigError(
                "block_configs",
                Text(
                    "block {index}: n_heads_in_group {group} does not divide {heads} heads",
                    index=index,
                    group=group,
                    heads=heads,
                ),
            )
        out.append(heads // group)
    if not any(out):
        # vLLM's convertor raises "Could not determine the number of key-value attention heads"
        raise ConfigError("block_configs", Text("no block has attention"))
    return out


def layer_attention(
    cfgs: _Configs, geometry: _Geometry, layers: _Layers
) -> tuple[AttentionShape, ...] | None:
    """Per-layer cached attention shape when layers differ; None when every layer is the same."""
    text = cfgs.text
    base = AttentionShape(
        kv_heads=geometry.num_kv_heads, head_size=geometry.head_size, head_size_v=geometry.head_size_v
    )
    shapes: list[AttentionShape] | None = None
    if _present(text, "block_configs"):
        kvs = _block_kv_heads(text, geometry.num_heads)
        shapes = [base.model_copy(update={"kv_heads": kv}) if kv else base for kv in kvs]
    elif cfgs.text_model_type.startswith("gemma4"):
        # gemma4.py (0.19.0): full-attention layers use global_head_dim, and with attention_k_eq_v
        # num_global_key_value_heads; sliding layers head_dim / num_key_value_heads.
        full_head = _int(text, "global_head_dim") or geometry.head_size
        full_kv = geometry.num_kv_heads
        if _flag(text, "attention_k_eq_v"):
            full_kv = _int(text, "num_global_key_value_heads") or full_kv
        full = AttentionShape(kv_heads=full_kv, head_size=full_head, head_size_v=full_head)
        shapes = [full if kind == LayerKind.FULL else base for kind in layers.kinds]
    elif _present(text, "hybrid_layer_pattern") and _present(text, "swa_head_dim"):
        # mimo_v2.py: sliding layers have their own KV heads and head sizes (swa_*)
        swa_head = _required_int(text, ("swa_head_dim",))
        swa = AttentionShape(
            kv_heads=_int(text, "swa_num_key_value_heads") or geometry.num_kv_heads,
            head_size=swa_head,
            head_size_v=_int(text, "swa_v_head_dim") or swa_head,
        )
        shapes = [swa if kind == LayerKind.SLIDING else base for kind in layers.kinds]
    if _present(text, "per_layer_config"):
        # newer transformers spell the differing layers out: {"05": {"head_dim": 512,
        # "num_key_value_heads": 2}, ...} (vLLM 0.33 model_arch_config reads per_layer_config[i])
        shapes = shapes or [base] * geometry.num_layers
        for key, override in _as_mapping("per_layer_config", text["per_layer_config"]).items():
            index = _as_int(
                "per_layer_config",
                int(key) if str(key).isdigit() else -1,
                minimum=0,
                maximum=geometry.num_layers - 1,
            )
            entry = _as_mapping("per_layer_config", override)
            head = _int(entry, "head_dim") or shapes[index].head_size
            shapes[index] = AttentionShape(
                kv_heads=_int(entry, "num_key_value_heads") or shapes[index].kv_heads,
                head_size=head,
                head_size_v=head,
            )
    if shapes is None or all(shape == base for shape in shapes):
        return None
    return tuple(shapes)


# GLM-5.3-Flash's kpool indexer (0.33.0 models/glm5next/common/attention.py Glm5NextIndexerCache): the
# DeepSeek-V3.2 indexer spec with tokens_per_state = index_kpool, one stored state per index_kpool tokens. The
# same in every release that serves the model (0.30.0 nvidia/attention.py, 0.34.0 common/attention.py read), so
# no release rule: the registry's first_listed (0.30.0) already gates the architecture.
KPOOL_INDEXER_MODEL_TYPES = frozenset({"glm5_next", "glm5_next_text"})


def indexer_bytes_per_token(cfgs: _Configs) -> int:
    """DeepSeek-V3.2 / GLM-5 sparse attention: the indexer cache's bytes per token (kinds.indexer_bytes_per_token);
    GLM-5.3-Flash stores one state a pool of `index_kpool` tokens (132 B / 4 = 33 B a token). A pool of 1 or less
    (the wheel asserts index_kpool > 1) or one that leaves no whole byte count a token is refused."""
    text = cfgs.text
    if hy_v4.is_hy_v4(text):
        return hy_v4.indexer_bytes_per_token(text)
    if not _present(text, "index_topk"):
        return 0
    state = kinds.indexer_bytes_per_token(_required_int(text, ("index_head_dim",)))
    if cfgs.text_model_type not in KPOOL_INDEXER_MODEL_TYPES:
        return state
    kpool = _required_int(text, ("index_kpool",), maximum=MAX_POSITIONS)
    if kpool <= 1 or state % kpool:
        raise ConfigError(
            "index_kpool",
            Text(
                "{kpool}: the kpool indexer needs a pool larger than 1 that splits its {state} B state into whole bytes a token",
                kpool=kpool,
                state=state,
            ),
        )
    return state // kpool


DSV4_COMPRESS_RATIOS = frozenset({0, 4, 128})  # transformers deepseek_v4 _COMPRESS_RATIO_TO_LAYER_TYPE
DSV4_MODEL_TYPES = frozenset({"deepseek_v4"})


def compress_ratios(cfgs: _Configs, num_layers: int) -> tuple[int, ...] | None:
    """DeepSeek-V4's per-layer compress ratios (config.json ``compress_ratios``, one per decoder layer). DeepSeek-V4.1
    shares the key with other ratios and a cache laid out across layers that the planner does not size: refused."""
    text = cfgs.text
    if (
        cfgs.text_model_type in dsv41.DSV41_MODEL_TYPES
    ):  # refused, naming its caches (app/core/hf_config/dsv41.py)
        raise dsv41.refusal(text, model_type=cfgs.text_model_type, num_layers=num_layers)
    if cfgs.text_model_type not in DSV4_MODEL_TYPES or not _present(text, "compress_ratios"):
        return None
    values = _as_list("compress_ratios", text["compress_ratios"])[:num_layers]
    ratios = tuple(_as_int("compress_ratios", v, minimum=0, maximum=MAX_POSITIONS) for v in values)
    if len(ratios) != num_layers or not set(ratios) <= DSV4_COMPRESS_RATIOS:
        raise ConfigError(
            "compress_ratios", Text("needs one of 0, 4, 128 per layer ({n} layers)", n=num_layers)
        )
    return ratios


DEFAULT_INDEX_SKIP_TOPK_OFFSET = 2  # 0.33.0 deepseek_v2.py getattr(config, "index_skip_topk_offset", 2)


def indexer_layers(cfgs: _Configs, num_layers: int) -> tuple[int, ...] | None:
    """Layers that build an indexer (IndexCache, 0.24+ deepseek_v2.py DeepseekV2MLAAttention): with
    `index_topk_pattern` those not marked "S"; else those where max(i - index_skip_topk_offset + 1, 0) %
    index_topk_freq == 0. None when every layer has one (index_topk_freq 1, no pattern)."""
    text = cfgs.text
    if hy_v4.is_hy_v4(text):
        return hy_v4.indexer_layers(text, num_layers)
    if not _present(text, "index_topk"):
        return None
    pattern = text.get("index_topk_pattern")
    freq = _int(text, "index_topk_freq", maximum=MAX_LAYERS) or 1
    if pattern is None and freq == 1:
        return None
    if pattern is not None:
        marks = _as_list("index_topk_pattern", list(pattern) if isinstance(pattern, str) else pattern)
        kept = [i for i in range(num_layers) if not (i < len(marks) and marks[i] == "S")]
    else:
        offset = _int(text, "index_skip_topk_offset", minimum=0, maximum=MAX_LAYERS)
        offset = DEFAULT_INDEX_SKIP_TOPK_OFFSET if offset is None else offset
        kept = [i for i in range(num_layers) if max(i - offset + 1, 0) % freq == 0]
    return tuple(kept)


def mamba_ssm_dtype(cfgs: _Configs) -> Literal["bfloat16", "float16", "float32"] | None:
    """config.json's SSM-state dtype: `mamba_ssm_dtype` (Qwen3.5) or `mamba_ssm_cache_dtype` (Nemotron-H)."""
    for key in ("mamba_ssm_dtype", "mamba_ssm_cache_dtype"):
        value = _lookup(cfgs, key)
        if value is not None and value != "auto":
            name = _as_str(key, value).removeprefix("torch.")
            if name not in DTYPE_NAMES:
                raise ConfigError(key, Text("unsupported dtype {name!r}", name=name))
            return DTYPE_NAMES[name]
    return None


def retrieval_attention_contract(cfgs: _Configs) -> tuple[str, ...]:
    """The ``retrieval_attention_contract`` values config.json and its text config declare (each config once;
    models/config.py ColQwen3_5Config reads both): a non-string value is kept as its repr, which vLLM refuses."""
    configs = [cfgs.top] if cfgs.text is cfgs.top else [cfgs.top, cfgs.text]
    values = [config.get("retrieval_attention_contract") for config in configs]
    return tuple(value if isinstance(value, str) else repr(value) for value in values if value is not None)
