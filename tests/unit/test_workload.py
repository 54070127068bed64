"""The paged-KV workload simulator against traces worked by hand, plus invariants under Hypothesis."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
import yaml  # type: ignore[import-untyped]
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from app.core import workload as W
from app.core.workload import (
    WORKLOAD_PRESETS,
    EngineParams,
    WorkloadResult,
    WorkloadSpec,
    presets,
    simulate,
)


def _run(spec: dict[str, Any], *, check: bool = True, **engine: Any) -> WorkloadResult:
    return simulate(
        workload=WorkloadSpec.model_validate(spec),
        engine=EngineParams(**engine),
        check_invariants=check,
    )


def _fixed(prompt: int, output: int, **extra: Any) -> dict[str, Any]:
    return {"share": 1.0, "prompt_tokens": prompt, "output_tokens": output, **extra}


def _point(result: WorkloadResult, step: int) -> tuple[float, int, int]:
    series = result.series
    i = series.step.index(step)
    return series.kv_usage[i], series.running[i], series.waiting[i]


def test_pool_bound_mix_preempts_and_reports_kv_pool() -> None:
    # 51 blocks = 50 usable + the null block, B=16, six requests of 200 prompt + 200 output.
    # One request peaks at ceil((200 + 200 - 1) / 16) = 25 blocks, so two fit for their whole life.
    # vLLM V1 admits for the first chunk only: 200 tokens = 13 blocks each -> three admitted (39),
    # the fourth needs 13 > 11 free. Decoders sit at 200 + t - 1 tokens before step t and cross a
    # block boundary when that is a multiple of 16: steps 9, 25, 41 (+3 blocks each -> 48 used).
    # Step 57 needs 3 blocks with 2 free: the last admitted (r2, 256 tokens = 16 blocks) is
    # preempted -> 48 - 16 + 2 = 34 used, 2 running, 4 waiting; r2 (now 257 tokens, 17 blocks) waits.
    # r0, r1 reach 25 blocks each at step 185 (50 used: the peak) and finish at step 199.
    # Step 200 admits r2 (17), r3, r4 (13 each) = 43; r3/r4 cross at 209, 225, r2 at 216, 232 -> 1 free;
    # step 241 needs 2 -> r4 preempted (second preemption). r2 finishes at 342, r4 is re-admitted at 343,
    # r3 finishes at 399, r5 is admitted at 400, r4 ends at 501 and r5 at 599 -> 600 steps.
    result = _run(
        {"classes": [_fixed(200, 200)], "num_requests": 6, "concurrency": 6},
        num_gpu_blocks=51,
        block_size=16,
        max_num_seqs=16,
        max_model_len=1024,
        max_num_batched_tokens=2048,
        enable_prefix_caching=False,
    )
    assert result.usable_blocks == 50
    assert result.max_running == 3
    assert result.preemptions == 2
    assert result.peak_blocks_used == 50
    assert result.steps == 600
    assert (result.finished, result.rejected) == (6, 0)
    assert result.binding_limit == "kv_pool"
    # 600 steps > 400 points: the series keeps every other step
    assert _point(result, 56) == (48 / 50, 3, 3)
    assert _point(result, 58) == (34 / 50, 2, 4)
    # step 598: r5 alone, prefilled at step 400 -> 200 + (598 - 400) = 398 KV tokens = 25 blocks
    assert _point(result, 598) == (25 / 50, 1, 0)


def test_max_num_seqs_bound_mix() -> None:
    # Huge pool, max_num_seqs=4, 20 requests of 100 + 50 all submitted at once: waves of 4.
    # A wave is admitted at step 50k, prefills in that step (4 x 100 <= 2048) and decodes 49 more
    # steps -> 5 waves x 50 steps = 250 steps, always 4 running, no preemption.
    # Fragmentation per request over its 50 steps: KV lengths 100..149 ->
    #   100..112 in 7 blocks (waste 12..0 = 78, slots 13 x 112), 113..128 in 8 (120, 16 x 128),
    #   129..144 in 9 (120, 16 x 144), 145..149 in 10 (15..11 = 65, 5 x 160)
    #   -> 383 wasted of 6608 allocated slots.
    result = _run(
        {"classes": [_fixed(100, 50)], "num_requests": 20, "concurrency": 20},
        num_gpu_blocks=10_000,
        block_size=16,
        max_num_seqs=4,
        max_model_len=1024,
        max_num_batched_tokens=2048,
    )
    assert result.max_running == 4
    assert result.mean_running == 4.0
    assert result.steps == 250
    assert result.preemptions == 0
    assert result.fragmentation_waste_fraction == pytest.approx(383 / 6608)
    # waiting after admission: 16, 12, 8, 4, 0 for 50 steps each -> blocked on 4 waves x 50 steps
    assert result.admission_blocked_steps["max_num_seqs"] == 200
    assert result.mean_waiting == 8.0
    assert result.binding_limit == "max_num_seqs"
    # step 0: 4 x ceil(100 / 16) = 28 blocks of 9999 usable
    assert _point(result, 0) == (28 / 9999, 4, 16)


def test_length_rejection_is_reported_and_never_simulated() -> None:
    # max_model_len 256: 200 + 100 = 300 is rejected, 100 + 50 = 150 runs. Seed 3 draws 6 long ones.
    result = _run(
        {
            "classes": [_fixed(200, 100), _fixed(100, 50)],
            "num_requests": 10,
            "concurrency": 2,
            "seed": 3,
        },
        num_gpu_blocks=1001,
        block_size=16,
        max_num_seqs=64,
        max_model_len=256,
        max_num_batched_tokens=2048,
    )
    assert result.rejected_by_reason == {"max_model_len": 6}
    assert (result.finished, result.rejected) == (4, 6)
    assert result.binding_limit == "max_model_len"


def test_request_larger_than_the_whole_pool_is_rejected() -> None:
    # 1000 + 100 - 1 = 1099 KV tokens = 69 blocks > 50 usable
    result = _run(
        {"classes": [_fixed(1000, 100)], "num_requests": 3, "concurrency": 1},
        num_gpu_blocks=51,
        block_size=16,
        max_num_seqs=8,
        max_model_len=4096,
        max_num_batched_tokens=2048,
    )
    assert result.rejected_by_reason == {"kv_pool": 3}
    assert result.steps == 0
    assert result.binding_limit == "kv_pool"


@pytest.mark.parametrize("concurrency", [1, 10])
def test_prefix_sharing_hit_rate(concurrency: int) -> None:
    # 10 requests, prompt 100 = 64 shared + 36 own, B=16: the prefix is 4 full blocks. The first
    # request misses; every later one hits 64 tokens (cap (100 - 1) // 16 = 6 blocks does not bite),
    # including those admitted in the same step (vLLM caches a block when it is scheduled).
    # Hit rate = 9 x 64 / (10 x 100) = 0.576.
    result = _run(
        {
            "classes": [_fixed(100, 8, shared_prefix_tokens=64)],
            "num_requests": 10,
            "concurrency": concurrency,
        },
        num_gpu_blocks=1001,
        block_size=16,
        max_num_seqs=64,
        max_model_len=4096,
        max_num_batched_tokens=2048,
    )
    assert result.prefix_tokens_hit == 9 * 64
    assert result.prompt_tokens_queried == 10 * 100
    assert result.prefix_hit_rate == 0.576
    if concurrency == 10:
        # all ten at once: 4 shared blocks + 10 x 3 own blocks (100 + 7 tokens = 7 blocks each)
        assert result.peak_blocks_used == 4 + 10 * 3
        assert result.steps == 8


def test_prefix_caching_off_holds_every_copy() -> None:
    # same ten requests without prefix caching: 10 x 7 blocks
    result = _run(
        {"classes": [_fixed(100, 8, shared_prefix_tokens=64)], "num_requests": 10, "concurrency": 10},
        num_gpu_blocks=1001,
        block_size=16,
        max_num_seqs=64,
        max_model_len=4096,
        max_num_batched_tokens=2048,
        enable_prefix_caching=False,
    )
    assert result.prefix_hit_rate == 0.0
    assert result.peak_blocks_used == 70


def test_prefix_not_block_aligned_hits_whole_blocks_only() -> None:
    # 70-token prefix with B=16: 4 full blocks = 64 tokens hit per later request; 9 x 64 / 10 x 100
    result = _run(
        {"classes": [_fixed(100, 4, shared_prefix_tokens=70)], "num_requests": 10, "concurrency": 1},
        num_gpu_blocks=1001,
        block_size=16,
        max_num_seqs=64,
        max_model_len=4096,
        max_num_batched_tokens=2048,
    )
    assert result.prefix_tokens_hit == 9 * 64


def test_chunked_prefill_takes_several_steps() -> None:
    # 5000-token prompt, 2048 tokens per step: 2048, 2048, 904 -> prefill ends at step 2 with the
    # first output token; tokens 2 and 3 come at steps 3 and 4 -> 5 steps.
    # Blocks: 128, 256, then ceil(5000 / 16) = 313 (5002 KV tokens at the end still fit 313).
    result = _run(
        {"classes": [_fixed(5000, 3)], "num_requests": 1, "concurrency": 1},
        num_gpu_blocks=1001,
        block_size=16,
        max_num_seqs=64,
        max_model_len=8192,
        max_num_batched_tokens=2048,
    )
    assert result.steps == 5
    assert result.peak_blocks_used == 313
    assert result.series.kv_usage == [0.128, 0.256, 0.313, 0.313, 0.0]  # after the finish: all free


def test_open_loop_arrivals() -> None:
    result = _run(
        {"classes": [_fixed(100, 10)], "num_requests": 10, "arrival_rate": 0.01},
        num_gpu_blocks=1001,
        block_size=16,
        max_num_seqs=64,
        max_model_len=4096,
        max_num_batched_tokens=2048,
    )
    assert result.finished == 10
    assert result.max_running >= 1
    assert result.binding_limit == "none"
    assert len(result.series.step) <= W.MAX_SERIES_POINTS


def test_spec_validation() -> None:
    with pytest.raises(ValidationError):
        WorkloadSpec.model_validate({"classes": [_fixed(100, 10)], "num_requests": 10})  # no arrival mode
    with pytest.raises(ValidationError):
        WorkloadSpec.model_validate(
            {"classes": [_fixed(100, 10)], "num_requests": 10, "concurrency": 1, "arrival_rate": 1.0}
        )
    with pytest.raises(ValidationError):
        WorkloadSpec.model_validate({"classes": [_fixed(100, 10)], "num_requests": 100_001, "concurrency": 1})
    with pytest.raises(ValidationError):  # prefix longer than the shortest prompt
        WorkloadSpec.model_validate(
            {
                "classes": [
                    {
                        "share": 1,
                        "prompt_tokens": {"dist": "uniform", "low": 50, "high": 200},
                        "output_tokens": 10,
                        "shared_prefix_tokens": 64,
                    }
                ],
                "num_requests": 1,
                "concurrency": 1,
            }
        )
    with pytest.raises(ValidationError):
        WorkloadSpec.model_validate(
            {
                "classes": [
                    {
                        "share": 1,
                        "prompt_tokens": {"dist": "uniform", "low": 9, "high": 3},
                        "output_tokens": 1,
                    }
                ],
                "num_requests": 1,
                "concurrency": 1,
            }
        )
    with pytest.raises(ValidationError):  # vLLM refuses max_num_batched_tokens < max_num_seqs
        EngineParams(
            num_gpu_blocks=10, block_size=16, max_num_seqs=64, max_model_len=128, max_num_batched_tokens=32
        )


REFERENCE_ENGINE = EngineParams(
    num_gpu_blocks=8000,  # 128k tokens at B=16: a large model's pool on one card
    block_size=16,
    max_num_seqs=512,
    max_model_len=32768,
    max_num_batched_tokens=8192,
)


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("long_single", "max_model_len"),
        ("mixed_long_short", "kv_pool"),
        ("many_short", "kv_pool"),
        ("long_output", "kv_pool"),
    ],
)
def test_presets_hit_the_limit_the_seed_names(key: str, expected: str) -> None:
    preset = WORKLOAD_PRESETS[key]
    result = simulate(workload=preset.spec, engine=REFERENCE_ENGINE)
    assert result.binding_limit == expected
    assert result.finished + result.rejected == preset.spec.num_requests


def test_shared_prefix_preset_caching_is_what_keeps_concurrency_up() -> None:
    spec = WORKLOAD_PRESETS["shared_prefix"].spec
    cached = simulate(workload=spec, engine=REFERENCE_ENGINE)
    uncached = simulate(
        workload=spec, engine=REFERENCE_ENGINE.model_copy(update={"enable_prefix_caching": False})
    )
    assert cached.prefix_hit_rate > 0.8
    assert cached.preemptions == 0 and uncached.preemptions > 0
    assert cached.mean_running > 2 * uncached.mean_running


def test_presets_cover_the_seed_table() -> None:
    assert set(WORKLOAD_PRESETS) == {
        "long_single",
        "mixed_long_short",
        "many_short",
        "shared_prefix",
        "long_output",
    }
    for key, preset in WORKLOAD_PRESETS.items():
        assert (
            preset.key == key
            and preset.description
            and preset.hits_first
            and preset.label
            and preset.label_zh
        )
        WorkloadSpec.model_validate(preset.spec.model_dump())  # round-trips as a plain dict


# ---- invariants -------------------------------------------------------------------------------

_length = st.one_of(
    st.integers(min_value=1, max_value=300),
    st.builds(
        lambda low, span: {"dist": "uniform", "low": low, "high": low + span},
        st.integers(min_value=1, max_value=200),
        st.integers(min_value=0, max_value=200),
    ),
    st.builds(
        lambda median, sigma: {"dist": "lognormal", "median": median, "sigma": sigma, "max": 4 * median},
        st.integers(min_value=1, max_value=150),
        st.floats(min_value=0.0, max_value=1.5),
    ),
)


@st.composite
def _request_class(draw: st.DrawFn) -> dict[str, Any]:
    prompt = draw(_length)
    shortest = W.length_bounds(
        WorkloadSpec.model_validate(
            {
                "classes": [{"share": 1, "prompt_tokens": prompt, "output_tokens": 1}],
                "num_requests": 1,
                "concurrency": 1,
            }
        )
        .classes[0]
        .prompt_tokens
    )[0]
    return {
        "share": draw(st.floats(min_value=0.1, max_value=1.0)),
        "prompt_tokens": prompt,
        "output_tokens": draw(_length),
        "shared_prefix_tokens": draw(st.integers(min_value=0, max_value=shortest)),
        "prefix_group": draw(st.sampled_from(["a", "b"])),
    }


@st.composite
def _case(draw: st.DrawFn) -> tuple[WorkloadSpec, EngineParams]:
    spec: dict[str, Any] = {
        "classes": draw(st.lists(_request_class(), min_size=1, max_size=3)),
        "num_requests": draw(st.integers(min_value=1, max_value=40)),
        "seed": draw(st.integers(min_value=0, max_value=2**16)),
    }
    if draw(st.booleans()):
        spec["concurrency"] = draw(st.integers(min_value=1, max_value=40))
    else:
        spec["arrival_rate"] = draw(st.floats(min_value=0.05, max_value=5.0))
    max_num_seqs = draw(st.integers(min_value=1, max_value=16))
    engine = EngineParams(
        num_gpu_blocks=draw(st.integers(min_value=2, max_value=200)),
        block_size=draw(st.sampled_from([1, 2, 4, 16, 32])),
        max_num_seqs=max_num_seqs,
        max_model_len=draw(st.integers(min_value=16, max_value=700)),
        max_num_batched_tokens=draw(st.integers(min_value=max_num_seqs, max_value=512)),
        enable_prefix_caching=draw(st.booleans()),
    )
    return WorkloadSpec.model_validate(spec), engine


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_case())
def test_invariants(case: tuple[WorkloadSpec, EngineParams]) -> None:
    spec, engine = case
    # check_invariants recounts every block after each full step and raises on any mismatch
    result = simulate(workload=spec, engine=engine, check_invariants=True)
    assert result.finished + result.rejected == spec.num_requests
    assert result.peak_blocks_used <= engine.num_gpu_blocks - 1
    assert result.max_running <= engine.max_num_seqs
    assert 0.0 <= result.fragmentation_waste_fraction < 1.0
    assert all(0.0 <= u <= 1.0 for u in result.series.kv_usage)
    assert len(result.series.step) <= W.MAX_SERIES_POINTS
    assert simulate(workload=spec, engine=engine) == result  # same seed, same result


@settings(max_examples=80, deadline=None)
@given(case=_case())
def test_fast_forward_changes_nothing(case: tuple[WorkloadSpec, EngineParams]) -> None:
    # The decode-span shortcut must give exactly what stepping one step at a time gives.
    spec, engine = case
    fast = simulate(workload=spec, engine=engine)
    with mock.patch.object(W._Simulator, "_fast_forward", lambda self, step: step):
        slow = simulate(workload=spec, engine=engine)
    assert fast.model_dump(exclude={"fragmentation_waste_fraction"}) == slow.model_dump(
        exclude={"fragmentation_waste_fraction"}
    )
    assert fast.fragmentation_waste_fraction == pytest.approx(slow.fragmentation_waste_fraction)


def test_the_presets_are_validated_data() -> None:
    """app/core/workload/presets.yaml holds the seed's five 触发场景; a field the schema lacks is refused."""
    assert list(presets.WORKLOAD_PRESETS) == [
        "long_single",
        "mixed_long_short",
        "many_short",
        "shared_prefix",
        "long_output",
    ]
    assert presets.WORKLOAD_PRESETS["long_single"].label_zh == "超长上下文单请求"
    data = yaml.safe_load(presets.PRESETS_FILE.read_text(encoding="utf-8"))
    data["presets"][0]["spec"]["classes"][0]["prompt_tokens"]["mean"] = 1000
    with pytest.raises(ValidationError, match="mean"):
        presets._PresetsFile.model_validate(data)
