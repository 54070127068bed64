"""The planner's examples from issue 13 ("Nothing false"), each as a user meets it on the page or the API."""

from __future__ import annotations

import html
import re

import pytest

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.recommend import utilization_ceiling
from app.core.specs import ServeConfig
from app.web.planner.views import borderline_view
from tests.unit.test_equations import holds

from .conftest import TestClient

GEMMA3 = "google/gemma-3-27b-it"
LLAMA_8B = "meta-llama/Llama-3.1-8B"


def _select_value(page: str, name: str) -> str:
    select = re.search(rf'<select id="f-{name}" name="{name}">(.*?)</select>', page, re.S)
    assert select, name
    chosen = re.search(r'<option value="([^"]+)" selected>', select.group(1))
    assert chosen, f"nothing selected in {name}"
    return chosen.group(1)


@pytest.mark.parametrize(
    ("alias", "device_id"),
    [
        ("910b", "huawei-ascend-910b-64gb"),  # the README's own example alias
        ("a100", "nvidia-a100-sxm4-80gb"),
        ("mi300x", "amd-mi300x-192gb"),
    ],
)
def test_a_device_alias_shows_the_device_it_stands_for(
    client: TestClient, alias: str, device_id: str
) -> None:
    r = client.get("/", params={"device": alias})
    assert r.status_code == 200
    assert _select_value(r.text, "device") == device_id  # was "nvidia-h100-sxm-80gb"
    permalink = html.unescape(re.search(r'<a id="permalink" href="([^"]+)"', r.text).group(1))
    assert f"device={device_id}" in permalink
    api = client.get("/api/estimate", params={"device": alias}).json()
    assert api["device"] == device_id and api["inputs"]["device"] == device_id


def test_devices_default_to_one_replica_of_tp_times_pp(client: TestClient) -> None:
    r = client.get("/", params={"model": "meta-llama/Llama-3.1-70B-Instruct", "tensor_parallel_size": 8})
    assert 'placeholder="8"' in r.text
    # ⌊8 devices ÷ (TP × PP = 8)⌋ = 1 replica, not "needs more than the 1 device(s) given"
    assert "needs more than" not in r.text
    fleet = re.search(r'<p class="fleet">(.*?)</p>', html.unescape(r.text)).group(1)
    assert fleet.startswith("⌊devices 8 ÷ (TP × PP = 8)⌋ = 1 replica → 1 × ")
    per, total = re.search(r"→ 1 × ([\d.]+) = ([\d.]+) concurrent", fleet).groups()
    assert holds(f"1 × {per}", total)  # the fleet line is an equation too
    # 12 devices: ⌊12 ÷ 8⌋ = 1 whole replica (the old "12 ÷ 8 = 1" was false as written)
    r12 = client.get(
        "/", params={"model": "meta-llama/Llama-3.1-70B-Instruct", "tensor_parallel_size": 8, "devices": 12}
    )
    assert "⌊devices 12 ÷ (TP × PP = 8)⌋ = 1 replica →" in html.unescape(r12.text)


def test_max_model_len_above_the_models_maximum_is_refused_with_vllms_message(client: TestClient) -> None:
    # Llama-3.1-8B derives 131,072 (max_position_embeddings; llama3 RoPE keeps it); vLLM 0.19.0's
    # _get_and_verify_max_len raises this ValueError before anything is loaded
    r = client.get("/api/estimate", params={"max_model_len": 200000, "vllm_version": "0.19.0"}).json()
    assert r["fits"] is False and r["error_kind"] == "max_len_above_derived"
    assert r["error"].startswith(
        "ValueError: User-specified max_model_len (200000) is greater than the derived max_model_len "
        "(max_position_embeddings=131072 or model_max_length=None in model's config.json). To allow "
        "overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1."
    )
    assert r["log_lines"] == [r["error"]]
    old = client.get("/api/estimate", params={"max_model_len": 200000, "vllm_version": "0.6.6"}).json()
    assert old["error"].endswith(
        "This may lead to incorrect model outputs or CUDA errors. To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
    )
    allowed = client.get(
        "/api/estimate",
        params={"max_model_len": 200000, "vllm_version": "0.19.0", "allow_long_max_model_len": "true"},
    ).json()
    assert allowed["error_kind"] is None and allowed["fits"] is True
    assert any("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1" in w for w in allowed["warnings"])
    page = client.get("/", params={"max_model_len": 200000, "allow_long_max_model_len": "true"})
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve" in html.unescape(page.text)  # the command carries it
    assert "allow_long_max_model_len=true" in html.unescape(page.text)  # and the permalink


