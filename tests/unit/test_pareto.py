"""The throughput / interactivity frontier of the fleet search (app/core/pareto.py, FleetPlan.pareto):
non-dominated by construction, made only of points the search evaluated, per-device throughput falling
as per-user speed rises, and the SLO line at 1000 / TPOT limit."""

from __future__ import annotations

import itertools

import pytest

from app.core.catalog import find_device, find_model
from app.core.command import parse_serve_command
from app.core.estimate import estimate
from app.core.fleet import FleetPlan, Limits, plan_fleet
from app.core.pareto import ParetoPoint, frontier, slo_tokens_per_s_per_user
from app.core.perf.predict import performance
from app.core.perf.schedule import Workload
from app.core.plan import apply_quantization_flag, vllm_quantization_name
from app.core.result import Range
from app.core.specs import ServeConfig
from tests.unit.test_fleet import H100, LLAMA_8B, LLAMA_70B, target


def _point(per_user: float, per_device: float, name: str = "") -> ParetoPoint:
    return ParetoPoint(
        tokens_per_s_per_device=per_device,
        tokens_per_s_per_user=per_user,
        layout=name,
        tensor_parallel_size=1,
        pipeline_parallel_size=1,
        data_parallel_size=1,
        devices_per_replica=1,
        quantization=None,
        weight_format="bf16",
        kv_cache_dtype="auto",
        concurrency=1,
        ttft_ms=Range(low=1.0, expected=1.0, high=1.0),
        tpot_ms=Range(low=1000.0 / per_user, expected=1000.0 / per_user, high=1000.0 / per_user),
        meets_slo=True,
        serve=ServeConfig(),
        command="",
    )


def test_frontier_keeps_exactly_the_non_dominated_points() -> None:
    """By hand: b (50, 300) beats d (40, 250) on both axes; e (60, 100) is beaten by a (60, 120);
    c (20, 500), b, a are each best somewhere. Fastest per user first."""
    a, b, c = _point(60, 120, "a"), _point(50, 300, "b"), _point(20, 500, "c")
    d, e = _point(40, 250, "d"), _point(60, 100, "e")
    assert [p.layout for p in frontier([d, c, e, a, b])] == ["a", "b", "c"]
    assert frontier([]) == []


def _fleet(**limits: object) -> FleetPlan:
    return plan_fleet(
        model=find_model(LLAMA_70B),
        device=find_device(H100),
        serve=ServeConfig(max_model_len=8192),
        vllm_version=None,
        target=target(),
        limits=Limits(**limits),  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    "limits", [{}, {"devices_per_node": 8}, {"no_fp8_kv": True, "no_quantized_weights": True}]
)
def test_the_fleets_frontier_trades_per_device_for_per_user(limits: dict[str, object]) -> None:
    result = _fleet(**limits)
    points = result.pareto
    assert len(points) >= 3
    for faster, slower in itertools.pairwise(points):
        # per-device throughput rises as per-user speed falls: the curve of vllm bench's plot_pareto
        assert faster.tokens_per_s_per_user >= slower.tokens_per_s_per_user
        assert faster.tokens_per_s_per_device < slower.tokens_per_s_per_device
    for p in points:  # none dominates another
        assert not any(
            q is not p
            and q.tokens_per_s_per_user >= p.tokens_per_s_per_user
            and q.tokens_per_s_per_device >= p.tokens_per_s_per_device
            for q in points
        )
    # the SLO line: TPOT <= 50 ms is 20 tokens/s per user; a point meeting the SLO is right of it
    assert result.pareto_slo_tokens_per_s_per_user == slo_tokens_per_s_per_user(50.0) == 20.0
    assert all(p.tokens_per_s_per_user >= 20.0 for p in points if p.meets_slo)


def test_a_frontier_point_is_a_client_count_the_search_evaluated_and_its_numbers_reproduce() -> None:
    """Every point recomputes from its own command: the estimate and the performance model at its
    clients give the same per-device and per-user figures (no number invented for the chart)."""
    result = _fleet()
    model = find_model(LLAMA_70B)
    for p in result.pareto[:: max(1, len(result.pareto) // 4)]:
        parsed = parse_serve_command(p.command)
        # the command spells the weight format as vLLM names it (int4 -> compressed-tensors)
        flag = vllm_quantization_name(p.quantization) if p.quantization else None
        assert parsed.model == model.name and parsed.serve == p.serve.model_copy(
            update={"quantization": flag}
        )
        assert p.serve.tensor_parallel_size == p.tensor_parallel_size
        layout_model = apply_quantization_flag(model, p.quantization)
        est = estimate(model=layout_model, device=find_device(H100), serve=p.serve)
        perf = performance(
            estimate=est,
            model=layout_model,
            device=find_device(H100),
            serve=p.serve,
            workload=Workload(input_tokens=2048, output_tokens=256, concurrency=p.concurrency),
            with_curve=False,
        )
        devices = p.tensor_parallel_size * p.pipeline_parallel_size
        assert p.tokens_per_s_per_device == pytest.approx(perf.output_tokens_per_s.expected / devices)
        assert p.tokens_per_s_per_user == pytest.approx(1000.0 / perf.tpot_ms.expected)
        assert p.meets_slo == (perf.ttft_ms.expected <= 2000.0 and perf.tpot_ms.expected <= 50.0)


def test_the_cheapest_layout_meeting_the_slo_is_on_or_under_the_frontier() -> None:
    """The best candidate's operating point is one of the evaluated points, so the frontier covers it:
    some frontier point is at least as fast per user and serves at least as much per device."""
    result = plan_fleet(
        model=find_model(LLAMA_8B),
        device=find_device(H100),
        serve=ServeConfig(max_model_len=8192),
        vllm_version=None,
        target=target(),
    )
    best = result.best
    assert best is not None and best.meets_slo
    per_device = best.requests_per_s_per_replica * 256 / best.devices_per_replica
    per_user = 1000.0 / best.tpot_ms.expected
    assert any(
        p.tokens_per_s_per_user >= per_user - 1e-9 and p.tokens_per_s_per_device >= per_device * (1 - 1e-9)
        for p in result.pareto
    )
