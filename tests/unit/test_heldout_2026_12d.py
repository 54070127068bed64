"""The doctor on the 10 real start-up logs held apart on 2026-12-01, batch d (tests/data/logs/heldout-2026-12d/
sources.json names each thread), collected after batch c's fixes. Expectations were written by hand from each log
before the doctor was run on it; blind, the doctor got 9/10 verdicts and 23/25 facts (main 3df4758, without batch
c's fixes: 7/10 and 21/25), nothing claimed (SOURCES.md). Every number below is printed in the log it names."""

from __future__ import annotations

import pytest

from app.core.logs import parse_startup_log
from tests import log_sets
from tests.log_sets import LOGS_DIR, check_log

DIR = LOGS_DIR / "heldout-2026-12d"
SOURCES = log_sets.sources(DIR)


def test_the_set_is_ten_logs_each_with_its_thread() -> None:
    assert len(SOURCES) == 10 == len(list(DIR.glob("*.log")))
    assert all(entry["url"].startswith("https://github.com/") for entry in SOURCES.values())
    platforms = [name.split("_")[0] for name in SOURCES]
    assert [platforms.count(p) for p in ("nv", "ascend", "rocm")] == [7, 1, 2]


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_verdict_facts_and_nothing_claimed(name: str) -> None:
    check_log(DIR, name, SOURCES[name]["expect"])


def test_the_api_servers_wait_for_the_engine_in_a_traceback_is_a_failed_start() -> None:
    # kyuz0/amd-strix-halo-vllm-toolboxes#36: only "(APIServer pid=280862)   File …/v1/engine/utils.py", line 1132,
    # in wait_for_engine_startup" and "raise RuntimeError(" (not at ERROR level): that frame is only ever in the
    # traceback of a start-up that failed ("Engine core initialization failed", v1/engine/utils.py, 0.33.0)
    facts, d = log_sets.read(DIR, "rocm_strix_halo_apiserver_frames_wait_for_engine_startup.log")
    assert (d.verdict, facts.error_kind, facts.device_type) == ("failed", "startup_failed", None)


def test_graph_profiling_is_the_profile_stage() -> None:
    # ovg-project/kvcached#304 (0.19.0): "Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35 …" then
    # "EngineCore failed to start.": gpu_worker.determine_available_memory profiles the graphs, so the budget was
    # being measured (the weights had loaded, no pool yet)
    facts, d = log_sets.read(DIR, "nv_0.19_conda_graph_profiling_then_engine_core_failed.log")
    assert (d.verdict, facts.failure_stage) == ("failed", "profile")
    # after the pool is sized the same line does not take the stage back
    sized = parse_startup_log(
        "INFO [kv_cache_utils.py:1319] GPU KV cache size: 89,760 tokens\n"
        "INFO [gpu_model_runner.py:5876] Profiling CUDA graph memory: PIECEWISE=51 (largest=512)\n"
        "ERROR [core.py:1108] EngineCore failed to start.\n"
    )
    assert sized.failure_stage == "sized"


def test_a_refused_backend_is_not_claimed_as_the_backend_in_use() -> None:
    # Dao-AILab/flash-attention#2336: "Selected backend AttentionBackendEnum.FLASHINFER is not valid for this
    # configuration": vLLM refused it, so the doctor names no backend
    facts, d = log_sets.read(DIR, "nv_sm120_backend_not_valid_attention_sinks.log")
    assert (d.verdict, facts.attention_backend) == ("failed", None)
