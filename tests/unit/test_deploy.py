"""Deployment artifacts (app/core/deploy.py): every target parses, carries the planner's arguments and
the planned release's image, and validates against the vendored schema of what it is (tests/data/schemas:
Kubernetes v1.37 strict Deployment and Service, the production-stack chart's values schema, the
Compose Specification)."""

from __future__ import annotations

import json
import shlex
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from referencing import Registry, Resource

from app.core import deploy
from app.core.catalog import find_device
from app.core.command import parse_serve_command
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.plan import QUANTIZATION_FLAGS, QUANTIZATION_FLAGS_FILE, _quantization_flags, resolve_model
from app.core.specs import QuantMethod, ServeConfig

SCHEMAS = Path(__file__).resolve().parents[1] / "data" / "schemas"
LLAMA_70B = "meta-llama/Llama-3.1-70B"
THE_FLAGS = ["--max-model-len", "32768", "--tensor-parallel-size", "4", "--kv-cache-dtype", "fp8"]


def plan_for(
    device: str = "h100", *, replicas: int = 1, model_id: str = LLAMA_70B, **flags: Any
) -> deploy.Plan:
    serve = ServeConfig(
        **{"tensor_parallel_size": 4, "kv_cache_dtype": "fp8", "max_model_len": 32768, **flags}
    )
    model = resolve_model(model_id)
    spec = find_device(device)
    est = estimate(model=model, device=spec, serve=serve, vllm_version="0.19.0")
    return deploy.Plan(
        model_label=model_id,
        model=model,
        device=spec,
        serve=serve,
        estimate=est,
        replicas=replicas,
    )


@cache
def _k8s_registry() -> Registry:
    definitions = json.loads((SCHEMAS / "k8s" / "_definitions.json").read_text(encoding="utf-8"))
    return Registry().with_resource(definitions["$id"], Resource.from_contents(definitions))


def k8s_errors(document: dict[str, Any]) -> list[str]:
    name = {"Deployment": "deployment-apps-v1.json", "Service": "service-v1.json"}[document["kind"]]
    schema = json.loads((SCHEMAS / "k8s" / name).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema, registry=_k8s_registry())
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


def helm_errors(values: dict[str, Any]) -> list[str]:
    schema = json.loads((SCHEMAS / "production-stack" / "values.schema.json").read_text(encoding="utf-8"))
    return [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(values)]


def compose_errors(document: dict[str, Any]) -> list[str]:
    schema = json.loads((SCHEMAS / "compose" / "compose_spec.json").read_text(encoding="utf-8"))
    return [e.message for e in jsonschema.Draft201909Validator(schema).iter_errors(document)]


def documents(target: str, plan: deploy.Plan) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(deploy.render(target, plan)) if d is not None]


