"""The doctor over HTTP: /api/diagnose shapes and status codes, the /doctor page and its htmx block.

Expected values are the fixtures' printed numbers (tests/data/logs, see tests/unit/test_logs.py) and
the core's own diagnosis of the same text, so the page and the API must agree with app.core.diagnose.
"""

from __future__ import annotations

import random
import re
import warnings
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from fastapi import FastAPI
from starlette.exceptions import StarletteDeprecationWarning

from app.core.diagnose import diagnose
from app.core.estimate import estimate
from app.core.logs import MAX_LOG_CHARS
from app.web.app import create_app
from app.web.doctor.params import MAX_BODY_BYTES
from app.web.inputs.lenient import parse_lenient
from app.web.inputs.params import PlannerParams
from app.web.inputs.resolve import resolve_lenient
from tests.web.helpers import expected_numbers, page_numbers, text_of

with warnings.catch_warnings():
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient

DATA = Path(__file__).resolve().parents[1] / "data" / "logs"
PREFIX = "/tools/kvplan"
ERROR_LOG = "v0_rtx3090_llama31_8b_29k_error.log"
H100_LOG = "v1_0.19.0_h100_llama31_8b.log"
GIB = 2**30


def doctor_app(root_path: str = "") -> FastAPI:
    return create_app(root_path=root_path)


@pytest.fixture(scope="module")
def app() -> FastAPI:
    return doctor_app()


@pytest.fixture(scope="module")
def prefixed_app() -> FastAPI:
    return doctor_app(PREFIX)


@pytest.fixture
def client(app: FastAPI) -> TestClient:  # a client per test: its cookies (the language) stay in it
    return TestClient(app)


@pytest.fixture
def prefixed(prefixed_app: FastAPI) -> TestClient:
    return TestClient(prefixed_app)


def load(name: str) -> str:
    with (DATA / name).open(encoding="utf-8", newline="") as handle:
        return handle.read()


def vary(response) -> list[str]:  # type: ignore[no-untyped-def]
    return [name.strip() for name in response.headers.get("vary", "").split(",")]


def error_field(response) -> str:  # type: ignore[no-untyped-def]
    return str(response.json()["detail"][0]["loc"][-1])


# --------------------------------------------------------------------------------------------
# POST /api/diagnose


