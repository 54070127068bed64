"""The built-in catalog: every spec file validates, and names resolve the way users type them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]

from app.core import catalog
from app.core.catalog import (
    DevicesFile,
    ModelSpecFile,
    find_device,
    find_model,
    list_devices,
    list_models,
    load_model_config_file,
)
from app.core.errors import ConfigError, UnknownDeviceError, UnknownModelError
from app.core.specs import GIB, QuantMethod

REPO_ROOT = Path(__file__).resolve().parents[2]
MODEL_FILES = sorted((REPO_ROOT / "model_specs").glob("*.yaml"))

# Fields of the reference records that are derived, not config.json keys: must not leak into `config`.
DERIVED_FIELDS = {
    "attention_layout",
    "kv_cache_derived",
    "params_computed_from_config",
    "head_dim_source",
    "total_params",
    "hybrid",
    "moe_layer_pattern",
    "layer_types_summary",
    "expert_ffn_size",
    "tie_word_embeddings_note",
    "torch_dtype_note",
    "text_model_type",
}


# --- model files ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", MODEL_FILES, ids=[p.stem for p in MODEL_FILES])
def test_every_model_file_validates(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    file = ModelSpecFile.model_validate(data)
    config_keys = set(file.config) | set(file.config.get("text_config", {}))
    assert not config_keys & DERIVED_FIELDS
    spec = find_model(file.id)
    # the file's vision_params, else the tower counted from vision_config (hf_config/vision.py)
    assert spec.params_total == file.params_total + (file.vision_params or spec.vision_params)
    for alias in file.aliases:
        assert find_model(alias).num_layers == find_model(file.id).num_layers, alias


def test_catalog_loads_every_file_once() -> None:
    assert len(list_models()) == len(MODEL_FILES) >= 80
    assert find_model("llama-3.1-8b") is find_model("Llama-3.1-8B")  # cached specs, same object


def test_spec_file_rejects_unknown_fields() -> None:
    data = yaml.safe_load(MODEL_FILES[0].read_text(encoding="utf-8"))
    with pytest.raises(ValueError, match="extra"):
        ModelSpecFile.model_validate(data | {"attention_layout": "full"})


REQUIRED_MODELS = [
    "meta-llama/Llama-2-7b-hf",
    "meta-llama/Llama-2-13b-hf",
    "meta-llama/Llama-2-70b-hf",
    "meta-llama/Meta-Llama-3-8B",
    "meta-llama/Llama-3.1-8B-Instruct",
    "meta-llama/Llama-3.1-70B-Instruct",
    "meta-llama/Llama-3.1-405B-Instruct",
    "meta-llama/Llama-3.2-1B-Instruct",
    "meta-llama/Llama-3.2-3B-Instruct",
    "meta-llama/Llama-3.3-70B-Instruct",
    "meta-llama/Llama-4-Scout-17B-16E",
    "meta-llama/Llama-4-Maverick-17B-128E",
    "codellama/CodeLlama-7b-hf",
    "mistralai/Mistral-7B-Instruct-v0.3",
    "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
    "mistralai/Mistral-Large-Instruct-2411",
    "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "mistralai/Mixtral-8x22B-Instruct-v0.1",
    "Qwen/Qwen2.5-0.5B-Instruct",
    "Qwen/Qwen2.5-1.5B-Instruct",
    "Qwen/Qwen2.5-3B-Instruct",
    "Qwen/Qwen2.5-7B-Instruct",
    "Qwen/Qwen2.5-14B-Instruct",
    "Qwen/Qwen2.5-32B-Instruct",
    "Qwen/Qwen2.5-72B-Instruct",
    "Qwen/Qwen2.5-Coder-32B-Instruct",
    "Qwen/QwQ-32B",
    "Qwen/Qwen1.5-MoE-A2.7B",
    "Qwen/Qwen3-0.6B",
    "Qwen/Qwen3-1.7B",
    "Qwen/Qwen3-4B",
    "Qwen/Qwen3-8B",
    "Qwen/Qwen3-14B",
    "Qwen/Qwen3-32B",
    "Qwen/Qwen3-30B-A3B",
    "Qwen/Qwen3-235B-A22B",
    "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "Qwen/Qwen3-Coder-480B-A35B-Instruct",
    "deepseek-ai/DeepSeek-V2-Lite-Chat",
    "deepseek-ai/DeepSeek-V3",
    "deepseek-ai/DeepSeek-R1",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
    "deepseek-ai/DeepSeek-R1-Distill-Llama-70B",
    "moonshotai/Kimi-K2-Instruct",
    "moonshotai/Kimi-VL-A3B-Instruct",
    "moonshotai/Kimi-Dev-72B",
    "zai-org/GLM-4.5",
    "zai-org/GLM-4.5-Air",
    "google/gemma-7b",
    "google/gemma-2-2b-it",
    "google/gemma-2-9b-it",
    "google/gemma-2-27b-it",
    "google/gemma-3-4b-it",
    "google/gemma-3-12b-it",
    "google/gemma-3-27b-it",
    "openai/gpt-oss-20b",
    "openai/gpt-oss-120b",
    "microsoft/phi-2",
    "microsoft/Phi-3-mini-4k-instruct",
    "microsoft/phi-4",
    "ibm-granite/granite-3.1-2b-instruct",
    "ibm-granite/granite-3.1-8b-instruct",
    "ibm-granite/granite-3.3-8b-instruct",
    "ibm-granite/granite-vision-3.3-2b",
    "tiiuae/falcon-40b",
    "01-ai/Yi-34B",
    "ai21labs/AI21-Jamba-1.5-Mini",
    "MiniMaxAI/MiniMax-M2",
]


@pytest.mark.parametrize("name", REQUIRED_MODELS)
def test_required_models_resolve(name: str) -> None:
    assert find_model(name).params_total > 0


def test_instruct_repos_with_a_different_context_are_separate_files() -> None:
    # Qwen2.5-7B base: max_position_embeddings 131072; the -Instruct config ships 32768
    assert find_model("Qwen/Qwen2.5-7B").max_model_len_derived == 131_072
    assert find_model("Qwen/Qwen2.5-7B-Instruct").max_model_len_derived == 32_768


# --- model lookups ---------------------------------------------------------------------------------------


def test_short_alias_resolves_to_the_file_id() -> None:
    spec = find_model("llama-3.1-8b")
    assert spec.name == "meta-llama/Llama-3.1-8B"
    assert (spec.num_layers, spec.num_kv_heads, spec.head_size) == (32, 8, 128)
    assert spec.quantization is None


def test_lookup_is_case_insensitive_and_keeps_the_hf_id() -> None:
    spec = find_model("META-LLAMA/LLAMA-3.1-8B-INSTRUCT")
    assert spec.name == "meta-llama/Llama-3.1-8B-Instruct"
    assert spec.params_total == 8_030_261_248  # reference count for Llama-3.1-8B (same architecture)
    assert (
        find_model("  llama-3.1-8b-instruct ").name == "meta-llama/Llama-3.1-8B-Instruct"
    )  # after the slash


def test_redhat_fp8_dynamic_resolves_to_base_with_fp8() -> None:
    name = "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic"
    spec = find_model(name)
    assert spec.name == name
    assert spec.quantization is not None
    assert spec.quantization.method == QuantMethod.FP8
    assert spec.quantization.source_name == "compressed-tensors"
    assert spec.num_layers == 32


def test_redhat_w4a16_resolves_to_int4_group_128() -> None:
    spec = find_model("RedHatAI/Qwen2.5-7B-Instruct-quantized.w4a16")
    assert spec.quantization is not None
    assert (spec.quantization.method, spec.quantization.group_size) == (QuantMethod.INT4, 128)
    assert spec.max_model_len_derived == 32_768  # the -Instruct base, not Qwen2.5-7B


@pytest.mark.parametrize(
    ("name", "method", "source_name"),
    [
        ("neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w8a8", QuantMethod.INT8, "compressed-tensors"),
        ("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", QuantMethod.FP8, "compressed-tensors"),
        ("Qwen/Qwen2.5-7B-Instruct-AWQ", QuantMethod.INT4, "awq"),
        ("Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4", QuantMethod.INT4, "gptq"),
        ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", QuantMethod.INT8, "gptq"),
        ("Qwen/Qwen3-235B-A22B-FP8", QuantMethod.FP8, "fp8"),
        ("RedHatAI/Qwen3-8B-FP8", QuantMethod.FP8, "compressed-tensors"),
    ],
)
def test_quantized_repo_names(name: str, method: QuantMethod, source_name: str) -> None:
    spec = find_model(name)
    assert spec.quantization is not None
    assert (spec.quantization.method, spec.quantization.source_name) == (method, source_name)
    assert spec.name == name


@pytest.mark.parametrize(
    "name", ["no-such-model", "meta-llama/Llama-9-1B", "RedHatAI/Nothing-FP8-dynamic", "", "-FP8"]
)
def test_unknown_model_raises(name: str) -> None:
    with pytest.raises(UnknownModelError) as err:
        find_model(name)
    assert err.value.field == "model"
    assert err.value.model_id == name.strip()


def test_listing_describes_each_model() -> None:
    entries = {entry.id: entry for entry in list_models()}
    assert entries["meta-llama/Llama-3.1-8B"].description == "dense GQA"
    assert entries["deepseek-ai/DeepSeek-V3"].description == "MLA MoE"
    assert entries["google/gemma-3-27b-it"].description == "sliding-window hybrid"
    assert entries["Qwen/Qwen3-Next-80B-A3B-Instruct"].description == "Gated-DeltaNet hybrid MoE"
    assert entries["meta-llama/Llama-2-7b-hf"].description == "dense MHA"
    assert entries["meta-llama/Llama-3.1-8B"].aliases[0] == "meta-llama/Llama-3.1-8B-Instruct"
    assert {entry.confidence for entry in entries.values()} <= {"verified", "likely", "recalled"}


# --- config files from disk --------------------------------------------------------------------------


def test_load_model_config_folder_with_safetensors_index(tmp_path: Path) -> None:
    config = yaml.safe_load((REPO_ROOT / "model_specs" / "meta_llama_llama_3.1_8b.yaml").read_text())[
        "config"
    ]
    (tmp_path / "config.json").write_text(json.dumps(config | {"_name_or_path": "my/llama"}))
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 123_456}}))
    spec = load_model_config_file(tmp_path)
    assert (spec.name, spec.weights_bytes_exact, spec.confidence) == ("my/llama", 123_456, "user")
    assert spec.params_total == 8_030_261_248  # counted from the config


def test_load_model_config_file_fixture() -> None:
    spec = load_model_config_file(REPO_ROOT / "tests" / "data" / "configs" / "falcon-7b.config.json")
    assert spec.num_kv_heads == 1
    assert spec.weights_bytes_exact is None


def test_load_model_config_file_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError) as err:
        load_model_config_file(bad)
    assert err.value.field == "config_file"
    assert str(bad) in err.value.message
    with pytest.raises(ConfigError, match="cannot read"):
        load_model_config_file(tmp_path / "missing" / "config.json")
    bad.write_text("[1, 2]")
    with pytest.raises(ConfigError, match="JSON object"):
        load_model_config_file(tmp_path)


# --- devices ------------------------------------------------------------------------------------------


def test_devices_file_validates_and_skips_server_skus() -> None:
    data = yaml.safe_load((REPO_ROOT / "device_specs" / "devices.yaml").read_text(encoding="utf-8"))
    DevicesFile.model_validate(data)
    ids = {device.id for device in list_devices()}
    # 51 reference entries - 2 Atlas whole-server SKUs - TPU v7x (no planner_total_gib) = 48, plus the
    # five of devices_added.yaml (310P, 950PR, GB10, GH200 96GB and 144GB)
    assert len(ids) == 48 + 5
    assert {
        "huawei-ascend-310p",
        "huawei-ascend-950pr",
        "nvidia-gb10",
        "nvidia-gh200-96gb",
        "nvidia-gh200-144gb",
    } <= ids
    assert not ids & {"huawei-atlas-800i-a2", "huawei-atlas-800i-a3", "google-tpu-v7x"}


def test_h100_total_is_planner_gib_in_bytes() -> None:
    h100 = find_device("h100")
    # round(79.1 x 2**30) = round(84,932,978,278.4)
    assert h100.memory_total_bytes == 84_932_978_278 == round(79.1 * GIB)
    assert (h100.id, h100.sm, h100.fp8_kv, h100.interconnect_gbps) == ("nvidia-h100-sxm-80gb", 90, True, 900)


def test_ascend_910b() -> None:
    npu = find_device("910b")
    # vllm-ascend's budget line on a 910B: "total memory: 65452113920" (vllm-ascend#3800, #4404); HCCS 392 aggregate
    # (56 per pair)
    assert npu.memory_total_bytes == 65_452_113_920
    assert (npu.platform, npu.int8_kv, npu.fp8_kv, npu.interconnect_gbps) == ("npu", True, False, 392)
    assert npu.compute_capability is None
    assert find_device("ASCEND-910B") is npu
    assert find_device("atlas-800i-a2") is npu  # the server alias resolves to its per-NPU device
    # a 910B4 32 GB prints "total memory: 31662800896" (heldout-2026-12b's eight-rank 0.10 log, 12g's PD prefill)
    assert find_device("910b4").memory_total_bytes == 31_662_800_896


@pytest.mark.parametrize(
    ("name", "device_id", "fp8_kv"),
    [
        ("H100 SXM", "nvidia-h100-sxm-80gb", True),
        ("a100-40", "nvidia-a100-sxm4-40gb", False),  # sm80: FlashAttention-2 has no fp8 KV
        ("A100-80", "nvidia-a100-sxm4-80gb", False),
        ("l4", "nvidia-l4-24gb", True),  # sm89
        ("l40s", "nvidia-l40s-48gb", True),
        ("rtx-3090", "nvidia-rtx-3090-24gb", False),
        ("rtx5090", "nvidia-rtx-5090-32gb", True),  # sm120
        ("b200", "nvidia-b200", True),
        ("t4", "nvidia-t4-16gb", False),
        ("mi300x", "amd-mi300x-192gb", True),  # gfx942
        ("mi250x", "amd-mi250x-128gb", False),
        ("gaudi3", "intel-gaudi3-128gb", False),
        ("nvidia-h100-pcie-80gb", "nvidia-h100-pcie-80gb", True),
    ],
)
def test_device_aliases_and_fp8_kv(name: str, device_id: str, fp8_kv: bool) -> None:
    device = find_device(name)
    assert (device.id, device.fp8_kv) == (device_id, fp8_kv)


def test_compute_capability_only_on_cuda() -> None:
    for device in list_devices():
        if device.platform == "cuda":
            assert device.sm is not None and device.sm >= 70
        else:
            assert device.compute_capability is None


@pytest.mark.parametrize("name", ["h1000", "", "tpu-v7x", "atlas-900"])
def test_unknown_device_raises(name: str) -> None:
    with pytest.raises(UnknownDeviceError) as err:
        find_device(name)
    assert err.value.field == "device"


def test_catalog_paths_are_relative_to_the_repo() -> None:
    assert catalog.MODEL_SPECS_DIR == REPO_ROOT / "model_specs"
    assert catalog.DEVICES_FILE == REPO_ROOT / "device_specs" / "devices.yaml"


def test_llama_405b_warns_that_copies_declare_16_kv_heads() -> None:
    # The current official config says 8 KV heads; early copies and the FP8 repo as sglang met it
    # (sgl-project/sglang#723) say 16. Per device at TP=8: 2 x 126 layers x (8/8) x 128 x 2 B
    # = 64,512 B per token with 8 heads; 16 heads would double it.
    from app.core.estimate import estimate
    from app.core.specs import ServeConfig

    for name in ("meta-llama/Llama-3.1-405B-Instruct", "meta-llama/Llama-3.1-405B-Instruct-FP8"):
        model = find_model(name)
        assert (model.num_kv_heads, model.other_revision_kv_heads) == (8, 16)
        est = estimate(
            model=model,
            device=find_device("h200"),
            serve=ServeConfig(tensor_parallel_size=8, max_model_len=32768),
        )
        assert est.kv_bytes_per_token == 64_512
        (warning,) = [w for w in est.warnings if "Published copies" in w]
        assert "declares 8 KV heads, others 16" in warning and "2x as large" in warning
    # a model without such a record, and a pasted config, get no such warning
    other = estimate(
        model=find_model("meta-llama/Llama-3.1-70B"), device=find_device("h200"), serve=ServeConfig()
    )
    assert not [w for w in other.warnings if "Published copies" in w]
