"""The Extras fieldset's two inputs of issue 22 item 6 / item 2: memory other processes already hold on
each device (vLLM's start-up free-memory check) and an hf_quant_config.json pasted beside config.json."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

CURRENT = Path(__file__).resolve().parents[1] / "data" / "configs" / "current"
# nvidia/Llama-3.1-70B-Instruct-FP8 (tests/data/configs/current/SOURCES.md): its config.json has no
# quantization_config; hf_quant_config.json says producer modelopt, quant_algo FP8, kv_cache_quant_algo FP8
LLAMA_70B_FP8 = "nvidia--Llama-3.1-70B-Instruct-FP8"


def _files() -> tuple[str, str]:
    config = (CURRENT / f"{LLAMA_70B_FP8}_config.json").read_text(encoding="utf-8")
    quant = (CURRENT / f"{LLAMA_70B_FP8}_hf_quant_config.json").read_text(encoding="utf-8")
    return config, quant


def _permalink(html: str) -> dict[str, list[str]]:
    found = re.search(r'id="permalink"[^>]*href="([^"]+)"', html) or re.search(
        r'href="([^"]*\?v=1[^"]*)"[^>]*id="permalink"', html
    )
    assert found is not None
    return parse_qs(urlparse(found.group(1).replace("&amp;", "&")).query)


def test_memory_held_by_others_has_a_control_and_gives_vllms_refusal(client):
    html = client.get("/").text
    assert 'name="device_memory_used_gib"' in html
    # H100 (79.1 GiB), 0.33.0, utilization 0.92 (the release default): requested ceil(79.1 x 0.92) = 72.77 GiB;
    # free 79.1 - 0.5 (CUDA context) - 10 = 68.6 GiB < 72.77 -> vLLM's refusal (tests/unit/test_device_situations.py)
    page = client.get(
        "/", params={"vllm_version": "0.33.0", "max_model_len": "8192", "device_memory_used_gib": "10"}
    ).text
    assert '<details id="extras-details" open>' in page
    assert re.search(r'name="device_memory_used_gib"[^>]*value="10.0"', page)
    assert "Free memory on device cuda:0 (68.6/79.1 GiB) on startup is less than desired" in page
    # the verdict box says vLLM refuses; its list is the recommendation's, whose first step lowers the
    # utilization to the free share (tests/web/test_refusal_changes.py)
    box = re.search(r'id="verdict" data-verdict=.*?class="model-note"', page, re.S)
    assert box is not None
    assert "vLLM refuses to start before loading the weights" in box.group(0)
    assert "Raise --gpu-memory-utilization" not in box.group(0)
    assert _permalink(page)["device_memory_used_gib"] == ["10.0"]
    # refused before loading: no KV pool, tokens or concurrency is ever sized, so none is shown as a number
    # (the estimate's own pool of this configuration would be ~50 GiB and 160x: numbers of a start that never was)
    assert "never sized: vLLM refuses to start: other processes hold the memory it asks for" in page
    for key in ("kv-bytes", "kv-tokens", "concurrency"):
        shown = re.search(rf'<dd id="n-{key}">([^<]*)</dd>', page)
        assert shown is not None and shown.group(1) in ("never sized", "—"), key
    assert (
        "concurrent sequences of" not in page
    )  # no replica line multiplies a concurrency that is never sized


def test_memory_held_by_others_blank_is_none_and_a_bad_value_is_named(client):
    page = client.get("/", params={"device_memory_used_gib": ""}).text
    assert '<details id="extras-details">' in page  # blank = nothing held: the fieldset stays closed
    bad = client.get("/", params={"device_memory_used_gib": "ten"})
    assert bad.status_code == 200 and "device_memory_used_gib" in bad.text
    api = client.get("/api/estimate", params={"device_memory_used_gib": "-1"})
    assert api.status_code == 422 and "device_memory_used_gib" in api.text


def test_a_pasted_hf_quant_config_sets_the_checkpoints_kv_dtype(client):
    config, quant = _files()
    base = {
        "config_json": config,
        "tensor_parallel_size": "4",
        "max_model_len": "8192",
        "vllm_version": "0.33.0",
    }
    # TP 4: 8 // 4 = 2 KV heads x (128 + 128) x 80 layers: 81,920 B a token in bf16, 40,960 in fp8
    plain = client.post("/api/estimate", json=base).json()
    assert plain["kv_bytes_per_token"] == 81_920
    with_quant = client.post("/api/estimate", json={**base, "hf_quant_config_json": quant}).json()
    assert with_quant["kv_bytes_per_token"] == 40_960
    assert with_quant["kv_cache_dtype"] == "fp8_e4m3"
    # the page: the control, its value echoed, and a permalink that carries it (deflated) and plans the same
    page = client.post("/", data={**base, "hf_quant_config_json": quant}).text
    assert 'name="hf_quant_config_json"' in page and "kv_cache_quant_algo" in page
    link = _permalink(page)
    assert link["hf_quant_config_json"][0].startswith("z:")
    again = client.get("/api/estimate", params={k: v[0] for k, v in link.items()}).json()
    assert again["kv_bytes_per_token"] == 40_960


def test_an_hf_quant_config_without_a_config_json_is_named(client):
    _, quant = _files()
    r = client.post("/api/estimate", json={"hf_quant_config_json": quant})
    assert r.status_code == 422 and "hf_quant_config_json" in r.text
    bad = client.post("/api/estimate", json={"config_json": _files()[0], "hf_quant_config_json": "[1]"})
    assert bad.status_code == 422 and "hf_quant_config_json" in bad.text
