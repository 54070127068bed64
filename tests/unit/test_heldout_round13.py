"""The doctor on the real start-up logs held apart in round 13 (tests/data/logs/heldout-2026-12u/, 5 Ascend, 6 ROCm,
3 NVIDIA, 3 whose thread names no device; sources.json names each thread). Expectations were written by hand from
each log and committed (4c3c0c8) before the doctor ran on any of them; scored once, blind, on main 9dc5632: 16/17
verdicts, 61/69 facts, nothing claimed (5e84866). Batches v (heldout-2026-12v, 17 logs) and w (heldout-2026-12w, 9 logs)
were scored the same way on the code after the previous batch's fixes: 17/17 and 67/68 (c30cf4d), 9/9 and 42/47
(04d41ee), x 8/8 and 19/19 (6568e83); batch y (heldout-2026-12y, 12 logs, round 13b) on the code after doctor13's open
risks were fixed (a80840f): 12/12 and 29/34.
Each test below pins one class of those misses on the real line; every line is quoted from the log it names unless its
comment says otherwise."""

from __future__ import annotations

import pytest

from app.core.diagnose import diagnose
from app.core.logs import parse_startup_log
from tests import log_sets
from tests.log_sets import LOGS_DIR, check_log

SET_U = LOGS_DIR / "heldout-2026-12u"


def _verdict(text: str) -> str:
    return diagnose(log_text=text, metrics_text=None, target_concurrency=None, device_hint=None).verdict


# --- CANN's AI Core fault with a kind of more than one word ---------------------------------------------------------

FFTSPLUS_OF = (  # vllm-ascend#16654, GLM-5.2 on A3, vllm-ascend 0.23.0: the decode worker after hours of serving
    "(Worker_TP11_DCP11_EP11 pid=2640) ERROR 09-02 05:45:09 [multiproc_executor.py:987]         The error from "
    "device(chipId:5, dieId:1), serial number is 7, there is an exception of fftsplus aicore error, core id is 14, "
    "error code = 0, dump info: pc start: 0x12c0c136b000, current: 0x12c0c136c2b4, vec error info: 0, mte error info: "
    "0xa36009baba, ifu error info: 0x7a0e9abb8e040, ccu error info: 0x87f40e0c02d265, cube error info: 0, biu error "
    "info: 0, aic error mask: 0x6500020bd00028c, para base: 0x12c140111080, aic cond: 0.\n"
)


def test_an_exception_of_fftsplus_aicore_error_is_an_npu_error() -> None:
    facts = parse_startup_log(FFTSPLUS_OF)
    assert (facts.error_kind, facts.device_type, facts.tensor_parallel_at_least) == ("npu_error", "NPU", 12)
    assert _verdict(FFTSPLUS_OF) == "failed"


def test_the_one_word_kind_still_reads() -> None:
    line = (  # vllm-ascend#2976's wording (vllm_text.NPU_CORE_EXCEPTION's own example)
        "The error from device(chipId:2, dieId:0), serial number is 4, there is an exception of aivec error, core id "
        "is 32, error code = 0x800000\n"
    )
    assert parse_startup_log(line).error_kind == "npu_error"


# --- the dtype fallback names the card and the dtype --------------------------------------------------------------

MI50_FALLBACK = (  # nlzy/vllm-gfx906#41, the 0.10.1 gfx906 fork on an MI50
    "(APIServer pid=1) WARNING 09-23 03:18:58 [__init__.py:2768] Your device 'Radeon Instinct MI50 32GB' (with compute "
    "capability 9.0) doesn't support torch.bfloat16. Falling back to torch.float16 for compatibility.\n"
    "(APIServer pid=1) WARNING 09-23 03:18:58 [__init__.py:2819] Casting torch.bfloat16 to torch.float16.\n"
)


