"""The container image: its Dockerfile's contract (always), and a real build and run where a
container builder works on the machine (skipped, saying why, where none does).

The image's own start and health commands are also run outside a container, from the installed
wheel, in tests/e2e/test_wheel.py (test_the_images_start_and_health_commands_work).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import tomllib
import urllib.request
import uuid
from pathlib import Path

import pytest

from tests.e2e.conftest import _free_port

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")
PREFIX = "/tools/kvplan"


def _instruction(name: str) -> list[str]:
    joined = DOCKERFILE.replace("\\\n", " ")
    return [line.split(None, 1)[1] for line in joined.splitlines() if line.startswith(name + " ")]


def test_dockerfile_builds_the_wheel_from_every_packaged_folder() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapped = set(pyproject["tool"]["setuptools"]["package-dir"].values())
    copied = {args.split()[0] for args in _instruction("COPY") if "--from" not in args}
    assert mapped | {"app", "pyproject.toml"} <= copied, copied
    assert all(not (ROOT / f).is_dir() or f in copied for f in mapped)


def test_dockerfile_keeps_its_promises() -> None:
    bases = [args.split()[0] for args in _instruction("FROM")]
    # a CPython with the cookie fix (3.13: docs/security.md, "The Python floor")
    assert re.search(r"python:3\.13-slim", DOCKERFILE) and all(b == "${PYTHON_IMAGE}" for b in bases)
    # the wheel, with the locked versions
    (install,) = [a for a in _instruction("RUN") if "pip install" in a]
    assert "-c /tmp/requirements.lock /wheels/kv_planner-*.whl" in install
    # a non-root user
    (user,) = _instruction("USER")
    assert user.split(":")[0] not in ("0", "root")
    # health on /healthz, the prefix from the environment
    (health,) = _instruction("HEALTHCHECK")
    assert "/healthz" in health
    (cmd,) = _instruction("CMD")
    script = json.loads(cmd)[2]
    assert '--root-path "${KVPLAN_ROOT_PATH}"' in script and script.startswith("exec kv-planner serve")


def _builder() -> str | None:
    for tool in ("docker", "podman"):
        path = shutil.which(tool)
        if path and subprocess.run([path, "info"], capture_output=True, timeout=30).returncode == 0:
            return path
    return None


@pytest.mark.e2e
@pytest.mark.install
def test_the_image_builds_runs_as_non_root_and_serves_under_a_prefix() -> None:
    builder = _builder()
    if builder is None:
        pytest.skip("no working container builder here (`docker info` / `podman info` fail): image not built")
    tag = f"kv-planner-test:{uuid.uuid4().hex[:8]}"
    build = subprocess.run(
        [builder, "build", "-t", tag, str(ROOT)], capture_output=True, text=True, timeout=900
    )
    if build.returncode != 0 and re.search(r"pull|resolve|registry|network|dial tcp", build.stderr, re.I):
        pytest.skip(f"the builder cannot fetch the base image here: {build.stderr.strip()[-300:]}")
    assert build.returncode == 0, build.stderr[-3000:]
    port = _free_port()
    name = f"kv-planner-test-{uuid.uuid4().hex[:8]}"
    run = [
        builder,
        "run",
        "-d",
        "--name",
        name,
        "-p",
        f"127.0.0.1:{port}:8000",
        "-e",
        f"KVPLAN_ROOT_PATH={PREFIX}",
    ]
    subprocess.run([*run, tag], check=True, capture_output=True, timeout=60)
    try:
        user = subprocess.run([builder, "exec", name, "id", "-u"], capture_output=True, text=True, timeout=30)
        assert user.stdout.strip() == "10001"
        deadline = time.monotonic() + 90
        while True:
            state = subprocess.run(
                [builder, "inspect", "-f", "{{.State.Health.Status}}", name], capture_output=True, text=True
            ).stdout.strip()
            if state == "healthy":
                break
            assert state != "unhealthy" and time.monotonic() < deadline, state
            time.sleep(1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/?v=1", timeout=10) as response:
            page = response.read().decode()
        assert f'href="{PREFIX}/static/app.css' in page
    finally:
        subprocess.run([builder, "rm", "-f", name], capture_output=True, timeout=60)
        subprocess.run([builder, "rmi", "-f", tag], capture_output=True, timeout=60)
