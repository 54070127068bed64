"""A max_model_len slider move, end to end: key press -> htmx request -> server -> swap, in Chromium.

    .venv/bin/python bench/slider_latency.py [--moves 30] [--port 18060] [--cases llama,qwen3next,...]
    .venv/bin/python bench/slider_latency.py --vs /path/to/other/tree [--moves 30] [--cases llama]
    .venv/bin/python bench/slider_latency.py --server-only [--requests 60]

For each case (Llama-3.1-8B on one H100; Qwen3-Next-80B TP 4; DeepSeek-V3 TP 8; a pasted 10,000-layer
Qwen3-MoE config.json, the hostile audit's, carried by the permalink and posted with every move) it
prints p50/p90/p95 in milliseconds of:

- ``request -> settle``: htmx's beforeRequest to afterSettle, in the page (performance.now): the
  network, the server and the swap;
- ``key -> settle``: the key press to afterSettle (what the user waits; a key press fires "change",
  which has no debounce), split by Resource Timing into the server's wait (request sent to first
  byte) and the swap (last byte to settled);
- ``settle -> frame``: afterSettle to the end of the next frame (requestAnimationFrame, then a task): the
  style, layout and paint of the new results, which the figures above leave out;
- ``request -> speed``: htmx's beforeRequest to the settle that brings the new Speed section (its slot's,
  or the results' own on a tree whose results carry it);
- ``/speed slot``, ``/recommend slot``: the requests a swap starts (hx-trigger "load", "load delay:400ms"),
  request to beforeSwap (the swapped slot leaves the document, so no later event of it bubbles); a tree
  whose results carry the Speed section has no /speed samples;
- ``server CPU``: the uvicorn child's own user + system seconds per move, all three requests (/proc/PID/stat), so
  Chromium's and Playwright's CPU are not in it.

``--vs TREE`` measures two trees interleaved, move by move (A, B, A, B, ...), on the same load: this tree's
server and page, and a second server started in TREE (another worktree, e.g. main's) with its own page, in
the same Chromium. Each figure is printed for both, A (this tree) first.

``--server-only`` skips the browser: each move's three requests posted through the ASGI app in this
process, then the same inputs as GET /api/estimate (the form's cases to /, then ``state=`` the results' #planner-state to /speed and /recommend, as
the slots post it), CPU per request by time.process_time (steadier than wall clock on a shared machine). Numbers only;
no test asserts a time. Compare two trees on the same machine side by side (farm-bench --vs), as ratios.

Measured 2026-12-01, 30 moves per case, on the shared 2-core machine (load 5-7), p50 / p95 in ms:

    case   tree                          request->settle  server wait   swap
    llama  main 4c0edc0                  134.9 / 449.1    45.7 / 78.6   69.4 / 334.2
    llama  htmx history off, one replace  84.3 / 179.5    23.6 / 71.4   37.0 / 108.3
    dsv3   main 4c0edc0                  121.8 / 232.9    31.5 / 62.9   71.4 / 162.0
    dsv3   htmx history off, one replace  93.0 / 168.0    30.1 / 75.7   50.8 / 107.4

(DeepSeek-V3 is TP 8.) A Chromium trace of the swap (devtools.timeline) showed htmx replacing the address
twice per swap, inside the XHR's load task (FrameLoader::updateForSameDocumentNavigation, 2-24 ms each), the
first time to the address it already had; static/app.js now replaces it once, after the next frame. The
rest of the swap is htmx's JavaScript (per-node cleanup events on the old results, ~630 nodes, and
processing of the new ones) and parsing the ~32 KB fragment; layout and paint (~45 ms a move) follow the
settle and are not in these figures. The two trees were measured one after the other, not interleaved, and
the load differed (7 then 5), so part of the gap may be the machine.

2026-12-02 (load 5-9): wall-clock figures move by 10+ ms between two runs of the same tree (an A/A --vs run:
swap p50 63.7 vs 42.6 ms), so compare trees by ``renderer CPU`` (thread time). Llama-3.1-8B, main, per move,
renderer main-thread CPU by task (a trace of 12 moves): the results' XHR load task 19-20 ms (htmx's swap and
settle; ~2.6 ms of it parsing the 20 KB fragment, ~4 ms issuing the Speed slot's request, whose "load"
trigger fires inside the settle), the frame after it 14 ms (style, layout, paint); the Speed slot 7.6 + 12.8
ms, the recommendation 4.2 + 9.4 ms. Tried and not kept, both measured no better: (1) taking the old results
out of the page before htmx's swap so its per-element cleanup walks ~8 elements, not ~460 (renderer CPU p50
144.8 vs 143.8 ms on main, 20 moves interleaved); (2) a morphing swap (a results-morph htmx extension laying
the fragment onto the old nodes: 22 text changes and 5 replaced elements a move, DOM identical to innerHTML's)
- alone in a page it cut insert + style + layout + paint of the fragment from 26 to 17 ms, but in a real move
the XHR task read 19.7 vs 19.2 ms and its frame 14.0 vs 14.5: the Speed slot returns to its placeholder and
comes back (and the recommendation slot likewise), moving everything below it, so the page below is laid out
and painted again whatever the swap keeps.

Round 9 (2026-12-02). Two measuring faults fixed first: Playwright polled its waits every animation frame
(~20 extra frames a move on the page's thread: renderer CPU 85.0 -> 70.2 ms a move, same tree), and a
``--vs`` server read this tree's templates and static files (the venv's editable finder), so round 8's
swap experiments had the change on both sides. Then, tried and reverted: the results carrying their Speed
section (one request a move, not two; the planner route rendering speed.html's block for its own state).
It breaks the layout rule (a feature's routes import no other feature: tests/unit/test_architecture.py);
done again it needs the section's context in the kernel or a hook the app factory wires. Interleaved
against main b8ed620, 24 moves, load 14-19 (other helpers' suites), p50 / p90 in ms:

    case       figure              this tree       main
    llama      request -> speed    102.3 / 319.7   181.0 / 277.7
    llama      request -> settle   102.3 / 319.7    79.6 / 170.0   (server wait 36.2 vs 23.9)
    llama      renderer CPU         55.5 / 68.7     65.0 / 75.0
    qwen3next  request -> speed    107.0 / 180.3   161.7 / 329.1
    qwen3next  request -> settle   107.0 / 180.3    59.0 / 228.7   (server wait 50.3 vs 24.4)
    qwen3next  renderer CPU         52.7 / 72.9     59.8 / 73.6

The verdict now waits for the Speed section's CPU on the server (the results' request does both); the
Speed section is on screen 55-80 ms sooner and the page's main thread does 7-10 ms less a move. On a
quiet machine (load 2, an A/A run of main) request -> settle was 40-48 ms and the Speed slot another 45.

What stays: the slots hold the section they replace (static/app.js). Against main, 20 moves, load 7-10:
request -> settle 28.4 / 38.7 vs 27.6 / 36.4 (llama), 29.0 / 39.2 vs 28.4 / 32.2 (qwen3next); request ->
speed 64.1 vs 61.6 and 62.9 vs 57.6; renderer CPU 57.6 vs 52.9 and 59.9 vs 57.1 (layout +0.7, paint +0.8).
So the page below being laid out twice was not the cost round 8 suspected: the hold keeps the section on
screen (no collapse to a line and back) for ~3-5 ms more of the page's thread a move, laying the held
section out again in the results' frame. Style + layout + paint are ~20 ms of ~55 ms; the rest is htmx's
swap and the three XHRs' tasks.
"""

