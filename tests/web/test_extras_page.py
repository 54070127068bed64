"""The planner page's Extras fieldset and the ledger under the partition table."""

from __future__ import annotations

import re


def test_extras_fieldset_is_closed_by_default_and_no_ledger(client):
    html = client.get("/").text
    assert '<details id="extras-details">' in html
    assert 'id="extras-ledger"' not in html


def test_extras_open_the_fieldset_and_show_the_ledger(client):
    # Llama-3.1-8B + 8 LoRA slots of rank 64: 2,955,411,456 B = 2.75 GiB per device (tests/unit/test_extras.py)
    html = client.get(
        "/", params={"vllm_version": "0.19.0", "enable_lora": "true", "max_loras": "8", "max_lora_rank": "64"}
    ).text
    assert '<details id="extras-details" open>' in html
    row = re.search(r'<tr data-key="lora_slots">.*?</tr>', html, re.S)
    assert row is not None
    assert "2.75 GiB" in row.group(0)
    assert "--enable-lora" in html  # in the ledger and in the generated command
    assert "--max-loras 8 --max-lora-rank 64" in html


def test_host_memory_bar_appears_with_kv_offloading(client):
    html = client.get("/", params={"vllm_version": "0.19.0", "kv_offloading_size_gib": "64"}).text
    assert 'id="host-memory"' in html
    assert "64.00 GiB" in html
    assert 'class="host-bar"' in html


def test_a_bad_extras_field_is_named_on_the_page(client):
    response = client.get("/", params={"speculative_config": "{oops"})
    assert response.status_code == 422  # nothing computed without it (issue 24 item 1)
    assert 'data-unusable="speculative_config"' in response.text
