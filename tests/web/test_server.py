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
from app.web.server import MAX_HEADER_BYTES, BoundedHttpToolsProtocol, server_options
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
    assert MAX_HEADER_BYTES == 65_536
    assert config.limit_concurrency == 256 and config.timeout_keep_alive == 5
    assert config.http is BoundedHttpToolsProtocol


def test_a_header_over_the_cap_is_refused(live: tuple[str, int]) -> None:
    # 80 KB of a header that has not ended > 64 KiB received with the head open: the protocol answers
    # 400 and closes — a 256 MiB header is cut at 64 KiB plus one read. (A complete request that arrives
    # in one read is parsed whole and counted by the app: its 431.)
    answer = _exchange(live, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 80_000)
    assert answer.startswith(b"HTTP/1.1 400")
    ok = _exchange(
        live, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Ok: " + b"a" * 30_000 + b"\r\nConnection: close\r\n\r\n"
    )
    assert ok.startswith(b"HTTP/1.1 200")


def test_the_head_cap_counts_a_header_sent_in_pieces_and_resets_per_request(live: tuple[str, int]) -> None:
    # 70 pieces of 1,000 bytes of one header that never ends: 70,000 > 65,536 bytes of open head -> 400
    with socket.create_connection(live, timeout=10) as conn:
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        with suppress(OSError):  # the server may close while pieces are still going out
            for _ in range(70):
                conn.sendall(b"a" * 1_000)
                time.sleep(0.002)  # separate reads, not one
        answer = b""
        with suppress(OSError):
            while chunk := conn.recv(65536):
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 400")
    # keep-alive: two requests with 40,000-byte headers on one connection, 80 KB in all, both answered
    # (the count starts again with each request); then a POST whose 200 KB body arrives with its head
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * 40_000 + b"\r\n\r\n"
    answer = _exchange(live, head + head[:-2] + b"Connection: close\r\n\r\n")
    assert answer.count(b"HTTP/1.1 200") == 2
    body = b"y\n" * 100_000
    post = (
        b"POST /api/diagnose HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nConnection: close\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
    )
    assert _exchange(live, post + body).startswith(b"HTTP/1.1 200")


def test_an_idle_keep_alive_connection_is_closed(live: tuple[str, int]) -> None:
    # timeout_keep_alive=1 in the fixture: the server closes the connection after the response.
    # no clock: had the server left it open, recv would raise TimeoutError after 10 s; _exchange
    # returning at all means recv read b"" (the server closed the connection)
    answer = _exchange(live, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", timeout=10)
    assert answer.startswith(b"HTTP/1.1 200")
    assert answer.count(b"HTTP/1.1 ") == 1  # one response, then the close


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
        protocol = BoundedHttpToolsProtocol.__new__(BoundedHttpToolsProtocol)
        with suppress(AttributeError):  # uvicorn's own set-up needs the full object; ours runs first
            protocol.connection_made(Transport(conn))  # type: ignore[arg-type]
        assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        for s in (conn, client, listener):
            s.close()


def _body_call(chunks: list[bytes], pause_s: float, **limits: float) -> tuple[list[dict[str, object]], int]:
    """A POST whose body arrives as ``chunks``, one every ``pause_s``, through SecurityMiddleware with
    ``limits``; returns what it sent and how many chunks it read."""
    sent: list[dict[str, object]] = []
    read = 0

    async def receive() -> dict[str, object]:
        nonlocal read
        await asyncio.sleep(pause_s)
        read += 1
        return {"type": "http.request", "body": chunks[read - 1], "more_body": read < len(chunks)}

    async def app(scope: object, receive: object, send: object) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b"ok"})  # type: ignore[operator]

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    async def call() -> None:
        middleware = SecurityMiddleware(app, **limits)  # type: ignore[arg-type]
        length = str(sum(map(len, chunks))).encode()
        scope = {"type": "http", "method": "POST", "path": "/api/x", "headers": [(b"content-length", length)]}
        await middleware(scope, receive, send)  # type: ignore[arg-type]

    in_own_thread(lambda: asyncio.run(call()))
    return sent, read


