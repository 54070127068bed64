"""Words the walkthrough found in the wrong language (issue 24 item 11), each in the state it was seen.

The sentence scan (tests/web/test_i18n_pages.py) looks for English *sentences* on full pages; these are
single words, SVG text served by the lazy sections, and Chinese on English pages.
"""

from __future__ import annotations

import html
import re

from fastapi.testclient import TestClient

from app.web.app import create_app

APP = create_app()
CJK = re.compile(r"[\u4e00-\u9fff]")
ASCEND_72B = (
    "/?v=1&model=Qwen%2FQwen2.5-72B-Instruct&device=huawei-ascend-910b-64gb&devices=8"
    "&max_model_len=32768&tensor_parallel_size=8"
)
FLEET = (
    "/fleet?v=1&model=meta-llama%2FLlama-3.1-70B-Instruct&max_model_len=32768&input_tokens=2000"
    "&output_tokens=500&requests_per_s=30&slo_ttft_ms=1500&slo_tpot_ms=40&price_per_device_hour=3"
    "&devices_per_node=8"
)


def _zh() -> TestClient:
    return TestClient(APP, cookies={"lang": "zh"})


def _visible(page: str) -> str:
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_english_explore_names_its_presets_in_english() -> None:
    page = TestClient(APP).get("/explore?preset=mixed_long_short&lang=en").text
    presets = re.search(r'<div class="preset-list".*?</div>', page, re.S).group(0)
    title = re.search(r'<strong id="w-title">(.*?)</strong>', page, re.S).group(1)
    assert not CJK.search(_visible(presets)) and not CJK.search(title)
    for name in ("One very long request", "Long and short mixed", "Many short requests", "Shared prefixes"):
        assert name in presets
    assert title.startswith("Long and short mixed — A few long requests")
    # and the Chinese page keeps the guide's own names
    zh = _zh().get("/explore?preset=mixed_long_short").text
    assert "长短交错" in re.search(r'<strong id="w-title">(.*?)</strong>', zh, re.S).group(1)


def test_no_project_jargon_on_explore() -> None:
    for path in ("/explore?lang=en", "/explore?preset=long_single&lang=en"):
        text = _visible(TestClient(APP).get(path).text)
        assert "the seed" not in text.lower() and "seed's" not in text.lower(), path
    zh = _visible(_zh().get("/explore?preset=long_single").text)
    assert "种子文本" not in zh and "种子中" not in zh


def test_speed_chart_axis_in_chinese() -> None:
    r = _zh().get(f"/speed{ASCEND_72B[1:]}", headers={"HX-Request": "true"})
    assert r.status_code == 200
    svg = re.search(r'<svg class="speed-chart".*?</svg>', r.text, re.S).group(0)
    texts = " ".join(re.findall(r"<(?:text|title|desc)\b[^>]*>([^<]*)<", svg))
    assert "concurrent clients" not in texts and "并发客户端数" in texts
    assert not re.search(r"[A-Za-z]{4,}", re.sub(r"TPOT|KV|token|ms", "", texts)), texts


def test_engine_preemptions_steps_in_chinese() -> None:
    zh = _zh()
    versions = zh.get(f"/part/versions{ASCEND_72B[1:]}", headers={"HX-Request": "true"}).text
    assert ">Engine<" not in versions and "引擎" in versions
    explore = zh.get("/explore?preset=mixed_long_short").text
    labels = re.findall(r"<dt>([^<]*)</dt><dd id=\"w-(?:preemptions|steps)\"", explore)
    assert labels == ["抢占次数", "步数"]


def test_catalog_confidence_is_said_in_words() -> None:
    zh = _visible(_zh().get(ASCEND_72B).text)
    assert "（likely）" not in zh and "(likely)" not in zh and "较可信" in zh
    # Llama-3.3-70B-Instruct is "recalled" (model_specs): the word is explained where it is shown
    en = _visible(TestClient(APP).get("/?v=1&model=meta-llama/Llama-3.3-70B-Instruct&lang=en").text)
    assert "recalled: its config.json was not read from the published file" in en


def test_fleet_in_chinese_says_checkpoint_in_chinese() -> None:
    text = _visible(_zh().get(FLEET).text)
    assert "checkpoint" not in text.lower()
    assert "检查点" in text


def test_no_translated_literal_hides_inside_an_f_string() -> None:
    """The extractor does not read f-string fields, so ``f"{t('concurrent clients')}"`` never reached the
    catalog and stayed English on Chinese pages; a translated literal is bound to a name first."""
    import io
    import tokenize
    from pathlib import Path

    inside = re.compile(r"""\{[^{}]*\b(?:t|_|gettext|Text|N_)\(\s*['"]""")
    found = []
    for path in sorted((Path(__file__).resolve().parents[2] / "app").rglob("*.py")):
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
            is_f = tok.type == tokenize.STRING and tok.string.lstrip("rbRB").lower().startswith("f")
            if is_f and inside.search(tok.string):
                found.append(f"{path.name}:{tok.start[0]}")
    assert not found, found
