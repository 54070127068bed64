"""Every page served in Chinese, scanned for English sentences left untranslated.

The pages are every HTML route of the app (listed from the app itself, so a new page is scanned
without editing this file) in several states — models of each attention kind, an old version, an
Ascend device, a length that does not start, an unknown model, each workload preset, every closed
section, and the doctor on every real log in tests/data/logs. What may stay English is code (flags,
metric and field names, ``<code>``/``<pre>``), vLLM's own log and error text (quoted), and proper
names (model ids, device names); see ``tests.i18n_scan.english_sentences``.
"""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from app.core.catalog import list_devices, list_models
from app.core.workload import WORKLOAD_PRESETS
from app.web.app import create_app
from app.web.inputs.resolve import MODEL_PLACEHOLDER
from app.web.planner.routes import PARTS
from tests.i18n_scan import english_sentences
from tests.web.conftest import TestClient

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
# the command's stand-in for a model id the user has to fill in is a name like the ids (issue 24 item 2)
NAMES = (
    tuple(d.name for d in list_devices())
    + tuple(n for m in list_models() for n in (m.id, *m.aliases))
    + (MODEL_PLACEHOLDER, html.escape(MODEL_PLACEHOLDER))
)
APP = create_app()
NOT_PAGES = {"/healthz", "/openapi.json", "/part/{part}"}

PLANNER_STATES = [
    "/?v=1&model=google/gemma-3-27b-it&device=l4&max_model_len=131072",  # sliding-window hybrid, fails
    "/?v=1&model=deepseek-ai/DeepSeek-V3&device=h100&tensor_parallel_size=8",  # MLA MoE
    "/?v=1&model=ai21labs/AI21-Jamba-1.5-Mini&device=a100-80gb",  # Mamba hybrid
    "/?v=1&vllm_version=0.6.6&kv_cache_dtype=fp8",  # V0 era
    "/?v=1&device=910b&tensor_parallel_size=2",  # Ascend
    "/?v=1&max_model_len=9999999",  # a rejected value
    "/?v=1&model=nonexistent/model",  # an unknown model
    # the Speed section's vllm bench serve table, a pasted run and a bad one (issue 23)
    "/speed?v=1&bench_serve=true&num_prompts=100&max_concurrency=8&my_runs=Mean+TPOT+(ms):+9.5",
    "/speed?v=1&num_prompts=100&my_runs=Mean+TPOT+(ms):+fast",
    "/?v=1&card_layers=32&card_kv_heads=8&card_head_size=128&card_params=8b",  # the model card
    # a refused paste (every typo, in the verdict's place), a refused image, a good paste's notes (issue 24.9)
    "/?v=1&command=vllm+serve+Qwen/Qwen3-8B+--max-modle-len+4096+--tensor-paralel-size+2+--max-model-len+x",
    "/?v=1&command=docker+run+-p+80:80+nginx:latest+--model+m",
    "/?v=1&model=Qwen%2FQwen3-8B&vllm_version=0.19.0&ignored_args=--gpus+all+-p+8000:8000"
    "&image=vllm%2Fvllm-openai%3Av0.19.0&ignored_flags=--port+8000",
    "/?v=1&image=vllm%2Fvllm-openai%3Alatest",
]


def _html_pages() -> list[str]:
    """Every GET route answering HTML, from the app's own schema, plus the API's page (/docs)."""
    paths = ["/docs"]  # not in the schema (include_in_schema=False), but a page
    for path, operations in APP.openapi()["paths"].items():
        content = operations.get("get", {}).get("responses", {}).get("200", {}).get("content", {})
        if "text/html" in content and path not in NOT_PAGES:
            paths.append(path)
    return sorted(set(paths))


PAGES = (
    _html_pages()
    + PLANNER_STATES
    + [f"/explore?preset={key}" for key in WORKLOAD_PRESETS]
    + ["/explore?block_size=32&shared_prefix_tokens=14"]
)


@pytest.fixture
def zh() -> TestClient:
    return TestClient(APP, cookies={"lang": "zh"})


def test_the_page_list_covers_the_app() -> None:
    assert {"/", "/doctor", "/explore", "/compare", "/accuracy", "/model", "/docs"} <= set(_html_pages())


def test_the_scan_catches_english_and_spares_code_quotes_and_names() -> None:
    page = (
        "<p>KV 池 the pool is full 时</p><code>--max-model-len is too long</code>"
        '<p>日志 — <q translate="no">The model\'s max seq len is larger</q></p>'
        "<p>“Model loading took X GiB memory”</p><option>RTX 6000 Ada Generation 48GB</option>"
    )
    assert english_sentences(page, ("RTX 6000 Ada Generation 48GB",)) == ["the pool is full"]
    # not vacuous: the same pages in English are full of sentences (103 phrases on the planner)
    english = TestClient(APP)
    assert len(english_sentences(english.get("/?lang=en").text, NAMES)) > 50
    assert len(english_sentences(english.get("/model?lang=en").text, NAMES)) > 30


@pytest.mark.parametrize("path", PAGES)
def test_pages_in_chinese_have_no_english_sentences(zh: TestClient, path: str) -> None:
    response = zh.get(path)
    assert response.status_code in (200, 422), path
    assert 'lang="zh-CN"' in response.text
    assert english_sentences(response.text, NAMES) == []


@pytest.mark.parametrize("part", PARTS)
def test_closed_sections_in_chinese(zh: TestClient, part: str) -> None:
    response = zh.get(f"/part/{part}?v=1", headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert english_sentences(response.text, NAMES) == []


@pytest.mark.parametrize(
    "log", sorted(p for p in LOGS.rglob("*") if p.suffix in (".log", ".prom")), ids=lambda p: p.name
)
def test_the_doctor_in_chinese_on_every_real_log(zh: TestClient, log: Path) -> None:
    if log.suffix == ".prom":
        response = zh.post("/doctor", data={"metrics": log.read_text(encoding="utf-8")})
    else:
        response = zh.post("/doctor", files={"log_file": (log.name, log.read_bytes())})
    assert response.status_code == 200, response.text[:500]
    assert (
        'id="doctor-result' in response.text or "doctor-steps" in response.text or "step-1" in response.text
    )
    assert english_sentences(response.text, NAMES) == []
