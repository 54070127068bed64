"""The row types of versions.py's changelog: a device tier of vLLM's batch defaults and an attention-backend
priority list (kept here so versions.py holds the rules themselves under its 800-line cap)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class BatchTier:
    """One row of vLLM's `EngineArgs` batch defaults (`get_batch_defaults` from 0.14): a device with at
    least ``min_device_gib`` whose name contains none of ``excluded_names`` (compared lower-case) and
    whose compute capability is not in ``excluded_capabilities`` gets these `vllm serve` (OPENAI_API_SERVER) defaults."""

    min_device_gib: int
    max_num_seqs: int
    max_num_batched_tokens: int
    excluded_names: tuple[str, ...] = ()
    excluded_capabilities: tuple[str, ...] = ()  # DeviceSpec.compute_capability, e.g. "12.1"


@dataclass(frozen=True)
class BackendPriority:
    """vLLM's attention-backend priority list for MLA or non-MLA models on devices from ``min_sm`` to ``max_sm``
    (first row that matches wins; names are `backends.py` entries)."""

    mla: bool
    min_sm: int
    backends: tuple[str, ...]
    # 0.10-0.11 tested capability 10.0 exactly (is_device_capability(100)): a 100-100 row
    max_sm: int = 10_000


@dataclass(frozen=True)
class ForcedBlock:
    """platforms/cuda.py CudaPlatform.check_and_update_config (0.8.0-0.17.0): an MLA backend whose kernel block
    vLLM writes over cache_config.block_size, a --block-size included, logging "Forcing kv cache block size to
    ``block`` for ``log_name`` backend.". ``exact``: kept only when the block is one of the backend's own sizes
    (0.8.5-0.11.0 `!= 64`, `not in [32, 64]`); else any block the backend splits (0.14.0 `% 64 != 0`)."""

    backend: str
    log_name: str
    block: int
    exact: bool


@dataclass(frozen=True)
class GraphSupport:
    """How far one attention or mixer backend's metadata builder takes CUDA graphs (v1/attention/backend.py
    AttentionCGSupport, ``_cudagraph_support``): ``level`` 0 NEVER, 1 UNIFORM_SINGLE_TOKEN_DECODE, 2 UNIFORM_BATCH,
    3 ALWAYS. ``key`` is a backends.py name or "mamba:<MambaKind>"; ``class_name`` the backend class vLLM names."""

    key: str
    class_name: str
    level: int


@dataclass(frozen=True)
class Change:
    """From ``since`` on, these fields of :class:`VersionRules` take these values."""

    since: str
    source: str
    fields: dict[str, Any]