def test_api_text_plain_shape(client: TestClient) -> None:
    r = client.post("/api/diagnose", content=load(ERROR_LOG), headers={"content-type": "text/plain"})
    assert r.status_code == 200
    body = r.json()
    assert {
        "facts",
        "verdict",
        "steps",
        "metrics",
        "prediction",
        "comparison",
        "planner_url",
        "notes",
    } <= set(body)
    assert body["verdict"] == "s_bound"
    assert body["metrics"] is None
    facts = body["facts"]
    assert facts["max_model_len"] == 29_000
    assert facts["estimated_max_model_len"] == 23_648
    assert facts["num_gpu_blocks"] == 1_478
    assert facts["kv_cache_bytes"] == round(2.89 * GIB)
    assert facts["vllm_version"] is None  # the log does not print one
    assert len(body["steps"]) == 5
    for step in body["steps"]:
        assert {"title", "verdict", "explanation", "evidence"} <= set(step)
        assert all(set(ev) == {"line_no", "text"} for ev in step["evidence"])
    assert body["steps"][0]["evidence"][0] == {
        "line_no": 5,
        "text": "INFO 11-21 08:43:24 worker.py:232] Memory profiling results: total_gpu_memory=23.58GiB "
        "initial_memory_usage=15.45GiB peak_torch_memory=17.98GiB memory_usage_post_profile=15.55GiB "
        "non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90",
    }
    assert body["prediction"]["model"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert {row["key"] for row in body["comparison"]} >= {
        "weights_bytes",
        "kv_cache_bytes",
        "max_concurrency",
    }
    url = urlsplit(body["planner_url"])
    assert url.path == "/"
    query = dict(parse_qsl(url.query))
    assert query["max_model_len"] == "29000"
    assert query["model"] == "meta-llama/Llama-3.1-8B-Instruct"
    # the JSON is the core's diagnosis, field for field
    core = diagnose(log_text=load(ERROR_LOG), metrics_text=None).model_dump(mode="json")
    link = {"planner_url", "model_needed", "planner_fields"}
    assert {k: v for k, v in body.items() if k not in link} == core
    assert (body["model_needed"], body["planner_fields"]) == (False, None)  # the log names its model


def test_api_json_with_metrics_and_target(client: TestClient) -> None:
    payload = {"log": load(H100_LOG), "metrics": load("metrics_kv_bound.prom"), "target_concurrency": 32}
    body = client.post("/api/diagnose", json=payload).json()
    assert body["metrics"]["verdict"] == "kv_bound"
    assert body["metrics"]["kv_usage"] == 0.97
    assert body["verdict"] == "n_bound"  # the log fits 32, the live pool is full with 26 waiting
    assert body["facts"]["max_concurrency"] == 58.11


@pytest.mark.parametrize(("target", "verdict"), [("100", "n_bound"), ("32", "fits")])
def test_api_text_plain_with_query_target(client: TestClient, target: str, verdict: str) -> None:
    r = client.post(f"/api/diagnose?target_concurrency={target}", content=load(H100_LOG))
    assert r.status_code == 200 and r.json()["verdict"] == verdict


def test_api_device_hint(client: TestClient) -> None:
    r = client.post("/api/diagnose", json={"log": load(ERROR_LOG), "device": "nvidia-rtx-3090-24gb"})
    assert r.json()["prediction"]["device"] == "nvidia-rtx-3090-24gb"
    bad = client.post("/api/diagnose", json={"log": load(ERROR_LOG), "device": "no-such-gpu"})
    assert bad.status_code == 422 and error_field(bad) == "device"


def test_api_six_megabytes_is_413_naming_log(client: TestClient) -> None:
    r = client.post("/api/diagnose", content=b"x" * 6_000_000, headers={"content-type": "text/plain"})
    assert r.status_code == 413
    assert error_field(r) == "log"
    assert "5,242,880 bytes" in r.json()["detail"][0]["msg"]


def test_api_log_over_the_parser_limit_is_413(client: TestClient) -> None:
    text = "a" * (MAX_LOG_CHARS + 10)
    assert len(text.encode()) <= MAX_BODY_BYTES  # under the body limit, over the parser's
    r = client.post("/api/diagnose", content=text)
    assert r.status_code == 413 and error_field(r) == "log"


@pytest.mark.parametrize(
    ("body", "content_type", "field"),
    [
        (b"", "text/plain", "log"),
        (b"   \n\n", "text/plain", "log"),
        (b"\xff\xfe\xfa log", "text/plain", "log"),
        (b'{"log": ""}', "application/json", "log"),
        (b'{"log": "x", "target_concurrency": 0}', "application/json", "target_concurrency"),
        (b'{"log": "x", "nope": 1}', "application/json", "nope"),
    ],
)
def test_api_422_names_the_field(client: TestClient, body: bytes, content_type: str, field: str) -> None:
    r = client.post("/api/diagnose", content=body, headers={"content-type": content_type})
    assert r.status_code == 422
    assert error_field(r) == field


def test_api_invalid_json_is_422(client: TestClient) -> None:
    r = client.post("/api/diagnose", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422


def test_api_random_bytes_never_500(client: TestClient) -> None:
    rng = random.Random(20240521)
    for _ in range(40):
        blob = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4000)))
        r = client.post("/api/diagnose", content=blob)
        assert r.status_code in (200, 422), r.text
        if r.status_code == 200:
            assert r.json()["verdict"] == "unknown"
        else:
            assert error_field(r) == "log"
    text = "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(3000))
    r = client.post("/api/diagnose", content=text.encode())
    assert r.status_code == 200 and r.json()["verdict"] == "unknown"


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*") if p.is_file()))
def test_api_every_fixture_answers_200(client: TestClient, name: str) -> None:
    r = client.post("/api/diagnose", content=load(name))
    assert r.status_code == 200
    assert r.json()["verdict"] in ("fits", "s_bound", "n_bound", "budget_bound")


