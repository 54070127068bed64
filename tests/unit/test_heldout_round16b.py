"""The doctor on the real start-up logs held apart in round 16b (tests/data/logs/heldout-2026-12zi/: 4 ROCm, 4 Ascend,
5 NVIDIA; sources.json names each repository file or thread). Expectations were written by hand from each log and
committed (41511ed6) before the doctor ran on any of them; scored once, blind, on main 07cf9d11: 13/13 verdicts,
225/225 facts, one fact claimed that the log does not print. That claim is pinned below on the log's own line.
heldout-2026-12zj/ (1 Ascend, 2 NVIDIA), committed (2f08c747) after zi's fixes and scored once, blind, on them: 3/3
verdicts, 45/45 facts, two claims that were the expectations' mistake (gpu_platform, which the logs print)."""

from __future__ import annotations

import pytest

from app.core.logs import parse_startup_log
from tests import log_sets
from tests.log_sets import LOGS_DIR, check_log

SET_ZI = LOGS_DIR / "heldout-2026-12zi"
SET_ZJ = LOGS_DIR / "heldout-2026-12zj"  # collected after zi's fixes, to meet them blind

# vllm-ascend docs/source/quick_start.md at 322ce72a, the example's engine line (cut after its first keys)
PLACEHOLDER_ENGINE = (
    "(EngineCore pid=75652) INFO 05-27 11:40:44 [core.py:109] Initializing a V1 LLM engine (vx.x.x) with config: "
    "model='Qwen/Qwen3-0.6B', speculative_config=None, tokenizer='Qwen/Qwen3-0.6B', skip_tokenizer_init=False, "
    "tokenizer_mode=auto, revision=None, tokenizer_revision=None, trust_remote_code=False, dtype=torch.bfloat16, "
    "max_seq_len=40960, download_dir=None, load_format=auto, tensor_parallel_size=1, pipeline_parallel_size=1\n"
)
# ROCm/rocm-blogs rocm7-ray/README.md at 0572e018, the same line from a release build (cut likewise)
RELEASE_ENGINE = (
    "(EngineCore_DP0 pid=461101) INFO 12-18 05:59:52 [core.py:97] Initializing a V1 LLM engine "
    "(v0.11.1rc2.dev141+g38f225c2a) with config: model='deepseek-ai/DeepSeek-R1-Distill-Qwen-14B', "
    "speculative_config=None, tokenizer='deepseek-ai/DeepSeek-R1-Distill-Qwen-14B', skip_tokenizer_init=False, "
    "tokenizer_mode=auto, revision=None, tokenizer_revision=None, trust_remote_code=False, dtype=torch.bfloat16, "
    "max_seq_len=4096, download_dir=None, load_format=auto, tensor_parallel_size=2, pipeline_parallel_size=1\n"
)


def test_a_placeholder_engine_version_is_not_a_release() -> None:
    # v1/engine/core.py prints vllm/version.py's __version__ (vcs-versioning: a PEP 440 release, a digit first);
    # the docs' "vx.x.x" is a placeholder: before the fix the doctor read vllm_version "x.x.x"
    facts = parse_startup_log(PLACEHOLDER_ENGINE)
    assert (facts.vllm_version, facts.engine, facts.model, facts.max_model_len) == (
        None,
        "v1",
        "Qwen/Qwen3-0.6B",
        40960,
    )


def test_a_dev_tree_engine_version_is_not_a_release() -> None:
    # vllm/version.py falls back to __version__ = "dev" when _version.py is missing (0.33.0): "(vdev)"
    facts = parse_startup_log(PLACEHOLDER_ENGINE.replace("(vx.x.x)", "(vdev)"))
    assert (facts.vllm_version, facts.engine) == (None, "v1")


def test_a_release_engine_version_is_still_read() -> None:
    facts = parse_startup_log(RELEASE_ENGINE)
    assert (facts.vllm_version, facts.engine, facts.tensor_parallel_size) == (
        "0.11.1rc2.dev141+g38f225c2a",
        "v1",
        2,
    )


