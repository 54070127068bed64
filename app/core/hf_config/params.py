"""Parameter count from a config.json: embeddings, attention, mixers, MLPs, experts, norms."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from app.core.errors import ConfigError
from app.core.hf_config.coerce import (
    MAX_DIM,
    MAX_EXPERTS,
    MAX_LAYERS,
    _as_float,
    _as_int,
    _as_list,
    _as_str,
    _config_error,
    _Configs,
    _first_int,
    _flag,
    _int,
    _lookup_flag,
    _present,
    _split_configs,
)
from app.core.hf_config.geometry import (
    _Geometry,
    _geometry,
    _Layers,
    _layers,
    indexer_layers,
    is_attention_free,
    layer_attention,
    nas_block_parts,
)
from app.core.hf_config.registry import is_pooling_architecture
from app.core.specs import AttentionShape, LayerKind, MambaKind, MambaSpec
from app.core.text import Text

# Models whose MLP is up -> act -> down (two matrices), not gated (three). Parameter count only.
UNGATED_MLP_MODEL_TYPES = frozenset(
    {"falcon", "phi", "gpt2", "gpt_neox", "gptj", "gpt_bigcode", "bloom", "opt", "mpt", "starcoder2"}
    | {"nemotron", "nemotron_h"}
    | {
        "persimmon"
    }  # 0.22.0 models/persimmon.py PersimmonMLP: dense_h_to_4h -> relu2 -> dense_4h_to_h (Fuyu's text)
)
# Models with q/k/v biases even though config.json has no bias key, and never an o_proj bias whatever it says
# (Qwen2 family: 0.33.0 qwen2.py Qwen2Attention qkv_proj bias=True, o_proj bias=False; mimo.py builds Qwen2Model
# although MiMo's config.json says attention_bias: true).
QKV_BIAS_MODEL_TYPES = frozenset({"qwen2", "qwen2_moe", "mimo"})
# torch.nn.LayerNorm (weight and bias) instead of RMSNorm: 0.33.0 falcon.py `from torch.nn import LayerNorm`
LAYERNORM_BIAS_MODEL_TYPES = frozenset({"falcon"})
# Models with per-head RMSNorm on q and k (head_dim weights each). Parameter count only.
QK_NORM_MODEL_TYPES = frozenset(
    {"qwen3", "qwen3_moe", "qwen3_next", "gemma3_text", "gemma3"}
    | {"exaone4", "exaone4_5_text"}  # 0.33.0 models/exaone4.py Exaone4Attention: RMSNorm(head_dim) on q and k
    # Qwen3.5 / 3.6 full-attention layers are Qwen3-Next's (0.33.0 qwen3_5.py builds Qwen3NextAttention, q_norm and
    # k_norm of head_dim)
    | {"qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"}
)
# q/k norms over the whole q and k projections (num_heads x head_dim, num_kv_heads x head_dim): transformers
# Olmo2Attention / Olmo3Attention q_norm, k_norm (vLLM olmo2.py; Olmo3 through the Transformers backend)
WIDE_QK_NORM_MODEL_TYPES = frozenset({"olmo2", "olmo3"})
# q/k norms with no learned scale: vLLM 0.33.0 models/llama4.py builds Llama4Attention.qk_norm as
# RMSNorm(has_weight=False), so `use_qk_norm` adds no parameters (Scout: not 48 x 2 x 128 = 12,288)
WEIGHTLESS_QK_NORM_MODEL_TYPES = frozenset({"llama4_text"})
# gpt-oss: attention sinks (one per head), biased experts (gate_up 2 x I + down H per expert) and a
# biased router (vLLM gpt_oss.py; transformers GptOssExperts / GptOssTopKRouter). 116,829,156,672
# parameters for gpt-oss-120b.
ATTENTION_SINK_MODEL_TYPES = frozenset({"gpt_oss"})
BIASED_EXPERT_MODEL_TYPES = frozenset({"gpt_oss"})
# Gemma-2/3 decoder layers have four norms (input, post-attention, pre- and post-feedforward;
# vLLM gemma2.py / gemma3.py Gemma*DecoderLayer), the others two. gemma-2-9b: 9,241,705,984.
FOUR_NORM_MODEL_TYPES = frozenset({"gemma2", "gemma3_text", "gemma3"})
# MoE layers that keep a dense MLP of intermediate_size beside the routed experts: 0.33.0 models/gemma4.py
# Gemma4DecoderLayer builds Gemma4MLP in every layer and the experts only when num_experts is set
# (google/gemma-4-26B-A4B: 30 x 3 x 2,816 x 2,112 = 535,265,280 parameters beside 128 experts of 704)
DENSE_BESIDE_EXPERTS_MODEL_TYPES = frozenset({"gemma4", "gemma4_text"})
# Gated attention output (q_proj emits query + gate) — Qwen3-Next full-attention layers.
NAS_FFN_MULTIPLE = 256  # nemotron_nas.py _find_multiple(intermediate_size, 256)
GATED_ATTENTION_MODEL_TYPES = frozenset({"qwen3_next"})


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
    moe_layers: int = 0  # decoder layers with a routed-expert block
    # every layer is one block (a mixer or an MLP) with its own norm: Nemotron-H's pattern, pure Mamba
    one_sublayer_blocks: bool = False
    # gpt-oss: routed experts' biases, kept in bf16 beside the quantized matrices (all / top-k)
    expert_biases: int = 0
    expert_biases_active: int = 0

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
            + self.expert_biases
        )

    @property
    def active(self) -> int | None:
        if not self.is_moe:
            return None
        return (
            self.total - self.experts - self.expert_biases + self.experts_active + self.expert_biases_active
        )

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
    elif "llama4" in cfgs.text_model_type or cfgs.text_model_type in DENSE_BESIDE_EXPERTS_MODEL_TYPES:
        # Llama-4: one shared expert per MoE layer; Gemma-4: each layer's dense MLP beside the experts
        shared_size, n_shared = geometry.intermediate_size, 1

    is_moe_layer: Callable[[int], bool]
    if isinstance(text.get("moe_layer_freq"), list | tuple):  # MiMo-V2: one 0/1 flag per layer
        flags = [
            _as_int("moe_layer_freq", value, minimum=0, maximum=1)
            for value in _as_list("moe_layer_freq", text["moe_layer_freq"])
        ]
        is_moe_layer = lambda i: i < len(flags) and flags[i] == 1  # noqa: E731
    elif _present(text, "first_k_dense_replace") or _present(text, "moe_layer_freq"):
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
    if g.latent_kv_rank is not None:  # MiniCPM3: MLA-style projections, plain attention cache
        rank, rope = g.latent_kv_rank, g.qk_head_dim - g.qk_nope_head_dim
        q = h * g.num_heads * g.qk_head_dim
        if g.q_lora_rank:
            q = h * g.q_lora_rank + g.q_lora_rank + g.q_lora_rank * g.num_heads * g.qk_head_dim
        kv = h * (rank + rope) + rank + rank * g.num_heads * (g.qk_nope_head_dim + g.v_head_dim)
        return q + kv + g.num_heads * g.v_head_dim * h, 0
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
    if cfgs.text_model_type in GATED_ATTENTION_MODEL_TYPES or _flag(text, "attn_output_gate"):
        # query + output gate (Qwen3-Next by type; Qwen3.5 / 3.6 say attn_output_gate: true, 0.33.0
        # qwen3_next.py Qwen3NextAttention q_proj width num_heads x head_dim x (1 + attn_output_gate))
        q_width *= 2
    k_width = g.num_kv_heads * g.head_size
    v_width = g.num_kv_heads * g.head_size_v
    params = h * (k_width + v_width) + _low_rank_q_params(text, h, q_width)
    params += _low_rank_o_params(text, h, g.num_heads * g.head_size_v)
    qkv_bias = _flag(text, "attention_bias") or _flag(text, "bias") or _flag(text, "qkv_bias")
    if qkv_bias or cfgs.text_model_type in QKV_BIAS_MODEL_TYPES:
        params += q_width + k_width + v_width
    if (
        _flag(text, "attention_bias") or _flag(text, "bias")
    ) and cfgs.text_model_type not in QKV_BIAS_MODEL_TYPES:
        params += h  # the same flag biases o_proj (Llama/gpt-oss attention_bias, InternLM2 bias)
    if cfgs.text_model_type in ATTENTION_SINK_MODEL_TYPES:
        params += g.num_heads  # one learned sink logit per head
    if (
        _flag(text, "use_qk_norm")
        or _flag(text, "qk_layernorm")
        or cfgs.text_model_type in QK_NORM_MODEL_TYPES
    ) and cfgs.text_model_type not in WEIGHTLESS_QK_NORM_MODEL_TYPES:
        params += 2 * g.head_size
    if cfgs.text_model_type in WIDE_QK_NORM_MODEL_TYPES:
        params += q_width + k_width
    return params, 0


def _low_rank_q_params(text: Mapping[str, Any], h: int, q_width: int) -> int:
    """The query projection: h x q, or through a q_lora_rank bottleneck (q_a, its RMSNorm, q_b) on
    attention that is not MLA — DeepSeek-V4 (0.33.0 models/deepseek_v4/attention.py: fused_wqa_wkv's
    q_lora_rank rows, q_norm, wq_b q_lora_rank x heads x head_dim)."""
    rank = _int(text, "q_lora_rank", minimum=0)
    if not rank:
        return h * q_width
    return h * rank + rank + rank * q_width


def _low_rank_o_params(text: Mapping[str, Any], h: int, o_width: int) -> int:
    """The output projection: heads x head_dim_v x h, or grouped low-rank (o_lora_rank per o_groups
    group): DeepSeek-V4 wo_a (heads x head_dim / groups -> groups x o_lora_rank, i.e. heads x head_dim x
    o_lora_rank) and wo_b (groups x o_lora_rank -> h), 0.33.0 models/deepseek_v4/attention.py.
    E.g. V4-Flash: 32,768 x 1,024 + 8 x 1,024 x 4,096 = 67,108,864 instead of 134,217,728."""
    rank = _int(text, "o_lora_rank", minimum=0)
    groups = _int(text, "o_groups", minimum=0)
    if not rank or not groups:
        return o_width * h
    return o_width * rank + groups * rank * h


V4_OVERLAP_RATIO = 4  # 0.33.0 models/deepseek_v4/compressor.py: overlap = compress_ratio == 4, coff = 2


def _compressor_params(h: int, dim: int, ratio: int) -> int:
    """One DeepseekCompressor (0.33.0 models/deepseek_v4/compressor.py): fused_wkv_wgate h x 2 coff dim,
    ape ratio x coff dim, an RMSNorm of dim."""
    coff = 2 if ratio == V4_OVERLAP_RATIO else 1
    return h * 2 * coff * dim + ratio * coff * dim + dim


def _sparse_attention_params(cfgs: _Configs, g: _Geometry, num_layers: int) -> int:
    """Indexer and compressor weights beside the attention projections.

    DeepSeek-V4 (`compress_ratios`, 0.33.0 models/deepseek_v4/attention.py): a compressor on every layer
    with ratio > 1; on ratio-4 layers also an indexer (wq_b q_lora_rank x index heads x index_head_dim,
    weights_proj h x index heads, its own ratio-4 compressor of index_head_dim). DeepSeek-V3.2 / GLM-5
    (`index_topk`, 0.33.0 deepseek_v2.py Indexer): wq_b, wk + weights_proj h x (index_head_dim + heads),
    k_norm LayerNorm (weight + bias), on the layers that build one (:func:`indexer_layers`)."""
    text = cfgs.text
    h = g.hidden_size
    heads = _int(text, "index_n_heads", minimum=0) or 0
    dim = _int(text, "index_head_dim", minimum=0) or 0
    q_rank = _int(text, "q_lora_rank", minimum=0) or 0
    if _present(text, "compress_ratios"):
        head = _int(text, "head_dim", minimum=1) or g.head_size
        total = 0
        for value in _as_list("compress_ratios", text["compress_ratios"])[:num_layers]:
            ratio = _as_int("compress_ratios", value, minimum=0, maximum=MAX_DIM)
            if ratio <= 1:
                continue
            total += _compressor_params(h, head, ratio)
            if ratio == V4_OVERLAP_RATIO and heads and dim:
                total += q_rank * heads * dim + h * heads + _compressor_params(h, dim, ratio)
        return total
    if not (_present(text, "index_topk") and heads and dim):
        return 0
    built = indexer_layers(cfgs, num_layers)
    count = num_layers if built is None else len(built)
    return count * (q_rank * heads * dim + h * (dim + heads) + 2 * dim)


def _mixer_params(spec: MambaSpec, cfgs: _Configs, g: _Geometry) -> int:
    h = g.hidden_size
    if spec.kind == MambaKind.MAMBA1:
        d_inner, state, kernel = spec.intermediate_size, spec.state_size, spec.conv_kernel
        dt_rank_raw = cfgs.text.get("mamba_dt_rank", cfgs.text.get("time_step_rank"))
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
            + (dt_rank + 2 * state if cfgs.text_model_type == "jamba" else 0)  # Jamba's dt/B/C norms
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
    if spec.kind == MambaKind.KDA:  # kimi_k3/nvidia/kda.py KimiK3DeltaAttention
        width, d, heads = spec.num_heads * spec.head_dim, spec.head_dim, spec.num_heads
        return (
            h * (4 * width + d + heads)  # in_proj_qkvgfab: q, k, v, g, f_a, beta
            + d * width  # f_b_proj
            + 3 * width * spec.conv_kernel  # conv1d over q, k, v
            + width  # dt_bias
            + heads  # A_log
            + d  # o_norm
            + width * h  # o_proj
        )
    if spec.kind == MambaKind.SHORT_CONV:  # 0.33.0 layers/mamba/short_conv.py ShortConv (conv_bias false)
        conv = spec.intermediate_size
        bias = conv * 5 if _flag(cfgs.text, "conv_bias") else 0  # in_proj 3 x conv, conv, out_proj h
        return h * 3 * conv + conv * spec.conv_kernel + conv * h + bias
    width = spec.num_heads * spec.head_dim  # lightning attention: qkv, output gate, out, norm
    return h * 3 * width + h * width + width * h + width


def _tied(cfgs: _Configs) -> bool:
    # Missing key: the config class default (CLASS_DEFAULTS, TIED_BY_DEFAULT_MODEL_TYPES), else untied.
    return _lookup_flag(cfgs, "tie_word_embeddings") is True


def architecture_of(top: Mapping[str, Any]) -> str:
    """config.json's first ``architectures`` entry ("" when it names none)."""
    value = top.get("architectures")
    if value is None:
        return ""
    archs = _as_list("architectures", value)
    return _as_str("architectures", archs[0]) if archs else ""


