"""One control per parameter, one N, and a command that names the model (issue 24 items 2, 4, 5)."""

from __future__ import annotations

import html
import json
import re
from collections import Counter

from fastapi.testclient import TestClient

from tests.web.conftest import LLAMA_31_8B_CONFIG

# the walkthrough's EP case: Qwen3-30B-A3B at TP 2 on 4 devices
EP = "/?v=1&model=Qwen%2FQwen3-30B-A3B&max_model_len=32768&tensor_parallel_size=2&devices=4"


def _command(page: str) -> str:
    return html.unescape(re.search(r'id="serve-command">(.*?)</pre>', page, re.S).group(1))


def test_every_planner_parameter_has_one_control(client: TestClient) -> None:
    page = client.get(EP).text
    form = re.search(r'<form id="planner-form".*?</form>', page, re.S).group(0)
    names = Counter(
        m.group(1)
        for m in re.finditer(r'<(?:input|select|textarea)\b[^>]*\bname="([^"]+)"', form)
        if 'type="hidden"' not in m.group(0) and 'type="radio"' not in m.group(0)
    )
    twice = {name: n for name, n in names.items() if n > 1}
    assert not twice, twice  # data_parallel_size and enable_expert_parallel were under Speed and Extras
    assert names["data_parallel_size"] == names["enable_expert_parallel"] == 1


def test_the_command_prints_each_flag_once(client: TestClient) -> None:
    command = _command(client.get(EP + "&enable_expert_parallel=true&data_parallel_size=2").text)
    flags = Counter(re.findall(r"(--[a-z-]+)", command))
    assert flags["--enable-expert-parallel"] == 1 and flags["--data-parallel-size"] == 1, command


def test_the_speed_section_models_the_target_concurrency(client: TestClient) -> None:
    body = {"model": "meta-llama/Llama-3.1-70B", "device": "h100", "tensor_parallel_size": 8}
    assert (
        client.post("/api/performance", json={**body, "target_concurrency": 64}).json()["concurrency"] == 64
    )
    # a client count of its own still wins, and with neither the section keeps its 16 clients
    both = {**body, "target_concurrency": 64, "concurrency": 8}
    assert client.post("/api/performance", json=both).json()["concurrency"] == 8
    assert client.post("/api/performance", json=body).json()["concurrency"] == 16
    page = html.unescape(client.get("/speed", params={**body, "target_concurrency": 64}).text)
    assert "64 requests run at once" in page and "16 requests run at once" not in page


def test_a_pasted_config_names_its_model_or_says_it_does_not(client: TestClient) -> None:
    named = {**LLAMA_31_8B_CONFIG, "_name_or_path": "Qwen/Qwen3-30B-A3B-Instruct-2507"}
    page = html.unescape(client.post("/", data={"config_json": json.dumps(named)}).text)
    assert _command(page).split()[:3] == ["vllm", "serve", "Qwen/Qwen3-30B-A3B-Instruct-2507"]
    permalink = re.search(r'id="permalink" href="([^"]+)"', page).group(1)
    assert "model=Qwen%2FQwen3-30B-A3B-Instruct-2507" in permalink
    # no name anywhere: a placeholder the user must fill, said as such; never "pasted-config"
    page = html.unescape(client.post("/", data={"config_json": json.dumps(LLAMA_31_8B_CONFIG)}).text)
    assert _command(page).startswith("vllm serve '<model path or id>'")
    assert "replace <model path or id> in the command" in page and "pasted-config" not in page
    # a name typed in the Model box wins over the config's own
    typed = client.post("/", data={"config_json": json.dumps(named), "model": "my-org/my-model"}).text
    assert _command(html.unescape(typed)).split()[:3] == ["vllm", "serve", "my-org/my-model"]


def test_the_model_card_command_has_a_placeholder_or_the_typed_name(client: TestClient) -> None:
    card = {"card_layers": 32, "card_kv_heads": 8, "card_head_size": 128, "card_params": "8b"}
    page = html.unescape(client.get("/", params=card).text)
    assert _command(page).startswith("vllm serve '<model path or id>'") and "model-card" not in _command(page)
    page = html.unescape(client.get("/", params={**card, "model": "my-org/card-model"}).text)
    assert _command(page).split()[:3] == ["vllm", "serve", "my-org/card-model"]
