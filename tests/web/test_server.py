"""The event loop `kvplan serve` runs: an idle worker accepts one connection per pass, a busy one all."""

from __future__ import annotations

import asyncio
import socket
import time

from app.web.server import BalancedAcceptLoop
from tests.conftest import in_own_thread


def _accepted_after_ticks(loop: asyncio.AbstractEventLoop, ticks: int, clients: int = 6) -> int:
    """Connections accepted after ``ticks`` runs of the loop, all ``clients`` pending from the start
    (in a thread of its own: the e2e tests leave Playwright's loop running in the main thread)."""
    return in_own_thread(lambda: _run_accepting(loop, ticks, clients))


def _run_accepting(loop: asyncio.AbstractEventLoop, ticks: int, clients: int) -> int:
    accepted: list[asyncio.BaseTransport] = []

    class Count(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            accepted.append(transport)

    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    server = loop.run_until_complete(loop.create_server(Count, sock=listener))
    conns = [socket.create_connection(listener.getsockname()) for _ in range(clients)]  # all pending now
    try:
        for _ in range(ticks):
            loop.run_until_complete(asyncio.sleep(0))  # one pass of the loop each
        return len(accepted)
    finally:
        for _ in range(40):  # let the connections still pending reach connection_made
            loop.run_until_complete(asyncio.sleep(0))
        server.close()
        for c in conns:
            c.close()
        for transport in accepted:
            transport.close()
        loop.run_until_complete(server.wait_closed())
        loop.close()


def test_one_connection_per_wake_up_not_all_pending() -> None:
    # stock asyncio takes all six on its first wake-up; an idle worker here takes one per pass, so a
    # second worker sharing the socket gets its turn (and every connection is still taken, in turns)
    # (one run_until_complete(sleep(0)) is a few passes of the loop)
    assert _accepted_after_ticks(asyncio.SelectorEventLoop(), ticks=1) == 6
    assert _accepted_after_ticks(BalancedAcceptLoop(), ticks=1) == 1
    assert _accepted_after_ticks(BalancedAcceptLoop(), ticks=20) == 6


def test_a_busy_worker_admits_as_fast_as_it_serves() -> None:
    # one connection, plus one per 5 ms of CPU the loop's previous pass took, capped by asyncio's 100
    loop = BalancedAcceptLoop()
    timer = loop._pass_timer
    try:
        for pass_cpu_s, take in ((0.0, 1), (0.004, 1), (0.011, 3), (0.03, 7), (5.0, 100)):
            timer.last_pass_cpu_s = pass_cpu_s
            assert loop.connections_to_take() == take, pass_cpu_s
    finally:
        loop.close()


def test_the_pass_timer_counts_work_not_waiting() -> None:
    loop = BalancedAcceptLoop()
    timer = loop._pass_timer
    try:
        timer.select(0.05)  # 50 ms asleep in the selector: no CPU
        until = time.process_time() + 0.011
        while time.process_time() < until:  # 11 ms of work in this pass
            pass
        timer.select(0)
        assert 0.011 <= timer.last_pass_cpu_s < 0.05
        timer.select(0.05)  # the pass between the two waits did no work
        assert timer.last_pass_cpu_s < 0.005
    finally:
        loop.close()
