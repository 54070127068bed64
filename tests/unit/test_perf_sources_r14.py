"""bench/data/perf/sources-r14/: what is particular to round 14's held-apart runs (speed14); that they parse, are new
to every fit and earlier batch, plan at their release and stay out of every fit is checked with every other blind
batch in tests/unit/test_perf_sources_blind.py (tests/perf_blind.py's BLIND_ORDER)."""

from __future__ import annotations

from tests.perf_blind import batch_rows


def test_the_qps_sweep_sends_sixty_seconds_of_arrivals() -> None:
    # qps_sweep.sh at 414b6476: NUM_PROMPTS = int(QPS * SECONDS_PER_RUN), SECONDS_PER_RUN = 60, Poisson (burstiness
    # 1.0), no --max-concurrency; e.g. 16 req/s -> 960 prompts, and the run completed 13.20 req/s (overloaded)
    sweep = [r for r in batch_rows("sources-r14") if r["run_id"].startswith("qps-sweep")]
    assert [r["num_prompts"] for r in sweep] == [60, 120, 240, 480, 600, 720, 960]
    for row in sweep:
        assert row["max_concurrency"] is None and row["burstiness"] == 1.0
        assert row["num_prompts"] == 60 * row["request_rate"]
    assert next(r for r in sweep if r["request_rate"] == 16.0)["measured"]["request_throughput"] == 13.20