def test_weights_larger_than_the_device_fail_while_loading(client: TestClient) -> None:
    # DeepSeek-V3 on one H100: 626.67 GiB of weights on a 79.10 GiB device. vLLM never reaches profiling,
    # so there is no "Available KV cache memory: -557.63 GiB" line.
    r = client.get("/api/estimate", params={"model": "deepseek-ai/DeepSeek-V3", "max_model_len": 4096}).json()
    assert r["error_kind"] == "load_oom" and r["verdict"] == "load_oom"
    assert not any("Available KV cache memory" in line for line in r["log_lines"])
    assert r["log_lines"][-1].startswith("torch.OutOfMemoryError: CUDA out of memory.")
    page = client.get("/", params={"model": "deepseek-ai/DeepSeek-V3", "max_model_len": 4096}).text
    assert "-557." not in page and "−557." not in page  # no KV pool is ever sized
    assert "never sized" in page


def test_recommend_accepts_device_memory_gib_and_its_final_configuration_is_an_estimate(
    client: TestClient,
) -> None:
    body = {
        "model": "meta-llama/Llama-3.1-70B-Instruct",
        "device": "h100",
        "device_memory_gib": 79.19,
        "target_max_model_len": 131072,
        "target_concurrency": 16,
        "enable_chunked_prefill": True,
    }
    r = client.post("/api/recommend", json=body)
    assert r.status_code == 200, r.text
    final = r.json()["final"]
    assert final["device_memory_gib"] == 79.19 and final["device"] == "nvidia-h100-sxm-80gb"
    for key in ("enable_chunked_prefill", "quantization", "dtype", "cpu_offload_gb"):
        assert key in final
    est = client.post("/api/estimate", json=final)
    assert est.status_code == 200, est.text
    assert est.json()["tensor_parallel_size"] == final["tensor_parallel_size"]


def _block_math_rows(page: str) -> list[tuple[str, str]]:
    table = re.search(r'<table class="symbols" id="block-math">(.*?)</table>', page, re.S)
    assert table
    rows = re.findall(r"<td><code>(.*?)</code></td><td class=\"num\">(.*?)</td>", table.group(1), re.S)
    return [(html.unescape(f), html.unescape(v)) for f, v in rows]


@pytest.mark.parametrize(
    "model",
    [
        GEMMA3,
        "google/gemma-2-27b-it",
        "openai/gpt-oss-120b",
        "meta-llama/Llama-4-Scout-17B-16E-Instruct",
        "Qwen/Qwen3-Next-80B-A3B-Instruct",
        LLAMA_8B,
    ],
)
@pytest.mark.parametrize("version", ["0.10.2", "0.19.0", "0.33.0"])
def test_every_equation_on_the_page_and_in_the_api_holds(
    client: TestClient, model: str, version: str
) -> None:
    params = {"model": model, "vllm_version": version, "max_model_len": 32768, "tensor_parallel_size": 8}
    page = client.get("/", params=params)
    assert page.status_code == 200
    rows = _block_math_rows(page.text)
    assert len(rows) >= 5
    substituted = re.search(r'id="formula-substituted"><code>= (.*?)</code> <code>= (.*?)</code>', page.text)
    rows.append((html.unescape(substituted.group(1)), html.unescape(substituted.group(2))))
    api = client.get("/api/estimate", params=params).json()
    rows += [(t["formula"], t["value"]) for t in api["terms"]]
    false = [f"{f} = {v}" for f, v in rows if not holds(f, v)]
    assert not false


