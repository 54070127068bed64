"""Speed of the planner: server render of the results fragment, and slider-to-DOM in Chromium.

    .venv/bin/python bench/speed.py [--requests 300] [--moves 20]

Prints p50/p99 in milliseconds. The server part uses the in-process ASGI client (no network);
the browser part starts uvicorn on a free port and drives Debian's Chromium with Playwright.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from starlette.exceptions import StarletteDeprecationWarning

from app.web.app import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient

LENGTHS = (2048, 4096, 8192, 16384, 32768, 65536, 131072)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def report(name: str, samples_s: list[float]) -> None:
    ms = [s * 1000 for s in samples_s]
    print(
        f"{name}: n={len(ms)} p50={statistics.median(ms):.1f} ms p99={percentile(ms, 0.99):.1f} ms "
        f"max={max(ms):.1f} ms"
    )


def bench_server(requests: int) -> None:
    client = TestClient(create_app())
    client.get("/")  # warm the template cache
    samples = []
    for i in range(requests):
        query = f"/?v=1&max_model_len={LENGTHS[i % len(LENGTHS)]}&target_concurrency={1 + i % 32}"
        start = time.perf_counter()
        response = client.get(query, headers={"HX-Request": "true"})
        samples.append(time.perf_counter() - start)
        assert response.status_code == 200
    report("server fragment render (HX-Request, TestClient)", samples)


def bench_browser(moves: int) -> None:
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, _start, _stop

    live = _start("")
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.goto(live.base + "/")
            slider = page.locator("#f-mml-slider")
            slider.focus()
            # in-page clock: key press -> htmx has swapped and settled the new results
            page.evaluate(
                """() => { window.__t = []; document.addEventListener('keydown', () => { window.__k = performance.now(); });
                   document.body.addEventListener('htmx:afterSettle', () => {
                     if (window.__k) { window.__t.push(performance.now() - window.__k); window.__k = 0; } }); }"""
            )
            samples = []
            for i in range(moves):
                before = page.locator("#n-max-model-len").inner_text()
                key = "ArrowLeft" if (i // 6) % 2 == 0 else "ArrowRight"
                start = time.perf_counter()
                slider.press(key)
                page.wait_for_function(
                    "before => document.querySelector('#n-max-model-len').textContent.trim() !== before",
                    arg=before,
                )
                samples.append(time.perf_counter() - start)
            in_page = [ms / 1000 for ms in page.evaluate("() => window.__t")]
            browser.close()
    finally:
        _stop(live)
    report(
        "browser slider key -> updated DOM, measured by Playwright (includes its IPC and polling)", samples
    )
    report("browser slider key -> htmx afterSettle, measured in the page (performance.now)", in_page)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--moves", type=int, default=20)
    args = parser.parse_args()
    bench_server(args.requests)
    bench_browser(args.moves)


if __name__ == "__main__":
    main()
