"""Turn what a user names (a model id or config path, a device or a memory size, `--quantization`)
into the specs the estimator takes. Shared by the CLI, the web pages, the recommender and the doctor.
"""

from __future__ import annotations

from pathlib import Path

from app.core import catalog
from app.core.errors import PlannerError
from app.core.specs import GIB, DeviceSpec, ModelSpec, QuantMethod, QuantSpec
from app.core.text import Text

# `--quantization NAME` on an unquantized checkpoint: vLLM quantizes online (fp8) or expects a
# quantized checkpoint (the rest). Names as vLLM spells them.
QUANTIZATION_FLAGS: dict[str, QuantSpec] = {
    "fp8": QuantSpec(method=QuantMethod.FP8, source_name="fp8"),
    "fbgemm_fp8": QuantSpec(method=QuantMethod.FP8, source_name="fbgemm_fp8"),
    "compressed-tensors": QuantSpec(method=QuantMethod.INT8, source_name="compressed-tensors"),
    "awq": QuantSpec(method=QuantMethod.INT4, group_size=128, source_name="awq"),
    "awq_marlin": QuantSpec(method=QuantMethod.INT4, group_size=128, source_name="awq_marlin"),
    "gptq": QuantSpec(method=QuantMethod.INT4, group_size=128, source_name="gptq"),
    "gptq_marlin": QuantSpec(method=QuantMethod.INT4, group_size=128, source_name="gptq_marlin"),
    "bitsandbytes": QuantSpec(method=QuantMethod.INT4, group_size=64, source_name="bitsandbytes"),
    "mxfp4": QuantSpec(method=QuantMethod.MXFP4, source_name="mxfp4"),
    "modelopt_fp4": QuantSpec(method=QuantMethod.NVFP4, source_name="modelopt_fp4"),
    "ascend": QuantSpec(method=QuantMethod.INT8, source_name="ascend"),
    "fp_quant": QuantSpec(method=QuantMethod.MXFP4, source_name="fp_quant"),
    "experts_int8": QuantSpec(method=QuantMethod.INT8, source_name="experts_int8"),
    # what people type for a format rather than a vLLM method name
    "nvfp4": QuantSpec(method=QuantMethod.NVFP4, group_size=16, source_name="modelopt_fp4"),
    "int4": QuantSpec(method=QuantMethod.INT4, group_size=128, source_name="compressed-tensors"),
    "w4a16": QuantSpec(method=QuantMethod.INT4, group_size=128, source_name="compressed-tensors"),
    "int8": QuantSpec(method=QuantMethod.INT8, source_name="compressed-tensors"),
    "w8a8": QuantSpec(method=QuantMethod.INT8, source_name="compressed-tensors"),
}


def resolve_model(name_or_path: str) -> ModelSpec:
    """A catalog id/alias, or a path to a config.json or a folder holding one."""
    text = (name_or_path or "").strip()
    if not text:
        raise PlannerError("model", Text("no model given"))
    path = Path(text)
    if ("/" in text or text.endswith(".json")) and path.exists():
        return catalog.load_model_config_file(path)
    return catalog.find_model(text)


def vllm_quantization_name(name: str | None) -> str | None:
    """An alias as the method vLLM knows (nvfp4 -> modelopt_fp4), so a rendered command runs; other names
    unchanged."""
    if not name:
        return None
    known = QUANTIZATION_FLAGS.get(name.lower())
    return known.source_name if known is not None else name


def apply_quantization_flag(model: ModelSpec, quantization: str | None) -> ModelSpec:
    """A checkpoint's own quantization wins; the flag only adds one to an unquantized model."""
    if not quantization or model.quantization is not None:
        return model
    spec = QUANTIZATION_FLAGS.get(quantization.lower())
    if spec is None:
        raise PlannerError(
            "quantization",
            Text(
                "unknown --quantization {quantization!r}; known: {quantization_flags}",
                quantization=quantization,
                quantization_flags=", ".join(sorted(QUANTIZATION_FLAGS)),
            ),
        )
    return model.model_copy(update={"quantization": spec})


MIN_DEVICE_MEMORY_GIB = 1.0  # no accelerator vLLM serves on has less
MAX_DEVICE_MEMORY_GIB = 4096.0


def custom_device(memory_gib: float) -> DeviceSpec:
    """A device known only by the memory the runtime reports (assumed an SM90-class CUDA GPU)."""
    if not MIN_DEVICE_MEMORY_GIB <= memory_gib <= MAX_DEVICE_MEMORY_GIB:
        raise PlannerError("device_memory_gib", Text("must be between 1 and 4096 GiB"))
    return DeviceSpec(
        id=f"custom-{memory_gib:g}gib",
        name=f"Custom {memory_gib:g} GiB GPU (assumed CUDA SM 9.0)",
        vendor="custom",
        platform="cuda",
        memory_total_bytes=int(memory_gib * GIB),
        compute_capability="9.0",
        fp8_kv=True,
    )


def resolve_device(name: str | None, memory_gib: float | None = None) -> DeviceSpec:
    if memory_gib is not None:
        return custom_device(memory_gib)
    if not name:
        raise PlannerError("device", Text("give --device ID or --device-memory-gib X"))
    return catalog.find_device(name)
