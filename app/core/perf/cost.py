"""Device-hours per million output tokens: the running-cost arithmetic fleet sizing and the recommender share."""

from __future__ import annotations

SECONDS_PER_HOUR = 3600
TOKENS_PER_MILLION = 1_000_000


def device_hours_per_million_output_tokens(*, devices: int, output_tokens_per_s: float) -> float:
    """``devices`` x the hours they take to produce a million output tokens at ``output_tokens_per_s``.

    Times a price per device-hour it is the cost per million output tokens; for one replica at its
    throughput it compares layouts on the same load (fewer device-hours: cheaper to run).
    """
    return devices * TOKENS_PER_MILLION / (output_tokens_per_s * SECONDS_PER_HOUR)
