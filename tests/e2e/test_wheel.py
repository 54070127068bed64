"""The wheel as a user installs it: `pip wheel .`, a fresh venv outside the checkout, `kv-planner serve`
from an unrelated directory, driven over HTTP.

Dependencies come from pip's usual sources (its cache after `make`), pinned by requirements.lock.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import _free_port

pytestmark = [pytest.mark.e2e, pytest.mark.install]

ROOT = Path(__file__).resolve().parents[2]
# top-level folder in the repository -> its package in the wheel (pyproject's package-dir)
DATA_FOLDERS = {
    "templates": "app/templates",
    "static": "app/static",
    "model_specs": "app/model_specs",
    "device_specs": "app/device_specs",
    "docs": "app/docs",
    "app/i18n": "app/i18n",
}


def _run(args: list[str], cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def _get(url: str) -> tuple[int, bytes, dict[str, str]]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.read(), {k.lower(): v for k, v in response.headers.items()}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheelhouse")
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(out)], cwd=out)
    (found,) = out.glob("kv_planner-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("fresh") / "venv"
    _run([sys.executable, "-m", "venv", str(where)], cwd=where.parent)
    pip = [str(where / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    _run([*pip, "-c", str(ROOT / "requirements.lock"), str(wheel)], cwd=where.parent)
    return where


@pytest.fixture(scope="module")
def served(venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    elsewhere = tmp_path_factory.mktemp("unrelated")  # no templates/, static/ … beside the process
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.Popen(
        [str(venv / "bin" / "kv-planner"), "serve", "--port", str(port), "--workers", "1"],
        cwd=elsewhere,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            try:
                if _get(base + "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the installed kv-planner did not answer /healthz"
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_the_wheel_carries_every_data_file_of_the_repository(wheel: Path) -> None:
    tracked = _run(["git", "ls-files", *DATA_FOLDERS], cwd=ROOT).split()
    expected = set()
    for path in tracked:
        for folder, package in DATA_FOLDERS.items():
            if path.startswith(folder + "/") and not path.endswith(".py"):
                expected.add(package + path[len(folder) :])
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
    assert expected - names == set()
    # the 80 model specs, the device catalog, both rendered docs and the htmx licence among them
    assert sum(n.startswith("app/model_specs/") and n.endswith(".yaml") for n in names) >= 80
    assert {
        "app/device_specs/devices.yaml",
        "app/docs/accuracy.md",
        "app/static/vendor/htmx-LICENSE",
    } <= names


def test_the_distribution_and_its_command_are_kv_planner(wheel: Path, venv: Path) -> None:
    """Not `kvplan`: that name is an unrelated project's on PyPI (issue 26)."""
    assert wheel.name == "kv_planner-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as whl:
        metadata = whl.read("kv_planner-0.1.0.dist-info/METADATA").decode()
        entry_points = whl.read("kv_planner-0.1.0.dist-info/entry_points.txt").decode()
    assert "\nName: kv-planner\n" in metadata
    assert "kv-planner = app.cli:main" in entry_points and "kvplan =" not in entry_points
    assert (venv / "bin" / "kv-planner").is_file() and not (venv / "bin" / "kvplan").exists()


def test_the_installed_app_imports_from_the_venv_not_the_checkout(venv: Path, tmp_path: Path) -> None:
    code = "import app, app.resources as r; print(app.__file__); print(r.directory(r.Data.TEMPLATES))"
    out = _run([str(venv / "bin" / "python"), "-c", code], cwd=tmp_path).split("\n")
    assert out[0].startswith(str(venv)) and out[1].startswith(str(venv)), out
    assert not out[1].startswith(str(ROOT))


def test_installed_kv_planner_serves_the_page_its_static_files_and_the_api(served: str) -> None:
    status, body, _ = _get(served + "/?v=1&model=meta-llama/Llama-3.1-8B&device=h100&max_model_len=8192")
    page = body.decode()
    assert status == 200 and 'id="verdict"' in page
    assets = re.findall(r'(?:href|src)="(/static/[^"?]+)', page)
    assert "/static/app.css" in assets and any("htmx" in a for a in assets), assets
    for asset in assets:
        status, content, headers = _get(served + asset)
        assert status == 200 and len(content) > 100, asset
    # the spec files came along: Llama-3.1-8B bf16 weights = 8,030,261,248 params x 2 bytes, and
    # KV per token = 2 (K, V) x 32 layers x 8 KV heads x 128 head dim x 2 bytes = 131,072
    status, body, headers = _get(served + "/api/estimate?model=meta-llama/Llama-3.1-8B&device=h100")
    assert status == 200 and headers["content-type"].startswith("application/json")
    result = json.loads(body)
    assert result["weights_bytes"] == 8_030_261_248 * 2
    assert result["kv_bytes_per_token"] == 131_072
    # a rendered doc page and the Chinese catalog are package data too
    status, body, _ = _get(served + "/accuracy")
    assert status == 200 and b"<table" in body
    status, body, _ = _get(served + "/?lang=zh")
    assert status == 200 and "显存" in body.decode()


def test_the_images_start_and_health_commands_work(venv: Path, tmp_path: Path) -> None:
    """The Dockerfile's CMD and HEALTHCHECK, run as written against this wheel (no container here)."""
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    (cmd,) = [json.loads(line[4:]) for line in dockerfile.splitlines() if line.startswith("CMD ")]
    (health,) = [line for line in dockerfile.splitlines() if line.startswith("HEALTHCHECK ")]
    health_cmd = json.loads(health.split(" CMD ", 1)[1])
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(
        PATH=f"{venv / 'bin'}:{env['PATH']}",
        KVPLAN_PORT=str(port),
        KVPLAN_ROOT_PATH="/tools/kvplan",
        KVPLAN_WORKERS="1",
    )
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while subprocess.run(health_cmd, env=env, capture_output=True, timeout=30).returncode != 0:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "the HEALTHCHECK command never succeeded"
            time.sleep(0.3)
        # the prefix came from the environment: links carry it (nginx strips it before the app)
        page = _get(f"http://127.0.0.1:{port}/?v=1")[1].decode()
        assert 'href="/tools/kvplan/static/app.css' in page
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    # the server listened on every interface, as a container must
    assert f"http://0.0.0.0:{port}" in out, out