def is_pooling(cfgs: _Configs) -> bool:
    """vLLM runs this config's architecture with the pooling runner (ModelSpec.pooling): no LM head."""
    return is_pooling_architecture(architecture_of(cfgs.top))


def _separate_lm_head(cfgs: _Configs) -> bool:
    """vLLM loads an LM head of its own: not tied to the embedding and not a pooling model."""
    return not _tied(cfgs) and not is_pooling(cfgs)


def _mlp_bias_params(cfgs: _Configs, h: int, width: int, *, gated: bool) -> int:
    """`mlp_bias` (Llama, Granite: 0.33.0 llama.py LlamaMLP ``bias=getattr(config, "mlp_bias", False)``):
    gate_up (2 x width, or up only ungated) and down (h) biases. ibm-granite/granite-3b-code-instruct-128k:
    32 x (2 x 10,240 + 2,560) = 737,280."""
    if not _flag(cfgs.text, "mlp_bias"):
        return 0
    return (2 if gated else 1) * width + h


def _layernorm_params(cfgs: _Configs, norms: int, *, num_layers: int, hidden: int) -> int:
    """The norms' parameters with LayerNorm biases where the model uses torch LayerNorm, and Falcon's layer
    norm count (0.33.0 falcon.py FalconDecoderLayer: two with ``parallel_attn`` off or two
    ``num_ln_in_parallel_attn`` (new_decoder_architecture), else one input_layernorm), ``ln_f``'s bias; the final
    norm's weight is counted with every model's. falcon-180B-chat (new decoder): 80 x 2 x 2 x 14,848 + 14,848 =
    4,766,208."""
    if cfgs.text_model_type not in LAYERNORM_BIAS_MODEL_TYPES:
        return norms
    text = cfgs.text
    parallel = _lookup_flag(cfgs, "parallel_attn") is not False
    in_parallel = _int(text, "num_ln_in_parallel_attn")  # None: 2 for the new decoder (Falcon-11B says 1)
    if in_parallel is None:
        in_parallel = 2 if _flag(text, "new_decoder_architecture") else 1
    two = not parallel or in_parallel == 2
    return 2 * hidden * (2 if two else 1) * num_layers + hidden  # + ln_f's bias (its weight is added below)