def test_the_bfloat16_fallback_names_the_card_and_the_dtype() -> None:
    facts = parse_startup_log(MI50_FALLBACK)
    assert (facts.device_name, facts.dtype, facts.device_type) == (
        "Radeon Instinct MI50 32GB",
        "float16",
        "GPU",
    )


def test_a_device_without_a_compute_capability_is_not_a_card_name() -> None:
    line = (  # a CPU run (vLLM 0.9.2, as a public notebook prints it): 'cpu' is no card; the dtype still falls back
        "WARNING 07-15 21:27:10 [config.py:3320] Your device 'cpu' doesn't support torch.bfloat16. Falling back to "
        "torch.float16 for compatibility.\n"
    )
    facts = parse_startup_log(line)
    assert (facts.device_name, facts.device_type, facts.dtype) == (None, None, "float16")


# --- the quantization warning names the method; the chunked-prefill line says it is on ----------------------------


def test_the_not_fully_optimized_warning_names_the_quantization() -> None:
    line = (  # nlzy/vllm-gfx906#41
        "(APIServer pid=1) WARNING 09-23 03:18:58 [__init__.py:1171] gptq quantization is not fully optimized yet. The "
        "speed can be slower than non-quantized models.\n"
    )
    assert parse_startup_log(line).quantization == "gptq"


CHUNKED = (  # nlzy/vllm-gfx906#38 (config/scheduler.py prints it only when chunked prefill is enabled)
    "(APIServer pid=1) INFO 09-14 16:04:32 [scheduler.py:222] Chunked prefill is enabled with "
    "max_num_batched_tokens=2048.\n"
)


def test_the_chunked_prefill_line_says_chunked_prefill_is_on() -> None:
    facts = parse_startup_log(CHUNKED)
    assert (facts.enable_chunked_prefill, facts.max_num_batched_tokens) == (True, 2048)


MLA_OVERRIDE = (  # vLLM 0.7.3 V0 on Ascend (vllm-ascend 0.7.3, DeepSeek-V3 w8a8 over Ray; a public GitHub repository
    # file, search index id 55692708545): config.py::VllmConfig.__post_init__ turns both features off for MLA; the
    # engine-config line after it prints "enable_prefix_caching=False, chunked_prefill_enabled=False"
    "INFO 03-18 03:09:27 config.py:3329] MLA is enabled; forcing chunked prefill and prefix caching to be disabled.\n"
)


def test_v0s_mla_override_says_chunked_prefill_and_prefix_caching_are_off() -> None:
    facts = parse_startup_log(MLA_OVERRIDE)
    assert (facts.enable_chunked_prefill, facts.enable_prefix_caching) == (False, False)


def test_the_mla_override_beats_the_schedulers_chunked_prefill_line() -> None:
    # V0 prints the scheduler's line (SchedulerConfig.__post_init__) before VllmConfig's override: the two quoted
    # lines above, in that order, leave chunked prefill off
    facts = parse_startup_log(CHUNKED + MLA_OVERRIDE)
    assert (facts.enable_chunked_prefill, facts.max_num_batched_tokens) == (False, 2048)


# --- the set, after its fixes: 17/17 verdicts, 69/69 facts, nothing claimed -----------------------------------------


def test_set_u_holds_its_logs() -> None:
    log_sets.check_set(SET_U, 17, {"ascend": 5, "rocm": 6, "nv": 3, "gpu": 3})


@pytest.mark.parametrize("name", sorted(log_sets.sources(SET_U)))
def test_set_u_after_its_fixes(name: str) -> None:
    check_log(SET_U, name, log_sets.sources(SET_U)[name]["expect"])


# --- batch v (heldout-2026-12v), blind on the fixes above: 17/17 verdicts, 67/68 facts, nothing claimed ------------

