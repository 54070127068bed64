"""Suite-wide settings.

Hypothesis explores new random examples on every run, which is what we want while developing; in CI
(``CI`` set) the examples are derived from each test's name instead, so a submission's result does not
depend on the draw. A property failure found locally is fixed, not re-rolled.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TypeVar

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

T = TypeVar("T")


def in_own_thread(fn: Callable[[], T]) -> T:
    """Run ``fn`` in a fresh thread and return its result (or raise its exception).

    Playwright's sync API leaves an event loop running in the main thread once the e2e tests have
    run, and asyncio refuses to start or drive a second loop in a thread that already runs one.
    """
    result: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            result.append(fn())
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return result[0]
