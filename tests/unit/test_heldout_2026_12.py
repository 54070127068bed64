"""The doctor on the 19 real start-up logs held apart on 2026-12-01 (tests/data/logs/heldout-2026-12/sources.json
names each thread). Expectations were read by hand from each log before the doctor was run on it; measured as
is, the doctor got 16/17 verdicts and 54/58 facts on the first 17 (main: 12/17, 42/58), and 2/2, 6/6 on the two
added after the fixes. Every number below is printed in the log it names."""

from __future__ import annotations

import pytest

from app.core.diagnose import Diagnosis
from app.core.logs import LogFacts, parse_startup_log
from app.core.specs import GIB
from tests import log_sets
from tests.log_sets import LOGS_DIR, check_log

DIR = LOGS_DIR / "heldout-2026-12"
SOURCES = log_sets.sources(DIR)


def test_the_set_is_nineteen_logs_each_with_its_thread() -> None:
    assert len(SOURCES) == 19 == len(list(DIR.glob("*.log")))
    assert all(entry["url"].startswith("https://github.com/") for entry in SOURCES.values())
    platforms = [name.split("_")[0] for name in SOURCES]
    assert (platforms.count("nv"), platforms.count("rocm"), platforms.count("ascend")) == (11, 3, 5)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_verdict_facts_and_nothing_claimed(name: str) -> None:
    check_log(DIR, name, SOURCES[name]["expect"])


def read(name: str) -> tuple[LogFacts, Diagnosis]:
    return log_sets.read(DIR, name)


def test_a_free_memory_refusal_wrapped_over_two_lines_is_the_refusal() -> None:
    # vllm#36720 quotes "…(1.33/23.98 GiB) on startup is less" / "than desired GPU memory utilization (0.95,
    # 22.79 GiB)." — the head alone says it is the start-up check; the utilization is on the second line
    facts, d = read("rocm_24gib_free_memory_wrapped_1_33_of_23_98.log")
    assert facts.error_kind == "startup_free_memory" and facts.gpu_memory_utilization == 0.95
    assert (facts.device_free_at_start_bytes, facts.device_total_bytes) == (
        round(1.33 * GIB),
        round(23.98 * GIB),
    )
    assert d.verdict == "budget_bound"
    assert d.remedies[0] == "Free the device from other processes"  # not "raise the utilization"
    # the same words on a line of their own elsewhere are not a refusal
    assert (
        parse_startup_log("Free memory on device (60.61/60.96 GiB) on startup. Desired GPU memory").error
        is None
    )


def test_a_torch_npu_path_marks_an_ascend_log() -> None:
    # vllm-ascend#9092: the only device word in the paste is torch_npu's package path in a UserWarning
    facts, d = read("ascend_dsv4_flash_w8a8_tp8_kv_16_96_engine_failed.log")
    assert facts.is_ascend and facts.device_type == "NPU"
    assert facts.tensor_parallel_size is None  # TP0 and TP7 prefixes only: the size is not established
    assert d.verdict == "failed" and d.device_id is None  # no total printed: no card is guessed
    # without a marker the same engine failure names no device (vllm-ascend#9087: worker.py lines only)
    other, _ = read("ascend_dsv4_dp_ep_kv_28_73_engine_failed.log")
    assert other.device_type is None and not other.is_ascend


def test_the_api_server_count_line_gives_the_data_parallel_size() -> None:
    # vllm#51454 (0.25.0 serve.py): "Defaulting api_server_count to data_parallel_size (8)."
    facts, d = read("nv_0.25_dsv4_flash_b200_dp8_banner.log")
    assert (facts.data_parallel_size, facts.vllm_version) == (8, "0.25.0")
    assert d.verdict == "unknown"  # the banner only: no KV line, no error
    # the hybrid-LB wording names the local size, not the whole: not read
    local = "Defaulting api_server_count to data_parallel_size_local (4) for hybrid LB mode."
    assert parse_startup_log(local).data_parallel_size is None


def test_the_mamba_refusal_reads_with_its_numbers_wrapped_or_in_backticks() -> None:
    for name, seqs, blocks in (
        ("nv_mamba_gdn_lora_low_util_256_30_wrapped.log", 256, 30),  # vllm#49064, three quoted lines
        ("nv_mamba_nemotron_nano_v2_12b_grpo_1024_658.log", 1024, 658),  # NeMo-RL#2620, in backticks
    ):
        facts, d = read(name)
        assert (facts.max_num_seqs, facts.num_gpu_blocks, d.verdict) == (seqs, blocks, "n_bound")
        assert d.remedies[0] == f"Lower --max-num-seqs to {blocks:,} or less (the pool's Mamba cache blocks)"
