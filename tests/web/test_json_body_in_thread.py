"""POST /api/estimate's JSON body is decoded in the thread pool (app/web/encoding.JsonBodyInThread), once, and
FastAPI's reading, validation, errors and OpenAPI schema of the body are what they were."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.web import encoding

BODY = {"model": "meta-llama/Llama-3.1-8B", "device": "nvidia-h100-sxm-80gb", "max_model_len": 8192}
SENT = json.dumps(BODY).encode()
JSON = {"content-type": "application/json"}


def _decodes(monkeypatch: pytest.MonkeyPatch) -> tuple[list[bool], list[int]]:
    """Records, per decode by JsonBodyInThread, whether an event loop runs in its thread; and counts the
    decodes of the sent body by anything else (Starlette's Request.json() calls json.loads)."""
    on_loop: list[bool] = []
    other: list[int] = []
    real = json.loads

    def recording(body: bytes) -> Any:
        try:
            asyncio.get_running_loop()
            on_loop.append(True)
        except RuntimeError:
            on_loop.append(False)
        return real(body)

    def counting(*args: Any, **kwargs: Any) -> Any:
        if args and args[0] == SENT:
            other.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(encoding, "decode_json", recording)
    monkeypatch.setattr(json, "loads", counting)
    return on_loop, other


def test_the_body_is_decoded_once_off_the_event_loop(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_loop, other = _decodes(monkeypatch)
    r = client.post("/api/estimate", content=SENT, headers=JSON)
    assert r.status_code == 200, r.text
    assert on_loop == [False]  # one decode, in a thread with no running loop: the thread pool's
    assert other == []  # FastAPI took the decoded body from Request.json()'s cache: no second decode
    # Llama-3.1-8B: 32 layers x 8 KV heads x head size 128 x (K and V) x 2 bytes (bf16) = 131,072 per token
    assert r.json()["kv_bytes_per_token"] == 131_072


def test_a_body_that_does_not_decode_gets_fastapis_own_answer(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_loop, _ = _decodes(monkeypatch)
    r = client.post("/api/estimate", content=b'{"model": }', headers=JSON)
    assert on_loop == [False]
    assert r.status_code == 422
    # '{"model": }': the value expected at character 10 (0-based), where the '}' is
    assert r.json()["detail"] == [
        {
            "type": "json_invalid",
            "loc": ["body", 10],
            "msg": "JSON decode error",
            "input": {},
            "ctx": {"error": "Expecting value"},
        }
    ]


def test_a_body_that_is_not_json_is_not_decoded(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    on_loop, other = _decodes(monkeypatch)
    r = client.post("/api/estimate", content=SENT, headers={"content-type": "text/plain"})
    assert on_loop == [] and other == []
    assert r.status_code == 422  # FastAPI validates the raw bytes against the model, as before


def test_the_openapi_schema_still_declares_the_body(client: TestClient) -> None:
    body = client.get("/openapi.json").json()["paths"]["/api/estimate"]["post"]["requestBody"]
    assert body == {
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/StrictPlannerParams"}}},
        "required": True,
    }


def test_no_private_starlette_cache_is_relied_on(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    # round 8 left the decoded body in Starlette's private Request._json; a Starlette that keeps (or
    # checks) its cache elsewhere would decode the body again. Here Request.json ignores any cache.
    from starlette.requests import Request

    async def uncached(self: Request) -> Any:
        return json.loads(await self.body())

    on_loop, other = _decodes(monkeypatch)
    monkeypatch.setattr(Request, "json", uncached)
    r = client.post("/api/estimate", content=SENT, headers=JSON)
    assert r.status_code == 200, r.text
    assert on_loop == [False] and other == []  # still one decode, in the thread pool
