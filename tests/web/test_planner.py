"""The planner page: full page vs htmx fragment, permalinks, lenient inputs, the three model sources."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.specs import ServeConfig
from app.web.app import create_app
from app.web.inputs.lenient import parse_lenient
from app.web.inputs.links import to_query
from app.web.inputs.params import DEFAULT_DEVICE, DEFAULT_MODEL, FIELD_NAMES, PlannerParams
from tests.conftest import in_own_thread
from tests.web.conftest import LLAMA_31_8B_CONFIG, LLAMA_31_70B_CONFIG, TestClient
from tests.web.helpers import expected_numbers, page_numbers, text_of, unusable_block, unusable_fields

DATA = Path(__file__).resolve().parents[1] / "data"

HX = {"HX-Request": "true"}


def test_full_page_and_fragment_share_one_url(client):
    full = client.get("/?max_model_len=32768")
    frag = client.get("/?max_model_len=32768", headers=HX)
    assert full.status_code == frag.status_code == 200
    for response in (full, frag):  # GZip adds Accept-Encoding to Vary
        assert "HX-Request" in [part.strip() for part in response.headers["vary"].split(",")]
    assert "<html" in full.text and 'id="planner-form"' in full.text
    assert "<html" not in frag.text and 'id="planner-form"' not in frag.text
    assert 'id="verdict"' in frag.text
    assert page_numbers(full.text) == page_numbers(frag.text)
    # htmx replaces the address bar with the canonical permalink, not the raw form query
    assert frag.headers["hx-replace-url"] == "/?v=1&max_model_len=32768"


def test_history_restore_gets_the_full_page(client):
    r = client.get("/?max_model_len=8192", headers={**HX, "HX-History-Restore-Request": "true"})
    assert r.status_code == 200
    assert "<html" in r.text and 'id="planner-form"' in r.text


def test_page_numbers_equal_the_core_estimate(client):
    model, device = find_model(DEFAULT_MODEL), find_device(DEFAULT_DEVICE)
    serve = ServeConfig(max_model_len=65536, gpu_memory_utilization=0.85, kv_cache_dtype="fp8")
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.11.0", target_concurrency=4)
    query = (
        "v=1&vllm_version=0.11.0&max_model_len=64K&target_concurrency=4"
        "&gpu_memory_utilization=0.85&kv_cache_dtype=fp8"
    )
    page = client.get("/?" + query).text
    assert page_numbers(page) == expected_numbers(est)
    # the seed's formula with the numbers substituted, equal to vLLM's per-token figure x S x N here
    formula = text_of(page, "formula-substituted")
    assert "2 × 32 × 8 × 128 × 65,536 × 1 × 4" in formula
    assert f"{est.kv_bytes_per_token * 65536 * 4:,} B" in formula


def test_permalink_round_trip(client):
    params, problems = parse_lenient(
        PlannerParams,
        {
            "max_model_len": "32k",
            "tensor_parallel_size": "2",
            "enforce_eager": "on",
            "enable_prefix_caching": "false",
        },
    )
    assert problems == []
    query = to_query(params)
    # the flags the release decides when unset (ReleaseDefaultFlags, declared once in app/core/specs.py)
    # come first, after v: the page's own fields follow in their declaration order
    assert query == (
        "v=1&enable_prefix_caching=false&max_model_len=32000&tensor_parallel_size=2&enforce_eager=true"
    )
    again, _ = parse_lenient(PlannerParams, dict(pair.split("=") for pair in query.split("&")))
    assert again == params
    page = client.get("/?" + query).text
    assert f'href="/?{query.replace("&", "&amp;")}"' in page  # the page links to itself
    frag = client.get("/?" + query, headers=HX).text
    assert page_numbers(page) == page_numbers(frag)


def test_stored_v1_link_keeps_working(client):
    # A permalink as the first release wrote it; the link format is versioned by v=1.
    stored = (
        "/?v=1&device=nvidia-h100-sxm-80gb&vllm_version=0.10.2&max_model_len=16384&target_concurrency=8"
        "&gpu_memory_utilization=0.8&kv_cache_dtype=fp8&block_size=32&max_num_seqs=64&enforce_eager=true"
    )
    r = client.get(stored)
    assert r.status_code == 200
    assert 'id="banner"' not in r.text
    est = estimate(
        model=find_model(DEFAULT_MODEL),
        device=find_device("nvidia-h100-sxm-80gb"),
        serve=ServeConfig(
            max_model_len=16384,
            gpu_memory_utilization=0.8,
            kv_cache_dtype="fp8",
            block_size=32,
            max_num_seqs=64,
            enforce_eager=True,
        ),
        vllm_version="0.10.2",
        target_concurrency=8,
    )
    assert page_numbers(r.text) == expected_numbers(est)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_model_len", "lots"),
        ("gpu_memory_utilization", "1.5"),
        ("tensor_parallel_size", "0"),
        ("model", "no-such/model"),
        ("device", "abacus"),
        ("vllm_version", "0.5.4"),  # older than 0.6 (9.9.9 is a newer release: planned with a warning)
        ("config_json", "{not json"),
        ("kv_cache_dtype", "fp7"),
    ],
)
def test_bad_value_stops_the_page_naming_the_field(client, field, value):
    r = client.get("/?" + urlencode({field: value}))
    assert r.status_code == 422
    assert unusable_fields(r.text) == [field]
    assert f"<code>{field}</code>" in unusable_block(r.text)
    # nothing is computed with the default in its place (issue 24 item 1: it used to be)
    assert 'id="numbers"' not in r.text and "data-verdict=" not in r.text


def test_tampered_permalink_with_garbage_everywhere(client):
    garbage = {name: "\u202e<script>x</script>%00" for name in FIELD_NAMES}
    r = client.get("/?" + urlencode(garbage))
    assert r.status_code == 422
    assert "<script>x</script>" not in r.text
    banner = r.text[r.text.index('id="banner"') : r.text.index("</div>", r.text.index('id="banner"'))]
    assert set(re.findall(r"<code>(\w+)</code>", banner)) == {"v"}  # the link format: falls back
    named = set(unusable_fields(r.text))
    # every other field that has a constraint stops the page (free-text model/device as unknown)
    assert {
        "max_model_len",
        "devices",
        "tensor_parallel_size",
        "gpu_memory_utilization",
        "model",
    } <= named


def test_pasted_config_json_drives_the_numbers(client):
    config = json.dumps(LLAMA_31_8B_CONFIG, indent=2)
    r = client.get("/?" + urlencode({"config_json": config, "max_model_len": "8192"}))
    assert r.status_code == 200
    assert "pasted config.json" in r.text
    spec = model_spec_from_hf_config(LLAMA_31_8B_CONFIG, name="pasted-config")
    est = estimate(
        model=spec,
        device=find_device(DEFAULT_DEVICE),
        serve=ServeConfig(max_model_len=8192),
        target_concurrency=1,
    )
    assert page_numbers(r.text) == expected_numbers(est)
    # the permalink carries the config packed: z: + base64url(deflate(compact JSON))
    assert "config_json=z%3A" in r.text


def test_budget_overrun_renders_red(client):
    r = client.get(
        "/?" + urlencode({"config_json": json.dumps(LLAMA_31_70B_CONFIG), "max_model_len": "8192"})
    )
    assert r.status_code == 200
    # 70.6B × 2 B = 141 GB of weights on one 80 GB H100: it dies loading them (the doctor's load_oom)
    assert 'data-verdict="load_oom"' in r.text and "verdict-bad" in r.text
    assert 'class="seg seg-overrun"' in r.text
    assert "over budget by" in r.text


def test_model_card_path(client):
    card = {
        "card_layers": "32",
        "card_kv_heads": "8",
        "card_head_size": "128",
        "card_params": "8B",
        "max_model_len": "16384",
    }
    r = client.get("/?" + urlencode(card))
    assert r.status_code == 200
    assert "Model from the model card" in r.text
    assert "2 × 32 × 8 × 128 × 16,384 × 2 × 1" in text_of(r.text, "formula-substituted")
    # same KV geometry as Llama-3.1-8B, so the same per-token bytes (weights differ slightly)
    assert "131,072 B" in r.text


def test_incomplete_model_card_is_reported(client):
    r = client.get("/?card_layers=32&card_kv_heads=8")
    assert r.status_code == 422
    assert unusable_fields(r.text) == ["card_head_size"]


def test_pasted_command_fills_the_form(client):
    command = (
        "vllm serve meta-llama/Llama-3.1-8B \\\n  --max-model-len 32K --tensor-parallel-size 2 \\\n"
        "  --gpu-memory-utilization 0.85 --kv-cache-dtype fp8 --max-num-seqs 64 --enforce-eager --port 8000"
    )
    r = client.post(
        "/command", data={"command": command, "state": "v=1&target_concurrency=8"}, follow_redirects=False
    )
    assert r.status_code == 303
    location = r.headers["location"]
    assert location.startswith("/?v=1&")
    assert "target_concurrency=8" in location  # the current inputs are kept
    assert "max_model_len=32768" in location and "tensor_parallel_size=2" in location
    page = client.get(location).text
    assert 'id="f-mml" name="max_model_len" type="text" inputmode="numeric" value="32768"' in page
    assert 'name="enforce_eager" value="true" checked' in page
    assert '<option value="fp8" selected>' in page
    assert "--port" in page  # the flag that does not move memory is named, not silently dropped


def test_bad_command_is_shown_inline(client):
    r = client.post("/command", data={"command": "vllm serve m --max-model-len lots", "state": "v=1"})
    assert r.status_code == 422
    assert "max_model_len" in r.text and 'class="field-error"' in r.text


def test_refused_combination_is_inline_not_500(client):
    # 32 attention heads cannot be split over TP=64: vLLM refuses, the page says so next to the form
    r = client.get("/?tensor_parallel_size=64")
    assert r.status_code == 422
    assert "vLLM would refuse this combination" in r.text
    frag = client.get("/?tensor_parallel_size=64", headers=HX)
    assert frag.status_code == 422 and "<html" not in frag.text


def test_multi_node_hint(client):
    r = client.get("/?tensor_parallel_size=8&pipeline_parallel_size=2&devices=16")
    assert 'id="multi-node"' in r.text


def test_prefix_every_url(prefixed_client):
    r = prefixed_client.get("/tools/kvplan/?max_model_len=8192")
    assert r.status_code == 200
    urls = re.findall(r'(?:href|src|action|hx-get)="([^"]+)"', r.text)
    local = [u for u in urls if not u.startswith(("data:", "#"))]
    assert local and all(u.startswith("/tools/kvplan/") for u in local), local
    frag = prefixed_client.get("/tools/kvplan/?max_model_len=8192", headers=HX)
    assert frag.headers["hx-replace-url"].startswith("/tools/kvplan/?v=1")
    lazy = re.findall(r'hx-post="([^"]+)"', frag.text)
    assert len(lazy) == 5 and all(u.startswith("/tools/kvplan/") for u in lazy), (
        lazy
    )  # 3 parts + recommend + speed
    assert prefixed_client.get("/tools/kvplan/static/app.css").status_code == 200


def test_markdown_copy_text(client):
    r = client.get("/?max_model_len=32768")
    md = r.text[r.text.index('id="markdown-text"') :]
    assert "| max_model_len | 32,768 |" in md
    assert "| KV cache size |" in md


def test_incomplete_card_falls_back_to_card_defaults_not_none(client) -> None:  # type: ignore[no-untyped-def]
    # a card with only the layer count is incomplete: the page computes nothing, keeps what was typed
    # (card_layers=32 in the box and the link) and the other card fields at their defaults, never "None"
    r = client.get("/?v=1&card_layers=32")
    assert r.status_code == 422 and unusable_fields(r.text) == ["card_kv_heads"]
    assert "card_dtype=None" not in r.text and "card_attention=None" not in r.text
    assert 'id="c-layers" name="card_layers" type="text" inputmode="numeric" value="32"' in r.text


def test_runtime_total_reproduces_a_real_log(client) -> None:  # type: ignore[no-untyped-def]
    # calibration record llmd-v0190-meta-llama-llama-3-1-8b-tp1pp1dp1-8192 (real vLLM 0.19.0 log, H100 that
    # reports 79.19 GiB): "GPU KV cache size: 476,016 tokens", "Maximum concurrency … 58.11x". With the
    # catalog's conservative 79.1 GiB the same flags give fewer tokens; with the printed total, the log's.
    query = (
        "v=1&model=meta-llama/Llama-3.1-8B-Instruct&vllm_version=0.19.0&max_model_len=8192"
        "&gpu_memory_utilization=0.95&max_num_seqs=1024&max_num_batched_tokens=8192"
    )
    printed = client.get(f"/api/estimate?{query}&device_memory_gib=79.19").json()
    assert printed["device_total_bytes"] == round(79.19 * 2**30)
    # the modelled partitions decide the last few blocks; the printed total brings the pool within 0.1 %
    assert abs(printed["kv_tokens"] - 476_016) <= 0.001 * 476_016
    assert abs(printed["max_concurrency"] - 58.11) <= 0.06
    catalog = client.get(f"/api/estimate?{query}").json()
    assert catalog["kv_tokens"] < printed["kv_tokens"]
    page = client.get(f"/?{query}&device_memory_gib=79.19")
    assert 'value="79.19"' in page.text


def test_device_memory_bounds(client) -> None:  # type: ignore[no-untyped-def]
    # schemathesis found device_memory_gib=5e-324 rounding to a 0-byte device (a division by zero)
    for bad in ("5e-324", "0", "0.5", "5000", "lots"):
        r = client.get(f"/api/estimate?device_memory_gib={bad}")
        assert r.status_code == 422 and "device_memory_gib" in r.text, bad
        page = client.get(f"/?device_memory_gib={bad}")
        assert page.status_code == 422 and unusable_fields(page.text) == ["device_memory_gib"], bad


LAZY = "/?v=1&max_model_len=32768&vllm_version=0.19.0"


def test_fragment_leaves_closed_sections_to_load_on_opening(client) -> None:  # type: ignore[no-untyped-def]
    full = client.get(LAZY).text
    response = client.get(LAZY, headers=HX)
    frag = response.text
    # the permalink's query, as it appears in an attribute
    query = response.headers["hx-replace-url"].removeprefix("/?").replace("&", "&amp;")
    for part, table in (("curve", "curve-table"), ("versions", "version-notes"), ("terms", "terms-table")):
        assert f'id="{table}"' in full and f'id="{table}"' not in frag
        # the section posts the fragment's one copy of the inputs (#planner-state), not its own query
        assert f'hx-post="/part/{part}" hx-include="#planner-state" hx-trigger="toggle once"' in frag
        assert f'hx-post="/part/{part}' not in full  # a page (also without JavaScript) has them inline
    assert frag.count(query) == 2  # #planner-state and the permalink
    # what a slider move transfers shrinks by the three tables (~6 KB of 22 KB before gzip)
    assert len(frag) < len(full) - 5000


@pytest.mark.parametrize(
    ("part", "table"), [("curve", "curve-table"), ("versions", "version-notes"), ("terms", "terms-table")]
)
def test_a_lazy_section_is_what_the_page_shows_inline(client, part, table) -> None:  # type: ignore[no-untyped-def]
    full = client.get(LAZY).text
    r = client.get(f"/part/{part}?v=1&max_model_len=32768&vllm_version=0.19.0", headers=HX)
    assert r.status_code == 200 and "<html" not in r.text
    assert text_of(r.text, table) == text_of(full, table)


@pytest.mark.parametrize("path", ["/part/curve", "/part/versions", "/part/terms", "/speed", "/recommend"])
def test_a_lazy_section_posted_with_the_state_is_the_one_got_by_query(client, path) -> None:  # type: ignore[no-untyped-def]
    # the fragment's sections post #planner-state (the permalink query) instead of carrying it in their URL
    query = "v=1&max_model_len=32768&vllm_version=0.19.0"
    got = client.get(f"{path}?{query}", headers=HX)
    posted = client.post(path, data={"state": query}, headers=HX)
    assert posted.status_code == got.status_code == 200
    assert posted.text == got.text


def test_lazy_section_content(client) -> None:  # type: ignore[no-untyped-def]
    curve = client.get("/part/curve?v=1&max_model_len=32768", headers=HX).text
    # 24 points from 512 to the model's 131,072 (512 x 256^(i/23), floored to 16)
    assert curve.count('<tr><td class="num">') == 24
    assert '<td class="num">512</td>' in curve and '<td class="num">131,072</td>' in curve
    versions = client.get("/part/versions?v=1&vllm_version=0.11.0", headers=HX).text
    assert "In vLLM 0.11.0" in versions
    zh = TestClient(create_app()).get("/part/versions?v=1&vllm_version=0.11.0&lang=zh", headers=HX).text
    assert "In vLLM 0.11.0" not in zh and "0.11.0" in zh


def test_lazy_section_outside_htmx_and_unknown(client) -> None:  # type: ignore[no-untyped-def]
    r = client.get("/part/curve?v=1&max_model_len=8192", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/?v=1&max_model_len=8192"
    bad = client.get("/part/%3Cscript%3E?v=1", headers=HX)
    assert bad.status_code == 404
    assert "part: no such section" in bad.text and "<script>" not in bad.text and "&lt;script&gt;" in bad.text
    # inputs that no longer start: the part answers with the verdict instead of a table
    refused = client.get("/part/terms?v=1&tensor_parallel_size=64", headers=HX)  # 32 heads over TP=64
    assert refused.status_code == 422 and 'id="verdict"' in refused.text


def test_start_up_warms_the_worker_and_freezes_its_objects() -> None:
    import gc

    app = create_app()
    renderer = app.state.renderer
    assert all(len(env.cache or {}) == 0 for env in renderer.envs.values())
    gc.unfreeze()
    try:
        with TestClient(app) as c:  # runs the lifespan, as uvicorn does in each worker
            # both languages' templates are compiled before the first request
            compiled = {lang: sorted(env.cache or {}) for lang, env in renderer.envs.items()}
            assert len(compiled["en"]) == len(compiled["zh"]) >= 10
            assert gc.get_freeze_count() > 1000  # catalog, templates, schemas: out of the collector's walk
            assert c.get("/healthz").json() == {"status": "ok"}
    finally:
        gc.unfreeze()


def test_tensor_parallel_is_a_choice_of_real_sizes(client) -> None:  # type: ignore[no-untyped-def]
    page = client.get("/?v=1&tensor_parallel_size=4").text
    select = page[page.index('<select id="f-tp"') : page.index("</select>", page.index('<select id="f-tp"'))]
    assert re.findall(r'<option value="(\d+)"', select) == [
        "1",
        "2",
        "4",
        "8",
        "16",
        "32",
        "64",
        "128",
        "256",
    ]
    assert '<option value="4" selected>' in select
    # a tampered link with TP=3 names the field and computes nothing (no fallback to 1)
    r = client.get("/?v=1&tensor_parallel_size=3")
    assert r.status_code == 422 and unusable_fields(r.text) == ["tensor_parallel_size"]
    assert "<code>tensor_parallel_size</code>: must be a power of two" in r.text


def _raw_get(app, path: str, query: bytes = b"") -> tuple[dict[bytes, bytes], bytes]:  # type: ignore[no-untyped-def]
    """One request straight through the ASGI app, so the body is the bytes on the wire (still gzip)."""
    import asyncio

    out: dict[str, Any] = {"headers": {}, "body": b""}
    done = asyncio.Event()
    requested = False

    async def receive() -> dict[str, Any]:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await done.wait()  # a file response listens for the client going away
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            out["headers"] = dict(message["headers"])
        else:
            out["body"] += message.get("body", b"")
            if not message.get("more_body", False):
                done.set()

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": query, "root_path": "",
        "headers": [(b"host", b"testserver"), (b"accept-encoding", b"gzip"), (b"hx-request", b"true")],
        "client": ("127.0.0.1", 1), "server": ("testserver", 80),
    }  # fmt: skip

    async def run() -> None:
        await app(scope, receive, send)

    in_own_thread(lambda: asyncio.run(run()))
    return out["headers"], out["body"]


def test_fragments_are_deflated_fast_and_static_files_harder() -> None:
    import gzip

    app = create_app()
    # the gzip header's XFL byte (offset 8): 4 = fastest (level 1), 0 = a middle level (6)
    headers, body = _raw_get(app, "/", b"v=1&max_model_len=32768")
    assert headers[b"content-encoding"] == b"gzip" and body[8] == 4
    assert b'id="verdict"' in gzip.decompress(body)
    headers, body = _raw_get(app, "/static/app.css")
    assert headers[b"content-encoding"] == b"gzip" and body[8] == 0


def test_a_longrope_model_defaults_to_its_original_length_on_the_page_and_in_the_recommender(client) -> None:  # type: ignore[no-untyped-def]
    """Phi-4-mini's published config: max_position_embeddings 131,072, LongRoPE with
    original_max_position_embeddings 4,096. From vLLM 0.14.0 a blank --max-model-len serves the original
    4,096 (config/model.py; tests/unit/test_real_configs_wide.py), so the form's placeholder and the
    recommender's default target are 4,096 too, not the 131,072 maximum."""
    config = (DATA / "configs" / "real" / "microsoft__Phi-4-mini-instruct.config.json").read_text(
        encoding="utf-8"
    )
    page = client.post("/", data={"config_json": config, "vllm_version": "0.19.0"}).text
    assert 'placeholder="4096" title="Tokens' in page
    rec = client.post("/api/recommend", json={"config_json": config, "vllm_version": "0.19.0"})
    assert rec.status_code == 200 and rec.json()["target_max_model_len"] == 4096