from __future__ import annotations

import argparse
import asyncio
import html as htmllib
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from hostile_server import MOE_10K as HOSTILE_MOE_10K  # noqa: E402

H100 = "nvidia-h100-sxm-80gb"
# the hostile audit's 10,000-layer MoE, without its 58 KB of padding (a real paste carries none)
MOE_10K: dict[str, Any] = {key: value for key, value in HOSTILE_MOE_10K.items() if key != "padding"}
CASES: dict[str, dict[str, str]] = {
    "llama": {"model": "meta-llama/Llama-3.1-8B", "device": H100},
    "qwen3next": {"model": "Qwen/Qwen3-Next-80B-A3B-Instruct", "device": H100, "tensor_parallel_size": "4"},
    "dsv3": {"model": "deepseek-ai/DeepSeek-V3", "device": H100, "tensor_parallel_size": "8"},
    "10k": {"config_json": json.dumps(MOE_10K), "device": H100},
}
LENGTHS = ("4096", "8192", "16384", "32768")


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def line(name: str, ms: list[float]) -> str:
    if not ms:
        return f"  {name:<16} no samples"
    return (
        f"  {name:<16} n={len(ms):<3} p50={percentile(ms, 0.5):7.1f} ms  p90={percentile(ms, 0.9):7.1f} ms"
        f"  p95={percentile(ms, 0.95):7.1f} ms"
    )


# --- in process ---------------------------------------------------------------------------------------