SET_V = LOGS_DIR / "heldout-2026-12v"
MQ_ENGINE = (  # ROCm/legacy-rocm-build#4447 (ROCm 6.3.1): V0's multiprocessing front end, after "HIP error: invalid
    # device function"; no llm_engine.py frame within the quote
    '  File "/usr/local/lib/python3.12/dist-packages/vllm/engine/multiprocessing/engine.py", line 402, in '
    "run_mp_engine\n"
    "    engine = MQLLMEngine.from_engine_args(engine_args=engine_args,\n"
    '  File "/usr/local/lib/python3.12/dist-packages/vllm/engine/multiprocessing/engine.py", line 125, in '
    "from_engine_args\n"
)


def test_v0s_multiprocessing_engine_frames_say_v0() -> None:
    assert parse_startup_log(MQ_ENGINE).engine == "v0"


def test_v1s_engine_core_frames_are_not_read_as_v0() -> None:
    text = (  # LMCache#2306, V1's engine-core process
        '(EngineCore_DP0 pid=595868) ERROR 01-08 14:50:30 [core.py:844]   File "/usr/local/lib/python3.12/dist-packages'
        '/vllm/v1/engine/core.py", line 835, in run_engine_core\n'
    )
    assert parse_startup_log(text).engine == "v1"


def test_set_v_holds_its_logs() -> None:
    log_sets.check_set(SET_V, 17, {"ascend": 5, "rocm": 6, "nv": 4, "gpu": 2})


@pytest.mark.parametrize("name", sorted(log_sets.sources(SET_V)))
def test_set_v_after_its_fix(name: str) -> None:
    check_log(SET_V, name, log_sets.sources(SET_V)[name]["expect"])


# --- batch w (heldout-2026-12w), blind on the fixes above: 9/9 verdicts, 42/47 facts, nothing claimed ---------------

SET_W = LOGS_DIR / "heldout-2026-12w"
CK_FA = "DEBUG 06-25 10:03:27 [rocm_flash_attn.py:569] Using CK FA in ROCmBackend\n"  # vllm#20069, MI300X, V0
AMD_ALLREDUCE = (  # lamikr/rocm_sdk_builder#248, V0 0.7.2 on ROCm
    "INFO 04-19 02:53:57 config.py:1413] Disabled the custom all-reduce kernel because it is not supported on AMD GPUs.\n"
)


@pytest.mark.parametrize("line", [CK_FA, AMD_ALLREDUCE])
def test_rocm_only_lines_name_rocm(line: str) -> None:
    facts = parse_startup_log(line)
    assert (facts.gpu_platform, facts.device_type) == ("rocm", "GPU")


def test_the_current_platform_wording_names_no_platform() -> None:
    # not a quoted log: 0.33.0's format string (config/parallel.py, logger.debug, any platform without custom
    # all-reduce) in a DEBUG line of that release's shape; it names no platform
    line = "DEBUG 12-01 10:00:00 [parallel.py:1169] Disabled the custom all-reduce kernel because it is not supported on current platform.\n"
    assert parse_startup_log(line).gpu_platform is None


OOM_BROKEN = (  # vllm#19445, an RTX 2080 Ti on 0.13.0: torch's message broken over lines in the paste
    "torch.OutOfMemoryError: CUDA out of memory.\n"
    "Tried to allocate 252.00 MiB. GPU 0 has a total capacity of 10.57 GiB of which 163.12 MiB is free.\n"
    "Process 2073789 has 10.41 GiB memory in use.\n"
)


def test_the_capacity_on_the_next_line_of_an_oom_is_the_devices_total() -> None:
    facts = parse_startup_log(OOM_BROKEN)
    # 10.57 GiB as printed: round(10.57 × 2**30) = 11,349,451,080 bytes
    assert (facts.error_kind, facts.device_total_bytes) == ("torch_oom", 11_349_451_080)


def test_set_w_holds_its_logs() -> None:
    log_sets.check_set(SET_W, 9, {"ascend": 3, "rocm": 3, "nv": 3})


@pytest.mark.parametrize("name", sorted(log_sets.sources(SET_W)))
def test_set_w_after_its_fixes(name: str) -> None:
    check_log(SET_W, name, log_sets.sources(SET_W)[name]["expect"])


