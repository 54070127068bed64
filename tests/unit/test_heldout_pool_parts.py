"""The held-out pool comparisons that test nothing: a log that names no card and prints no total gets the catalog
device whose predicted pool is nearest the printed one (app/core/diagnose/device.py _replay_device), so its pool
gap is what is left after that fit. bench/heldout_pool_parts.py split the 32 held-out pool comparisons into their
parts and found 17 such logs (10 within 0.5 GiB) beside 15 whose device is printed or stated (6 within, blind).
The KV row now says so, and the bench counts them apart. Pinned on the logs' own lines."""

from __future__ import annotations

from pathlib import Path

from app.core.diagnose import ComparisonRow
from app.core.specs import GIB
from bench import heldout_logs, heldout_pool_parts
from tests import log_sets
from tests.log_sets import LOGS_DIR

SET_ZI = LOGS_DIR / "heldout-2026-12zi"
SET_ZH = LOGS_DIR / "heldout-2026-12zh"
SET_G = LOGS_DIR / "heldout-2026-12g"
# kesh-kredos/voice-agent vllm.log: "non-default args: {… 'max_model_len': 4096}", "Model loading took 2.32 GiB",
# "Available KV cache memory: 41.01 GiB"; no card name, no "free memory … of … total" line
LLAMA_1B = "nv_0_23_0_llama32_1b_kv_41_01_1343840_328_09x_graph_then_flashinfer_no_nvcc.log"
# giyushino/ModelMerging logs/vllm_server.log: vLLM 0.9.2 inside an application; no args listing, no card
QWEN_15B = "nv_0_9_2_qwen25_1_5b_at_1536_kv_14_58_545856_355_38x_graph_0_47.log"
# vllm-ascend 300I Duo: "Available memory: 40178937036, total memory: 49602220032" (worker_v1.py), a printed total
DUO = "ascend_310p3_300i_duo_qwen25_05b_multi_plugin_kv_sized_then_npu_507013.log"


def kv_row(directory: Path, name: str) -> tuple[str, ComparisonRow]:
    _, d = log_sets.read(directory, name)
    row = next(r for r in d.comparison if r.key == "kv_cache_bytes")
    return d.device_source, row


def test_a_pool_the_device_was_fitted_to_says_it_is_no_test() -> None:
    source, row = kv_row(SET_ZI, LLAMA_1B)
    assert source == "replay"
    assert row.actual == round(41.01 * GIB)
    note = str(row.note)
    # before: "KV higher than predicted: the planner over-estimates activation or non-torch here" (+1.02 GiB on the
    # fitted RTX A6000), a planner miss on a card the log never named
    assert "chosen because its predicted pool is the nearest to this one" in note
    assert "over-estimates" not in note


def test_a_printed_total_keeps_the_gap_call_out() -> None:
    # the 300I Duo prints its total (49602220032 B = 46.20 GiB): the device is read, so the -1.67 GiB gap is a miss
    source, row = kv_row(SET_G, DUO)
    assert source == "custom"
    assert row.actual == 40178937036
    assert "KV lower than predicted by more than 1 GiB" in str(row.note)


def test_heldout_logs_counts_fitted_pools_apart() -> None:
    fitted = heldout_logs.score(SET_ZI / LLAMA_1B, {"facts": {}, "verdict": "failed"}, "dense")
    printed = heldout_logs.score(SET_G / DUO, {"facts": {}, "verdict": "failed"}, "dense")
    assert fitted.pool is not None and fitted.device_fitted
    assert printed.pool is not None and not printed.device_fitted


def test_pool_parts_name_the_inputs_the_log_does_not_print() -> None:
    entry = {"class": "dense"}
    llama = heldout_pool_parts.row_for(SET_ZI / LLAMA_1B, entry)
    qwen = heldout_pool_parts.row_for(SET_ZH / QWEN_15B, entry)
    assert llama is not None and qwen is not None
    # 0.23.0 lists its non-default args, so an unlisted utilization is the default 0.9, not a guess
    assert llama.guessed == ["device=replay"] and llama.fitted
    assert llama.parts["weights_bytes"].printed == round(2.32 * GIB)
    # "Graph capturing finished in 1 secs, took 0.33 GiB"
    assert llama.parts["cuda_graph_bytes"].printed == round(0.33 * GIB)
    # the 0.9.2 log lists no flags; its engine config prints max_num_batched_tokens (8192, sources.json), not the
    # utilization or max_num_seqs: those two are the planner's defaults, a guess
    assert qwen.guessed == ["device=replay", "util", "seqs"]
    assert qwen.pool.printed == round(14.58 * GIB)