REAL_VERDICTS = {
    "ascend_qwen3_14b_negative_kv.log": "budget_bound",
    "tpu_v1_131k_estimate_5632.log": "s_bound",
    "v1_0.13.0_h20_qwen25_72b_fp8_load_oom.log": "load_oom",
    "v1_graph_capture_cuda_error_oom.log": "graph_oom",
    "v1_spark_gpt_oss_120b_enginecore_failed.log": "failed",
    "v1_0.15.1_banner_llama_8k.log": "fits",
}


@pytest.mark.parametrize(("name", "verdict"), sorted(REAL_VERDICTS.items()))
def test_page_renders_real_logs_with_their_verdict(client: TestClient, name: str, verdict: str) -> None:
    # the page (not only the API) for logs no one here wrote (tests/data/logs/real/sources.json)
    from app.core.verdicts import VERDICTS

    text = (DATA / "real" / name).read_text(encoding="utf-8")
    r = client.post("/doctor", data={"log": text})
    assert r.status_code == 200
    assert f'data-verdict="{verdict}"' in r.text
    assert f"verdict-{VERDICTS[verdict].tone}" in r.text


def test_api_under_a_prefix(prefixed: TestClient) -> None:
    r = prefixed.post(f"{PREFIX}/api/diagnose", content=load(ERROR_LOG))
    assert r.status_code == 200
    assert r.json()["planner_url"].startswith(f"{PREFIX}/?v=1&")


# --------------------------------------------------------------------------------------------
# the page


def test_doctor_page_form(client: TestClient) -> None:
    r = client.get("/doctor")
    assert r.status_code == 200
    assert "HX-Request" in vary(r)
    page = r.text
    assert '<form id="doctor-form" method="post" action="/doctor" enctype="multipart/form-data"' in page
    assert 'hx-post="/doctor"' in page and 'hx-encoding="multipart/form-data"' in page
    assert 'name="log_file" type="file" accept=".log,.txt,text/plain"' in page
    assert 'name="metrics"' in page and 'name="target_concurrency"' in page
    assert 'id="doctor-intro"' in page
    assert "<script>" not in page and "<style" not in page and " style=" not in page  # the CSP allows neither
    assert '<link rel="stylesheet" href="/static/doctor.css">' in page
    assert client.get("/static/doctor.css").status_code == 200


def test_doctor_post_full_page(client: TestClient) -> None:
    r = client.post("/doctor", data={"log": load(ERROR_LOG), "target_concurrency": "4"})
    assert r.status_code == 200
    assert "HX-Request" in vary(r)
    page = r.text
    assert "<html" in page
    assert 'data-verdict="s_bound"' in page
    assert len(re.findall(r'<li class="card step step-\w+" id="step-\d"', page)) == 5
    # the evidence lines, numbered and highlighted
    assert (
        '<span class="hit"><span class="ln">11</span>ValueError: The model&#39;s max seq len (29000)' in page
    )
    assert text_of(page, "step-4").count("starts") >= 1
    link = re.search(r'<a id="open-planner" class="button-link" href="([^"]+)"', page)
    assert link is not None
    query = dict(parse_qsl(urlsplit(link.group(1).replace("&amp;", "&")).query))
    assert query["max_model_len"] == "29000" and query["target_concurrency"] == "4"
    assert 'id="doctor-compare"' in page
    assert "Starting to load model" not in text_of(page, "doctor-headline")


def test_doctor_htmx_gets_the_results_block(client: TestClient) -> None:
    r = client.post("/doctor", data={"log": load(ERROR_LOG)}, headers={"HX-Request": "true"})
    assert r.status_code == 200
    assert "HX-Request" in vary(r)
    assert "<html" not in r.text and 'id="doctor-form"' not in r.text
    assert r.text.lstrip().startswith('<div class="results-inner" id="doctor-results">')
    assert 'data-verdict="s_bound"' in r.text
    restore = client.post(
        "/doctor",
        data={"log": load(ERROR_LOG)},
        headers={"HX-Request": "true", "HX-History-Restore-Request": "true"},
    )
    assert "<html" in restore.text


