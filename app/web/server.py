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
- a request body that stalls gets a 408 (``app.web.security``: the body is read by the app, with a
  deadline per chunk).

What uvicorn cannot do is time out a client that sends its *headers* slowly: deployed for a whole
intranet, put the documented nginx in front (``client_header_timeout``; tests/e2e/test_nginx.py).
"""

from __future__ import annotations

import asyncio
import os
import socket
from contextlib import suppress
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

    _head_bytes = 0
    _in_head = True  # between requests and until the current one's headers have ended

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        _no_delay(transport)
        super().connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            self._head_bytes += len(data)
        super().data_received(data)
        if self._in_head and self._head_bytes > MAX_HEADER_BYTES and not self.transport.is_closing():
            self.send_400_response(f"The request line and headers exceed {MAX_HEADER_BYTES} bytes.")

    def on_headers_complete(self) -> None:
        self._in_head, self._head_bytes = False, 0
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._in_head, self._head_bytes = True, 0
        super().on_message_complete()


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
