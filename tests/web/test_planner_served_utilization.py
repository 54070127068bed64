"""The planner's --gpu-memory-utilization box and slider show the utilization the estimate served when the
box is blank: 0.34.0's extensible KV cache takes 1.0 when the flag is unset (vllm/config/cache.py
``resolved_gpu_memory_utilization`` in the 0.34.0 wheel; app.core.extensible_kv.default_utilization), and
the page said 0.92 beside a budget of "79.1 GiB (1)" (the lead's Chromium walk, round 11b)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.web.app import create_app

PAGE = "/?v=1&model=meta-llama/Llama-3.1-8B-Instruct&device=nvidia-h100-sxm-80gb&vllm_version={version}"


def _util_box_and_slider(version: str, extra: str = "") -> tuple[str, str]:
    body = TestClient(create_app()).get(PAGE.format(version=version) + extra).text
    box = re.search(r'<input id="f-util" [^>]*placeholder="([^"]*)"', body, re.S)
    slider = re.search(r'<input id="f-util-slider" [^>]*value="([^"]*)"', body, re.S)
    assert box is not None and slider is not None
    return box.group(1), slider.group(1)


def test_a_blank_utilization_shows_what_the_release_serves() -> None:
    # 0.34.0, CUDA, no --kv-cache-memory-bytes: the extensible cache, utilization 1.0 when unset
    assert _util_box_and_slider("0.34.0") == ("1", "1")
    # 0.33.0: the profiled budget's default, 0.92 (vllm/config/cache.py gpu_memory_utilization since 0.21)
    assert _util_box_and_slider("0.33.0") == ("0.92", "0.92")
    # 0.34.0 with the cache switched off sizes the pool as 0.33.0 does, at 0.92
    assert _util_box_and_slider("0.34.0", "&enable_extensible_kv_cache=false") == ("0.92", "0.92")


def test_a_given_utilization_keeps_its_slider() -> None:
    assert _util_box_and_slider("0.34.0", "&gpu_memory_utilization=0.8")[1] == "0.8"