# BertConfig / XLMRobertaConfig defaults (transformers models/bert/configuration_bert.py) for a config that omits them
BERT_DEFAULT_POSITIONS = 512
BERT_DEFAULT_TOKEN_TYPES = 2
# the model types whose 0.33.0 class is models/bert.py's BertModel layout (roberta.py reuses it with its own
# embedding); ModernBERT and the rotary BERTs (bert_with_rope.py: gated MLPs, no position table) are not
BERT_LAYOUT_MODEL_TYPES = frozenset({"bert", "roberta", "xlm-roberta"})


def _encoder_only_breakdown(cfgs: _Configs, g: _Geometry, num_layers: int) -> ParamBreakdown:
    """The tensors 0.33.0's BertModel builds (models/bert.py; roberta.py's RobertaEmbedding has the same ones):
    word, position and token-type tables plus a LayerNorm; each layer a biased QKV (H x 3H + 3H), a biased output
    projection (H x H + H), an ungated biased MLP (H x I + I, I x H + H) and two LayerNorms (weight and bias). No
    pooler (BertModel's weight mapper drops "pooler.") and no LM head. bge-small (V 30,522, 512 positions, 2 types,
    H 384, I 1,536, 12 layers): 11,918,592 + 768 + 12 x 1,774,464 = 33,212,160."""
    h, i = g.hidden_size, g.intermediate_size
    positions = _int(cfgs.text, "max_position_embeddings", minimum=1) or BERT_DEFAULT_POSITIONS
    token_types = _int(cfgs.text, "type_vocab_size", minimum=0)
    token_types = BERT_DEFAULT_TOKEN_TYPES if token_types is None else token_types
    return ParamBreakdown(
        embedding=(g.vocab_size + positions + token_types) * h,
        lm_head=0,
        attention=num_layers * (4 * h * h + 4 * h),
        mixer=0,
        mlp=num_layers * (2 * h * i + i + h),
        experts=0,
        experts_active=0,
        router=0,
        norms=num_layers * 4 * h + 2 * h,
        is_moe=False,
    )


