"""The device budget: `total x utilization - weights - activation peak - non-torch [- CUDA graphs]`.

Weights are computed from the parameter count and the storage format. The other three are what
vLLM *measures* at start-up; here they are physical models whose few constants were fitted on
real start-up logs (bench/calibrate.py, docs/model.md) — never per-model numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.core.mxfp4_backends import MXFP4_0_32, Mxfp4Row, mxfp4_backend
from app.core.specs import DTYPE_BYTES, GIB, DeviceSpec, ModelSpec, QuantMethod, QuantSpec, ServeConfig

# --- activation peak of the profile run (reference §2.5) -------------------------------------------
# The profile run pushes max_num_batched_tokens through the model (attention skipped), then runs the
# sampler on min(MNBT, max_num_seqs) rows of fp32 logits. The two phases do not overlap, so the peak
# is the larger of the two plus a small constant. Constants fitted by bench/calibrate.py on 39 real
# 0.19.0 H100 logs: median |residual| 0.015 GiB, p90 0.09 GiB (docs/model.md).
LOGIT_BYTES = 4  # the sampler works on fp32 logits
FWD_MLP_FACTOR = (
    3.5  # live MLP intermediates per token, in units of the MLP width: gate_up (2x) + act (1x) + slack
)
FWD_HIDDEN_FACTOR = 4.0  # residual stream, norm output, attention in/out buffers per token, in hidden units
ACTIVATION_BASE_BYTES = int(0.05 * GIB)  # allocator slack seen as activation even for tiny models

# --- non-torch memory (cuBLAS workspaces, NCCL and custom all-reduce buffers) ----------------------
NON_TORCH_SINGLE_BYTES = int(0.25 * GIB)  # TP=1: 0.24-0.26 GiB on every H100 0.19.0 log
NON_TORCH_TP_BASE_BYTES = int(1.944 * GIB)  # TP>1: NCCL + custom all-reduce; 2.06-2.10 GiB TP2, 2.21 GiB TP4
NON_TORCH_TP_PER_RANK_BYTES = int(0.0665 * GIB)  # solves TP2 mean 2.077 and TP4 2.21
NON_TORCH_PP_ONLY_BYTES = int(0.07 * GIB)  # PP>1 with TP=1: 0.07 GiB on the real PP2 log

# --- Ascend: HCCL buffers (memory outside torch, inside vllm-ascend's budget) -----------------------
# vllm-ascend takes its memory snapshot before it initialises the distributed environment
# (vllm_ascend/worker/worker.py NPUWorker._init_device, v0.18.0 / v0.23.0: MemorySnapshot, then
# _init_worker_distributed_environment), so the HCCL communicators' buffers land in non_torch_increase,
# inside gpu_memory_utilization — unlike vLLM >= 0.11 on CUDA, where NCCL is set up before the snapshot.
# CANN: each communicator takes 2 x HCCL_BUFFSIZE, default 200 MB (reference ascend-rocm-notes §5.1,
# hiascend envref_07_0080). Communicators a rank joins that carry traffic: the world group and the TP
# group when TP > 1, the PP group when PP > 1. Checked on two real logs: TP 1 prints 0.13 GiB of non-torch
# memory (vllm-ascend#8289), TP 2 on a 310P 1.05 / 1.00 GiB (vllm-ascend#10122; this model: 0.13 + 2 x 2 x
# 200 MiB = 0.91 GiB).
HCCL_BUFFSIZE_DEFAULT_BYTES = 200 * 2**20  # HCCL_BUFFSIZE default (MB), CANN envref_07_0080
HCCL_BUFFERS_PER_COMMUNICATOR = 2
NPU_NON_TORCH_BASE_BYTES = round(
    0.13 * GIB
)  # TP 1, no HCCL traffic: vllm-ascend#8289 "0.13 GiB for non-torch"

# --- CUDA graphs ------------------------------------------------------------------------------------
CUDA_GRAPH_BASE_BYTES = int(0.3966 * GIB)  # pool overhead independent of depth (bench/calibrate.py, 37 logs)
CUDA_GRAPH_PER_LAYER_BYTES = int(0.01607 * GIB)  # per-layer buffers over all capture sizes (same fit)
# vLLM's default capture cap: max_graph_size = min(max_num_seqs x 2, 512) (reference §2.6); 1,024 on 10.x devices
# from 0.30.0 (graph_rules.default_capture_cap, rules.capture_cap_by_major). The figures above are fitted at 51 sizes.
CUDA_GRAPH_MAX_CAPTURE = 512
# ROCm (hipGraph): a fixed part on the first capture plus a part per captured graph per layer, fitted on the three
# real ROCm logs that print "Graph capturing finished … took" (bench/calibrate_rocm_graphs.py: Gemma-3-27B 134
# graphs x 62 layers 1.02 GiB, Llama-3.1-8B 67 x 32 0.54 GiB, Ovis2-8B 7 x 28 0.38 GiB; each left out is within
# 0.03 GiB of its printed figure); the CUDA form above said 1.83 / 0.60 / 0.06 GiB
ROCM_GRAPH_BASE_BYTES = int(0.3675 * GIB)
ROCM_GRAPH_PER_LAYER_GRAPH_BYTES = int(82.47 * 2**10)
CUDA_CONTEXT_BYTES = int(0.5 * GIB)  # CUDA context + cuBLAS handles outside the budget, for the free check

# --- quantized weight storage, bytes per parameter -------------------------------------------------
FP8_BYTES = 1.0
INT8_BYTES = 1.0
INT4_BYTES = 0.5
FP16_SCALE_BYTES = 2  # one fp16 scale per group (GPTQ/AWQ/compressed-tensors w4a16)
MXFP4_BLOCK = 32  # one e8m0 scale byte per 32 values
NVFP4_BLOCK = 16  # one fp8 scale byte per 16 values


def serving_dtype(*, model: ModelSpec, serve: ServeConfig) -> str:
    """`--dtype`: auto keeps a 16-bit checkpoint's dtype and serves a float32 (or dtype-less, read as
    float32) checkpoint in 16 bits; only an explicit `--dtype float32` gives 4-byte weights and,
    through `--kv-cache-dtype auto`, a 4-byte KV cache."""
    if serve.dtype == "auto":
        return "bfloat16" if model.torch_dtype == "float32" else model.torch_dtype
    if serve.dtype == "half":
        return "float16"
    return serve.dtype


def method_bytes_per_param(*, method: QuantMethod, group_size: int) -> float:
    """Stored bytes per parameter of one weight format, its scales included.

    E.g. FP8 and INT8 1.0; INT4 with an fp16 scale per group of 128: 0.5 + 2/128 = 0.515625; MXFP4
    0.5 + 1/32 = 0.53125; NVFP4 0.5 + 1/16 = 0.5625.
    """
    if method == QuantMethod.FP8:
        return FP8_BYTES
    if method == QuantMethod.INT8:
        return INT8_BYTES
    if method == QuantMethod.INT4:
        return INT4_BYTES + FP16_SCALE_BYTES / group_size
    if method == QuantMethod.MXFP4:
        return INT4_BYTES + 1 / MXFP4_BLOCK
    return INT4_BYTES + 1 / NVFP4_BLOCK


def quantized_bytes_per_param(quant: QuantSpec) -> float:
    return method_bytes_per_param(method=quant.method, group_size=quant.group_size)


def quantized_body_bytes(*, quant: QuantSpec, body_params: int, tower_params: int, dtype_bytes: int) -> float:
    """Decoder-body bytes of a quantized checkpoint (no index): the vision tower in the serving dtype,
    routed experts in their own format when the checkpoint stores them differently (DeepSeek-V4's
    MXFP4 / NVFP4 experts beside FP8 linears), the rest `quantized_fraction` quantized.

    E.g. DeepSeek-V4-Flash: 277,025,390,592 routed-expert parameters x (0.5 + 1/32) B (MXFP4) =
    147,169,738,752 B, plus the other 6,304,046,208 body parameters x 1 B (FP8)."""
    q_bytes = quantized_bytes_per_param(quant)
    tower = min(tower_params, body_params)
    rest: float = body_params - tower
    experts = 0.0
    if quant.expert_method is not None:
        experts = rest * quant.expert_fraction
        rest -= experts
    mixed = quant.quantized_fraction * q_bytes + (1 - quant.quantized_fraction) * dtype_bytes
    body = rest * mixed + tower * dtype_bytes
    if quant.expert_method is not None:
        body += experts * method_bytes_per_param(method=quant.expert_method, group_size=quant.group_size)
    return body


# --- MXFP4 expert padding ----------------------------------------------------------------------------------------
# The release's MXFP4 MoE backend (mxfp4_backends.py: per release x SM, from get_mxfp4_backend / the fused_moe
# oracle's priority list) pads each expert's (hidden, intermediate-per-rank) to its multiples
# (`mxfp4_round_up_hidden_size_and_intermediate_size`) before the weights are allocated, so the padded experts are
# what "Model loading took" measures.


def mxfp4_padding(*, device: DeviceSpec, rows: tuple[Mxfp4Row, ...] = MXFP4_0_32) -> tuple[str, int, int]:
    """(backend, hidden multiple, intermediate multiple) of the MXFP4 MoE backend a release (its
    VersionRules.mxfp4_backends ``rows``) picks on ``device``: e.g. Marlin (256, 128) on an RTX 5090 (SM120) at
    every release, as the 0.13.0 container's GB10 log says ("[mxfp4.py:161] Using Marlin backend"); Triton (1, 64)
    on an H100 from 0.12.0, Marlin before it (no triton_kernels in the 0.10.2 / 0.11.x wheels)."""
    backend = mxfp4_backend(device=device, rows=rows)
    return backend.name, backend.hidden_multiple, backend.intermediate_multiple


def mxfp4_expert_padding_bytes(
    *,
    model: ModelSpec,
    quant: QuantSpec | None,
    device: DeviceSpec | None,
    tensor_parallel_size: int,
    num_layers: int,
    rows: tuple[Mxfp4Row, ...] = MXFP4_0_32,  # 0.33.0 (the default release)
) -> int:
    """Extra bytes the padded MXFP4 experts take on one rank: w13 (2I x H) and w2 (H x I) per expert,
    at the MXFP4 storage cost (4-bit values + one e8m0 scale per 32)."""
    if quant is None or quant.method != QuantMethod.MXFP4 or device is None or not model.num_experts:
        return 0
    _, hidden_multiple, inter_multiple = mxfp4_padding(device=device, rows=rows)
    hidden = model.hidden_size
    inter = model.moe_intermediate_size // tensor_parallel_size
    padded = _round_up(hidden, hidden_multiple) * _round_up(inter, inter_multiple)
    extra_params = num_layers * model.num_experts * 3 * (padded - hidden * inter)
    return int(extra_params * quantized_bytes_per_param(quant))


GATED_MLP_MATRICES = 3  # gate, up, down of each routed expert (gpt-oss fuses gate_up: same count)


def routed_expert_params(model: ModelSpec) -> int:
    """Routed-expert parameters (what expert and data parallelism split): E x 3 x hidden x moe_inter per
    MoE layer. The number of MoE layers is the most that fit in the body's parameters (DeepSeek-V3's three
    leading dense layers are not in the spec: 59 of 61 are counted for its 58, ~2 % high)."""
    if not model.num_experts or not model.moe_intermediate_size:
        return 0
    per_layer = model.num_experts * GATED_MLP_MATRICES * model.hidden_size * model.moe_intermediate_size
    embed_params = model.vocab_size * model.hidden_size
    body = model.params_total - model.vision_params - embed_params * model.embedding_tensors
    layers = min(model.num_layers, max(0, body) // per_layer)
    return layers * per_layer


def weights_bytes_for_stage(
    *,
    model: ModelSpec,
    serve: ServeConfig,
    layer_range: tuple[int, int],
    is_first: bool,
    is_last: bool,
    device: DeviceSpec | None = None,
    mxfp4_backends: tuple[Mxfp4Row, ...] = MXFP4_0_32,  # 0.33.0 (the default release)
) -> int:
    """Weights on one device of one stage: decoder layers split by TP and PP; embeddings on the first
    stage, lm_head on the last (vocab-parallel, so also split by TP); quantization applies to the
    decoder body only (embeddings, lm_head and norms stay in the serving dtype).

    E.g. Llama-3.1-8B in bf16 on one device (TP 1, PP 1): 16,060,522,496 B, which vLLM prints as "Model
    loading took 14.96 GiB" (the golden texts of tests/unit/test_estimate_text_golden.py)."""
    quant = model.quantization  # the checkpoint's (a --quantization flag is applied to the model first)
    tp = serve.tensor_parallel_size
    dtype_bytes = DTYPE_BYTES[serving_dtype(model=model, serve=serve)]
    embed_params = model.vocab_size * model.hidden_size
    body_params = max(0, model.params_total - embed_params * model.embedding_tensors)
    share = (layer_range[1] - layer_range[0]) / model.num_layers
    exact_body_bytes: float | None = None
    if model.weights_bytes_exact is not None:
        # model.safetensors.index.json total_size: every tensor as stored. The embeddings (and an untied
        # lm_head) are vocab x hidden in the checkpoint dtype; the rest is the decoder body, split by TP and
        # PP. An unquantized checkpoint is loaded in the serving dtype (--dtype auto: as stored, float32
        # downcast); a quantized body is loaded as stored.
        embed_tensors = model.embedding_tensors
        stored_body = max(
            0, model.weights_bytes_exact - embed_params * embed_tensors * model.weight_dtype_bytes
        )
        exact_body_bytes = stored_body * (dtype_bytes / model.weight_dtype_bytes if quant is None else 1.0)
    if exact_body_bytes is not None:
        body_bytes = exact_body_bytes
    elif quant is not None:
        # the vision tower and projector stay in the serving dtype: quantized VL checkpoints list them in
        # the quantization config's ignore list (llm-compressor recipes: "re:vision_tower.*",
        # "re:multi_modal_projector.*"), which vLLM 0.19.0 honours with UnquantizedLinearMethod
        # (model_executor/layers/quantization/compressed_tensors/compressed_tensors.py `ignore`)
        body_bytes = quantized_body_bytes(
            quant=quant, body_params=body_params, tower_params=model.vision_params, dtype_bytes=dtype_bytes
        )
    else:
        body_bytes = float(body_params * dtype_bytes)
    total = body_bytes * share / tp
    dp = serve.data_parallel_size
    if dp > 1 and body_params > 0:
        # vLLM shards the routed experts over data x tensor ranks (EP, or TP of the experts flattened over
        # DP x TP when --enable-expert-parallel is off: 0.19.0 fused_moe/config.py
        # flatten_tp_across_dp_and_pcp); attention and the rest stay replicated per DP rank
        experts = min(routed_expert_params(model), body_params)
        expert_share = experts / body_params
        if quant is not None and quant.expert_method is not None and exact_body_bytes is None and body_bytes:
            # experts in their own format: their share of the bytes, not of the parameters
            expert_bytes = experts * method_bytes_per_param(
                method=quant.expert_method, group_size=quant.group_size
            )
            expert_share = min(1.0, expert_bytes / body_bytes)
        total -= body_bytes * expert_share * share / tp * (1 - 1 / dp)
    if is_first:
        total += embed_params * dtype_bytes / tp
    if is_last and (model.embedding_tensors == 2 or not is_first):
        total += embed_params * dtype_bytes / tp
    total += mxfp4_expert_padding_bytes(
        model=model,
        quant=quant,
        device=device,
        tensor_parallel_size=tp,
        num_layers=layer_range[1] - layer_range[0],
        rows=mxfp4_backends,
    )
    offload = int(serve.cpu_offload_gb * GIB)
    return max(0, int(total) - offload)


