"""Vision-tower parameters counted from ``vision_config``, for the tower layouts vLLM builds from it.

vLLM loads a multimodal model's tower with its language model (its weights are in the checkpoint and in
"Model loading took"), except in text-only mode: every ``--limit-mm-per-prompt`` modality 0
(app/core/extras/multimodal.py subtracts it then). Each layout is counted the way vLLM 0.33.0 builds it;
a ``vision_config`` of another layout counts 0 (not modelled, said by the caller's absence of a tower).

Both layouts share one pre-norm ViT block with biased q/k/v/o and a biased two-matrix MLP (``_block``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.hf_config.coerce import MAX_DIM, _as_int, _Configs
from app.core.hf_config.registry import is_multimodal_architecture

# model_type of the vision_config -> layout; the Qwen3-VL tower is also recognised by its keys (Qwen3.5
# configs give the language model's model_type there)
SIGLIP_MODEL_TYPES = frozenset({"siglip_vision_model"})
QWEN3_VL_TOWER_KEYS = ("depth", "out_hidden_size", "num_position_embeddings", "temporal_patch_size")
# transformers 5.20.2 (the release 0.33.0 pins) models/siglip/configuration_siglip.py SiglipVisionConfig
# defaults, which fill the keys a vision_config leaves out
SIGLIP_DEFAULTS = {
    "hidden_size": 768,
    "intermediate_size": 3072,
    "num_hidden_layers": 12,
    "num_channels": 3,
    "image_size": 224,
    "patch_size": 16,
}
# Gemma-3 (gemma3_mm.py Gemma3ForConditionalGeneration): a SigLIP tower and its projector
SIGLIP_PROJECTOR_ARCHITECTURES = frozenset({"Gemma3ForConditionalGeneration"})
# Mistral-Small-3.1 / Magistral-Small-2509 / Devstral-2 (mistral3.py): a Pixtral tower and its projector
PIXTRAL_ARCHITECTURES = frozenset({"Mistral3ForConditionalGeneration"})
PIXTRAL_MODEL_TYPES = frozenset({"pixtral"})
# Llama-4 Scout / Maverick (mllama4.py Llama4ForConditionalGeneration): Llama4VisionModel and its projector
LLAMA4_VISION_MODEL_TYPES = frozenset({"llama4_vision_model"})
# Gemma-4 (gemma4_mm.py Gemma4ForConditionalGeneration): transformers' Gemma4VisionModel and embed_vision
GEMMA4_VISION_MODEL_TYPES = frozenset({"gemma4_vision"})
# transformers 5.20.2 config class defaults, which fill the keys a vision_config leaves out:
# models/llama4/configuration_llama4.py Llama4VisionConfig
LLAMA4_VISION_DEFAULTS = dict(
    zip(
        ("hidden_size", "intermediate_size", "num_hidden_layers", "patch_size", "image_size", "num_channels"),
        (768, 5632, 34, 14, 448, 3),
        strict=True,
    ),
    projector_input_dim=4096,
    projector_output_dim=4096,
    vision_output_dim=7680,
)
# models/gemma4/configuration_gemma4.py Gemma4VisionConfig
GEMMA4_VISION_DEFAULTS = {
    **dict(zip(("hidden_size", "intermediate_size", "num_hidden_layers"), (768, 3072, 16), strict=True)),
    **dict(zip(("num_attention_heads", "num_key_value_heads", "head_dim"), (12, 12, 64), strict=True)),
    "patch_size": 16,
    "position_embedding_size": 10 * 1024,
}
# Gemma4ClippableLinear holds 4 scalar clip bounds (input/output min/max) with ``use_clipped_linears``;
# a vision layer has 7 of them (q/k/v/o, gate/up/down)
GEMMA4_CLIP_BOUNDS_PER_LAYER = 7 * 4
# Kimi-K2.5 / K2.6 (kimi_k25.py KimiK25ForConditionalGeneration): MoonViT3dPretrainedModel and its projector
MOONVIT3D_ARCHITECTURES = frozenset({"KimiK25ForConditionalGeneration"})
# transformers 5.20.2 models/kimi_k25/configuration_kimi_k25.py Kimi_K25VisionConfig defaults
MOONVIT3D_DEFAULTS = {
    "hidden_size": 1152,
    "intermediate_size": 4304,
    "num_hidden_layers": 27,
    "patch_size": 14,
}
MOONVIT3D_POS_EMB_DEFAULT = 64


def _block(hidden: int, intermediate: int) -> int:
    """One ViT block: q/k/v/o 4 x (h x h + h), fc1 h x i + i, fc2 i x h + h, two LayerNorms 2 x 2h.

    E.g. h 1,152, i 4,304 (SigLIP-so400m, Qwen3-VL's tower): 5,312,000 + 4,962,512 + 4,959,360 + 4,608 =
    15,239,504."""
    attention = 4 * (hidden * hidden + hidden)
    mlp = hidden * intermediate + intermediate + intermediate * hidden + hidden
    return attention + mlp + 4 * hidden


def _dim(vision: Mapping[str, Any], key: str, *, default: int | None = None, minimum: int = 1) -> int:
    """An integer of ``vision_config``; a missing key takes the config class default where it has one."""
    value = vision.get(key)
    if value is None and default is not None:
        return default
    return _as_int(f"vision_config.{key}", value, minimum=minimum, maximum=MAX_DIM)


def _dims(vision: Mapping[str, Any], defaults: Mapping[str, int]) -> dict[str, int]:
    """The ``vision_config`` integers a layout reads, each defaulting as its config class does (a layer
    count may be 0)."""
    return {
        key: _dim(vision, key, default=value, minimum=0 if key == "num_hidden_layers" else 1)
        for key, value in defaults.items()
    }


def _qwen3_vl_tower(vision: Mapping[str, Any]) -> int:
    """models/qwen3_vl.py Qwen3_VisionTransformer (also Qwen3.5's, qwen3_5.py): Conv3d patch embedding
    (in x t x p x p -> h, biased), learned position embeddings, ``depth`` blocks, a patch merger (LayerNorm
    h, fc1 m x m, fc2 m x out, m = h x merge^2, biased) and one post-shuffle merger (LayerNorm m) per
    ``deepstack_visual_indexes`` entry.

    E.g. Qwen3.5-27B (h 1,152, i 4,304, depth 27, p 16, t 2, 2,304 positions, merge 2, out 5,120):
    27 x 15,239,504 + 1,770,624 + 2,654,208 + (2,304 + 21,238,272 + 23,598,080) = 460,730,096."""
    h = _dim(vision, "hidden_size")
    inner = _dim(vision, "intermediate_size")
    depth = _dim(vision, "depth", minimum=0)
    patch = _dim(vision, "patch_size")
    temporal = _dim(vision, "temporal_patch_size")
    channels = _dim(vision, "in_channels", default=3)
    positions = _dim(vision, "num_position_embeddings", minimum=0)
    merge = _dim(vision, "spatial_merge_size", default=2)
    out = _dim(vision, "out_hidden_size")
    deepstack = vision.get("deepstack_visual_indexes")
    deepstack_mergers = len(deepstack) if isinstance(deepstack, list) else 0
    merged = h * merge * merge
    merger_matrices = merged * merged + merged + merged * out + out
    mergers = (2 * h + merger_matrices) + deepstack_mergers * (2 * merged + merger_matrices)
    patch_embed = channels * temporal * patch * patch * h + h
    return depth * _block(h, inner) + patch_embed + positions * h + mergers


def _siglip_tower(vision: Mapping[str, Any]) -> int:
    """models/siglip.py SiglipVisionModel: Conv2d patch embedding (c x p x p -> h, biased), (image / p)^2
    position embeddings, ``num_hidden_layers`` blocks and a post LayerNorm (no pooling head when
    ``vision_use_head`` is false, as Gemma-3 sets it).

    E.g. Gemma-3 (h 1,152, i 4,304, 27 layers, p 14, image 896): 27 x 15,239,504 + 678,528 + 4,096 x
    1,152 + 2,304 = 416,866,032."""
    defaults = SIGLIP_DEFAULTS
    h = _dim(vision, "hidden_size", default=defaults["hidden_size"])
    inner = _dim(vision, "intermediate_size", default=defaults["intermediate_size"])
    layers = _dim(vision, "num_hidden_layers", default=defaults["num_hidden_layers"], minimum=0)
    patch = _dim(vision, "patch_size", default=defaults["patch_size"])
    image = _dim(vision, "image_size", default=defaults["image_size"])
    channels = _dim(vision, "num_channels", default=defaults["num_channels"])
    head = 0
    if vision.get("vision_use_head") is True:
        # SiglipMultiheadAttentionPoolingHead: probe h, attention 4 (h x h + h), LayerNorm 2h, MLP
        head = h + 4 * (h * h + h) + 2 * h + (h * inner + inner + inner * h + h)
    return (
        layers * _block(h, inner)
        + channels * patch * patch * h
        + h
        + (image // patch) ** 2 * h
        + 2 * h
        + head
    )


def _pixtral_tower(vision: Mapping[str, Any], *, text_hidden: int, merge: int, projector_bias: bool) -> int:
    """pixtral.py PixtralHFVisionModel and mistral3.py Mistral3MultiModalProjector: Conv2d patch embedding
    (c x p x p -> h, no bias), ln_pre RMSNorm h, ``num_hidden_layers`` blocks of q/k/v/o 4 h^2 and a gated MLP
    3 h i (no biases) with two RMSNorms; the projector's RMSNorm h, patch merger (h x merge^2 -> h, no bias),
    linear_1 h x text and linear_2 text x text (biased with ``multimodal_projector_bias``).

    E.g. Mistral-Small-3.1 (h 1,024, i 4,096, 24 layers, p 14, merge 2, text 5,120): 24 x 16,779,264 +
    602,112 + 1,024 + (1,024 + 4,194,304 + 5,242,880 + 26,214,400) = 438,958,080."""
    # defaults: transformers 5.20.2 models/pixtral/configuration_pixtral.py PixtralVisionConfig
    h = _dim(vision, "hidden_size", default=1024)
    inner = _dim(vision, "intermediate_size", default=4096)
    layers = _dim(vision, "num_hidden_layers", default=24, minimum=0)
    patch = _dim(vision, "patch_size", default=16)
    channels = _dim(vision, "num_channels", default=3)
    block = 4 * h * h + 3 * h * inner + 2 * h
    projector = h + h * merge * merge * h + h * text_hidden + text_hidden * text_hidden
    if projector_bias:
        projector += 2 * text_hidden
    return layers * block + channels * patch * patch * h + h + projector


def _llama4_tower(vision: Mapping[str, Any], *, text_hidden: int) -> int:
    """mllama4.py Llama4VisionModel and Llama4MultiModalProjector: Llama4UnfoldConvolution (c x p x p -> h,
    no bias), class embedding h, (image / p)^2 + 1 position embeddings, LayerNorms pre and post 2 x 2h,
    ``num_hidden_layers`` ``_block`` layers (biased qkv/o and fc1/fc2), the Llama4VisionPixelShuffleMLP
    adapter (fc1 i -> projector_input_dim, fc2 -> projector_output_dim, biased with
    ``multi_modal_projector_bias``) and the projector linear_1 vision_output_dim x text (no bias).

    E.g. Llama-4-Scout (h 1,408, i 5,632, 34 layers, p 14, image 336, 4,096 / 4,096 / 4,096, text 5,120):
    34 x 23,807,872 + 827,904 + 1,408 + 577 x 1,408 + 5,632 + (5,632 x 4,096 + 4,096^2) + 4,096 x 5,120 =
    871,932,416."""
    d = _dims(vision, LLAMA4_VISION_DEFAULTS)
    h, inner, patch, image, channels = (
        d[k] for k in ("hidden_size", "intermediate_size", "patch_size", "image_size", "num_channels")
    )
    layers, adapter_in, adapter_out = (
        d["num_hidden_layers"],
        d["projector_input_dim"],
        d["projector_output_dim"],
    )
    vision_out = d["vision_output_dim"]
    adapter = inner * adapter_in + adapter_in * adapter_out
    if vision.get("multi_modal_projector_bias") is True:
        adapter += adapter_in + adapter_out
    embeddings = channels * patch * patch * h + h + ((image // patch) ** 2 + 1) * h
    return layers * _block(h, inner) + embeddings + 4 * h + adapter + vision_out * text_hidden


def _gemma4_tower(vision: Mapping[str, Any], *, text_hidden: int) -> int:
    """transformers 5.20.2 models/gemma4/modeling_gemma4.py Gemma4VisionModel (vLLM builds it with
    AutoModel.from_config) and gemma4_mm.py Gemma4MultimodalEmbedder: patch_embedder input_proj 3 x p^2 x h
    and a (2, position_embedding_size, h) position table; per layer q/k/v/o (heads x head_dim, no bias),
    q_norm / k_norm head_dim each (v_norm has no scale), a gated MLP 3 h i (no bias) and four RMSNorms 4h;
    std_bias / std_scale 2h with ``standardize`` (checkpoint buffers); embedding_projection h x text (no
    bias; its pre-norm has no weight).

    E.g. Gemma-4-31B (h 1,152, i 4,304, 27 layers, 16 / 16 heads of 72, p 16, 10,240 positions, text 5,376):
    27 x 20,187,792 + 884,736 + 23,592,960 + 2,304 + 6,193,152 = 575,743,536."""
    d = _dims(vision, GEMMA4_VISION_DEFAULTS)
    h, inner, layers, patch = (
        d["hidden_size"],
        d["intermediate_size"],
        d["num_hidden_layers"],
        d["patch_size"],
    )
    heads, kv_heads, head_dim = d["num_attention_heads"], d["num_key_value_heads"], d["head_dim"]
    positions = d["position_embedding_size"]
    attention = 2 * h * heads * head_dim + 2 * h * kv_heads * head_dim + 2 * head_dim
    layer = attention + 3 * h * inner + 4 * h
    if vision.get("use_clipped_linears") is True:
        layer += GEMMA4_CLIP_BOUNDS_PER_LAYER
    standardize = 2 * h if vision.get("standardize") is True else 0
    embedder = 3 * patch * patch * h + 2 * positions * h
    return layers * layer + embedder + standardize + h * text_hidden


def _moonvit_dim(vision: Mapping[str, Any], key: str) -> int:
    """A MoonViT size: the config class's name, else the checkpoint's ``vt_`` spelling, else the default."""
    if vision.get(key) is None and vision.get(f"vt_{key}") is not None:
        return _dim(vision, f"vt_{key}", minimum=0)
    return _dim(vision, key, default=MOONVIT3D_DEFAULTS[key], minimum=0)


def _moonvit3d_tower(vision: Mapping[str, Any], *, text_hidden: int) -> int:
    """kimi_k25_vit.py MoonViT3dPretrainedModel and KimiK25MultiModalProjector ("patchmerger"): Conv2d patch
    embedding (3 x p x p -> h, biased), a learned H x W x h position table (its time table is a
    non-persistent sin-cos buffer), ``num_hidden_layers`` MoonViTEncoderLayer (LayerNorms, biased wqkv / wo
    and fc0 / fc1: ``_block``), a final LayerNorm 2h; the projector's LayerNorm 2h, linear_1 m x m and
    linear_2 m x text (m = h x merge_h x merge_w, biased). Other norm/bias/projector variants count 0.

    E.g. Kimi-K2.5 (h 1,152, i 4,304, 27 layers, p 14, 64 x 64 positions, merge 2 x 2, text 7,168):
    27 x 15,239,504 + 678,528 + 4,718,592 + 2,304 + (2,304 + 21,238,272 + 33,037,312) = 471,143,920."""
    variant = (
        vision.get("norm_type", "layernorm"),
        vision.get("attn_bias", True),
        vision.get("linear_bias", True),
        vision.get("qkv_hidden_size"),
        vision.get("mm_projector_type", "patchmerger"),
    )
    if variant != ("layernorm", True, True, None, "patchmerger"):
        return 0
    h = _moonvit_dim(vision, "hidden_size")
    inner = _moonvit_dim(vision, "intermediate_size")
    layers = _moonvit_dim(vision, "num_hidden_layers")
    patch = _moonvit_dim(vision, "patch_size")
    # _get_pos_emb_size: the legacy init_pos_emb_* keys first
    grid = [
        _dim(
            vision,
            f"init_pos_emb_{side}",
            default=_dim(vision, f"pos_emb_{side}", default=MOONVIT3D_POS_EMB_DEFAULT),
        )
        for side in ("height", "width")
    ]
    kernel = vision.get("merge_kernel_size", [2, 2])
    if not (isinstance(kernel, list) and len(kernel) == 2):
        return 0
    merged = h * _as_int("vision_config.merge_kernel_size", kernel[0], minimum=1, maximum=MAX_DIM)
    merged *= _as_int("vision_config.merge_kernel_size", kernel[1], minimum=1, maximum=MAX_DIM)
    patch_embed = 3 * patch * patch * h + h + grid[0] * grid[1] * h
    projector = 2 * h + merged * merged + merged + merged * text_hidden + text_hidden
    if vision.get("patch_embed_proj_bias") is False:
        patch_embed -= h
    return layers * _block(h, inner) + patch_embed + 2 * h + projector


# the sub-configs a multimodal checkpoint builds an encoder tower from (vLLM's _mark_tower_model towers)
TOWER_CONFIG_KEYS = ("vision_config", "audio_config")
# ...ForCausalLM classes outside vLLM's multimodal registry are text-only: vLLM builds no tower for them whatever
# sub-configs remain (a text-only Gemma3ForCausalLM export). The suffix alone is not enough: 0.33.0's
# _MULTIMODAL_MODELS holds 16 ...ForCausalLM classes that build one (DeepseekVLV2ForCausalLM, Phi4MMForCausalLM).
TEXT_ONLY_ARCHITECTURE_SUFFIX = "ForCausalLM"


def uncounted_towers(cfgs: _Configs, *, architecture: str, vision_params: int) -> tuple[str, ...]:
    """The towers vLLM builds that :func:`vision_tower_params` does not count (0 for their layout), each as
    ``"<key> (<model_type>)"``: audio towers always (none is modelled), a vision tower of an unmodelled layout
    (Gemma-3n's timm MobileNetV5, Kimi-VL's MoonViT, Qwen2.5-VL's window ViT, SigLIP-2, ...)."""
    if architecture.endswith(TEXT_ONLY_ARCHITECTURE_SUFFIX) and not is_multimodal_architecture(architecture):
        return ()
    out = []
    for key in TOWER_CONFIG_KEYS:
        sub = cfgs.top.get(key)
        if not isinstance(sub, Mapping) or (key == "vision_config" and vision_params):
            continue
        model_type = sub.get("model_type")
        out.append(f"{key} ({model_type})" if isinstance(model_type, str) and model_type else key)
    return tuple(out)


def vision_tower_params(cfgs: _Configs, *, architecture: str, text_hidden: int) -> int:
    """Parameters of the tower (and its projector) vLLM builds from ``vision_config``; 0 without one or
    for a layout not modelled here.

    E.g. Gemma-3-12B: SigLIP 416,866,032 + projector (gemma3_mm.py Gemma3MultiModalProjector:
    mm_input_projection_weight 1,152 x 3,840, mm_soft_emb_norm 1,152) 4,424,832 = 421,290,864."""
    vision = cfgs.top.get("vision_config")
    if not isinstance(vision, Mapping):
        return 0
    if all(key in vision for key in QWEN3_VL_TOWER_KEYS):
        return _qwen3_vl_tower(vision)
    if vision.get("model_type") in SIGLIP_MODEL_TYPES:
        tower = _siglip_tower(vision)
        if architecture in SIGLIP_PROJECTOR_ARCHITECTURES:
            h = _dim(vision, "hidden_size", default=SIGLIP_DEFAULTS["hidden_size"])
            tower += h * text_hidden + h
        return tower
    if vision.get("model_type") in PIXTRAL_MODEL_TYPES and architecture in PIXTRAL_ARCHITECTURES:
        merge = _as_int(
            "spatial_merge_size", cfgs.top.get("spatial_merge_size", 2), minimum=1, maximum=MAX_DIM
        )
        bias = cfgs.top.get("multimodal_projector_bias") is True
        return _pixtral_tower(vision, text_hidden=text_hidden, merge=merge, projector_bias=bias)
    if vision.get("model_type") in LLAMA4_VISION_MODEL_TYPES:
        return _llama4_tower(vision, text_hidden=text_hidden)
    if vision.get("model_type") in GEMMA4_VISION_MODEL_TYPES:
        return _gemma4_tower(vision, text_hidden=text_hidden)
    if architecture in MOONVIT3D_ARCHITECTURES:
        return _moonvit3d_tower(vision, text_hidden=text_hidden)
    return 0
