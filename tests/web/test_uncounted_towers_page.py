"""The planner page names a tower it cannot count: MiniMax-M3's vision tower (a clip_vision_model with 3-D RoPE and a
patch merger, minimax_m3 VL) is built by vLLM with the model, so the extras ledger says it is not counted, in English
and in Chinese, instead of showing nothing."""

from __future__ import annotations

from fastapi.testclient import TestClient

PAGE = "/?model=nvidia/MiniMax-M3-NVFP4&device=b200&tp=8"


def test_the_page_names_the_uncounted_tower(client: TestClient) -> None:
    html = client.get(PAGE).text
    assert 'data-key="multimodal"' in html
    assert "Encoder towers (not counted)" in html and "vision_config (clip_vision_model)" in html


def test_the_chinese_page_says_it_too(client: TestClient) -> None:
    html = client.get(PAGE + "&lang=zh").text
    assert "编码塔（未计入）" in html and "vision_config (clip_vision_model)" in html


def test_text_only_mode_says_the_tower_is_not_loaded(client: TestClient) -> None:
    html = client.get(PAGE + "&limit_mm_per_prompt=image%3D0%2Cvideo%3D0").text
    assert "the towers (vision_config (clip_vision_model)) are not loaded" in html