def mlp_width_per_rank(*, model: ModelSpec, tensor_parallel_size: int) -> int:
    """Widest per-token MLP intermediate on one rank: the dense MLP or the routed experts' share.

    E.g. Llama-3.1-8B (intermediate 14,336) at TP 2 -> 7,168.
    """
    dense = model.intermediate_size
    moe = 0
    if model.num_experts:
        moe = model.num_experts_per_tok * model.moe_intermediate_size + model.num_shared_experts * (
            model.moe_intermediate_size
        )
    return max(dense, moe) // tensor_parallel_size


# --- fused-MoE workspace (vLLM 0.19.0) ------------------------------------------------------------
# model_executor/layers/fused_moe/modular_kernel.py `_allocate_buffers`: in 0.19.0 the whole batch is one
# chunk (M_chunk = M_full = num_tokens; no VLLM_FUSED_MOE_CHUNK_SIZE any more). Two buffers come from the
# persistent workspace manager (v1/worker/workspace.py `get_simultaneous`, each rounded up to 256 B), which
# only grows and is never freed, so from the first MoE layer on it stays allocated through the sampler.
# With I = moe_intermediate_size / TP and K = hidden_size, per token and per routed expert:
#   TritonExperts (fused_moe.py `workspace_shapes`, N = w1 rows = 2I): max(N/2, K) + max(N, K)
#   MarlinExperts (fused_marlin_moe.py `workspace_shapes`, N = I):       max(N, K) + max(2N, K)
# — the same count, max(I, K) + max(2I, K) elements in the activation dtype.
MOE_WORKSPACE_ALIGN_BYTES = 256  # v1/worker/workspace.py: each simultaneous buffer is round_up(bytes, 256)

