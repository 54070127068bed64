"""app.web.admission through SecurityMiddleware: COMPUTING_AT_ONCE requests work at a time per worker, the clients
take turns, a client past its share gets a 429 before anything reads its request, a request waiting
for the hub holds no slot, /healthz is never gated (docs/security.md, "Admission")."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from app import hub
from app.web import admission
from app.web.admission import FairGate
from app.web.security import LARGE_REQUEST_BYTES, SecurityMiddleware
from tests.conftest import in_own_thread


class Inner:
    """The app behind the middleware: each request waits for ``release`` (per path) and records who is in."""

    def __init__(self) -> None:
        self.inside: list[str] = []
        self.admitted: list[str] = []
        self.most = 0
        self.release: dict[str, asyncio.Event] = {}

    def gate_for(self, name: str) -> asyncio.Event:
        return self.release.setdefault(name, asyncio.Event())

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        name = scope["path"].strip("/") + "?" + scope["query_string"].decode()[:20]
        if scope["path"] == "/healthz":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})
            return
        self.inside.append(name)
        self.admitted.append(name)
        self.most = max(self.most, len(self.inside))
        if scope["path"].startswith("/hubwait"):
            async with hub.network_wait.get()():  # as app.hub.prefetch waits for a fetch
                await self.gate_for(name).wait()
        else:
            await self.gate_for(name).wait()
        self.inside.remove(name)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def _scope(path: str, client: str, query: bytes = b"") -> dict[str, Any]:
    return {"type": "http", "method": "GET", "path": path, "query_string": query, "headers": [],
            "client": (client, 50_000)}  # fmt: skip


async def _call(
    middleware: SecurityMiddleware, scope: dict[str, Any], unread: asyncio.Event | None = None
) -> list[dict[str, Any]]:
    """The answer's messages; ``unread``: the client reads no body until it is set (a slow reader)."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        await asyncio.sleep(3600)
        return {}

    async def send(message: dict[str, Any]) -> None:
        if unread is not None and message["type"] == "http.response.body":
            await unread.wait()
        sent.append(message)

    await middleware(scope, receive, send)  # type: ignore[arg-type]
    return sent


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def _finish_all(inner: Inner, rounds: int = 60) -> None:
    """Let every admitted request finish, round after round, until the queue is empty."""
    for _ in range(rounds):
        for name in list(inner.inside):
            inner.gate_for(name).set()
        await _settle()


def _run(body: Callable[[], Awaitable[None]]) -> None:
    in_own_thread(lambda: asyncio.run(body()))  # type: ignore[arg-type]


async def _queued(gate: FairGate, client: str, name: str, order: list[str]) -> None:
    await gate.acquire(client)
    order.append(name)


def test_a_freed_slot_goes_to_the_client_that_used_the_gate_least() -> None:
    # the FairGate docstring's example: slots 1; A's request holds it 2 s while A queues a1, a2 and B
    # queues b1; B starts level with A (0 s)
    order: list[str] = []

    async def body() -> None:
        gate = FairGate(1)
        await gate.acquire("A")

        tasks = []
        for client, name in (("A", "a1"), ("A", "a2"), ("B", "b1")):
            tasks.append(asyncio.create_task(_queued(gate, client, name, order)))
            await _settle()
        assert gate.waiting() == 3 and order == []
        gate.release("A", 2.0)  # A 2 s, B 0 s: B's turn
        await _settle()
        gate.release("B", 3.0)  # A 2 s, B 3 s: A's
        await _settle()
        gate.release("A", 0.5)  # A 2.5 s, and only A waits
        await _settle()
        gate.release("A", 0.5)
        assert gate.free == 1 and gate.waiting() == 0
        await asyncio.wait_for(asyncio.gather(*tasks), 5)

    _run(body)
    assert order == ["b1", "a1", "a2"]


def test_a_client_that_comes_back_gets_no_credit_for_its_absence() -> None:
    order: list[str] = []

    async def body() -> None:
        gate = FairGate(1)
        await gate.acquire("C")

        tasks = [asyncio.create_task(_queued(gate, "C", "c0", order))]
        await _settle()
        gate.release("C", 10.0)  # C has used 10 s; c0 holds the slot
        await _settle()
        tasks.append(asyncio.create_task(_queued(gate, "C", "c1", order)))
        await _settle()
        tasks.append(
            asyncio.create_task(_queued(gate, "A", "a1", order))
        )  # A arrives level with C (10 s), not at 0
        await _settle()
        gate.release("C", 0.0)  # a tie: the client waiting longest (C) goes first
        await _settle()
        gate.release("C", 0.0)
        await _settle()
        gate.release("A", 0.0)
        await asyncio.wait_for(asyncio.gather(*tasks), 5)

    _run(body)
    assert order == ["c0", "c1", "a1"]  # with A at 0 s it would have been c0, a1, c1


def test_a_cancelled_waiter_is_forgotten_and_its_slot_passed_on() -> None:
    async def body() -> None:
        gate = FairGate(1)
        await gate.acquire("A")
        gone = asyncio.create_task(gate.acquire("A"))
        kept = asyncio.create_task(gate.acquire("B"))
        await _settle()
        gone.cancel()
        await _settle()
        assert gate.waiting() == 1
        gate.release("A", 0.1)
        await _settle()
        assert kept.done() and gate.free == 0
        gate.release("B", 0.1)
        assert gate.free == 1

    _run(body)