def asgi_request(
    loop: asyncio.AbstractEventLoop, app: Any, path: str, body: bytes, *, query: bytes = b""
) -> tuple[int, bytes]:
    """POST ``body`` as htmx does (a GET of ``query`` when ``body`` is empty, as an API client does).

    One request as its own run of ``loop``: anyio takes that run's task for the root task and stops the
    thread-pool worker with it, so each call starts a thread (~0.2-2 ms, which uvicorn's long-lived root
    task never pays). A sequence to time runs inside one coroutine instead (``asgi_call``, ``server_only``)."""
    return loop.run_until_complete(asgi_call(app, path, body, query=query))


async def asgi_call(app: Any, path: str, body: bytes, *, query: bytes = b"") -> tuple[int, bytes]:
    """``asgi_request``'s request, awaited on the running loop."""
    status, chunks = 0, []
    headers = [(b"host", b"127.0.0.1")]
    if body:
        headers += [(b"hx-request", b"true"), (b"content-type", b"application/x-www-form-urlencoded")]

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST" if body else "GET",
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": query, "root_path": "",
        "headers": headers, "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 18060),
    }  # fmt: skip
    await app(scope, receive, send)
    return status, b"".join(chunks)


STATE = re.compile(r'id="planner-state" name="state" form="command-form" value="([^"]*)"')
FOLLOW_UPS = ("/speed", "/recommend")  # what the swapped results load (templates/_partials/*_slot)


async def _move(app: Any, body: bytes) -> dict[str, float]:
    """One slider move as the page makes it: the form to /, then the results' two slots, which post
    the #planner-state the results carry. CPU seconds per request (time.process_time)."""
    start = time.process_time()
    status, html = await asgi_call(app, "/", body)
    cpu = {"/": time.process_time() - start}
    found = STATE.search(html.decode())
    assert status == 200 and found, status
    state = urllib.parse.urlencode({"state": htmllib.unescape(found.group(1))}).encode()
    for path in FOLLOW_UPS:
        start = time.process_time()
        status, _ = await asgi_call(app, path, state)
        cpu[path] = time.process_time() - start
        assert status in (200, 422), (path, status)  # 422: an answer the page shows (its slot swaps it)
    return cpu


def server_only(cases: list[str], requests: int) -> None:
    from app.web.app import create_app, warm_up

    app = create_app()
    warm_up(app.state.renderer)
    print("server CPU per slider move, in process (time.process_time)")
    asyncio.run(_server_only(app, cases, requests))  # one root task: the thread pool's workers are reused


async def _server_only(app: Any, cases: list[str], requests: int) -> None:
    for name in cases:
        bodies = [
            urllib.parse.urlencode({"v": "1", **CASES[name], "max_model_len": LENGTHS[i % 4]}).encode()
            for i in range(requests)
        ]
        for body in bodies[:4]:  # warm: first render of each template, the catalog's caches
            await _move(app, body)
        moves = [await _move(app, body) for body in bodies]
        print(f"{name}:")
        for path in ("/", *FOLLOW_UPS):
            print(line(f"CPU {path}", [m[path] * 1000 for m in moves]))
        print(line("CPU, whole move", [sum(m.values()) * 1000 for m in moves]))
        api = []
        for body in bodies:  # the same inputs as GET /api/estimate (its JSON encoding included)
            start = time.process_time()
            status, _ = await asgi_call(app, "/api/estimate", b"", query=body)
            api.append((time.process_time() - start) * 1000)
            assert status == 200, status
        print(line("CPU /api/estimate", api))


# --- in Chromium --------------------------------------------------------------------------------------

