"""Schemathesis against the app's own OpenAPI schema (in process, bounded): no 5xx, no traceback.

Every operation in /openapi.json gets generated requests — valid bodies from the schema and
invalid ones (wrong types, out-of-bounds numbers, unknown keys, odd strings). The API may refuse
them (4xx) but must never fail (5xx), leak a traceback, or drop the security headers.

Bounded: ``EXAMPLES`` generated cases per operation (the JSON endpoints take ~2 ms each), so the
whole module runs in well under 30 s. The case count is printed (``-s``) and asserted at the end.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from app.web.app import create_app
from app.web.security import SECURITY_HEADERS

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app())

EXAMPLES = 50
SLOW_EXAMPLES = 15  # /api/workload runs a paged-allocation simulation per case
SLOW = "/api/workload"
# operations whose fuzzing must really have happened (hypothesis may stop early without failing)
MUST_RUN = ("POST /api/estimate", "POST /api/recommend")


@schemathesis.check
def no_traceback_and_headers(ctx: Any, response: Any, case: Any) -> bool | None:
    text = response.text if isinstance(response.text, str) else ""
    assert "Traceback" not in text, "a traceback reached the client"
    assert 'File "' not in text, "a stack frame reached the client"
    for name, value in SECURITY_HEADERS.items():
        assert response.headers.get(name.lower()) in (value, [value]), f"missing {name}"
    assert "access-control-allow-origin" not in response.headers
    return None


def _settings(examples: int) -> Any:
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


@pytest.fixture
def ran() -> Iterator[list[str]]:
    """The cases of this test's one operation; on teardown, a fuzzed operation of MUST_RUN must have
    had at least half its examples (each test checks its own count: no shared counter, no order)."""
    seen: list[str] = []
    yield seen
    operation = seen[0] if seen else ""
    print(f"\nschemathesis: {operation} {len(seen)} cases")
    if operation in MUST_RUN:
        assert len(seen) >= EXAMPLES // 2, (operation, len(seen))


def _call(case: Any, ran: list[str]) -> None:
    ran.append(f"{case.method} {case.path}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        case.call_and_validate(checks=[not_a_server_error, no_traceback_and_headers])


@schema.exclude(path=SLOW).parametrize()
@_settings(EXAMPLES)
def test_no_server_error(case: Any, ran: list[str]) -> None:
    _call(case, ran)


@schema.include(path=SLOW).parametrize()
@_settings(SLOW_EXAMPLES)
def test_no_server_error_slow_operations(case: Any, ran: list[str]) -> None:
    _call(case, ran)
