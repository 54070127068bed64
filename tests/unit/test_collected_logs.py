"""The doctor on the real logs collected for issue 22 (tests/data/logs/collected/sources.json names each
thread): vllm-ascend's byte-valued budget line, the 310P, device faults, a compose file, NPU kind and
device matching. Every number below is printed in the log it names."""

from __future__ import annotations

import pytest

from app.core.diagnose import Diagnosis, diagnose
from app.core.logs import LogFacts, parse_startup_log
from app.core.specs import GIB
from tests import log_sets
from tests.log_sets import LOGS_DIR, check_log

DIR = LOGS_DIR / "collected"
SOURCES = log_sets.sources(DIR)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_verdict_facts_and_nothing_claimed(name: str) -> None:
    check_log(DIR, name, SOURCES[name]["expect"])


def read(name: str) -> tuple[LogFacts, Diagnosis]:
    return log_sets.read(DIR, name)


def test_ascend_byte_budget_line_is_the_pool_and_the_total() -> None:
    # vllm-ascend#3843: "Available memory: 0, total memory: 65452113920" on four ranks (bytes, no unit)
    facts, d = read("ascend_0.11_qwen3_next_910b4_available_memory_0.log")
    assert (facts.kv_cache_bytes, facts.kv_cache_bytes_min_rank) == (0, 0)
    assert facts.device_total_bytes == 65_452_113_920  # 60.96 GiB: the 910B / 910C die total
    assert facts.is_ascend and facts.device_type == "NPU"
    # a pool of 0: vLLM's "No available memory for the cache blocks" — the budget, not the length
    assert facts.error_kind == "no_blocks" and d.verdict == "budget_bound"
    # 910B and 910C (one A3 die) report the same 60.96 GiB: never an NVIDIA card, and neither is guessed
    assert d.device_source == "ambiguous" and d.device_id == "custom-60.957gib"  # 65452113920 / 2**30
    assert (
        "huawei-ascend-910b-64gb" in d.device_reasoning[0] and "huawei-ascend-910c" in d.device_reasoning[0]
    )
    assert "device" not in d.planner_inputs and d.planner_inputs["device_memory_gib"] == "60.96"


def test_310p_log_is_matched_to_the_310p_not_an_nvidia_card() -> None:
    # vllm-ascend#10122: "Free memory on device (42.24/43.24 GiB) … 0.0 GiB for NPU graph memory …
    # Current KV cache memory: 5.77 GiB." (rank 1 prints 5.56 GiB: the smaller one sets the blocks)
    facts, d = read("ascend_310p_qwen36_27b_w8a8_tp2_suggestion.log")
    assert facts.device_type == "NPU" and facts.device_total_bytes == round(43.24 * GIB)
    assert facts.kv_cache_bytes == round(5.77 * GIB) and facts.kv_cache_bytes_min_rank == round(5.56 * GIB)
    # 43.24 GiB is within 1.5 GiB of the L40S / L40 / A40 (44.3 GiB): only NPUs are candidates here
    assert (d.device_id, d.device_source) == ("huawei-ascend-310p", "printed_total")


def test_device_faults_are_failures_not_fits_or_unknown() -> None:
    facts, d = read("v0_engine_illegal_memory_access_k8s.log")
    assert facts.error_kind == "device_fault" and d.verdict == "failed"
    # the k9s border "│" is not part of vLLM's text
    assert facts.error == "CUDA error: an illegal memory access was encountered"
    assert "device fault" in d.headline and "not a memory budget" in d.headline


def hang_log() -> str:
    # the start-up of ROCm/legacy-rocm-build#5724 (vLLM 0.15.0rc3 on a Strix Halo) followed by the HSA
    # runtime's hang line as ROCm/legacy-rocm-build#5259 prints it and the shell's core-dump notice
    start = (DIR / "v1_0.15.0rc3_strix_halo_granite_h_banner.log").read_text(encoding="utf-8")
    return start + (
        "HW Exception by GPU node-4 (Agent handle: 0x1ebc04e0) reason :GPU Hang\nAborted (core dumped)\n"
    )


def test_gpu_hang_and_core_dump_are_a_failure_with_the_stage() -> None:
    facts = parse_startup_log(hang_log())
    assert facts.error_kind == "device_fault"
    assert facts.error is not None and facts.error.startswith("HW Exception by GPU node-4")
    assert diagnose(log_text=hang_log(), metrics_text=None).verdict == "failed"


def test_a_fault_after_the_kv_pool_was_sized_says_so() -> None:
    # vllm#17663 (0.8.5): "GPU KV cache size: 1,782,000 tokens" / "54.38x", then "EngineCore failed"
    facts, d = read("v1_0.8.5_qwen25_vl_awq_kv_sized_then_engine_failed.log")
    assert facts.failure_stage == "sized" and d.verdict == "failed"
    assert "after the KV pool was sized" in d.headline


