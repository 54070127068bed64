"""Deployment artifacts for a planned configuration: the `vllm serve` command as a `docker run` line,
a compose service, a Kubernetes Deployment + Service, and values for the vLLM production-stack chart.

Every artifact carries the *same* arguments as the planner's command (they are read back from
:func:`app.core.command.render_serve_command`, never spelled a second time) and the image of the
planned release. What the manifests add is sized from the planner's own numbers:

- device requests: TP × PP devices per replica (``nvidia.com/gpu``, ``amd.com/gpu``,
  ``huawei.com/Ascend910``);
- host memory: the extras ledger's host bytes (``--cpu-offload-gb``, ``--swap-space``,
  ``--kv-offloading-size``, CPU LoRA slots) plus a stated base per rank;
- the startup probe: the replica's weight bytes at a stated load bandwidth plus a stated engine
  start-up time (profiling, torch.compile, KV allocation, graph capture), each said in a comment;
- the model cache volume: at least the checkpoint's bytes.

Nothing here talks to a cluster; tests/unit/test_deploy.py validates every target against the
vendored Kubernetes and production-stack JSON schemas.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from typing import Any, Literal

import yaml  # type: ignore[import-untyped]  # no types-PyYAML in the lock file

from app.core.command import render_serve_command
from app.core.errors import PlannerError
from app.core.result import Estimate
from app.core.specs import GIB, DeviceSpec, ModelSpec, ServeConfig
from app.core.text import Text
from app.core.versions import rules_for

Target = Literal["command", "docker", "compose", "kubernetes", "helm"]
TARGETS: tuple[Target, ...] = ("command", "docker", "compose", "kubernetes", "helm")
MEDIA_TYPES: dict[Target, str] = {
    "command": "text/plain",
    "docker": "text/plain",
    "compose": "application/yaml",
    "kubernetes": "application/yaml",
    "helm": "application/yaml",
}


@dataclass(frozen=True)
class Platform:
    """How one accelerator family runs vLLM in a container."""

    repository: str  # the image, tagged v<release>
    resource: str  # the Kubernetes extended resource its device plugin advertises
    image_note: str  # where the image and its tag scheme come from
    docker_devices: tuple[str, ...]  # `docker run` options exposing the devices ({n}: how many)
    host_mounts: tuple[str, ...] = ()  # host paths the runtime needs inside the container (read-only)


# Rules as data. Sources:
# - vllm/vllm-openai:vX.Y.Z — vLLM's docs, "Using Docker" (https://docs.vllm.ai/en/stable/deployment/docker/).
# - vllm/vllm-openai-rocm:vX.Y.Z — vLLM's own ROCm image, published from v0.14.0 (AMD deprecated
#   rocm/vllm for it: AMD-AGI/Hyperloom PR #1220, 2026-08); devices /dev/kfd and /dev/dri, group video
#   (ROCm docs, https://rocm.docs.amd.com/projects/ai-ecosystem/en/latest/inference/vllm.html).
# - quay.io/ascend/vllm-ascend:vX.Y.Z (Atlas A2: 910B), -a3 suffix for Atlas A3 (910C); the devices and
#   driver mounts of vllm-ascend's quick start
#   (https://docs.vllm.ai/projects/ascend/en/latest/getting_started/quick_start.html).
PLATFORMS: dict[str, Platform] = {
    "cuda": Platform(
        repository="vllm/vllm-openai",
        resource="nvidia.com/gpu",
        image_note="vLLM's official image, tagged per release (docs.vllm.ai, deployment/docker)",
        docker_devices=("--gpus {n}",),
    ),
    "rocm": Platform(
        repository="vllm/vllm-openai-rocm",
        resource="amd.com/gpu",
        image_note="vLLM's ROCm image, tagged per release from v0.14.0; for older releases pick a rocm/vllm tag",
        docker_devices=(
            "--device /dev/kfd",
            "--device /dev/dri",
            "--group-add video",
            "--security-opt seccomp=unconfined",
        ),
    ),
    "npu": Platform(
        repository="quay.io/ascend/vllm-ascend",
        resource="huawei.com/Ascend910",
        image_note=(
            "vllm-ascend's image, tagged after the vLLM release it supports; vllm-ascend does not publish "
            "every release (the 0.19 line is v0.19.1rc1): check the tag exists"
        ),
        docker_devices=(
            "--device /dev/davinci{i}",
            "--device /dev/davinci_manager",
            "--device /dev/devmm_svm",
            "--device /dev/hisi_hdc",
        ),
        host_mounts=(
            "/usr/local/dcmi",
            "/usr/local/bin/npu-smi",
            "/usr/local/Ascend/driver/lib64/",
            "/usr/local/Ascend/driver/version.info",
            "/etc/ascend_install.info",
        ),
    ),
}
# vllm-ascend tags Atlas A3 (910C) images with this suffix (quick start: "Atlas A3: …:vX-a3").
TAG_SUFFIX_BY_DEVICE = {"huawei-ascend-910c": "-a3"}

VLLM_PORT = 8000  # `vllm serve`'s default --port
HEALTH_PATH = "/health"  # vLLM's OpenAI server: 200 once the engine is up
MODEL_CACHE_PATH = "/root/.cache/huggingface"  # HF_HOME of vLLM's images (docs' `-v ~/.cache/huggingface:…`)
HF_TOKEN_SECRET = (
    "hf-token"  # a Secret the user creates: kubectl create secret generic hf-token --from-literal=token=…
)
HF_TOKEN_KEY = "token"
# /dev/shm: Docker's default is 64 MiB; NCCL/HCCL's shared-memory transport and PyTorch's inter-process
# tensors need far more (vLLM's docs: "--ipc=host or --shm-size"). A cap, memory-backed, not a reservation.
SHM_BYTES = 16 * GIB
# The startup probe's budget. LOAD_BYTES_PER_S: an assumed read rate of the model cache for the whole
# replica (a network volume or a cold disk; warm loads in tests/data/logs ran 2-5 GiB/s per device, e.g.
# "Model loading took 65.9651 GiB and 12.799889 seconds"). ENGINE_START_S: profiling, torch.compile,
# KV allocation and graph capture — the longest "init engine (profile, create kv cache, warmup model)"
# in tests/data/logs took 57.81 s; twice that.
LOAD_BYTES_PER_S = 1 * GIB
ENGINE_START_S = 120
STARTUP_PERIOD_S = 10
STARTUP_MARGIN = 1.5
READINESS_PERIOD_S = 10
LIVENESS_PERIOD_S = 30
LIVENESS_FAILURES = 3
# Host memory per rank besides the ledger's: a vLLM worker's resident set (Python, torch, the
# CUDA/CANN/HIP host runtime, pinned staging buffers) — an allowance, not measured here.
HOST_BASE_BYTES_PER_RANK = 8 * GIB
CPU_PER_RANK = 4  # the API server and one worker process per rank, plus tokenization
MODEL_CACHE_MARGIN = 1.2  # the cache holds the checkpoint plus tokenizer, configs and a partial download


@dataclass(frozen=True)
class Plan:
    """What a deployment is built from: the planner's inputs and its estimate."""

    model_label: str
    model: ModelSpec
    device: DeviceSpec
    serve: ServeConfig
    estimate: Estimate
    replicas: int = 1
    max_model_len_auto: bool = False

    @property
    def vllm_version(self) -> str:
        """The release the estimate planned, as the user gave it (``0.19.2rc1.dev8+g4b7f5ea1a``, or the
        default): the image tag, the command's rules and the titles all name this one."""
        return self.estimate.vllm_version

    @property
    def devices(self) -> int:
        """Devices per replica: TP × PP (vLLM's world size; DP adds whole replicas of it)."""
        s = self.serve
        return s.tensor_parallel_size * s.pipeline_parallel_size * s.data_parallel_size


