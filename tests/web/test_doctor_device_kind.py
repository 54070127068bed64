"""The doctor's identity line names the device stack a log names when it matches no card: before, a vllm-ascend
log read as an NPU (facts.device_type) still showed "Device: —" above a verdict about NPU memory, which read as
"unknown GPU". The stack is what the log itself prints; no card is ever claimed."""

from __future__ import annotations

import html
import re
from pathlib import Path

from fastapi.testclient import TestClient

from app.web.app import create_app

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
CLIENT = TestClient(create_app())


def _device(log: str, lang: str = "en") -> str:
    page = CLIENT.post(f"/doctor?lang={lang}", data={"log": (LOGS / log).read_text()}).text
    match = re.search(r'<p class="model-note">(.*?)</p>', page, re.S)
    assert match is not None
    line = html.unescape(match.group(1))
    label = "Device: " if lang == "en" else "设备: "
    return line.split(label, 1)[1].split(" · ")[0]


def test_an_ascend_log_without_a_card_says_npu() -> None:
    # vllm-ascend#3813: frames through /vllm-workspace/vllm-ascend/vllm_ascend/worker/worker_v1.py, no npu-smi
    # table and no memory line, so no card can be matched
    log = "heldout-2026-12d/ascend_qwen3_next_8_npus_worker_exception_in_initialize_from_config.log"
    assert _device(log) == "Ascend NPU (the log does not name the card)"


def test_a_rocm_log_without_a_card_says_rocm() -> None:
    # aiter's hsaco kernel paths and a 'Memory access fault' (HSA): ROCm, no device total printed
    assert _device("heldout-2026-12b/rocm_gfx950_minimax_m25_aiter_memory_access_fault.log") == (
        "AMD GPU, ROCm (the log does not name the card)"
    )


def test_a_cuda_traceback_without_a_card_says_cuda() -> None:
    # frames through vllm/platforms/cuda.py get_attn_backend_cls; the log prints no memory figure
    assert _device("heldout-2026-12d/nv_sm120_backend_not_valid_attention_sinks.log") == (
        "NVIDIA GPU, CUDA (the log does not name the card)"
    )


def test_a_matched_card_is_still_named() -> None:
    # a Qwen3-VL-30B TP 2 start at vLLM 0.12.0 whose log names the H100 itself: the card, as before
    log = "heldout-2026-12zd/nv_0_12_0_tp2_qwen3_vl_30b_a3b_kv_37_23_813152_12_41x_at_65536.log"
    assert _device(log) == "nvidia-h100-sxm-80gb (named in the log)"


def test_the_stack_is_translated() -> None:
    log = "heldout-2026-12d/ascend_qwen3_next_8_npus_worker_exception_in_initialize_from_config.log"
    assert _device(log, "zh") == "昇腾 NPU（日志未写明卡型）"
