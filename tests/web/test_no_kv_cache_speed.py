"""A model that keeps no KV cache starts (vLLM 0.33.0 v1/engine/core.py _initialize_kv_caches skips the KV profile when
no layer has a KV cache spec) but generates nothing: the Speed section must say so, not call the start a failure."""

from __future__ import annotations

import re
from pathlib import Path

HELD = Path(__file__).resolve().parents[1] / "data" / "configs" / "heldout_0_33p"


def test_an_encoder_only_model_gets_no_speed_and_is_not_called_unstarted(client):
    # jsonzhuwei/bge-large-zh: BertModel, 24 encoder-only layers (heldout_0_33p SOURCES.md)
    config = (HELD / "jsonzhuwei--bge-large-zh_config.json").read_text()
    page = client.post("/", data={"config_json": config, "vllm_version": "0.33.0"}).text
    link = re.search(r'id="permalink"[^>]*href="[^"?]*\?([^"]+)"', page) or re.search(
        r'href="[^"?]*\?(v=1[^"]*)"[^>]*id="permalink"', page
    )
    assert link is not None
    speed = client.get(
        "/speed?" + link.group(1).replace("&amp;", "&")
    ).text  # the Speed section as the page loads it
    assert "would not start with these settings" not in speed  # before: "vLLM would not start … (Fits)"
    assert "keeps no KV cache" in speed and "no TTFT, TPOT or output throughput to show" in speed
    api = client.post("/api/performance", json={"config_json": config, "vllm_version": "0.33.0"})
    assert api.status_code == 422
    assert api.json()["detail"][0]["loc"] == ["body", "model"] and "keeps no KV cache" in api.text


def test_a_section_posted_without_state_answers_for_the_posted_fields(client):
    # before: a POST to /speed with no `state` field was read as no inputs at all and answered with the default
    # model's speed (Llama-3.1-8B: KV cliff 220 clients), whatever model the form named
    config = (HELD / "jsonzhuwei--bge-large-zh_config.json").read_text()
    posted = client.post("/speed", data={"config_json": config, "vllm_version": "0.33.0"})
    assert posted.status_code == 422 and "keeps no KV cache" in posted.text
    via_state = client.post("/speed", data={"state": "v=1&model=Qwen%2FQwen3-8B"}).text
    assert client.post("/speed", data={"v": "1", "model": "Qwen/Qwen3-8B"}).text == via_state
