"""app.core.logs: vLLM start-up logs and Prometheus scrapes -> typed facts.

Fixtures live in tests/data/logs/. Each was written from the templates in
/work/shared/reference/vllm-accounting.md §4 (§9 for vllm-ascend) with numbers that add up;
the working is in the comment of each test. Where a calibration record
(bench/data/calibration/vllm_logs.jsonl) exists, its id is named and its figures are used.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.errors import PlannerError
from app.core.logs import (
    KV_BOUND_USAGE,
    MAX_LOG_CHARS,
    Evidence,
    LogFacts,
    MetricsFacts,
    parse_metrics,
    parse_startup_log,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "logs"
GIB = 2**30
MIB = 2**20


def gib(value: float) -> int:
    """Bytes of a printed GiB figure, the way the parser stores it."""
    return round(value * GIB)


def load(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8", errors="replace")


def parse(name: str) -> LogFacts:
    with (DATA / name).open(encoding="utf-8", newline="") as handle:  # keep CRLF as pasted
        return parse_startup_log(handle.read())


# --------------------------------------------------------------------------------------------
# one fixture per log format


def test_v0_066_multiline_profiling_and_gpu_blocks() -> None:
    # Llama-3.1-8B bf16, TP1, 79.19 GiB device (H100 as vLLM reports it), u = 0.90:
    # 79.19 × 0.90 = 71.27 GiB; 71.271 − 14.99 − 0.31 − 1.19 = 54.78 GiB for KV.
    # Block = 16 tok × 32 layers × 8 KV heads × 256 (K+V dims) × 2 B = 2 MiB (reference §1 example)
    # -> floor(54.781 GiB / 2 MiB) = 28,047 GPU blocks; 4 GiB swap / 2 MiB = 2,048 CPU blocks.
    facts = parse("v0_0.6.6_llama31_8b.log")
    assert facts.vllm_version == "0.6.6"
    assert facts.engine == "v0"
    assert facts.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert facts.max_model_len == 8192
    assert facts.gpu_memory_utilization == 0.9
    assert facts.dtype == "bfloat16"
    assert facts.enable_prefix_caching is False
    assert facts.device_total_bytes == gib(79.19)
    assert facts.weights_bytes == gib(14.9888)  # "Loading model weights took 14.9888 GB" beats the 2-dp 14.99
    assert facts.non_torch_bytes == gib(0.31)
    assert facts.activation_peak_bytes == gib(1.19)
    assert facts.kv_cache_bytes == gib(54.78)
    assert facts.num_gpu_blocks == 28047
    assert facts.num_cpu_blocks == 2048
    assert facts.cuda_graph_bytes == gib(0.52)
    assert facts.attention_backend == "FLASH_ATTN"
    assert facts.device_type == "GPU"
    assert facts.kv_tokens is None  # V0 prints no tokens line (reference §3.7)
    assert facts.error is None
    assert facts.evidence["weights_bytes"] == Evidence(
        line_no=7, text="INFO 12-27 09:14:18 model_runner.py:1099] Loading model weights took 14.9888 GB"
    )
    assert facts.evidence["kv_cache_bytes"].line_no == 10
    assert facts.runs_found == 1


def test_v0_08_cuda_blocks_and_concurrency() -> None:
    # Real figures of calibration record gie-pr550-h100-llama2-7b-lora (V0 ~0.8.x, '# cuda blocks'):
    # 79.19 × 0.9 = 71.27; 71.271 − 12.55 − 0.16 − 2.38 = 56.18 GiB. Llama-2-7B block (fp16, 32 layers,
    # 32 KV heads, 128 dims): 16 × 32 × 32 × 256 × 2 B = 8 MiB -> 56.18 × 128 = 7,191 blocks; 4 GiB / 8 MiB
    # = 512 CPU blocks. max_model_len 4096 (the model's default; not in the excerpt): 7191 × 16 / 4096 =
    # 28.09x.
    facts = parse("v0_0.8_llama2_7b.log")
    assert facts.vllm_version == "0.8.1"
    assert facts.engine == "v0"
    assert facts.weights_bytes == gib(12.5523)
    assert facts.non_torch_bytes == gib(0.16)
    assert facts.activation_peak_bytes == gib(2.38)
    assert facts.kv_cache_bytes == gib(56.18)
    assert facts.num_gpu_blocks == 7191
    assert facts.num_cpu_blocks == 512
    assert facts.max_concurrency == 28.09
    assert facts.max_concurrency_tokens_per_request == 4096
    assert facts.max_model_len == 4096
    assert facts.dtype == "float16"
    assert facts.device_type == "GPU"  # "# cuda blocks" and "detected platform cuda"


def test_v1_085_tokens_are_blocks_times_16() -> None:
    # Qwen2.5-7B bf16 (28 layers, 4 KV heads, head 128): block = 16 × 28 × 4 × 256 × 2 B = 917,504 B.
    # 54.0 GiB available (0.8.5 prints no "Available KV cache memory" line) -> 63,195 blocks
    # -> "GPU KV cache size: 1,011,120 tokens" (63,195 × 16, reference §3.7 for 0.8.5)
    # -> 1,011,120 / 32,768 = 30.86x.
    facts = parse("v1_0.8.5_qwen25_7b.log")
    assert facts.engine == "v1"
    assert facts.vllm_version == "0.8.5"
    assert facts.kv_tokens == 1_011_120
    assert facts.kv_tokens == 63_195 * 16
    assert facts.max_concurrency == 30.86
    assert facts.max_concurrency_tokens_per_request == 32768
    assert facts.kv_cache_bytes is None
    assert facts.weights_bytes == gib(14.2487)
    assert facts.cuda_graph_bytes == gib(0.47)
    assert facts.attention_backend == "FLASH_ATTN"  # "Using Flash Attention backend on V1 engine."
    assert facts.enable_prefix_caching is True
    assert facts.gpu_memory_utilization == 0.9  # from the args Namespace


def test_v1_0110_two_capacity_lines() -> None:
    # Llama-3.1-8B, 51.43 GiB available, 2 MiB blocks -> 26,332 blocks; 0.11.0 prints
    # num_blocks // 1 group × 16 = 421,312 tokens and 26,332 / cdiv(32768, 16) = 12.86x (reference §3.7).
    facts = parse("v1_0.11.0_llama31_8b.log")
    assert facts.vllm_version == "0.11.0"
    assert facts.engine == "v1"
    assert facts.kv_cache_bytes == gib(51.43)
    assert facts.kv_tokens == 421_312
    assert facts.max_concurrency == 12.86
    assert facts.max_model_len == 32768
    assert facts.enable_prefix_caching is True
    # "Chunked prefill is enabled with max_num_batched_tokens=8192."
    assert facts.max_num_batched_tokens == 8192
    assert facts.weights_bytes == gib(14.9889)
    assert facts.cuda_graph_bytes == gib(0.56)


def test_v1_0110_estimated_max_length_error() -> None:
    # Calibration record vllm25350-kvfp8-221k-err, error text verbatim. fp8 KV at 48 KiB/token:
    # 221,000 × 49,152 B = 10.12 GiB needed; 5.59 GiB / 48 KiB = 122,115 -> 122,080 (whole 16-token blocks).
    facts = parse("v1_0.11.0_fp8kv_221k_error.log")
    assert facts.error_kind == "max_len_too_long"
    assert facts.error == (
        "To serve at least one request with the models's max seq len (221000), (10.12 GiB KV cache is "
        "needed, which is larger than the available KV cache memory (5.59 GiB). Based on the available "
        "memory, the estimated maximum model length is 122080. Try increasing `gpu_memory_utilization` or "
        "decreasing `max_model_len` when initializing the engine."
    )
    assert facts.estimated_max_model_len == 122_080
    assert facts.kv_cache_needed_bytes == gib(10.12)
    assert facts.kv_cache_bytes == gib(5.59)
    assert facts.max_model_len == 221_000
    assert facts.kv_cache_dtype == "fp8"
    assert facts.evidence["error"].line_no == 8


def test_v1_0190_h100_llama_matches_calibration_record() -> None:
    # Calibration record llmd-v0190-meta-llama-llama-3-1-8b-tp1pp1dp1-8192 (real v0.19.0 DEBUG log):
    # weights 14.99, activation 1.89, non-torch 0.25, KV 58.11 GiB, 476,016 tokens, 29,751 blocks, 58.11x,
    # CUDA graphs 0.91 GiB actual / 0.84 GiB estimated, total non-KV 17.12 GiB, u 0.95, T 79.19 GiB.
    # Budget: 79.19 × 0.95 = 75.23; 75.23 − 17.12 = 58.11. Tokens 29,751 × 16 = 476,016; 29,751 / 512 =
    # 58.11x.
    facts = parse("v1_0.19.0_h100_llama31_8b.log")
    assert facts.vllm_version == "0.19.0"
    assert facts.engine == "v1"
    assert facts.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert facts.max_model_len == 8192
    assert facts.tensor_parallel_size == 1
    assert facts.pipeline_parallel_size == 1
    assert facts.gpu_memory_utilization == 0.95
    assert facts.enable_prefix_caching is False
    assert facts.enforce_eager is False
    assert facts.kv_cache_dtype == "auto"
    assert facts.max_num_seqs == 1024
    assert facts.max_num_batched_tokens == 8192
    assert facts.weights_bytes == gib(14.99)
    assert facts.activation_peak_bytes == gib(1.89)
    assert facts.non_torch_bytes == gib(0.25)
    assert facts.non_kv_cache_bytes == gib(17.12)
    assert facts.kv_cache_bytes == gib(58.11)
    assert facts.kv_tokens == 476_016 == 29_751 * 16
    assert facts.max_concurrency == 58.11
    assert facts.cuda_graph_bytes == gib(0.91)
    assert facts.cuda_graph_estimate_bytes == gib(0.84)
    assert facts.device_total_bytes == gib(79.19)
    assert facts.device_free_at_start_bytes == gib(78.68)
    # requested ceil(T × 0.95) − (14.99 + 1.89 + 0.25 + 0.91) GiB − 150 MiB (reference §4.2)
    requested = math.ceil(gib(79.19) * 0.95)
    assert facts.kv_cache_memory_suggestion_bytes == int(requested - gib(18.04) - 150 * MIB)
    assert facts.attention_backend == "FLASH_ATTN"
    assert facts.error is None


def test_v1_0330_merged_line_and_cuda_graph_equivalence() -> None:
    # u 0.92 (0.33.0 default) on 79.19 GiB: requested 72.85 GiB; non-KV 17.21 (15.32 consumed + 1.89 peak);
    # CUDA-graph estimate 0.84 -> 72.855 − 17.21 − 0.84 = 54.8 GiB (format_gib prints "54.8").
    # 2 MiB blocks -> 28,060; 28,060 / 512 = 54.80x; int(54.8047 × 8192) = 448,960 tokens.
    # Equivalence: round(0.92 − 0.84 / 79.19, 4) = 0.9094.
    facts = parse("v1_0.33.0_merged_line.log")
    assert facts.vllm_version == "0.33.0"
    assert facts.kv_tokens == 448_960
    assert facts.max_concurrency == 54.80
    assert facts.max_concurrency_tokens_per_request == 8192
    assert facts.device_type == "GPU"
    assert facts.kv_cache_bytes == gib(54.8)
    assert facts.total_consumed_bytes == gib(15.32)
    assert facts.activation_peak_bytes == gib(1.89)
    assert facts.non_torch_bytes is None  # 0.27.1+ reports "total consumed" instead
    assert facts.gpu_memory_utilization == 0.92
    assert facts.gpu_memory_utilization_without_cuda_graph == 0.9094
    assert facts.cuda_graph_estimate_bytes == gib(0.84)
    assert facts.cuda_graph_bytes == gib(0.86)  # "CUDA graph pool memory: 0.86 GiB (actual)"
    assert facts.max_num_seqs == 256
    assert facts.attention_backend == "FLASH_ATTN"  # "Using AttentionBackendEnum.FLASH_ATTN backend."


def test_equivalence_line_alone_gives_cuda_graph_estimate() -> None:
    # Without the "Estimated CUDA graph memory" line: cg = (u − equivalent) × T = (0.92 − 0.9094) × 79.19 GiB.
    text = "\n".join(
        line
        for line in load("v1_0.33.0_merged_line.log").splitlines()
        if "Estimated CUDA graph memory" not in line and "graph pool memory" not in line
    )
    text += "\nValueError: Free memory on device cuda:0 (79.0/79.19 GiB) on startup is less than desired"
    facts = parse_startup_log(text)
    assert facts.cuda_graph_estimate_bytes == round((0.92 - 0.9094) * gib(79.19))
    assert facts.error_kind == "startup_free_memory"


def test_vllm_ascend_npu_line_and_block_size_128() -> None:
    # Qwen2.5-7B on a 910B-class NPU (vLLM 0.30.0 + vllm-ascend): block 128 -> 128 × 28 × 4 × 256 × 2 B
    # = 7,340,032 B; 39.54 GiB -> 5,784 blocks; 5,784 / cdiv(32768, 128) = 22.59x; tokens 5,784 × 128 =
    # 740,352.
    facts = parse("ascend_qwen25_7b.log")
    assert facts.is_ascend is True
    assert facts.device_type == "NPU"
    assert facts.block_size == 128
    assert facts.block_size_forced == 128
    assert facts.weights_bytes == gib(14.1892)  # "Loading model weights took 14.1892 GB"
    assert facts.kv_cache_bytes == gib(39.54)
    assert facts.kv_tokens == 740_352 == 5_784 * 128
    assert facts.max_concurrency == 22.59
    assert facts.attention_backend == "ASCEND"
    assert facts.vllm_version == "0.30.0"


def test_v0_failing_log_from_real_record() -> None:
    # Calibration record vllm10517-rtx3090-llama31-8b-29k-err (RTX 3090, 23.58 GiB, u 0.90), error verbatim.
    # 1,478 blocks × 16 = 23,648 tokens < 29,000; 23,648 / 29,000 = 0.82x.
    facts = parse("v0_rtx3090_llama31_8b_29k_error.log")
    record_error = (
        "The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in "
        "KV cache (23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
        "initializing the engine."
    )
    assert facts.error == record_error
    assert facts.error_kind == "max_len_too_long"
    assert facts.estimated_max_model_len == 23_648
    assert facts.kv_tokens == 23_648
    assert facts.max_model_len == 29_000
    assert facts.num_gpu_blocks == 1478
    assert facts.num_cpu_blocks == 2048
    assert facts.max_concurrency == 0.82
    assert facts.weights_bytes == gib(14.9888)
    assert facts.non_torch_bytes == gib(0.35)
    assert facts.kv_cache_bytes == gib(2.89)
    assert facts.device_total_bytes == gib(23.58)
    assert facts.gpu_memory_utilization == 0.9
    assert facts.engine == "v0"
    assert facts.evidence["error"].line_no == 11


def test_multi_run_paste_keeps_the_last_run() -> None:
    # Calibration records vllm25350-kvfp8-221k-err then vllm25350-kvfp8-100k: 230,528 tokens × 48 KiB
    # = 10.55 GiB; 230,528 / 100,000 = 2.31x. The two failed runs before it must not leak in.
    facts = parse("multi_run_fp8kv.log")
    assert facts.runs_found == 3
    assert facts.notes[0] == "3 runs found; using the last one"
    assert facts.error is None
    assert facts.error_kind is None
    assert facts.estimated_max_model_len is None
    assert facts.max_model_len == 100_000
    assert facts.kv_cache_bytes == gib(10.55)
    assert facts.kv_tokens == 230_528
    assert facts.max_concurrency == 2.31
    assert facts.evidence["kv_tokens"].line_no == 20  # numbered in the whole paste, not the run


def test_worker_prefixes_ansi_and_crlf() -> None:
    # Calibration record llmd-v0190-meta-llama-llama-3-1-8b-tp2pp1dp1-8192: weights 7.51, activation 1.89,
    # non-torch 2.07, KV 63.76 GiB, 1,044,688 tokens (65,293 × 16), 127.53x, CUDA graphs 0.76 GiB.
    # Both ranks print here; rank 0's lines win (TP1's 0.77 GiB graph figure is invented to prove it).
    raw = (DATA / "tp2_ansi_crlf.log").read_bytes()
    assert b"\r\n" in raw and b"\x1b[" in raw
    facts = parse("tp2_ansi_crlf.log")
    assert facts.tensor_parallel_size == 2
    assert facts.weights_bytes == gib(7.51)
    assert facts.non_torch_bytes == gib(2.07)
    assert facts.kv_cache_bytes == gib(63.76)
    assert facts.kv_cache_bytes_min_rank == gib(63.76)
    assert facts.kv_tokens == 1_044_688
    assert facts.max_concurrency == 127.53
    assert facts.cuda_graph_bytes == gib(0.76)
    assert facts.attention_backend == "FLASH_ATTN"
    assert facts.evidence["kv_cache_bytes"].text.startswith("(Worker_TP0 pid=601) INFO")
    assert "\x1b" not in facts.evidence["kv_cache_bytes"].text


def test_pipeline_ranks_keep_rank0_and_the_minimum() -> None:
    # Calibration record llmd-v0190-meta-llama-llama-3-1-8b-tp1pp2dp1-8192: stage 0 has 66.54 GiB,
    # the last stage (lm_head + sampler) 65.63 GiB, which sets the block count.
    text = (
        "(Worker_PP1 pid=12) INFO 04-09 18:20:01 [gpu_worker.py:436] Available KV cache memory: 65.63 GiB\n"
        "(Worker_PP0 pid=11) INFO 04-09 18:20:01 [gpu_worker.py:436] Available KV cache memory: 66.54 GiB\n"
    )
    facts = parse_startup_log(text)
    assert facts.kv_cache_bytes == gib(66.54)
    assert facts.kv_cache_bytes_min_rank == gib(65.63)
    assert facts.evidence["kv_cache_bytes_min_rank"].line_no == 1


# --------------------------------------------------------------------------------------------
# single templates (reference §4.4 errors, §5 backends and block sizes)


def test_085_error_without_the_estimated_length() -> None:
    # reference §4.4: 0.8.5 discards the second half of the estimate sentence
    text = (
        "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV "
        "cache is needed, which is larger than the available KV cache memory (9.50 GiB). Based on the "
        "available memory,  Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
        "initializing the engine."
    )
    facts = parse_startup_log(text)
    assert facts.error_kind == "max_len_too_long"
    assert facts.estimated_max_model_len is None
    assert facts.kv_cache_needed_bytes == gib(16.0)
    assert facts.kv_cache_bytes == gib(9.5)
    assert any("0.8.5" in note for note in facts.notes)


def test_kaito_error_without_parenthesis() -> None:
    # Calibration record kaito2132-h100nvl-mistral-small-4-119b-err (0.27.1+ wording, no "(" before 22.5)
    text = (
        "ValueError: To serve at least one request with the model's max seq len (1048576), 22.5 GiB KV cache "
        "is needed, which is larger than the available KV cache memory (17.39 GiB). Based on the available "
        "memory, the estimated maximum model length is 810208."
    )
    facts = parse_startup_log(text)
    assert facts.estimated_max_model_len == 810_208
    assert facts.kv_cache_needed_bytes == gib(22.5)
    assert facts.kv_cache_bytes == gib(17.39)
    assert facts.max_model_len == 1_048_576


def test_no_blocks_error() -> None:
    # Calibration record qanything302-rtx3090-qwen-7b-noblocks
    text = (
        "INFO 04-27 10:12:01 llm_engine.py:337] # GPU blocks: 0, # CPU blocks: 256\n"
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
        "when initializing the engine.\n"
    )
    facts = parse_startup_log(text)
    assert facts.error_kind == "no_blocks"
    assert facts.error is not None and facts.error.startswith("No available memory for the cache blocks.")
    assert facts.num_gpu_blocks == 0
    assert facts.num_cpu_blocks == 256


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (
            "Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single token. "
            "Try increasing `gpu_memory_utilization`.",
            "autofit_failed",
        ),
        (
            "RuntimeError: Failed to load model - not enough GPU memory. Try lowering "
            "--gpu-memory-utilization "
            "to free memory for weights, increasing --tensor-parallel-size, or using --quantization. "
            "(original "
            "error: CUDA out of memory. Tried to allocate 1.96 GiB.)",
            "load_oom",
        ),
        (
            "ValueError: Free memory on device (20.1/23.58 GiB) on startup is less than desired GPU memory "
            "utilization (0.9, 21.22 GiB). Decrease GPU memory utilization or reduce GPU memory used "
            "by other "
            "processes.",
            "startup_free_memory",
        ),
    ],
)
def test_error_kinds(line: str, kind: str) -> None:
    facts = parse_startup_log("INFO 01-01 00:00:00 [x.py:1] starting\n" + line)
    assert facts.error_kind == kind
    assert facts.error is not None and facts.error in line
    assert facts.evidence["error"].line_no == 2


def test_torch_oom_gives_total_capacity() -> None:
    text = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity "
        "of 23.58 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 22.54 GiB "
        "memory in use."
    )
    facts = parse_startup_log(text)
    assert facts.error_kind == "torch_oom"
    assert facts.error is not None and facts.error.startswith(
        "CUDA out of memory. Tried to allocate 1.96 GiB."
    )
    assert facts.device_total_bytes == gib(23.58)


def test_startup_free_memory_line_gives_total() -> None:
    facts = parse_startup_log(
        "ValueError: Free memory on device cuda:0 (70.5/79.19 GiB) on startup is less than desired "
        "GPU memory "
        "utilization (0.92, 72.85 GiB)."
    )
    assert facts.device_total_bytes == gib(79.19)
    assert facts.device_free_at_start_bytes == gib(70.5)
    assert facts.error_kind == "startup_free_memory"


def test_auto_fit_reduces_max_model_len() -> None:
    text = (
        "(APIServer pid=1) INFO [utils.py:281] non-default args: {'model': 'Qwen/Qwen3-8B', "
        "'max_model_len': -1}\n"
        "(EngineCore pid=9) INFO [kv_cache_utils.py:900] Auto-fit max_model_len: reduced from 131072 "
        "to 98304 "
        "to fit in available KV cache memory (13.5 GiB GPU)\n"
    )
    facts = parse_startup_log(text)
    assert facts.max_model_len == 98_304
    assert facts.model == "Qwen/Qwen3-8B"
    assert "auto-fit lowered max_model_len from 131072 to 98304" in facts.notes
    # the note stays a translatable sentence through the LogFacts model (the doctor shows it in Chinese)
    from app.web.i18n import tr
    from tests.i18n_scan import using

    with using("zh"):
        assert [tr(n) for n in facts.notes] == ["自动适配把 max_model_len 从 131072 降到了 98304"]


@pytest.mark.parametrize(
    "line",
    [
        "INFO 10-14 08:00:00 [gpu_worker.py:270] Initial free memory 78.43 GiB, reserved 40.00 GiB "
        "memory for "
        "KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling. This "
        "does does not "
        "respect the gpu_memory_utilization config.",
        "INFO 08-30 09:00:00 [gpu_worker.py:390] Initial free memory 78.43 GiB, reserved 40.0 GiB memory for "
        "KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling. This does not "
        "respect the gpu_memory_utilization config.",
    ],
)
def test_kv_cache_memory_bytes_reserved(line: str) -> None:
    facts = parse_startup_log(line)
    assert facts.kv_cache_bytes == 40 * GIB
    assert facts.kv_cache_memory_specified is True
    assert facts.device_free_at_start_bytes == gib(78.43)


@pytest.mark.parametrize(
    ("line", "size"),
    [
        ("INFO [cuda.py:158] Forcing kv cache block size to 64 for FlashMLA backend.", 64),
        ("INFO [interface.py:512] Setting kv cache block size to 128 for CUTLASS_MLA backend(s).", 128),
        (
            "INFO [config.py:403] Setting attention block size to 528 tokens to ensure that "
            "attention page size "
            "is >= mamba page size.",
            528,
        ),
        (
            "WARNING [utils.py:511] Block size is set to 128 if prefix cache or chunked prefill is enabled.",
            128,
        ),
    ],
)
def test_forced_block_size(line: str, size: int) -> None:
    text = "INFO [utils.py:253] non-default args: {'model': 'm', 'block_size': 16}\n" + line
    facts = parse_startup_log(text)
    assert facts.block_size_forced == size
    assert facts.block_size == size


@pytest.mark.parametrize(
    ("line", "backend"),
    [
        ("INFO 12-27 09:14:12 selector.py:120] Using Flash Attention backend.", "FLASH_ATTN"),
        ("INFO 12-27 09:14:12 selector.py:120] Using FlashInfer backend.", "FLASHINFER"),
        ("INFO 12-27 09:14:12 selector.py:120] Using XFormers backend.", "XFORMERS"),
        ("INFO [cuda.py:185] Using FlashMLA backend on V1 engine.", "FLASHMLA"),
        ("INFO [cuda.py:185] Using Triton MLA backend on V1 engine.", "TRITON_MLA"),
        ("INFO [cuda.py:185] Using Cutlass MLA backend on V1 engine.", "CUTLASS_MLA"),
        ("INFO [cuda.py:185] Using FLASHMLA backend.", "FLASHMLA"),
        ("INFO [cuda.py:185] Using TRITON_ATTN backend.", "TRITON_ATTN"),
        ("INFO [cuda.py:185] Using TRITON_ATTN_VLLM_V1 backend.", "TRITON_ATTN"),
        ("INFO [cuda.py:371] Using AttentionBackendEnum.FLASHINFER_MLA backend.", "FLASHINFER_MLA"),
        (
            "INFO [cuda.py:334] Using FLASH_ATTN_MLA attention backend out of potential backends: ['X']",
            "FLASH_ATTN_MLA",
        ),
        ("INFO [rocm.py:211] Using ROCM_AITER_FA backend.", "ROCM_AITER_FA"),
        ("INFO [rocm.py:211] Using ROCmFlashAttention backend.", "ROCM_FLASH"),
        ("INFO [platform.py:377] Using AscendAttentionBackend", "ASCEND"),
    ],
)
def test_attention_backend_names(line: str, backend: str) -> None:
    assert parse_startup_log(line).attention_backend == backend


def test_encoder_and_moe_backend_lines_are_not_the_attention_backend() -> None:
    text = (
        "(EngineCore pid=310) INFO [cuda.py:433] Using backend AttentionBackendEnum.FLASH_ATTN for "
        "vit attention\n"
        "(Worker_TP4 pid=406) INFO [layer.py:500] Using AttentionBackendEnum.FLASH_ATTN for "
        "MultiHeadAttention in "
        "multimodal encoder.\n"
        "(EngineCore pid=310) INFO [fp8.py:99] Using FLASHINFER_CUTLASS MoE backend\n"
        "(EngineCore pid=310) INFO [cuda.py:371] Using AttentionBackendEnum.TRITON_ATTN backend.\n"
    )
    assert parse_startup_log(text).attention_backend == "TRITON_ATTN"


def test_non_default_args_with_unevaluable_values_fall_back_to_regex() -> None:
    text = (
        "non-default args: {'model': 'deepseek-ai/DeepSeek-V3', 'tensor_parallel_size': 8, "
        "'max_model_len': 32768, "
        "'kv_cache_dtype': 'fp8', 'compilation_config': CompilationConfig(level=3), 'enforce_eager': True, "
        "'max_num_seqs': 64, 'max_num_batched_tokens': 4096, 'quantization': 'fp8', "
        "'gpu_memory_utilization': 0.85}"
    )
    facts = parse_startup_log(text)
    assert facts.model == "deepseek-ai/DeepSeek-V3"
    assert facts.tensor_parallel_size == 8
    assert facts.max_model_len == 32768
    assert facts.kv_cache_dtype == "fp8"
    assert facts.enforce_eager is True
    assert facts.max_num_seqs == 64
    assert facts.max_num_batched_tokens == 4096
    assert facts.quantization == "fp8"
    assert facts.gpu_memory_utilization == 0.85


def test_paste_starting_mid_run_counts_two_runs() -> None:
    text = (
        "INFO Available KV cache memory: 10.00 GiB\n"
        "INFO vLLM API server version 0.11.0\n"
        "INFO Available KV cache memory: 12.00 GiB\n"
    )
    facts = parse_startup_log(text)
    assert facts.runs_found == 2
    assert facts.kv_cache_bytes == 12 * GIB


def test_empty_and_unrelated_text() -> None:
    empty = parse_startup_log("")
    assert empty == LogFacts()
    assert empty.runs_found == 0
    unrelated = parse_startup_log("hello\nworld\n")
    assert unrelated.recognised_lines == 0
    assert unrelated.kv_cache_bytes is None


def test_too_long_log_is_refused() -> None:
    with pytest.raises(PlannerError) as caught:
        parse_startup_log("x" * (MAX_LOG_CHARS + 1))
    assert caught.value.field == "log"


# --------------------------------------------------------------------------------------------
# Prometheus


def test_metrics_kv_bound_two_engines() -> None:
    # Two V1 engines: usage max(0.97, 0.94) = 0.97 ≥ 0.9 and 17 + 9 = 26 waiting -> kv_bound (seed 五步).
    facts = parse_metrics(load("metrics_kv_bound.prom"))
    assert facts.kv_usage == 0.97
    assert facts.num_requests_running == 119.0
    assert facts.num_requests_waiting == 26.0
    assert facts.num_requests_swapped is None
    assert facts.preemptions == 15.0
    assert facts.prefix_cache_hits == 250_000.0
    assert facts.prefix_cache_queries == 1_000_000.0
    assert facts.prefix_hit_rate == 0.25
    assert facts.num_gpu_blocks == 2 * 29_751
    assert facts.block_size == 16
    assert facts.gpu_memory_utilization == 0.95
    assert facts.verdict == "kv_bound"
    assert "97%" in facts.reading and "26 requests waiting" in facts.reading


def test_metrics_v0_not_bound() -> None:
    facts = parse_metrics(load("metrics_v0_not_bound.prom"))
    assert facts.kv_usage == 0.4125
    assert facts.num_requests_waiting == 0.0
    assert facts.num_requests_swapped == 0.0
    assert facts.prefix_hit_rate == 0.3333  # the V0 gauge vllm:gpu_prefix_cache_hit_rate
    assert facts.num_gpu_blocks == 28_047
    assert facts.gpu_memory_utilization == 0.9
    assert facts.verdict == "not_kv_bound"


def test_metrics_full_pool_without_queue_is_not_bound() -> None:
    facts = parse_metrics("vllm:gpu_cache_usage_perc 0.99\nvllm:num_requests_waiting 0\n")
    assert facts.kv_usage == 0.99 >= KV_BOUND_USAGE
    assert facts.verdict == "not_kv_bound"


def test_metrics_empty() -> None:
    facts = parse_metrics("")
    assert facts == MetricsFacts(reading=facts.reading)
    assert facts.kv_usage is None
    assert "No KV-cache usage metric" in facts.reading


# --------------------------------------------------------------------------------------------
# fuzz: never raise

FIXTURES = sorted(p.name for p in DATA.glob("*.log"))
PROM = sorted(p.name for p in DATA.glob("*.prom"))
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.text())
def test_fuzz_random_text(text: str) -> None:
    assert isinstance(parse_startup_log(text), LogFacts)
    assert isinstance(parse_metrics(text), MetricsFacts)


@FUZZ
@given(st.binary(max_size=4000))
def test_fuzz_random_bytes(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    assert isinstance(parse_startup_log(text), LogFacts)
    assert isinstance(parse_metrics(text), MetricsFacts)


@st.composite
def mutated_fixture(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(FIXTURES + PROM))
    lines = load(name).split("\n")
    keep = draw(st.lists(st.booleans(), min_size=len(lines), max_size=len(lines)))
    lines = [line for line, kept in zip(lines, keep, strict=True) if kept or not lines]
    text = "\n".join(lines)
    if text and draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]
    digits = draw(st.lists(st.sampled_from("0123456789,.-"), max_size=40))
    chars = iter(digits)
    return re.sub(r"\d", lambda m: next(chars, m.group(0)), text)


@FUZZ
@given(mutated_fixture())
def test_fuzz_mutated_fixtures(text: str) -> None:
    facts = parse_startup_log(text)
    assert isinstance(facts, LogFacts)
    for evidence in facts.evidence.values():
        assert 1 <= evidence.line_no <= text.count("\n") + text.count("\r") + 1
    assert isinstance(parse_metrics(text), MetricsFacts)


@pytest.mark.parametrize("name", FIXTURES)
def test_every_fixture_is_recognised(name: str) -> None:
    facts = parse(name)
    assert facts.recognised_lines >= 5
    assert facts.runs_found >= 1


@pytest.mark.parametrize(
    ("rank0", "other"),
    [
        ("(VllmWorker rank=0 pid=10)", "(VllmWorker rank=1 pid=11)"),
        ("(Worker_PP0_TP0 pid=10)", "(Worker_PP1_TP1 pid=11)"),
        ("", "(VllmWorkerProcess pid=11)"),  # V0 multiprocessing: the driver prints without a prefix
    ],
)
def test_rank_prefixes(rank0: str, other: str) -> None:
    text = (
        f"{rank0} INFO [worker.py:1] Available KV cache memory: 20.00 GiB\n"
        f"{other} INFO [worker.py:1] Available KV cache memory: 19.50 GiB\n"
    )
    facts = parse_startup_log(text)
    assert facts.kv_cache_bytes == 20 * GIB
    assert facts.kv_cache_bytes_min_rank == gib(19.5)
    assert "ranks printed different KV cache memory; the smallest one sets the block count" in facts.notes


# --------------------------------------------------------------------------------------------
# failures, stages and lines added for issue 13 (templates confirmed in vLLM 0.19.0's source)


def test_profiling_only_block_override_is_not_a_fact() -> None:
    # 0.18/0.19 size a minimal KV cache with available memory 0 while profiling CUDA graphs
    # (gpu_model_runner._init_minimal_kv_cache_for_profiling), printing this before the real sizing
    facts = parse_startup_log(
        "INFO [kv_cache_utils.py:830] Overriding num_gpu_blocks=0 with num_gpu_blocks_override=512\n"
        "INFO [gpu_worker.py:356] Available KV cache memory: 26.43 GiB\n"
        "INFO [kv_cache_utils.py:1307] GPU KV cache size: 216,512 tokens\n"
    )
    assert facts.num_gpu_blocks is None
    assert facts.kv_tokens == 216_512
    assert any("profiling CUDA graphs" in note for note in facts.notes)
    # a user's own override (computed blocks > 0) is still the block count
    user = parse_startup_log("Overriding num_gpu_blocks=9000 with num_gpu_blocks_override=512\n")
    assert user.num_gpu_blocks == 512


def test_banner_max_model_len_fp8_line_and_pp() -> None:
    facts = parse_startup_log(
        "(APIServer pid=1) INFO [utils.py:299]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.20.2\n"
        "(APIServer pid=1) INFO [utils.py:299]   █▄█▀ █     █     █     █  model   Qwen/Qwen3-8B\n"
        "(APIServer pid=1) INFO [model.py:1678] Using max model len 40960\n"
        "(APIServer pid=1) INFO [cache.py:228] Using fp8 data type to store kv cache. It reduces the GPU memory "
        "footprint and boosts the performance.\n"
        "(EngineCore pid=2) INFO [core.py:106] Initializing a V1 LLM engine (v0.20.2) with config: "
        "model='Qwen/Qwen3-8B', tensor_parallel_size=2, pipeline_parallel_size=2, kv_cache_dtype=fp8_e4m3\n"
    )
    assert (facts.vllm_version, facts.model, facts.max_model_len) == ("0.20.2", "Qwen/Qwen3-8B", 40960)
    assert (facts.tensor_parallel_size, facts.pipeline_parallel_size) == (2, 2)
    assert facts.kv_cache_dtype == "fp8_e4m3"  # the config line beats the generic "fp8" of the INFO line
    only_info = parse_startup_log("INFO [cache.py:228] Using fp8 data type to store kv cache. It reduces …\n")
    assert only_info.kv_cache_dtype == "fp8"


def test_oom_kind_follows_the_stage() -> None:
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    load_stage = parse_startup_log("INFO Starting to load model meta-llama/Llama-3.1-70B...\n" + oom)
    assert load_stage.error_kind == "load_oom"
    graph_stage = parse_startup_log(
        "INFO Model loading took 14.99 GiB memory and 42.3 seconds\n"
        "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  40%|████ | 20/51\n" + oom
    )
    assert graph_stage.error_kind == "graph_oom"
    profile_stage = parse_startup_log("INFO Model loading took 14.99 GiB memory and 42.3 seconds\n" + oom)
    assert profile_stage.error_kind == "torch_oom"
    after_start = parse_startup_log(
        "INFO Available KV cache memory: 26.43 GiB\nINFO:     Application startup complete.\n" + oom
    )
    assert after_start.error_kind is None  # a serving-time OOM is not a start-up failure


def test_generic_failure_is_replaced_by_a_specific_cause() -> None:
    facts = parse_startup_log(
        "(EngineCore pid=1) ERROR [core.py:1108] EngineCore failed to start.\n"
        "(EngineCore pid=1) ERROR [core.py:1108] Traceback (most recent call last):\n"
        "(EngineCore pid=1) ERROR [core.py:1108] ValueError: No available memory for the cache blocks. Try "
        "increasing `gpu_memory_utilization` when initializing the engine.\n"
    )
    assert facts.error_kind == "no_blocks"
    generic = parse_startup_log(
        "(EngineCore pid=1) ERROR [core.py:1108] EngineCore failed to start.\n"
        "(EngineCore pid=1) ERROR [core.py:1108] Traceback (most recent call last):\n"
        "(EngineCore pid=1) ERROR [core.py:1108] KeyError: 'model.layers.0.mlp.experts.w13_weight'\n"
    )
    assert generic.error_kind == "startup_failed"
    # the traceback's closing exception names the root cause better than "EngineCore failed to start."
    assert generic.error == "KeyError: 'model.layers.0.mlp.experts.w13_weight'"


# --------------------------------------------------------------------------------------------
# linear time (issue 19): each rule's own prefix followed by a long run of one character class


CHARACTER_CLASSES = ("7", "a", " ", ".", ",", "'", "1a.,= (\"'-")


def _linear(pattern: str) -> bool:
    """On RE2 (an automaton, linear by construction) or a shape app.core.regex proves cannot backtrack."""
    from app.core import regex

    compiled = regex.PATTERNS[pattern]
    return compiled.engine == "re2" or regex.shape_problems(pattern) == []


@pytest.mark.parametrize("chars", CHARACTER_CLASSES)
def test_every_rule_is_linear_in_its_line(chars: str) -> None:
    # no clock (bench/log_linearity.py prints the 8x-input time ratios): every rule's pattern is linear
    # by construction, and a 32,000-character run after each rule's own prefix parses to no value
    from app.core.logs import RULES

    assert all(_linear(rule.pattern.pattern) for rule in RULES)
    for rule in RULES:
        facts = parse_startup_log(rule.needle + " (" + chars * (32_000 // len(chars)))
        assert facts.runs_found <= 1 and facts.num_gpu_blocks is None


def test_metrics_label_is_linear() -> None:
    from app.core import regex
    from app.core.logs import metrics

    patterns = [v.pattern for v in vars(metrics).values() if getattr(v, "pattern", None) in regex.PATTERNS]
    # the labels only: the sample line is split with str methods (metrics._sample, hardening10)
    assert len(patterns) == 1 and all(_linear(p) for p in patterns)
    facts = parse_metrics("vllm:cache_config_info{" + "a" * 32_000 + '="1"} 1\n')
    assert facts.num_gpu_blocks is None  # a label with no value: nothing read, no blow-up


def test_long_lines_are_cut_and_captures_capped() -> None:
    from app.core.logs import MAX_ERROR_CHARS, MAX_LINE_CHARS, MAX_VALUE_CHARS

    facts = parse_startup_log("ValueError: No available memory for the cache blocks. " + "x" * 200_000)
    assert facts.error is not None and len(facts.error) <= MAX_ERROR_CHARS
    long_model = parse_startup_log(
        "Initializing an LLM engine (v0.6.6) with config: model='" + "m" * 9000 + "'"
    )
    assert long_model.model is not None and len(long_model.model) <= MAX_VALUE_CHARS
    beyond = parse_startup_log("x" * MAX_LINE_CHARS + " Available KV cache memory: 9.00 GiB")
    assert beyond.kv_cache_bytes is None  # past the line cap, not read


def test_docker_command_and_device_name() -> None:
    # the vllm/vllm-openai image's entrypoint is `vllm serve`: flags after the image are vLLM's
    facts = parse_startup_log(
        "docker run --runtime nvidia --gpus all \\\n"
        "    -v ~/.cache/huggingface:/root/.cache/huggingface \\\n"
        "    -p 8000:8000 --ipc=host \\\n"
        "    vllm/vllm-openai:v0.10.1 \\\n"
        "    --model Qwen/Qwen3-8B --tensor-parallel-size 2 --max-model-len 32768\n"
        "GPU 0: NVIDIA A100-SXM4-80GB\n"
    )
    assert (facts.model, facts.tensor_parallel_size, facts.max_model_len) == ("Qwen/Qwen3-8B", 2, 32768)
    assert facts.device_name == "NVIDIA A100-SXM4-80GB"
    other_image = parse_startup_log("docker run -p 80:80 nginx:latest --model x --max-model-len 5\n")
    assert other_image.model is None and other_image.max_model_len is None


def test_an_error_the_start_up_survived_is_not_a_failure() -> None:
    facts = parse_startup_log(
        "(EngineCore pid=1) ERROR [registry.py:1] ModuleNotFoundError: No module named 'flash_attn_3'\n"
        "(EngineCore pid=1) INFO [gpu_worker.py:356] Available KV cache memory: 26.43 GiB\n"
        "(EngineCore pid=1) INFO [core.py:272] init engine (profile, create kv cache, warmup model) took 22 s\n"
    )
    assert facts.error_kind is None and facts.error is None
    assert any("start-up completed" in note for note in facts.notes)


def test_notes_quote_capped_numbers() -> None:
    # a count is at most 18 digits (MAX_INT_DIGITS): a note never quotes a 60 kB run of digits
    facts = parse_startup_log(
        "Overriding num_gpu_blocks=" + "9" * 60_000 + " with num_gpu_blocks_override=512"
    )
    assert all(len(note) < 500 for note in facts.notes)
    reduced = parse_startup_log("Auto-fit max_model_len: reduced from " + "9" * 60_000 + " to 4096")
    assert all(len(note) < 500 for note in reduced.notes)
