"""Quantized weights vLLM cannot split at a tensor-parallel size: an AWQ group across two ranks' shards.

A row-parallel linear (o_proj, down_proj) gives each rank ``input_size / TP`` input columns. vLLM's AWQ layers need
that shard to hold whole groups:

- 0.33.0 layers/quantization/auto_awq.py AutoAWQConfig.get_quant_method: Marlin only if
  utils/marlin_utils.py check_marlin_supports_layer(allow_tile_padding=True) holds (group_size == -1, a group as
  wide as the input, or input_size_per_partition % group_size == 0), else AutoAWQLinearMethod, whose create_weights
  (BaseAWQLinearMethod) raises "The input size is not aligned with the quantized weight shape. This can be caused
  by too large tensor parallel size.";
- 0.10.2 awq_marlin.py falls back to awq.py AWQLinearMethod, which raises the same; 0.6.3 awq.py raises it and
  Marlin's verify_marlin_supports_shape raises for a straddling group too.

GPTQ and compressed-tensors W4A16 (AutoGPTQLinearMethod, CompressedTensorsWNA16) ask 0.33.0
kernels/linear/__init__.py choose_mp_linear_kernel for a kernel (check_wna16_shards); on CUDA, in order: CutlassW4A8
(fp8 activations only), Machete (SM 9.0; kernels/linear/mixed_precision/machete.py: group -1/64/128, an input shard a
multiple of 64 and an output of 128, no group check), Marlin ("in_features per partition N is not divisible by
group_size"), Conch (needs conch-triton-kernels), Exllama (float16 activations only; checks the full input alone),
TritonW4A16 (needs whole groups a rank), Humming (needs the humming package). So a straddled group is served under
float16 activations (Exllama) or by Machete on SM 9.0, and otherwise refused: "Failed to find a kernel that can
implement the WNA16 linear layer." Releases before 0.33.0 (0.10.2 adds AllSpark and BitBLAS) are not read for it.
MoE experts take other paths (AutoAWQMoEMethod,
moe_wna16) and MLA's o_proj another shape: neither is checked here.

FP8 block quantization (weight_block_size [block_n, block_k]: one scale per block_n output rows x block_k input
columns) cannot cut a block between two ranks (check_fp8_block_shards):

- a row-parallel linear's input shard must be whole block_k (0.33.0 layers/quantization/utils/fp8_utils.py
  validate_fp8_block_shape, called by Fp8LinearMethod and CompressedTensorsW8A8Fp8.create_weights: "Weight
  input_size_per_partition = N is not divisible by weight quantization block_k = K."; 0.7.3 and 0.10.2 fp8.py
  the same test inline);
- a column-parallel linear's output partitions must be whole block_n ("Weight output_partition_size = N is not
  divisible by weight quantization block_n = K."), except that from 0.14.0 a merged layer (gate_up_proj,
  qkv_proj) of an Fp8Config checkpoint whose partitions are not whole blocks is let through
  (rules.fp8_merged_block_mismatch_allowed; CompressedTensorsConfig has no weight_block_size, so not there);
- the routed experts' per-rank intermediate must be whole block_n, then whole block_k (fp8_utils.py
  validate_fp8_block_shape_moe: "The output_size of gate's and up's weight = N is not divisible by weight
  quantization block_n = K." / "The input_size of down's weight = N ..."), except that from 0.30.0 Fp8MoEMethod
  refines the scale blocks to gcd(block_n, block_k, shard, hidden) when that is >= 32 (rules.fp8_moe_block_refine;
  0.33.0 fused_moe/oracle/fp8.py refine_fp8_moe_block_shape; the Triton experts take any block shape). The
  compressed-tensors MoE method (compressed_tensors_moe_w8a8_fp8.py) still validates without refining. With
  --enable-expert-parallel the experts are whole on their ranks (no TP split), so only the dense layers count.
DeepSeek-V4's FP8 (deepseek_v4_fp8) resizes its shared expert to whole blocks in its model code and keeps MXFP4
experts: not checked. Single (unmerged) column-parallel linears (MLA's q_b_proj, kv_b_proj) and MLA's o_proj are
not checked.
"""

from __future__ import annotations

import math

from app.core.errors import InvalidServeConfigError
from app.core.kv import kv_heads_per_rank
from app.core.specs import DeviceSpec, ModelSpec, QuantMethod, QuantSpec
from app.core.text import Text
from app.core.versions import VersionRules

AWQ_METHOD_NAMES = frozenset(
    {"awq", "awq_marlin", "auto_awq"}
)  # 0.33.0 quantization/__init__.py: AutoAWQConfig


