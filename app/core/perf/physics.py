"""What one engine step of `vllm serve` costs on one device, from the planner's own accounting.

Coefficient-free: :func:`step_physics` turns an :class:`~app.core.result.Estimate` (weights per device,
KV bytes per token, the pool) plus the model and device into byte, FLOP and collective counts;
:func:`step_seconds` turns those into seconds with a device family's fitted coefficients
(``coefficients.json``, fitted by ``bench/fit_perf.py`` on measured runs only).

Step time = per-step overhead + bytes read / effective bandwidth + FLOPs / effective compute
+ per-layer collectives (latency + bytes over the interconnect). A decode step reads every dense
weight once, only the experts some token of the step routes to, and the KV of every running
context; a prefill chunk is mostly FLOPs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import StrEnum
from statistics import NormalDist

from app.core import budget as B
from app.core import graph_mode
from app.core.perf.uncaptured import graph_token_limit
from app.core.result import Estimate
from app.core.specs import GIB, DeviceSpec, LayerKind, ModelSpec, QuantMethod, ServeConfig
from app.core.versions import rules_for

TERA = 10**12
GIGA = 10**9
FLOPS_PER_MAC = 2  # one multiply-accumulate = 2 floating-point operations
ATTENTION_MATMULS = 2  # Q·K^T and P·V, each one MAC per (head dim x context token)
ALLREDUCES_PER_LAYER = 2  # Megatron TP: after attention's o_proj and after the MLP's down_proj
# a one-block layer (ModelSpec.one_sublayer_blocks: vLLM 0.33.0 nemotron_h.py, each Nemotron-H decoder
# layer is a norm and ONE mixer, mamba / attention / MLP / MoE, ending in one row-parallel projection)
ALLREDUCES_PER_BLOCK = 1
ATTENTION_KINDS = frozenset(
    {
        LayerKind.FULL,
        LayerKind.SLIDING,
        LayerKind.CHUNKED,
        LayerKind.MLA,
        LayerKind.SHARED,
        LayerKind.ENCODER_ONLY,
    }
)
ALLTOALLS_PER_MOE_LAYER = 2  # expert parallel: dispatch and combine
ACTIVATION_BYTES = 2  # bf16 hidden states on the wire
RING_FACTOR_NUMERATOR = 2  # ring all-reduce moves 2 (n-1)/n of the buffer per rank
INTERCONNECT_DIRECTIONS = 2  # catalog figures are bidirectional; one direction carries a ring step
FP8_TENSOR_CORE_SM = 89  # Ada/Hopper: FP8 tensor cores (2x BF16 rate)
INT8_TENSOR_CORE_SM = 80  # Ampere+: INT8 tensor cores (2x BF16 rate)
FP4_TENSOR_CORE_SM = 100  # Blackwell: FP4 tensor cores (4x BF16 rate); below it FP4 weights are upcast
LOW_PRECISION_SPEEDUP = 2.0  # FP8/INT8 tensor-core rate over BF16 (vendor data sheets)
FP4_SPEEDUP = 4.0  # FP4 tensor-core rate over BF16 on Blackwell (data sheet: 9 vs 2.25 PFLOPS dense on B200)
DEFAULT_BF16_TFLOPS = 989.0  # an H100-class device when the catalog has neither figure (extrapolated anyway)
# A device whose data sheet rate the catalog lacks but whose bandwidth it has computes at the catalog's median
# machine balance: bf16_dense_tflops / memory_bandwidth_tbps over the devices of device_specs/ with both
# (215 over 43 on 2026-12-02, 214 over 53 once every catalog device had a figure; H100 SXM 295, A100 SXM 153,
# MI300X 247, L40S 419 FLOP a byte), not at an H100's 989 TFLOPS (a 273 GB/s GB10 had prefilled 8x too fast
# before the catalog had its figure). tests/unit/test_perf_attention_rate.py recomputes it.
MACHINE_BALANCE_FLOP_PER_BYTE = 215.0
DEFAULT_BANDWIDTH_TBPS = 3.35
DEFAULT_INTERCONNECT_GBPS = 900.0
# --cpu-offload-gb keeps that many GiB of weights in pinned host memory that the GPU reads over PCIe in
# every forward pass (vLLM 0.19.0 model_executor/models/utils.py maybe_offload_to_cpu: UVA views of
# pinned CPU tensors); one direction of PCIe 5.0 x16, nominal. Not fitted: no measured offload run.
HOST_LINK_BYTES_PER_S = 64 * 10**9
WINDOWED_KINDS = ("sliding", "chunked")  # layers whose attention reads at most the window's KV
# A tensor-parallel group wider than one node all-reduces over the hosts' network: one 400 Gb/s NIC per
# GPU (NVIDIA DGX H100/B200 user guides: eight single-port ConnectX-7 InfiniBand NDR 400 Gb/s for the
# compute fabric), 50 GB/s each way, instead of NVLink. Not fitted: no measured cross-host TP run.
INTER_NODE_BYTES_PER_S = 400 * 10**9 // 8
NVLINK_PAIR = 2  # an NVLink bridge joins two cards
# NCCL's ring all-reduce of a decode step's few kilobytes is latency-bound: 2 (n - 1) steps around the ring,
# each a PCIe round through the host bridge. vLLM's custom all-reduce (one NVLink/P2P kernel) replaces it
# on NVLink-class links, and turns itself off for more than two PCIe-only GPUs (0.33.0
# custom_all_reduce.py: "not supported on more than two PCIe-only GPUs"), so there each all-reduce pays
# these steps beyond the fitted per-collective latency. 5 us a step: read off speeddata6's round-6 runs
# (bench/data/perf/sources-r6: MiniMax-M2.5 on 4 PCIe RTX PRO 6000, 12.3 ms at one client against
# 8.9 predicted, 124 all-reduces of 6 steps: 4.6 us; GLM-4.5-FP8 on 8, 28.9 ms against 13.6, 184 of
# 14 steps: 5.9 us) after their blind score: in-sample for them, blind for IOG-Foundation's RTX 4090s.
PCIE_RING_STEP_S = 5e-6
PCIE_CLASS_MAX_GBPS = 128.0  # catalog links at or below PCIe Gen5 x16 (bidirectional): no NVLink-class fabric


def tp_crosses_hosts(*, device: DeviceSpec, serve: ServeConfig) -> bool:
    return serve.tensor_parallel_size > max(1, device.typical_node_devices)


def tp_over_pcie(*, device: DeviceSpec, serve: ServeConfig) -> bool:
    """A TP group whose all-reduces cross PCIe: the catalog's peer_link says so (a bridged pair only
    beyond 2 cards), else a link no faster than PCIe Gen5 x16. vLLM 0.33.0's custom all-reduce
    (distributed/device_communicators/custom_all_reduce.py) turns itself off for more than two PCIe-only
    GPUs and without GPU P2P, leaving NCCL: the fitted NVLink-class link and latency do not apply."""
    tp = serve.tensor_parallel_size
    if tp <= 1:
        return False
    if device.peer_link is not None:
        return device.peer_link == "pcie" or (device.peer_link == "nvlink_pairs" and tp > NVLINK_PAIR)
    gbps = device.interconnect_gbps
    return gbps is not None and gbps <= PCIE_CLASS_MAX_GBPS


class WeightFormat(StrEnum):
    """How weights are stored and multiplied (what changes bytes read and tensor-core rate)."""

    BF16 = "bf16"
    FP8 = "fp8"  # W8A8 fp8 on SM89+, weight-only (Marlin) below
    INT8 = "int8"  # W8A8 int8 (compressed-tensors w8a8, SmoothQuant)
    INT4 = "int4"  # weight-only int4 (AWQ, GPTQ, compressed-tensors w4a16): BF16 math
    MXFP4 = "mxfp4"
    NVFP4 = "nvfp4"


_FORMAT_OF_METHOD = {
    QuantMethod.FP8: WeightFormat.FP8,
    QuantMethod.INT8: WeightFormat.INT8,
    QuantMethod.INT4: WeightFormat.INT4,
    QuantMethod.MXFP4: WeightFormat.MXFP4,
    QuantMethod.NVFP4: WeightFormat.NVFP4,
}


def weight_format(model: ModelSpec) -> WeightFormat:
    if model.quantization is None:
        return WeightFormat.BF16
    return _FORMAT_OF_METHOD[model.quantization.method]


def bf16_dense_tflops(device: DeviceSpec) -> float:
    """The device's dense BF16 tensor rate: its data sheet's, else its bandwidth at the catalog's median
    machine balance (TB/s x FLOP/B = TFLOPS), else an H100's."""
    if device.bf16_dense_tflops:
        return device.bf16_dense_tflops
    if device.memory_bandwidth_tbps:
        return device.memory_bandwidth_tbps * MACHINE_BALANCE_FLOP_PER_BYTE
    return DEFAULT_BF16_TFLOPS