def test_at_most_computing_at_once_requests_work_and_healthz_is_never_gated() -> None:
    inner = Inner()

    async def body() -> None:
        middleware = SecurityMiddleware(inner)  # type: ignore[arg-type]
        tasks = [asyncio.create_task(_call(middleware, _scope("/api/estimate", "10.0.0.1", b"n=%d" % i)))
                 for i in range(20)]  # fmt: skip
        await _settle()
        assert len(inner.inside) == admission.COMPUTING_AT_ONCE == 8
        # the gate is full and twelve wait: /healthz is answered anyway
        sent = await asyncio.wait_for(_call(middleware, _scope("/healthz", "10.0.0.1")), 5)
        assert sent[0]["status"] == 200
        await _finish_all(inner)
        await asyncio.wait_for(asyncio.gather(*tasks), 5)

    _run(body)
    assert inner.most == 8
    assert len([name for name in inner.admitted if name.startswith("api")]) == 20


def test_one_clients_burst_does_not_hold_back_another_clients_request() -> None:
    inner = Inner()

    async def body() -> None:
        middleware = SecurityMiddleware(inner)  # type: ignore[arg-type]
        burst = [
            asyncio.create_task(_call(middleware, _scope("/a", "10.0.0.1", b"%d" % i))) for i in range(50)
        ]
        await _settle()
        other = asyncio.create_task(_call(middleware, _scope("/b", "10.0.0.2")))
        await _settle()
        # the eight slots hold the burst's first eight, 42 of its requests wait, then B's: the first
        # release is B's turn (A has used the gate for some time, B for none) — one request, not 42
        inner.gate_for(inner.inside[0]).set()
        await _settle()
        assert "b?" in inner.inside
        await _finish_all(inner)
        await asyncio.wait_for(asyncio.gather(*burst, other), 5)

    _run(body)
    assert inner.admitted.index("b?") == 8  # ninth in, not 51st


def test_past_its_share_a_client_gets_a_429_before_its_request_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(admission, "MAX_IN_FLIGHT_PER_CLIENT", 3)
    inner = Inner()
    answers: dict[str, list[dict[str, Any]]] = {}

    async def body() -> None:
        middleware = SecurityMiddleware(inner)  # type: ignore[arg-type]
        held = [
            asyncio.create_task(_call(middleware, _scope("/api/x", "10.0.0.1", b"%d" % i))) for i in range(3)
        ]
        await _settle()
        answers["over"] = await asyncio.wait_for(_call(middleware, _scope("/api/x", "10.0.0.1", b"4")), 5)
        other = asyncio.create_task(_call(middleware, _scope("/api/y", "10.0.0.2")))
        await _settle()
        await _finish_all(inner)
        answers["other"] = await asyncio.wait_for(other, 5)
        await asyncio.wait_for(asyncio.gather(*held), 5)

    _run(body)
    start = answers["over"][0]
    assert start["status"] == 429 and (b"retry-after", b"1") in start["headers"]
    detail = json.loads(answers["over"][1]["body"])["detail"][0]
    assert detail["type"] == "too_many_requests" and "3 requests in progress" in detail["msg"]
    assert "x?4" not in inner.admitted  # refused before the app saw it
    assert answers["other"][0]["status"] == 200  # another client is not refused


def test_a_request_waiting_for_the_hub_holds_no_slot() -> None:
    inner = Inner()

    async def body() -> None:
        middleware = SecurityMiddleware(inner)  # type: ignore[arg-type]
        waiting = [
            asyncio.create_task(_call(middleware, _scope("/hubwait", "10.0.0.1", b"%d" % i)))
            for i in range(admission.COMPUTING_AT_ONCE + 2)
        ]
        await _settle()
        assert len(inner.inside) == 10  # each stepped aside while it waits: all ten got in, 8 slots
        plain = asyncio.create_task(_call(middleware, _scope("/plain", "10.0.0.1")))
        await _settle()
        assert "plain?" in inner.inside  # a slot was free for it
        await _finish_all(inner)
        await asyncio.wait_for(asyncio.gather(*waiting, plain), 5)

    _run(body)


def test_large_requests_take_one_slot_at_a_time() -> None:
    inner = Inner()
    big = b"x=" + b"a" * LARGE_REQUEST_BYTES  # query over 32 KiB: a large request

    async def body() -> None:
        middleware = SecurityMiddleware(inner)  # type: ignore[arg-type]
        large = [
            asyncio.create_task(_call(middleware, _scope(f"/large{i}", "10.0.0.1", big))) for i in range(2)
        ]
        small = asyncio.create_task(_call(middleware, _scope("/small", "10.0.0.1")))
        await _settle()
        assert sorted(name.split("?")[0] for name in inner.inside) == ["large0", "small"]  # large1 waits
        await _finish_all(inner)
        await asyncio.wait_for(asyncio.gather(*large, small), 5)

    _run(body)
    assert inner.most == 2 and sorted(inner.admitted)[:2] == [
        "large0?x=aaaaaaaaaaaaaaaaaa",
        "large1?x=aaaaaaaaaaaaaaaaaa",
    ]


def test_a_client_that_does_not_read_its_answer_holds_no_slot() -> None:
    inner = Inner()

    async def body() -> None:
        middleware = SecurityMiddleware(inner)  # type: ignore[arg-type]
        never_read = asyncio.Event()
        big = b"x=" + b"a" * LARGE_REQUEST_BYTES  # large too: the large slot is given up as well
        slow = [
            asyncio.create_task(_call(middleware, _scope("/slow", "10.0.0.1", big + b"%d" % i), never_read))
            for i in range(3)
        ]
        await _finish_all(inner)  # each computed its answer; the body waits for a reader that never reads
        assert sum(1 for task in slow if not task.done()) == 3
        other = asyncio.create_task(_call(middleware, _scope("/other", "10.0.0.1", big)))
        await _finish_all(inner)
        assert (await asyncio.wait_for(other, 5))[0]["status"] == 200  # both slots were free for it
        never_read.set()
        await asyncio.wait_for(asyncio.gather(*slow), 5)

    _run(body)
