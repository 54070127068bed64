"""The explore page and its JSON twins: hand-worked block, prefix and workload numbers, permalinks,
htmx fragments and bad inputs.

Hand-worked values (seed §"block 与 page" and reference §6):
* Llama-3.1-8B, bf16, TP 1: bytes per block = 2 (K, V) x 32 layers x 8 KV heads x 128 x B x 2 B,
  = 2,097,152 B = 2 MiB at B = 16 and 4 MiB at B = 32.
* S = 1000, B = 16: ceil(1000/16) = 63 blocks = 1008 slots, 8 wasted = 0.79 %; B/(2S) = 0.80 %.
* Prefix, B = 4: 10 shared -> 2 full blocks = 8 hit; 14 shared -> 3 full blocks = 12 hit (the seed's
  "14 -> 8" is a misprint); cache_salt differs -> 0 hit.
* 1000 shared, B = 16: 62 full blocks = 992 hit; N = 16 sharing saves 62 x 15 x 2 MiB = 1860 MiB.
"""

from __future__ import annotations

import html
import json
import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from fastapi import FastAPI

from app.web import explore
from app.web.app import create_app
from tests.web.conftest import TestClient
from tests.web.helpers import text_of, unusable_block, unusable_fields

HX = {"HX-Request": "true"}
MIB = 2**20


def _app() -> FastAPI:
    return create_app()


@pytest.fixture(scope="module")
def explore_app() -> FastAPI:
    return _app()


@pytest.fixture
def ec(explore_app: FastAPI) -> TestClient:  # a client per test: its cookies (the language) stay in it
    return TestClient(explore_app)


def _rows(page: str, table_id: str) -> list[list[str]]:
    """Cell texts of each body row of a table (tags stripped)."""
    table = re.search(rf'<table id="{table_id}".*?</table>', page, re.S)
    assert table, table_id
    body = re.search(r"<tbody>(.*?)</tbody>", table.group(0), re.S)
    assert body
    rows = []
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body.group(1), re.S):
        cells = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)
        rows.append([html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in cells])
    return rows


def _block_row(page: str, block_size: int) -> str:
    match = re.search(rf'<tr data-block-size="{block_size}"[^>]*>.*?</tr>', page, re.S)
    assert match, block_size
    return html.unescape(re.sub(r"<[^>]+>", " ", match.group(0)))


def _vary(response) -> set[str]:
    return {part.strip() for part in response.headers.get("vary", "").split(",")}


def _permalink(page: str) -> str:
    match = re.search(r'id="permalink" href="([^"]+)"', page)
    assert match
    return html.unescape(match.group(1))


# ---- page: defaults, fragment, permalink ---------------------------------------------------------


def test_page_renders_with_defaults(ec):
    r = ec.get("/explore")
    assert r.status_code == 200
    assert "HX-Request" in _vary(r)
    page = r.text
    assert "<style" not in page and " style=" not in page  # the CSP allows no inline style
    assert '/static/explore.css"' in page
    assert 'id="explore-form"' in page and 'hx-trigger="input delay:200ms, change"' in page
    for section in ('id="block-table"', 'id="prefix-calc"', 'id="workload-numbers"'):
        assert section in page
    assert 'id="banner"' not in page
    # the five seed shapes with their English labels (Chinese on the Chinese page), the default one picked
    for label in ("One very long request", "Long and short mixed", "Many short requests", "Shared prefixes"):
        assert label in page
    assert re.search(r'value="mixed_long_short" checked', page)
    # both charts are accessible images with their own titles
    assert page.count('role="img"') == 2
    assert 'id="chart-kv-title"' in page and 'id="chart-rw-title"' in page
    assert 'id="series-table"' in page
    assert "20,000 requests" in page  # the page cap is stated
    assert _permalink(page) == "/explore?v=1"