# --- multimodal encoder dummy batch (vLLM 0.19.0) -----------------------------------------------------
# v1/worker/gpu_model_runner.py `profile_run`: before the text dummy run, the encoder runs on
# max_items = encoder_budget // tokens_per_item dummy items of the largest modality
# (multimodal/encoder_budget.py; encoder_budget = max(max_num_batched_tokens, tokens_per_item) by
# v1/core/encoder_cache_manager.py `compute_mm_encoder_budget`), and its outputs are parked in
# `self.encoder_cache` until after the sampler run. So the text run's peak sits on top of up to
# max_num_batched_tokens embeddings of the language model's hidden size.


def moe_workspace_bytes(
    *, model: ModelSpec, tensor_parallel_size: int, num_tokens: int, act_dtype_bytes: int
) -> int:
    """The fused-MoE workspace the profile run leaves allocated (see the constants' comment above).

    E.g. Qwen3-30B-A3B (top-8 of 128 experts, I 768, K 2,048), TP 1, 8,192 tokens, bf16: 65,536 rows x
    max(768, 2,048) x 2 = 256 MiB, plus 65,536 x max(1,536, 2,048) x 2 = 256 MiB -> 512 MiB.
    """
    if not model.num_experts or not model.moe_intermediate_size:
        return 0
    inter = model.moe_intermediate_size // tensor_parallel_size
    hidden = model.hidden_size
    rows = num_tokens * model.num_experts_per_tok
    ws13 = rows * max(inter, hidden) * act_dtype_bytes
    out = num_tokens * hidden * act_dtype_bytes  # the fused output shares workspace13's buffer
    ws2 = rows * max(2 * inter, hidden) * act_dtype_bytes
    align = MOE_WORKSPACE_ALIGN_BYTES
    return _round_up(max(ws13, out), align) + _round_up(ws2, align)


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def encoder_outputs_bytes(
    *, model: ModelSpec, serve: ServeConfig, num_tokens: int, act_dtype_bytes: int
) -> int:
    """Encoder outputs held in the encoder cache during the text dummy run: at most max_num_batched_tokens
    embeddings of hidden size (items x tokens per item <= encoder budget). Zero for a text-only model
    and when every `--limit-mm-per-prompt` modality is 0 (no encoder profiling, 0.19.0)."""
    if not model.vision_params:
        return 0
    limits = serve.limit_mm_per_prompt
    if limits and all(v == 0 for v in limits.values()):
        return 0
    return num_tokens * model.hidden_size * act_dtype_bytes


