"""Run the web app with uvicorn (``kvplan serve`` calls this)."""

from __future__ import annotations

import asyncio
import os
import selectors
import socket
import time
from contextlib import suppress
from typing import Any

import uvicorn
from fastapi import FastAPI
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.web.app import create_app

ROOT_PATH_ENV = "KVPLAN_ROOT_PATH"  # carries the prefix to worker processes


class NoDelayHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol (the C parser; ~2x less per-request overhead than h11 here) with
    TCP_NODELAY on every connection.

    With ``--workers`` > 1 uvicorn binds the listening socket itself as ``socket.socket(family)``
    (protocol number 0), and asyncio only sets TCP_NODELAY on sockets whose protocol is TCP — so
    every response met Nagle + delayed ACK: +40 ms per request on loopback (measured, bench/load).
    """

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)


class _PassTimer:
    """Wraps the loop's selector to note the CPU the loop spent between two waits (one pass)."""

    def __init__(self, inner: selectors.BaseSelector) -> None:
        self._inner = inner
        self._cpu_at_wake = time.process_time()
        self.last_pass_cpu_s = 0.0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        self.last_pass_cpu_s = time.process_time() - self._cpu_at_wake  # the work since the last wake-up
        events = self._inner.select(timeout)
        self._cpu_at_wake = time.process_time()
        return events

    def __getattr__(self, name: str) -> Any:  # register, modify, unregister, get_key, get_map, close
        return getattr(self._inner, name)


class BalancedAcceptLoop(asyncio.SelectorEventLoop):
    """asyncio's loop, admitting pending connections at the pace the worker serves requests.

    With ``--workers`` the processes share one listening socket. Stock asyncio accepts everything
    pending when it wakes, so a burst of connections (a proxy's keep-alive pool, a load generator)
    lands on whichever worker woke first: wrk's 16 connections split 5/11, 6/10, 8/8 between two
    workers, and the worker holding 11 answers ~40 % slower than an even split.

    Here a wake-up accepts one connection plus one for every ``CPU_PER_EXTRA_S`` of CPU the previous
    pass of the loop took. An idle worker takes one, leaving the next to the other idle worker; a
    worker busy with many connections still admits new ones as fast as it serves them (one per pass
    was measured at p99 3.9 s for 64 connections on one worker: each waited whole passes).
    """

    CPU_PER_EXTRA_S = 0.005  # about one planner fragment

    def __init__(self) -> None:
        self._pass_timer = _PassTimer(selectors.DefaultSelector())
        super().__init__(selector=self._pass_timer)  # type: ignore[arg-type]

    def _accept_connection(  # type: ignore[override]
        self, protocol_factory: Any, sock: Any, sslcontext: Any = None, server: Any = None,
        backlog: int = 100, *rest: Any,
    ) -> None:  # fmt: skip
        take = self.connections_to_take(backlog)
        super()._accept_connection(protocol_factory, sock, sslcontext, server, take, *rest)  # type: ignore[misc]

    def connections_to_take(self, backlog: int = 100) -> int:
        """How many pending connections this wake-up accepts (at most ``backlog``, asyncio's own cap)."""
        return min(backlog, 1 + int(self._pass_timer.last_pass_cpu_s / self.CPU_PER_EXTRA_S))


LOOP = "app.web.server:BalancedAcceptLoop"  # uvicorn's loop option takes a factory by import path


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
            access_log=True,
            http=NoDelayHttpToolsProtocol,
            # workers share the socket; asyncio underneath (uvloop starved connections under overload
            # here: p99 2.5 s at 64 connections against 0.13 s)
            loop=LOOP,
        )
    else:
        uvicorn.run(
            create_app(root_path=root_path),
            host=host,
            port=port,
            access_log=True,
            http=NoDelayHttpToolsProtocol,
            loop="asyncio",  # alone on its socket: taking every waiting connection at once is right
        )