def test_fragment_and_history_restore(ec):
    full = ec.get("/explore?preset=many_short")
    frag = ec.get("/explore?preset=many_short", headers=HX)
    restore = ec.get("/explore?preset=many_short", headers={**HX, "HX-History-Restore-Request": "true"})
    assert "HX-Request" in _vary(full) and "HX-Request" in _vary(frag)
    assert "<html" in full.text and "<html" not in frag.text and "<html" in restore.text
    assert 'id="explore-form"' not in frag.text and 'id="workload-numbers"' in frag.text
    assert frag.headers["hx-replace-url"] == "/explore?v=1&preset=many_short"
    for key in ("w-max-running", "w-preemptions", "w-prefix-hit", "w-binding-limit"):
        assert text_of(full.text, key) == text_of(frag.text, key)


def test_permalink_round_trip_keeps_every_parameter(ec):
    query = (
        "model=Qwen/Qwen2.5-7B&max_model_len=32k&gpu_memory_utilization=0.85&target_concurrency=4"
        "&typical_lengths=300,5000&shared_prefix_tokens=777&cache_salt=true&num_requests_sharing=3"
        "&preset=custom&wl=0.5:100-300:50;0.5:2000:300~0.5~900:64:sys&num_requests=300&concurrency=16&seed=7"
    )
    first = ec.get("/explore?" + query).text
    link = _permalink(first)
    again = ec.get(link).text
    assert _permalink(again) == link
    for key in ("w-max-running", "w-steps", "w-prefix-hit", "p-hit", "engine-line"):
        assert text_of(first, key) == text_of(again, key)
    params = dict(parse_qsl(urlsplit(link).query))
    assert params["max_model_len"] == "32000"  # 32k is vLLM's decimal thousand
    assert params["wl"] == "0.5:100-300:50;0.5:2000:300~0.5~900:64:sys"
    assert params["target_concurrency"] == "4"  # a planner field the form does not show survives
    assert "wl=0.5:100-300:50;0.5:2000" in link  # readable: ':' ';' '~' ',' are not escaped
    # back to the planner with the shared parameters only
    back = html.unescape(re.search(r'id="back-to-planner" href="([^"]+)"', first).group(1))
    back_params = dict(parse_qsl(urlsplit(back).query))
    assert urlsplit(back).path == "/"
    assert back_params["model"] == "Qwen/Qwen2.5-7B" and back_params["gpu_memory_utilization"] == "0.85"
    assert "preset" not in back_params and "typical_lengths" not in back_params


def test_preset_link_drops_custom_classes_and_edit_link_carries_them(ec):
    page = ec.get("/explore?preset=shared_prefix&wl=1:10:10").text
    assert "wl=" not in _permalink(page)
    edit = html.unescape(re.search(r'id="w-edit" href="([^"]+)"', page).group(1))
    params = dict(parse_qsl(urlsplit(edit).query))
    assert params["preset"] == "custom"
    assert params["wl"] == "0.7:2030-2400:150~0.6~1500:2000:tenant_a;0.3:1230-1600:150~0.6~1500:1200:tenant_b"
    # the edited custom run is the same workload, so the same numbers
    custom = ec.get(edit).text
    for key in ("w-max-running", "w-steps", "w-prefix-hit", "w-fragmentation"):
        assert text_of(custom, key) == text_of(page, key)


# ---- block sizes ---------------------------------------------------------------------------------


def test_tail_waste_worked_for_s1000_b16(ec):
    page = ec.get("/explore?typical_lengths=1000").text
    # S, blocks, slots, wasted, exact, B/(2S)
    assert _rows(page, "waste-table") == [["1,000", "63", "1,008", "8", "0.79%", "0.80%"]]
    row = _block_row(page, 16)
    assert "2.00 MiB" in row and " 8.0 " in row and "0.79%" in row
    # B = 32: ceil(1000/32) = 32 blocks = 1024 slots, 24 wasted = 2.34 %
    row32 = _block_row(page, 32)
    assert "4.00 MiB" in row32 and " 24.0 " in row32 and "2.34%" in row32


