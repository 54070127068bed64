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

GPTQ is not refused at such a shard (0.33.0 kernels/linear/mixed_precision/exllama.py can_implement checks the
full input only), so the rule names AWQ's method names alone. MoE experts take other paths (AutoAWQMoEMethod,
moe_wna16) and MLA's o_proj another shape: neither is checked here.
"""

from __future__ import annotations

from app.core.errors import InvalidServeConfigError
from app.core.specs import ModelSpec
from app.core.text import Text

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


def check_awq_shards(*, model: ModelSpec, tensor_parallel_size: int) -> None:
    """Raise when an AWQ group would straddle two ranks' input shards of a row-parallel layer.

    E.g. Llama-2-7B AWQ (group 128): down_proj's 11,008 inputs at TP 8 give 1,376 a rank = 10 x 128 + 96: refused;
    at TP 2, 5,504 = 43 x 128: served."""
    quant = model.quantization
    tp = tensor_parallel_size
    if quant is None or quant.source_name not in AWQ_METHOD_NAMES or tp == 1:
        return
    group = quant.group_size
    for layer, size in _row_parallel_inputs(model):
        if group >= size or group == model.hidden_size or size % tp:
            # one scale a row: the planner reads group_size -1 as the hidden size (hf_config/quantization.py
            # _group_size), vLLM as each layer's whole input; a group as wide as the input; size % TP fails elsewhere
            continue
        shard = size // tp
        if shard % group:
            raise InvalidServeConfigError(
                "tensor_parallel_size",
                Text(
                    "At TP {tp} each rank holds {shard} of {layer}'s {size} inputs, which is not a multiple of the AWQ group size {group}: vLLM cannot build the layer (The input size is not aligned with the quantized weight shape. This can be caused by too large tensor parallel size.). Use a TP that divides {layer}'s inputs into whole groups.",
                    tp=tp,
                    shard=shard,
                    layer=layer,
                    size=size,
                    group=group,
                ),
            )
