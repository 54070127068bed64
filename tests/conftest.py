"""Suite-wide settings.

Hypothesis explores new random examples on every run, which is what we want while developing; in CI
(``CI`` set) the examples are derived from each test's name instead, so a submission's result does not
depend on the draw. A property failure found locally is fixed, not re-rolled.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
