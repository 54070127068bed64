"""Intel auto-round checkpoints (``quant_method: "auto-round"``) as vLLM's INC method loads them.

vLLM has no method named "auto-round": ``INCConfig.override_quantization_method`` turns a checkpoint's
``quant_method: "auto-round"`` into ``inc`` (0.18.0 ``layers/quantization/inc.py``; 0.33.0
``layers/quantization/inc/inc.py``, both read). ``INCConfig.__init__`` refuses a width, data type or packing format
outside its sets. On CUDA the integer layers are GPTQ or AWQ layers under another name (0.33.0
``inc/schemes/inc_wna16_linear.py``): ``auto_round:auto_gptq`` (the default packing) builds
``AutoGPTQLinearMethod`` for 4- or 8-bit symmetric weights, and raises NotImplementedError for asymmetric ones
("Only 4-bit and 8-bit symmetric quantization is supported with Marlin kernels"; 0.18.0 still fell back to
GPTQConfig for them); ``auto_round:auto_awq`` builds the AutoAWQ methods (zero points). Only the integer formats are
planned here; auto-round's FP8 / MXFP / NVFP exports are refused as formats the planner does not size.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.errors import ConfigError, PlannerError
from app.core.specs import QuantMethod, QuantSpec
from app.core.text import Text
from app.core.versions import parse_version, resolve_version

AUTO_ROUND_METHOD = "auto-round"  # the checkpoint's name; vLLM's is INC_METHOD
INC_METHOD = "inc"
INC_INT_BITS = (4, 8)  # the widths Marlin / GPTQ / AWQ take on CUDA (0.33.0 inc_wna16_linear.py type maps)
GPTQ_PACKING = "auto_round:auto_gptq"  # INCConfig's default packing_format (0.18.0 and 0.33.0)
AWQ_PACKING = "auto_round:auto_awq"
# 0.33.0 inc_wna16_linear.py _build_gptq_method raises for sym false; 0.18.0 inc.py apply_gptq_quant_layer served it
# through GPTQConfig. The releases between were not read: the refusal is dated at the first release read with it.
INC_ASYM_GPTQ_REFUSED_FROM = "0.33.0"


def _refuses_asym_gptq(vllm_version: str | None) -> bool:
    if not vllm_version:
        return True
    try:
        release = resolve_version(vllm_version).release
    except PlannerError:
        return True
    return release >= parse_version(INC_ASYM_GPTQ_REFUSED_FROM)


def auto_round_spec(q: Mapping[str, Any], *, bits: int, group: int, vllm_version: str | None) -> QuantSpec:
    """The QuantSpec of an integer auto-round checkpoint (``bits`` / ``group`` already read), or a ConfigError
    naming the field INCConfig or its CUDA linear scheme refuses."""
    data_type = str(q.get("data_type", "int")).lower()
    if data_type != "int":
        raise ConfigError(
            "quantization_config.data_type",
            Text(
                "auto-round data_type {data_type!r}: the planner sizes auto-round's integer formats only (vLLM's INC "
                "method also loads its FP8 and MX formats)",
                data_type=data_type,
            ),
        )
    packing = str(q.get("packing_format", GPTQ_PACKING))
    if packing not in (GPTQ_PACKING, AWQ_PACKING):
        raise ConfigError(
            "quantization_config.packing_format",
            Text(
                "auto-round packing_format {packing!r}: the planner sizes {gptq!r} and {awq!r} only",
                packing=packing,
                gptq=GPTQ_PACKING,
                awq=AWQ_PACKING,
            ),
        )
    if bits not in INC_INT_BITS:
        raise ConfigError(
            "quantization_config.bits",
            Text(
                "auto-round bits {bits}: vLLM's INC method loads 4- and 8-bit integer weights on CUDA",
                bits=bits,
            ),
        )
    symmetric = q.get("sym", True) is not False
    if packing == GPTQ_PACKING and not symmetric and _refuses_asym_gptq(vllm_version):
        raise ConfigError(
            "quantization_config.sym",
            Text(
                'vLLM cannot load an asymmetric (sym: false) auto-round checkpoint packed as {packing}: "INC '
                "quantization with bits={bits}, sym=False is not supported. Only 4-bit and 8-bit symmetric "
                'quantization is supported with Marlin kernels." (inc_wna16_linear.py)',
                packing=packing,
                bits=bits,
            ),
        )
    method = QuantMethod.INT4 if bits == 4 else QuantMethod.INT8
    zero_points = packing == AWQ_PACKING or not symmetric
    return QuantSpec(method=method, group_size=group, source_name=INC_METHOD, zero_points=zero_points)
