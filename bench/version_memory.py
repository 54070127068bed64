"""Memory held after many distinct long vLLM version strings (issue 19 "Unbounded memory").

    .venv/bin/python bench/version_memory.py [--port 8140] [--count 40] [--size 1048576]

Starts `kv-planner serve --workers 1` on the port, warms it with one ordinary start-up log, then posts
``count`` start-up logs to /api/diagnose whose `vLLM API server version` is a distinct string of
``size`` characters (and the same strings as `vllm_version` to /api/estimate), and prints the
worker's resident memory (VmRSS) before and after, the growth, and every status code seen.
The goal (issue 19) is a growth under 60 MiB for 40 strings of 1 MB, and no 5xx.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "tests" / "data" / "logs" / "v1_0.19.0_h100_llama31_8b.log"
MIB = 2**20


def rss_bytes(pid: int) -> int:
    """VmRSS of the process and its children (uvicorn runs the app in the process it was started as)."""
    total = 0
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    for p in pids:
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) * 1024
    return total


def post(url: str, body: bytes, content_type: str) -> int:
    request = urllib.request.Request(url, data=body, headers={"content-type": content_type}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as exc:
        exc.read()
        return exc.code


def wait_up(base: str) -> None:
    for _ in range(200):
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("server did not start")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8140)
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--size", type=int, default=2**20)
    args = parser.parse_args()
    base = f"http://127.0.0.1:{args.port}"
    log = LOG.read_text(encoding="utf-8")
    server = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "kv-planner"), "serve", "--port", str(args.port), "--workers", "1"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        wait_up(base)
        statuses: Counter[int] = Counter()
        for _ in range(3):  # warm-up: imports, template and catalog caches
            statuses[post(f"{base}/api/diagnose", log.encode(), "text/plain")] += 1
        time.sleep(1)
        before = rss_bytes(server.pid)
        started = time.perf_counter()
        for i in range(args.count):
            version = f"0.19.{i}" + "".join("0123456789abcdef"[(i + k) % 16] for k in range(args.size))
            body = log.replace("version 0.19.0", f"version {version}").encode()
            statuses[post(f"{base}/api/diagnose", body, "text/plain")] += 1
            payload = {
                "model": "meta-llama/Llama-3.1-8B-Instruct",
                "device": "nvidia-h100-sxm-80gb",
                "vllm_version": version,
            }
            statuses[post(f"{base}/api/estimate", json.dumps(payload).encode(), "application/json")] += 1
        elapsed = time.perf_counter() - started
        time.sleep(1)
        after = rss_bytes(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(
        f"{args.count} distinct version strings of {args.size:,} characters, each to /api/diagnose and /api/estimate"
    )
    print(
        f"worker RSS before {before / MIB:.1f} MiB, after {after / MIB:.1f} MiB: growth {(after - before) / MIB:.1f} MiB"
    )
    print(
        f"server time for the {2 * args.count} requests: {elapsed:.1f} s; statuses {dict(sorted(statuses.items()))}"
    )
    if any(code >= 500 for code in statuses):
        sys.exit(1)


if __name__ == "__main__":
    main()