def _breakdown(cfgs: _Configs, g: _Geometry, layers: _Layers, moe: _Moe | None) -> ParamBreakdown:
    if cfgs.text_model_type in BERT_LAYOUT_MODEL_TYPES and all(
        kind == LayerKind.ENCODER_ONLY for kind in layers.kinds
    ):
        return _encoder_only_breakdown(cfgs, g, len(layers.kinds))
    h = g.hidden_size
    gated = cfgs.text_model_type not in UNGATED_MLP_MODEL_TYPES
    matrices = 3 if gated else 2
    dense_mlp_size = g.intermediate_size
    if moe is not None and "llama4" in cfgs.text_model_type:
        dense_mlp_size = _int(cfgs.text, "intermediate_size_mlp", minimum=0) or g.intermediate_size
    attention_params, mla_params = _attention_params(cfgs, g)
    mixer_params = _mixer_params(layers.mamba, cfgs, g) if layers.mamba is not None else 0
    # Nemotron-H counts mixer and MLP blocks as separate "layers" with one norm each; pure Mamba
    # models have one mixer and one norm per layer.
    pattern = _nemotron_h_blocks(cfgs)
    if pattern and len(pattern) != len(layers.kinds):
        # NemotronHConfig needs one block letter per layer; the layer kinds came from another key
        raise ConfigError(
            "hybrid_override_pattern",
            Text(
                "has {values} entries but the model has {num_layers} layers",
                values=len(pattern),
                num_layers=len(layers.kinds),
            ),
        )
    separate_blocks = bool(pattern) or is_attention_free(cfgs)
    shapes = layer_attention(cfgs, g, layers)
    block_ffn = _block_ffn_sizes(cfgs, g)

    attention = mixer = mlp = experts = experts_active = router = norms = 0
    expert_biases = expert_biases_active = moe_layers = 0
    for index, kind in enumerate(layers.kinds):
        if kind == LayerKind.MLA:
            attention += mla_params
        elif kind in (LayerKind.FULL, LayerKind.SLIDING, LayerKind.CHUNKED, LayerKind.SHARED):
            attention += attention_params if shapes is None else _shape_params(g, shapes[index])
        elif kind == LayerKind.MAMBA:
            mixer += mixer_params
        if block_ffn:  # Nemotron-NAS: per-block FFN (0 = no-op), a norm before each present sub-block
            norms += h * ((kind != LayerKind.NONE) + (block_ffn[index] > 0))
            mlp += matrices * h * block_ffn[index]
            continue
        if separate_blocks:
            norms += h
            if pattern and pattern[index] == "E" and moe is not None:
                routed, shared, gate = _nemotron_h_moe(cfgs, moe)
                moe_layers += 1
                experts += moe.num_experts * routed
                experts_active += moe.top_k * routed
                mlp += shared
                router += gate
            elif kind == LayerKind.NONE:
                mlp += matrices * h * g.intermediate_size
            continue
        norms += (4 if cfgs.text_model_type in FOUR_NORM_MODEL_TYPES else 2) * h  # input, post-attn
        if moe is not None and moe.is_moe_layer(index):
            moe_layers += 1
            per_expert = 3 * h * moe.expert_size
            biased = cfgs.text_model_type in BIASED_EXPERT_MODEL_TYPES
            if biased:
                expert_biases += moe.num_experts * (2 * moe.expert_size + h)
                expert_biases_active += moe.top_k * (2 * moe.expert_size + h)
            experts += moe.num_experts * per_expert
            experts_active += moe.top_k * per_expert
            mlp += 3 * h * moe.shared_size + (h if moe.shared_gate else 0)
            router += h * moe.num_experts + (moe.num_experts if biased else 0)
        else:
            mlp += matrices * h * dense_mlp_size + _mlp_bias_params(cfgs, h, dense_mlp_size, gated=gated)
    attention += _sparse_attention_params(cfgs, g, len(layers.kinds))
    norms = _layernorm_params(cfgs, norms, num_layers=len(layers.kinds), hidden=h)
    embedding = g.vocab_size * h
    return ParamBreakdown(
        embedding=embedding,
        lm_head=embedding if _separate_lm_head(cfgs) else 0,
        attention=attention,
        mixer=mixer,
        mlp=mlp,
        experts=experts,
        experts_active=experts_active,
        router=router,
        norms=norms + h,  # + final norm
        is_moe=moe is not None,
        moe_layers=moe_layers,
        one_sublayer_blocks=separate_blocks,
        expert_biases=expert_biases,
        expert_biases_active=expert_biases_active,
    )