def attention_format(estimate: Estimate) -> WeightFormat:
    """The format attention's matmuls run in: the KV cache's (an fp8 cache: FP8; else BF16)."""
    fp8_cache = estimate.kv_dtype_bytes_per_element == 1 and estimate.kv_cache_dtype.startswith("fp8")
    return WeightFormat.FP8 if fp8_cache else WeightFormat.BF16


def attention_rate(physics: StepPhysics) -> float:
    """The tensor rate of attention's matmuls on this device (FLOP/s at the data sheet)."""
    return physics.attention_flops_per_s or physics.peak_flops_per_s


def compute_speedup(*, fmt: WeightFormat, device: DeviceSpec) -> float:
    """Tensor-core rate of this weight format over BF16 on this device (1 = the math runs in BF16)."""
    sm = device.sm or 0
    if device.platform != "cuda":
        return LOW_PRECISION_SPEEDUP if fmt in (WeightFormat.FP8, WeightFormat.INT8) else 1.0
    if fmt == WeightFormat.FP8 and sm >= FP8_TENSOR_CORE_SM:
        return LOW_PRECISION_SPEEDUP
    if fmt == WeightFormat.INT8 and sm >= INT8_TENSOR_CORE_SM:
        return LOW_PRECISION_SPEEDUP
    if fmt == WeightFormat.MXFP4 and sm >= FP4_TENSOR_CORE_SM:
        # vLLM's MXFP4 MoE kernels never multiply FP4 by FP4 on CUDA: BF16 activations by default, MXFP8 ones
        # with VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1, which public Blackwell serving scripts set (0.19.0 / 0.33.0
        # fused_moe/oracle/mxfp4.py); a W4A8 MMA runs at the FP8 rate, chosen over BF16's by leave-one-source-out
        return LOW_PRECISION_SPEEDUP
    if fmt == WeightFormat.NVFP4 and sm >= FP4_TENSOR_CORE_SM:
        return FP4_SPEEDUP
    return 1.0


