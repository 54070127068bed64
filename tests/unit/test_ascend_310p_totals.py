"""The 310P3's device total varies between real boards (app/core/situations.py, ASCEND_310P_REPORTED_TOTALS_BYTES):
each figure is a die's total as vllm-ascend printed it, "total memory: <bytes>" (worker_v1.py, the byte budget line)
in the logs of tests/data/logs/heldout-2026-12g, the plan names the spread and what it moves the pool by."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core import catalog, situations
from app.core.estimate import estimate
from app.core.logs import parse_startup_log
from app.core.specs import GIB, ServeConfig
from app.core.versions import resolve_version
from tests.log_sets import LOGS_DIR

G_SET = LOGS_DIR / "heldout-2026-12g"


def _printed_totals(names: list[str]) -> set[int]:
    return {
        parse_startup_log(Path(G_SET / name).read_text(encoding="utf-8")).device_total_bytes or 0
        for name in names
    }


def test_the_three_totals_are_the_ones_real_310p_logs_print() -> None:
    printed = _printed_totals(
        [
            "ascend_310p_seedx_compose_command_array_acl_graph_capture_assert.log",  # 42.67 GiB (Ascend/pytorch#78)
            "ascend_310p_qwen3_4b_serve_kv_sized_then_npu_507013_failed_to_allocate.log",  # 43.24 (vllm-ascend#3479)
            "ascend_310p3_300i_duo_qwen25_05b_multi_plugin_kv_sized_then_npu_507013.log",  # 46.20 (vllm-ascend#3316)
        ]
    )
    assert printed == set(situations.ASCEND_310P_REPORTED_TOTALS_BYTES)
    # the two dies of one card differ: TP0 46,431,260,672 B, TP1 45,816,029,184 B (vllm-ascend#4074), 0.57 GiB
    tp2 = (G_SET / "ascend_310p_tp2_qwen3vl_8b_two_totals_kv_sized_then_workerproc_507013.log").read_text(
        encoding="utf-8"
    )
    assert "total memory: 46431260672" in tp2 and "total memory: 45816029184" in tp2
    assert round((46431260672 - 45816029184) / GIB, 2) == 0.57


def test_the_pool_shift_follows_utilization_and_the_310p_halving() -> None:
    device = catalog.find_device("310p")  # 46,428,596,470 B = 43.24 GiB
    # v0.18.0 halves: 0.9 x (45,816,029,184 - 46,428,596,470) / 2 = -275,655,278.7 B; 0.9 x (49,602,220,032 -
    # 46,428,596,470) / 2 = 1,428,130,602.9 B (whole bytes toward zero)
    halving = resolve_version("0.18.0").rules
    assert situations.ascend_310p_pool_shift_bytes(
        device=device, rules=halving, requested=int(device.memory_total_bytes * 0.9)
    ) == (
        -275655278,
        1428130602,
    )


def test_the_310p_plan_names_the_spread_and_no_other_device_does() -> None:
    serve = ServeConfig(max_model_len=4096, gpu_memory_utilization=0.9, dtype="float16")
    model = catalog.find_model("Qwen/Qwen2.5-7B-Instruct")
    est = estimate(model=model, device=catalog.find_device("310p"), serve=serve, vllm_version="0.18.0")
    said = [str(w) for w in est.warnings if "per die on real boards" in str(w)]
    assert len(said) == 1
    assert "42.67-46.20 GiB" in said[0] and "uses 43.24 GiB" in said[0] and "-0.26 to +1.33 GiB" in said[0]
    other = estimate(model=model, device=catalog.find_device("910b"), serve=serve, vllm_version="0.18.0")
    assert not [w for w in other.warnings if "per die on real boards" in str(w)]


def test_the_die_gap_in_the_310p_sentence_follows_from_the_totals(monkeypatch: pytest.MonkeyPatch) -> None:
    # round 8 typed "0.57 GiB" into the sentence; it is (46,431,260,672 - 45,816,029,184) / 2^30 = 0.573 GiB
    # (vllm-ascend#4074's two dies), so a corrected total moves it: a second die 1 GiB above the first says 1.00
    serve = ServeConfig(max_model_len=4096, gpu_memory_utilization=0.9, dtype="float16")
    model = catalog.find_model("Qwen/Qwen2.5-7B-Instruct")
    device = catalog.find_device("310p")

    def said() -> str:
        est = estimate(model=model, device=device, serve=serve, vllm_version="0.18.0")
        return next(str(w) for w in est.warnings if "per die on real boards" in str(w))

    assert "the second die of a 300I Duo 0.57 GiB more" in said()
    monkeypatch.setattr(situations, "ASCEND_310P_DUO_DIE_TOTALS_BYTES", (45816029184, 45816029184 + GIB))
    assert "the second die of a 300I Duo 1.00 GiB more" in said()