def test_block_table_marks_flash_attn_default_on_h100(ec):
    body = ec.get("/api/blocks", params={"typical_lengths": "1000"}).json()
    assert body["attention_backend"] == "FLASH_ATTN" and body["default_block_size"] == 16
    rows = {r["block_size"]: r for r in body["block_sizes"]}
    assert [b for b, r in rows.items() if r["is_default"]] == [16]
    assert rows[16]["bytes_per_block"] == 2 * MIB and rows[32]["bytes_per_block"] == 4 * MIB
    assert rows[16]["num_gpu_blocks"] == body["kv_cache_bytes"] // (2 * MIB)
    assert rows[16]["tail_waste_fraction"] == pytest.approx(8 / 1008)
    # 131,072-token max_model_len: 8192 int32 entries at B = 16
    assert rows[16]["block_table_entries_per_max_seq"] == 8192
    assert rows[16]["block_table_bytes_per_max_seq"] == 32768
    assert rows[8]["rejected"] and "FLASH_ATTN" in rows[8]["note"]  # FLASH_ATTN needs a multiple of 16
    assert not rows[64]["rejected"]
    page = ec.get("/explore").text
    assert "default" in _block_row(page, 16) and "current" in _block_row(page, 16)
    assert "default" not in _block_row(page, 32)
    assert "rejected" in _block_row(page, 8) and "rejected" not in _block_row(page, 32)


def test_ascend_910b_forces_128(ec):
    query = {"device": "huawei-ascend-910b-64gb", "model": "Qwen/Qwen2.5-7B"}
    body = ec.get("/api/blocks", params=query).json()
    assert body["attention_backend"] == "ASCEND" and body["default_block_size"] == 128
    rows = {r["block_size"]: r for r in body["block_sizes"]}
    assert [b for b, r in rows.items() if not r["rejected"]] == [128]
    assert rows[16]["note"] == "--block-size 16 is forced to 128 by vllm-ascend."
    page = ec.get("/explore", params=query).text
    assert "forced to 128" in _block_row(page, 16)
    assert "default" in _block_row(page, 128)


def test_flashmla_takes_only_64_on_vllm_0_11(ec):
    query = {
        "model": "deepseek-ai/DeepSeek-V3",
        "device": "nvidia-h200-141gb",
        "tensor_parallel_size": "8",
        "vllm_version": "0.11.0",
    }
    body = ec.get("/api/blocks", params=query).json()
    assert body["attention_backend"] == "FLASHMLA" and body["default_block_size"] == 64
    rows = {r["block_size"]: r for r in body["block_sizes"]}
    # 0.11.0 platforms/cuda.py check_and_update_config: FlashMLA writes 64 over any other --block-size
    # ("Forcing kv cache block size to 64 for FlashMLA backend."); round 7 said TRITON_MLA ran the 16 instead
    assert rows[16]["note"] == "vLLM runs B = 64 instead"
    assert rows[128]["note"] == "vLLM runs B = 64 instead"  # 0.11.0 `!= 64` (0.14.0: `% 64 != 0` keeps 128)
    assert rows[256]["rejected"] and "only from" in rows[256]["note"]  # not a 0.11.0 CLI choice


# ---- prefix cache --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shared", "hit", "recomputed", "blocks"),
    [(10, 8, 2, 2), (14, 12, 2, 3), (12, 12, 0, 3), (3, 0, 3, 0)],
)
def test_prefix_calculator_full_blocks_only(ec, shared, hit, recomputed, blocks):
    query = {"shared_prefix_tokens": shared, "prefix_block_size": 4, "num_requests_sharing": 2}
    body = ec.get("/api/blocks", params=query).json()["prefix"]
    assert (body["tokens_hit"], body["tokens_recomputed"], body["blocks_hit"]) == (hit, recomputed, blocks)
    # two requests: the hit blocks are held once instead of twice; at B = 4 a block is 4 x 128 KiB
    assert body["bytes_per_block"] == 4 * 131072
    assert body["memory_saved_bytes"] == blocks * 4 * 131072
    page = ec.get("/explore", params=query).text
    assert text_of(page, "p-hit") == str(hit)
    assert text_of(page, "p-recomputed") == str(recomputed)
    # blocks x (2 - 1) x 512 KiB: 2 blocks = 1 MiB, 3 blocks = 1.5 MiB
    assert text_of(page, "p-saved") == {0: "0.0 KiB", 2: "1.00 MiB", 3: "1.50 MiB"}[blocks]