@dataclass(frozen=True)
class StepPhysics:
    """Counts for one device of one data-parallel rank; no fitted number in here."""

    dense_weight_bytes: int  # read once per step whatever the batch
    expert_weight_bytes: int  # routed experts on this device (read only where a token goes)
    num_experts: int  # routed experts of the model (0 = dense)
    experts_per_token: int
    kv_bytes_per_token: int  # per context token, summed over this device's layers
    windowed_kv_share: float  # share of those bytes in sliding/chunked layers (they read only the window)
    kv_window_tokens: int  # the window those layers read (0 = none)
    gemm_flops_per_token: float  # 2 x active dense parameters on this device (+ lm_head)
    expert_flops_per_token: float  # 2 x the routed experts' active parameters on this device
    attention_flops_per_context_token: float  # per new token, per token of its context
    peak_flops_per_s: float  # BF16 dense rate x the format's tensor-core speedup
    bandwidth_bytes_per_s: float
    collectives_per_step: int  # TP all-reduces + EP all-to-alls on this device per step
    collective_bytes_per_token: float  # bytes one of the rank's tokens puts on the wire in the TP all-reduces
    # the same for the data-parallel expert exchange (0 without DP): a decode token's at the fitted
    # exchange efficiency (a few tokens' messages, padded across the ranks), a prompt chunk's at the bulk
    # link efficiency of the TP all-reduces (megabytes a layer: bandwidth-bound)
    exchange_bytes_per_token: float
    link_bytes_per_s: float  # one direction of the device's interconnect
    layers_on_device: int  # decoder layers on the device, in attention + MLP layers (layer_equivalents)
    moe_layers_on_device: int
    tensor_parallel_size: int
    data_parallel_size: int
    moe_tokens_scale: int  # experts see this many times the rank's tokens (EP across DP ranks)
    weight_format: WeightFormat
    host_weight_bytes: int = 0  # --cpu-offload-gb: weights read from host memory every forward pass
    host_link_bytes_per_s: float = HOST_LINK_BYTES_PER_S
    pipeline_parallel_size: int = 1  # the counts above are one stage's; a token crosses every stage
    # async scheduling (vLLM's default from 0.14, off under PP and non-EAGLE drafts): the host prepares
    # step N+1 while the device runs step N, so its work hides behind the device's up to the device's time
    host_overlapped: bool = True
    # --enforce-eager: no CUDA/ACL graphs, every kernel of every layer launched from Python in the step
    eager: bool = False
    # NCCL's ring steps over PCIe, beyond the fitted latency, summed over the step's all-reduces (seconds)
    pcie_ring_s: float = 0.0
    # the tensor rate attention's two matmuls run at (0: peak_flops_per_s). FlashAttention / FlashInfer
    # multiply the query by the cached K and V in the KV cache's dtype, not the weights' format: BF16 for an
    # fp8-weight model with a bf16 cache (its GEMMs run at FP8's rate, its attention does not), FP8 only with an
    # fp8 cache on FP8 tensor cores (vLLM's FA3 path quantizes the query and passes q/k/v descales)
    attention_flops_per_s: float = 0.0
    # a prompt token's attention FLOPs per context token where prefill attends another way than decode (0: as
    # attention_flops_per_context_token). Dense MLA: vLLM prefills with the up-projected, compute-friendly
    # multi-head form (Q.K over qk_nope + qk_rope, P.V over v_head_dim a head) and decodes with the absorbed,
    # data-movement-friendly multi-query form over the latent (kv_lora_rank + qk_rope, kv_lora_rank): 0.33.0
    # vllm/model_executor/layers/attention/mla_attention.py, the module's "MLA Common Components" note; 0.11.0
    # vllm/v1/attention/backends/mla/common.py MLACommonImpl.forward: prompt tokens to _forward_prefill (kv_b_proj
    # up-projects k_nope and v), decode tokens through W_UK into the latent (DeepSeek-V3: 128 x (192 + 128) / 2 =
    # 20,480 head dims against 128 x (576 + 512) / 2 = 69,632)
    prefill_attention_flops_per_context_token: float = 0.0
    # the most tokens a step replays from a captured graph (uncaptured.graph_token_limit; V0: decode
    # sequences, a prompt chunk makes the step eager); 0: no limit known or no graphs at all
    graph_token_limit: int = 0
    v0_graphs: bool = False  # V0's rule: only decode-only steps replay graphs


def mla_prefill_head_dims(model: ModelSpec) -> float:
    """Half the per-layer Q.K + P.V widths, summed over the heads, of a dense MLA model's prefill (the
    up-projected multi-head path, mla_attention.py); 0 where prefill attends as decode does: no MLA, a sparse
    MLA (DeepSeek-V3.2 / GLM-5: the indexer's top-k runs FlashMLA's latent multi-query kernels for prompt
    tokens too) or a config that does not give the up-projected widths."""
    mla = model.mla
    if mla is None or model.indexer_bytes_per_token or mla.qk_nope_head_dim is None or mla.v_head_dim is None:
        return 0.0
    return model.num_attention_heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim + mla.v_head_dim) / 2