# --- batch x (heldout-2026-12x), blind on the fixes above: 8/8 verdicts, 19/19 facts, nothing claimed (no fix) -------

SET_X = LOGS_DIR / "heldout-2026-12x"


def test_set_x_holds_its_logs() -> None:
    log_sets.check_set(SET_X, 8, {"ascend": 6, "nv": 1, "gpu": 1})


@pytest.mark.parametrize("name", sorted(log_sets.sources(SET_X)))
def test_set_x_blind(name: str) -> None:
    check_log(SET_X, name, log_sets.sources(SET_X)[name]["expect"])


# --- doctor13's open risks (round 13b): each on a real line ---------------------------------------------------------

GFX_IN_A_PATH = (  # nlzy/vllm-gfx906#6 (heldout-2026-12v): "gfx906" is the name of the poster's conda env, not a device
    '  File "/home/zerone/miniconda3/envs/gfx906/lib/python3.11/site-packages/vllm/entrypoints/openai/api_server.py", '
    "line 269, in build_async_engine_client_from_engine_args\n"
)


def test_a_gfx_name_inside_a_path_says_no_platform() -> None:
    facts = parse_startup_log(GFX_IN_A_PATH)
    assert (facts.gpu_platform, facts.device_type) == (None, None)


@pytest.mark.parametrize(
    "line",
    [
        # nlzy/vllm-gfx906#30: collect_env on a ROCm host names the architecture after the card
        "GPU models and configuration : AMD Radeon Graphics (gfx906:sramecc+:xnack-)\n",
        # nlzy/vllm-gfx906#38 (heldout-2026-12u): the fork's release carries its architecture as a version label
        "(APIServer pid=1) INFO 09-14 16:04:15 [api_server.py:1805] vLLM API server version 0.10.1+gfx906\n",
    ],
)
def test_an_architecture_printed_as_such_still_names_rocm(line: str) -> None:
    assert parse_startup_log(line).gpu_platform == "rocm"


def test_a_fork_image_named_after_an_architecture_is_not_one() -> None:
    # nlzy/vllm-gfx906#38's docker run continuation line: the image's name, not the host's card
    assert parse_startup_log("> nalanzeyu/vllm-gfx906 \\\n").gpu_platform is None


MINERU_VERSION = (  # opendatalab/MinerU#3582 (heldout-2026-12u): MinerU checks the installed vLLM release and prints it
    "2025-09-23 00:43:55.954 | INFO     | mineru.backend.vlm.custom_logits_processors:enable_custom_logits_processors:40"
    " - compute_capability: 12.0 >= 8.0 and vllm version: 0.10.1.1 >= 0.10.1, enable custom_logits_processors\n"
)


def test_a_callers_vllm_version_line_names_the_release() -> None:
    assert parse_startup_log(MINERU_VERSION).vllm_version == "0.10.1.1"


def test_vllms_own_version_line_wins_over_a_reported_one() -> None:
    # vLLM's own line (a primary source) beside MinerU's (a secondary one), whichever comes first; the server line is
    # nlzy/vllm-gfx906#41's (heldout-2026-12u)
    server = "(APIServer pid=1) INFO 09-23 03:18:42 [api_server.py:1805] vLLM API server version 0.10.1+gfx906.update1\n"
    assert parse_startup_log(server + MINERU_VERSION).vllm_version == "0.10.1+gfx906.update1"
    text = MINERU_VERSION + server
    assert parse_startup_log(text).vllm_version == "0.10.1+gfx906.update1"


COLLECT_ENV_MI300X = (  # vllm#16474 (heldout-2026-12v), collect_env's report on a ROCm host: device 0's name and gfx arch
    "GPU models and configuration: AMD Instinct MI300X (gfx942:sramecc+:xnack-)\n"
)


