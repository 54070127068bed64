"""app.core.verdicts.classify: one verdict rule for the planner and the doctor.

The property: the doctor reading the planner's own predicted start-up log returns the planner's
verdict, over the whole catalog × a grid of TP, gpu_memory_utilization and max_model_len.
"""

from __future__ import annotations

import itertools

import pytest

from app.core.catalog import find_device, find_model, list_models
from app.core.diagnose import diagnose
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.recommend.bisection import bisect
from app.core.specs import ServeConfig
from app.core.verdicts import USEFUL_LENGTH_TOKENS, classify, shorter_length_starts, useful_length

H100 = "nvidia-h100-sxm-80gb"


def _planner_and_doctor(model: str, device: str, **flags: object) -> tuple[str, str, int | None]:
    est = estimate(model=find_model(model), device=find_device(device), serve=ServeConfig(**flags))
    doctor = diagnose(log_text="\n".join(est.log_lines), metrics_text=None)
    return est.verdict, doctor.verdict, est.estimated_max_model_len


def test_the_useful_length_is_half_of_s_up_to_one_smallest_default_prefill_chunk() -> None:
    # seed step 4: halve --max-model-len; 2,048 = vLLM's smallest default --max-num-batched-tokens
    assert USEFUL_LENGTH_TOKENS == 2048
    assert useful_length(8192) == 2048  # min(4,096, 2,048)
    assert useful_length(4096) == 2048  # the seed's halving exactly
    assert useful_length(3000) == 1500
    assert useful_length(1) == 1  # a length of 0 never serves anything


@pytest.mark.parametrize(
    ("largest", "length", "expected"),
    [
        (2016, 8192, False),  # 2,016 < 2,048: nothing worth serving starts
        (2048, 8192, True),
        (1500, 3000, True),  # half of a short S
        (1499, 3000, False),
        (None, 8192, None),  # not known
        (5000, None, None),
    ],
)
def test_the_s_trial(largest: int | None, length: int | None, expected: bool | None) -> None:
    assert shorter_length_starts(largest_len=largest, max_model_len=length) is expected


def test_classify_in_the_seeds_order() -> None:
    base = {"largest_len": None, "max_model_len": 8192, "reached": None, "target": 4}
    assert classify(starts=True, **base) == "fits"  # reached not known: nothing says otherwise
    assert classify(starts=True, **{**base, "reached": 3.5}) == "n_bound"  # 3.5 < 4
    assert classify(starts=True, **{**base, "reached": 4.0}) == "fits"
    assert classify(starts=None, **base) == "unknown"
    assert classify(starts=False, failure="load_oom", **base) == "load_oom"
    assert classify(starts=False, length_refused=True, **base) == "s_bound"
    assert classify(starts=False, **{**base, "largest_len": 3056}) == "s_bound"  # ≥ 2,048
    assert classify(starts=False, **{**base, "largest_len": 2016}) == "budget_bound"
    # the budget's own errors: no length helps, whatever a replay says
    assert classify(starts=False, budget_short=True, **{**base, "largest_len": 3056}) == "budget_bound"
    assert classify(starts=False, one_sequence_starts=True, **{**base, "largest_len": 100}) == "n_bound"
    assert classify(starts=False, one_sequence_starts=None, **base) == "unknown"


def test_regression_the_doctor_said_s_bound_where_the_planner_said_budget() -> None:
    # Llama-3.1-70B on H100 at TP 2, S 8,192 (the review's §3.1 case; with today's activation model
    # the pool of utilization 0.884 is negative, and 0.906 lands in the gap): 2,016 tokens start,
    # 2,016 < min(4,096, 2,048) → budget. The doctor's former 1,024 tokens called it S-bound.
    planner, doctor, largest = _planner_and_doctor(
        "meta-llama/Llama-3.1-70B",
        H100,
        tensor_parallel_size=2,
        gpu_memory_utilization=0.906,
        max_model_len=8192,
    )
    assert largest == 2016
    assert (planner, doctor) == ("budget_bound", "budget_bound")
    # two steps up, 3,056 tokens start: S-bound on both sides
    planner, doctor, largest = _planner_and_doctor(
        "meta-llama/Llama-3.1-70B",
        H100,
        tensor_parallel_size=2,
        gpu_memory_utilization=0.908,
        max_model_len=8192,
    )
    assert (largest, planner, doctor) == (3056, "s_bound", "s_bound")


def test_a_load_oom_is_load_oom_on_both_sides() -> None:
    # Llama-3.1-70B in bf16 on one H100: 141 GB of weights on an 80 GB device
    planner, doctor, _ = _planner_and_doctor("meta-llama/Llama-3.1-70B", H100, max_model_len=8192)
    assert (planner, doctor) == ("load_oom", "load_oom")


def test_a_length_above_the_models_maximum_is_s_bound_on_both_sides() -> None:
    # Yi-1.5-34B declares max_position_embeddings = 4,096: vLLM's engine config refuses 8,192
    planner, doctor, _ = _planner_and_doctor(
        "01-ai/Yi-1.5-34B", H100, tensor_parallel_size=2, max_model_len=8192
    )
    assert (planner, doctor) == ("s_bound", "s_bound")