CLOCK = """() => {
  window.__req = []; window.__key = []; window.__wait = []; window.__swap = []; window.__k = 0; window.__r = 0; window.__t0 = {};
  window.__part = {'speed-slot': [], 'recommend-slot': []}; window.__done = 0; window.__frame = [];
  window.__speed = []; window.__s0 = 0;
  document.addEventListener('keydown', () => { window.__k = performance.now(); }, true);
  document.body.addEventListener('htmx:beforeRequest', (e) => {
    const id = e.detail.elt && e.detail.elt.id;
    if (id === 'planner-form') { window.__r = performance.now(); window.__s0 = window.__r; }
    if (id in window.__part) { window.__t0[id] = performance.now(); } });
  document.body.addEventListener('htmx:beforeSwap', (e) => {
    const id = e.detail.elt && e.detail.elt.id;
    if (id in window.__part && window.__t0[id]) {
      window.__part[id].push(performance.now() - window.__t0[id]); window.__t0[id] = 0;
      if (id === 'recommend-slot') { window.__done += 1; } } });
  document.body.addEventListener('htmx:afterSettle', (e) => {
    if (window.__s0 && document.querySelector('#results #speed:not([inert])')) {
      window.__speed.push(performance.now() - window.__s0); window.__s0 = 0; }
    if (!(e.detail.target && e.detail.target.id === 'results') || !window.__r) { return; }
    const now = performance.now();
    window.__req.push(now - window.__r); window.__r = 0;
    const xhr = performance.getEntriesByType('resource').filter(
      (r) => r.initiatorType === 'xmlhttprequest' && new URL(r.name).pathname === '/').pop();
    if (xhr) { window.__wait.push(xhr.responseStart - xhr.requestStart);
               window.__swap.push(now - xhr.responseEnd); }
    performance.clearResourceTimings();
    if (window.__k) { window.__key.push(now - window.__k); window.__k = 0; }
    requestAnimationFrame(() => setTimeout(() => { window.__frame.push(performance.now() - now); }, 0));
    window.__settled = (window.__settled || 0) + 1; });
}"""


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _serve(port: int, tree: Path = ROOT) -> subprocess.Popen[bytes]:
    """uvicorn on ``port`` serving ``tree``'s app (its templates and static files: the server's cwd)."""
    with socket.socket() as sock:
        if sock.connect_ex(("127.0.0.1", port)) == 0:
            raise SystemExit(f"port {port} is in use: pick another with --port")
    # The venv's editable install maps app.templates, app.static and the spec folders to the tree it was
    # installed from, whichever ``app`` is imported: without its finder the tree's own folders are read
    # (app/resources.py's checkout fallback). Until round 9 a --vs server ran its own Python on this
    # tree's templates and static files, so a template or JavaScript change was on both sides.
    code = (
        "import sys; sys.meta_path[:] = [f for f in sys.meta_path "
        "if not getattr(f, '__module__', '').startswith('__editable__')]; "
        "sys.path.insert(0, '.'); import uvicorn; from app.web.app import create_app; "
        f"uvicorn.run(create_app(), host='127.0.0.1', port={port}, log_level='warning')"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=tree)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).read()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("uvicorn did not start")


# The page's main-thread CPU per move (all three swaps and their frames), from a Chromium trace: the thread
# time (tdur) of the renderer main thread's tasks between the marks each move sets (console.timeStamp). Thread
# time, not wall clock, so the other processes on a shared machine hardly move it: the figure to compare trees
# by. Its parts, by trace event (nested in the tasks; the rest is htmx, app.js, parsing and the XHR's tasks):
TRACE_CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline"]
RENDERER_PARTS = {"  style": ("UpdateLayoutTree",), "  layout": ("Layout",), "  paint": ("PrePaint", "Paint")}


def renderer_cpu(trace: bytes) -> dict[tuple[int, int], dict[str, list[float]]]:
    """Per renderer main thread (pid, tid) that set marks: each move's CPU ms, in total and by part."""
    events = sorted((e for e in json.loads(trace)["traceEvents"] if "ts" in e), key=lambda e: float(e["ts"]))
    moves: dict[tuple[int, int], dict[str, list[float]]] = {}
    open_: dict[tuple[int, int], dict[str, float]] = {}
    for event in events:
        thread = (event.get("pid", 0), event.get("tid", 0))
        if event.get("name") == "TimeStamp":
            mark = event.get("args", {}).get("data", {}).get("message")
            if mark == "slider-move":
                open_[thread] = dict.fromkeys(("renderer CPU", *RENDERER_PARTS), 0.0)
            elif mark == "slider-moved" and thread in open_:
                for name, ms in open_.pop(thread).items():
                    moves.setdefault(thread, {}).setdefault(name, []).append(ms)
            continue
        sums = open_.get(thread)
        if sums is None or event.get("ph") != "X" or "tdur" not in event:
            continue
        if event["name"] == "RunTask":
            sums["renderer CPU"] += event["tdur"] / 1000
        for part, names in RENDERER_PARTS.items():
            if event["name"] in names:
                sums[part] += event["tdur"] / 1000
    return moves


# Playwright polls a wait_for_function every animation frame by default: ~26 extra frames a move, each a
# lifecycle update of ~1 ms on the page's main thread, which "renderer CPU" counted as the page's own work
# (a trace of 12 moves, 2026-12-02). Polling on a timer instead leaves the page's frames to the page; the
# figures are the page's own timestamps, so the wait's granularity is not in them.
POLL_MS = 20


