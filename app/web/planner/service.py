"""The planner's estimate, its capacity chart, and what the deployment targets are rendered from."""

from __future__ import annotations

from app.core import deploy
from app.core.estimate import capacity_curve
from app.core.result import Estimate
from app.web.inputs.params import same_named
from app.web.inputs.resolve import Resolved, estimate_for

CURVE_POINTS = 24  # the planner's capacity chart: max_model_len from 512 to the model's limit


def estimate_with_curve(resolved: Resolved) -> tuple[Estimate, list[tuple[int, float]]]:
    """The planner's estimate and its capacity chart (concurrency at ``CURVE_POINTS`` lengths)."""
    est = estimate_for(resolved)
    curve = capacity_curve(
        model=resolved.model,
        device=resolved.device,
        serve=resolved.serve,
        vllm_version=resolved.vllm_version,
        points=CURVE_POINTS,
        base=est,
    )
    return est, curve


def deploy_plan(resolved: Resolved, est: Estimate, *, replicas: int = 1) -> deploy.Plan:
    """What the deployment targets (app/core/deploy.py) are rendered from: the inputs and their estimate."""
    return same_named(deploy.Plan, resolved, estimate=est, replicas=replicas)
