"""The FastAPI application factory."""

from __future__ import annotations

import gc
import html
import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.gzip import GZipMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from app import hub
from app.core.catalog import list_devices, list_models
from app.core.deadline import WorkBudgetError
from app.core.errors import PlannerError
from app.web import explore, fleet, reports
from app.web.compare import routes as compare
from app.web.doctor import routes as doctor
from app.web.i18n import LanguageMiddleware, _, tr
from app.web.inputs.problems import api_message
from app.web.planner import api as planner_api
from app.web.planner import routes as planner_routes
from app.web.recommend import api as recommend_api
from app.web.recommend import routes as recommend_routes
from app.web.security import ECHO_MAX_CHARS, SECURITY_HEADERS, SecurityMiddleware, json_safe
from app.web.speed import api as speed_api
from app.web.speed import routes as speed_routes
from app.web.templating import STATIC_DIR, Renderer
from app.web.validation import localized

log = logging.getLogger("kvplan.web")


class RootPathMiddleware:
    """Serve under a URL prefix, with or without a proxy that strips it.

    Sets the ASGI ``root_path`` (so ``url_for`` writes prefixed URLs) and, when a proxy has removed
    the prefix, puts it back into ``path`` as the ASGI spec expects. Replaces FastAPI's deprecated
    ``root_path=`` argument.
    """

    def __init__(self, app: ASGIApp, root_path: str) -> None:
        self.app = app
        self.root_path = "/" + root_path.strip("/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            scope = dict(scope)
            scope["root_path"] = self.root_path
            path: str = scope["path"]
            if path != self.root_path and not path.startswith(self.root_path + "/"):
                scope["path"] = self.root_path + path
                scope["raw_path"] = self.root_path.encode() + scope.get("raw_path", path.encode())
        await self.app(scope, receive, send)


class RelativeSlashRedirect:
    """``/explore/`` -> ``/explore`` with a *relative* Location (never built from the Host header).

    Starlette's own slash redirect writes an absolute URL from ``Host``, so ``Host: evil.example``
    made ``/explore/`` redirect to ``http://evil.example/explore``; it is turned off
    (``redirect_slashes=False``) in favour of this. Leading slashes collapse to one, so ``//evil.example/``
    cannot become the protocol-relative ``//evil.example``.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        root: str = scope.get("root_path", "") or ""
        inner = path.removeprefix(root) if root and path.startswith(root) else path
        if (
            scope["type"] != "http"
            or scope["method"] not in ("GET", "HEAD")
            or not inner.endswith("/")
            or inner == "/"
        ):
            await self.app(scope, receive, send)
            return
        target = "/" + (root + inner).strip("/")
        query: bytes = scope.get("query_string", b"")
        location = target + ("?" + query.decode("latin-1") if query else "")
        await send(
            {
                "type": "http.response.start",
                "status": 308,
                "headers": [(b"location", location.encode("latin-1")), (b"content-length", b"0")],
            }
        )
        await send({"type": "http.response.body", "body": b""})


class GZipByKind:
    """gzip at two levels: static files at 6 (sent once per visit), what is computed per request at 1.

    A slider move's fragment (~17 KB of HTML) costs ~0.33 ms to deflate at level 6 and ~0.09 ms at
    level 1, for 12 % more bytes (4.9 -> 5.4 KB) — on a loopback or LAN link the CPU is the scarcer.
    """

    STATIC_LEVEL = 6
    DYNAMIC_LEVEL = 1

    def __init__(self, app: ASGIApp) -> None:
        self.static = GZipMiddleware(app, minimum_size=500, compresslevel=self.STATIC_LEVEL)
        self.dynamic = GZipMiddleware(app, minimum_size=500, compresslevel=self.DYNAMIC_LEVEL)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        is_static = path.removeprefix(scope.get("root_path", "")).startswith("/static/")
        await (self.static if is_static else self.dynamic)(scope, receive, send)


def warm_up(renderer: Renderer) -> None:
    """Everything a first request would otherwise pay for, done once per worker before it serves.

    Reads the model and device spec files, makes the hub's TLS context (with the hub on) and compiles
    every template in every language. Then the
    objects alive now (catalog, compiled templates, schemas) are moved out of the garbage collector's
    reach (``gc.freeze``): they live as long as the worker, and a full collection that had to walk
    them paused a request for ~50 ms (measured in-process; with the freeze ~8 ms).
    """
    list_models()
    list_devices()
    hub.warm_up()
    for env in renderer.envs.values():
        for name in env.list_templates(extensions=["html"]):
            env.get_template(name)
    gc.collect()
    gc.freeze()


# Threads computing for requests at once, per worker (anyio's default is 40). The work is CPU-bound
# Python: more threads than this only queue for the GIL, and the event loop waits behind every one of
# them for its turn (~5 ms each: 40 threads kept /healthz 0.2-0.5 s behind 50 concurrent estimates).
# Requests beyond it wait for a thread without holding one; hub fetches have their own pool (app.hub).
# Admission (app.web.admission) lets as many requests of a worker work at once (COMPUTING_AT_ONCE).
REQUEST_THREADS = 8


# How long a thread holds the GIL while another waits for it (CPython's default 5 ms). The event loop
# (accepting, /healthz, every async route's first step) waits behind the computing threads for its
# turn; 1 ms makes that wait 5x shorter for ~1 % more switching.
GIL_SWITCH_INTERVAL_S = 0.001


def limit_threads() -> None:
    anyio.to_thread.current_default_thread_limiter().total_tokens = REQUEST_THREADS
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)


async def work_budget_error(request: Request, exc: WorkBudgetError) -> Response:
    """A request that computed past its CPU budget (app.core.deadline): a 422 naming what to shrink,
    JSON on the API, the problem paragraph on a page or fragment (htmx swaps a 422)."""
    message = tr(exc.message)
    root: str = request.scope.get("root_path", "") or ""
    if request.url.path.removeprefix(root).startswith("/api"):
        where = "query" if request.method == "GET" else "body"
        detail = [{"loc": [where, exc.field], "msg": message, "type": "work_budget"}]
        return JSONResponse({"detail": detail}, status_code=422)
    body = f'<p class="problem" role="alert">{html.escape(exc.field)}: {html.escape(message)}</p>'
    return HTMLResponse(body, status_code=422)


def create_app(root_path: str = "") -> FastAPI:
    """``root_path``: the URL prefix the app is served under (``/tools/kvplan``), "" at the root."""
    renderer = Renderer()

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        warm_up(renderer)
        limit_threads()
        yield

    app = FastAPI(
        lifespan=lifespan,
        title="KV Planner",
        summary="Will this model start under vLLM with this max_model_len and concurrency?",
        version="0.1.0",
        docs_url=None,
        redoc_url=None,
    )
    app.state.renderer = renderer
    app.router.redirect_slashes = False  # RelativeSlashRedirect does it without trusting Host
    # Middleware runs outermost-last-added: RootPath (outermost) -> Security -> GZip -> Language -> routes.
    app.add_middleware(LanguageMiddleware)
    app.add_middleware(GZipByKind)
    app.add_middleware(RelativeSlashRedirect)
    app.add_middleware(SecurityMiddleware)
    if root_path:
        app.add_middleware(RootPathMiddleware, root_path=root_path)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.include_router(compare.router)
    app.include_router(planner_routes.router)
    app.include_router(recommend_routes.router)
    app.include_router(reports.router)
    app.include_router(planner_api.router)
    app.include_router(recommend_api.router)
    app.include_router(speed_api.router)
    app.include_router(speed_routes.router)
    app.include_router(explore.router)
    app.include_router(explore.api_router)
    app.include_router(doctor.router)
    app.include_router(fleet.router)
    app.include_router(fleet.api_router)
    app.include_router(planner_api.docs_router)

    @app.get("/healthz", name="healthz", tags=["ops"])
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.head("/healthz", include_in_schema=False)  # load balancers probe with HEAD
    async def healthz_head() -> Response:
        return Response(status_code=200)

    @app.exception_handler(PlannerError)
    async def planner_error(request: Request, exc: PlannerError) -> Response:
        # Pages catch their own PlannerErrors and render them inline; what reaches here is the API.
        detail = [
            {
                "loc": ["query" if request.method == "GET" else "body", exc.field],
                "msg": api_message(exc),  # an unknown model: "did you mean" and how to send its config
                "type": type(exc).__name__,
            }
        ]
        return JSONResponse({"detail": detail}, status_code=422)

    app.add_exception_handler(WorkBudgetError, work_budget_error)  # type: ignore[arg-type]

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        # JSON on the API (as FastAPI's default), an HTML page everywhere else: a malformed form POSTed
        # to /doctor or a 404 in the browser must not answer JSON on an HTML route.
        headers = dict(exc.headers or {})
        if request.url.path.startswith(f"{root_path}/api") or request.url.path.endswith("openapi.json"):
            return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=headers)
        message = html.escape(str(exc.detail)[:ECHO_MAX_CHARS])
        body = f'<!doctype html><title>{exc.status_code}</title><p class="problem" role="alert">{message}</p>'
        return HTMLResponse(body, status_code=exc.status_code, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        detail = localized(list(exc.errors()))
        # bounded before encoding: the encoder walks whatever the input holds (json_safe)
        encoded = jsonable_encoder(json_safe(detail))
        return JSONResponse({"detail": json_safe(encoded, cut=False)}, status_code=422)

    @app.exception_handler(Exception)
    async def last_resort(request: Request, exc: Exception) -> Response:
        # Inputs are validated before they reach the core, so this is a bug: log it, show no trace.
        log.exception("unhandled error on %s", request.url.path)
        message = _("Internal error: the planner could not compute this. The inputs were logged for a fix.")
        if request.url.path.startswith(f"{root_path}/api"):
            return JSONResponse({"detail": message}, status_code=500, headers=SECURITY_HEADERS)
        return HTMLResponse(f"<p>{message}</p>", status_code=500, headers=SECURITY_HEADERS)

    return app
