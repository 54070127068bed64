"""Speculative decoding: the draft's weights and KV layers (config/speculative.py, 0.19.0)."""

from __future__ import annotations

from dataclasses import dataclass

from app.core import budget as B
from app.core import kv as K
from app.core.errors import InvalidServeConfigError, PlannerError
from app.core.extras.common import embed_params, src
from app.core.layers import attention_layers, model_counts
from app.core.result import ExtraItem
from app.core.specs import DTYPE_BYTES, GIB, ModelSpec, ServeConfig, SpeculativeConfig
from app.core.text import N_, Plural, Text

# --- speculative decoding ---------------------------------------------------------------------------
# methods that propose from the prompt/output text alone: no weights, no KV (config/speculative.py)
SPECULATIVE_FLAG = "--speculative-config"
TEXT_ONLY_METHODS = frozenset({"ngram", "suffix"})
# EAGLE heads reuse the target's embedding (and, for EAGLE-1, its lm_head) when the shapes match
# (v1/spec_decode/eagle.py `load_model`: "Sharing target model embedding weights with the draft model")
EAGLE_METHODS = frozenset({"eagle", "eagle3"})
# the head's fc joins the token embedding with the target's hidden state(s): a ReplicatedLinear (whole on
# every rank, no bias) of 2 x hidden (EAGLE-1, models/llama_eagle.py) or 3 x hidden (EAGLE-3 auxiliary
# hidden states, models/llama_eagle3.py) inputs; the catalog's plain-Llama parameter count leaves it out
EAGLE_FC_INPUTS: dict[str, int] = {"eagle": 2, "eagle3": 3}
# num_nextn_predict_layers of the checkpoints vLLM serves with method "mtp" (their config.json files)
MTP_LAYERS_BY_MODEL_TYPE: dict[str, int] = {
    "deepseek_v3": 1,  # DeepSeek-V3/R1 config.json num_nextn_predict_layers 1
    "glm4_moe": 1,  # GLM-4.5/4.5-Air num_nextn_predict_layers 1
    "qwen3_next": 1,  # Qwen3-Next-80B-A3B num_nextn_predict_layers 1 (mtp_num_hidden_layers)
    "mimo": 1,
}
MTP_EH_PROJ_INPUTS = 2  # eh_proj: Linear(2 x hidden -> hidden) joins the embedding and the hidden state
ATTENTION_PARAMS_PER_HIDDEN_SQ = 4  # q, k, v, o projections ~ 4 x hidden^2 (an estimate for MTP layers)
GATED_MLP_MATRICES = B.GATED_MLP_MATRICES  # gate, up, down


def _find_draft(name: str) -> ModelSpec:
    from app.core.catalog import find_model  # the catalog imports the specs; keep the import local

    try:
        return find_model(name)
    except PlannerError as exc:
        raise InvalidServeConfigError(
            "speculative_config",
            Text("unknown draft model {name!r}; see `kv-planner models`", name=name),
        ) from exc


@dataclass(frozen=True)
class _Draft:
    weights_bytes: int  # per device
    kv_layers: int
    page_bytes: int
    item: ExtraItem


def _draft_tp(*, spec: SpeculativeConfig, tp: int) -> int:
    """`SpeculativeConfig._verify_and_get_draft_tp`: unset -> the target's TP; only 1 or the target's TP."""
    draft_tp = spec.draft_tensor_parallel_size
    if draft_tp is None:
        return tp
    if draft_tp not in (1, tp):
        raise InvalidServeConfigError(
            "speculative_config",
            Text(
                "draft_tensor_parallel_size {draft_tp} must be 1 or the target's tensor_parallel_size {tp}",
                draft_tp=draft_tp,
                tp=tp,
            ),
        )
    return draft_tp


