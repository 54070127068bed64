"""Issue 24 item 1: a model the planner does not know, or a number it cannot read, is an error state on
every page and API. Nothing is computed for a substitute: no verdict, no `vllm serve` command, no deploy
tabs, no permalink naming another model; the box keeps what the user typed and the message names the
field, says "did you mean" (the catalog's closest ids) and, with the hub off, how to paste config.json.

Before the fix (main at 6768465) `/?v=1&model=Qwen/Qwen3-30B-A3B-Instruct-2507` answered 200 with
data-verdict="fits" and `vllm serve meta-llama/Llama-3.1-8B`, and `/fleet?requests_per_s=thirty`
searched for 20 requests/s ("Cheapest layout meeting the SLO", `vllm serve meta-llama/Llama-3.1-8B`).
"""

from __future__ import annotations

import html
import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient

from app.web.app import create_app
from app.web.inputs.problems import close_models
from tests.web.conftest import LLAMA_31_8B_CONFIG

UNKNOWN = "Qwen/Qwen3-30B-A3B-Instruct-2507"  # a real HF repo the catalog does not hold
DEFAULT_MODEL = "meta-llama/Llama-3.1-8B"  # what the page used to substitute
NEAREST = "Qwen/Qwen3-30B-A3B"  # the catalog's base of that instruct release
SERVE = re.compile(r"vllm serve [\w.-]+/[\w.-]+")  # a command naming an org/name model


# a rendered command names a model (org/name or the visible placeholder); the "Your own runs" help text
# ("each below the vllm serve command it ran against") is no command
_COMMAND = re.compile(r"vllm serve (?:[\w.-]+/|&lt;|<)")


def _text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def assert_nothing_computed(page: str) -> None:
    """No verdict, no command, no deploy tab, no link that names the substituted model. (The paste box's
    greyed example, its placeholder attribute, is not a result and is left out.)"""
    page = re.sub(r'placeholder="[^"]*"', "", page)
    assert "data-verdict=" not in page
    assert 'class="deploy-tabs"' not in page
    assert 'id="numbers"' not in page
    assert SERVE.findall(page) == []
    assert DEFAULT_MODEL.replace("/", "%2F") not in page  # no permalink to the substitute
    assert f"vllm serve {DEFAULT_MODEL}" not in _text(page)


def model_box(page: str) -> str:
    match = re.search(r'<input id="f-model" name="model"[^>]*value="([^"]*)"', page)
    assert match, "no model box"
    return html.unescape(match.group(1))


def test_close_models_finds_the_catalog_base_of_an_instruct_release() -> None:
    # difflib ratio of "qwen3-30b-a3b-instruct-2507" to "qwen3-30b-a3b": 2*13/(27+13) = 0.65
    assert close_models(UNKNOWN)[0] == NEAREST
    assert close_models("llama-3.1-8b")[0] == DEFAULT_MODEL  # a short name, lowercased
    assert close_models("zzzz-nothing-like-it-9000") == ()


def test_an_unknown_model_in_the_url_is_an_error_state_not_the_default(client: TestClient) -> None:
    response = client.get("/", params={"v": 1, "model": UNKNOWN, "device": "nvidia-h100-sxm-80gb"})
    assert response.status_code == 422
    page = response.text
    assert_nothing_computed(page)
    assert model_box(page) == UNKNOWN  # the box keeps what was typed
    verdict = _text(page[page.index('id="verdict"') :][:3000])
    assert "model" in verdict and UNKNOWN in verdict
    assert f"Did you mean {NEAREST}" in verdict
    assert "Paste config.json" in verdict and "KVPLAN_ALLOW_HUB=1" in verdict  # the hub is off here


def test_the_fragment_of_an_unknown_model_is_the_same_error_and_its_url_names_it(client: TestClient) -> None:
    response = client.get("/", params={"v": 1, "model": UNKNOWN}, headers={"HX-Request": "true"})
    assert response.status_code == 422
    assert_nothing_computed(response.text)
    assert f"Did you mean {NEAREST}" in _text(response.text)
    replaced = parse_qs(urlsplit(response.headers["HX-Replace-Url"]).query)
    assert replaced["model"] == [UNKNOWN]


def test_a_model_typed_in_the_box_is_kept_by_the_post_form(client: TestClient) -> None:
    response = client.post("/", data={"v": "1", "model": "Qwen3-30B-A3B-Instruct"})
    assert response.status_code == 422
    assert_nothing_computed(response.text)
    assert model_box(response.text) == "Qwen3-30B-A3B-Instruct"
    assert NEAREST in _text(response.text)