def test_collect_envs_gpu_line_names_the_card() -> None:
    facts = parse_startup_log(COLLECT_ENV_MI300X)
    assert (facts.device_name, facts.device_type, facts.gpu_platform) == (
        "AMD Instinct MI300X",
        "GPU",
        "rocm",
    )


def test_collect_envs_empty_gpu_line_names_nothing() -> None:
    # vllm#13061 (heldout-2026-12e), a 2 × 4090 paste: the header alone, the nvidia-smi rows on the lines below
    text = "GPU models and configuration:\nGPU 0: NVIDIA GeForce RTX 4090\nGPU 1: NVIDIA GeForce RTX 4090\n"
    assert parse_startup_log(text).device_name == "NVIDIA GeForce RTX 4090"
    assert parse_startup_log("GPU models and configuration : Could not collect\n").device_name is None


V0_ENGINE_PROCESS = (
    "RuntimeError: Engine process failed to start. See stack trace for the root cause.\n"  # vllm-gfx906#6
)
V0_MQ_WAITING = "DEBUG 06-25 10:03:34 [client.py:194] Waiting for output from MQLLMEngine.\n"  # vllm#20069


@pytest.mark.parametrize("line", [V0_ENGINE_PROCESS, V0_MQ_WAITING])
def test_v0_only_front_end_wordings_say_v0(line: str) -> None:
    # both are printed only on the api_server's MQLLMEngine branch (0.6.3 and 0.10.2's api_server.py, client.py)
    assert parse_startup_log(line).engine == "v0"


def test_v1s_engine_core_failure_is_not_v0() -> None:
    line = (  # GLM-OCR#116 (heldout-2026-12x): V1's API server
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}\n"
    )
    assert parse_startup_log(line).engine != "v0"


# --- batch y (heldout-2026-12y), blind on the fixes above: 12/12 verdicts, 29/34 facts, nothing claimed -------------

SET_Y = LOGS_DIR / "heldout-2026-12y"
NPU_SMI_HEADER = (  # vllm-ascend#3785: npu-smi's table header, pasted with the start-up
    "| npu-smi 25.0.rc1.1               Version: 25.0.rc1.1                                           |\n"
)


def test_npu_smis_table_says_npu() -> None:
    facts = parse_startup_log(NPU_SMI_HEADER)
    assert (facts.device_type, facts.is_ascend, facts.vllm_version) == ("NPU", True, None)


V0_WORKER_PROCESS = (  # vllm-ascend#922, vllm-ascend 0.7.3 (V0): caret colour codes around V0's worker prefix
    "^[[1;36m(VllmWorkerProcess pid=113915)^[[0;0m INFO 05-21 11:56:07 [platform.py:144] Compilation disabled, using "
    "eager mode by default\n"
)
V1_WORKER_RANK = (  # vast-data/VUA#7: 0.8-0.9's V1 multiproc worker prefix
    "(VllmWorker rank=1 pid=3275251) INFO 06-17 15:32:29 [pynccl.py:70] vLLM is using nccl==2.26.2\n"
)
V1_CORE_WAITING = (  # vllm#19810 (quoted in a reply): V1's engine-core process waits for the front end
    "> INFO 06-18 15:48:48 [core.py:460] Waiting for init message from front-end.\n"
)


@pytest.mark.parametrize(
    ("text", "engine"), [(V0_WORKER_PROCESS, "v0"), (V1_WORKER_RANK, "v1"), (V1_CORE_WAITING, "v1")]
)
def test_the_worker_and_engine_core_prefixes_name_the_engine(text: str, engine: str) -> None:
    assert parse_startup_log(text).engine == engine


def test_set_y_holds_its_logs() -> None:
    log_sets.check_set(SET_Y, 12, {"ascend": 4, "rocm": 2, "nv": 4, "gpu": 2})


@pytest.mark.parametrize("name", sorted(log_sets.sources(SET_Y)))
def test_set_y_after_its_fixes(name: str) -> None:
    check_log(SET_Y, name, log_sets.sources(SET_Y)[name]["expect"])
