"""The built-in catalog: model_specs/*.yaml and device_specs/devices.yaml, loaded once.

Every file is validated at first use (frozen pydantic models, ``extra="forbid"``) and every
model file is turned into a :class:`ModelSpec` through :func:`model_spec_from_hf_config`, so a
typo in the data fails at start-up rather than producing a wrong number.

Lookups are case-insensitive. A model resolves by its HF id, an alias, or the part after the
org slash of either; a pre-quantized repo name (``RedHatAI/...-FP8-dynamic``, ``...-AWQ``,
``...-GPTQ-Int4``) resolves to its base model with the matching :class:`QuantSpec`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml  # type: ignore[import-untyped]  # no types-PyYAML in the lock file
from pydantic import Field, ValidationError

from app.core.errors import ConfigError, UnknownDeviceError, UnknownModelError
from app.core.hf_config import model_spec_from_hf_config
from app.core.specs import DeviceSpec, Frozen, LayerKind, MambaKind, ModelSpec, QuantMethod, QuantSpec
from app.core.text import Msg, Text
from app.resources import Data, directory

MODEL_SPECS_DIR = directory(Data.MODEL_SPECS)
DEVICES_FILE = directory(Data.DEVICE_SPECS) / "devices.yaml"
# hand-curated devices the generated file lacks (310P, 950, GB10): read after it, same schema
ADDED_DEVICES_FILE = directory(Data.DEVICE_SPECS) / "devices_added.yaml"
CONFIG_FILE_NAME = "config.json"
SAFETENSORS_INDEX_FILE_NAME = "model.safetensors.index.json"
HF_QUANT_CONFIG_FILE_NAME = "hf_quant_config.json"


class ModelSpecFile(Frozen):
    """One model_specs/*.yaml file: the HF config.json plus provenance."""

    id: str = Field(min_length=3, pattern=r"^[^/\s]+/[^/\s]+$")  # HF "org/name"
    aliases: tuple[str, ...] = ()
    source: tuple[str, ...] = Field(min_length=1)
    confidence: Literal["verified", "likely", "recalled"]
    unverified_fields: tuple[str, ...] = ()
    params_total: int = Field(gt=0)
    params_active: int | None = Field(default=None, gt=0)
    # vision tower / projector of a multimodal checkpoint: not in the text config's count, but vLLM
    # loads it with the language model, so it is part of the measured weights
    vision_params: int = Field(default=0, ge=0)
    # num_key_value_heads in another published revision of config.json (Llama-3.1-405B's early and
    # FP8 copies: 16, heads duplicated for 16-way model parallelism; the current config says 8)
    other_revision_kv_heads: int | None = Field(default=None, gt=0)
    notes: str = ""
    config: dict[str, Any]


class DeviceFileEntry(DeviceSpec):
    """A device in devices.yaml: the DeviceSpec fields plus where the facts came from."""

    sources: tuple[str, ...] = ()


class DevicesFile(Frozen):
    devices: tuple[DeviceFileEntry, ...] = Field(min_length=1)


class ModelEntry(Frozen):
    """A catalog row for listings: enough to choose a model without loading its spec."""

    id: str
    aliases: tuple[str, ...]
    confidence: str
    params_total: int
    params_active: int | None
    description: Msg  # "dense GQA", "MLA MoE", "sliding-window hybrid", ... (a Text: the pages translate it)


@dataclass(frozen=True)
class QuantSuffix:
    """A repo-name suffix that marks a pre-quantized checkpoint of a catalog model."""

    suffix: str
    method: QuantMethod
    source_name: str
    group_size: int = 128


# Longest first, so "-FP8-dynamic" wins over "-FP8". Names follow the repos that publish them:
# RedHatAI/neuralmagic (compressed-tensors), Qwen/TheBloke (GPTQ/AWQ, group 128), NVIDIA (NVFP4).
QUANT_SUFFIXES: tuple[QuantSuffix, ...] = (
    QuantSuffix("-quantized.w4a16", QuantMethod.INT4, "compressed-tensors"),
    QuantSuffix("-quantized.w8a16", QuantMethod.INT8, "compressed-tensors"),
    QuantSuffix("-quantized.w8a8", QuantMethod.INT8, "compressed-tensors"),
    QuantSuffix("-FP8-dynamic", QuantMethod.FP8, "compressed-tensors"),
    QuantSuffix("-GPTQ-Int4", QuantMethod.INT4, "gptq"),
    QuantSuffix("-GPTQ-Int8", QuantMethod.INT8, "gptq"),
    QuantSuffix("-W4A16", QuantMethod.INT4, "compressed-tensors"),
    QuantSuffix("-W8A8", QuantMethod.INT8, "compressed-tensors"),
    QuantSuffix("-NVFP4", QuantMethod.NVFP4, "modelopt_fp4", group_size=16),
    QuantSuffix("-GPTQ", QuantMethod.INT4, "gptq"),
    QuantSuffix("-AWQ", QuantMethod.INT4, "awq"),
    QuantSuffix("-FP8", QuantMethod.FP8, "fp8"),
    QuantSuffix("-FP4", QuantMethod.NVFP4, "modelopt_fp4", group_size=16),
)
# Orgs whose "-FP8" repos are compressed-tensors (llm-compressor) rather than native fp8 blocks.
COMPRESSED_TENSORS_ORGS = frozenset({"redhatai", "neuralmagic", "nm-testing"})


# ----------------------------------------------------------------------------------------------
# Models
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Model:
    file: ModelSpecFile
    spec: ModelSpec


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError("model_specs", f"{path.name}: {exc}") from exc


def _load_model_file(path: Path) -> _Model:
    try:
        file = ModelSpecFile.model_validate(_read_yaml(path))
    except ValidationError as exc:
        raise ConfigError("model_specs", f"{path.name}: {exc}") from exc
    try:
        spec = model_spec_from_hf_config(
            file.config,
            name=file.id,
            params_total=file.params_total + file.vision_params,
            params_active=file.params_active,
            source="; ".join(file.source),
            confidence=file.confidence,
        )
    except ConfigError as exc:
        raise ConfigError("model_specs", f"{path.name}: {exc}") from exc
    if file.other_revision_kv_heads is not None:
        spec = spec.model_copy(update={"other_revision_kv_heads": file.other_revision_kv_heads})
    if file.vision_params:  # the preset's own tower count stands for the vision tower's caveat
        towers = tuple(t for t in spec.uncounted_towers if not t.startswith("vision_config"))
        spec = spec.model_copy(update={"vision_params": file.vision_params, "uncounted_towers": towers})
    elif spec.vision_params:
        # params_total is the text tower's; the tower counted from vision_config (hf_config/vision.py) is
        # loaded with it, so it joins the total the weights come from
        spec = spec.model_copy(update={"params_total": spec.params_total + spec.vision_params})
    return _Model(file=file, spec=spec)


def _lookup_keys(name: str) -> Iterator[str]:
    """The lowercased name and, for "org/name", the part after the slash."""
    key = name.strip().lower()
    yield key
    if "/" in key:
        yield key.split("/", 1)[1]


@dataclass(frozen=True)
class _ModelIndex:
    models: tuple[_Model, ...]
    by_key: dict[str, tuple[_Model, str]]  # lowercased key -> (model, display name)


@cache
def _model_index() -> _ModelIndex:
    models = tuple(_load_model_file(path) for path in sorted(MODEL_SPECS_DIR.glob("*.yaml")))
    if not models:
        raise ConfigError(
            "model_specs", Text("no model spec files in {model_specs_dir}", model_specs_dir=MODEL_SPECS_DIR)
        )
    by_key: dict[str, tuple[_Model, str]] = {}
    for model in models:
        for name in (model.file.id, *model.file.aliases):
            # Full HF ids display as themselves; short names display as the file's id.
            display = name if "/" in name else model.file.id
            for key in _lookup_keys(name):
                owner = by_key.get(key)
                if owner is not None and owner[0] is not model:
                    raise ConfigError(
                        "model_specs",
                        Text(
                            "name {key!r} is claimed by {id} and {id2}",
                            key=key,
                            id=owner[0].file.id,
                            id2=model.file.id,
                        ),
                    )
                if owner is None or key == name.lower():
                    by_key[key] = (model, display)
    return _ModelIndex(models=models, by_key=by_key)


def _describe(spec: ModelSpec) -> str:
    """The model family label: attention kind, then MoE or dense (a Text: English here, translated on
    the pages)."""
    kinds = set(spec.layer_kinds)
    moe = spec.num_experts > 0
    attention: str
    if spec.mamba is not None:
        mixer = {
            MambaKind.MAMBA1: "Mamba",
            MambaKind.MAMBA2: "Mamba-2",
            MambaKind.GATED_DELTA_NET: "Gated-DeltaNet",
            MambaKind.LINEAR_ATTENTION: Text("linear-attention"),
            MambaKind.KDA: "KDA",
            MambaKind.SHORT_CONV: "ShortConv",
        }[spec.mamba.kind]
        attention = Text("{mixer} hybrid", mixer=mixer)
    elif spec.mla is not None:
        attention = "MLA"
    elif LayerKind.CHUNKED in kinds:
        attention = Text("chunked-local hybrid")
    elif LayerKind.SLIDING in kinds:
        attention = Text("sliding-window hybrid") if LayerKind.FULL in kinds else Text("sliding-window")
    elif spec.num_kv_heads == 1:
        attention = "MQA"
    elif spec.num_kv_heads == spec.num_attention_heads:
        attention = "MHA"
    else:
        attention = "GQA"
    if moe:
        return Text("{attention} MoE", attention=attention)
    return Text("dense {attention}", attention=attention) if attention in ("GQA", "MHA", "MQA") else attention


def list_models() -> list[ModelEntry]:
    """Every catalog model, in file order."""
    return list(_model_entries())


@cache
def _model_entries() -> tuple[ModelEntry, ...]:
    """Built once: the page lists the catalog on every render."""
    return tuple(
        ModelEntry(
            id=model.file.id,
            aliases=model.file.aliases,
            confidence=model.file.confidence,
            params_total=model.spec.params_total,
            params_active=model.spec.params_active,
            description=_describe(model.spec),
        )
        for model in _model_index().models
    )


def _find_exact(name: str) -> tuple[_Model, str] | None:
    index = _model_index().by_key
    for key in _lookup_keys(name):
        if key in index:
            return index[key]
    return None


def _quant_for(name: str, suffix: QuantSuffix) -> QuantSpec:
    org = name.split("/", 1)[0].lower() if "/" in name else ""
    source_name = suffix.source_name
    if suffix.method == QuantMethod.FP8 and org in COMPRESSED_TENSORS_ORGS:
        source_name = "compressed-tensors"
    return QuantSpec(method=suffix.method, group_size=suffix.group_size, source_name=source_name)


def preset_config(name: str) -> dict[str, Any] | None:
    """The config.json a preset was built from, for an exact HF id or alias (none for a quantized repo name)."""
    found = _find_exact(name.strip())
    return None if found is None else dict(found[0].file.config)


def find_model(name: str) -> ModelSpec:
    """The catalog spec for a HF id, alias or short name; quantized repo names get a QuantSpec."""
    requested = name.strip()
    found = _find_exact(requested)
    if found is not None:
        model, display = found
        return model.spec if display == model.spec.name else model.spec.model_copy(update={"name": display})
    lowered = requested.lower()
    for suffix in QUANT_SUFFIXES:
        if lowered.endswith(suffix.suffix.lower()) and len(requested) > len(suffix.suffix):
            base = _find_exact(requested[: -len(suffix.suffix)])
            if base is not None:
                fields = base[0].spec.model_dump()
                fields.update(name=requested, quantization=_quant_for(requested, suffix).model_dump())
                return ModelSpec.model_validate(fields)
    raise UnknownModelError(requested)


def load_model_config_file(path: Path) -> ModelSpec:
    """A ModelSpec from a config.json, or a folder holding config.json (+ safetensors index)."""
    config_path = path / CONFIG_FILE_NAME if path.is_dir() else path
    config = _read_json_object(config_path)
    index_path = config_path.parent / SAFETENSORS_INDEX_FILE_NAME
    index = _read_json_object(index_path) if index_path.is_file() else None
    quant_path = config_path.parent / HF_QUANT_CONFIG_FILE_NAME
    # older ModelOpt checkpoints (vLLM reads it when config.json has none)
    hf_quant = _read_json_object(quant_path) if quant_path.is_file() else None
    raw_name = config.get("_name_or_path")
    name = raw_name if isinstance(raw_name, str) and raw_name else config_file_name(config_path)
    return model_spec_from_hf_config(
        config, name=name, safetensors_index=index, hf_quant_config=hf_quant, source=str(config_path)
    )


HF_CACHE_REPO_PREFIX = "models--"  # huggingface_hub's cache: models--{org}--{name}/snapshots/{revision}/


def config_file_name(config_path: Path) -> str:
    """The model's name when its config.json names none: the hub id of a Hugging Face cache snapshot
    (``…/models--Qwen--Qwen3-8B/snapshots/0123abcd/config.json`` -> ``Qwen/Qwen3-8B``), else the folder as
    given (what ``vllm serve`` takes), else the file itself when it is not a ``config.json``. The folder's
    bare name read as a model ("inputs on nvidia-h100", "0123abcd" for a snapshot; the new-user walkthrough
    of 2026-12, step 3)."""
    snapshot = config_path.parent
    if snapshot.parent.name == "snapshots" and snapshot.parent.parent.name.startswith(HF_CACHE_REPO_PREFIX):
        org, _, repo = snapshot.parent.parent.name.removeprefix(HF_CACHE_REPO_PREFIX).partition("--")
        if org and repo:
            return f"{org}/{repo}"
    if config_path.name == CONFIG_FILE_NAME:
        return str(snapshot)
    return str(config_path)


def _read_json_object(path: Path) -> dict[str, Any]:
    """The JSON object in the file at ``path``; a ConfigError naming the file when it is unreadable,
    not JSON, or not an object at the top level."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(
            "config_file", Text("{path}: cannot read ({value})", path=path, value=exc.strerror or exc)
        ) from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError("config_file", Text("{path}: invalid JSON ({exc})", path=path, exc=exc)) from exc
    if not isinstance(data, dict):
        raise ConfigError("config_file", Text("{path}: top level must be a JSON object", path=path))
    return data


# ----------------------------------------------------------------------------------------------
# Devices
# ----------------------------------------------------------------------------------------------


def _device_key(name: str) -> str:
    """Case-insensitive, with spaces and underscores read as dashes ("H100 SXM" == "h100-sxm")."""
    return "-".join(name.strip().lower().replace("_", " ").split())


@dataclass(frozen=True)
class _DeviceIndex:
    devices: tuple[DeviceSpec, ...]
    by_key: dict[str, DeviceSpec]


@cache
def _device_index() -> _DeviceIndex:
    entries: list[DeviceFileEntry] = []
    for path in (DEVICES_FILE, ADDED_DEVICES_FILE):
        try:
            entries.extend(DevicesFile.model_validate(_read_yaml(path)).devices)
        except ValidationError as exc:
            raise ConfigError("device_specs", f"{path.name}: {exc}") from exc
    devices = tuple(DeviceSpec(**entry.model_dump(exclude={"sources"})) for entry in entries)
    by_key: dict[str, DeviceSpec] = {}
    for device in devices:
        for name in (device.id, *device.aliases):
            key = _device_key(name)
            if key in by_key and by_key[key].id != device.id:
                raise ConfigError(
                    "device_specs",
                    Text(
                        "name {key!r} is claimed by {id} and {id2}", key=key, id=by_key[key].id, id2=device.id
                    ),
                )
            by_key[key] = device
    return _DeviceIndex(devices=devices, by_key=by_key)


def list_devices() -> list[DeviceSpec]:
    """Every catalog device, in file order."""
    return list(_device_index().devices)


def find_device(name: str) -> DeviceSpec:
    """The device for an id or alias ("h100", "910b", "a100-40gb"), case-insensitive."""
    device = _device_index().by_key.get(_device_key(name))
    if device is None:
        raise UnknownDeviceError(name.strip())
    return device
