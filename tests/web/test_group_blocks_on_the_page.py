"""Issue 22 item 6: a hybrid model's blocks per request are shown per KV group on the planner page."""

from __future__ import annotations

import html
import re

from fastapi.testclient import TestClient


def test_qwen3_next_page_lists_each_groups_blocks(client: TestClient) -> None:
    # Qwen3-Next-80B at TP 4 on an H100, 0.33.0, S 32,768: block 320 (lcm(16, 64) x 5, FlashInfer GDN prefill,
    # tests/unit/test_hybrid_rules_by_release.py); 36 GDN + 12 full layers -> 3 mamba groups of 12 holding 2 + 1
    # checkpoint = 3 blocks a request each, and one full group of cdiv(32,768, 320) = 103 blocks; 3 x 3 + 103 = 118
    params = {
        "model": "Qwen/Qwen3-Next-80B-A3B-Instruct",
        "device": "h100",
        "vllm_version": "0.33.0",
        "max_model_len": 32768,
        "tensor_parallel_size": 4,
    }
    page = client.get("/", params=params)
    assert page.status_code == 200
    table = re.search(r'<table class="symbols" id="block-math">(.*?)</table>', page.text, re.S)
    assert table
    text = html.unescape(re.sub(r"<[^>]+>", " ", table.group(1)))
    rows = re.findall(
        r"blocks per request, group (\d) \((\w+), (\d+) layers\)\s+\S.*?=\s+([\d,⌈÷ ⌉]+?)\s+([\d,]+)\s", text
    )
    assert [(g, kind, layers) for g, kind, layers, _, _ in rows] == [
        ("1", "mamba", "12"),
        ("2", "mamba", "12"),
        ("3", "mamba", "12"),
        ("4", "full", "12"),
    ]
    assert [value for *_, value in rows] == ["3", "3", "3", "103"]
