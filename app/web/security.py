"""Security at the edge: response headers, a body-size cap, and JSON bodies checked before parsing.

One pure-ASGI middleware (``SecurityMiddleware``), outside everything but starlette's own
ServerErrorMiddleware, so every response it sees gets the headers — 404s, static files, 413s and
422s included. The last-resort 500 handler adds ``SECURITY_HEADERS`` itself (it runs outside).

- Headers: a Content-Security-Policy with no inline script or style and no other origin (htmx is
  vendored and configured with ``allowEval: false`` and ``includeIndicatorStyles: false`` in
  base.html), nosniff, no referrer, no framing, same-origin opener. No CORS header is ever sent.
- Bodies: at most ``MAX_BODY_BYTES`` (6 MiB: the doctor takes a 5 MiB log plus form framing);
  larger is a 413 naming ``body``, before the app reads anything.
- Headers, before anything parses them: a request line plus headers over ``MAX_HEADER_BYTES`` (64 KiB)
  is a 431 (the protocol's own cap, ``server.BoundedHttpToolsProtocol``, only counts a head that is
  still open, so a 120 KB header that arrived in one read would pass it); a ``Cookie`` header over ``MAX_COOKIE_BYTES`` (4 KiB) is dropped, as if
  absent, so no cookie parser sees it (CPython's cookie unquoting, used by Starlette and
  ``http.cookies``, is quadratic before 3.11.10 / 3.12.6: a 62 KB quoted cookie cost 5 s of CPU).
- Admission (``app.web.admission``): a client with ``MAX_IN_FLIGHT_PER_CLIENT`` requests in flight
  on the worker gets a 429 before its request is read; once its body is read, a request waits for one
  of the worker's ``COMPUTING_AT_ONCE`` slots (the least-served client first), a large one first for the large
  slot. ``/healthz`` and static files pass.
- JSON bodies (``application/json``, ``*+json``): must be UTF-8 and nested at most
  ``MAX_JSON_DEPTH`` deep, else a 422 naming ``body`` — Python's JSON parser would otherwise recurse
  until RecursionError. Urlencoded forms must be UTF-8 too. A body without a content type is left to
  the route (the doctor reads it as a plain-text log; FastAPI's JSON routes answer 400 on garbage).
"""

from __future__ import annotations

import asyncio
import html
import json
import math
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from itertools import islice
from typing import Any
from urllib.parse import unquote_to_bytes

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.deadline import cpu_budget
from app.core.jsontext import (
    MAX_JSON_DEPTH,
    MAX_JSON_VALUES,
    json_depth,
    json_depth_exceeds,
    json_values_exceed,
)
from app.core.text import N_, Text
from app.web import admission

__all__ = ["MAX_JSON_DEPTH", "json_depth", "json_depth_exceeds"]

