"""What the deployment targets (GET /api/deploy) are rendered from: the planner's inputs and their estimate."""

from __future__ import annotations

from app.core import deploy
from app.core.result import Estimate
from app.web.inputs.params import same_named
from app.web.inputs.resolve import Resolved


def deploy_plan(resolved: Resolved, est: Estimate, *, replicas: int = 1) -> deploy.Plan:
    """What the deployment targets (app/core/deploy.py) are rendered from: the inputs and their estimate."""
    return same_named(deploy.Plan, resolved, estimate=est, replicas=replicas)