def test_prefix_calculator_extra_keys(ec):
    base = {"shared_prefix_tokens": 14, "prefix_block_size": 4}
    salted = ec.get("/api/blocks", params={**base, "cache_salt": "true"}).json()["prefix"]
    assert salted["tokens_hit"] == 0 and salted["memory_saved_bytes"] == 0
    assert "cache_salt" in salted["reason"]
    lora = ec.get("/api/blocks", params={**base, "lora": "true"}).json()["prefix"]
    assert lora["tokens_hit"] == 0 and "LoRA" in lora["reason"]
    # a different image starting at token 9 sits in block 2: blocks 0 and 1 still hit
    mm = ec.get("/api/blocks", params={**base, "mm": "true", "mm_item_start_token": 9}).json()["prefix"]
    assert mm["tokens_hit"] == 8 and mm["blocks_hit"] == 2
    page = ec.get("/explore", params={**base, "cache_salt": "true"}).text
    assert text_of(page, "p-hit") == "0"
    assert "cache_salt" in text_of(page, "p-reason") and "cache_salt" in text_of(page, "p-differing")


def test_prefix_memory_saved_at_engine_block_size(ec):
    page = ec.get("/explore").text  # 1000 shared tokens, N = 16, B = 16, 2 MiB blocks
    assert text_of(page, "p-hit") == "992"
    assert text_of(page, "p-blocks") == "62"
    assert text_of(page, "p-saved") == "1.82 GiB"  # 62 x 15 x 2 MiB = 1860 MiB
    assert "62 blocks × (16 − 1) × 2,097,152 B" in page


def test_seed_example_shown_corrected_with_footnote(ec):
    page = ec.get("/explore").text
    rows = _rows(page, "seed-prefix")
    assert [r[:5] for r in rows] == [["10", "4", "8", "2", "2"], ["14", "4", "12", "2", "3"]]
    assert 'id="fn-misprint"' in page and "14 shared tokens at B = 4 are 3 full blocks" in html.unescape(page)


# ---- workload ------------------------------------------------------------------------------------


def test_api_workload_preset_fields_and_determinism(ec):
    body = {"preset": "many_short", "seed": 3}
    first = ec.post("/api/workload", json=body)
    second = ec.post("/api/workload", json=body)
    assert first.status_code == 200
    data = first.json()
    for key in (
        "num_gpu_blocks",
        "peak_blocks_used",
        "max_running",
        "preemptions",
        "prefix_hit_rate",
        "fragmentation_waste_fraction",
        "binding_limit",
        "binding_explanation",
    ):
        assert key in data
    assert set(data["series"]) == {"step", "kv_usage", "running", "waiting"}
    assert 0 < len(data["series"]["step"]) <= 400
    assert json.dumps(data, sort_keys=True) == json.dumps(second.json(), sort_keys=True)
    assert data["engine"]["block_size"] == 16 and data["engine"]["max_num_seqs"] == 1024
    other = ec.post("/api/workload", json={"preset": "many_short", "seed": 4}).json()
    assert other["series"] != data["series"]  # lognormal lengths: another seed, another run


def test_api_workload_single_request_by_hand(ec):
    # prefill of 100 tokens in one step emits token 1, then 49 decode steps: 50 steps;
    # the KV of the last token is never written: ceil((100 + 50 - 1) / 16) = 10 blocks at the peak.
    body = {
        "classes": [{"share": 1, "prompt_tokens": 100, "output_tokens": 50}],
        "num_requests": 1,
        "concurrency": 1,
    }
    data = ec.post("/api/workload", json=body).json()
    assert (data["steps"], data["peak_blocks_used"], data["max_running"]) == (50, 10, 1)
    assert data["binding_limit"] == "none"