MAX_BODY_BYTES = 6 * 2**20
# An over-limit body is read and thrown away up to this much before the 413 goes out, so a client still
# uploading (a browser posting a 50 MB paste) receives the message instead of a reset connection;
# beyond it the connection is simply closed.
DRAIN_LIMIT_BYTES = 128 * 2**20
# A request whose body plus query exceeds this is "large" (a 5 MiB log, a pasted 60 KB config; the
# planner's own requests are ~1-3 KB, a real config.json ~1-20 KB): one at a time per worker, the
# others wait for it holding no thread. Large inputs are what makes a request cost up to its CPU
# budget, so a flood of them takes one thread of a worker, not all eight, and small requests keep
# their share of the CPU (the 64-connection mixed load with attackers, bench/hostile_mixed.py).
LARGE_REQUEST_BYTES = 32 * 2**10
# A body's own check (``_body_problem``: UTF-8, JSON depth and value count) runs where the body is read,
# on the event loop, only up to this size; a larger one is checked in the thread pool once admitted. The
# check of a 32 KiB body cost up to 2.2 ms (``[`` x 32,768) and 3.7 ms (a form of ``%C3%A9`` pairs) on the
# loop, in front of every other request of the worker; of 4 KiB (the planner's forms are 1-3 KB) ~0.4 ms.
INLINE_CHECK_BYTES = 4 * 2**10
LARGE_REQUESTS_AT_ONCE = 1
# Request line + headers: browsers send ~1-2 KiB; nginx's large_client_header_buffers is 4 x 8 KiB.
MAX_HEADER_BYTES = 64 * 2**10
# A browser keeps one cookie of ours (lang=xx, 7 bytes); 4 KiB is what RFC 6265 §6.1 asks a browser to
# support per cookie, and quadratic unquoting of 4 KiB costs ~20 ms at worst.
MAX_COOKIE_BYTES = 4 * 2**10
# A body must keep coming, else a 408: a chunk at least every BODY_CHUNK_TIMEOUT_S; after the first
# BODY_GRACE_S, BODY_MIN_BYTES_PER_S on average (each byte received extends the deadline by 1/rate s, the
# idea of Apache's mod_reqtimeout MinRate); and the whole of it within BODY_TIMEOUT_S (6 MiB in 30 s is
# 205 KiB/s, far below any intranet link; a 1 MB log at 64 KiB/s takes 16 s). This bounds how long a slow
# client holds a connection and its buffered body when the server is exposed directly: a body trickled at
# a few bytes a second was held 60 s (round 11, bench/hostile_slow.py S1), now BODY_GRACE_S.
BODY_CHUNK_TIMEOUT_S = 10.0
BODY_GRACE_S = 10.0
BODY_MIN_BYTES_PER_S = 16 * 2**10
BODY_TIMEOUT_S = 30.0

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "font-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "object-src 'none'",
    )
)
SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
}
_RAW_HEADERS = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in SECURITY_HEADERS.items()]
_OWN_NAMES = {name for name, _ in _RAW_HEADERS}
_DROPPED = {b"access-control-allow-origin", b"access-control-allow-credentials"}


def check_json_text(text: str, limit: int = MAX_JSON_DEPTH) -> None:
    """For validators of pasted JSON (config.json): ValueError when nested deeper than ``limit``."""
    if json_depth_exceeds(text, limit):
        raise ValueError(
            Text("nested deeper than {limit} levels; a real config.json is a few levels deep", limit=limit)
        )


ECHO_MAX_CHARS = 200  # an error echoes at most this much of the offending input
# ... and of a list or an object its first 16 entries (a 422 lists at most 8 errors and a "more" line:
# validation.ECHO_MAX_ERRORS), at most 8 levels deep
ECHO_MAX_ITEMS = 16
ECHO_MAX_DEPTH = 8


@dataclass(frozen=True)
class WorkBudget:
    """The CPU one request may spend computing (app.core.deadline), and what to shrink past it."""

    seconds: float
    field: str
    advice: str


# By path (under the root path). Searches and simulations get 3 s (the bar is 4 s of server
# CPU for them, 2 s for everything else); the rest 1 s (1.5 s to round 10). Every real input takes a
# fraction: the catalog's largest model at the largest fleet is ~0.3 s, a preset simulation at its cap
# < 1 s; the doctor's slowest of the 251 real logs in tests/data is 36 ms (round 11, a warmed worker),
# a 10,000-layer pasted config's planner page 67 ms.
DEFAULT_BUDGET_S = 1.0
_LAYERS_ADVICE = N_("a pasted config with fewer layers, or a smaller pipeline_parallel_size")
WORK_BUDGETS: dict[str, WorkBudget] = {
    "/api/recommend": WorkBudget(
        3.0, "nodes", N_("fewer nodes or devices per node, or a pasted config with fewer layers")
    ),
    "/recommend": WorkBudget(3.0, "config_json", _LAYERS_ADVICE),
    "/api/fleet": WorkBudget(3.0, "config_json", _LAYERS_ADVICE),
    "/fleet": WorkBudget(3.0, "config_json", _LAYERS_ADVICE),
    "/explore": WorkBudget(3.0, "config_json", _LAYERS_ADVICE),
    # a simulated `vllm bench serve` (app.core.perf.simulate reads the budget; inside it the simulation
    # names bench.num_prompts or the runs, app.core.deadline.naming): 100,000 prompts take ~2 s
    "/api/performance": WorkBudget(3.0, "config_json", _LAYERS_ADVICE),
    "/speed": WorkBudget(3.0, "config_json", _LAYERS_ADVICE),
    "/api/workload": WorkBudget(3.0, "config_json", _LAYERS_ADVICE),
    "/doctor": WorkBudget(DEFAULT_BUDGET_S, "log", N_("a shorter log")),
    "/api/diagnose": WorkBudget(DEFAULT_BUDGET_S, "log", N_("a shorter log")),
}
DEFAULT_WORK_BUDGET = WorkBudget(DEFAULT_BUDGET_S, "config_json", _LAYERS_ADVICE)