def platform_of(device: DeviceSpec) -> Platform:
    platform = PLATFORMS.get(device.platform)
    if platform is None:
        raise PlannerError(
            "device",
            Text(
                "no vLLM container image is known for {platform} devices ({device}); deployments cover NVIDIA, AMD and Ascend",
                platform=device.platform,
                device=device.name,
            ),
        )
    return platform


def image(plan: Plan) -> str:
    """The image of the planned release: `vllm/vllm-openai:v0.19.0` (a local `+…` part has no image)."""
    release = plan.vllm_version.split("+", 1)[0]
    suffix = TAG_SUFFIX_BY_DEVICE.get(plan.device.id, "")
    return f"{platform_of(plan.device).repository}:v{release}{suffix}"


def command_text(plan: Plan) -> str:
    return render_serve_command(
        model=plan.model_label,
        serve=plan.serve,
        vllm_version=plan.vllm_version,
        max_model_len_auto=plan.max_model_len_auto,
    )


@dataclass(frozen=True)
class Argv:
    env: dict[str, str]
    model: str
    flags: list[str]  # everything after `vllm serve MODEL`


def serve_argv(plan: Plan) -> Argv:
    """The planner's command read back into tokens (one renderer: the manifests cannot drift from it)."""
    tokens = shlex.split(command_text(plan).replace("\\\n", " "))
    env: dict[str, str] = {}
    while tokens and "=" in tokens[0] and not tokens[0].startswith("-"):
        name, _, value = tokens.pop(0).partition("=")
        env[name] = value
    assert tokens[:2] == ["vllm", "serve"], tokens  # render_serve_command's own head
    return Argv(env=env, model=tokens[2], flags=tokens[3:])


