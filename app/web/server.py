"""Run the web app with uvicorn (``kv-planner serve`` calls this), with its limits set through uvicorn's
supported options only (docs/security.md):

- the HTTP/1.1 parser is httptools (llhttp, C), with a cap of our own on a request's head: once more
  than ``MAX_HEADER_BYTES`` have arrived without the headers ending, the connection gets a 400 and is
  closed, so a 256 MiB header costs nothing (``BoundedHttpToolsProtocol``); a head that arrives whole in
  one read is counted by the app (431, ``app.web.security``). It replaced h11 (pure Python) because a
  burst of connections costs the event loop its parsing: ~1 ms less CPU per request (docs/security.md);
- idle keep-alive connections close after ``KEEP_ALIVE_TIMEOUT_S``;
- at most ``MAX_CONNECTIONS_PER_WORKER`` connections plus tasks per worker (more get a 503), which bounds
  memory whatever clients do;
- a request body that stalls or trickles gets a 408 (``app.web.security``: the body is read by the app,
  with a deadline that grows with the bytes received, at most 30 s);
- a request *head* must be complete within ``HEADER_TIMEOUT_S`` of the connection (or of its first byte,
  for the next request on a kept-alive one), else a 408 and the connection closed: uvicorn itself times
  out only an idle kept-alive connection, so a connection that sent nothing, or a header trickled a byte
  every few seconds, was held for ever (round 11, bench/hostile_slow.py S2 and S3);
- a client address holding ``MAX_SLOW_HEADS_PER_PEER`` heads open for over ``SLOW_HEAD_S`` gets its
  further slow heads closed, and once one of its heads was cut (too slow, or past its share) it may for
  ``HEADER_TIMEOUT_S`` open at most that many heads at once; a further connection from it is closed at
  once. Otherwise 600 slow connections from one address filled both workers'
  ``MAX_CONNECTIONS_PER_WORKER`` and everyone else got 503 (S4). A browser's head, and nginx's, arrive
  whole in one read, so no ordinary client is counted, and a burst of 200 connections from one address
  that sends its requests at once is served whole.

Deployed for a whole intranet, the documented nginx in front still helps (``client_header_timeout``,
connections per address; tests/e2e/test_nginx.py).
"""

from __future__ import annotations

import asyncio
import os
import socket
import weakref
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

import uvicorn
from fastapi import FastAPI
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.web.app import create_app
from app.web.security import MAX_HEADER_BYTES

__all__ = ["MAX_HEADER_BYTES", "app_from_env", "run", "server_options"]

ROOT_PATH_ENV = "KVPLAN_ROOT_PATH"  # carries the prefix to worker processes
KEEP_ALIVE_TIMEOUT_S = 5  # uvicorn's default, stated: an idle connection is closed after this
# Connections + in-flight requests one worker holds before answering 503: ~4x the 64-connection load
# goal per worker, and a bounded amount of memory (each holds at most a 6 MiB body).
MAX_CONNECTIONS_PER_WORKER = 256
# uvicorn's supervisor kills a worker that does not answer its health ping (or finish starting) within
# this long; its default, 5 s, killed both workers in a loop on a loaded 2-core machine (start-up took
# 8 s of wall time at a load average of 10) and would kill a busy worker with everyone's requests on it.
# A worker's ping is answered by its own thread, so only a hung process misses a minute of them.
WORKER_HEALTHCHECK_TIMEOUT_S = 60
# A request's line and headers arrive within this of the connection (or of the head's first byte): a browser
# sends them in one packet; nginx's client_header_timeout is 60 s and Apache's mod_reqtimeout 20-40 s, but
# those sit in front of many sites' slow links, this one in front of a planner on an intranet
HEADER_TIMEOUT_S = 10.0
# A head still open after this long is slow (an ordinary one is complete within milliseconds of its first
# byte); one client address may hold this many slow heads per worker, and after one of its heads was cut,
# this many heads open at once (a burst of new connections from an address never cut is not limited)
SLOW_HEAD_S = 1.0
MAX_SLOW_HEADS_PER_PEER = 32
_TIMEOUT_ANSWER = "The request line and headers did not arrive within {seconds:g} s."