class Slider:
    """One tree's page in Chromium, moved one key press at a time; its samples in the page."""

    def __init__(self, chromium: Any, port: int, server: subprocess.Popen[bytes], case: str) -> None:
        from app.web.inputs.params import pack_config_json

        query = dict(CASES[case], max_model_len="16384")
        if "config_json" in query:
            query["config_json"] = pack_config_json(query["config_json"])
        self.server, self.moves = server, 0
        self.context = chromium.new_context(viewport={"width": 1366, "height": 900})
        self.page = self.context.new_page()
        self.page.goto(f"http://127.0.0.1:{port}/?{urllib.parse.urlencode(query)}")
        self.page.evaluate(CLOCK)
        self.slider = self.page.locator("#f-mml-slider")
        self.slider.focus()
        self.cpu: list[float] = []
        self.work: dict[str, list[float]] = {}

    def move(self) -> None:
        settled, done = self.page.evaluate("() => [window.__settled || 0, window.__done]")
        key = "ArrowLeft" if (self.moves // 3) % 2 == 0 else "ArrowRight"
        self.moves += 1
        before = _cpu_seconds(self.server.pid)
        self.page.evaluate("() => console.timeStamp('slider-move')")  # the trace's mark (renderer_cpu)
        self.slider.focus()
        self.slider.press(key)
        self.page.wait_for_function(
            "n => (window.__settled || 0) > n", arg=settled, timeout=30_000, polling=POLL_MS
        )
        # the move's follow-ups: the Speed slot (on load) and the recommendation (load delay:400ms)
        self.page.wait_for_function("n => window.__done > n", arg=done, timeout=30_000, polling=POLL_MS)
        self.page.wait_for_function(
            "n => window.__frame.length >= n", arg=settled + 1, timeout=30_000, polling=POLL_MS
        )
        self.cpu.append((_cpu_seconds(self.server.pid) - before) * 1000)
        self.page.evaluate("() => console.timeStamp('slider-moved')")

    def samples(self) -> dict[str, list[float]]:
        req, keyed, parts, wait, swap, frame, speed = self.page.evaluate(
            "() => [window.__req, window.__key, window.__part, window.__wait, window.__swap, window.__frame,"
            " window.__speed]"
        )
        self.context.close()
        return {
            "request -> settle": req, "key -> settle": keyed, "  server wait": wait, "  swap": swap,
            "settle -> frame": frame, "request -> speed": speed, "/speed slot": parts["speed-slot"],
            "/recommend slot": parts["recommend-slot"], "server CPU": self.cpu, **self.work,
        }  # fmt: skip


NOTES = {
    "  server wait": "  (request sent -> first byte: the server)",
    "  swap": "  (last byte -> settled: Chromium and htmx)",
    "settle -> frame": "  (style, layout, paint)",
    "request -> speed": "  (the new Speed section settled: with the results, or by its slot)",
    "server CPU": "  (all three requests; 10 ms clock ticks)",
    "renderer CPU": "  (the page's main thread, whole move: thread time in a trace)",
}


def browser(cases: list[str], moves: int, port: int, vs: Path | None) -> None:
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS

    trees = [ROOT] if vs is None else [ROOT, vs]
    servers: list[subprocess.Popen[bytes]] = []
    try:
        for offset, tree in enumerate(trees):
            servers.append(_serve(port + offset, tree))
        with sync_playwright() as pw:
            chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for name in cases:
                sliders = [Slider(chromium, port + i, server, name) for i, server in enumerate(servers)]
                chromium.start_tracing(categories=TRACE_CATEGORIES)
                for _ in range(moves):
                    for slider in sliders:  # interleaved: A, B, A, B, ... on the same load
                        slider.move()
                traced = list(renderer_cpu(chromium.stop_tracing()).values())
                if len(traced) == len(sliders):  # the pages' main threads, in the order they first moved
                    for slider, work in zip(sliders, traced, strict=True):
                        slider.work = work
                results = [slider.samples() for slider in sliders]
                print(f"{name}:" + ("" if vs is None else f"  (A: {ROOT}, B: {vs}; interleaved)"))
                for figure in results[0]:
                    for tag, result in zip("AB", results, strict=False):
                        label = figure if vs is None else f"{tag} {figure}"
                        print(line(label, result[figure]) + NOTES.get(figure, ""))
            chromium.close()
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--moves", type=int, default=30)
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--port", type=int, default=18060)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--server-only", action="store_true")
    parser.add_argument("--vs", type=Path, help="a second tree, measured interleaved with this one (A/B)")
    args = parser.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    unknown = set(cases) - set(CASES)
    if unknown:
        raise SystemExit(f"--cases: unknown {sorted(unknown)} (one of {', '.join(CASES)})")
    if args.server_only:
        server_only(cases, args.requests)
    else:
        browser(cases, args.moves, args.port, args.vs)


if __name__ == "__main__":
    main()
