"""The doctor's budget T × u is the planner's (app.core.budget.requested_bytes), by the replayed release's rule:
ceil from 0.14 (v1/worker/gpu_worker.py, 0.14.0: math.ceil(total_memory * gpu_memory_utilization)), the plain
product before it and on vllm-ascend (NPUWorker keeps it). The step used round(), which is neither: it takes the
lower byte when the product's fraction is below one half, where 0.14+ takes the upper one."""

from __future__ import annotations

import pytest

from app.core.diagnose.case import recover_case
from app.core.diagnose.steps import requested_budget
from app.core.logs import parse_startup_log

# 85,899,345,926 B × 0.9 = 77,309,411,333.4: ceil 77,309,411,334; int (and round) 77,309,411,333
TOTAL = 85_899_345_926
UTIL = 0.9


def _case(version_line: str, device_line: str = ""):
    text = (
        version_line
        + device_line
        + "INFO 01-01 00:00:00 [gpu_worker.py:1] Available KV cache memory: 1.00 GiB\n"
    )
    return recover_case(text, parse_startup_log(text), None, None)


@pytest.mark.parametrize(
    ("version", "budget"),
    [
        ("0.19.0", 77_309_411_334),
        ("0.33.0", 77_309_411_334),
        ("0.13.0", 77_309_411_333),
        ("0.11.0", 77_309_411_333),
    ],
)
def test_the_budget_follows_the_release_rule(version: str, budget: int) -> None:
    case = _case(f"INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version {version}\n")
    assert requested_budget(case, TOTAL, UTIL) == budget


def test_vllm_ascend_keeps_the_plain_product() -> None:
    case = _case(
        "INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version 0.19.0\n",
        "INFO 01-01 00:00:00 [__init__.py:1] Platform plugin ascend is activated\n",
    )
    assert requested_budget(case, TOTAL, UTIL) == 77_309_411_333
