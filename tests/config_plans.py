"""One helper for the tests that plan a real config.json at a release: the KV bytes a token it plans on an H100."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.catalog import find_device
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.specs import ServeConfig


def kv_bytes_per_token(
    config: Mapping[str, Any], version: str, *, tp: int = 1, max_model_len: int = 1024
) -> int:
    """The planner's KV bytes a token for ``config`` at ``version`` and ``tp`` (raises its PlannerError)."""
    spec = model_spec_from_hf_config(config, name="config", vllm_version=version)
    serve = ServeConfig(tensor_parallel_size=tp, max_model_len=max_model_len)
    return estimate(
        model=spec, device=find_device("h100"), serve=serve, vllm_version=version
    ).kv_bytes_per_token
