"""Page weight: everything the planner page transfers on a cold load (gzip, as Chromium receives it).

Sizes are what went over the wire — Playwright's ``Request.sizes()`` (Chromium's encoded body
length plus response headers) — not the files on disk. Goal: under 60 KB in total, and no request
to any origin but the app's own on 127.0.0.1. Also: the page runs without a single CSP violation.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Request

from tests.e2e.conftest import LiveServer

pytestmark = pytest.mark.e2e

BUDGET_BYTES = 60 * 1000  # "60 KB"


def test_planner_page_weight_and_origins(live_server: LiveServer, browser: Browser) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(8000)
    requests: list[Request] = []
    console: list[str] = []
    page.on("request", lambda request: requests.append(request))
    page.on("console", lambda msg: console.append(msg.text))
    try:
        page.goto(live_server.base + "/", wait_until="networkidle")
        page.wait_for_function("() => window.htmx !== undefined")
        rows = []
        for request in requests:
            response = request.response()
            if response is None or request.url.startswith("data:"):
                continue
            sizes = request.sizes()
            wire = sizes["responseBodySize"] + sizes["responseHeadersSize"]
            rows.append((request.url, response.headers.get("content-encoding", "-"), wire))
    finally:
        context.close()

    total = sum(wire for _, _, wire in rows)
    print(f"\nplanner page: {len(rows)} requests, {total / 1000:.1f} KB on the wire")
    for url, encoding, wire in rows:
        print(f"  {wire / 1000:6.1f} KB  {encoding:5s} {urlsplit(url).path}")

    assert total < BUDGET_BYTES, rows
    compressible = [(u, e) for u, e, w in rows if w > 1500 and not u.endswith((".png", ".ico"))]
    assert all(e == "gzip" for _, e in compressible), compressible  # GZipMiddleware served them
    assert {urlsplit(r.url).hostname for r in requests if not r.url.startswith("data:")} == {"127.0.0.1"}
    assert all(r.url.startswith(live_server.origin) or r.url.startswith("data:") for r in requests)
    assert not [m for m in console if "Content Security Policy" in m], console
