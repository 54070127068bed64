"""Slow clients against a real `kv-planner serve` (2 workers, loopback): how long one holds a connection.

    .venv/bin/python bench/hostile_slow.py                 # this checkout
    .venv/bin/python bench/hostile_slow.py --root /work/main   # another checkout's app, for a baseline

- S1 a request body trickled at 4 bytes/s (a POST /api/diagnose of 10,000 declared bytes);
- S2 a request head trickled at 4 bytes/s (a header line that never ends);
- S3 a connection that sends nothing at all;
- S4 600 slow clients at once (200 of each kind above, from 127.0.0.2, another client as the server sees
  it) while an ordinary client asks for /healthz every 0.2 s from 127.0.0.1: its statuses and its p99.

For S1-S3: the seconds until the server answered or closed the connection, and what it answered
(``held > N s`` when it still held it at the bench's own limit). The goal: no anonymous request holds a
connection for a minute, and the ordinary client gets no 503 while the slow ones are connected.
All inputs are our own.
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "load"))
import hostile_server as hs  # noqa: E402  (start_server, start_hub, request)
import run as load  # noqa: E402  (bench/load/run.py: free_port, stop_server)

HOLD_LIMIT_S = 90.0  # the bench stops waiting here: a connection still held is reported as "held > 90 s"
TRICKLE_EVERY_S = 0.25  # one byte every 0.25 s: 4 bytes/s
SLOW_CLIENTS_PER_KIND = 200  # 600 in all: more than the 2 workers x 256 connections
S4_SECONDS = 20.0
SLOW_SOURCE = "127.0.0.2"
BODY_HEAD = (
    b"POST /api/diagnose HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 10000\r\n\r\n"
)
HEAD_START = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "


def _connect(port: int, source: str = "") -> socket.socket:
    conn = socket.create_connection(("127.0.0.1", port), timeout=HOLD_LIMIT_S, source_address=(source, 0))
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return conn


def _answer(conn: socket.socket) -> bytes:
    """What the server sent before it closed (non-blocking read of what is there)."""
    conn.setblocking(False)
    data = b""
    try:
        while chunk := conn.recv(65536):
            data += chunk
    except OSError:
        pass
    return data


def _closed(conn: socket.socket) -> bool:
    """The server closed (or answered on) this connection."""
    import select

    readable, _, _ = select.select([conn], [], [], 0)
    return bool(readable)


def hold(port: int, opening: bytes, trickle: bytes, source: str = "") -> tuple[float, str]:
    """Send ``opening``, then ``trickle`` one byte every TRICKLE_EVERY_S until the server answers or closes."""
    conn = _connect(port, source)
    start = time.monotonic()
    try:
        if opening:
            conn.sendall(opening)
        sent = 0
        while time.monotonic() - start < HOLD_LIMIT_S:
            if _closed(conn):
                break
            if trickle:
                try:
                    conn.sendall(trickle[sent % len(trickle) : sent % len(trickle) + 1])
                except OSError:
                    break
                sent += 1
            time.sleep(TRICKLE_EVERY_S)
        else:
            return time.monotonic() - start, f"held > {HOLD_LIMIT_S:g} s"
        seconds = time.monotonic() - start
        raw = _answer(conn)
        status = raw.split(b"\r\n", 1)[0].decode("latin-1") if raw else "closed, no answer"
        return seconds, status
    finally:
        conn.close()


def s4(port: int) -> str:
    """600 slow clients, and an ordinary one's statuses meanwhile."""
    stop = threading.Event()
    kinds = [(BODY_HEAD, b"y"), (HEAD_START, b"a"), (b"", b"")]
    threads = [
        threading.Thread(target=lambda k=kind: _slow_until(port, *k, stop), daemon=True)
        for kind in kinds
        for _ in range(SLOW_CLIENTS_PER_KIND)
    ]
    for thread in threads:
        thread.start()
    time.sleep(2.0)  # all connected
    statuses: dict[int, int] = {}
    seconds: list[float] = []
    end = time.monotonic() + S4_SECONDS
    while time.monotonic() < end:
        status, _, took = hs.request(port, "GET", "/healthz", timeout=30)
        statuses[status] = statuses.get(status, 0) + 1
        seconds.append(took)
        time.sleep(0.2)
    stop.set()
    seconds.sort()
    p99 = seconds[min(len(seconds) - 1, int(0.99 * len(seconds)))] * 1000
    return f"ordinary client: {dict(sorted(statuses.items()))}, p99 {p99:.0f} ms over {len(seconds)} requests"


def _slow_until(port: int, opening: bytes, trickle: bytes, stop: threading.Event) -> None:
    """One slow client that reconnects whenever the server lets it go, until ``stop``."""
    while not stop.is_set():
        try:
            conn = _connect(port, SLOW_SOURCE)
        except OSError:
            time.sleep(0.5)
            continue
        try:
            if opening:
                conn.sendall(opening)
            while not stop.is_set() and not _closed(conn):
                if trickle:
                    conn.sendall(trickle)
                time.sleep(TRICKLE_EVERY_S)
        except OSError:
            pass
        finally:
            conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose app is served")
    parser.add_argument("--only", default="", help="only the cases whose name contains this")
    args = parser.parse_args()
    hub = hs.start_hub()
    port = load.free_port()
    with tempfile.TemporaryDirectory() as cache:
        proc = hs.start_server(port, hub, cache, root=args.root)
        try:
            cases = {
                "S1 body trickled at 4 B/s": lambda: hold(port, BODY_HEAD, b"y"),
                "S2 head trickled at 4 B/s": lambda: hold(port, HEAD_START, b"a"),
                "S3 a connection that sends nothing": lambda: hold(port, b"", b""),
            }
            for name, case in cases.items():
                if args.only in name:
                    seconds, said = case()
                    print(f"{name:40s} {seconds:6.1f} s  {said}", flush=True)
            if args.only in "S4 600 slow clients":
                print(f"{'S4 600 slow clients':40s} {s4(port)}", flush=True)
        finally:
            load.stop_server(proc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
