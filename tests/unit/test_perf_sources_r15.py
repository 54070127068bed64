"""bench/data/perf/sources-r15/: what is particular to round 15's held-apart runs (speed15); that they parse, are new
to every fit and earlier batch, plan at their release and stay out of every fit is checked with every other blind
batch in tests/unit/test_perf_sources_blind.py (tests/perf_blind.py's BLIND_ORDER)."""

from __future__ import annotations

from bench import perf_sources as P
from tests.perf_blind import batch_rows


def test_the_runner_replays_one_prompt_set_at_four_rates() -> None:
    # surajssd/llm-k8s benchmark-script-run.sh logs at 58b61c59: each configuration sends the same 200 ShareGPT
    # prompts (seed 0, 42,659 prompt tokens every time) at QPS 1, 4, 16, inf to one server started with
    # --enable-prefix-caching, which is why SOURCES.md reads runs 2-4 of each configuration as warm-cache TTFTs
    rows = batch_rows("sources-r15")
    by_config: dict[str, list[object]] = {}
    for row in rows:
        assert row["total_input_tokens"] == 42659 and row["num_prompts"] == 200
        assert row["dataset_name"] == "sharegpt" and row["server"]["enable_prefix_caching"] is True
        by_config.setdefault(row["run_id"].rsplit("_qps_", 1)[0], []).append(row["request_rate"])
    assert by_config == {name: [1.0, 4.0, 16.0, "inf"] for name in ("tp8_pp1", "tp4_pp2_no_IB", "tp4_pp2_IB")}


def test_the_inf_run_could_not_have_prefilled_its_prompts_cold() -> None:
    # SOURCES.md's argument, by hand: 42,659 prompt tokens x 2 x 70.55e9 parameters = 6.02e15 FLOP; eight A100s at
    # 312 TFLOP/s dense bf16 each (2.50e15 FLOP/s) need >= 2.41 s, yet the tp8_pp1 inf run's P99 TTFT is 450.379 ms
    inf = next(r for r in batch_rows("sources-r15") if r["run_id"] == "tp8_pp1_qps_inf")
    cold_prefill_s = 42659 * 2 * 70.55e9 / (8 * 312e12)
    assert round(cold_prefill_s, 2) == 2.41
    assert inf["measured"]["p99_ttft_ms"] / 1000 < cold_prefill_s / 5


def test_the_single_node_run_is_read_as_tp8_because_tp4_has_no_kv_pool() -> None:
    # SOURCES.md: TP 4 on four 40 GB cards leaves no KV pool for the default context (the planner agrees), so the
    # runner's tp8_pp1 label is taken; the two-node runs are TP 4 x PP 2 on 8 GPUs and fall back to V0 (their log)
    row = next(r for r in batch_rows("sources-r15") if r["run_id"] == "tp8_pp1_qps_01")
    assert (row["tp"], row["pp"], row["num_devices"]) == (8, 1, 8)
    as_tp4 = P.plan_run({**row, "tp": 4, "num_devices": 4})
    assert isinstance(as_tp4, str) and "no KV pool" in as_tp4
    two_node = [r for r in batch_rows("sources-r15") if "pp2" in r["run_id"]]
    assert len(two_node) == 8 and all((r["tp"], r["pp"], r["engine"]) == (4, 2, "V0") for r in two_node)