def test_doctor_file_upload_wins_over_the_textarea(client: TestClient) -> None:
    r = client.post(
        "/doctor",
        data={"log": "ignored", "target_concurrency": "100"},
        files={"log_file": ("vllm.log", load(H100_LOG).encode(), "text/plain")},
    )
    assert r.status_code == 200
    assert 'data-verdict="n_bound"' in r.text
    assert "vllm.log" in text_of(r.text, "d-file-read")


def test_doctor_empty_file_falls_back_to_the_textarea(client: TestClient) -> None:
    r = client.post(
        "/doctor", data={"log": load(H100_LOG)}, files={"log_file": ("", b"", "application/octet-stream")}
    )
    assert r.status_code == 200 and 'data-verdict="fits"' in r.text


@pytest.mark.parametrize(
    ("data", "files", "field"),
    [
        ({"log": ""}, None, "log"),
        ({"log": load(H100_LOG), "target_concurrency": "lots"}, None, "target_concurrency"),
        ({"log": load(H100_LOG), "device": "no-such-gpu"}, None, "device"),
        ({"log": ""}, {"log_file": ("bad.log", b"\xff\xfe\xfa", "text/plain")}, "log_file"),
    ],
)
def test_doctor_inline_errors_name_the_field(client: TestClient, data, files, field) -> None:  # type: ignore[no-untyped-def]
    r = client.post("/doctor", data=data, files=files)
    assert r.status_code == 422
    assert f'<li class="field-error" data-field="{field}"><code>{field}</code>:' in r.text
    htmx = client.post("/doctor", data=data, files=files, headers={"HX-Request": "true"})
    assert htmx.status_code == 422 and 'data-field="' + field + '"' in htmx.text


def test_doctor_too_large(client: TestClient) -> None:
    big = {"log": "x" * 6_000_000}
    full = client.post("/doctor", data=big)
    assert full.status_code == 413 and 'data-field="log"' in full.text
    htmx = client.post("/doctor", data=big, headers={"HX-Request": "true"})
    assert htmx.status_code == 422 and 'data-field="log"' in htmx.text  # htmx swaps 422, not 413


def test_doctor_escapes_the_paste(client: TestClient) -> None:
    text = load(H100_LOG).replace("Using FLASH_ATTN", "Using FLASH_ATTN <script>alert(1)</script>")
    text = text.replace(
        "'model': 'meta-llama/Llama-3.1-8B-Instruct'", "'model': '<img src=x onerror=alert(1)>'"
    )
    r = client.post("/doctor", data={"log": text})
    assert r.status_code == 200
    assert "<script>alert" not in r.text and "<img src=x" not in r.text
    assert "&lt;img src=x onerror=alert(1)&gt;" in r.text


def test_doctor_metrics_reading(client: TestClient) -> None:
    r = client.post("/doctor", data={"log": "", "metrics": load("metrics_kv_bound.prom")})
    assert r.status_code == 200
    metrics = text_of(r.text, "doctor-metrics")
    assert "bound by the KV pool" in metrics
    # 0.97 is the busiest engine's usage; 17 + 9 requests wait across the two engines
    assert '<th scope="row">KV cache usage</th><td class="num">97.0%</td>' in r.text
    assert '<th scope="row">Requests waiting</th><td class="num">26</td>' in r.text


def test_doctor_under_a_prefix(prefixed: TestClient) -> None:
    page = prefixed.get(f"{PREFIX}/doctor").text
    assert f'action="{PREFIX}/doctor"' in page and f'hx-post="{PREFIX}/doctor"' in page
    r = prefixed.post(f"{PREFIX}/doctor", data={"log": load(ERROR_LOG)})
    assert f'href="{PREFIX}/?v=1&amp;' in r.text