def startup_budget(plan: Plan) -> tuple[int, int, float]:
    """(failureThreshold, the replica's weight bytes, the seconds they take to load)."""
    # what the ranks hold plus what --cpu-offload-gb keeps in host memory: both are read from the cache
    offloaded = round(plan.serve.cpu_offload_gb * GIB) * plan.devices
    weights = plan.estimate.weights_bytes * plan.devices + offloaded
    load_s = weights / LOAD_BYTES_PER_S
    threshold = math.ceil((load_s + ENGINE_START_S) * STARTUP_MARGIN / STARTUP_PERIOD_S)
    return threshold, weights, load_s


def host_memory_bytes(plan: Plan) -> int:
    """Host RAM one replica asks for: the extras ledger's host bytes plus the base allowance per rank."""
    return plan.estimate.host_memory_bytes + HOST_BASE_BYTES_PER_RANK * plan.devices


def model_cache_bytes(plan: Plan) -> int:
    """The checkpoint on disk: safetensors' exact total when known, else what the replica loads (a
    load-time --quantization reads the unquantized checkpoint: parameters × the model's dtype)."""
    model = plan.model
    loaded = plan.estimate.weights_bytes * plan.devices
    on_disk = model.weights_bytes_exact or (
        max(loaded, model.params_total * model.weight_dtype_bytes) if plan.serve.quantization else loaded
    )
    return int(on_disk * MODEL_CACHE_MARGIN)


def gib_quantity(num_bytes: int) -> str:
    """A Kubernetes quantity in whole GiB, rounded up (`64Gi`)."""
    return f"{max(1, math.ceil(num_bytes / GIB))}Gi"


def name_of(plan: Plan) -> str:
    """A DNS-1123 label from the model id: `meta-llama/Llama-3.1-70B` -> `llama-3-1-70b`."""
    tail = plan.model_label.rsplit("/", 1)[-1].lower()
    cleaned = "".join(c if c.isalnum() else "-" for c in tail).strip("-")
    while "--" in cleaned:
        cleaned = cleaned.replace("--", "-")
    return ("vllm-" + cleaned)[:53].rstrip("-") or "vllm"