def work_budget(scope: Scope) -> WorkBudget:
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "") or ""
    if root and path.startswith(root):
        path = path[len(root) :]
    return WORK_BUDGETS.get(path.rstrip("/") or "/", DEFAULT_WORK_BUDGET)


def json_safe(value: Any, *, cut: bool = True, _depth: int = 0) -> Any:
    """Validation-error details made strict-JSON-safe and small: NaN/inf as strings, long strings
    clipped, a list or an object cut to its first ``ECHO_MAX_ITEMS`` entries (then how many more) and
    nothing below ``ECHO_MAX_DEPTH`` levels.

    ``json.loads`` accepts ``NaN``/``Infinity``; echoing them back in a 422 would make the JSON
    encoder raise (a 500), and echoing a 6 MiB value back is a waste: a 6 MB body of 2 million empty
    lists sent where an object is expected was echoed whole, 8.5 s of the event loop's CPU per request
    and a 6 MB answer (round 5, bench/hostile_server.py N14). So it is applied before the encoder, and
    after it with ``cut=False`` (what the encoder made of the rest: NaN and long strings only).
    """
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str) and len(value) > ECHO_MAX_CHARS:
        return value[:ECHO_MAX_CHARS] + "…"
    if not isinstance(value, dict | list | tuple):
        return value
    if cut and _depth >= ECHO_MAX_DEPTH:
        return "…"
    shown = ECHO_MAX_ITEMS if cut else len(value)
    more = len(value) - shown
    if isinstance(value, dict):
        kept = {str(k): json_safe(v, cut=cut, _depth=_depth + 1) for k, v in islice(value.items(), shown)}
        return {**kept, "…": f"{more:,} more"} if more > 0 else kept
    listed = [json_safe(v, cut=cut, _depth=_depth + 1) for v in islice(value, shown)]
    return [*listed, f"… {more:,} more"] if more > 0 else listed


def header_bytes(scope: Scope) -> int:
    """The request line plus headers as sent on the wire (``GET /p?q HTTP/1.1``, ``name: value`` lines)."""
    line = len(scope.get("method", "")) + len(scope.get("raw_path") or b"") + 12
    query: bytes = scope.get("query_string", b"")
    line += len(query) + 1 if query else 0
    return line + sum(len(key) + len(value) + 4 for key, value in scope.get("headers", ()))


def without_large_cookie(scope: Scope) -> Scope:
    """``scope`` without its Cookie headers when together they exceed ``MAX_COOKIE_BYTES``."""
    headers = scope.get("headers", ())
    cookie_bytes = sum(len(value) for key, value in headers if key == b"cookie")
    if cookie_bytes <= MAX_COOKIE_BYTES:
        return scope
    return {**scope, "headers": [(key, value) for key, value in headers if key != b"cookie"]}


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return ""


def _is_api(scope: Scope) -> bool:
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "") or ""
    if root and path.startswith(root):
        path = path[len(root) :]
    return path == "/api" or path.startswith("/api/") or path == "/openapi.json"


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def _body_problem(body: bytes, content_type: str) -> str | None:
    """Why a (fully read) body is refused before the app sees it, or None."""
    media = content_type.split(";", 1)[0].strip().lower()
    if _is_json(content_type) and body:
        try:
            body.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"the body is not UTF-8 (byte {exc.start}); send JSON encoded as UTF-8"
        if json_depth_exceeds(body):
            return f"the JSON body is nested deeper than {MAX_JSON_DEPTH} levels"
        if json_values_exceed(body):  # json.loads would build each on the event loop
            return f"the JSON body holds more than {MAX_JSON_VALUES:,} values; send long inputs as text"
    elif media == "application/x-www-form-urlencoded":
        try:
            body.decode("utf-8")
            unquote_to_bytes(body.replace(b"+", b" ")).decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"the form is not UTF-8 (byte {exc.start})"
    return None