def container_of(plan: deploy.Plan) -> dict[str, Any]:
    (deployment,) = [d for d in documents("kubernetes", plan) if d["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return container


# --- the example: Llama-3.1-70B, TP 4, fp8 KV, 32k, vLLM 0.19.0 on H100 ------------------------


def test_compose_kubernetes_and_helm_parse_pin_the_release_and_carry_the_flags() -> None:
    plan = plan_for()
    (compose,) = documents("compose", plan)
    (service,) = compose["services"].values()
    assert service["image"] == "vllm/vllm-openai:v0.19.0"
    assert service["entrypoint"] == ["vllm", "serve"] and service["command"] == [LLAMA_70B, *THE_FLAGS]
    assert service["deploy"]["resources"]["reservations"]["devices"] == [
        {"driver": "nvidia", "count": 4, "capabilities": ["gpu"]}
    ]
    assert service["shm_size"] == "16gb" and "/health" in " ".join(service["healthcheck"]["test"])

    container = container_of(plan)
    assert container["image"] == "vllm/vllm-openai:v0.19.0"
    assert container["args"][0] == LLAMA_70B and container["args"][-6:] == THE_FLAGS
    assert container["resources"]["requests"]["nvidia.com/gpu"] == "4"
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "4"
    assert {"name": "dshm", "mountPath": "/dev/shm"} in container["volumeMounts"]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/health", "port": "http"}

    (values,) = documents("helm", plan)
    (spec,) = values["servingEngineSpec"]["modelSpec"]
    assert (spec["repository"], spec["tag"]) == ("vllm/vllm-openai", "v0.19.0")
    assert spec["requestGPU"] == 4 and spec["requestGPUType"] == "nvidia.com/gpu"
    # the chart writes --max-model-len and --tensor-parallel-size from these keys (and mounts /dev/shm
    # when tensorParallelSize is set); the rest of the command goes verbatim
    config = spec["vllmConfig"]
    assert config["maxModelLen"] == 32768 and config["tensorParallelSize"] == 4
    assert config["gpuMemoryUtilization"] == 0.9  # vLLM 0.19.0's default, what the plan was sized with
    assert config["extraArgs"] == ["--kv-cache-dtype", "fp8"]
    assert values["servingEngineSpec"]["startupProbe"]["httpGet"] == {"path": "/health", "port": 8000}


def test_the_command_and_docker_run_parse_back_to_the_planned_flags() -> None:
    """The shell targets' "schema" is the planner's own `vllm serve` parser: the flags read back equal."""
    plan = plan_for()
    parsed = parse_serve_command(deploy.render("command", plan), vllm_version="0.19.0")
    assert parsed.model == LLAMA_70B and parsed.serve == plan.serve
    docker = shlex.split(deploy.render("docker", plan).replace("\\\n", " "))
    assert (
        docker[:2] == ["docker", "run"] and "--gpus" in docker and docker[docker.index("--gpus") + 1] == "4"
    )
    after_image = docker[docker.index("vllm/vllm-openai:v0.19.0") + 1 :]
    assert after_image[:2] == ["serve", LLAMA_70B] and after_image[2:] == THE_FLAGS
    again = parse_serve_command(" ".join(["vllm", *map(shlex.quote, after_image)]), vllm_version="0.19.0")
    assert again.serve == plan.serve


@pytest.mark.parametrize("device", ["h100", "mi300x", "910b"])
def test_every_yaml_target_validates_against_its_schema(device: str) -> None:
    kv = "fp8" if device != "910b" else "auto"  # vllm-ascend has no fp8 KV path
    plan = plan_for(device, kv_cache_dtype=kv, replicas=3, cpu_offload_gb=4)
    kinds = []
    for document in documents("kubernetes", plan):
        assert k8s_errors(document) == [], document["kind"]
        kinds.append(document["kind"])
    assert kinds == ["Deployment", "Service"]
    (values,) = documents("helm", plan)
    assert helm_errors(values) == []
    (compose,) = documents("compose", plan)
    assert compose_errors(compose) == []


def test_the_schemas_are_strict_enough_to_catch_a_wrong_manifest() -> None:
    """The validators bite: a misspelt field, a string replica count and a missing chart key all fail."""
    plan = plan_for()
    deployment = documents("kubernetes", plan)[0]
    deployment["spec"]["template"]["spec"]["containers"][0]["readinessprobe"] = {}
    deployment["spec"]["replicas"] = "1"
    errors = k8s_errors(deployment)
    assert any("readinessprobe" in e for e in errors) and any("replicas" in e for e in errors)
    (values,) = documents("helm", plan)
    del values["servingEngineSpec"]["modelSpec"][0]["pvcStorage"]
    assert any("'pvcStorage' is a required property" in e for e in helm_errors(values))
    (compose,) = documents("compose", plan)
    next(iter(compose["services"].values()))["shm-size"] = "1g"
    assert compose_errors(compose)


# --- devices, sizes and replicas --------------------------------------------------------------------


def test_ascend_910b_requests_huawei_ascend910_and_pins_vllm_ascend() -> None:
    plan = plan_for("910b", kv_cache_dtype="auto")
    container = container_of(plan)
    assert container["image"] == "quay.io/ascend/vllm-ascend:v0.19.0"
    assert container["resources"]["requests"]["huawei.com/Ascend910"] == "4"
    assert "nvidia.com/gpu" not in container["resources"]["requests"]
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert {"/dev/shm", "/usr/local/Ascend/driver/lib64", "/usr/local/dcmi"} <= mounts
    (values,) = documents("helm", plan)
    assert values["servingEngineSpec"]["modelSpec"][0]["requestGPUType"] == "huawei.com/Ascend910"
    assert values["servingEngineSpec"]["runtimeClassName"] == ""  # not the chart's default "nvidia"
    docker = deploy.render("docker", plan)
    assert "--device /dev/davinci3 " in docker and "/dev/davinci4" not in docker  # TP 4: davinci0-3
    # Atlas A3 (910C) images carry vllm-ascend's -a3 suffix
    assert deploy.image(plan_for("910c", kv_cache_dtype="auto")) == "quay.io/ascend/vllm-ascend:v0.19.0-a3"


def test_amd_requests_amd_gpu_on_vllms_rocm_image() -> None:
    plan = plan_for("mi300x")
    container = container_of(plan)
    assert container["image"] == "vllm/vllm-openai-rocm:v0.19.0"
    assert container["resources"]["limits"]["amd.com/gpu"] == "4"
    (compose,) = documents("compose", plan)
    service = next(iter(compose["services"].values()))
    assert service["devices"] == ["/dev/kfd", "/dev/dri"] and service["group_add"] == ["video"]


def test_the_startup_probe_covers_loading_the_planners_weights_and_says_so() -> None:
    """Llama-3.1-70B bf16: 70,553,706,496 params × 2 B = 131.42 GiB over TP 4. At 1 GiB/s that is
    131.4 s, plus 120 s engine start, × 1.5 = 377.1 s -> 38 periods of 10 s."""
    plan = plan_for()
    assert plan.estimate.weights_bytes * 4 == pytest.approx(70_553_706_496 * 2, rel=0.001)
    assert container_of(plan)["startupProbe"]["failureThreshold"] == 38
    text = deploy.render("kubernetes", plan)
    assert "# startupProbe: 38 × 10 s = 380 s = (131.4 GiB of weights at 1 GiB/s = 131 s + 120 s" in text
    (values,) = documents("helm", plan)
    assert values["servingEngineSpec"]["startupProbe"]["failureThreshold"] == 38
    # an 8B model on one device loads in a tenth of the time: 14.96 GiB -> (15 + 120) × 1.5 / 10 = 21
    small = plan_for(model_id="meta-llama/Llama-3.1-8B", tensor_parallel_size=1, kv_cache_dtype="auto")
    assert deploy.startup_budget(small)[0] == 21


def test_host_memory_comes_from_the_extras_ledger() -> None:
    """--cpu-offload-gb 10 on each of 4 ranks: 40 GiB of host memory in the ledger + 4 × 8 GiB base."""
    plan = plan_for(cpu_offload_gb=10)
    assert plan.estimate.host_memory_bytes == 40 * 2**30
    assert container_of(plan)["resources"]["requests"]["memory"] == "72Gi"
    (values,) = documents("helm", plan)
    assert values["servingEngineSpec"]["modelSpec"][0]["requestMemory"] == "72Gi"
    assert container_of(plan_for())["resources"]["requests"]["memory"] == "32Gi"  # no extras: the base only


def test_replicas_go_into_the_manifests() -> None:
    plan = plan_for(replicas=5)
    assert documents("kubernetes", plan)[0]["spec"]["replicas"] == 5
    assert documents("helm", plan)[0]["servingEngineSpec"]["modelSpec"][0]["replicaCount"] == 5
    service = next(iter(documents("compose", plan)[0]["services"].values()))
    assert service["deploy"]["replicas"] == 5 and service["ports"] == ["8000"]


def test_pipeline_parallel_and_the_long_length_switch_travel_too() -> None:
    plan = plan_for(pipeline_parallel_size=2, max_model_len=262144, allow_long_max_model_len=True)
    container = container_of(plan)
    assert container["resources"]["requests"]["nvidia.com/gpu"] == "8"  # TP 4 × PP 2
    assert "--pipeline-parallel-size" in container["args"]
    assert {"name": "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "value": "1"} in container["env"]
    (values,) = documents("helm", plan)
    config = values["servingEngineSpec"]["modelSpec"][0]["vllmConfig"]
    assert config["extraArgs"][:2] == ["--pipeline-parallel-size", "2"]
    assert {"name": "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "value": "1"} in values["servingEngineSpec"][
        "modelSpec"
    ][0]["env"]


def test_a_device_without_a_vllm_image_and_an_unknown_target_are_refused_by_name() -> None:
    plan = plan_for()
    tpu = deploy.Plan(**{**plan.__dict__, "device": plan.device.model_copy(update={"platform": "tpu"})})
    with pytest.raises(PlannerError) as exc:
        deploy.render("kubernetes", tpu)
    assert exc.value.field == "device"
    with pytest.raises(PlannerError) as exc:
        deploy.render("nomad", plan)
    assert exc.value.field == "target"


def test_an_auto_length_stays_a_flag_in_the_helm_values() -> None:
    """`--max-model-len auto` (vLLM >= 0.12's fit-to-memory) is no integer: the chart key is left out and
    the flag goes verbatim to extraArgs, so the chart writes exactly the command's arguments."""
    plan = plan_for(max_model_len=None)
    plan = deploy.Plan(**{**plan.__dict__, "max_model_len_auto": True})
    (values,) = documents("helm", plan)
    config = values["servingEngineSpec"]["modelSpec"][0]["vllmConfig"]
    assert "maxModelLen" not in config and config["extraArgs"][:2] == ["--max-model-len", "auto"]
    assert helm_errors(values) == []


def test_quantization_flags_are_validated_data() -> None:
    """app/core/quantization_flags.yaml: a row's source_name is its key unless it names another."""
    assert QUANTIZATION_FLAGS["gptq_marlin"].source_name == "gptq_marlin"
    assert QUANTIZATION_FLAGS["gptq_marlin"].method == QuantMethod.INT4
    assert QUANTIZATION_FLAGS["nvfp4"].source_name == "modelopt_fp4"
    assert QUANTIZATION_FLAGS["nvfp4"].group_size == 16
    assert _quantization_flags(QUANTIZATION_FLAGS_FILE) == QUANTIZATION_FLAGS