def _header(lines: list[str]) -> str:
    return "".join(f"# {line}\n" for line in lines)


class _PlainDumper(yaml.SafeDumper):  # type: ignore[misc]
    """No `&id001` anchors: a repeated dict (the labels) is written out each time, as people write it."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _yaml(data: Any) -> str:
    text: str = yaml.dump(
        data, Dumper=_PlainDumper, sort_keys=False, default_flow_style=False, width=4096, allow_unicode=True
    )
    return text


# --- docker run and compose --------------------------------------------------------------------------


def _docker_device_args(plan: Plan) -> list[str]:
    out: list[str] = []
    for option in platform_of(plan.device).docker_devices:
        if "{i}" in option:
            out.extend(option.format(i=i) for i in range(plan.devices))
        else:
            out.append(option.format(n=plan.devices))
    return out


def render_docker(plan: Plan) -> str:
    argv = serve_argv(plan)
    platform = platform_of(plan.device)
    lines = [
        "docker run --rm",
        *_docker_device_args(plan),
        f"--shm-size {SHM_BYTES // GIB}g",
        f"-p {VLLM_PORT}:{VLLM_PORT}",
        f"-v ~/.cache/huggingface:{MODEL_CACHE_PATH}",
        '-e HF_TOKEN="$HF_TOKEN"',
        *(f"-e {name}={shlex.quote(value)}" for name, value in argv.env.items()),
        *(f"-v {path}:{path}:ro" for path in platform.host_mounts),
        "--entrypoint vllm",
        image(plan),
        f"serve {shlex.quote(argv.model)}",
    ]
    flags = _pair_flags(argv.flags)
    return " \\\n  ".join([*lines, *flags]) + "\n"


def _pair_flags(flags: list[str]) -> list[str]:
    """`--flag value` on one line each, quoted for a shell."""
    out: list[str] = []
    for token in flags:
        if out and not token.startswith("-"):
            out[-1] += " " + shlex.quote(token)
        else:
            out.append(shlex.quote(token))
    return out


def compose_document(plan: Plan) -> dict[str, Any]:
    argv = serve_argv(plan)
    platform = platform_of(plan.device)
    service: dict[str, Any] = {
        "image": image(plan),
        "entrypoint": ["vllm", "serve"],
        "command": [argv.model, *argv.flags],
        "ports": [f"{VLLM_PORT}:{VLLM_PORT}"],
        "shm_size": f"{SHM_BYTES // GIB}gb",
        "environment": {"HF_TOKEN": "${HF_TOKEN:-}", **argv.env},
        "volumes": [
            f"~/.cache/huggingface:{MODEL_CACHE_PATH}",
            *(f"{path}:{path}:ro" for path in platform.host_mounts),
        ],
        "healthcheck": {
            # python3, not curl: every vLLM image has it (vllm-ascend's has no curl)
            "test": [
                "CMD",
                "python3",
                "-c",
                f"import urllib.request; urllib.request.urlopen('http://127.0.0.1:{VLLM_PORT}{HEALTH_PATH}')",
            ],
            "interval": f"{READINESS_PERIOD_S}s",
            "start_period": f"{startup_budget(plan)[0] * STARTUP_PERIOD_S}s",
            "retries": LIVENESS_FAILURES,
        },
    }
    if plan.device.platform == "cuda":
        device_request = {"driver": "nvidia", "count": plan.devices, "capabilities": ["gpu"]}
        service["deploy"] = {"resources": {"reservations": {"devices": [device_request]}}}
    else:
        service["devices"] = [
            a.split(" ", 1)[1] for a in _docker_device_args(plan) if a.startswith("--device")
        ]
        if plan.device.platform == "rocm":
            service["group_add"] = ["video"]
            service["security_opt"] = ["seccomp=unconfined"]
    if plan.replicas > 1:
        service.setdefault("deploy", {})["replicas"] = plan.replicas
        service["ports"] = [str(VLLM_PORT)]  # replicas cannot share one host port
    return {"services": {name_of(plan): service}}


def render_compose(plan: Plan) -> str:
    header = [
        f"{plan.model_label} on {plan.devices} × {plan.device.name}, vLLM {plan.vllm_version}",
        f"image: {platform_of(plan.device).image_note}",
        "the healthcheck's start_period: the startup budget of the Kubernetes manifest",
    ]
    return _header(header) + _yaml(compose_document(plan))


# --- Kubernetes --------------------------------------------------------------------------------------


def _probe(*, period_s: int, failures: int) -> dict[str, Any]:
    return {
        "httpGet": {"path": HEALTH_PATH, "port": "http"},
        "periodSeconds": period_s,
        "failureThreshold": failures,
    }


def _volumes(plan: Plan) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(volumes, mounts): /dev/shm in memory, the model cache, the host runtime paths (Ascend)."""
    volumes: list[dict[str, Any]] = [
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": gib_quantity(SHM_BYTES)}},
        {"name": "model-cache", "persistentVolumeClaim": {"claimName": f"{name_of(plan)}-model-cache"}},
    ]
    mounts: list[dict[str, Any]] = [
        {"name": "dshm", "mountPath": "/dev/shm"},
        {"name": "model-cache", "mountPath": MODEL_CACHE_PATH},
    ]
    for i, path in enumerate(platform_of(plan.device).host_mounts):
        volumes.append({"name": f"host-runtime-{i}", "hostPath": {"path": path.rstrip("/")}})
        mounts.append({"name": f"host-runtime-{i}", "mountPath": path.rstrip("/"), "readOnly": True})
    return volumes, mounts