def test_npu_function_error_is_an_npu_failure() -> None:
    # vllm-ascend#2387's title line, inside the traceback it ends
    log = (
        "(EngineCore_DP0 pid=1) ERROR 08-14 02:11:03 [core.py:700] EngineCore failed to start.\n"
        "(EngineCore_DP0 pid=1) ERROR 08-14 02:11:03 [core.py:700] RuntimeError: NPU function error: "
        "call aclnnAddRmsNormQuant failed, error code is 561000\n"
    )
    facts = parse_startup_log(log)
    assert facts.error_kind == "npu_error" and facts.device_type == "NPU"
    assert diagnose(log_text=log, metrics_text=None).verdict == "failed"


def test_compose_command_is_read_as_vllm_serve_arguments() -> None:
    # vllm#3435: `image: vllm/vllm-openai:latest` / `command: --model mistralai/Mistral-7B-v0.1`
    facts, d = read("v0_compose_mistral_7b_32768_gt_16832.log")
    assert facts.model == "mistralai/Mistral-7B-v0.1" and d.verdict == "s_bound"


def test_compose_block_list_and_python_module_commands() -> None:
    # the block-list form of club-3090#32 (`- --max-model-len` / `- "110000"`), under a vLLM image
    compose = (
        "services:\n  vllm:\n    image: vllm/vllm-openai:nightly\n    command:\n"
        '      - --model\n      - Qwen/Qwen3-8B\n      - --max-model-len\n      - "110000"\n    ports:\n'
        '      - "8000:8000"\n'
    )
    facts = parse_startup_log(compose)
    assert (facts.model, facts.max_model_len) == ("Qwen/Qwen3-8B", 110_000)
    # `python3 -m vllm.entrypoints.openai.api_server \` continued over lines, behind an interpreter path
    multi = (
        "/usr/bin/python3.11 -u -m vllm.entrypoints.openai.api_server \\\n"
        "    --model Qwen/Qwen2.5-7B-Instruct \\\n    --tensor-parallel-size 2 \\\n    --max-model-len 16384\n"
    )
    facts = parse_startup_log(multi)
    assert (facts.model, facts.tensor_parallel_size, facts.max_model_len) == (
        "Qwen/Qwen2.5-7B-Instruct",
        2,
        16384,
    )


def test_h100_and_a100_totals_are_ambiguous_not_guessed() -> None:
    log = "(EngineCore pid=1) INFO 05-01 10:00:00 [gpu_worker.py:1] Free memory on device (78.68/79.19 GiB) on startup. Desired GPU memory utilization is (0.9, 71.27 GiB)."
    d = diagnose(log_text=log, metrics_text=None)
    assert d.device_source == "ambiguous"
    assert (
        "nvidia-h100-sxm-80gb" in d.device_reasoning[0] and "nvidia-a100-sxm4-80gb" in d.device_reasoning[0]
    )
    assert "device" not in d.planner_inputs and d.planner_inputs["device_memory_gib"] == "79.19"


def test_free_memory_refusal_is_replayed_with_the_memory_others_held() -> None:
    # "Free memory on device cuda:0 (70.5/79.19 GiB) … (0.9, 71.27 GiB)": 79.19 − 70.5 − 0.5 (the runtime's
    # own context) = 8.19 GiB held by another process; the planner, given that, prints vLLM's own refusal
    log = (
        "(APIServer pid=1) INFO 05-01 10:00:00 [utils.py:1] non-default args: {'model': "
        "'meta-llama/Llama-3.1-8B-Instruct', 'gpu_memory_utilization': 0.9}\n"
        "(EngineCore pid=2) ERROR 05-01 10:00:05 [core.py:1] ValueError: Free memory on device cuda:0 "
        "(70.5/79.19 GiB) on startup is less than desired GPU memory utilization (0.9, 71.27 GiB). Decrease GPU "
        "memory utilization or reduce GPU memory used by other processes.\n"
    )
    d = diagnose(log_text=log, metrics_text=None)
    assert d.verdict == "budget_bound" and d.planner_inputs["device_memory_used_gib"] == "8.19"
    assert d.prediction is not None and d.prediction.error == log.split("ValueError: ")[1].strip()


def test_device_faults_get_their_own_remedies() -> None:
    # not "raise --gpu-memory-utilization": the fault is a kernel / driver one (vllm-windows#72)
    _, d = read("v1_windows_0.25_pp_illegal_memory_access.log")
    assert d.remedies[0].startswith("Rerun with CUDA_LAUNCH_BLOCKING=1")
    assert not any("gpu-memory-utilization" in r for r in d.remedies)
