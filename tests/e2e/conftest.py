"""A live uvicorn (in a thread, on a free port) and Debian's Chromium driven by Playwright."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import uvicorn
from playwright.sync_api import Browser, Page, Request, sync_playwright

from app.web.app import create_app

ARTIFACTS = Path(__file__).parent / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WIDTHS = (1280, 390)
PREFIX = "/tools/kvplan"


@dataclass
class LiveServer:
    base: str  # http://127.0.0.1:PORT[/prefix]
    origin: str  # http://127.0.0.1:PORT
    server: uvicorn.Server
    thread: threading.Thread


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(root_path: str) -> LiveServer:
    port = _free_port()
    config = uvicorn.Config(create_app(root_path=root_path), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    origin = f"http://127.0.0.1:{port}"
    return LiveServer(base=origin + root_path, origin=origin, server=server, thread=thread)


def _stop(live: LiveServer) -> None:
    live.server.should_exit = True
    live.thread.join(timeout=5)


@pytest.fixture(scope="session")
def live_server() -> Iterator[LiveServer]:
    live = _start("")
    yield live
    _stop(live)


@pytest.fixture(scope="session")
def prefixed_server() -> Iterator[LiveServer]:
    live = _start(PREFIX)
    yield live
    _stop(live)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@dataclass
class Tab:
    page: Page
    requests: list[str] = field(default_factory=list)

    def shoot(self, name: str) -> list[Path]:
        """Full-page screenshots of the current state at every width (then back to the first)."""
        ARTIFACTS.mkdir(exist_ok=True)
        paths = []
        for width in WIDTHS:
            self.page.set_viewport_size({"width": width, "height": 900})
            path = ARTIFACTS / f"{name}-{width}.png"
            self.page.screenshot(path=str(path), full_page=True)
            paths.append(path)
        self.page.set_viewport_size({"width": WIDTHS[0], "height": 900})
        return paths


@pytest.fixture
def tab(browser: Browser) -> Iterator[Tab]:
    context = browser.new_context(viewport={"width": WIDTHS[0], "height": 900})
    page = context.new_page()
    page.set_default_timeout(8000)
    opened = Tab(page)

    def record(request: Request) -> None:
        opened.requests.append(request.url)

    page.on("request", record)
    yield opened
    context.close()