def deployment_document(plan: Plan) -> dict[str, Any]:
    argv = serve_argv(plan)
    name = name_of(plan)
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/component": "vllm"}
    threshold, _, _ = startup_budget(plan)
    resource = platform_of(plan.device).resource
    memory = gib_quantity(host_memory_bytes(plan))
    env: list[dict[str, Any]] = [
        {
            "name": "HF_TOKEN",
            "valueFrom": {"secretKeyRef": {"name": HF_TOKEN_SECRET, "key": HF_TOKEN_KEY, "optional": True}},
        },
        {"name": "HF_HOME", "value": MODEL_CACHE_PATH},
        *({"name": k, "value": v} for k, v in argv.env.items()),
    ]
    volumes, mounts = _volumes(plan)
    container = {
        "name": "vllm",
        "image": image(plan),
        "command": ["vllm", "serve"],
        "args": [argv.model, "--host", "0.0.0.0", "--port", str(VLLM_PORT), *argv.flags],
        "ports": [{"name": "http", "containerPort": VLLM_PORT, "protocol": "TCP"}],
        "env": env,
        "resources": {
            "requests": {
                resource: str(plan.devices),
                "cpu": str(CPU_PER_RANK * plan.devices),
                "memory": memory,
            },
            "limits": {resource: str(plan.devices), "memory": memory},
        },
        "startupProbe": _probe(period_s=STARTUP_PERIOD_S, failures=threshold),
        "readinessProbe": _probe(period_s=READINESS_PERIOD_S, failures=LIVENESS_FAILURES),
        "livenessProbe": _probe(period_s=LIVENESS_PERIOD_S, failures=LIVENESS_FAILURES),
        "volumeMounts": mounts,
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": plan.replicas,
            "selector": {"matchLabels": labels},
            # one replica holds every device it asks for: start the new pod after the old one stopped
            "strategy": {"type": "Recreate"},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [container], "volumes": volumes},
            },
        },
    }


def service_document(plan: Plan) -> dict[str, Any]:
    name = name_of(plan)
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/component": "vllm"}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "type": "ClusterIP",
            "selector": labels,
            "ports": [{"name": "http", "port": VLLM_PORT, "targetPort": "http", "protocol": "TCP"}],
        },
    }


