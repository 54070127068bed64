"""The doctor on the real start-up logs held apart in round 16b (tests/data/logs/heldout-2026-12zi/: 4 ROCm, 4 Ascend,
5 NVIDIA; sources.json names each repository file or thread). Expectations were written by hand from each log and
committed (41511ed6) before the doctor ran on any of them; scored once, blind, on main 07cf9d11: 13/13 verdicts,
225/225 facts, one fact claimed that the log does not print. That claim is pinned below on the log's own line."""

from __future__ import annotations

import pytest

from app.core.logs import parse_startup_log
from tests import log_sets
from tests.log_sets import LOGS_DIR, check_log

SET_ZI = LOGS_DIR / "heldout-2026-12zi"

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
    assert (facts.vllm_version, facts.engine, facts.tensor_parallel_size) == ("0.11.1rc2.dev141+g38f225c2a", "v1", 2)


def test_set_zi_holds_its_logs() -> None:
    log_sets.check_set(SET_ZI, 13, {"rocm": 4, "ascend": 4, "nv": 5})


@pytest.mark.parametrize("name", sorted(log_sets.sources(SET_ZI)))
def test_set_zi_as_scored(name: str) -> None:
    check_log(SET_ZI, name, log_sets.sources(SET_ZI)[name]["expect"])
