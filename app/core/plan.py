"""Turn what a user names (a model id or config path, a device or a memory size, `--quantization`)
into the specs the estimator takes. Shared by the CLI, the web pages, the recommender and the doctor.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from app.core import catalog
from app.core.errors import PlannerError
from app.core.quantization_names import QUANTIZATION_FLAGS_FILE as QUANTIZATION_FLAGS_FILE
from app.core.quantization_names import quantization_rows
from app.core.quantization_names import vllm_quantization_name as vllm_quantization_name
from app.core.specs import GIB, DeviceSpec, ModelSpec, QuantSpec
from app.core.text import Text


def _quantization_flags(path: Path) -> dict[str, QuantSpec]:
    """`--quantization NAME` -> the QuantSpec vLLM plans with (quantization_flags.yaml, one row a name).

    E.g. ``awq: {method: int4, group_size: 128}`` reads as int4 weights in groups of 128 that vLLM
    reports as "awq"; ``nvfp4`` (a format people type) as modelopt_fp4 with groups of 16.
    """
    return {
        name: QuantSpec.model_validate({"source_name": name, **row})
        for name, row in quantization_rows(path).items()
    }


# `--quantization NAME` on an unquantized checkpoint: vLLM quantizes online (fp8) or expects a
# quantized checkpoint (the rest). Names as vLLM spells them.
QUANTIZATION_FLAGS: dict[str, QuantSpec] = _quantization_flags(QUANTIZATION_FLAGS_FILE)


def resolve_model(name_or_path: str) -> ModelSpec:
    """A catalog id/alias, or a path to a config.json or a folder holding one."""
    text = (name_or_path or "").strip()
    if not text:
        raise PlannerError("model", Text("no model given"))
    path = Path(text)
    if ("/" in text or text.endswith(".json")) and path.exists():
        return catalog.load_model_config_file(path)
    return catalog.find_model(text)


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


CustomPlatform = Literal["cuda", "rocm", "npu"]


def custom_device(memory_gib: float, platform: CustomPlatform = "cuda") -> DeviceSpec:
    """A device known only by the memory the runtime reports and its stack: CUDA is assumed an SM90-class GPU;
    ROCm has no CUDA compute capability (its rules are ROCm's: backends._rocm_choice, hipGraphs by release,
    fp8 KV through ROCM_ATTN / TRITON_ATTN, RocmPlatform.supports_fp8 on CDNA and RDNA); an NPU is an Ascend
    die (no fp8 KV, vllm-ascend's budget)."""
    if not MIN_DEVICE_MEMORY_GIB <= memory_gib <= MAX_DEVICE_MEMORY_GIB:
        raise PlannerError("device_memory_gib", Text("must be between 1 and 4096 GiB"))
    name, capability, fp8_kv = {
        "cuda": ("GPU (assumed CUDA SM 9.0)", "9.0", True),
        "rocm": ("GPU (ROCm)", None, True),
        "npu": ("NPU (Ascend)", None, False),
    }[platform]
    return DeviceSpec(
        id=f"custom-{memory_gib:g}gib" + ("" if platform == "cuda" else f"-{platform}"),
        name=f"Custom {memory_gib:g} GiB {name}",
        vendor="custom",
        platform=platform,
        memory_total_bytes=int(memory_gib * GIB),
        compute_capability=capability,
        fp8_kv=fp8_kv,
    )


CUSTOM_PLATFORMS: tuple[CustomPlatform, ...] = ("cuda", "rocm", "npu")


def resolve_device(
    name: str | None, memory_gib: float | None = None, *, platform: str | None = None
) -> DeviceSpec:
    """A catalog device, or (with ``memory_gib``) a custom device of that size on ``platform`` (default CUDA)."""
    if platform is not None and memory_gib is None:
        raise PlannerError("device_platform", Text("--device-platform goes with --device-memory-gib"))
    if memory_gib is not None:
        stack = next((p for p in CUSTOM_PLATFORMS if p == (platform or "cuda").strip().lower()), None)
        if stack is None:
            raise PlannerError(
                "device_platform",
                Text(
                    "must be one of {platforms}, got {platform!r}",
                    platforms=", ".join(CUSTOM_PLATFORMS),
                    platform=platform,
                ),
            )
        return custom_device(memory_gib, stack)
    if not name:
        raise PlannerError("device", Text("give --device ID or --device-memory-gib X"))
    return catalog.find_device(name)