def test_a_pasted_command_naming_an_unknown_model_lands_on_the_error(client: TestClient) -> None:
    command = f"vllm serve {UNKNOWN} --tensor-parallel-size 2 --max-model-len 32768"
    response = client.post("/command", data={"command": command, "state": ""})
    assert response.status_code == 422  # followed to the planner page of what was pasted
    assert_nothing_computed(response.text)
    assert model_box(response.text) == UNKNOWN


def test_a_pasted_config_names_the_model_and_is_computed(client: TestClient) -> None:
    """With a config.json the model id is only a name: no catalog look-up, a normal result."""
    config = json.dumps(LLAMA_31_8B_CONFIG)
    response = client.post("/", data={"v": "1", "model": UNKNOWN, "config_json": config})
    assert response.status_code == 200
    assert 'data-verdict="fits"' in response.text
    assert f"vllm serve {UNKNOWN}" in _text(response.text)


def test_an_unreadable_number_on_the_planner_is_an_error_and_stays_in_its_box(client: TestClient) -> None:
    response = client.get("/", params={"v": 1, "max_model_len": "thirty"})
    assert response.status_code == 422
    page = response.text
    assert "data-verdict=" not in page and 'class="deploy-tabs"' not in page
    assert re.search(r'id="f-mml" name="max_model_len"[^>]*value="thirty"', page)
    verdict = _text(page[page.index('id="verdict"') :][:2000])
    assert "max_model_len" in verdict and "thirty" in verdict


def test_the_language_of_a_link_is_not_an_input_to_stop_on(client: TestClient) -> None:
    response = client.get("/", params={"v": 1, "lang": "klingon"})
    assert response.status_code == 200 and 'data-verdict="fits"' in response.text


def test_fleet_does_not_search_for_a_number_it_could_not_read(client: TestClient) -> None:
    response = client.get("/fleet", params={"model": DEFAULT_MODEL, "requests_per_s": "thirty"})
    assert response.status_code == 422
    page = response.text
    assert "Cheapest layout" not in page and not _COMMAND.search(_text(page))
    assert re.search(r'name="requests_per_s"[^>]*value="thirty"', page)
    assert "requests_per_s" in _text(page) and "thirty" in _text(page)


def test_fleet_says_did_you_mean_for_an_unknown_model(client: TestClient) -> None:
    response = client.get("/fleet", params={"model": UNKNOWN})
    assert response.status_code == 422
    assert f"Did you mean {NEAREST}" in _text(response.text)
    assert not _COMMAND.search(_text(response.text))


@pytest.mark.parametrize("path", ["/explore", "/recommend", "/speed", "/compare"])
def test_every_other_page_stops_on_an_unknown_model(client: TestClient, path: str) -> None:
    response = client.get(path, params={"v": 1, "model": UNKNOWN})
    assert response.status_code == 422, path
    assert_nothing_computed(response.text)
    assert NEAREST in _text(response.text)


@pytest.mark.parametrize(
    ("path", "field", "value"),
    [
        ("/explore", "max_model_len", "thirty"),
        ("/recommend", "target_concurrency", "lots"),
        ("/speed", "input_tokens", "many"),
        ("/compare", "gpu_memory_utilization", "most"),
    ],
)
def test_every_other_page_stops_on_a_number_it_cannot_read(
    client: TestClient, path: str, field: str, value: str
) -> None:
    response = client.get(path, params={"v": 1, field: value})
    assert response.status_code == 422, path
    assert "data-verdict=" not in response.text and "vllm serve" not in _text(response.text)
    assert field in _text(response.text) and value in _text(response.text)


def test_the_apis_name_the_field_and_say_did_you_mean(client: TestClient) -> None:
    response = client.get("/api/estimate", params={"model": UNKNOWN})
    assert response.status_code == 422
    (detail,) = response.json()["detail"]
    assert detail["loc"] == ["query", "model"]
    assert f"did you mean {NEAREST}" in detail["msg"]
    assert "config_json" in detail["msg"]  # the API's own way to give the config
    for path in ("/api/fleet", "/api/performance", "/api/recommend"):
        response = client.post(path, json={"model": UNKNOWN})
        assert response.status_code == 422, path
        assert response.json()["detail"][0]["loc"] == ["body", "model"], path
        assert NEAREST in response.json()["detail"][0]["msg"], path
    response = client.post("/api/fleet", json={"requests_per_s": "thirty"})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "requests_per_s"]


def test_the_zh_page_says_it_in_chinese() -> None:
    zh = TestClient(create_app())
    page = zh.get("/", params={"v": 1, "model": UNKNOWN, "lang": "zh"}).text
    assert_nothing_computed(page)
    text = _text(page)
    assert "你是不是要找" in text and NEAREST in text
