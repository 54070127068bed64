"""Exact replay: feed the KV memory a real vLLM log printed into the KV math and reproduce the blocks,
tokens and concurrency it printed (only the rounding of the printed GiB is allowed).

Source: bench/data/calibration/vllm_logs.jsonl and bench/data/extra_calibration.jsonl (real start-up logs;
ids name each record, each record carries its thread).
"""

from __future__ import annotations

import math

import pytest

from app.core import kv as K
from app.core.estimate import sizing_for
from app.core.specs import GIB
from bench import calibration


def _replayable() -> list[calibration.Case]:
    out = []
    for case in calibration.cases(require_version=False, require_device=False):
        rep = case.reported
        if rep.get("kv_cache_gib") is not None and (rep.get("gpu_blocks") or rep.get("kv_tokens")):
            out.append(case)
    return out


CASES = _replayable()


def test_enough_records_are_replayed() -> None:
    # 44 shared records + 2 of our own carry both the KV GiB and blocks/tokens for a catalog model
    assert len(CASES) >= 46, [c.id for c in CASES]
    assert {"vllm10517-rtx3090-llama31-8b-20k", "lmcache1739-qwen3-14b-32k"} <= {c.id for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_exact_replay(case: calibration.Case) -> None:
    rep = case.reported
    sizing = sizing_for(
        model=case.model, device=case.device, serve=case.serve, vllm_version=case.vllm_version
    )
    lay = sizing.layout
    kv_gib = rep.get("kv_cache_gib_binding_rank") or rep["kv_cache_gib"]
    low = math.floor((kv_gib * GIB - calibration.PRINTED_GIB_HALF_STEP) / lay.bytes_per_block)
    high = math.floor((kv_gib * GIB + calibration.PRINTED_GIB_HALF_STEP) / lay.bytes_per_block)
    blocks = rep.get("gpu_blocks")
    if blocks is None:
        # only tokens printed: recover the block count the tokens formula implies
        blocks = rep["kv_tokens"] // lay.block_size * max(1, len(lay.groups))
    assert low <= blocks <= high, (low, blocks, high, lay.bytes_per_block)
    length = case.serve.max_model_len or rep.get("max_concurrency_tokens_per_request")
    if length is None:
        return
    conc = K.max_concurrency_for(
        num_blocks=blocks,
        layout=lay,
        max_model_len=length,
        inflight_tokens=sizing.inflight_tokens,
        prefix_caching=sizing.resolved.prefix_caching,
        rules=sizing.rules,
    )
    if rep.get("max_concurrency") is not None:
        assert round(conc, 2) == pytest.approx(rep["max_concurrency"], abs=0.005)
    if rep.get("kv_tokens") is not None:
        tokens = K.kv_tokens_for(
            num_blocks=blocks, layout=lay, max_concurrency=conc, max_model_len=length, rules=sizing.rules
        )
        assert tokens == rep["kv_tokens"]