def test_mix_bound_by_max_num_seqs(ec):
    # 64 clients, max_num_seqs 8: 200 requests run in 25 waves of 8, 50 steps each = 1250 steps;
    # 8 x 10 blocks is nothing for the pool, so max_num_seqs binds.
    body = {
        "max_num_seqs": 8,
        "classes": [{"share": 1, "prompt_tokens": 100, "output_tokens": 50}],
        "num_requests": 200,
        "concurrency": 64,
    }
    data = ec.post("/api/workload", json=body).json()
    assert data["binding_limit"] == "max_num_seqs"
    assert (data["max_running"], data["preemptions"], data["steps"]) == (8, 0, 1250)
    assert data["mean_waiting"] > 0


def test_mix_bound_by_the_pool(ec):
    # utilization 0.25 leaves a small pool; a request of 2000 + 2000 tokens peaks at
    # ceil(3999 / 16) = 250 blocks, so 64 clients cannot all run: kv_pool binds, with preemptions.
    body = {
        "gpu_memory_utilization": 0.25,
        "max_model_len": 8192,
        "classes": [{"share": 1, "prompt_tokens": 2000, "output_tokens": 2000}],
        "num_requests": 64,
        "concurrency": 64,
    }
    data = ec.post("/api/workload", json=body).json()
    usable = data["num_gpu_blocks"] - 1
    assert data["binding_limit"] == "kv_pool"
    assert data["preemptions"] > 0
    assert usable // 250 <= data["max_running"] < 64
    assert data["peak_blocks_used"] <= usable


def test_page_workload_matches_api(ec):
    page = ec.get("/explore?preset=long_output&seed=2").text
    data = ec.post("/api/workload", json={"preset": "long_output", "seed": 2}).json()
    assert text_of(page, "w-max-running") == f"{data['max_running']:,}"
    assert text_of(page, "w-preemptions") == f"{data['preemptions']:,}"
    # the page names the limit in words; the API keeps its key (walk11: "kv_pool" was shown, in Chinese too)
    assert text_of(page, "w-binding-limit") == "the KV pool" and data["binding_limit"] == "kv_pool"
    assert 'data-limit="kv_pool"' in page
    assert text_of(page, "w-title").startswith("Long outputs — ")


def test_open_loop_arrivals(ec):
    page = ec.get("/explore?preset=many_short&arrival_rate=2&num_requests=300").text
    assert "open loop" in page and 'id="banner"' not in page
    assert _permalink(page) == "/explore?v=1&preset=many_short&num_requests=300&arrival_rate=2"


# ---- bad inputs ----------------------------------------------------------------------------------


def test_bad_page_inputs_stop_the_page_each_named(ec):
    r = ec.get(
        "/explore?typical_lengths=abc&num_requests=999999&preset=nope&shared_prefix_tokens=-4"
        "&seed=x&device=no-such-gpu&arrival_rate=0"
    )
    assert r.status_code == 422
    banner = html.unescape(unusable_block(r.text))
    for field in (
        "typical_lengths",
        "num_requests",
        "preset",
        "shared_prefix_tokens",
        "seed",
        "device",
        "arrival_rate",
    ):
        assert field in banner
    assert "20000" in banner  # the cap is named
    # nothing is simulated with defaults standing in (issue 24 item 1: it used to be)
    assert 'id="workload-numbers"' not in r.text
    link = _permalink(r.text)  # reopens the same error
    assert "typical_lengths=abc" in link and "device=no-such-gpu" in link and "num_requests=999999" in link


def test_bad_custom_classes_and_cross_field_problems(ec):
    r = ec.get("/explore?preset=custom&wl=1:abc:5")
    assert r.status_code == 422 and unusable_fields(r.text) == ["wl"] and "class 1" in unusable_block(r.text)
    assert 'id="workload-numbers"' not in r.text  # the default custom mix no longer runs instead
    r = ec.get("/explore?preset=custom&wl=1:100:10:200")  # prefix longer than the prompt
    assert "shared_prefix_tokens (200) exceeds the shortest prompt (100)" in html.unescape(r.text)
    r = ec.get("/explore?request_tokens=5&shared_prefix_tokens=10")
    assert "request_tokens" in text_of(r.text, "banner")
    r = ec.get("/explore?arrival_rate=1&concurrency=8")
    assert "concurrency" in text_of(r.text, "banner")
    assert "concurrency=" not in _permalink(r.text)