def dense_mlp_width_per_rank(*, model: ModelSpec, tensor_parallel_size: int) -> int:
    """MLP width of the layers that are not routed: the dense MLP (or, for a MoE model, the larger of
    `intermediate_size` and the shared experts), the transient part of the forward peak."""
    shared = model.num_shared_experts * model.moe_intermediate_size
    return max(model.intermediate_size, shared) // tensor_parallel_size


def activation_peak_bytes(
    *,
    model: ModelSpec,
    serve: ServeConfig,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    is_last_stage: bool,
    sampler_logit_copies: float,
    is_first_stage: bool = True,
    act_dtype_bytes: int,
) -> int:
    """Model of vLLM's "torch peak memory increase" during the profile run (reference §2.5).

    The larger of the forward pass (tokens x (MLP width + hidden) terms) and the sampler's logits (rows x
    vocab x 4 B x copies), plus what stays held (MoE workspace, encoder outputs) and a base. E.g.
    Llama-3.1-8B, 8,192 batched tokens, 1,024 sequences, bf16, 0.33.0's sampler: 2,023,699,251 B.
    """
    tokens = max_num_batched_tokens
    tp = serve.tensor_parallel_size
    if model.num_experts:
        width = dense_mlp_width_per_rank(model=model, tensor_parallel_size=tp)
    else:
        width = mlp_width_per_rank(model=model, tensor_parallel_size=tp)
    forward = tokens * act_dtype_bytes * (FWD_MLP_FACTOR * width + FWD_HIDDEN_FACTOR * model.hidden_size)
    sampler = 0.0
    if is_last_stage and not model.pooling:  # a pooling model pools in the profile run (ModelSpec.pooling)
        rows = min(tokens, max_num_seqs)
        sampler = rows * model.vocab_size * LOGIT_BYTES * sampler_logit_copies
    # held through the whole text run: the MoE workspace (persistent) and the parked encoder outputs
    held = moe_workspace_bytes(
        model=model, tensor_parallel_size=tp, num_tokens=tokens, act_dtype_bytes=act_dtype_bytes
    )
    if is_first_stage:
        held += encoder_outputs_bytes(
            model=model, serve=serve, num_tokens=tokens, act_dtype_bytes=act_dtype_bytes
        )
    return int(max(forward, sampler)) + held + ACTIVATION_BASE_BYTES


