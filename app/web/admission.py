"""Admission: how many requests one worker works on at once, in what order, and how many one client holds.

The event loop of a worker does every request's framework work (routing, validation, the response
and its gzip) and waits for its computing thread. A burst of 50 requests admitted at once put 50
requests' framework work in the loop's queue and eight computing threads in the GIL's, and a
``/healthz`` probe waited behind all of it (issue 27, N4: 118-318 ms). So:

- **Two requests work at a time per worker** (``COMPUTING_AT_ONCE``); the others wait for a slot
  holding nothing but a future. The loop then has at most two requests' work ahead of anything new,
  and the GIL at most two computing threads besides the loop. On a 2-worker server that is four
  requests computing on the machine at once, twice the cores of the machine this was measured on.
- **Fair between clients**: waiting requests are queued per client (the ASGI ``client`` address,
  which uvicorn sets from ``X-Forwarded-For`` behind a trusted proxy) and a freed slot goes to the
  clients in turn, so one client's burst of 50 delays another client's request by at most one
  request per other waiting client, not by 50.
- **A request waiting for the network holds no slot**: ``app.hub.network_wait`` is set to
  ``stepped_aside`` for each admitted request, so a hub fetch of up to 10 s is awaited outside the gate.
- **Cheap refusal past a client's share**: a client with ``MAX_IN_FLIGHT_PER_CLIENT`` requests in
  flight on a worker gets an immediate 429 (with ``Retry-After``) before its request is read, so one
  client cannot hold all ``server.MAX_CONNECTIONS_PER_WORKER`` (256) slots of a worker.
- ``/healthz`` and static files are not gated: they compute nothing.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from starlette.types import Scope

from app import hub

COMPUTING_AT_ONCE = 2
# Half of a worker's 256 connection slots (server.MAX_CONNECTIONS_PER_WORKER): whatever one client
# does, other clients keep the other half. The 64-connection load from one address stays far below it.
MAX_IN_FLIGHT_PER_CLIENT = 128
RETRY_AFTER_S = 1
_EXEMPT_PREFIXES = ("/static/",)
_EXEMPT_PATHS = frozenset({"/healthz"})


def client_key(scope: Scope) -> str:
    """Who sent the request: the client's address (no port), "" when the server does not know it."""
    client = scope.get("client")
    return str(client[0]) if client else ""


def is_exempt(scope: Scope) -> bool:
    """``/healthz`` and static files: answered without a slot and without counting against the client."""
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "") or ""
    if root and path.startswith(root):
        path = path[len(root) :]
    return path in _EXEMPT_PATHS or path.startswith(_EXEMPT_PREFIXES)


class FairGate:
    """``slots`` holders at once; waiters queued per client, a freed slot handed to the clients in turn.

    Example: slots 1, client A holds it and queues a1, a2, then B queues b1. A's release hands the slot
    to a1 (A's turn), a1's to b1 (A moved behind B), b1's to a2.
    """

    def __init__(self, slots: int) -> None:
        self.free = slots
        self._queues: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()

    def waiting(self) -> int:
        return sum(len(queue) for queue in self._queues.values())

    async def acquire(self, client: str) -> None:
        if self.free > 0 and not self._queues:
            self.free -= 1
            return
        ticket: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queues.setdefault(client, deque()).append(ticket)
        try:
            await ticket
        except asyncio.CancelledError:
            if ticket.done() and not ticket.cancelled():
                self.release()  # handed the slot, then cancelled before it ran: pass the slot on
            else:
                self._forget(client, ticket)
            raise

    def release(self) -> None:
        while self._queues:
            client, queue = next(iter(self._queues.items()))
            ticket = queue.popleft()
            del self._queues[client]
            if queue:
                self._queues[client] = queue  # behind every other waiting client
            if not ticket.done():
                ticket.set_result(None)
                return
        self.free += 1

    def _forget(self, client: str, ticket: asyncio.Future[None]) -> None:
        queue = self._queues.get(client)
        if queue is not None and ticket in queue:
            queue.remove(ticket)
            if not queue:
                del self._queues[client]


@dataclass
class Admission:
    """One worker's (one event loop's) gate and per-client counts."""

    gate: FairGate = field(default_factory=lambda: FairGate(COMPUTING_AT_ONCE))
    in_flight: dict[str, int] = field(default_factory=dict)

    def over_share(self, client: str) -> bool:
        return self.in_flight.get(client, 0) >= MAX_IN_FLIGHT_PER_CLIENT

    @asynccontextmanager
    async def counted(self, client: str) -> AsyncIterator[None]:
        self.in_flight[client] = self.in_flight.get(client, 0) + 1
        try:
            yield
        finally:
            left = self.in_flight[client] - 1
            if left:
                self.in_flight[client] = left
            else:
                del self.in_flight[client]


@dataclass
class Slot:
    """A request's place in its worker's gate (``admitted``)."""

    admission: Admission
    client: str
    held: bool = False

    def give_up(self) -> None:
        """Done computing (the response starts): the next waiting client's turn. Idempotent."""
        if self.held:
            self.held = False
            self.admission.gate.release()


_current: ContextVar[Slot | None] = ContextVar("admission_slot", default=None)


@asynccontextmanager
async def admitted(admission: Admission, client: str) -> AsyncIterator[Slot]:
    """Hold one of the worker's slots for the request's work (its context sees it: ``stepped_aside``),
    until the block ends or ``Slot.give_up``."""
    slot = Slot(admission, client)
    await admission.gate.acquire(client)
    slot.held = True
    token, hub_token = _current.set(slot), hub.network_wait.set(stepped_aside)
    try:
        yield slot
    finally:
        hub.network_wait.reset(hub_token)
        _current.reset(token)
        slot.give_up()


@asynccontextmanager
async def stepped_aside() -> AsyncIterator[None]:
    """While the request waits for something that is not computing (a hub fetch): give its slot to the
    next client, and queue for one again after (at the back of its client's queue)."""
    slot = _current.get()
    if slot is None or not slot.held:
        yield
        return
    slot.admission.gate.release()
    slot.held = False
    try:
        yield
    finally:
        await slot.admission.gate.acquire(slot.client)
        slot.held = True