@dataclass(frozen=True)
class TargetCache:
    """The target's KV cache format, which a draft's attention layers share: they get their pages in the
    same block table (one block size, the --kv-cache-dtype, the model dtype under "auto")."""

    block_size: int
    kv_cache_dtype: str
    model_dtype: str

    def page_bytes(self, draft: ModelSpec, *, tp: int) -> int:
        """One block of one of the draft's attention layers at TP ``tp``.

        E.g. a Llama-3.1-8B-shaped draft (8 KV heads of 128) at TP 1 in bf16 blocks of 16:
        2 x 8 x 128 x 2 B x 16 = 65,536 B.
        """
        dtype_bytes = K.kv_dtype_bytes(kv_cache_dtype=self.kv_cache_dtype, model_dtype=self.model_dtype)
        if draft.mla is not None:
            return K.mla_page_bytes(
                block_size=self.block_size,
                latent_size=draft.mla.latent_size,
                dtype_bytes=dtype_bytes,
                kv_cache_dtype=self.kv_cache_dtype,
            )
        return K.attention_page_bytes(
            block_size=self.block_size,
            kv_heads=K.kv_heads_per_rank(total_kv_heads=draft.num_kv_heads, tensor_parallel_size=tp),
            head_size_k=draft.head_size,
            head_size_v=draft.head_size_v,
            dtype_bytes=dtype_bytes,
        )


def _kv_layers(model: ModelSpec) -> int:
    return attention_layers(model_counts(model))


def mtp_layer_params(model: ModelSpec) -> int:
    """One MTP block (DeepSeek-V3 `DeepSeekMultiTokenPredictorLayer`): a decoder layer of the model's
    widest kind (the MoE one) plus eh_proj; its embedding and head are the target's (shared). The
    attention part is estimated as 4 x hidden^2; the experts are exact from the dimensions."""
    h = model.hidden_size
    if model.num_experts:
        mlp = (
            (model.num_experts + model.num_shared_experts)
            * GATED_MLP_MATRICES
            * h
            * model.moe_intermediate_size
        )
        mlp += model.num_experts * h  # router
    else:
        mlp = GATED_MLP_MATRICES * h * model.intermediate_size
    return ATTENTION_PARAMS_PER_HIDDEN_SQ * h * h + mlp + MTP_EH_PROJ_INPUTS * h * h


def speculative_draft(
    *, model: ModelSpec, serve: ServeConfig, cache: TargetCache, is_last: bool
) -> _Draft | None:
    """What --speculative-config adds on one stage: nothing without one, nothing for n-gram/suffix, the
    model's own MTP layers, or a separate draft (EAGLE, draft model) with its weights and KV layers in
    the target's block table."""
    spec = serve.speculative_config
    if spec is None:
        return None
    method = spec.resolved_method
    if method in TEXT_ONLY_METHODS:
        item = ExtraItem(
            name="speculative",
            label=Text("Speculative decoding ({method})", method=method),
            device_bytes=0,
            flag=SPECULATIVE_FLAG,
            source=src("v1/spec_decode/ngram_proposer.py"),
            note=Text("proposes from the tokens already seen: no weights, no KV cache"),
        )
        return _Draft(weights_bytes=0, kv_layers=0, page_bytes=0, item=item)
    _draft_tp(spec=spec, tp=serve.tensor_parallel_size)  # vLLM checks the draft's TP for MTP too
    if method == "mtp":
        return _mtp_draft(model=model, serve=serve, cache=cache, is_last=is_last)
    return _separate_draft(model=model, serve=serve, spec=spec, cache=cache)


def _mtp_draft(*, model: ModelSpec, serve: ServeConfig, cache: TargetCache, is_last: bool) -> _Draft:
    """The model's own multi-token-prediction layers, on the last pipeline stage (deepseek_mtp.py)."""
    tp, block_size = serve.tensor_parallel_size, cache.block_size
    dtype_bytes = DTYPE_BYTES[cache.model_dtype]
    layers = MTP_LAYERS_BY_MODEL_TYPE.get(model.model_type)
    if layers is None:
        raise InvalidServeConfigError(
            "speculative_config",
            Text("{name} has no multi-token-prediction layers for method mtp", name=model.name),
        )
    params = layers * mtp_layer_params(model)
    # the MTP block sits after the last decoder layer: on the last pipeline stage only
    weights = params * dtype_bytes // tp if is_last else 0
    if model.quantization is not None:
        weights = int(params * B.quantized_bytes_per_param(model.quantization)) // tp if is_last else 0
    page = cache.page_bytes(model, tp=tp)
    kv_layers = layers if is_last else 0
    item = ExtraItem(
        name="speculative",
        label=Plural(
            layers,
            N_("MTP draft ({layers} layer of the model itself)"),
            N_("MTP draft ({layers} layers of the model itself)"),
            layers=layers,
        ),
        device_bytes=weights + kv_layers * page // block_size,
        flag=SPECULATIVE_FLAG,
        source=src("model_executor/models/deepseek_mtp.py, v1/spec_decode/eagle.py"),
        note=Text(
            "weights ≈ {params:.2f} B params (experts exact, attention ≈ 4·h²), embedding and head shared; KV {per_token} B per token in the same block table",
            params=params / 1e9,
            per_token=kv_layers * page // block_size,
        ),
    )
    return _Draft(weights_bytes=weights, kv_layers=kv_layers, page_bytes=page, item=item)