def hccl_communicators(*, tensor_parallel_size: int, pipeline_parallel_size: int) -> int:
    """HCCL communicators one rank holds buffers for: world (when > 1 rank), TP (> 1), PP (> 1)."""
    world = tensor_parallel_size * pipeline_parallel_size
    return (world > 1) + (tensor_parallel_size > 1) + (pipeline_parallel_size > 1)


def non_torch_bytes(*, tensor_parallel_size: int, pipeline_parallel_size: int, platform: str = "cuda") -> int:
    """Model of "non-torch forward increase memory": communication buffers grow with TP. On Ascend the
    HCCL buffers are inside the budget (see the constants above); on CUDA / ROCm the fitted NCCL terms.

    E.g. TP 1 -> 256 MiB (268,435,456 B); PP 2 alone -> 75,161,927 B; TP 2 -> 2,230,161,767 B.
    """
    if platform == "npu":
        communicators = hccl_communicators(
            tensor_parallel_size=tensor_parallel_size, pipeline_parallel_size=pipeline_parallel_size
        )
        return (
            NPU_NON_TORCH_BASE_BYTES
            + communicators * HCCL_BUFFERS_PER_COMMUNICATOR * HCCL_BUFFSIZE_DEFAULT_BYTES
        )
    if tensor_parallel_size > 1:
        return NON_TORCH_TP_BASE_BYTES + NON_TORCH_TP_PER_RANK_BYTES * tensor_parallel_size
    if pipeline_parallel_size > 1:
        return NON_TORCH_PP_ONLY_BYTES
    return NON_TORCH_SINGLE_BYTES


