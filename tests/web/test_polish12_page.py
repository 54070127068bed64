"""Things a walk of round 12's main found on the page (lane polish12), each in the state it was seen."""

from __future__ import annotations

import html
import re

from fastapi.testclient import TestClient

from app.web.app import create_app

APP = create_app()
SECONDARY = re.compile(r'<p id="speed-secondary">([^<]+)</p>')


def _secondary(client: TestClient, url: str) -> str:
    match = SECONDARY.search(client.get(url).text)
    assert match is not None
    return html.unescape(match.group(1))


def test_one_client_is_one_request_not_1_requests() -> None:
    # /speed with one client said "1 requests run at once in the replica": a closed loop of 1 client keeps
    # exactly one request in flight (Performance.running_requests = min(clients, max_num_seqs, KV fit) = 1).
    one = "/speed?v=1&model=meta-llama%2FLlama-3.1-8B&devices=1&max_model_len=8192&concurrency=1"
    line = _secondary(TestClient(APP), one)
    assert "1 request runs at once in the replica (limited by the number of clients)." in line
    assert "1 requests" not in line
    # DP 2 with 2 clients: one per data-parallel rank
    dp2 = "/speed?v=1&model=Qwen%2FQwen3-30B-A3B&devices=2&max_model_len=32768&data_parallel_size=2&concurrency=2"
    assert "1 request runs at once per data-parallel rank" in _secondary(TestClient(APP), dp2)
    # Chinese has no plural: the singular sentence reads as the plural one did
    zh = _secondary(TestClient(APP, cookies={"lang": "zh"}), one)
    assert "该副本同时运行 1 个请求" in zh and "request" not in zh
    # and more than one keeps the plural
    many = _secondary(TestClient(APP), one.replace("concurrency=1", "concurrency=4"))
    assert "4 requests run at once in the replica" in many
