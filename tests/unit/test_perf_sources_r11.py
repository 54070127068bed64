"""bench/data/perf/sources-r11/: what is particular to round 11's held-apart measured runs (the checks every
blind batch passes are tests/unit/test_perf_sources_blind.py's)."""

from __future__ import annotations

from bench import perf_sources as P
from tests.perf_blind import batch_rows


def test_a_random_run_with_only_output_and_total_throughput_runs_at_what_it_generated() -> None:
    # llm-d's docs/accelerators/amd-mi355x-perf.md prints output and total tok/s but neither totals nor req/s.
    # At a fixed prompt length the input tok/s (total - output) over the prompt length is the request rate, so
    # the mean output is 1,024 x 1,519.2 / (25,820.6 - 1,519.2) = 1,555,660.8 / 24,301.4 = 64.02 -> 64 tokens at
    # 64 clients, not the 256 asked (no --ignore-eos); 1,024 x 2,985.0 / 23,868.0 = 128.06 -> 128 at 128 clients;
    # 1,024 x 1,320.8 / 5,278.0 = 256.25 -> 256 (capped at the 256 asked) at 16 clients. Before this rule all
    # three ran at 256.
    rows = {
        r["max_concurrency"]: r for r in batch_rows("sources-r11") if r["run_id"].startswith("short context")
    }
    assert {c: P.generated_len(rows[c]) for c in (16, 64, 128, 256)} == {16: 256, 64: 64, 128: 128, 256: 128}
    assert P.bench_args(rows[64]).random_output_len == 64
    # a long row is full length: 4,096 x 2,230.0 / (4,459 - 2,230.0) = 4,097.8 -> capped at the 4,096 asked
    decode = next(
        r
        for r in batch_rows("sources-r11")
        if r["run_id"].startswith("decode-heavy") and r["max_concurrency"] == 32
    )
    assert P.generated_len(decode) == 4096
    # a prefix counts in the prompt: 512 + 512 prompt tokens give the 64 of the 1,024-token prompt above
    prefixed = {**rows[64], "random_input_len": 512, "random_prefix_len": 512}
    assert P.generated_len(prefixed) == 64
    # --ignore-eos runs what was asked, and a total below the output throughput says nothing
    assert P.generated_len({**rows[64], "ignore_eos": True}) is None
    broken = {**rows[64], "measured": {"output_throughput": 100.0, "total_token_throughput": 90.0}}
    assert P.generated_len(broken) is None