def cuda_graph_capture_sizes(*, max_num_seqs: int, cap: int = CUDA_GRAPH_MAX_CAPTURE) -> int:
    """Number of default capture sizes: [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16), max = min(2 x
    max_num_seqs, cap).

    E.g. max_num_seqs 256 or more -> 51 sizes (3 + 31 + 17, up to 512); 128 -> 35 (3 + 31 + 1); cap 1,024 at 512
    sequences or more -> 83 (3 + 31 + 49).
    """
    return capture_grid_count(min(max_num_seqs * 2, cap))


def capture_grid(limit: int, *, step_16_from_256: bool = True) -> list[int]:
    """vLLM's capture grid up to ``limit`` (config/vllm.py _set_cudagraph_sizes, 0.13.0-0.33.0, also under -cc
    max_cudagraph_capture_size): 1, 2, 4, multiples of 8 below 256, multiples of 16 from 256; e.g. 64 -> 1, 2, 4,
    8, 16 ... 64. Without ``step_16_from_256`` (0.11.0, VersionRules.capture_grid_16_from_256) multiples of 8 all
    the way: 512 -> 3 + 64 = 67 sizes."""
    sizes = [s for s in (1, 2, 4) if s <= limit]
    if not step_16_from_256:
        return sizes + list(range(8, limit + 1, 8))
    sizes += list(range(8, min(256, limit + 1), 8))
    sizes += list(range(256, limit + 1, 16))
    return sizes


def capture_grid_count(limit: int) -> int:
    """How many sizes :func:`capture_grid` has: e.g. 512 -> 51, 64 -> 11, 2 -> 2."""
    return len(capture_grid(limit))