def test_engine_problems_are_shown_not_500(ec):
    refused = ec.get("/explore?tensor_parallel_size=64")  # does not divide the 32 attention heads
    assert refused.status_code == 422
    assert "tensor_parallel_size" in text_of(refused.text, "verdict")
    too_long = ec.get("/explore?max_model_len=4000000")
    assert too_long.status_code == 200
    assert "max_model_len" in text_of(too_long.text, "workload-error")
    assert 'id="block-table"' in too_long.text


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"preset": "nope"}, "preset"),
        ({}, "classes"),
        (
            {"preset": "many_short", "classes": [{"share": 1, "prompt_tokens": 5, "output_tokens": 5}]},
            "classes",
        ),
        ({"preset": "many_short", "num_requests": 20_001}, "num_requests"),
        ({"preset": "many_short", "bogus": 1}, "bogus"),
        ({"preset": "many_short", "tensor_parallel_size": 3}, "tensor_parallel_size"),
        ({"preset": "many_short", "max_model_len": 4_000_000}, "max_model_len"),
        ({"preset": "many_short", "concurrency": 4, "arrival_rate": 1.0}, "concurrency"),
        (
            {"preset": "many_short", "max_num_seqs": 2048, "max_num_batched_tokens": 1024},
            "max_num_batched_tokens",
        ),
        ({"preset": "many_short", "quantization": "nope"}, "quantization"),
        (
            {
                "classes": [
                    {
                        "share": 1,
                        "prompt_tokens": {"dist": "uniform", "low": 5, "high": 2},
                        "output_tokens": 1,
                    }
                ]
            },
            "classes",
        ),
        (
            {"classes": [{"share": 1, "prompt_tokens": 10, "output_tokens": 1, "shared_prefix_tokens": 20}]},
            "classes",
        ),
    ],
)
def test_api_workload_errors_are_422_naming_the_field(ec, body, field):
    r = ec.post("/api/workload", json=body)
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"][:2] == ["body", field]


def test_api_blocks_errors(ec):
    r = ec.get("/api/blocks?foo=1")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "foo"]
    r = ec.get("/api/blocks?shared_prefix_tokens=10&request_tokens=5")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "request_tokens"]
    r = ec.get("/api/blocks?typical_lengths=0")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][:2] == ["query", "typical_lengths"]


# ---- the compact workload encoding -----------------------------------------------------------------


def test_wl_codec_round_trips_every_preset():
    for preset in explore.WORKLOAD_PRESETS.values():
        text = explore.encode_classes(preset.spec.classes)
        assert explore.parse_classes(text) == preset.spec.classes


def test_wl_codec_lengths():
    assert explore.parse_length("512") == 512
    uniform = explore.parse_length("100-2000")
    assert (uniform.low, uniform.high) == (100, 2000)
    lognormal = explore.parse_length("300~0.6~3000")
    assert (lognormal.median, lognormal.sigma, lognormal.max, lognormal.min) == (300, 0.6, 3000, 1)
    with pytest.raises(ValueError, match="not N, LOW-HIGH"):
        explore.parse_length("1e3")
    with pytest.raises(ValueError, match="class 2"):
        explore.parse_classes("1:10:10;1:10")


def test_links_respect_the_root_path():
    app = create_app(root_path="/tools/kvplan")
    if not any(getattr(route, "name", None) == "explore" for route in app.routes):
        app.include_router(explore.router)
        app.include_router(explore.api_router)
    page = TestClient(app).get("/tools/kvplan/explore?preset=many_short").text
    assert _permalink(page) == "/tools/kvplan/explore?v=1&preset=many_short"
    assert 'href="/tools/kvplan/?v=1"' in page  # back to the planner
    assert 'action="/tools/kvplan/explore"' in page