def test_the_borderline_card_never_suggests_a_utilization_the_recommender_calls_unsafe() -> None:
    model, device = find_model(LLAMA_8B), find_device("h100")
    seen = 0
    for length in range(400_000, 600_001, 4096):
        est = estimate(
            model=model,
            device=device,
            serve=ServeConfig(
                max_model_len=length, gpu_memory_utilization=0.93, allow_long_max_model_len=True
            ),
            vllm_version="0.19.0",
        )
        view = borderline_view(est)
        if view is None:
            continue
        seen += 1
        ceiling, _ = utilization_ceiling(est)
        assert not view.raise_util_to or float(view.raise_util_to) <= ceiling
    assert seen > 0


def test_the_recommendation_says_fp8_was_undone_and_unapplied_steps_are_one_line(client: TestClient) -> None:
    r = client.get(
        "/recommend",
        params={
            "model": "meta-llama/Llama-3.1-70B-Instruct",
            "vllm_version": "0.19.0",
            "max_model_len": 131072,
            "target_concurrency": 8,
        },
        headers={"HX-Request": "true"},
    )
    assert r.status_code == 200
    text = html.unescape(r.text)
    assert 'class="step step-undone" data-key="kv_cache_dtype"' in text
    assert "Not needed once tensor_parallel_size 1 → 8" in text
    skipped = re.findall(r'<li class="step step-skipped"[^>]*>(.*?)</li>', text, re.S)
    assert skipped and all("<table" not in item and "\n" not in item.strip() for item in skipped)
    assert "--kv-cache-dtype" not in re.search(
        r'id="recommend-command"><code>(.*?)</code>', text, re.S
    ).group(1)


def test_a_context_several_times_too_long_is_s_bound_when_a_useful_length_starts() -> None:
    """gemma-3-27b on an Ascend 910B at 49,152 tokens: the pool (~3.75 GiB) holds a context of a third of
    that, so halving is not enough, yet shortening is the answer; the verdict used to be "the budget is
    eaten by weights & activations … shortening max_model_len does not help"."""
    model, device = find_model(GEMMA3), find_device("910b")
    est = estimate(model=model, device=device, serve=ServeConfig(max_model_len=49152), vllm_version="0.33.0")
    assert not est.fits and est.verdict == "s_bound"
    largest = est.estimated_max_model_len or 0
    assert 2048 <= largest < 49152 // 2  # halving alone would not start
    shorter = estimate(
        model=model, device=device, serve=ServeConfig(max_model_len=largest), vllm_version="0.33.0"
    )
    assert shorter.fits  # and the length vLLM's own estimate names does


def test_an_empty_pool_stays_budget_bound() -> None:
    # Llama-3.1-70B on one H200 at 0.8: 131.42 GiB of weights load on the 139.7 GiB device but exceed the
    # 111.76 GiB budget; the pool is negative (vLLM 0.19's gpu_worker logs it as is, then refuses: no blocks)
    est = estimate(
        model=find_model("meta-llama/Llama-3.1-70B-Instruct"),
        device=find_device("h200"),
        serve=ServeConfig(max_model_len=8192, gpu_memory_utilization=0.8),
        vllm_version="0.19.0",
    )
    assert est.kv_cache_bytes < 2048 * est.kv_bytes_per_token and est.verdict == "budget_bound"


def test_too_few_devices_is_a_refusal_not_a_green_fits(client: TestClient) -> None:
    # TP 8 on 4 devices: vLLM raises "World size (8) is larger than the number of available GPUs (4)"
    query = {"v": "1", "model": "meta-llama/Llama-3.1-70B", "devices": "4", "tensor_parallel_size": "8"}
    page = client.get("/", params=query)
    assert page.status_code == 422
    assert "data-verdict=" not in page.text  # no verdict box at all, let alone a green one
    assert "World size (8) is larger than the number of available GPUs (4)" in html.unescape(page.text)
    api = client.get("/api/estimate", params=query)
    assert api.status_code == 422
    assert "devices" in api.text and "World size (8)" in api.text
    # 8 devices: it starts (TP 8 × 17.6 GB of weights per H100)
    assert client.get("/api/estimate", params={**query, "devices": "8"}).json()["verdict"] == "fits"