def _no_delay(transport: asyncio.BaseTransport) -> None:
    """TCP_NODELAY on a connection's socket.

    With ``--workers`` > 1 uvicorn binds the listening socket itself as ``socket.socket(family)``
    (protocol number 0), and asyncio only sets TCP_NODELAY on sockets whose protocol is TCP — so
    every response met Nagle + delayed ACK: +40 ms per request on loopback (measured, bench/load).
    """
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol (through the ``http`` option) with TCP_NODELAY on every connection
    and at most ``MAX_HEADER_BYTES`` received for a request's head before its headers end.

    llhttp itself has no limit and httptools buffers a header line until it ends, so the bytes of the
    head are counted as they arrive: over the cap with the headers still open, a 400 and the connection
    closed (what uvicorn answers any unparsable request) — the buffer stops at the cap plus one read.
    ``connection_made`` and the parser callbacks are asyncio's and httptools' public ones; each calls
    uvicorn's own.
    """

    header_timeout_s = HEADER_TIMEOUT_S  # class attributes, so a test can serve a subclass with tiny ones
    slow_head_s = SLOW_HEAD_S
    max_slow_heads_per_peer = MAX_SLOW_HEADS_PER_PEER
    _head_bytes = 0
    _in_head = True  # between requests and until the current one's headers have ended
    _head_timer: asyncio.TimerHandle | None = None  # set while a head is open (counted in the peer's heads)
    _slow_timer: asyncio.TimerHandle | None = None
    _slow = False  # this open head is past SLOW_HEAD_S (counted in the peer's slow heads)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        _no_delay(transport)
        super().connection_made(transport)
        heads = _heads(self.server_state, self._peer())
        if heads.over_share(self.loop.time(), self.max_slow_heads_per_peer):
            transport.close()  # this address already has its share of heads open (module doc)
            return
        self._open_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._close_head()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            if self._head_timer is None and not self.transport.is_closing():
                self._open_head()  # the first byte of the next request on a kept-alive connection
            self._head_bytes += len(data)
        super().data_received(data)
        if self._in_head and self._head_bytes > MAX_HEADER_BYTES and not self.transport.is_closing():
            self.send_400_response(f"The request line and headers exceed {MAX_HEADER_BYTES} bytes.")

    def on_headers_complete(self) -> None:
        self._in_head, self._head_bytes = False, 0
        self._close_head()
        super().on_headers_complete()

    def _peer(self) -> str:
        return self.client[0] if self.client else ""

    def _open_head(self) -> None:
        self._head_timer = self.loop.call_later(self.header_timeout_s, self._head_timed_out)
        self._slow_timer = self.loop.call_later(self.slow_head_s, self._head_is_slow)
        _heads(self.server_state, self._peer()).open += 1

    def _close_head(self) -> None:
        if self._head_timer is None:
            return
        for timer in (self._head_timer, self._slow_timer):
            if timer is not None:
                timer.cancel()
        self._head_timer = self._slow_timer = None
        heads = _heads(self.server_state, self._peer())
        heads.open -= 1
        heads.slow -= self._slow
        self._slow = False
        if heads.open <= 0 and heads.cut_until <= self.loop.time():
            del _PEERS[self.server_state][self._peer()]

    def _head_is_slow(self) -> None:
        self._slow_timer = None
        heads = _heads(self.server_state, self._peer())
        self._slow = True
        heads.slow += 1
        responding = self.cycle is not None and not self.cycle.response_complete
        if heads.slow > self.max_slow_heads_per_peer and not responding:
            self._cut(heads)  # past its address's share of slow heads

    def _head_timed_out(self) -> None:
        """No complete head within ``header_timeout_s``: a 408 when some of it came, else just closed."""
        if self.transport.is_closing() or (self.cycle is not None and not self.cycle.response_complete):
            self._close_head()
            return  # a response still going out: the head of a pipelined request waits for it
        self._cut(_heads(self.server_state, self._peer()))

    def _cut(self, heads: _PeerHeads) -> None:
        """Close this connection for its head (a 408 when some of it came); its address is watched."""
        heads.cut_until = self.loop.time() + self.header_timeout_s
        self._close_head()
        if self._head_bytes == 0:
            self.transport.close()
            return
        message = _TIMEOUT_ANSWER.format(seconds=self.header_timeout_s).encode("ascii")
        self.transport.write(
            b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
            + b"content-length: %d\r\nconnection: close\r\n\r\n" % len(message)
            + message
        )
        self.transport.close()

    def on_message_complete(self) -> None:
        self._in_head, self._head_bytes = True, 0
        super().on_message_complete()


@dataclass
class _PeerHeads:
    """One client address's heads on one server: open, slow (past SLOW_HEAD_S), and until when it is
    watched because one of them was cut (loop time)."""

    open: int = 0
    slow: int = 0
    cut_until: float = 0.0

    def over_share(self, now: float, share: int) -> bool:
        """A new connection would exceed the address's share: its slow heads, or, while it is watched,
        its open heads."""
        return self.slow >= share or (now < self.cut_until and self.open >= share)


_PEERS: weakref.WeakKeyDictionary[object, dict[str, _PeerHeads]] = weakref.WeakKeyDictionary()


def _heads(server_state: object, peer: str) -> _PeerHeads:
    """The heads of ``peer`` on one server (a worker process runs one)."""
    peers = _PEERS.get(server_state)
    if peers is None:
        peers = _PEERS[server_state] = {}
    found = peers.get(peer)
    if found is None:
        found = peers[peer] = _PeerHeads()
    return found


def server_options() -> dict[str, Any]:
    """uvicorn's options for ``kv-planner serve`` (every limit above), shared with the tests."""
    return {
        "http": BoundedHttpToolsProtocol,
        "timeout_keep_alive": KEEP_ALIVE_TIMEOUT_S,
        "limit_concurrency": MAX_CONNECTIONS_PER_WORKER,
        "timeout_worker_healthcheck": WORKER_HEALTHCHECK_TIMEOUT_S,
        "loop": "asyncio",  # uvloop starved connections under overload here: p99 2.5 s at 64 connections vs 0.13 s
        "access_log": True,
    }


def app_from_env() -> FastAPI:
    """The factory uvicorn's worker processes call (they cannot receive arguments)."""
    return create_app(root_path=os.environ.get(ROOT_PATH_ENV, ""))


def run(*, host: str, port: int, root_path: str, workers: int) -> None:
    """Serve on ``host:port``; ``root_path`` when mounted under a prefix such as ``/tools/kvplan``."""
    if workers > 1:
        os.environ[ROOT_PATH_ENV] = root_path
        uvicorn.run(
            "app.web.server:app_from_env",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            **server_options(),
        )
    else:
        uvicorn.run(create_app(root_path=root_path), host=host, port=port, **server_options())
