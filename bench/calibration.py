"""Real vLLM start-up figures (bench/data/calibration/vllm_logs.jsonl) mapped onto planner inputs.

Used by the exact-replay tests, bench/calibrate.py (fits the measured-part models) and
bench/accuracy.py (the published accuracy report). Not imported by the web app.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core import catalog
from app.core.errors import PlannerError
from app.core.plan import apply_quantization_flag, custom_device
from app.core.specs import GIB, DeviceSpec, ModelSpec, ServeConfig

REPO_ROOT = Path(__file__).resolve().parents[1]
# a verbatim copy of the shared calibration set, provenance in bench/data/calibration/README.md
DEFAULT_LOGS = REPO_ROOT / "bench" / "data" / "calibration" / "vllm_logs.jsonl"
# records this project found in public threads itself (same schema, each with its source)
EXTRA_LOGS = REPO_ROOT / "bench" / "data" / "extra_calibration.jsonl"
PRINTED_GIB_HALF_STEP = 0.005 * GIB  # "58.11 GiB" means [58.105, 58.115) GiB

# log `quantization` field -> vLLM --quantization name the planner understands
_QUANT_NAMES = {"fp8": "fp8", "gptq_marlin": "gptq_marlin", "gptq": "gptq", "mxfp4": "mxfp4", "awq": "awq"}


@dataclass(frozen=True)
class Case:
    id: str
    record: dict[str, Any]
    model: ModelSpec
    device: DeviceSpec
    serve: ServeConfig
    vllm_version: str

    @property
    def reported(self) -> dict[str, Any]:
        rep: dict[str, Any] = self.record["reported"]
        return rep


# A log that prints no version: V0 logs are read with 0.6.6's rules; V1 logs with 0.19.0's, whose
# two-line capacity format and single-group formulas hold from 0.10 to 0.27.
_UNKNOWN_VERSION_BY_ENGINE = {"v0": "0.6.6", "v1": "0.19.0"}


def logs_path() -> Path:
    return Path(os.environ.get("KVPLAN_CALIBRATION_LOGS", DEFAULT_LOGS))


def load_records(path: Path | None = None) -> list[dict[str, Any]]:
    """The shared calibration set plus this project's own records (bench/data/extra_calibration.jsonl)."""
    records: list[dict[str, Any]] = []
    for source in (path or logs_path(), EXTRA_LOGS):
        if source.exists():
            with source.open(encoding="utf-8") as fh:
                records += [json.loads(line) for line in fh if line.strip()]
    return records


def _model_for(record: dict[str, Any]) -> ModelSpec | None:
    name = re.sub(r"\s*\(.*\)\s*$", "", str(record.get("model") or "")).strip()
    if not name:
        return None
    try:
        model = catalog.find_model(name)
    except PlannerError:
        return None
    quant = record.get("quantization")
    if model.quantization is None and quant in _QUANT_NAMES:
        model = apply_quantization_flag(model, _QUANT_NAMES[quant])
    return model


def _device_for(record: dict[str, Any]) -> DeviceSpec | None:
    gpu = str(record.get("gpu") or "")
    total = record.get("gpu_mem_gib")
    base: DeviceSpec | None = None
    for key in ("H100", "A100", "RTX 3090", "RTX 4090", "L40S", "H200", "B200"):
        if key.lower() in gpu.lower():
            base = catalog.find_device(key.lower().replace(" ", ""))
            break
    if base is None and total and float(total) >= 79:
        base = catalog.find_device("h100")  # "80GB GPU (total_gpu_memory 79.19GiB)"
    if base is None:
        return None
    if total:
        # the total the runtime printed beats the catalog's typical figure
        base = base.model_copy(update={"memory_total_bytes": int(float(total) * GIB)})
    return base


def _version_for(record: dict[str, Any]) -> str | None:
    version = record.get("vllm_version")
    if version:
        return str(version)
    return None


def case_for(
    record: dict[str, Any], *, require_version: bool = True, require_device: bool = True
) -> Case | None:
    """The planner inputs of one record, or None when the record lacks something essential.

    ``require_device=False`` stands in an SM90-class 80 GiB CUDA GPU when the log names none: enough
    for replaying the KV arithmetic of a non-MLA model, which does not depend on the device's size.
    """
    model = _model_for(record)
    device = _device_for(record)
    if device is None and not require_device and model is not None and model.mla is None:
        device = custom_device(80.0)
    version = _version_for(record)
    if model is None or device is None or (require_version and version is None):
        return None
    fields: dict[str, Any] = {}
    for key in (
        "max_model_len",
        "tensor_parallel_size",
        "pipeline_parallel_size",
        "gpu_memory_utilization",
        "block_size",
        "max_num_seqs",
        "max_num_batched_tokens",
    ):
        if record.get(key) is not None:
            fields[key] = record[key]
    if record.get("kv_cache_dtype") not in (None, "auto"):
        fields["kv_cache_dtype"] = record["kv_cache_dtype"]
    dtype = record.get("dtype")
    if dtype in ("float16", "bfloat16", "float32") and dtype != model.torch_dtype:
        fields["dtype"] = dtype  # the engine config printed a dtype other than the checkpoint's
    if record.get("enforce_eager") is not None:
        fields["enforce_eager"] = bool(record["enforce_eager"])
    if record.get("enable_prefix_caching") is not None:
        fields["enable_prefix_caching"] = bool(record["enable_prefix_caching"])
    try:
        serve = ServeConfig(**fields)
    except ValueError:
        return None
    return Case(
        id=record["id"],
        record=record,
        model=model,
        device=device,
        serve=serve,
        vllm_version=version or _UNKNOWN_VERSION_BY_ENGINE.get(record.get("engine"), "0.6.6"),
    )


def cases(*, require_version: bool = True, require_device: bool = True) -> list[Case]:
    out = []
    for record in load_records():
        case = case_for(record, require_version=require_version, require_device=require_device)
        if case is not None:
            out.append(case)
    return out