def test_set_zi_holds_its_logs() -> None:
    log_sets.check_set(SET_ZI, 13, {"rocm": 4, "ascend": 4, "nv": 5})


@pytest.mark.parametrize("name", sorted(log_sets.sources(SET_ZI)))
def test_set_zi_as_scored(name: str) -> None:
    check_log(SET_ZI, name, log_sets.sources(SET_ZI)[name]["expect"])


def test_set_zj_holds_its_logs() -> None:
    log_sets.check_set(SET_ZJ, 3, {"ascend": 1, "nv": 2})


@pytest.mark.parametrize("name", sorted(log_sets.sources(SET_ZJ)))
def test_set_zj_as_scored(name: str) -> None:
    check_log(SET_ZJ, name, log_sets.sources(SET_ZJ)[name]["expect"])


# --- torch_npu's "compiler_depend.ts" warning tag and CANN's SocVersion are Ascend signs (noticed in round 16) --------

POOL = (
    "(EngineCore pid=2113) INFO 06-10 16:39:18 [kv_cache_utils.py:1708] GPU KV cache size: 821,083 tokens\n"
)


def _held_line(set_name: str, log: str, needle: str) -> str:
    """The first line of an already-held real log that holds ``needle``."""
    lines = (LOGS_DIR / set_name / log).read_text(encoding="utf-8").splitlines(keepends=True)
    return next(line for line in lines if needle in line)


DEPEND_WARNING = _held_line(
    "heldout-2026-12zg",
    "ascend_worker_tp0_ep0_tp1_ep1_acl_graph_0_26_init_engine_35_96s.log",
    "compiler_depend.ts:",
)
SOC_VERSION = _held_line(
    "heldout-2026-12e", "ascend_910b2_npu_function_error_acl_set_compileopt.log", "SocVersion ="
)


def test_a_compiler_depend_warning_makes_the_run_an_npus() -> None:
    # torch_npu's TORCH_WARN tag (its errors print the full build/CMakeFiles/torch_npu.dir/compiler_depend.ts path);
    # before the fix vLLM's "GPU KV cache size" wording, printed by vllm-ascend too, left the run a GPU's
    assert DEPEND_WARNING.startswith("[rank0]:[W1210 03:09:10.966659833 compiler_depend.ts:187] Warning:")
    facts = parse_startup_log(POOL + DEPEND_WARNING)
    assert (facts.device_type, facts.is_ascend, facts.kv_tokens) == ("NPU", True, 821_083)


def test_the_older_untimed_compiler_depend_tag_is_an_npus_too() -> None:
    line = (
        "[W compiler_depend.ts:623] Warning: expandable_segments currently defaults to false. You can enable this "
        "feature by `export PYTORCH_NPU_ALLOC_CONF = expandable_segments:True`. (function operator())\n"
    )
    assert parse_startup_log(POOL + line).device_type == "NPU"


def test_a_cann_soc_version_makes_the_run_an_npus() -> None:
    assert "init runtime platform info failed, SocVersion = Ascend910B2" in SOC_VERSION
    facts = parse_startup_log(POOL + SOC_VERSION)
    assert (facts.device_type, facts.is_ascend) == ("NPU", True)


@pytest.mark.parametrize(
    "line",
    [
        # torch's CUDA build tags its real source file
        "[rank0]:[W623 15:43:19.349006411 ProcessGroupNCCL.cpp:1575] Warning: WARNING: destroy_process_group() was "
        "not called before program exit, which can leak resources.\n",
        # a CMake build step naming the same file is not a torch_npu warning
        "touch build/benchmarks/gemm/CMakeFiles/cutlass_benchmarks_gemm_sycl.dir/compiler_depend.ts\n",
        # a SoC word that is not an Ascend chip
        "SocVersion = unknown\n",
    ],
)
def test_lines_that_are_not_ascend_signs_leave_a_gpu(line: str) -> None:
    facts = parse_startup_log(POOL + line)
    assert (facts.device_type, facts.is_ascend) == ("GPU", False)