def _row_parallel_inputs(model: ModelSpec) -> list[tuple[str, int]]:
    """(layer, full input size) of the dense row-parallel linears whose shard the rule checks."""
    out: list[tuple[str, int]] = []
    if model.mla is None and model.layer_attention is None:
        out.append(("o_proj", model.num_attention_heads * model.head_size_v))
    dense_mlp = model.num_experts == 0 or (
        model.moe_layers is not None and model.moe_layers < model.num_layers
    )
    if dense_mlp and model.intermediate_size:
        out.append(("down_proj", model.intermediate_size))
    return out


def _split_groups(model: ModelSpec, tp: int, group: int) -> list[tuple[str, int, int]]:
    """(layer, full input size, per-rank shard) of the row-parallel linears whose shard at ``tp`` cuts a
    quantization group of ``group`` input columns (the AWQ and the GPTQ / W4A16 rules' one test). Skipped: one
    scale a row (the planner reads group_size -1 as the hidden size, hf_config/quantization.py _group_size; vLLM
    as each layer's whole input), a group as wide as the input, and a size TP does not divide (that fails
    elsewhere first)."""
    return [
        (layer, size, size // tp)
        for layer, size in _row_parallel_inputs(model)
        if not (group >= size or group == model.hidden_size or size % tp) and (size // tp) % group
    ]


def check_awq_shards(*, model: ModelSpec, tensor_parallel_size: int, rules: VersionRules) -> None:
    """Raise when an AWQ group would straddle two ranks' input shards of a row-parallel layer; likewise an
    asymmetric GPTQ group (zero points) before 0.22.0, which gptq.py GPTQConfig serves and whose
    GPTQLinearMethod.create_weights raises the same "The input size is not aligned ..." (0.21.0 wheel; from
    0.22.0 vLLM refuses `sym: false` outright, VersionRules.gptq_symmetric_only).

    E.g. Llama-2-7B AWQ (group 128): down_proj's 11,008 inputs at TP 8 give 1,376 a rank = 10 x 128 + 96: refused;
    at TP 2, 5,504 = 43 x 128: served."""
    quant = model.quantization
    tp = tensor_parallel_size
    if quant is None or tp == 1:
        return
    if quant.source_name in AWQ_METHOD_NAMES:
        method = "AWQ"
    elif quant.source_name == "gptq" and quant.zero_points and not rules.gptq_symmetric_only:
        method = "GPTQ"
    else:
        return
    group = quant.group_size
    for layer, size, shard in _split_groups(model, tp, group):
        raise InvalidServeConfigError(
            "tensor_parallel_size",
            Text(
                "At TP {tp} each rank holds {shard:,} of {layer}'s {size:,} inputs, which is not a multiple of the {method} group size {group:,}: vLLM cannot build the layer (The input size is not aligned with the quantized weight shape. This can be caused by too large tensor parallel size.). Use a TP that divides {layer}'s inputs into whole groups.",
                tp=tp,
                shard=shard,
                layer=layer,
                size=size,
                method=method,
                group=group,
            ),
        )


# --- FP8 block quantization ------------------------------------------------------------------------------------
FP8_BLOCK_METHOD_NAMES = frozenset({"fp8", "compressed-tensors"})  # Fp8Config, CompressedTensorsW8A8Fp8
FP8_CONFIG_NAME = "fp8"  # the one whose merged layers and experts get 0.14.0's / 0.30.0's allowances
MIN_REFINED_BLOCK = 32  # 0.33.0 refine_fp8_moe_block_shape: a refined block below 32 is not used


def _fp8_linears(model: ModelSpec, tp: int) -> list[tuple[str, int, int, bool]]:
    """(layer, full size, per-rank shard, row-parallel) of the TP-split linears in the order vLLM builds a decoder
    layer, so the first refusal is the one it raises: qkv_proj's partitions (q heads / TP, the KV heads a rank,
    x head size) and o_proj's input, then gate_up_proj's partition (I / TP) and down_proj's input for the dense
    MLP and the shared experts. MLA's attention is left out (the spec keeps the latent, not v_head_dim)."""
    out: list[tuple[str, int, int, bool]] = []
    if model.mla is None and model.layer_attention is None:
        q = model.num_attention_heads * model.head_size
        kv = kv_heads_per_rank(total_kv_heads=model.num_kv_heads, tensor_parallel_size=tp)
        out += [
            ("qkv_proj", q, q // tp, False),
            ("qkv_proj", model.num_kv_heads * model.head_size, kv * model.head_size, False),
            (
                "o_proj",
                model.num_attention_heads * model.head_size_v,
                model.num_attention_heads * model.head_size_v // tp,
                True,
            ),
        ]
    dense = model.num_experts == 0 or (model.moe_layers is not None and model.moe_layers < model.num_layers)
    mlps = [("", model.intermediate_size if dense else 0)]
    mlps.append(("shared_experts.", model.shared_expert_size if model.num_experts else 0))
    for prefix, size in mlps:
        if size and size % tp == 0:  # otherwise vLLM's divide() fails first
            out += [
                (prefix + "gate_up_proj", size, size // tp, False),
                (prefix + "down_proj", size, size // tp, True),
            ]
    return out


def _refuse(
    *, tp: int, layer: str, size: int, shard: int, inputs: bool, block: tuple[int, int], vllm: str
) -> None:
    params = {
        "tp": tp,
        "shard": shard,
        "layer": layer,
        "size": size,
        "block_n": block[0],
        "block_k": block[1],
    }
    text = (
        Text(
            "At TP {tp} each rank holds {shard:,} of {layer}'s {size:,} inputs, which is not a whole number of FP8 weight blocks (weight_block_size [{block_n}, {block_k}]): vLLM cannot build the layer ({vllm}). Use a TP that splits {layer} into whole blocks.",
            vllm=vllm,
            **params,
        )
        if inputs
        else Text(
            "At TP {tp} each rank holds {shard:,} of {layer}'s {size:,} outputs, which is not a whole number of FP8 weight blocks (weight_block_size [{block_n}, {block_k}]): vLLM cannot build the layer ({vllm}). Use a TP that splits {layer} into whole blocks.",
            vllm=vllm,
            **params,
        )
    )
    raise InvalidServeConfigError("tensor_parallel_size", text)


def _check_fp8_experts(
    *, model: ModelSpec, quant: QuantSpec, block: tuple[int, int], tp: int, rules: VersionRules
) -> None:
    size = model.moe_intermediate_size
    if size % tp:
        return
    shard = size // tp
    block_n, block_k = block
    if shard % block_n == 0 and shard % block_k == 0:
        return
    refines = rules.fp8_moe_block_refine and quant.source_name == FP8_CONFIG_NAME
    if refines and math.gcd(block_n, block_k, shard, model.hidden_size) >= MIN_REFINED_BLOCK:
        return  # e.g. 768 / 8 = 96: gcd(128, 128, 96, 2,048) = 32, scales refined to 32 x 32
    if shard % block_n:
        vllm = f"The output_size of gate's and up's weight = {shard} is not divisible by weight quantization block_n = {block_n}."
        _refuse(
            tp=tp, layer="experts.gate_up_proj", size=size, shard=shard, inputs=False, block=block, vllm=vllm
        )
    vllm = f"The input_size of down's weight = {shard} is not divisible by weight quantization block_k = {block_k}."
    _refuse(tp=tp, layer="experts.down_proj", size=size, shard=shard, inputs=True, block=block, vllm=vllm)


def check_fp8_block_shards(
    *, model: ModelSpec, tensor_parallel_size: int, expert_parallel: bool, rules: VersionRules
) -> None:
    """Raise when a TP shard would cut an FP8 weight block (module docstring: which layers, from which release).

    E.g. Qwen3-30B-A3B-FP8 (block [128, 128], experts 768 wide): at TP 8 each rank holds 96 of every expert's
    768 channels: refused by 0.27.1 (96 % 128), served by 0.30.0+ (refined to 32 x 32); Qwen3-8B-FP8 at TP 8:
    down_proj 12,288 / 8 = 1,536 = 12 x 128 and o_proj 4,096 / 8 = 512 = 4 x 128: served."""
    quant = model.quantization
    tp = tensor_parallel_size
    if quant is None or quant.weight_block_size is None or tp == 1:
        return
    if quant.source_name not in FP8_BLOCK_METHOD_NAMES:
        return
    block = quant.weight_block_size
    block_n, block_k = block
    merged_allowed = rules.fp8_merged_block_mismatch_allowed and quant.source_name == FP8_CONFIG_NAME
    for layer, size, shard, row in _fp8_linears(model, tp):
        if row and shard % block_k:
            vllm = f"Weight input_size_per_partition = {shard} is not divisible by weight quantization block_k = {block_k}."
            _refuse(tp=tp, layer=layer, size=size, shard=shard, inputs=True, block=block, vllm=vllm)
        if not row and not merged_allowed and shard % block_n:
            vllm = f"Weight output_partition_size = {shard} is not divisible by weight quantization block_n = {block_n}."
            _refuse(tp=tp, layer=layer, size=size, shard=shard, inputs=False, block=block, vllm=vllm)
    if model.num_experts and model.moe_intermediate_size and not expert_parallel:
        _check_fp8_experts(model=model, quant=quant, block=block, tp=tp, rules=rules)


# --- GPTQ / compressed-tensors WNA16 ---------------------------------------------------------------------------
WNA16_METHOD_NAMES = frozenset(
    {"gptq", "compressed-tensors", "inc"}
)  # 0.33.0 auto_gptq.py, compressed_tensors_wNa16.py; inc: auto-round's GPTQ packing is AutoGPTQLinearMethod
# (0.33.0 inc/schemes/inc_wna16_linear.py) and its AWQ packing AutoAWQMarlinLinearMethod with no per-layer fallback:
# both pick a kernel with choose_mp_linear_kernel (zero points for AWQ), as compressed-tensors WNA16 does
MACHETE_SM = 90  # machete.py: is_device_capability(90)
MACHETE_INPUT_TILE, MACHETE_OUTPUT_TILE = 64, 128  # machete_utils.py MACHETE_PREPACKED_BLOCK_SHAPE
MACHETE_GROUP_SIZES = (64, 128)  # query_machete_supported_group_sizes(float16 / bfloat16), -1 aside
EXLLAMA_ACT_DTYPE = "float16"  # exllama.py: "Exllama only supports float16 activations"
CUDA_BF16_MIN_SM = 80  # 0.33.0 platforms/cuda.py supported_dtypes: [float16, float32] below capability 8.0


def activation_dtype(*, act_dtype: str, dtype_flag: str, device: DeviceSpec) -> str:
    """The activations' dtype vLLM serves on ``device``: under --dtype auto a bfloat16 checkpoint on a CUDA card
    below 8.0 (T4, V100) runs float16 (0.33.0 config/model.py _resolve_auto_dtype: the config's dtype only if the
    platform supports it, else its first, "Falling back to torch.float16 for compatibility")."""
    sm = device.sm
    below_bf16 = device.platform == "cuda" and sm is not None and sm < CUDA_BF16_MIN_SM
    return "float16" if dtype_flag == "auto" and act_dtype == "bfloat16" and below_bf16 else act_dtype


def _machete_takes(*, device: DeviceSpec, shard: int, outputs: int, group: int) -> bool:
    return (
        device.sm == MACHETE_SM
        and group in MACHETE_GROUP_SIZES
        and shard % MACHETE_INPUT_TILE == 0
        and outputs % MACHETE_OUTPUT_TILE == 0
    )


def check_wna16_shards(
    *, model: ModelSpec, tensor_parallel_size: int, act_dtype: str, device: DeviceSpec, rules: VersionRules
) -> None:
    """Raise when a GPTQ / compressed-tensors W4A16 group straddles two ranks' input shards and no 0.33.0 CUDA
    kernel takes it (module docstring). E.g. Llama-2-7B GPTQ (group 128) at TP 8: down_proj's 1,376 inputs a rank
    = 10 x 128 + 96; float16 activations: Exllama serves it; bfloat16 (--dtype bfloat16): Marlin and Triton need
    whole groups, Exllama float16, Machete 1,376 % 64 = 32: refused on an A100 and on an H100."""
    quant = model.quantization
    tp = tensor_parallel_size
    if quant is None or quant.source_name not in WNA16_METHOD_NAMES or tp == 1:
        return
    weight_only = quant.method == QuantMethod.INT4 or (
        quant.source_name == "gptq" and quant.method == QuantMethod.INT8
    )
    if not weight_only or not rules.wna16_split_group_needs_fp16 or device.platform != "cuda":
        return
    if act_dtype == EXLLAMA_ACT_DTYPE and not quant.zero_points:
        return  # Exllama takes symmetric weights only (uint4b8, uint8b128: exllama.py SUPPORTED_QUANT_TYPES)
    group = quant.group_size
    for layer, size, shard in _split_groups(model, tp, group):
        if _machete_takes(device=device, shard=shard, outputs=model.hidden_size, group=group):
            continue
        if quant.zero_points:
            raise InvalidServeConfigError(
                "tensor_parallel_size",
                Text(
                    "At TP {tp} each rank holds {shard:,} of {layer}'s {size:,} inputs, which is not a multiple of the group size {group:,}, and no vLLM kernel takes a group split across ranks for asymmetric weights (zero points: Marlin and Triton need whole groups a rank, Exllama symmetric weights, Machete an SM 9.0 device and a shard of 64s): vLLM cannot build the layer (Failed to find a kernel that can implement the WNA16 linear layer.). Use a TP that divides {layer}'s inputs into whole groups.",
                    tp=tp,
                    shard=shard,
                    layer=layer,
                    size=size,
                    group=group,
                ),
            )
        raise InvalidServeConfigError(
            "tensor_parallel_size",
            Text(
                "At TP {tp} each rank holds {shard:,} of {layer}'s {size:,} inputs, which is not a multiple of the group size {group:,}, and with {act_dtype} activations no vLLM kernel takes a group split across ranks (Marlin and Triton need whole groups a rank, Exllama float16 activations, Machete an SM 9.0 device and a shard of 64s): vLLM cannot build the layer (Failed to find a kernel that can implement the WNA16 linear layer.). Use a TP that divides {layer}'s inputs into whole groups, or --dtype float16.",
                tp=tp,
                shard=shard,
                layer=layer,
                size=size,
                group=group,
                act_dtype=act_dtype,
            ),
        )
