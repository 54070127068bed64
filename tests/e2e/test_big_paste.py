"""A 50 MB paste through a real server: the client gets the 413 naming the field, not a reset connection."""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit

import pytest

from tests.e2e.conftest import LiveServer

pytestmark = pytest.mark.e2e

FIFTY_MB = 50 * 2**20


def _post(live: LiveServer, path: str, body: bytes, content_type: str) -> tuple[int, str]:
    parts = urlsplit(live.origin)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    conn.request("POST", path, body=body, headers={"Content-Type": content_type})
    response = conn.getresponse()
    return response.status, response.read().decode("utf-8", "replace")


def test_fifty_megabyte_log_gets_a_clear_413(live_server: LiveServer) -> None:
    status, text = _post(live_server, "/api/diagnose", b"x" * FIFTY_MB, "text/plain")
    assert status == 413
    assert "body" in text and "6 MiB" in text


def test_fifty_megabyte_doctor_form_gets_a_clear_413(live_server: LiveServer) -> None:
    body = b"log=" + b"x" * FIFTY_MB
    status, text = _post(live_server, "/doctor", body, "application/x-www-form-urlencoded")
    assert status == 413
    assert "6 MiB" in text