# FULL_AND_PIECEWISE (the mode the figures above are fitted on) captures, per batch size, one piecewise graph (mixed
# batches) and one full graph (uniform decode batches up to max_num_seqs). vLLM's own estimate measures each mode's
# graphs apart (0.33.0 gpu_model_runner.py profile_cudagraph_memory: first capture + (n - 1) x per-graph, per mode).
# No log here measures one mode alone, so each is taken as this share of the fitted per-size figure: PIECEWISE
# and FULL (one graph a size) half, FULL_DECODE_ONLY half for the decode sizes only (docs/model.md; the plan says
# the figure is approximate under any mode but FULL_AND_PIECEWISE).
ONE_GRAPH_A_SIZE_SHARE = 0.5


def cuda_graph_bytes(
    *,
    num_layers_on_rank: int,
    enforce_eager: bool,
    captured_sizes: int,
    decode_sizes: int,
    mode: str = "FULL_AND_PIECEWISE",
) -> int:
    """Model of "Graph capturing finished … took X GiB": pool overhead + per-layer buffers, scaled by
    how many batch sizes are captured relative to the default 51 (max_num_seqs >= 256). ``captured_sizes`` and
    ``decode_sizes`` (those up to max_num_seqs, what FULL_DECODE_ONLY captures) count graph_rules.capture_sizes'
    list, the one place the sizes are decided; ``mode`` the cudagraph_mode captured.

    E.g. 32 layers on the rank, 51 sizes: 978,006,999 B (0.91 GiB, as the golden 8B logs print); PIECEWISE half of
    it, 489,003,499 B; FULL_DECODE_ONLY at max_num_seqs 64 (sizes up to 128: 19, decode sizes up to 64: 11):
    0.5 x 11 / 51 x 978,006,999 = 105,471,343 B.
    """
    if enforce_eager or mode == "NONE":
        return 0
    full = cuda_graph_capture_sizes(max_num_seqs=CUDA_GRAPH_MAX_CAPTURE)
    count = decode_sizes if mode == "FULL_DECODE_ONLY" else captured_sizes
    share = count / full * (1.0 if mode == "FULL_AND_PIECEWISE" else ONE_GRAPH_A_SIZE_SHARE)
    return int(share * (CUDA_GRAPH_BASE_BYTES + CUDA_GRAPH_PER_LAYER_BYTES * num_layers_on_rank))


def rocm_graph_bytes(*, num_layers_on_rank: int, graphs: int) -> int:
    """ROCm's "Graph capturing finished … took X GiB": ROCM_GRAPH_BASE_BYTES once, plus
    ROCM_GRAPH_PER_LAYER_GRAPH_BYTES per captured graph per layer; no graphs, nothing.

    E.g. Gemma-3-27B (62 layers), 67 PIECEWISE + 67 FULL graphs: 394,600,120 + 84,449 x 62 x 134 =
    1,096,202,412 B (1.02 GiB, as its 0.11.0rc2 log prints); 7 graphs of 28 layers: 411,152,124 B (0.38 GiB).
    """
    if graphs <= 0:
        return 0
    return ROCM_GRAPH_BASE_BYTES + ROCM_GRAPH_PER_LAYER_GRAPH_BYTES * num_layers_on_rank * graphs


def requested_bytes(*, total_bytes: int, utilization: float, use_ceil: bool) -> int:
    """`ceil(T x u)` from 0.14, the plain product before (reference §2.1).

    E.g. an H100's 84,932,978,278 B at 0.92: 78,138,340,015.76 -> 78,138,340,016 (ceil) or ...015 (int).
    """
    product = total_bytes * utilization
    return math.ceil(product) if use_ceil else int(product)


@dataclass(frozen=True)
class StageNumbers:
    """The binding worker's partition (bytes per device), as the estimator's Stage carries it: what the
    start-up log prints (vllm_text_printed.PrintedStage) and what the bands are drawn around (uncertainty.ranges_for).
    ``kv_cache_bytes`` is what the budget leaves after the other four; ``num_blocks`` is that pool in pages.
    """

    weights_bytes: int
    activation_peak_bytes: int
    non_torch_bytes: int
    cuda_graph_bytes: int
    kv_cache_bytes: int
    num_blocks: int