async def _drain(receive: Receive, budget_bytes: int) -> None:
    """Read and discard the rest of a request body, at most ``budget_bytes``."""
    while budget_bytes > 0:
        message = await receive()
        if message["type"] != "http.request":
            return
        budget_bytes -= len(message.get("body", b""))
        if not message.get("more_body", False):
            return


def _secured(send: Send) -> Send:
    """``send`` with the security headers on the response start (and no CORS header)."""

    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [
                (k, v)
                for k, v in message.get("headers", [])
                if k.lower() not in _DROPPED and k.lower() not in _OWN_NAMES
            ]
            message = {**message, "headers": headers + _RAW_HEADERS}
        await send(message)

    return send_with_headers


def _over_share() -> str:
    return (
        f"this client already has {admission.MAX_IN_FLIGHT_PER_CLIENT} requests in progress on this "
        f"worker; wait for them, then retry after {admission.RETRY_AFTER_S} s"
    )


class SecurityMiddleware:
    """Security headers on every response; body cap and JSON/UTF-8 checks on every request body."""

    def __init__(
        self,
        app: ASGIApp,
        max_body_bytes: int = MAX_BODY_BYTES,
        *,
        body_chunk_timeout_s: float = BODY_CHUNK_TIMEOUT_S,
        body_timeout_s: float = BODY_TIMEOUT_S,
        body_grace_s: float = BODY_GRACE_S,
        body_min_bytes_per_s: float = BODY_MIN_BYTES_PER_S,
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.body_chunk_timeout_s = body_chunk_timeout_s
        self.body_timeout_s = body_timeout_s
        self.body_grace_s = body_grace_s
        self.body_min_bytes_per_s = body_min_bytes_per_s
        self._large_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )
        self._admissions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, admission.Admission] = (
            weakref.WeakKeyDictionary()
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope = without_large_cookie(scope)
        budget = work_budget(scope)
        if admission.is_exempt(scope):
            with cpu_budget(seconds=budget.seconds, field=budget.field, advice=Text(budget.advice)):
                await self._serve(scope, receive, send)
            return
        worker, client = self._admission(), admission.client_key(scope)
        if worker.over_share(client):  # before anything reads the request
            await self._refuse(scope, _secured(send), 429, _over_share())
            return
        # the budget travels in the request's context, into the thread pool with it
        with cpu_budget(seconds=budget.seconds, field=budget.field, advice=Text(budget.advice)):
            async with worker.counted(client):
                await self._serve(scope, receive, send)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        send_with_headers = _secured(send)
        size = header_bytes(scope)
        if size > MAX_HEADER_BYTES:
            too_long = (
                f"the request line and headers have {size:,} bytes; the limit is {MAX_HEADER_BYTES:,} bytes "
                f"({MAX_HEADER_BYTES // 2**10} KiB): send long inputs in a POST body"
            )
            await self._refuse(scope, send_with_headers, 431, too_long)
            return
        if scope["method"] in ("GET", "HEAD", "OPTIONS", "DELETE") and not _header(scope, b"content-length"):
            async with self._admitted(scope, len(scope.get("query_string", b"")), send_with_headers) as reply:
                await self.app(scope, receive, reply)
            return

        declared = _header(scope, b"content-length")
        if declared.isascii() and declared.isdigit() and int(declared) > self.max_body_bytes:
            if int(declared) <= DRAIN_LIMIT_BYTES:
                await _drain(receive, DRAIN_LIMIT_BYTES)
            await self._refuse(scope, send_with_headers, 413, self._too_large(int(declared)))
            return
        chunks: list[bytes] = []
        size = 0
        loop = asyncio.get_running_loop()
        started = loop.time()
        while True:
            wait_s = min(self.body_chunk_timeout_s, self._body_deadline(started, size) - loop.time())
            try:
                message = await asyncio.wait_for(receive(), timeout=max(wait_s, 0.0))
            except TimeoutError:
                await self._refuse(scope, send_with_headers, 408, self._too_slow(size))
                return
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                if message.get("more_body", False):
                    await _drain(receive, DRAIN_LIMIT_BYTES - size)
                await self._refuse(scope, send_with_headers, 413, self._too_large(size))
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        content_type = _header(scope, b"content-type")
        inline = len(body) <= INLINE_CHECK_BYTES
        # a small body is checked here; a larger one once admitted, in the thread pool (below)
        problem = _body_problem(body, content_type) if inline else None
        if problem is not None:
            await self._refuse(scope, send_with_headers, 422, problem)
            return

        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: wait for the client's disconnect

        async with self._admitted(
            scope, len(body) + len(scope.get("query_string", b"")), send_with_headers
        ) as reply:
            if not inline:
                # the depth count of 6 MiB of brackets is ~1.4 s of CPU: off the event loop, and only
                # once the request holds its slots (module doc: LARGE_REQUEST_BYTES, INLINE_CHECK_BYTES)
                problem = await run_in_threadpool(_body_problem, body, content_type)
                if problem is not None:
                    await self._refuse(scope, reply, 422, problem)
                    return
            await self.app(scope, replay, reply)

    def _admission(self) -> admission.Admission:
        loop = asyncio.get_running_loop()
        found = self._admissions.get(loop)
        if found is None:
            found = self._admissions[loop] = admission.Admission()
        return found

    @asynccontextmanager
    async def _admitted(self, scope: Scope, input_bytes: int, send: Send) -> AsyncIterator[Send]:
        """A slot of the worker's fair gate (app.web.admission) for the request's work; a large request
        first waits for the worker's one large slot (module doc). /healthz and static files pass.

        Yields the ``send`` to use: both slots are given up when the response starts — it is computed
        by then (no route streams) — so a client that does not read its answer holds none of them."""
        if admission.is_exempt(scope):
            yield send
            return
        loop = asyncio.get_running_loop()
        large: asyncio.Semaphore | None = None
        if input_bytes > LARGE_REQUEST_BYTES:
            large = self._large_gates.get(loop) or self._large_gates.setdefault(
                loop, asyncio.Semaphore(LARGE_REQUESTS_AT_ONCE)
            )
        holding: list[asyncio.Semaphore] = []
        if large is not None:
            await large.acquire()
            holding.append(large)
        try:
            async with admission.admitted(self._admission(), admission.client_key(scope)) as slot:

                async def send_then_free(message: Message) -> None:
                    if message["type"] == "http.response.start":
                        slot.give_up()
                        while holding:
                            holding.pop().release()
                    await send(message)

                yield send_then_free
        finally:
            while holding:
                holding.pop().release()

    def _body_deadline(self, started: float, received: int) -> float:
        """When the body must be complete, given the bytes received so far (the constants' comment)."""
        earned = self.body_grace_s + received / self.body_min_bytes_per_s
        return started + min(self.body_timeout_s, earned)

    def _too_slow(self, size: int) -> str:
        return (
            f"the request body stalled after {size:,} bytes; send it within {self.body_timeout_s:g} s, "
            f"at least {self.body_min_bytes_per_s / 2**10:g} KiB/s after the first {self.body_grace_s:g} s, "
            f"with no pause over {self.body_chunk_timeout_s:g} s"
        )

    def _too_large(self, size: int) -> str:
        return (
            f"the request body has {size:,} bytes or more; the limit is "
            f"{self.max_body_bytes:,} bytes ({self.max_body_bytes / 2**20:g} MiB)"
        )

    async def _refuse(self, scope: Scope, send: Send, status: int, message: str) -> None:
        kind = {413: "too_large", 408: "timeout", 431: "headers_too_large", 429: "too_many_requests"}.get(
            status, "invalid_body"
        )
        if _is_api(scope):
            where = "header" if status == 431 else "body"
            payload = {"detail": [{"loc": [where], "msg": message, "type": kind}]}
            body = json.dumps(payload).encode()
            content_type = b"application/json"
        else:
            where = "header" if status == 431 else "body"
            body = f'<p class="problem" role="alert">{where}: {html.escape(message)}</p>'.encode()
            content_type = b"text/html; charset=utf-8"
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", content_type),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                    *([(b"retry-after", str(admission.RETRY_AFTER_S).encode())] if status == 429 else []),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