def _startup_comment(plan: Plan) -> list[str]:
    threshold, weights, load_s = startup_budget(plan)
    return [
        f"startupProbe: {threshold} × {STARTUP_PERIOD_S} s = {threshold * STARTUP_PERIOD_S} s ="
        f" ({weights / GIB:.1f} GiB of weights at {LOAD_BYTES_PER_S / GIB:g} GiB/s = {load_s:.0f} s"
        f" + {ENGINE_START_S} s engine start: profiling, torch.compile, KV allocation, graph capture)"
        f" × {STARTUP_MARGIN:g} margin",
    ]


def _resource_comment(plan: Plan) -> list[str]:
    s = plan.serve
    lines = [
        f"{plan.devices} × {platform_of(plan.device).resource} per replica = TP {s.tensor_parallel_size}"
        f" × PP {s.pipeline_parallel_size}"
        + (f" × DP {s.data_parallel_size}" if s.data_parallel_size > 1 else ""),
        f"memory: {plan.estimate.host_memory_bytes / GIB:.1f} GiB host memory from the extras ledger"
        f" (offload, swap, CPU LoRA slots) + {HOST_BASE_BYTES_PER_RANK // GIB} GiB per rank (an allowance)",
        f"model cache: a PersistentVolumeClaim {name_of(plan)}-model-cache of at least"
        f" {gib_quantity(model_cache_bytes(plan))} (ReadWriteMany when replicas > 1)",
        f"HF_TOKEN: kubectl create secret generic {HF_TOKEN_SECRET} --from-literal={HF_TOKEN_KEY}=hf_…",
    ]
    if plan.devices > plan.device.typical_node_devices:
        lines.append(
            f"one pod needs {plan.devices} devices on one node; across nodes use a LeaderWorkerSet"
            " (production-stack's lws-vllm) instead"
        )
    return lines


def render_kubernetes(plan: Plan) -> str:
    header = [
        f"{plan.model_label} on {plan.device.name}, vLLM {plan.vllm_version}: Deployment + Service",
        f"image: {platform_of(plan.device).image_note}",
        *_resource_comment(plan),
        *_startup_comment(plan),
    ]
    return _header(header) + _yaml(deployment_document(plan)) + "---\n" + _yaml(service_document(plan))


# --- Helm: the vLLM production-stack chart -----------------------------------------------------------

# vllmConfig keys the chart's deployment-vllm-multi.yaml turns into flags; every other flag of the
# command goes to extraArgs verbatim. The chart always writes --enable-prefix-caching or
# --no-enable-prefix-caching, so enablePrefixCaching is set to what the command means.
_HELM_KEYS = {
    "--max-model-len": ("maxModelLen", int),
    "--tensor-parallel-size": ("tensorParallelSize", int),
    "--gpu-memory-utilization": ("gpuMemoryUtilization", float),
    "--max-num-seqs": ("maxNumSeqs", int),
    "--dtype": ("dtype", str),
    "--max-loras": ("maxLoras", int),
}


def _is_number(text: str, kind: type) -> bool:
    """A chart key takes the flag's value only as its type (`--max-model-len auto` stays in extraArgs)."""
    if kind is str:
        return True
    try:
        kind(text)
    except ValueError:
        return False
    return True


