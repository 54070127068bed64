"""The extras ledger: device and host memory outside "weights + activation + KV" of one plain model.

Each consumer says how many bytes it holds on one device and on the host, whether vLLM's profiling
run sees it (then it is part of what vLLM subtracts before sizing the KV pool, so it shrinks the pool)
or not (then it comes later and can run the device or the host out of memory), the flag that moves it
and the vLLM source file and release the rule was read from. The estimator applies the ledger exactly
where vLLM does: draft weights, LoRA slots and the expert split move the weights ("Model loading took
X GiB" measures them inside `GPUModelRunner.load_model`), the draft's KV layers join the KV pages (one
block table), and the host consumers add up to `host_memory_bytes`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from pydantic import BaseModel, ConfigDict

from app.core import budget as B
from app.core import kv as K
from app.core.errors import InvalidServeConfigError, PlannerError
from app.core.specs import DTYPE_BYTES, GIB, LayerKind, ModelSpec, ServeConfig, SpeculativeConfig
from app.core.text import Msg, Text
from app.core.versions import VersionRules

SOURCE_RELEASE = "0.19.0"  # the release every rule below was read from

# --- speculative decoding ---------------------------------------------------------------------------
# methods that propose from the prompt/output text alone: no weights, no KV (config/speculative.py)
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

# --- LoRA (vllm/lora/layers/*.py create_lora_weights, 0.19.0) ----------------------------------------
# architectures whose class declares embedding_modules {"embed_tokens", "lm_head"}: vLLM then wraps the
# embedding (VocabParallelEmbeddingWithLoRA) and the logits (LogitsProcessorWithLoRA) too
LORA_EMBEDDING_ARCHITECTURES = frozenset(
    {
        "LlamaForCausalLM",
        "MistralForCausalLM",
        "Qwen3ForCausalLM",
        "Qwen3MoeForCausalLM",
        "MixtralForCausalLM",
        "GraniteForCausalLM",
        "GraniteMoeForCausalLM",
        "JambaForCausalLM",
        "NemotronHForCausalLM",
        "PhiMoEForCausalLM",
    }
)
LORA_QKV_SLICES = 3  # MergedQKVParallelLinearWithLoRA: q, k, v
LORA_GATE_UP_SLICES = 2  # MergedColumnParallelLinearWithLoRA: gate, up
LORA_MOE_W13_SLICES = 2  # FusedMoEWithLoRA: w1 and w3 (w13 for 3-D checkpoints)

# --- expert parallel (vllm/config/parallel.py, 0.19.0) --------------------------------------------
DEFAULT_ALL2ALL_BACKEND = "allgather_reducescatter"  # NCCL collectives: no buffers of its own
DEEPEP_BUFFER_BYTES = 1024 * 2**20  # VLLM_DEEPEP_BUFFER_SIZE_MB default (vllm/envs.py), deepep backends only

# --- multimodal (vllm/config/multimodal.py, 0.19.0) ----------------------------------------------
MM_PROCESSOR_CACHE_GIB = 4  # mm_processor_cache_gb default, per API process and per engine core
API_SERVER_COUNT = 1  # `vllm serve` default --api-server-count

# --- host memory -----------------------------------------------------------------------------------
V0_DEFAULT_SWAP_GIB = 4  # V0 --swap-space default, per GPU (config/cache.py <= 0.10)


class ExtraItem(BaseModel):
    """One consumer of the ledger. Bytes are per device (device) and for the whole server (host)."""

    model_config = ConfigDict(frozen=True)

    name: str  # stable key: "draft_model", "lora_slots", "expert_parallel", ...
    label: Msg
    device_bytes: int
    host_bytes: int
    inside_profile: bool
    flag: str
    source: str
    note: Msg = ""


@dataclass(frozen=True)
class StageExtras:
    """What the extras change on one pipeline stage, as the estimator applies it."""

    weights_delta_bytes: int  # added to the stage's weights (negative when a tower is not loaded)
    draft_kv_layers: int  # draft attention layers on this rank (they join the KV pages)
    draft_page_bytes: int  # one block of one draft layer, at the target's block size
    items: tuple[ExtraItem, ...]
    host_memory_bytes: int


NO_EXTRAS = StageExtras(
    weights_delta_bytes=0, draft_kv_layers=0, draft_page_bytes=0, items=(), host_memory_bytes=0
)


def _src(path: str) -> str:
    return f"vllm/{path} ({SOURCE_RELEASE})"


def _embed_params(model: ModelSpec) -> int:
    return model.vocab_size * model.hidden_size


def _find_draft(name: str) -> ModelSpec:
    from app.core.catalog import find_model  # the catalog imports the specs; keep the import local

    try:
        return find_model(name)
    except PlannerError as exc:
        raise InvalidServeConfigError(
            "speculative_config",
            Text("unknown draft model {name!r}; see `kv-planner models`", name=name),
        ) from exc


# ------------------------------------------------------------------------------------------------
# speculative decoding
# ------------------------------------------------------------------------------------------------


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


def _attention_page(
    *, draft: ModelSpec, block_size: int, tp: int, kv_cache_dtype: str, model_dtype: str
) -> int:
    dtype_bytes = K.kv_dtype_bytes(kv_cache_dtype=kv_cache_dtype, model_dtype=model_dtype)
    if draft.mla is not None:
        return K.mla_page_bytes(
            block_size=block_size,
            latent_size=draft.mla.latent_size,
            dtype_bytes=dtype_bytes,
            kv_cache_dtype=kv_cache_dtype,
        )
    return K.attention_page_bytes(
        block_size=block_size,
        kv_heads=K.kv_heads_per_rank(total_kv_heads=draft.num_kv_heads, tensor_parallel_size=tp),
        head_size_k=draft.head_size,
        head_size_v=draft.head_size_v,
        dtype_bytes=dtype_bytes,
    )


def _kv_layers(model: ModelSpec) -> int:
    attn = {LayerKind.FULL, LayerKind.SLIDING, LayerKind.CHUNKED, LayerKind.MLA}
    return sum(1 for k in model.layer_kinds if k in attn)


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


def _speculative(
    *,
    model: ModelSpec,
    serve: ServeConfig,
    spec: SpeculativeConfig,
    block_size: int,
    model_dtype: str,
    is_last: bool,
) -> _Draft | None:
    method = spec.resolved_method
    tp = serve.tensor_parallel_size
    flag = "--speculative-config"
    if method in TEXT_ONLY_METHODS:
        item = ExtraItem(
            name="speculative",
            label=Text("Speculative decoding ({method})", method=method),
            device_bytes=0,
            host_bytes=0,
            inside_profile=True,
            flag=flag,
            source=_src("v1/spec_decode/ngram_proposer.py"),
            note=Text("proposes from the tokens already seen: no weights, no KV cache"),
        )
        return _Draft(weights_bytes=0, kv_layers=0, page_bytes=0, item=item)
    draft_tp = _draft_tp(spec=spec, tp=tp)
    dtype_bytes = DTYPE_BYTES[model_dtype]
    if method == "mtp":
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
        page = _attention_page(
            draft=model,
            block_size=block_size,
            tp=tp,
            kv_cache_dtype=serve.kv_cache_dtype,
            model_dtype=model_dtype,
        )
        kv_layers = layers if is_last else 0
        item = ExtraItem(
            name="speculative",
            label=Text("MTP draft ({layers} layer(s) of the model itself)", layers=layers),
            device_bytes=weights + kv_layers * page // block_size,
            host_bytes=0,
            inside_profile=True,
            flag=flag,
            source=_src("model_executor/models/deepseek_mtp.py, v1/spec_decode/eagle.py"),
            note=Text(
                "weights ≈ {params:.2f} B params (experts exact, attention ≈ 4·h²), embedding and head shared; KV {per_token} B per token in the same block table",
                params=params / 1e9,
                per_token=kv_layers * page // block_size,
            ),
        )
        return _Draft(weights_bytes=weights, kv_layers=kv_layers, page_bytes=page, item=item)
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
        params -= _embed_params(draft) * (1 if draft.tie_word_embeddings else 2)
        params = max(0, params)
        shared = True
    dtype = DTYPE_BYTES[model_dtype]
    if draft.quantization is not None:
        weights = int(params * B.quantized_bytes_per_param(draft.quantization)) // draft_tp
    else:
        weights = params * dtype // draft_tp
    fc_inputs = EAGLE_FC_INPUTS.get(method, 0)
    weights += fc_inputs * draft.hidden_size * draft.hidden_size * dtype  # replicated: not divided by TP
    page = _attention_page(
        draft=draft,
        block_size=block_size,
        tp=draft_tp,
        kv_cache_dtype=serve.kv_cache_dtype,
        model_dtype=model_dtype,
    )
    kv_layers = _kv_layers(draft)
    per_token = kv_layers * page // block_size
    source = "v1/spec_decode/draft_model.py" if method == "draft_model" else "v1/spec_decode/eagle.py"
    if shared:
        note = Text(
            "weights {weights:.2f} GiB per device at draft TP {draft_tp}, embedding shared with the target; its {layers} attention layer(s) add {per_token:,} B per token to every KV block (one block table, UniformTypeKVCacheSpecs)",
            weights=weights / GIB,
            draft_tp=draft_tp,
            layers=kv_layers,
            per_token=per_token,
        )
    else:
        note = Text(
            "weights {weights:.2f} GiB per device at draft TP {draft_tp}; its {layers} attention layer(s) add {per_token:,} B per token to every KV block (one block table, UniformTypeKVCacheSpecs)",
            weights=weights / GIB,
            draft_tp=draft_tp,
            layers=kv_layers,
            per_token=per_token,
        )
    item = ExtraItem(
        name="speculative",
        label=Text("Draft model {name} ({method})", name=draft.name, method=method),
        device_bytes=weights + per_token,
        host_bytes=0,
        inside_profile=True,
        flag=flag,
        source=_src(f"{source}, v1/worker/gpu_model_runner.py load_model, v1/core/kv_cache_utils.py"),
        note=note,
    )
    return _Draft(weights_bytes=weights, kv_layers=kv_layers, page_bytes=page, item=item)


# ------------------------------------------------------------------------------------------------
# LoRA
# ------------------------------------------------------------------------------------------------


def lora_slot_elements(
    *, model: ModelSpec, rank: int, tp: int, fully_sharded: bool, num_layers: int, with_embeddings: bool
) -> int:
    """Elements of ONE LoRA slot on one device, summed over the layers vLLM wraps (0.19.0):

    - qkv (MergedQKVParallelLinearWithLoRA): A = 3 x (r' x hidden), B = (q/TP + 2 x kv/TP) x r
    - o_proj (RowParallelLinearWithLoRA): A = r x q/TP, B = hidden' x r
    - gate_up (MergedColumnParallelLinearWithLoRA): A = 2 x (r' x hidden), B = 2 x (inter/TP) x r
    - down (RowParallelLinearWithLoRA): A = r x inter/TP, B = hidden' x r
    - experts (FusedMoEWithLoRA): per local expert A = 2 x r' x hidden + r x inter/TP, B = 2 x inter/TP x r + hidden' x r
    - embed_tokens: A = vocab x r, B = hidden x r; lm_head (LogitsProcessorWithLoRA): A = r x hidden, B = vocab x r
    where r' = r/TP and hidden' = hidden/TP with fully_sharded_loras, else r and hidden.
    """
    h = model.hidden_size
    r = rank
    r_a = r // tp if fully_sharded else r
    h_b = h // tp if fully_sharded else h
    heads = max(1, model.num_attention_heads // tp)
    kv_heads = K.kv_heads_per_rank(total_kv_heads=model.num_kv_heads, tensor_parallel_size=tp)
    q_out = heads * model.head_size
    kv_out = kv_heads * model.head_size
    qkv = LORA_QKV_SLICES * r_a * h + (q_out + 2 * kv_out) * r
    o_proj = r * q_out + h_b * r
    per_layer = qkv + o_proj
    if model.num_experts:
        inter = model.moe_intermediate_size // tp
        experts = model.num_experts
        per_layer += experts * (
            LORA_MOE_W13_SLICES * r_a * h + r * inter + LORA_MOE_W13_SLICES * inter * r + h_b * r
        )
    if model.intermediate_size and not model.num_experts:
        inter = model.intermediate_size // tp
        per_layer += LORA_GATE_UP_SLICES * r_a * h + LORA_GATE_UP_SLICES * inter * r + r * inter + h_b * r
    total = per_layer * num_layers
    if with_embeddings:
        total += model.vocab_size * r + h * r  # embed_tokens
        total += r * h + model.vocab_size * r  # lm_head
    return total


def _lora(
    *, model: ModelSpec, serve: ServeConfig, model_dtype: str, num_layers: int, is_first: bool
) -> ExtraItem:
    tp = serve.tensor_parallel_size
    dtype = DTYPE_BYTES[model_dtype]  # lora_dtype "auto" -> the model dtype (config/lora.py)
    with_embeddings = model.architecture in LORA_EMBEDDING_ARCHITECTURES and is_first
    per_slot = lora_slot_elements(
        model=model,
        rank=serve.max_lora_rank,
        tp=tp,
        fully_sharded=serve.fully_sharded_loras,
        num_layers=num_layers,
        with_embeddings=with_embeddings,
    )
    device = serve.max_loras * per_slot * dtype
    # adapters kept on the host: max_cpu_loras (default max_loras) at most max_lora_rank, unsharded
    full = lora_slot_elements(
        model=model,
        rank=serve.max_lora_rank,
        tp=1,
        fully_sharded=False,
        num_layers=model.num_layers,
        with_embeddings=model.architecture in LORA_EMBEDDING_ARCHITECTURES,
    )
    cpu_loras = serve.max_cpu_loras or serve.max_loras
    return ExtraItem(
        name="lora_slots",
        label=Text(
            "LoRA slots ({max_loras} × rank {rank})", max_loras=serve.max_loras, rank=serve.max_lora_rank
        ),
        device_bytes=device,
        host_bytes=cpu_loras * full * dtype,
        inside_profile=True,
        flag="--enable-lora --max-loras --max-lora-rank --max-cpu-loras --fully-sharded-loras",
        source=_src(
            "lora/layers/base_linear.py, lora/layers/column_parallel_linear.py, lora/layers/fused_moe.py, lora/model_manager.py"
        ),
        note=Text(
            "preallocated when the model loads (counted in the weights vLLM measures, so it shrinks the KV pool); host: up to {cpu_loras} adapters cached at rank {rank}",
            cpu_loras=cpu_loras,
            rank=serve.max_lora_rank,
        ),
    )


# ------------------------------------------------------------------------------------------------
# data / expert parallel
# ------------------------------------------------------------------------------------------------


def expert_parallel_weights_delta(
    *, model: ModelSpec, serve: ServeConfig, layer_range: tuple[int, int], is_first: bool, is_last: bool
) -> tuple[int, int]:
    """(weights delta per device, routed-expert bytes per device) under --enable-expert-parallel.

    EP size = TP x DP (vllm/distributed/parallel_state.py): each rank keeps ceil(E / EP) experts whole
    (vllm/model_executor/layers/fused_moe/layer.py determine_expert_map) instead of 1/(TP x DP) of every
    expert, which is what the weights already hold without EP (budget.py: fused_moe/config.py flattens the
    experts' TP over DP x TP); attention, dense layers, shared experts and embeddings stay split by TP only
    (replicated over DP)."""
    tp, dp = serve.tensor_parallel_size, serve.data_parallel_size
    experts = B.routed_expert_params(model)
    if not experts:
        return 0, 0
    unsplit = serve.model_copy(
        update={"tensor_parallel_size": 1, "data_parallel_size": 1, "cpu_offload_gb": 0.0}
    )
    body_one = B.weights_bytes_for_stage(
        model=model,
        serve=unsplit,
        layer_range=layer_range,
        is_first=False,
        is_last=False,
        quant=model.quantization,
    )
    body_params = model.params_total - _embed_params(model) * (1 if model.tie_word_embeddings else 2)
    expert_bytes_stage = body_one * experts // max(1, body_params)  # all experts of this stage, unsplit
    ep = tp * dp
    local = math.ceil(model.num_experts / ep)
    with_ep = expert_bytes_stage * local // model.num_experts
    without = expert_bytes_stage // (tp * dp)
    return with_ep - without, with_ep


def _parallel(
    *, model: ModelSpec, serve: ServeConfig, layer_range: tuple[int, int], is_first: bool, is_last: bool
) -> tuple[int, ExtraItem | None]:
    dp = serve.data_parallel_size
    if not serve.enable_expert_parallel:
        if dp == 1:
            return 0, None
        return 0, ExtraItem(
            name="data_parallel",
            label=Text("Data parallel × {dp}", dp=dp),
            device_bytes=0,
            host_bytes=0,
            inside_profile=True,
            flag="--data-parallel-size",
            source=_src("v1/engine/core.py (one engine per DP rank)"),
            note=Text(
                "every DP rank has its own KV pool; attention and dense layers are split by TP only, the routed experts over DP × TP"
            ),
        )
    if not model.num_experts:
        raise InvalidServeConfigError(
            "enable_expert_parallel", Text("{name} has no experts to split", name=model.name)
        )
    delta, held = expert_parallel_weights_delta(
        model=model, serve=serve, layer_range=layer_range, is_first=is_first, is_last=is_last
    )
    ep = serve.tensor_parallel_size * dp
    return delta, ExtraItem(
        name="expert_parallel",
        label=Text("Expert parallel (EP {ep} = TP × DP)", ep=ep),
        device_bytes=held,
        host_bytes=0,
        inside_profile=True,
        flag="--enable-expert-parallel --data-parallel-size",
        source=_src("model_executor/layers/fused_moe/layer.py, config/parallel.py"),
        note=Text(
            "{local} of {experts} routed experts whole on each device; attention, dense and shared layers split by TP only. All-to-all: the default {backend} backend allocates no buffers (DeepEP backends: {deepep} MiB)",
            local=math.ceil(model.num_experts / ep),
            experts=model.num_experts,
            backend=DEFAULT_ALL2ALL_BACKEND,
            deepep=DEEPEP_BUFFER_BYTES // 2**20,
        ),
    )


# ------------------------------------------------------------------------------------------------
# multimodal
# ------------------------------------------------------------------------------------------------


def _multimodal(
    *, model: ModelSpec, serve: ServeConfig, model_dtype: str, is_first: bool, max_num_batched_tokens: int
) -> tuple[int, ExtraItem | None]:
    if not model.vision_params:
        return 0, None
    limits = serve.limit_mm_per_prompt
    dtype = DTYPE_BYTES[model_dtype]
    tower = model.vision_params * dtype // serve.tensor_parallel_size if is_first else 0
    if limits is not None and limits and all(v == 0 for v in limits.values()):
        return -tower, ExtraItem(
            name="multimodal",
            label=Text("Vision tower (not loaded)"),
            device_bytes=0,
            host_bytes=0,
            inside_profile=True,
            flag="--limit-mm-per-prompt",
            source=_src("model_executor/models/interfaces.py _mark_tower_model, multimodal/registry.py"),
            note=Text(
                "every modality limited to 0: text-only mode, the tower's {gib:.2f} GiB per device are not loaded",
                gib=tower / GIB,
            ),
        )
    # the encoder cache holds max(encoder_cache_size, largest item) embeddings of hidden size; the profile
    # run fills it with a dummy batch, so vLLM's measured peak includes it
    encoder_cache = max_num_batched_tokens * model.hidden_size * dtype
    host = int(MM_PROCESSOR_CACHE_GIB * GIB) * (API_SERVER_COUNT + serve.data_parallel_size)
    return 0, ExtraItem(
        name="multimodal",
        label=Text("Vision tower and encoder cache"),
        device_bytes=tower + encoder_cache,
        host_bytes=host,
        inside_profile=True,
        flag="--limit-mm-per-prompt --mm-processor-cache-gb",
        source=_src("v1/core/encoder_cache_manager.py, config/multimodal.py, multimodal/registry.py"),
        note=Text(
            "tower {tower:.2f} GiB per device (in the weights); encoder cache ≈ {cache:.2f} GiB (max_num_batched_tokens embeddings, inside the profiled peak); host processor cache {proc} GiB × (API servers + DP ranks)",
            tower=tower / GIB,
            cache=encoder_cache / GIB,
            proc=MM_PROCESSOR_CACHE_GIB,
        ),
    )


# ------------------------------------------------------------------------------------------------
# host memory
# ------------------------------------------------------------------------------------------------


def pinned_bytes(size: int) -> int:
    """PyTorch's pinned-host caching allocator (c10 CachingHostAllocator) rounds each block up to a power
    of two: what a `torch.zeros(..., pin_memory=True)` of `size` bytes really takes."""
    if size <= 0:
        return 0
    return 1 << (size - 1).bit_length()


def kv_offload_host_bytes(
    *, requested_bytes: int, kv_tensors_per_rank: int, page_bytes: int, world_size: int
) -> tuple[int, int]:
    """(blocks, host bytes) of the native OffloadingConnector (vllm/v1/kv_offload/cpu/spec.py,
    worker/cpu_gpu.py, 0.19.0): blocks = requested // (page x tensors x world size); every rank pins one
    (blocks x page) tensor per KV tensor, each rounded up to a power of two by the pinned allocator."""
    per_block = page_bytes * kv_tensors_per_rank * world_size
    if per_block <= 0:
        return 0, 0
    blocks = requested_bytes // per_block
    return blocks, world_size * kv_tensors_per_rank * pinned_bytes(blocks * page_bytes)


def _host_items(
    *, serve: ServeConfig, rules: VersionRules, layout: K.KVLayout, world_size: int
) -> list[ExtraItem]:
    items: list[ExtraItem] = []
    if serve.kv_offloading_size_gib and rules.has_kv_offloading_flags:
        requested = int(serve.kv_offloading_size_gib * GIB)
        tensors = layout.num_kv_layers  # one KV cache tensor per attention layer on this rank
        page = layout.page_size_bytes
        blocks, host = kv_offload_host_bytes(
            requested_bytes=requested, kv_tensors_per_rank=tensors, page_bytes=page, world_size=world_size
        )
        items.append(
            ExtraItem(
                name="kv_offloading",
                label=Text("KV offloading to host ({gib:g} GiB requested)", gib=serve.kv_offloading_size_gib),
                device_bytes=0,
                host_bytes=max(host, requested),
                inside_profile=False,
                flag="--kv-offloading-size --kv-offloading-backend",
                source=_src("config/vllm.py, v1/kv_offload/cpu/spec.py, v1/kv_offload/worker/cpu_gpu.py"),
                note=Text(
                    "{blocks:,} host blocks; pinned tensors of {tensor:.2f} GiB each are rounded up to a power of two by PyTorch's pinned allocator ({ratio:.2f}× the request; vllm#53042 reports ~1.9×)",
                    blocks=blocks,
                    tensor=blocks * page / GIB,
                    ratio=max(host, requested) / requested if requested else 0.0,
                ),
            )
        )
    if serve.cpu_offload_gb:
        items.append(
            ExtraItem(
                name="cpu_offload",
                label=Text("Weights offloaded to host ({gib:g} GiB per device)", gib=serve.cpu_offload_gb),
                device_bytes=0,
                host_bytes=int(serve.cpu_offload_gb * GIB) * world_size,
                inside_profile=True,
                flag="--cpu-offload-gb",
                source=_src("model_executor/models/utils.py maybe_offload_to_cpu"),
                note=Text("taken off each device's weights; streamed back over PCIe every step"),
            )
        )
    if rules.swap_space_used:
        swap = serve.swap_space_gib if serve.swap_space_gib is not None else V0_DEFAULT_SWAP_GIB
        if swap:
            items.append(
                ExtraItem(
                    name="swap_space",
                    label=Text("V0 swap space ({gib:g} GiB per device)", gib=swap),
                    device_bytes=0,
                    host_bytes=int(swap * GIB) * world_size,
                    inside_profile=False,
                    flag="--swap-space",
                    source="vllm/worker/cache_engine.py (V0, 0.6.6)",
                    note=Text("pinned CPU blocks for preempted sequences, per GPU"),
                )
            )
    return items


# ------------------------------------------------------------------------------------------------
# the ledger
# ------------------------------------------------------------------------------------------------


def stage_extras(
    *,
    model: ModelSpec,
    serve: ServeConfig,
    rules: VersionRules,
    layout: K.KVLayout,
    layer_range: tuple[int, int],
    is_first: bool,
    is_last: bool,
    model_dtype: str,
    max_num_batched_tokens: int,
) -> StageExtras:
    """The ledger of one pipeline stage (per device), given its plain KV layout."""
    if not _has_extras(serve=serve, model=model, rules=rules):
        return NO_EXTRAS
    items: list[ExtraItem] = []
    weights = 0
    kv_layers = 0
    page = 0
    spec = serve.speculative_config
    if spec is not None:
        draft = _speculative(
            model=model,
            serve=serve,
            spec=spec,
            block_size=layout.block_size,
            model_dtype=model_dtype,
            is_last=is_last,
        )
        if draft is not None:
            weights += draft.weights_bytes
            kv_layers, page = draft.kv_layers, draft.page_bytes
            items.append(draft.item)
    if serve.enable_lora:
        lora = _lora(
            model=model,
            serve=serve,
            model_dtype=model_dtype,
            num_layers=layer_range[1] - layer_range[0],
            is_first=is_first,
        )
        weights += lora.device_bytes
        items.append(lora)
    delta, parallel = _parallel(
        model=model, serve=serve, layer_range=layer_range, is_first=is_first, is_last=is_last
    )
    weights += delta
    if parallel is not None:
        items.append(parallel)
    mm_delta, mm = _multimodal(
        model=model,
        serve=serve,
        model_dtype=model_dtype,
        is_first=is_first,
        max_num_batched_tokens=max_num_batched_tokens,
    )
    weights += mm_delta
    if mm is not None:
        items.append(mm)
    world = serve.tensor_parallel_size * serve.pipeline_parallel_size * serve.data_parallel_size
    items.extend(_host_items(serve=serve, rules=rules, layout=layout, world_size=world))
    return StageExtras(
        weights_delta_bytes=weights,
        draft_kv_layers=kv_layers,
        draft_page_bytes=page,
        items=tuple(items),
        host_memory_bytes=sum(i.host_bytes for i in items),
    )


def _has_extras(*, serve: ServeConfig, model: ModelSpec, rules: VersionRules) -> bool:
    return bool(
        serve.speculative_config is not None
        or serve.enable_lora
        or serve.data_parallel_size > 1
        or serve.enable_expert_parallel
        or model.vision_params
        or serve.kv_offloading_size_gib
        or serve.cpu_offload_gb
        or rules.swap_space_used
    )


def with_draft_kv(layout: K.KVLayout, extras: StageExtras) -> K.KVLayout:
    """The draft's attention layers in the target's KV layout. vLLM 0.19.0 puts full-attention layers of
    different page sizes into ONE group (`UniformTypeKVCacheSpecs`, v1/core/kv_cache_utils.py): a block
    holds every layer's page, so bytes per block and per token grow by the draft's, and one request still
    needs cdiv(L, B) blocks. The merged group reports the average page per layer."""
    if not extras.draft_kv_layers or not layout.groups:
        return layout
    added_block = extras.draft_kv_layers * extras.draft_page_bytes
    added_token = added_block // layout.block_size if layout.block_size else 0
    bytes_per_block = layout.bytes_per_block + added_block
    if len(layout.groups) == 1:
        g = layout.groups[0]
        layers = g.num_layers + extras.draft_kv_layers
        groups: tuple[K.Group, ...] = (
            replace(g, num_layers=layers, page_size_bytes=bytes_per_block // layers),
        )
    else:
        groups = layout.groups  # hybrid target: the draft's pages ride in every block
    return replace(
        layout,
        groups=groups,
        bytes_per_block=bytes_per_block,
        kv_bytes_per_token=layout.kv_bytes_per_token + added_token,
        num_kv_layers=layout.num_kv_layers + extras.draft_kv_layers,
    )
