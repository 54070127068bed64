"""Read a pasted vLLM start-up log into typed facts (the Prometheus side is :mod:`app.core.logs.metrics`).

Pure parsing, no I/O. Every template recognised here is quoted in the reference
(``/work/shared/reference/vllm-accounting.md``): §4 for log lines and errors, §8 for metrics,
§9 for the vllm-ascend variants. Sizes are integer bytes (``round(GiB × 2**30)``; the old
"GB" lines are GiB too, reference §4.1); the printed line is kept as :class:`Evidence` so a
reader can check every number against the paste.

Neither parser raises on any string (fuzz-tested), except that a start-up log longer than
:data:`MAX_LOG_CHARS` is refused with a :class:`PlannerError`.

The package: :mod:`.facts` (the typed facts), :mod:`.accumulator` (one run with precedence),
:mod:`.memory`, :mod:`.failures` and :mod:`.config` (the handlers by topic), :mod:`.rules` (the table)
and :mod:`.parser` (the loop).
"""

from app.core.logs.startup.config import _CONFIG_KEYS
from app.core.logs.startup.facts import (
    MAX_ERROR_CHARS,
    MAX_EVIDENCE_CHARS,
    MAX_LINE_CHARS,
    MAX_VALUE_CHARS,
    ErrorKind,
    Evidence,
    LogFacts,
)
from app.core.logs.startup.parser import parse_startup_log
from app.core.logs.startup.rules import RULES

__all__ = [
    "MAX_ERROR_CHARS",
    "MAX_EVIDENCE_CHARS",
    "MAX_LINE_CHARS",
    "MAX_VALUE_CHARS",
    "RULES",
    "_CONFIG_KEYS",
    "ErrorKind",
    "Evidence",
    "LogFacts",
    "parse_startup_log",
]
