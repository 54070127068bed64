"""Admission: how many requests one worker works on at once, in what order, and how many one client holds.

The event loop of a worker does every request's framework work (routing, validation, the response
and its gzip) and waits for its computing thread. A burst of 50 requests admitted at once put 50
requests' framework work in the loop's queue and eight computing threads in the GIL's, and a
``/healthz`` probe waited behind all of it (issue 27, N4: 118-318 ms). So:

- **At most ``COMPUTING_AT_ONCE`` (8) requests work at a time per worker**; the others wait for a
  slot holding nothing but a future, so the loop has at most eight requests' framework work ahead of
  anything new, and they are admitted in the order below rather than all at once.
- **Fair between clients, by time**: waiting requests are queued per client (the ASGI ``client``
  address, which uvicorn sets from ``X-Forwarded-For`` behind a trusted proxy) and a freed slot goes
  to the waiting client whose requests have held the gate least (``FairGate``), so one client's burst
  of 50 delays another client's request by about one request, not by 50, and a client sending
  1-second requests does not get 200 times the worker of one sending 5 ms requests.
- **A request waiting for the network holds no slot**: ``app.hub.network_wait`` is set to
  ``stepped_aside`` for each admitted request, so a hub fetch of up to 10 s is awaited outside the gate.
- **Cheap refusal past a client's share**: a client with ``MAX_IN_FLIGHT_PER_CLIENT`` requests in
  flight on a worker gets an immediate 429 (with ``Retry-After``) before its request is read, so one
  client cannot hold all ``server.MAX_CONNECTIONS_PER_WORKER`` (256) slots of a worker.
- ``/healthz`` and static files are not gated: they compute nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from starlette.types import Scope

from app import hub

# Requests working at once per worker: app.REQUEST_THREADS, 8. Two made a lone burst's /healthz probe
# faster, but with the mixed load's 16 attackers the ordinary requests fell to 0.3-7.7 req/s (8 slots:
# 22.8). Not a deadlock (round 5, slot holds logged per request): with two slots both clients always
# have requests waiting, so the time-fair gate gives the attackers' address half of the slot-seconds
# (36.9 of 72.2 s), and its requests are the longest (a 5 MB diagnose holds a slot 1.7-4.5 s): the
# 64 ordinary connections share one slot per worker, or none while both hold attackers' requests.
# With 8 the attackers' 16 threads cannot fill their half (57 of 257 slot-seconds), so 6 slots stay
# for short requests (docs/security.md, round 5).
COMPUTING_AT_ONCE = 8
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
    """``slots`` holders at once; a freed slot goes to the waiting client that has used the gate least.

    A client's use is the seconds its requests held a slot, counted while it has requests waiting or
    holding one; a client that comes (back) starts level with the least-served active client, so it
    gets no credit for its absence. Turns by *time*, not by request: a client whose requests cost 1 s
    each gets as much of the worker as one whose requests cost 5 ms, not 200 times as much.

    Example: slots 1; A's request holds it for 2 s, meanwhile A queues a1 and B queues b1 (B starts
    level with A, at 0 s). The release hands the slot to b1 (B has used 0 s, A 2 s); if b1 holds it
    3 s, a1 goes next (A 2 s < B 3 s).
    """

    def __init__(self, slots: int) -> None:
        self.free = slots
        self._queues: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()
        self._used: dict[str, float] = {}  # seconds held, per active client
        self._active: dict[str, int] = {}  # requests waiting or holding, per client

    def waiting(self) -> int:
        return sum(len(queue) for queue in self._queues.values())

    async def acquire(self, client: str) -> None:
        self._enter(client)
        if self.free > 0 and not self._queues:
            self.free -= 1
            return
        ticket: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queues.setdefault(client, deque()).append(ticket)
        try:
            await ticket
        except asyncio.CancelledError:
            if ticket.done() and not ticket.cancelled():
                self.release(client, 0.0)  # handed the slot, then cancelled before it ran: pass it on
            else:
                self._forget(client, ticket)
                self._leave(client)
            raise

    def release(self, client: str, seconds: float) -> None:
        """``client``'s request gives up its slot after holding it ``seconds``."""
        self._used[client] += seconds
        self._leave(client)
        while self._queues:
            turn = min(self._queues, key=self._used.__getitem__)  # ties: the longest-waiting client
            queue = self._queues[turn]
            ticket = queue.popleft()
            if not queue:
                del self._queues[turn]
            if not ticket.done():  # (a cancelled one: its request is gone)
                ticket.set_result(None)
                return
        self.free += 1

    def _enter(self, client: str) -> None:
        if client not in self._active:
            self._used[client] = min(self._used.values(), default=0.0)
            self._active[client] = 0
        self._active[client] += 1

    def _leave(self, client: str) -> None:
        self._active[client] -= 1
        if not self._active[client]:
            del self._active[client], self._used[client]

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
    since: float = 0.0

    async def take(self) -> None:
        await self.admission.gate.acquire(self.client)
        self.held, self.since = True, time.monotonic()

    def give_up(self) -> None:
        """Done computing (the response starts), or waiting for the network: the next client's turn.
        Idempotent."""
        if self.held:
            self.held = False
            self.admission.gate.release(self.client, time.monotonic() - self.since)


_current: ContextVar[Slot | None] = ContextVar("admission_slot", default=None)


@asynccontextmanager
async def admitted(admission: Admission, client: str) -> AsyncIterator[Slot]:
    """Hold one of the worker's slots for the request's work (its context sees it: ``stepped_aside``),
    until the block ends or ``Slot.give_up``."""
    slot = Slot(admission, client)
    await slot.take()
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
    slot.give_up()
    try:
        yield
    finally:
        await slot.take()
