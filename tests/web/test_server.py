"""`kv-planner serve`'s limits, through uvicorn's supported options, against a live uvicorn in a thread."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import suppress

import pytest
import uvicorn

from app.web.app import create_app
from app.web.security import SecurityMiddleware
from app.web.server import MAX_HEADER_BYTES, NoDelayH11Protocol, server_options
from tests.conftest import in_own_thread


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[str, int]]:
    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    options = {**server_options(), "access_log": False, "log_level": "warning", "timeout_keep_alive": 1}
    server = uvicorn.Server(uvicorn.Config(create_app(), **options))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    yield "127.0.0.1", port
    server.should_exit = True
    thread.join(10)


def _exchange(address: tuple[str, int], data: bytes, timeout: float = 10) -> bytes:
    with socket.create_connection(address, timeout=timeout) as conn:
        conn.sendall(data)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def test_options_are_uvicorns_own() -> None:
    # Every key is a uvicorn.Config parameter (an unknown one raises TypeError here).
    config = uvicorn.Config(create_app(), **server_options())
    assert config.h11_max_incomplete_event_size == MAX_HEADER_BYTES == 65_536
    assert config.limit_concurrency == 256 and config.timeout_keep_alive == 5
    assert config.http is NoDelayH11Protocol


def test_a_header_over_the_cap_is_refused(live: tuple[str, int]) -> None:
    # 80 KB of a header that has not ended > 64 KiB buffered: h11 refuses the incomplete event and
    # uvicorn answers 400 and closes — a 256 MiB header is cut at 64 KiB. (A complete request that
    # arrives in one read is parsed whole: the cap bounds what is buffered, not what is parsed.)
    answer = _exchange(live, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 80_000)
    assert answer.startswith(b"HTTP/1.1 400")
    ok = _exchange(
        live, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Ok: " + b"a" * 30_000 + b"\r\nConnection: close\r\n\r\n"
    )
    assert ok.startswith(b"HTTP/1.1 200")


def test_an_idle_keep_alive_connection_is_closed(live: tuple[str, int]) -> None:
    # timeout_keep_alive=1 in the fixture: the server closes the connection after the response.
    started = time.monotonic()
    answer = _exchange(live, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", timeout=10)
    assert answer.startswith(b"HTTP/1.1 200")
    assert time.monotonic() - started < 9  # closed by the server, not by our 10 s socket timeout


def test_no_redirect_names_another_host(live: tuple[str, int]) -> None:
    answer = _exchange(live, b"GET /explore/?a=1 HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
    head = answer.split(b"\r\n\r\n")[0].lower()
    assert head.startswith(b"http/1.1 308")
    assert b"\r\nlocation: /explore?a=1" in head
    answer = _exchange(live, b"GET //evil.example/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert b"location: //" not in answer.lower()


def test_a_stalled_body_gets_a_408() -> None:
    sent: list[dict[str, object]] = []

    async def never() -> dict[str, object]:
        await asyncio.sleep(3600)
        return {}

    async def app(scope: object, receive: object, send: object) -> None:
        raise AssertionError("the app must not run")

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    async def call() -> None:
        middleware = SecurityMiddleware(app, body_chunk_timeout_s=0.05, body_timeout_s=1)  # type: ignore[arg-type]
        scope = {
            "type": "http",
            "method": "POST",
            "path": "/api/estimate",
            "headers": [(b"content-length", b"10")],
        }
        await middleware(scope, never, send)  # type: ignore[arg-type]

    in_own_thread(lambda: asyncio.run(call()))
    assert sent[0]["status"] == 408
    detail = json.loads(sent[1]["body"])["detail"][0]  # type: ignore[arg-type]
    assert detail["type"] == "timeout" and "stalled" in detail["msg"]


def test_nodelay_on_every_connection() -> None:
    class Transport:
        def __init__(self, sock: socket.socket) -> None:
            self.sock = sock

        def get_extra_info(self, name: str) -> object:
            return self.sock if name == "socket" else None

    listener = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(listener.getsockname())
    conn, _ = listener.accept()
    try:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)
        protocol = NoDelayH11Protocol.__new__(NoDelayH11Protocol)
        with suppress(AttributeError):  # uvicorn's own set-up needs the full object; ours runs first
            protocol.connection_made(Transport(conn))  # type: ignore[arg-type]
        assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        for s in (conn, client, listener):
            s.close()