# The grid: TP 1 (weights-heavy: load OOM and budget), 2 and 8; a low and a tight utilization (0.906 is
# the 70B gap above); a short S, a common one and one above most models' maximum; on one H100. About
# 1,600 estimates, a few seconds. On main the doctor disagreed on 284 of them (278 length refusals it
# called unknown, 6 budget pools of 1,024-2,047 tokens it called S-bound).
GRID_DEVICES = (H100,)
GRID_TP = (1, 2, 8)
GRID_UTILIZATION = (0.72, 0.906)
GRID_LENGTHS = (2048, 8192, 65536)
GRID_TARGET = 16  # sequences: some pools hold them (fits), some start with fewer (n_bound)


def test_the_doctor_reads_the_mamba_block_refusal_as_the_planner_does() -> None:
    # Qwen3.5-27B, H100, TP 1, utilization 0.906, S 2,048, target 16: the planner predicts vLLM 0.33's
    # "max_num_seqs (1024) exceeds available Mamba cache blocks (302)" refusal and says n_bound; the
    # doctor reads the same numbers back (N from the error, M = the pool's blocks)
    # (302 since the vision tower counted from vision_config is in the weights: 460,730,096 x 2 B =
    # 0.86 GiB = 16.9 blocks of 54,525,952 B, and its encoder outputs 8,192 x 5,120 x 2 B in the peak)
    serve = ServeConfig(tensor_parallel_size=1, gpu_memory_utilization=0.906, max_model_len=2048)
    est = estimate(
        model=find_model("Qwen/Qwen3.5-27B"),
        device=find_device("nvidia-h100-sxm-80gb"),
        serve=serve,
        target_concurrency=GRID_TARGET,
    )
    assert est.error_kind == "mamba_blocks" and est.verdict == "n_bound"
    log = "\n".join(est.log_lines)
    doctor = diagnose(log_text=log, metrics_text=None, target_concurrency=GRID_TARGET)
    assert doctor.verdict == "n_bound"
    assert (doctor.facts.error_kind, doctor.facts.max_num_seqs) == ("mamba_blocks", 1024)
    assert doctor.facts.num_gpu_blocks == est.num_gpu_blocks == 302


def test_the_doctor_reading_the_planners_log_returns_the_planners_verdict() -> None:
    disagreements = []
    checked = 0
    seen: set[str] = set()
    for entry in list_models():
        model = find_model(entry.id)
        for device_id, tp, util, length in itertools.product(
            GRID_DEVICES, GRID_TP, GRID_UTILIZATION, GRID_LENGTHS
        ):
            serve = ServeConfig(tensor_parallel_size=tp, gpu_memory_utilization=util, max_model_len=length)
            try:
                est = estimate(
                    model=model, device=find_device(device_id), serve=serve, target_concurrency=GRID_TARGET
                )
            except PlannerError:
                continue  # refused before any log (TP does not divide the heads)
            checked += 1
            seen.add(est.verdict)
            log = "\n".join(est.log_lines)
            verdict = diagnose(log_text=log, metrics_text=None, target_concurrency=GRID_TARGET).verdict
            if verdict != est.verdict:
                disagreements.append((entry.id, device_id, tp, util, length, est.verdict, verdict))
    # every preset, the 2026 hybrids (Qwen3.5/3.6, Nemotron-3) included: their "max_num_seqs (N) exceeds
    # available Mamba cache blocks (M)" refusal (0.20.2+) is n_bound on both sides
    assert disagreements == []
    assert checked > 1000
    assert {
        "fits",
        "n_bound",
        "s_bound",
        "budget_bound",
        "load_oom",
    } <= seen  # the grid reaches every start verdict


def test_the_recommendations_bisection_names_the_planners_verdict() -> None:
    # the recommendation's "halve S / one sequence" line sits under the verdict box on the same page:
    # on main they disagreed on 138 of these 248 cases (load_oom vs budget_bound, S-bound pools of
    # 2,048-4,095 tokens at S 8,192 called budget, an activation peak max_num_seqs 1 shrinks called N)
    disagreements = []
    checked = 0
    for entry in list_models()[::3]:
        model = find_model(entry.id)
        for tp, util, length in itertools.product((1, 2), GRID_UTILIZATION, (8192, 65536)):
            serve = ServeConfig(tensor_parallel_size=tp, gpu_memory_utilization=util, max_model_len=length)
            try:
                est = estimate(
                    model=model, device=find_device(H100), serve=serve, target_concurrency=GRID_TARGET
                )
                bisection = bisect(
                    model=model,
                    device=find_device(H100),
                    serve=serve,
                    vllm_version=None,
                    target_concurrency=GRID_TARGET,
                )
            except PlannerError:
                continue
            checked += 1
            if bisection.verdict != est.verdict:
                disagreements.append((entry.id, tp, util, length, est.verdict, bisection.verdict))
    assert disagreements == []
    assert checked > 200
