"""Issue 19: hostile numbers and workloads end in a 4xx naming the field (API) or an inline message
naming it (page), never a 5xx; redirects stay on this host."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

LONG = "9" * 400
BAD_NUMBERS = (LONG, "7" * 5000, "inf", "nan", "1e308", "²", "٣٢", "9" * 30 + "k")
PLANNER_NUMBERS = (
    "max_model_len",
    "target_concurrency",
    "max_num_seqs",
    "max_num_batched_tokens",
    "card_params",
    "card_layers",
    "card_window",
    "card_max_len",
    "gpu_memory_utilization",
    "device_memory_gib",
)


@pytest.mark.parametrize("name", PLANNER_NUMBERS)
@pytest.mark.parametrize("bad", BAD_NUMBERS)
def test_api_estimate_names_the_field(client, name: str, bad: str) -> None:  # type: ignore[no-untyped-def]
    response = client.get("/api/estimate?" + urlencode({name: bad}))
    assert response.status_code == 422
    assert [name] == response.json()["detail"][0]["loc"][1:2]


@pytest.mark.parametrize("name", ("max_model_len", "target_concurrency", "card_params"))
def test_planner_page_names_the_field(client, name: str) -> None:  # type: ignore[no-untyped-def]
    response = client.get("/?" + urlencode({name: LONG}))
    assert response.status_code in (200, 422)
    assert name in response.text and "at most 32 characters" in response.text


@pytest.mark.parametrize(
    "wl",
    ["inf:100:100", "1e308:100:100;1e308:50:50", f"1:{LONG}:1", f"1:100~{LONG}~200:1", "0.5:²:1", "1:٣٢:1"],
)
def test_explore_wl_is_an_inline_problem(client, wl: str) -> None:  # type: ignore[no-untyped-def]
    response = client.get("/explore?" + urlencode({"preset": "custom", "wl": wl}))
    assert response.status_code in (200, 422)
    assert "wl" in response.text and "class 1" in response.text


@pytest.mark.parametrize("name", ("num_requests", "concurrency", "arrival_rate", "shared_prefix_tokens"))
def test_explore_numbers(client, name: str) -> None:  # type: ignore[no-untyped-def]
    for bad in BAD_NUMBERS:
        response = client.get("/explore?" + urlencode({name: bad}))
        assert response.status_code in (200, 422), bad


def test_workload_share_overflow_is_a_422(client) -> None:  # type: ignore[no-untyped-def]
    # 1e308 + 1e308 is inf: random.choices would fail; a share is capped at 1e6 (relative weights).
    cls = {"share": 1e308, "prompt_tokens": 10, "output_tokens": 10}
    response = client.post(
        "/api/workload", json={"classes": [cls, cls], "num_requests": 10, "concurrency": 1}
    )
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-1] == "share"
    raw = b'{"classes": [{"share": Infinity, "prompt_tokens": 10, "output_tokens": 10}], "num_requests": 1, "concurrency": 1}'
    response = client.post("/api/workload", content=raw, headers={"content-type": "application/json"})
    assert response.status_code == 422


def test_workload_over_budget_is_a_422_naming_both_numbers(client) -> None:  # type: ignore[no-untyped-def]
    # 20,000 prompts of 100,000 tokens at 1 token a step: 2·10⁹ steps, refused before the run (the
    # default model, Llama-3.1-8B, takes up to 131,072 tokens: a longer max_model_len is vLLM's refusal).
    body = {
        "classes": [{"share": 1, "prompt_tokens": 100_000, "output_tokens": 1}],
        "num_requests": 20_000,
        "concurrency": 1,
        "max_num_batched_tokens": 1,
        "max_num_seqs": 1,
        "max_model_len": 110_000,
    }
    response = client.post("/api/workload", json=body)
    assert response.status_code == 422
    detail = response.json()["detail"][0]
    assert detail["loc"] == ["body", "num_requests"]
    assert "2,000,000,000" in detail["msg"] and "600,000" in detail["msg"]


def test_explore_page_shows_the_budget_problem_inline(client) -> None:  # type: ignore[no-untyped-def]
    query = {
        "preset": "custom",
        "wl": "1:100000:1",
        "num_requests": "20000",
        "max_num_batched_tokens": "1",
        "max_num_seqs": "1",
        "max_model_len": "110000",
    }
    response = client.get("/explore?" + urlencode(query))
    assert "2,000,000,000" in response.text and "workload-error" in response.text


@pytest.mark.parametrize("bad", ["²", LONG, "٣٢", "inf"])
def test_doctor_concurrency(client, bad: str) -> None:  # type: ignore[no-untyped-def]
    response = client.post("/doctor", data={"log": "INFO hello", "target_concurrency": bad})
    assert response.status_code == 422
    assert "target_concurrency" in response.text


@pytest.mark.parametrize(
    "flag", ["--max-model-len", "--max-num-seqs", "--max-num-batched-tokens", "--gpu-memory-utilization"]
)
@pytest.mark.parametrize("bad", [LONG, "inf", "nan", "1e308", "²", "9" * 30 + "K"])
def test_command_flags(client, flag: str, bad: str) -> None:  # type: ignore[no-untyped-def]
    field = flag.removeprefix("--").replace("-", "_")
    # a refused paste lands on its own shareable URL (/?command=…, or in place when too long for one)
    response = client.post("/command", data={"command": f"vllm serve x {flag} {bad}", "state": ""})
    assert response.status_code in (200, 422)
    assert field in response.text
    assert response.url.path == "/"


def test_json_with_a_huge_integer(client) -> None:  # type: ignore[no-untyped-def]
    raw = json.dumps({"max_model_len": 1}).replace("1", "7" * 5000).encode()
    response = client.post("/api/estimate", content=raw, headers={"content-type": "application/json"})
    assert 400 <= response.status_code < 500


def _big_config() -> str:
    from tests.web.conftest import LLAMA_31_8B_CONFIG

    # ~30 KB, like a config with a long id2label table: over what a GET form could carry (~30 KiB).
    return json.dumps(
        dict(LLAMA_31_8B_CONFIG, id2label={str(i): f"LABEL_{i}" for i in range(1200)}), indent=2
    )


def test_a_large_config_travels_by_post_with_a_short_permalink(client) -> None:  # type: ignore[no-untyped-def]
    from app.web.inputs.params import compact_config_json, unpack_config_json

    config = _big_config()
    assert len(config) > 29_000
    response = client.post(
        "/", data={"v": "1", "config_json": config, "max_model_len": "8192"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    link = response.headers["HX-Replace-Url"]
    assert "config_json=z%3A" in link
    assert len(link) < len(config) / 3  # deflated: 29.5 KB of JSON -> ~8 KB of link
    # the permalink gives the same page
    from urllib.parse import parse_qsl, urlsplit

    packed = dict(parse_qsl(urlsplit(link).query))["config_json"]
    assert unpack_config_json(packed) == compact_config_json(config)
    again = client.get(link)
    assert again.status_code == 200 and "pasted config.json" in again.text
    # the fragment echoes the config only packed (no raw copy) and twice: #planner-state (which the
    # lazy sections post and app.js completes the links from) and the permalink (was 13 copies, 123 KB)
    assert "LABEL_1199" not in response.text
    assert response.text.count(packed[2:]) == 2
    assert len(response.content) < 2.5 * len(packed) + 40_000
    # the lazy sections get the inputs from that one copy, by POST
    query = link.split("?", 1)[1]
    for path in ("/speed", "/recommend", "/part/versions"):
        section = client.post(path, data={"state": query}, headers={"HX-Request": "true"})
        by_url = client.get(f"{path}?{query}", headers={"HX-Request": "true"})
        assert section.status_code == 200 and section.text == by_url.text, path


@pytest.mark.parametrize("packed", ["z:!!!", "z:" + "A" * 70_000, "z:eJzLSM3JyQcABiwCFQ"])
def test_bad_packed_configs_name_the_field(client, packed: str) -> None:  # type: ignore[no-untyped-def]
    response = client.post("/api/estimate", json={"config_json": packed})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-1] == "config_json"


def test_a_deflate_bomb_stops_at_the_cap(client) -> None:  # type: ignore[no-untyped-def]
    import base64
    import zlib

    bomb = zlib.compress(b'{"a":"' + b"x" * 50_000_000 + b'"}', 9)  # 50 MB in ~50 KB
    packed = "z:" + base64.urlsafe_b64encode(bomb).decode()
    response = client.post("/api/estimate", json={"config_json": packed[:60_000]})
    assert response.status_code == 422


def test_html_routes_answer_html_errors(client) -> None:  # type: ignore[no-untyped-def]
    response = client.post("/doctor", content=b"zz", headers={"content-type": "multipart/form-data"})
    assert 400 <= response.status_code < 500
    assert response.headers["content-type"].startswith("text/html")
    response = client.get("/no-such-page")
    assert response.status_code == 404 and response.headers["content-type"].startswith("text/html")
    response = client.get("/api/no-such")
    assert response.status_code == 404 and response.headers["content-type"].startswith("application/json")


def test_slash_redirects_are_relative(client) -> None:  # type: ignore[no-untyped-def]
    response = client.get("/explore/?a=1", headers={"host": "evil.example"}, follow_redirects=False)
    assert response.status_code == 308 and response.headers["location"] == "/explore?a=1"


def test_the_explorer_form_posts_a_large_config_too(client) -> None:  # type: ignore[no-untyped-def]
    config = _big_config()
    data = {"v": "1", "config_json": config, "preset": "many_short", "num_requests": "100"}
    response = client.post("/explore", data=data, headers={"HX-Request": "true"})
    assert response.status_code == 200
    link = response.headers["HX-Replace-Url"]
    assert link.startswith("/explore?") and "config_json=z:" in link  # the explorer keeps ":" literal
    assert "LABEL_1199" not in response.text  # the fragment carries the config only packed