def prefill_attention_flops(physics: StepPhysics) -> float:
    """A prompt token's attention FLOPs per token of its context (see StepPhysics)."""
    return physics.prefill_attention_flops_per_context_token or physics.attention_flops_per_context_token


def async_scheduling(*, vllm_version: str, serve: ServeConfig) -> bool:
    """Whether vLLM overlaps the host's step work with the device's: ``--async-scheduling`` /
    ``--no-async-scheduling`` when given, else the release's default (versions.py: on from 0.14.0),
    which config/vllm.py turns off for draft models other than EAGLE/MTP (speculative decoding is not in
    the speed model: taken as off); off under pipeline parallel and on the V0 engine either way."""
    rules = rules_for(vllm_version)
    if rules.engine != "v1" or serve.pipeline_parallel_size != 1:
        return False
    if serve.async_scheduling is not None:
        return serve.async_scheduling
    return rules.async_scheduling_default and serve.speculative_config is None


def _expert_byte_fraction(model: ModelSpec) -> float:
    """Share of the checkpoint's weight bytes that are routed experts."""
    experts = B.routed_expert_params(model)
    if not experts:
        return 0.0
    rest = max(0, model.params_total - experts)
    dtype_bytes = float(model.weight_dtype_bytes)
    quant = model.quantization
    expert_b = rest_b = dtype_bytes
    if quant is not None:
        q = B.quantized_bytes_per_param(quant)
        expert_b = q
        rest_b = q if quant.quantized_fraction >= 1.0 else dtype_bytes
    total = experts * expert_b + rest * rest_b
    return min(1.0, experts * expert_b / total) if total > 0 else 0.0


