"""The doctor reads vLLM's Mamba-block refusal (0.20.2+) as the planner predicts it.

vLLM 0.33.0 config/compilation.py CompilationConfig.resolve_cudagraph_mode_and_sizes, called from
gpu_model_runner.initialize_kv_cache -> initialize_attn_backend -> _check_and_update_cudagraph_mode
(after the KV size lines, before the KV tensors are allocated): with full CUDA graphs and Mamba layers,
``max_num_reqs > kv_cache_config.num_blocks`` raises "max_num_seqs (N) exceeds available Mamba cache
blocks (M)". The verdict is N-side on both sides: up to M sequences start.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.catalog import find_device
from app.core.diagnose import diagnose
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.logs import parse_startup_log
from app.core.result import ErrorKind
from app.core.specs import ServeConfig

REAL = Path(__file__).resolve().parents[1] / "data" / "configs" / "real"
QWEN3_NEXT = "Qwen__Qwen3-Next-80B-A3B-Thinking"

# The error as real start-ups print it (each line quoted verbatim in the thread named):
# - https://github.com/vllm-project/vllm/pull/38270 (a TP worker's ERROR line, 1,024 over 512 blocks)
WORKER_LINE = (
    "(Worker_TP1 pid=509811) ERROR 03-26 18:27:04 [multiproc_executor.py:949] ValueError: max_num_seqs "
    "(1024) exceeds available Mamba cache blocks (512). Each decode sequence requires one Mamba cache block, "
    "so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most 512 or increase "
    "gpu_memory_utilization."
)
# - https://github.com/vllm-project/vllm/pull/38632 (the engine core's wrapper of the worker's error)
ENGINE_LINE = (
    "(EngineCore_DP0 pid=10078) RuntimeError: Worker failed with error 'max_num_seqs (1024) exceeds available "
    "Mamba cache blocks (600). Each decode sequence requires one Mamba cache block, so CUDA graph capture "
    "cannot proceed. Please lower max_num_seqs to at most 600 or increase gpu_memory_utilization.', please "
    "check the stack trace above for the root cause"
)


def _qwen3_next(version: str, **serve: Any) -> Any:
    config: dict[str, Any] = json.loads((REAL / f"{QWEN3_NEXT}.config.json").read_text(encoding="utf-8"))
    return estimate(
        model=model_spec_from_hf_config(config, name=QWEN3_NEXT),
        device=find_device("h100"),
        serve=ServeConfig(tensor_parallel_size=4, **serve),
        vllm_version=version,
    )


@pytest.mark.parametrize(("line", "seqs", "blocks"), [(WORKER_LINE, 1024, 512), (ENGINE_LINE, 1024, 600)])
def test_the_printed_error_is_read_with_its_numbers(line: str, seqs: int, blocks: int) -> None:
    facts = parse_startup_log(line)
    assert facts.error_kind == "mamba_blocks"
    assert (facts.max_num_seqs, facts.num_gpu_blocks) == (seqs, blocks)
    d = diagnose(log_text=line, metrics_text=None)
    assert d.verdict == "n_bound"
    assert f"--max-num-seqs {seqs:,}" in d.headline and f"{blocks:,} Mamba cache blocks" in d.headline
    assert d.remedies[0] == f"Lower --max-num-seqs to {blocks:,} or less (the pool's Mamba cache blocks)"
    assert "--enforce-eager" in d.remedies[1]
    trials = {t.key: t.starts for t in d.trials}
    # a shorter length does not change the block count; one sequence ≤ M blocks starts
    assert trials == {"as_configured": False, "half_length": False, "one_sequence": True}


def test_the_traceback_source_line_is_not_the_error() -> None:
    # Python prints the raising statement's source with the f-string placeholders, not the numbers
    src = '    f"max_num_seqs ({max_num_reqs}) exceeds available Mamba cache "'
    facts = parse_startup_log(f"Traceback (most recent call last):\n{src}\n{WORKER_LINE}")
    assert (facts.error_kind, facts.max_num_seqs, facts.num_gpu_blocks) == ("mamba_blocks", 1024, 512)


def test_qwen3_next_at_tp4_on_h100_one_sequence_above_the_blocks() -> None:
    # issue 22's done-when. The fixed point of max_num_seqs = blocks + 1 (activation and graph terms move
    # with max_num_seqs, so iterate): vLLM 0.33.0 refuses with its text; the doctor reads N and M back.
    seqs = 1_024
    for _ in range(20):
        blocks = _qwen3_next("0.33.0", max_num_seqs=seqs).num_gpu_blocks
        if seqs == blocks + 1:
            break
        seqs = blocks + 1
    est = _qwen3_next("0.33.0", max_num_seqs=seqs)
    assert est.error_kind == ErrorKind.MAMBA_BLOCKS and est.verdict == "n_bound"
    blocks = seqs - 1
    assert est.num_gpu_blocks == blocks
    assert est.log_lines[-1] == est.error
    assert f"max_num_seqs ({seqs}) exceeds available Mamba cache blocks ({blocks})" in est.log_lines[-1]
    # raised before graph capture: the planner's log prints no "Graph capturing finished" line
    assert not any(line.startswith("Graph capturing finished") for line in est.log_lines)
    d = diagnose(log_text="\n".join(est.log_lines), metrics_text=None)
    assert d.verdict == est.verdict == "n_bound"
    assert (d.facts.max_num_seqs, d.facts.num_gpu_blocks) == (seqs, blocks)
    cause = next(s for s in d.steps if s.key == "cause")
    assert (
        f"vLLM refused max_num_seqs {seqs:,}: the pool has {blocks:,} Mamba cache blocks" in cause.explanation
    )
    assert d.remedies[0] == f"Lower --max-num-seqs to {blocks:,} or less (the pool's Mamba cache blocks)"
    # --enforce-eager captures no graph: it starts, and the doctor says so
    eager = _qwen3_next("0.33.0", max_num_seqs=seqs, enforce_eager=True)
    assert eager.fits and eager.error is None
    eager_doctor = diagnose(log_text="\n".join(eager.log_lines), metrics_text=None)
    assert (eager_doctor.verdict, eager_doctor.facts.error_kind) == ("fits", None)  # target 1 (none given)
    # 0.19.0 has no such check in config/compilation.py: it starts
    old = _qwen3_next("0.19.0", max_num_seqs=seqs)
    assert old.fits and old.error is None


def test_the_planners_verdict_box_says_vllm_refuses() -> None:
    # the page's verdict detail for this refusal must not say "vLLM starts"
    from app.web.verdict import verdict_view

    pool = 854 * 12 * 320 * 1_024  # 854 blocks of 12 attention layers × 320 tokens × 1,024 B
    est = _qwen3_next("0.33.0", max_num_seqs=855, kv_cache_memory_bytes=pool)
    view = verdict_view(est, 1)
    assert view.key == "n_bound"
    assert (
        "vLLM refuses to start: --max-num-seqs 855 exceeds the pool's 854 Mamba cache blocks" in view.detail
    )