def _separate_draft(
    *, model: ModelSpec, serve: ServeConfig, spec: SpeculativeConfig, cache: TargetCache
) -> _Draft:
    """A draft model of its own (EAGLE heads, a small model): its weights at the draft's TP and its
    attention layers' pages in every target block."""
    method = spec.resolved_method
    draft_tp = _draft_tp(spec=spec, tp=serve.tensor_parallel_size)
    assert spec.model is not None  # checked by SpeculativeConfig
    draft = _find_draft(spec.model)
    params = draft.params_total
    shared = False
    if (
        method in EAGLE_METHODS
        and draft.vocab_size == model.vocab_size
        and draft.hidden_size == model.hidden_size
    ):
        # the head reuses the target's embedding (and its lm_head when it has none of its own)
        params -= embed_params(draft) * draft.embedding_tensors
        params = max(0, params)
        shared = True
    dtype = DTYPE_BYTES[cache.model_dtype]
    if draft.quantization is not None:
        weights = int(params * B.quantized_bytes_per_param(draft.quantization)) // draft_tp
    else:
        weights = params * dtype // draft_tp
    fc_inputs = EAGLE_FC_INPUTS.get(method, 0)
    weights += fc_inputs * draft.hidden_size * draft.hidden_size * dtype  # replicated: not divided by TP
    page = cache.page_bytes(draft, tp=draft_tp)
    kv_layers = _kv_layers(draft)
    per_token = kv_layers * page // cache.block_size
    source = "v1/spec_decode/draft_model.py" if method == "draft_model" else "v1/spec_decode/eagle.py"
    if shared:
        note = Plural(
            kv_layers,
            N_(
                "weights {weights:.2f} GiB per device at draft TP {draft_tp}, embedding shared with the target; its {layers} attention layer adds {per_token:,} B per token to every KV block (one block table, UniformTypeKVCacheSpecs)"
            ),
            N_(
                "weights {weights:.2f} GiB per device at draft TP {draft_tp}, embedding shared with the target; its {layers} attention layers add {per_token:,} B per token to every KV block (one block table, UniformTypeKVCacheSpecs)"
            ),
            weights=weights / GIB,
            draft_tp=draft_tp,
            layers=kv_layers,
            per_token=per_token,
        )
    else:
        note = Plural(
            kv_layers,
            N_(
                "weights {weights:.2f} GiB per device at draft TP {draft_tp}; its {layers} attention layer adds {per_token:,} B per token to every KV block (one block table, UniformTypeKVCacheSpecs)"
            ),
            N_(
                "weights {weights:.2f} GiB per device at draft TP {draft_tp}; its {layers} attention layers add {per_token:,} B per token to every KV block (one block table, UniformTypeKVCacheSpecs)"
            ),
            weights=weights / GIB,
            draft_tp=draft_tp,
            layers=kv_layers,
            per_token=per_token,
        )
    item = ExtraItem(
        name="speculative",
        label=Text("Draft model {name} ({method})", name=draft.name, method=method),
        device_bytes=weights + per_token,
        flag=SPECULATIVE_FLAG,
        source=src(f"{source}, v1/worker/gpu_model_runner.py load_model, v1/core/kv_cache_utils.py"),
        note=note,
    )
    return _Draft(weights_bytes=weights, kv_layers=kv_layers, page_bytes=page, item=item)
