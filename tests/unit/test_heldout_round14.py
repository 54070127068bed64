"""The doctor on the real start-up logs held apart in round 14 (tests/data/logs/heldout-2026-12z/, 2 Ascend, 4 NVIDIA,
8 whose thread names no device; sources.json names each thread), chosen for the memory lines of whole start-ups that
round 13 found under-sampled. Expectations were written by hand from each log and committed (8ab50a4) before the doctor
ran on any of them; scored once, blind, on main 6626834: 14/14 verdicts, 88/90 facts (memory facts 47/47), nothing
claimed (73b34a7).
Each test below pins one class of those misses on the real line; every line is quoted from the log it names unless its
comment says otherwise."""

from __future__ import annotations

import pytest

from app.core.logs import parse_startup_log
from tests import log_sets
from tests.log_sets import LOGS_DIR, check_log

SET_Z = LOGS_DIR / "heldout-2026-12z"

T4_PRELUDE = (  # vllm#14071, Qwen2.5-3B-Instruct on two T4s, a V1 development build (0.7.x)
    "WARNING 03-01 03:23:56 [config.py:2552] Casting torch.bfloat16 to torch.float16.\n"
    "WARNING 03-01 03:24:05 [cuda.py:95] To see benefits of async output processing, enable CUDA graph. Since, "
    "enforce-eager is enabled, async output processor cannot be used\n"
)


# --- the model config's cast names the dtype the engine runs --------------------------------------------------------


def test_the_cast_warning_names_the_dtype() -> None:
    assert parse_startup_log(T4_PRELUDE).dtype == "float16"


@pytest.mark.parametrize(
    ("line", "dtype"),
    [
        # config.py::_get_and_verify_dtype (0.7.3; config/model.py in 0.33.0) logs the two allowed casts at INFO:
        # "Upcasting %s to %s." to float32 and "Downcasting %s to %s." from float32; containers/ramalama#774 (0.7.3):
        ("INFO 02-09 18:59:59 config.py:2382] Downcasting torch.float32 to torch.float16.\n", "float16"),
        (
            "INFO 01-01 00:00:00 config.py:2440] Upcasting torch.bfloat16 to torch.float32.\n",
            "float32",
        ),  # format only
    ],
)
def test_the_up_and_down_casts_name_the_dtype_too(line: str, dtype: str) -> None:
    assert parse_startup_log(line).dtype == dtype


def test_the_engine_configs_dtype_wins_over_the_cast() -> None:
    text = (  # AIDC-AI/Ovis2-8B-GPTQ-Int4 (heldout-2026-12g, ROCm/ROCm#5680): the cast, then the engine's own dtype
        "WARNING 11-20 10:09:49 [model.py:1995] Casting torch.bfloat16 to torch.float16.\n"
        "INFO 11-20 10:10:00 [core.py:93] Initializing a V1 LLM engine (v0.11.2.dev69+g3fb0d9099) with config: "
        "model='AIDC-AI/Ovis2-8B-GPTQ-Int4', dtype=torch.bfloat16, max_seq_len=8192\n"
    )  # dtype=torch.bfloat16 here is edited from the log's float16, so that the two sources disagree
    assert parse_startup_log(text).dtype == "bfloat16"


# --- the platform's eager-mode warning says enforce-eager is on ------------------------------------------------------


def test_the_async_output_warning_says_enforce_eager() -> None:
    assert parse_startup_log(T4_PRELUDE).enforce_eager is True


# --- the set, after its fixes ---------------------------------------------------------------------------------------


def test_set_z_holds_its_logs() -> None:
    log_sets.check_set(SET_Z, 14, {"ascend": 2, "nv": 4, "gpu": 8})


@pytest.mark.parametrize("name", sorted(log_sets.sources(SET_Z)))
def test_set_z_after_its_fixes(name: str) -> None:
    check_log(SET_Z, name, log_sets.sources(SET_Z)[name]["expect"])
