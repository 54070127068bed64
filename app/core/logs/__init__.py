"""Read what vLLM printed: a pasted start-up log or a Prometheus scrape, turned into typed facts.

- :mod:`.startup` — the start-up log: rule table, accumulator with precedence, failures and stages;
- :mod:`.metrics` — a /metrics scrape;
- :mod:`.reading` — line splitting and printed numbers, shared by both.

The wording vLLM prints (each template's needle, regex and format string) is :mod:`app.core.vllm_text`.
"""

from app.core.logs.metrics import KV_BOUND_USAGE, MetricsFacts, MetricsVerdict, parse_metrics
from app.core.logs.reading import MAX_LOG_CHARS, over_limit
from app.core.logs.startup import (
    MAX_ERROR_CHARS,
    MAX_EVIDENCE_CHARS,
    MAX_LINE_CHARS,
    MAX_VALUE_CHARS,
    RULES,
    ErrorKind,
    Evidence,
    LogFacts,
    parse_startup_log,
)
from app.core.specs import GIB

__all__ = [
    "GIB",
    "KV_BOUND_USAGE",
    "MAX_ERROR_CHARS",
    "MAX_EVIDENCE_CHARS",
    "MAX_LINE_CHARS",
    "MAX_LOG_CHARS",
    "MAX_VALUE_CHARS",
    "RULES",
    "ErrorKind",
    "Evidence",
    "LogFacts",
    "MetricsFacts",
    "MetricsVerdict",
    "over_limit",
    "parse_metrics",
    "parse_startup_log",
]