def helm_values(plan: Plan) -> dict[str, Any]:

    argv = serve_argv(plan)
    config: dict[str, Any] = {}
    extra: list[str] = []
    flags = argv.flags
    i = 0
    while i < len(flags):
        token = flags[i]
        takes_value = i + 1 < len(flags) and not flags[i + 1].startswith("-")
        key = _HELM_KEYS.get(token)
        if key is not None and takes_value and _is_number(flags[i + 1], key[1]):
            name, kind = key
            config[name] = kind(flags[i + 1])
            i += 2
            continue
        if token in ("--enable-prefix-caching", "--no-enable-prefix-caching"):
            i += 1
            continue
        extra.append(token)
        i += 1
    # the chart mounts its memory-backed /dev/shm only when tensorParallelSize is set: always set it
    config["tensorParallelSize"] = plan.serve.tensor_parallel_size
    # the utilization the plan was sized with (the release's default when the command leaves it out)
    config.setdefault("gpuMemoryUtilization", plan.estimate.gpu_memory_utilization)
    prefix = plan.serve.enable_prefix_caching
    config["enablePrefixCaching"] = (
        prefix if prefix is not None else rules_for(plan.vllm_version).prefix_caching_default
    )
    if extra:
        config["extraArgs"] = extra
    repository, _, tag = image(plan).rpartition(":")
    platform = platform_of(plan.device)
    spec: dict[str, Any] = {
        "name": name_of(plan).removeprefix("vllm-") or "model",
        "repository": repository,
        "tag": tag,
        "modelURL": argv.model,
        "replicaCount": plan.replicas,
        "requestCPU": CPU_PER_RANK * plan.devices,
        "requestMemory": gib_quantity(host_memory_bytes(plan)),
        "requestGPU": plan.devices,
        "requestGPUType": platform.resource,
        "pvcStorage": gib_quantity(model_cache_bytes(plan)),
        "shmSize": gib_quantity(SHM_BYTES),
        "vllmConfig": config,
        "hf_token": {"secretName": HF_TOKEN_SECRET, "secretKey": HF_TOKEN_KEY},
    }
    if argv.env:
        spec["env"] = [{"name": k, "value": v} for k, v in argv.env.items()]
    threshold, _, _ = startup_budget(plan)
    engine: dict[str, Any] = {
        "enableEngine": True,
        # the chart's default is "nvidia"; an empty name leaves AMD and Ascend pods on the default runtime
        "runtimeClassName": "nvidia" if plan.device.platform == "cuda" else "",
        "modelSpec": [spec],
        "startupProbe": {
            "initialDelaySeconds": 0,
            "periodSeconds": STARTUP_PERIOD_S,
            "failureThreshold": threshold,
            "httpGet": {"path": HEALTH_PATH, "port": VLLM_PORT},
        },
        "livenessProbe": {
            "initialDelaySeconds": 0,
            "periodSeconds": LIVENESS_PERIOD_S,
            "failureThreshold": LIVENESS_FAILURES,
            "httpGet": {"path": HEALTH_PATH, "port": VLLM_PORT},
        },
    }
    return {"servingEngineSpec": engine}


def render_helm(plan: Plan) -> str:
    header = [
        f"values for the vLLM production-stack chart (vllm-project/production-stack, helm/): {plan.model_label}",
        f"on {plan.device.name}, vLLM {plan.vllm_version}; helm install vllm vllm/vllm-stack -f values.yaml",
        f"image: {platform_of(plan.device).image_note}",
        "the chart mounts /dev/shm (shmSize, memory-backed) and the model cache (pvcStorage) itself",
        *_resource_comment(plan)[:2],
        *_startup_comment(plan),
    ]
    return _header(header) + _yaml(helm_values(plan))


def _warning(plan: Plan) -> str:
    """A first comment line when the planner predicts vLLM will not start this configuration."""
    est = plan.estimate
    if est.fits:
        return ""
    reason = " ".join((est.error or str(est.verdict)).split())
    return f"# WARNING: the planner predicts vLLM does not start this configuration: {reason}\n"


def render(target: str, plan: Plan) -> str:
    """One deployment artifact as text (MEDIA_TYPES gives its media type)."""
    renderers = {
        "command": lambda p: command_text(p) + "\n",
        "docker": render_docker,
        "compose": render_compose,
        "kubernetes": render_kubernetes,
        "helm": render_helm,
    }
    renderer = renderers.get(target)
    if renderer is not None:
        return _warning(plan) + renderer(plan)
    raise PlannerError(
        "target",
        Text("unknown target {target!r}; one of {targets}", target=target[:40], targets=", ".join(TARGETS)),
    )
