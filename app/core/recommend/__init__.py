"""From a configuration that misses its target to one that meets it, in the seed's order.

The seed's remedy table (处置) says: "先压 S，再考虑 KV 数据类型，再考虑 TP，最后才动
gpu_memory_utilization 与 --swap-space" — first the sequence length, then the KV dtype, then tensor
parallelism, and only last the utilization and swap/offload. :data:`RULES` is that table as data:
each row names the flag it moves, when it may act, the configurations it proposes, and the effect
and cost it explains. :func:`recommend` runs the rows in order; every candidate is re-estimated with
the core and a row is applied only when it is valid and moves the configuration toward the target
(S* = ``target_max_model_len`` tokens for N* = ``target_concurrency`` sequences). A row only ever
changes its own flags, so a later row never undoes an earlier one.

:func:`bisect` is the seed's fourth diagnosis step as a feature: would it run with
``--max-model-len`` halved (S side)? with one sequence (N side)? neither (budget)?
"""

from __future__ import annotations

from app.core.recommend.bisection import bisect
from app.core.recommend.engine import Rule
from app.core.recommend.model import (
    Bisection,
    BisectionProbe,
    BisectionVerdict,
    Preference,
    Recommendation,
    Snapshot,
    Step,
)
from app.core.recommend.offload import pcie_gb_per_s
from app.core.recommend.parallel import allreduce_bytes_per_token
from app.core.recommend.rules import RULES
from app.core.recommend.runner import PRUNE_ORDER, recommend
from app.core.recommend.utilization import (
    ACTIVATION_HEADROOM_BYTES,
    SAFE_UTILIZATION_CEILING,
    utilization_ceiling,
)

__all__ = [
    "ACTIVATION_HEADROOM_BYTES",
    "PRUNE_ORDER",
    "RULES",
    "SAFE_UTILIZATION_CEILING",
    "Bisection",
    "BisectionProbe",
    "BisectionVerdict",
    "Preference",
    "Recommendation",
    "Rule",
    "Snapshot",
    "Step",
    "allreduce_bytes_per_token",
    "bisect",
    "pcie_gb_per_s",
    "recommend",
    "utilization_ceiling",
]