def test_open_in_planner_shows_the_recovered_configuration(client: TestClient) -> None:
    body = client.post("/api/diagnose", json={"log": load(H100_LOG), "target_concurrency": 32}).json()
    planner = client.get(body["planner_url"])
    assert planner.status_code == 200
    params, problems = parse_lenient(PlannerParams, parse_qsl(urlsplit(body["planner_url"]).query))
    assert problems == []
    assert params.max_model_len == 8192 and params.model == "meta-llama/Llama-3.1-8B-Instruct"
    resolved, _ = resolve_lenient(params)
    est = estimate(
        model=resolved.model,
        device=resolved.device,
        serve=resolved.serve,
        vllm_version=resolved.vllm_version,
        target_concurrency=params.target_concurrency,
    )
    assert page_numbers(planner.text) == expected_numbers(est)
    # the planner link reproduces the doctor's prediction column
    assert est.kv_cache_bytes == body["prediction"]["kv_cache_bytes"]
    assert est.max_concurrency == body["prediction"]["max_concurrency"]


def test_open_in_planner_carries_the_printed_total(client: TestClient) -> None:
    # the real 0.19.0 log printed "Free memory on device (78.68/79.19 GiB)"; the catalog's H100 is 79.1 GiB
    body = client.post("/api/diagnose", json={"log": load(H100_LOG), "target_concurrency": 100}).json()
    assert "device_memory_gib=79.19" in body["planner_url"]
    assert body["prediction"]["device_total_bytes"] == round(79.19 * 2**30)


def test_the_mamba_block_refusal_on_the_page_and_the_api(client: TestClient) -> None:
    # NVIDIA-NeMo/RL#2620 (tests/data/logs/heldout-2026-12): max_num_seqs 1,024 over 658 Mamba cache blocks
    text = (DATA / "heldout-2026-12" / "nv_mamba_nemotron_nano_v2_12b_grpo_1024_658.log").read_text(
        encoding="utf-8"
    )
    body = client.post("/api/diagnose", content=text.encode()).json()
    assert body["verdict"] == "n_bound"
    assert (body["facts"]["max_num_seqs"], body["facts"]["num_gpu_blocks"]) == (1024, 658)
    page = client.post("/doctor", data={"log": text}).text
    assert "vLLM refused --max-num-seqs 1,024: the pool has 658 Mamba cache blocks" in page
    assert "Lower --max-num-seqs to 658 or less" in page
    zh = client.post("/doctor?lang=zh", data={"log": text}).text
    assert "vLLM 拒绝了 --max-num-seqs 1,024：池中只有 658 个 Mamba 缓存块" in zh


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("en", "on this unified-memory device (55.60 GiB to 62.22 GiB)"),
        ("zh", "在这台统一内存设备上处于规划器的范围之内"),
    ],
)
def test_a_gb10_pool_row_shows_the_unified_memory_band(client: TestClient, lang: str, words: str) -> None:
    # heldout-2026-12g's GB10 log prints 55.72 GiB, 3.19 GiB under the plan's point but inside its band
    text = (
        DATA / "heldout-2026-12g" / "nv_gb10_spark_qwen35_35b_a3b_fp8_docker_logs_kv_55_72_729696.log"
    ).read_text()
    page = client.post(f"/doctor?lang={lang}", data={"log": text}).text
    note = re.search(r'data-note-for="kv_cache_bytes">(.*?)</tr>', page, re.S)
    assert note is not None and words in note.group(1)


def test_the_header_names_the_one_card_whose_total_the_a3_log_prints(client: TestClient) -> None:
    # vllm-ascend#3869 (A3): 61.28 GiB is the catalog 910C's total itself, the 910B's 60.96 GiB only near it, so
    # the Device row names the 910C (was "several catalog cards report this total"); the reasoning keeps both
    log = (DATA / "heldout-2026-12p").joinpath(
        "ascend_qwen3_vl_235b_dp2_tp8_ep_budget_lines_no_rank0_kv_222592_capture_begun.log"
    )
    page = client.post("/doctor", data={"log": log.read_text(encoding="utf-8")}).text
    assert "huawei-ascend-910c reports this very total, other catalog cards are near it" in page
    assert "several catalog cards report this total" not in page
    assert "within 1.50 GiB of it for huawei-ascend-910b-64gb (60.96 GiB)" in page
