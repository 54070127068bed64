"""The hub client's transport (app.hub): urllib with a deadline on the socket, and same-origin redirects.

A :class:`Deadline` is the end of one fetch: a timer shuts down every socket the fetch opened when the
time is up, so a server that drips a byte every few seconds — which never trips a per-read timeout —
is cut off too; the blocked read returns at once. Redirects to another scheme or host raise
:class:`OffOriginError` (the caller names the file; the token never leaves the endpoint).
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from contextlib import suppress
from typing import Any

MAX_REDIRECTS = 3  # a renamed repository redirects once; more is a loop


class Deadline:
    """The end of one fetch: every socket it opens is shut down when the time is up, whatever it waits on."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.expired = False
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            shut(sock)

    def cancel(self) -> None:
        self._timer.cancel()


def shut(sock: socket.socket) -> None:
    with suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)  # a blocked recv in the fetching thread returns at once


_tls_lock = threading.Lock()
_tls: list[ssl.SSLContext] = []


def tls_context() -> ssl.SSLContext:
    """The process's one TLS client context (the system's CA certificates), made on first use.

    urllib's HTTPSHandler makes a new one per opener when given none: ``load_default_certs`` parses the
    whole CA bundle, ~38 ms of CPU holding the GIL, once per file fetched — the event loop waited behind
    it, so a flood of hub fetches (issue 27, N4/N5) put the /healthz prober's p99 at 200-500 ms, and it was
    most of a fetch's CPU (141 ms a model: three files, three contexts). A context is safe to share across
    threads; certificate checking is unchanged (``ssl.create_default_context``)."""
    with _tls_lock:
        if not _tls:
            _tls.append(ssl.create_default_context())
        return _tls[0]


def opener(deadline: Deadline, origin: tuple[str, str], *, timeout_s: float) -> urllib.request.OpenerDirector:
    """urllib with connections whose socket the deadline watches (proxies from the environment still apply)."""

    def per_operation() -> float:
        return max(0.01, min(timeout_s, deadline.remaining()))

    class _Connection(http.client.HTTPConnection):
        def connect(self) -> None:
            self.timeout = per_operation()
            super().connect()
            deadline.watch(self.sock)

    class _TlsConnection(http.client.HTTPSConnection):
        def connect(self) -> None:
            self.timeout = per_operation()
            super().connect()
            deadline.watch(self.sock)

    class _Http(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(_Connection, req)

    class _Https(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(_TlsConnection, req, context=getattr(self, "_context", None))

    # an HTTPSHandler is always installed (build_opener would add a default one, with a context of its own)
    return urllib.request.build_opener(_Http(), _Https(context=tls_context()), _SameOriginRedirects(origin))


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    max_redirections = MAX_REDIRECTS

    def __init__(self, origin: tuple[str, str]) -> None:
        self.origin = origin

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        target = urllib.parse.urlsplit(newurl)
        if (target.scheme, target.netloc) != self.origin:
            raise OffOriginError()
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class OffOriginError(Exception):
    """A redirect to another scheme or host (turned into a HubError naming the file)."""
