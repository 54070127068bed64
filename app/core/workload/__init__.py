"""The workload simulator: vLLM V1's paged KV allocation under a stream of requests.

``schema`` holds the inputs and the result, ``simulator`` the discrete-step scheduler, ``budget``
the work bound checked before and during a run, ``presets`` the seed's scenarios as data. Callers
import from here.
"""

from app.core.workload.budget import (
    MAX_SIMULATION_SECONDS,
    MAX_SIMULATION_WORK,
    WorkloadTooLargeError,
    prefill_steps_needed,
)
from app.core.workload.presets import WORKLOAD_PRESETS, WorkloadPreset
from app.core.workload.schema import (
    DEFAULT_PREFIX_GROUP,
    MAX_NUM_REQUESTS,
    MAX_SERIES_POINTS,
    BindingLimit,
    BlockedBy,
    EngineParams,
    KVSeries,
    LengthDist,
    LognormalLength,
    RejectReason,
    RequestClass,
    UniformLength,
    WorkloadResult,
    WorkloadSpec,
    length_bounds,
    sample_length,
)
from app.core.workload.simulator import SimulationInvariantError, _Simulator, simulate

__all__ = [
    "DEFAULT_PREFIX_GROUP",
    "MAX_NUM_REQUESTS",
    "MAX_SERIES_POINTS",
    "MAX_SIMULATION_SECONDS",
    "MAX_SIMULATION_WORK",
    "WORKLOAD_PRESETS",
    "BindingLimit",
    "BlockedBy",
    "EngineParams",
    "KVSeries",
    "LengthDist",
    "LognormalLength",
    "RejectReason",
    "RequestClass",
    "SimulationInvariantError",
    "UniformLength",
    "WorkloadPreset",
    "WorkloadResult",
    "WorkloadSpec",
    "WorkloadTooLargeError",
    "_Simulator",
    "length_bounds",
    "prefill_steps_needed",
    "sample_length",
    "simulate",
]