def moe_layer_count(model: ModelSpec) -> int:
    """Decoder layers whose MLP is the routed-expert block: what the config says (ModelSpec.moe_layers),
    else as many as the routed-expert parameters fill (budget.routed_expert_params). Llama-4-Maverick:
    interleave_moe_layer_step 2, so 24 of its 48 layers; DeepSeek-V3: first_k_dense_replace 3, 58 of 61;
    Qwen3-30B-A3B: decoder_sparse_step 1 and no mlp_only_layers, all 48."""
    if not model.num_experts:
        return 0
    if model.moe_layers is not None:
        return model.moe_layers
    per_layer = model.num_experts * B.GATED_MLP_MATRICES * model.hidden_size * model.moe_intermediate_size
    if not per_layer:
        return model.num_layers
    return min(model.num_layers, B.routed_expert_params(model) // per_layer)


def layer_equivalents(model: ModelSpec) -> float:
    """The model's decoder layers counted as attention + MLP layers: what the per-layer floors and the
    TP all-reduces are per. A one-block layer (Nemotron-H: 23 mamba, 23 MoE and 6 attention blocks of
    Nemotron-3-Nano's 52) is half of one: 26, with 52 all-reduces, not 104."""
    per_layer = ALLREDUCES_PER_BLOCK if model.one_sublayer_blocks else ALLREDUCES_PER_LAYER
    return model.num_layers * per_layer / ALLREDUCES_PER_LAYER


def step_physics(
    *, estimate: Estimate, model: ModelSpec, device: DeviceSpec, serve: ServeConfig
) -> StepPhysics:
    tp = estimate.tensor_parallel_size
    pp = estimate.pipeline_parallel_size
    dp = serve.data_parallel_size
    fraction = _expert_byte_fraction(model)
    # the estimate's weights already hold 1/dp of the experts per device when dp > 1 (budget.py)
    expert_share = fraction / dp / (fraction / dp + 1 - fraction) if dp > 1 and fraction else fraction
    expert_bytes = estimate.weights_bytes * expert_share
    dense_bytes = estimate.weights_bytes * (1 - expert_share)
    active = model.params_active or model.params_total
    embed = model.vocab_size * model.hidden_size
    body_active = max(0, active - embed * model.embedding_tensors)
    experts_active = B.routed_expert_params(model) * model.num_experts_per_tok / max(model.num_experts, 1)
    dense_active = max(0.0, body_active - experts_active)
    gemm = FLOPS_PER_MAC * (dense_active / pp + embed) / tp  # the lm_head runs on every token sampled
    expert_gemm = FLOPS_PER_MAC * experts_active / pp / tp
    layers = layer_equivalents(model) / pp
    moe_layers = moe_layer_count(model) / pp
    # only attention layers attend (mamba mixers and MLP-only blocks read no context)
    attention_layers = sum(kind in ATTENTION_KINDS for kind in model.layer_kinds) / pp
    head_dims = model.num_attention_heads * (model.head_size + model.head_size_v) / 2
    if model.mla is not None:
        head_dims = model.num_attention_heads * (model.mla.latent_size + model.mla.kv_lora_rank) / 2
    attention = FLOPS_PER_MAC * ATTENTION_MATMULS * attention_layers * head_dims / tp
    prefill_attention = (
        FLOPS_PER_MAC * ATTENTION_MATMULS * attention_layers * mla_prefill_head_dims(model) / tp
    )
    collectives = 0
    wire_bytes = exchange_bytes = 0.0
    token_bytes = model.hidden_size * ACTIVATION_BYTES
    if tp > 1:
        collectives += ALLREDUCES_PER_LAYER * int(layers)
        # ring all-reduce: 2 (n-1)/n of the buffer per rank
        wire_bytes += ALLREDUCES_PER_LAYER * int(layers) * token_bytes * RING_FACTOR_NUMERATOR * (tp - 1) / tp
    if model.num_experts and dp > 1:
        # the experts see every DP rank's tokens: vLLM's default exchange gathers every rank's hidden
        # states before the experts and reduce-scatters after (each rank receives the other dp-1 ranks' tokens)
        collectives += ALLTOALLS_PER_MOE_LAYER * int(moe_layers)
        exchange_bytes = ALLTOALLS_PER_MOE_LAYER * int(moe_layers) * token_bytes * (dp - 1)
    pcie_ring = 0.0
    if tp > NVLINK_PAIR and tp_over_pcie(device=device, serve=serve):
        pcie_ring = ALLREDUCES_PER_LAYER * int(layers) * RING_FACTOR_NUMERATOR * (tp - 1) * PCIE_RING_STEP_S
    fmt = weight_format(model)
    windowed = sum(
        g.page_size_bytes * g.num_layers / g.block_size for g in estimate.groups if g.kind in WINDOWED_KINDS
    )
    window = model.sliding_window_tokens or model.attention_chunk_tokens or 0
    tflops = bf16_dense_tflops(device)
    link = (device.interconnect_gbps or DEFAULT_INTERCONNECT_GBPS) * GIGA / INTERCONNECT_DIRECTIONS
    if tp_crosses_hosts(device=device, serve=serve):
        link = min(link, float(INTER_NODE_BYTES_PER_S))
    return StepPhysics(
        dense_weight_bytes=int(dense_bytes),
        expert_weight_bytes=int(expert_bytes),
        num_experts=model.num_experts,
        experts_per_token=model.num_experts_per_tok,
        kv_bytes_per_token=estimate.kv_bytes_per_token,
        windowed_kv_share=min(1.0, windowed / estimate.kv_bytes_per_token)
        if estimate.kv_bytes_per_token
        else 0.0,
        kv_window_tokens=window if windowed else 0,
        gemm_flops_per_token=gemm,
        expert_flops_per_token=expert_gemm,
        attention_flops_per_context_token=attention,
        prefill_attention_flops_per_context_token=prefill_attention,
        peak_flops_per_s=tflops * TERA * compute_speedup(fmt=fmt, device=device),
        attention_flops_per_s=tflops * TERA * compute_speedup(fmt=attention_format(estimate), device=device),
        bandwidth_bytes_per_s=(device.memory_bandwidth_tbps or DEFAULT_BANDWIDTH_TBPS) * TERA,
        collectives_per_step=collectives,
        collective_bytes_per_token=wire_bytes,
        exchange_bytes_per_token=exchange_bytes,
        link_bytes_per_s=link,
        layers_on_device=int(layers),
        moe_layers_on_device=int(moe_layers),
        tensor_parallel_size=tp,
        data_parallel_size=dp,
        moe_tokens_scale=dp if model.num_experts else 1,
        weight_format=fmt,
        host_weight_bytes=int(serve.cpu_offload_gb * GIB),
        pipeline_parallel_size=pp,
        host_overlapped=async_scheduling(vllm_version=estimate.vllm_version, serve=serve),
        eager=not graph_mode.captures_graphs(
            serve, rules=rules_for(estimate.vllm_version)
        ),  # --enforce-eager, -O0 or cudagraph_mode NONE
        pcie_ring_s=pcie_ring,
        graph_token_limit=graph_token_limit(estimate=estimate, serve=serve, device=device),
        v0_graphs=rules_for(estimate.vllm_version).engine != "v1",
    )


# Blom (1958)'s approximation of the expected largest of n standard normal draws: the inverse normal CDF
# at (n - 0.375) / (n + 0.25) (n = 2: 0.59, 4: 1.05, 8: 1.43; exact: 0.56, 1.03, 1.42).
BLOM_ALPHA = 0.375
UNIFORM_SD = 1 / math.sqrt(12)  # standard deviation of a uniform draw on [0, 1]


def lockstep_factor(*, ranks: int, batch: float, context_cv: float) -> float:
    """Data-parallel attention with shared experts steps in lockstep: every MoE layer's exchange waits for
    every rank, so a step lasts as long as the slowest rank's attention. Each rank's KV read is the sum of
    its ``batch`` requests' contexts (coefficient of variation ``context_cv`` each, independent), so the
    slowest of ``ranks`` reads about 1 + z_ranks x cv / sqrt(batch) times the mean (z: Blom)."""
    if ranks <= 1 or batch <= 0 or context_cv <= 0:
        return 1.0
    z = NormalDist().inv_cdf((ranks - BLOM_ALPHA) / (ranks + 1 - 2 * BLOM_ALPHA))
    return 1.0 + z * context_cv / math.sqrt(batch)


def context_cv(*, input_tokens: float, output_tokens: float) -> float:
    """Spread of one decoding request's context, met at a uniform point of its life: input + U x output."""
    mean = input_tokens + output_tokens / 2
    return output_tokens * UNIFORM_SD / mean if mean > 0 else 0.0


def busy_ranks(*, data_parallel_size: int, clients: float | None) -> int:
    """Data-parallel ranks that hold requests at once.

    vLLM's DP front end hands each new request to the least-loaded engine, so C clients keep at most C
    ranks busy: 8 ranks and 1 client -> 1 (the other seven idle, throughput one rank's); 8 ranks and 20
    clients -> 8. ``clients`` None (no concurrency cap) means every rank.
    """
    if clients is None:
        return data_parallel_size
    return max(1, min(data_parallel_size, math.ceil(clients)))


def on_busy_ranks(physics: StepPhysics, *, busy: int) -> StepPhysics:
    """One busy rank's step when only ``busy`` of the data-parallel ranks hold requests (busy_ranks).

    With expert parallel across the DP ranks each device holds 1/dp of the routed experts and computes
    them for every busy rank's tokens; the counts of step_physics take all dp ranks busy (each device's
    expert GEMMs see dp ranks' tokens). With ``busy`` of them: the expert FLOPs a rank's token costs a
    device scale by busy / dp, the experts see ``busy`` ranks' tokens, and only the busy ranks step in
    lockstep (the idle ones run empty steps). The exchange is unchanged: the busy rank still sends its
    hidden states to every other rank. E.g. Llama-4-Maverick DP 8 + EP at one client: the 4,096-token
    prompt's routed experts run 1/8 on each of the 8 devices, not all on the busy one."""
    dp = physics.data_parallel_size
    if not physics.num_experts or dp <= 1 or busy >= dp:
        return physics
    busy = max(1, busy)
    return replace(
        physics,
        expert_flops_per_token=physics.expert_flops_per_token * busy / dp,
        moe_tokens_scale=busy,
        data_parallel_size=busy,
    )


def lockstep_ranks(physics: StepPhysics) -> int:
    """Ranks that step together: the data-parallel ranks of an MoE model (their experts are shared)."""
    return physics.data_parallel_size if physics.num_experts and physics.data_parallel_size > 1 else 1


def touched_expert_fraction(*, num_experts: int, experts_per_token: int, tokens: float) -> float:
    """Expected share of experts at least one of ``tokens`` routes to (uniform routing):
    1 - (1 - k/E)^tokens. One token reads k of E experts; a batch of hundreds reads them all."""
    if num_experts <= 0:
        return 1.0
    miss = 1.0 - experts_per_token / num_experts
    return 1.0 - float(miss ** max(tokens, 1.0))


def attended_context(*, physics: StepPhysics, context_tokens: float) -> float:
    """The context a token's attention reads, averaged over the layers: full layers read all of it,
    sliding-window (and chunked local) layers at most the window (gpt-oss: every other layer, 128)."""
    if not physics.kv_window_tokens:
        return context_tokens
    share = physics.windowed_kv_share
    return (1 - share) * context_tokens + share * min(context_tokens, float(physics.kv_window_tokens))


@dataclass(frozen=True)
class Coefficients:
    """A device family's fitted efficiencies (see coefficients.json for where each came from)."""

    bandwidth_efficiency: float  # achieved / data-sheet memory bandwidth
    compute_efficiency: float  # achieved / data-sheet tensor rate (dense GEMMs and attention)
    moe_compute_efficiency: float  # the same for the routed experts' grouped GEMMs
    step_overhead_s: float  # scheduler, sampling, launch per engine step
    layer_overhead_s: float  # per decoder layer on the device: kernel latency floors that TP does not divide
    moe_layer_overhead_s: float  # extra per MoE layer: router, top-k, permute and combine kernels
    collective_latency_s: float  # per all-reduce / all-to-all, independent of size
    link_efficiency: float  # achieved / data-sheet interconnect bandwidth for the step's small collectives
    token_overhead_s: (
        float  # per token scheduled in a step: sampling, scheduler and detokenizer work per sequence
    )
    exchange_efficiency: float  # achieved / data-sheet link rate of the DP expert exchange (and its permutes)
    prefill_queue_factor: float  # share of the other clients' prefill a new request waits behind
    ttft_overhead_s: float  # API server, tokenisation and the first token's way back, per request
    # the engine core's host work per step (schedule, prepare inputs, launch, sample bookkeeping, ship
    # outputs to the API server), and per request in the step: fitted across sources (bench/perf_loso.py)
    # on the runs whose vLLM did not overlap it (async scheduling off), zero for the shared file's fit
    host_step_s: float = 0.0
    host_request_s: float = 0.0
    # and per step per tensor-parallel rank beyond the first: the V0 engine's driver worker broadcasts every
    # step's model input to the other ranks before any of them runs (vLLM 0.6.3 worker/worker_base.py,
    # _get_driver_input_and_broadcast -> broadcast_tensor_dict over the TP group; nothing at TP 1, where
    # GroupCoordinator.broadcast_object returns at once). Fitted for V0 only (bench/perf_loso.py +v0rank)
    host_rank_step_s: float = 0.0
    # the API server's work per prompt token before the request reaches the scheduler (tokenising the
    # prompt text): with ttft_overhead_s, the per-request TTFT overhead; fitted across sources as above
    ttft_per_prompt_token_s: float = 0.0
    # --enforce-eager: the Python launch of one decoder layer's kernels, which CUDA graphs replay in one go;
    # the device waits for it at small batches (launch-bound), so it adds to every step of every layer.
    # Fitted across sources on the runs that state --enforce-eager (bench/perf_loso.py); CPU work.
    eager_layer_s: float = 0.0
    # The API server's serial work per request before it reaches the engine (HTTP, validation, chat
    # template, tokenisation, the engine request's build and send): one process and one event loop (vLLM's
    # default --api-server-count 1), so requests sent together reach the scheduler one after another,
    # this far apart. ttft_overhead_s is the latency every request has; this is the occupancy that makes a
    # burst queue (`--request-rate inf`: the k-th of N waits k of them). Fitted across sources
    # (bench/perf_loso.py ``+frontend``); CPU work, so slower_device leaves it.
    frontend_request_s: float = 0.0
    # The API server's work per running stream per engine step, charged to a new request's admission: the
    # same event loop that takes a new request (chat template, tokenisation, add_request) turns every step's
    # outputs into each running stream's detokenised SSE chunk (vLLM 0.33.0 v1/engine/async_llm.py,
    # AsyncLLM._run_output_handler: output_processor.process_outputs over chunks of
    # VLLM_V1_OUTPUT_PROC_CHUNK_SIZE = 128 outputs before it yields), so the new request waits behind one
    # step's backlog of the streams in flight. Adds to TTFT only: a running stream's tokens stay paced by
    # the engine's steps. Fitted across sources (bench/perf_loso.py ``+streams``); CPU work.
    frontend_stream_s: float = 0.0
    # The API server's tokenizer workers, which take the prompts one at a time first come, first served, each
    # for ttft_per_prompt_token_s x its prompt tokens (simulate.tokenizer_queue: vLLM's renderer thread pool,
    # ModelConfig.renderer_num_workers, default 1); 0: the per-token part is paid side by side, no queue.
    # Chosen across sources (bench/perf_loso.py ``+tokq``); CPU work, so slower_device leaves it.
    tokenizer_workers: int = 0
    # A step too large for the captured graphs (uncaptured.py) launches its layers as an --enforce-eager start
    # does, eager_layer_s a layer, overlapped with the device's work. Off unless chosen (bench/perf_loso.py
    # ``+uncap``).
    uncaptured_launch: bool = False
    uncaptured_serial: bool = False  # and the launches add to the device's work instead (``+uncapsum``)
    uncaptured_share: float = 1.0  # the share of those launches that does not hide (``+uncapsumfit``)


def slower_device(
    coefficients: Coefficients, *, factor: float, compute_factor: float | None = None
) -> Coefficients:
    """The same coefficients on a platform whose kernels reach ``1 / factor`` of what the fitted family's
    reach on the same data-sheet bandwidth, and ``1 / compute_factor`` of its tensor rate (default: the
    same factor). ``factor`` stretches what a decode step is made of: bytes read, wire, the per-step,
    per-layer and per-token floors (memory-bound kernels, launch latencies, the collective library);
    ``compute_factor`` the dense and expert GEMMs and attention FLOPs that a prompt chunk is made of
    (the vendor's GEMM library). The host's work and the API server's TTFT overhead are CPU work and
    stay. Worked example: Hopper's fit on an MI300X with factor 2.0 and compute factor 1.25 reads its
    5.3 TB/s data sheet at 5.3 x 1.0 / 2 = 2.65 TB/s and runs its 1,307 TFLOPS at 1,307 / 1.25 = 1,046."""
    compute = factor if compute_factor is None else compute_factor
    if factor == 1.0 and compute == 1.0:
        return coefficients
    return replace(
        coefficients,
        bandwidth_efficiency=coefficients.bandwidth_efficiency / factor,
        compute_efficiency=coefficients.compute_efficiency / compute,
        moe_compute_efficiency=coefficients.moe_compute_efficiency / compute,
        link_efficiency=coefficients.link_efficiency / factor,
        exchange_efficiency=coefficients.exchange_efficiency / factor,
        step_overhead_s=coefficients.step_overhead_s * factor,
        layer_overhead_s=coefficients.layer_overhead_s * factor,
        moe_layer_overhead_s=coefficients.moe_layer_overhead_s * factor,
        collective_latency_s=coefficients.collective_latency_s * factor,
        token_overhead_s=coefficients.token_overhead_s * factor,
    )


def layer_floor_s(*, physics: StepPhysics, coefficients: Coefficients) -> float:
    """What every step pays per decoder layer on the device whatever it carries: the kernels' latency
    floors (and the MoE layers' router, top-k and permute kernels), plus the eager launches when graphs
    are off. E.g. 64 dense layers at 31.6 us, eager at 250 us a layer: 2.0 ms + 16 ms."""
    eager = coefficients.eager_layer_s if physics.eager else 0.0
    return (
        physics.layers_on_device * (coefficients.layer_overhead_s + eager)
        + physics.moe_layers_on_device * coefficients.moe_layer_overhead_s
    )


def host_step_seconds(coefficients: Coefficients, *, tensor_parallel_size: int) -> float:
    """The host's fixed work per engine step on a TP group of this size (its per-rank part beyond the
    first rank included): e.g. 30 ms + 2 ms x 7 = 44 ms at TP 8, 30 ms at TP 1."""
    return coefficients.host_step_s + coefficients.host_rank_step_s * (tensor_parallel_size - 1)


def host_seconds(coefficients: Coefficients, *, requests: float, tensor_parallel_size: int) -> float:
    """The host's work for one engine step of ``requests`` scheduled requests on a TP group of this size."""
    step = host_step_seconds(coefficients, tensor_parallel_size=tensor_parallel_size)
    return step + coefficients.host_request_s * requests


def with_host(*, device_s: float, host_s: float, overlapped: bool) -> float:
    """One engine step: the device's time and the host's, overlapped (async scheduling: the slower of
    the two sets the pace) or in series (the host schedules, then the device runs)."""
    return max(device_s, host_s) if overlapped else device_s + host_s


@dataclass(frozen=True)
class StepCost:
    seconds: float
    memory_seconds: float
    compute_seconds: float
    dense_compute_seconds: float
    expert_compute_seconds: float
    collective_seconds: float
    # the TP all-reduces' bytes (and the prompt chunks' DP exchange bytes) at the data-sheet link rate,
    # before link_efficiency
    wire_seconds: float
    exchange_seconds: float  # the decode tokens' DP expert exchange bytes at the data-sheet link rate
    bytes_read: float
    flops: float


def step_seconds(
    *,
    physics: StepPhysics,
    coefficients: Coefficients,
    decode_tokens: float,
    prefill_tokens: float,
    decode_context_tokens: float,
    prefill_context_tokens: float,
) -> StepCost:
    """One engine step on one device: ``decode_tokens`` sequences each adding a token with
    ``decode_context_tokens`` of context, plus ``prefill_tokens`` of prompt chunks whose tokens
    see ``prefill_context_tokens`` of context on average."""
    tokens = decode_tokens + prefill_tokens
    decode_context_tokens = attended_context(physics=physics, context_tokens=decode_context_tokens)
    prefill_context_tokens = attended_context(physics=physics, context_tokens=prefill_context_tokens)
    touched = touched_expert_fraction(
        num_experts=physics.num_experts,
        experts_per_token=physics.experts_per_token,
        tokens=tokens * physics.moe_tokens_scale,
    )
    bytes_read = (
        physics.dense_weight_bytes
        + physics.expert_weight_bytes * touched
        + physics.kv_bytes_per_token * (decode_tokens * decode_context_tokens + prefill_tokens)
    )
    attention_flops = (
        physics.attention_flops_per_context_token * decode_tokens * decode_context_tokens
        + prefill_attention_flops(physics) * prefill_tokens * prefill_context_tokens
    )
    dense_flops = tokens * physics.gemm_flops_per_token + attention_flops
    expert_flops = tokens * physics.expert_flops_per_token
    flops = dense_flops + expert_flops
    memory = bytes_read / (physics.bandwidth_bytes_per_s * coefficients.bandwidth_efficiency)
    dense_compute = (tokens * physics.gemm_flops_per_token) / (
        physics.peak_flops_per_s * coefficients.compute_efficiency
    ) + attention_flops / (attention_rate(physics) * coefficients.compute_efficiency)
    expert_compute = expert_flops / (physics.peak_flops_per_s * coefficients.moe_compute_efficiency)
    compute = dense_compute + expert_compute
    wire = (
        tokens * physics.collective_bytes_per_token + prefill_tokens * physics.exchange_bytes_per_token
    ) / physics.link_bytes_per_s
    exchange = decode_tokens * physics.exchange_bytes_per_token / physics.link_bytes_per_s
    collective = (
        physics.collectives_per_step * coefficients.collective_latency_s
        + physics.pcie_ring_s
        + wire / coefficients.link_efficiency
        + exchange / coefficients.exchange_efficiency
    )
    return StepCost(
        seconds=coefficients.step_overhead_s
        + decode_tokens * coefficients.token_overhead_s
        + layer_floor_s(physics=physics, coefficients=coefficients)
        + memory
        + compute
        + collective
        + physics.host_weight_bytes / physics.host_link_bytes_per_s,
        memory_seconds=memory,
        compute_seconds=compute,
        dense_compute_seconds=dense_compute,
        expert_compute_seconds=expert_compute,
        collective_seconds=collective,
        wire_seconds=wire,
        exchange_seconds=exchange,
        bytes_read=bytes_read,
        flops=flops,
    )


def blend_costs(*, plain: StepCost, with_chunk: StepCost, share: float) -> StepCost:
    """The mean of steps of which ``share`` carry a prompt chunk and the rest only decode: chunked
    prefill puts a prompt's chunk into a few steps, not a sliver of it into every step (a sliver would
    make every decode step touch every expert and pay for the prompt's KV writes)."""
    keep = 1.0 - share
    return StepCost(
        seconds=keep * plain.seconds + share * with_chunk.seconds,
        memory_seconds=keep * plain.memory_seconds + share * with_chunk.memory_seconds,
        compute_seconds=keep * plain.compute_seconds + share * with_chunk.compute_seconds,
        dense_compute_seconds=keep * plain.dense_compute_seconds + share * with_chunk.dense_compute_seconds,
        expert_compute_seconds=keep * plain.expert_compute_seconds
        + share * with_chunk.expert_compute_seconds,
        collective_seconds=keep * plain.collective_seconds + share * with_chunk.collective_seconds,
        wire_seconds=keep * plain.wire_seconds + share * with_chunk.wire_seconds,
        exchange_seconds=keep * plain.exchange_seconds + share * with_chunk.exchange_seconds,
        bytes_read=keep * plain.bytes_read + share * with_chunk.bytes_read,
        flops=keep * plain.flops + share * with_chunk.flops,
    )
