"""The event loop `kvplan serve` runs: one accept per wake-up, so workers share a burst of connections."""

from __future__ import annotations

import asyncio
import socket

from app.web.server import OneAcceptPerTickLoop


def _accepted_after_ticks(loop: asyncio.AbstractEventLoop, ticks: int, clients: int = 6) -> int:
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
        for _ in range(20):  # let the connections still pending reach connection_made
            loop.run_until_complete(asyncio.sleep(0))
        server.close()
        for c in conns:
            c.close()
        for transport in accepted:
            transport.close()
        loop.run_until_complete(server.wait_closed())
        loop.close()


def test_one_connection_per_wake_up_not_all_pending() -> None:
    # stock asyncio takes all six on its first wake-up; ours takes one per pass, so a second worker
    # sharing the socket gets its turn (and every connection is still taken, just in turns)
    # (one run_until_complete(sleep(0)) is a few passes of the loop)
    assert _accepted_after_ticks(asyncio.SelectorEventLoop(), ticks=1) == 6
    assert _accepted_after_ticks(OneAcceptPerTickLoop(), ticks=1) == 1
    assert _accepted_after_ticks(OneAcceptPerTickLoop(), ticks=20) == 6