def _shape_params(g: _Geometry, shape: AttentionShape) -> int:
    """q/k/v/o of one attention layer with its own KV heads and head sizes (biases, norms ignored)."""
    h = g.hidden_size
    q = g.num_heads * shape.head_size
    kv = shape.kv_heads * (shape.head_size + shape.head_size_v)
    return h * (q + kv) + g.num_heads * shape.head_size_v * h


def _block_ffn_sizes(cfgs: _Configs, g: _Geometry) -> list[int]:
    """Nemotron-NAS FFN width per block (nemotron_nas.py): int(2 * ffn_mult * hidden / 3) rounded up
    to a multiple of 256, or the block's intermediate_size; 0 for a no-op FFN."""
    sizes = []
    for ffn in nas_block_parts(cfgs.text, "ffn"):
        if ffn.get("no_op"):
            sizes.append(0)
        elif ffn.get("ffn_mult") is not None:
            width = int(2 * _as_float("block_configs", ffn["ffn_mult"]) * g.hidden_size / 3)
            sizes.append(-(-width // NAS_FFN_MULTIPLE) * NAS_FFN_MULTIPLE)
        else:
            sizes.append(_as_int("block_configs", ffn.get("intermediate_size"), minimum=0, maximum=MAX_DIM))
    return sizes


def _nemotron_h_blocks(cfgs: _Configs) -> str:
    """Nemotron-H block letters (M mamba, * attention, - MLP, E MoE), from hybrid_override_pattern or
    the newer layers_block_type list; "" for other models."""
    text = cfgs.text
    if _present(text, "hybrid_override_pattern"):
        return str(text["hybrid_override_pattern"])
    if cfgs.text_model_type == "nemotron_h" and _present(text, "layers_block_type"):
        letters = {"mamba": "M", "attention": "*", "mlp": "-", "moe": "E"}
        return "".join(
            letters.get(str(kind), "?") for kind in _as_list("layers_block_type", text["layers_block_type"])
        )
    return ""


def _nemotron_h_moe(cfgs: _Configs, moe: _Moe) -> tuple[int, int, int]:
    """(params of one routed expert, shared experts, router) of a Nemotron-H 'E' block (nemotron_h.py):
    ungated relu2 experts over hidden (or moe_latent_size with fc1/fc2 latent projections), shared
    experts of moe_shared_expert_intermediate_size, a router with a score-correction bias."""
    text = cfgs.text
    h = _as_int("hidden_size", text["hidden_size"], minimum=1, maximum=MAX_DIM)
    latent = _int(text, "moe_latent_size")
    width = latent or h
    routed = 2 * width * moe.expert_size
    shared_size = _int(text, "moe_shared_expert_intermediate_size", minimum=0) or 0
    n_shared = _int(text, "n_shared_experts", minimum=0, maximum=MAX_EXPERTS) or 0
    shared = 2 * h * shared_size * n_shared + (2 * h * latent if latent else 0)
    return routed, shared, h * moe.num_experts + moe.num_experts


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
