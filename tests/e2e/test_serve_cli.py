"""`kv-planner serve` as deployed: the real CLI, two worker processes sharing the port, under a prefix."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.cli import default_workers
from tests.e2e.conftest import PREFIX, _free_port

pytestmark = pytest.mark.e2e


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, dict[str, str]]:
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read().decode(), {k.lower(): v for k, v in response.headers.items()}


def test_two_workers_under_a_prefix_serve_pages_fragments_and_the_api() -> None:
    port = _free_port()
    base = f"http://127.0.0.1:{port}{PREFIX}"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "app.cli",
            "serve",
            "--port",
            str(port),
            "--workers",
            "2",
            "--root-path",
            PREFIX,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            try:
                if _get(base + "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "kv-planner serve did not answer /healthz"
            time.sleep(0.2)
        # the workers learnt the prefix from the parent (KVPLAN_ROOT_PATH): every link carries it
        status, page, _ = _get(base + "/?v=1&max_model_len=32768")
        assert status == 200 and f'href="{PREFIX}/static/app.css' in page
        status, fragment, headers = _get(base + "/?v=1&max_model_len=16384", {"HX-Request": "true"})
        assert status == 200 and "<html" not in fragment and 'id="verdict"' in fragment
        assert headers["hx-replace-url"] == f"{PREFIX}/?v=1&max_model_len=16384"
        assert f'hx-post="{PREFIX}/part/curve"' in fragment
        # 16 clients at once: all answered (the balanced accept hands connections to both workers)
        with ThreadPoolExecutor(16) as pool:
            statuses = list(
                pool.map(lambda i: _get(f"{base}/api/estimate?max_model_len={1024 * (i + 1)}")[0], range(16))
            )
        assert statuses == [200] * 16
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    # two worker processes started, and the access log has a line per request
    assert out.count("Started server process") >= 2, out
    assert '"GET /tools/kvplan/api/estimate?max_model_len=1024 HTTP/1.1" 200' in out


def test_default_workers_is_one_per_cpu_at_most_four(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for cpus, workers in ((None, 1), (1, 1), (2, 2), (3, 3), (16, 4), (128, 4)):
        monkeypatch.setattr(os, "cpu_count", lambda cpus=cpus: cpus)
        assert default_workers() == workers, cpus
