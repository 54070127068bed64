"""The doctor's replay over a log's own KV pool at releases without --kv-cache-memory-bytes (< 0.10.2).

diagnose.case.replay_over_pool passes the printed pool to the estimator as ``kv_cache_memory_bytes``: a modelling
device, not a flag the user set. Since the release-flag check moved into core estimate() (round 13), every replay of a
0.10.1-or-older log was refused ("vLLM 0.6.6 does not have it") and silently dropped; the doctor's estimates now skip
that check (the log is what vLLM ran), while the public estimate() still refuses the flag.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.catalog import find_device, find_model
from app.core.diagnose.case import recover_case, replay_over_pool
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.logs import parse_startup_log
from app.core.specs import GIB, ServeConfig

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"


def test_a_v0_logs_replay_over_its_printed_pool_is_not_refused() -> None:
    text = (LOGS / "v0_0.6.6_llama31_8b.log").read_text()
    case = recover_case(text, parse_startup_log(text), None, None)
    assert case.version == "0.6.6"
    replay = replay_over_pool(case)
    assert replay is not None  # before: None (refused: --kv-cache-memory-bytes is not in 0.6.6)
    # the log's pool over Llama-3.1-8B's block (32 layers x 2 x 16 tokens x 8 KV heads x 128 x 2 B = 2,097,152 B):
    # 58,819,577,119 // 2,097,152 = 28,047, the log's own "# GPU blocks: 28047" (line 11)
    assert (replay.kv_cache_bytes, replay.num_gpu_blocks) == (58_819_577_119, 28_047)


def test_the_public_estimate_still_refuses_the_flag_at_that_release() -> None:
    serve = ServeConfig(max_model_len=8192, kv_cache_memory_bytes=20 * GIB)
    model, device = find_model("meta-llama/Llama-3.1-8B-Instruct"), find_device("h100")
    with pytest.raises(PlannerError) as refused:
        estimate(model=model, device=device, serve=serve, vllm_version="0.9.0")
    assert refused.value.field == "kv_cache_memory_bytes"
    # 0.10.2 has it: 20 GiB // 2,097,152 B a block = 10,240 blocks
    assert estimate(model=model, device=device, serve=serve, vllm_version="0.10.2").num_gpu_blocks == 10_240