def test_a_trickled_body_gets_a_408_at_the_grace_and_a_steady_one_is_read() -> None:
    # Before: a chunk every 15 s kept a body alive up to 60 s, so 4 bytes/s held a connection a minute
    # (bench/hostile_slow.py S1). Limits scaled down: 0.2 s of grace, then 1,000 B/s on average.
    limits = {
        "body_chunk_timeout_s": 5.0,
        "body_timeout_s": 30.0,
        "body_grace_s": 0.2,
        "body_min_bytes_per_s": 1000,
    }
    # 2,000 one-byte chunks 10 ms apart (100 B/s): the deadline is 0.2 s + received/1,000 s, so the
    # body is cut after ~20 chunks, far from its end (no pause ever reached the 5 s chunk timeout)
    sent, read = _body_call([b"y"] * 2000, 0.01, **limits)
    assert sent[0]["status"] == 408 and read < 1000
    detail = json.loads(sent[1]["body"])["detail"][0]  # type: ignore[arg-type]
    assert "at least 0.976562 KiB/s after the first 0.2 s" in detail["msg"]
    # 40 chunks of 1,000 bytes 10 ms apart (100 KB/s, 100x the rate): each earns 1 s, read whole
    sent, read = _body_call([b"y" * 1000] * 40, 0.01, **limits)
    assert (sent[0]["status"], read) == (200, 40)


@pytest.fixture
def strict_live() -> Iterator[tuple[str, int]]:
    """A live server whose head limits are scaled down: 1 s to send a head, slow after 0.1 s, a share of
    3 slow heads per address (one server per test: an address it cut stays watched for 1 s)."""

    class Strict(BoundedHttpToolsProtocol):
        header_timeout_s = 1.0
        slow_head_s = 0.1
        max_slow_heads_per_peer = 3

    sock = socket.create_server(("127.0.0.1", 0))
    options = {**server_options(), "http": Strict, "access_log": False, "log_level": "warning"}
    server = uvicorn.Server(uvicorn.Config(create_app(), **options))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    yield "127.0.0.1", sock.getsockname()[1]
    server.should_exit = True
    thread.join(10)


def _read_all(conn: socket.socket) -> bytes:
    answer = b""
    with suppress(ConnectionResetError):
        while chunk := conn.recv(65536):
            answer += chunk
    return answer


def test_a_trickled_head_gets_a_408_and_a_silent_connection_is_closed(strict_live: tuple[str, int]) -> None:
    # Before: uvicorn times out only an idle kept-alive connection, so both were held for ever
    # (bench/hostile_slow.py S2, S3). No clock in the assertion: had the server held either, recv
    # would raise TimeoutError after 10 s.
    with socket.create_connection(strict_live, timeout=10) as conn:
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        with suppress(OSError):
            for _ in range(400):  # a byte every 20 ms until the server answers (it does at 1 s)
                conn.sendall(b"a")
                time.sleep(0.02)
        assert _read_all(conn).startswith(b"HTTP/1.1 408 Request Timeout")
    with socket.create_connection(strict_live, timeout=10) as conn:
        assert _read_all(conn) == b""  # closed with no answer: it asked nothing
    with socket.create_connection(strict_live, timeout=10) as conn:  # an ordinary request is unaffected
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert _read_all(conn).startswith(b"HTTP/1.1 200")


def test_one_address_holds_at_most_its_share_of_slow_heads(strict_live: tuple[str, int]) -> None:
    # Before: 600 slow connections from one address filled both workers' 256 connections: every other
    # client got 503 (bench/hostile_slow.py S4). Three silent connections become slow after 0.1 s: a
    # fourth from the same address is closed at once, though its request is complete.
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    burst = [socket.create_connection(strict_live, timeout=10) for _ in range(5)]
    for conn in burst:  # five connections at once, then their requests: never slow, served whole
        conn.sendall(request)
    assert [_read_all(conn)[:15] for conn in burst] == [b"HTTP/1.1 200 OK"] * 5
    for conn in burst:
        conn.close()
    held = [socket.create_connection(strict_live, timeout=10) for _ in range(3)]
    try:
        time.sleep(0.4)  # the slow-head timers (0.1 s) have fired, the 1 s head timeout has not
        with socket.create_connection(strict_live, timeout=10) as fourth:
            with suppress(OSError):
                fourth.sendall(request)
            assert not _read_all(fourth).startswith(b"HTTP/1.1 200")
        for conn in held:
            assert _read_all(conn) == b""  # cut at their head timeout: the address is now watched
    finally:
        for conn in held:
            conn.close()
    # watched (1 s): at most 3 heads open at once, slow or not; a fourth is closed at once
    watched = [socket.create_connection(strict_live, timeout=10) for _ in range(3)]
    try:
        time.sleep(0.05)  # accepted, not yet slow
        with socket.create_connection(strict_live, timeout=10) as fourth:
            with suppress(OSError):
                fourth.sendall(request)
            assert not _read_all(fourth).startswith(b"HTTP/1.1 200")
    finally:
        for conn in watched:
            conn.close()
    with socket.create_connection(strict_live, timeout=10) as conn:  # an ordinary request still passes
        conn.sendall(request)
        assert _read_all(conn).startswith(b"HTTP/1.1 200")
