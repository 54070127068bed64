"""GET /api/deploy (the planned configuration as command, docker run, compose, Kubernetes, Helm),
`/api/estimate?format=yaml`, and `kv-planner deploy`."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient

from app.cli import main
from tests.unit.test_deploy import compose_errors, helm_errors, k8s_errors

# the example: Llama-3.1-70B, TP 4, fp8 KV, 32k, vLLM 0.19.0
QUERY = (
    "model=meta-llama/Llama-3.1-70B&device=h100&tensor_parallel_size=4&kv_cache_dtype=fp8"
    "&max_model_len=32768&vllm_version=0.19.0"
)
FLAGS = "--max-model-len 32768 --tensor-parallel-size 4 --kv-cache-dtype fp8"


def _docs(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


@pytest.mark.parametrize(
    ("target", "media"),
    [
        ("command", "text/plain"),
        ("docker", "text/plain"),
        ("compose", "application/yaml"),
        ("kubernetes", "application/yaml"),
        ("helm", "application/yaml"),
    ],
)
def test_each_target_answers_text_with_its_media_type(client: TestClient, target: str, media: str) -> None:
    r = client.get(f"/api/deploy?{QUERY}&target={target}")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].split(";")[0] == media
    assert "v0.19.0" in r.text or target == "command"
    # every target carries the command's three flags (the YAML ones as list items or chart keys)
    flat = " ".join(r.text.replace("\\\n", " ").split())
    if target in ("command", "docker"):
        assert FLAGS in flat
    else:
        assert "32768" in flat and "fp8" in flat


def test_the_yaml_targets_parse_and_validate_with_the_planners_sizes(client: TestClient) -> None:
    compose = _docs(client.get(f"/api/deploy?{QUERY}&target=compose").text)
    assert compose_errors(compose[0]) == []
    kube = _docs(client.get(f"/api/deploy?{QUERY}&target=kubernetes").text)
    assert [d["kind"] for d in kube] == ["Deployment", "Service"]
    assert all(k8s_errors(d) == [] for d in kube)
    container = kube[0]["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "vllm/vllm-openai:v0.19.0"
    assert container["resources"]["requests"]["nvidia.com/gpu"] == "4"
    assert " ".join(container["args"]).endswith(FLAGS)
    (values,) = _docs(client.get(f"/api/deploy?{QUERY}&target=helm").text)
    assert helm_errors(values) == []
    assert values["servingEngineSpec"]["modelSpec"][0]["vllmConfig"]["maxModelLen"] == 32768


def test_ascend_910b_requests_huawei_ascend910(client: TestClient) -> None:
    query = QUERY.replace("device=h100", "device=910b").replace("&kv_cache_dtype=fp8", "")
    kube = _docs(client.get(f"/api/deploy?{query}&target=kubernetes").text)
    requests = kube[0]["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
    assert requests["huawei.com/Ascend910"] == "4" and "nvidia.com/gpu" not in requests
    (values,) = _docs(client.get(f"/api/deploy?{query}&target=helm").text)
    assert values["servingEngineSpec"]["modelSpec"][0]["repository"] == "quay.io/ascend/vllm-ascend"


def test_replicas_from_the_fleet_go_into_the_manifests(client: TestClient) -> None:
    kube = _docs(client.get(f"/api/deploy?{QUERY}&target=kubernetes&replicas=6").text)
    assert kube[0]["spec"]["replicas"] == 6
    (values,) = _docs(client.get(f"/api/deploy?{QUERY}&target=helm&replicas=6").text)
    assert values["servingEngineSpec"]["modelSpec"][0]["replicaCount"] == 6


def _fields(r: Any) -> set[str]:
    assert r.status_code == 422, r.text
    return {e["loc"][-1] for e in r.json()["detail"]}


def test_bad_inputs_are_a_422_naming_the_field(client: TestClient) -> None:
    assert _fields(client.get(f"/api/deploy?{QUERY}&target=nomad")) == {"target"}
    assert _fields(client.get(f"/api/deploy?{QUERY}&replicas=0")) == {"replicas"}
    assert _fields(client.get(f"/api/deploy?{QUERY}&targt=helm")) == {"targt"}  # a typo is not ignored
    assert _fields(client.get("/api/deploy?target=helm&device=abacus")) == {"device"}
    assert _fields(client.get("/api/deploy?target=helm&device=tpu-v5e")) == {"device"}  # no vLLM image


def test_a_configuration_that_does_not_start_says_so_in_the_manifest(client: TestClient) -> None:
    """70B bf16 on one H100: 131 GiB of weights on 79 GiB; the manifest says vLLM will not start."""
    r = client.get("/api/deploy?model=meta-llama/Llama-3.1-70B&device=h100&target=kubernetes")
    assert r.status_code == 200
    assert r.text.startswith("# WARNING: the planner predicts vLLM does not start this configuration")


def test_estimate_as_yaml_has_the_same_values_as_the_json(client: TestClient) -> None:
    as_json = client.get(f"/api/estimate?{QUERY}").json()
    r = client.get(f"/api/estimate?{QUERY}&format=yaml")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/yaml")
    as_yaml = yaml.safe_load(r.text)
    assert as_yaml == json.loads(json.dumps(as_json))
    assert as_yaml["kv_bytes_per_token"] == as_json["kv_bytes_per_token"]
    posted = client.post("/api/estimate?format=yaml", json={"max_model_len": 8192})
    assert posted.headers["content-type"].startswith("application/yaml")
    assert yaml.safe_load(posted.text)["max_model_len"] == 8192
    assert _fields(client.get(f"/api/estimate?{QUERY}&format=xml")) == {"format"}


def test_the_cli_deploys_the_same_manifest_as_the_api(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["deploy", "meta-llama/Llama-3.1-70B", "--device", "h100", "-tp", "4", "--kv-cache-dtype", "fp8"]
    argv += [
        "--max-model-len",
        "32768",
        "--vllm-version",
        "0.19.0",
        "--target",
        "kubernetes",
        "--replicas",
        "2",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    api = client.get(f"/api/deploy?{QUERY}&target=kubernetes&replicas=2").text
    assert out == api
    assert main(["deploy", "meta-llama/Llama-3.1-8B", "--device", "h100", "--target", "nomad"]) == 2
    assert "target" in capsys.readouterr().err
