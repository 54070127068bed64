"""The simulation-in-the-loop refit of the NVIDIA step coefficients (bench/perf_loso.py's ``+arch`` option).

bench/fit_perf.py fits each family's step coefficients on the closed-form schedule (schedule.point_at) of
the shared file's runs; the answers come from the simulated `vllm bench serve` run (simulate.py), which
queues, chunks and drains where the closed form averages. Round 9 measured what that costs (TTFT bias
0.73, TPOT 0.91, throughput 1.14 out of source): the coefficients absorbed the closed form's own errors, so
every physics fix in the simulation fought them. This stage refits them *through the simulation*, as
two factors per CUDA architecture (its SM version: sm90 = H100/H200/H20, sm100 = B200, sm89 = RTX 4090 /
L4 / L40S, ...), applied as physics.slower_device applies a ROCm device's:

* the decode factor stretches what a decode step is made of (bytes read, the wire, the per-step,
  per-layer and per-token floors), chosen on TPOT and output throughput;
* the compute factor stretches the FLOPs (GEMMs, attention: a prompt chunk), chosen on all three kinds
  with the decode factor fixed.

Each is chosen on a grid around 1 by simulating every training run of that architecture at each point,
every training source one vote (the objective bench/perf_loso.py scores with), so a source held out never
takes part in its own correction. An architecture no training source ran keeps 1 (the family's fit).
Why per architecture, not per family: the A100, RTX 4090, L4 and T4 are planned with the Hopper fit at
their data-sheet rates, and each generation's kernels reach a different share of its data sheet.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Protocol

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fit_perf as F

from app.core.catalog import find_device
from app.core.errors import UnknownDeviceError
from app.core.perf.predict import ARCH_PREFIX, cuda_arch

# the grid of both factors (1 = the closed-form family fit as shipped): 0.6-2.0, finer near 1
ARCH_GRID = (0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0)
ARCH_OPTION = "+arch"
POOLED_OPTION = "+cuda"  # one (decode, compute) pair for every CUDA architecture
# "+family" (round 16b): only the architectures that *borrow* a fitted family's coefficients (the A100, A10,
# RTX 3090/4090, L4, L40S, T4 take Hopper's; the RTX 5090, RTX PRO 6000 and GB10 Blackwell's: predict.
# device_family) get factors; the fitted families' own architectures (sm90, sm100/103, fitted on the shared
# file) keep 1. An architecture whose training runs come from at least MIN_ORIGINS independent origins gets
# its own pair; the others take the pair fitted on every borrowed run of their base family together.
FAMILY_OPTION = "+family"
OWN_OPTION = (
    "+familyown"  # the same, but an architecture without MIN_ORIGINS origins keeps 1 (the family's fit)
)
MIN_ORIGINS = 2


@cache
def arch_key(device_id: str) -> str:
    """The run's CUDA architecture key (predict.cuda_arch) from its catalog id or shared-file system name."""
    try:
        return cuda_arch(find_device(F.SYSTEMS.get(device_id, device_id)))
    except UnknownDeviceError:
        return ""


class _Run(Protocol):
    @property
    def device_key(self) -> str: ...

    @property
    def source(self) -> str: ...


def origin(source: str) -> str:
    """Who measured a source: its repository or site, the first word of its name, so two sources of one
    repository ("tenstorrent/tt-inference-server GPU reference runs" and "... GPU baselines") count once."""
    return source.split()[0]


@cache
def fitted_arches() -> frozenset[str]:
    """The CUDA architectures of the devices the families were fitted on (coefficients.json's devices)."""
    from app.core.perf.predict import fitted_families

    return frozenset(arch_key(d) for fit in fitted_families().values() for d in fit.devices) - {""}


def base_family(key: str) -> str:
    """The fitted family an architecture borrows (predict.device_family: sm 100 and up Blackwell's, else
    Hopper's)."""
    return "blackwell" if int(key.removeprefix(ARCH_PREFIX)) >= 100 else "hopper"


Factors = tuple[tuple[str, float], ...]
# objective(train runs, decode factors, compute factors, kinds) -> source-weighted error (lower is better)
Objective = Callable[[Mapping[str, Sequence[_Run]], Factors, Factors, tuple[str, ...]], float]


def fit_arch(
    train: Mapping[str, Sequence[_Run]],
    objective: Objective,
    *,
    grid: Sequence[float] = ARCH_GRID,
    pooled: bool = False,
) -> tuple[Factors, Factors]:
    """Per CUDA architecture the training runs cover: (decode factors, compute factors), each the grid point
    that minimises ``objective`` on that architecture's training runs (decode on TPOT and throughput, then
    compute on all three kinds with the decode factor fixed). ``pooled`` (``+cuda``): one pair for every
    architecture, chosen on all their runs together."""
    keys = sorted(
        {r.device_key for rows in train.values() for r in rows if r.device_key.startswith(ARCH_PREFIX)}
    )
    groups = [keys] if pooled and keys else [[key] for key in keys]
    return _fit_groups(train, objective, groups, grid)


def fit_family(
    train: Mapping[str, Sequence[_Run]],
    objective: Objective,
    *,
    grid: Sequence[float] = ARCH_GRID,
    pooled_fallback: bool = True,
) -> tuple[Factors, Factors]:
    """``+family``: per borrowed architecture the training runs cover, its own (decode, compute) pair where
    MIN_ORIGINS independent origins ran it, else its base family's pooled pair (fitted on every borrowed run
    of that family, each training source one vote; ``pooled_fallback`` False, ``+familyown``: 1). Fitted
    architectures are left out (1)."""
    own = fitted_arches()
    origins: dict[str, set[str]] = {}
    for rows in train.values():
        for r in rows:
            if r.device_key.startswith(ARCH_PREFIX) and r.device_key not in own:
                origins.setdefault(r.device_key, set()).add(origin(r.source))
    decode: list[tuple[str, float]] = []
    compute: list[tuple[str, float]] = []
    for family in sorted({base_family(k) for k in origins}):
        members = sorted(k for k in origins if base_family(k) == family)
        alone = [k for k in members if len(origins[k]) >= MIN_ORIGINS]
        rest = [k for k in members if k not in alone]
        if pooled_fallback and rest:
            d_pool, c_pool = _fit_groups(train, objective, [members], grid)
            decode.extend(p for p in d_pool if p[0] in rest)
            compute.extend(p for p in c_pool if p[0] in rest)
        d_own, c_own = _fit_groups(train, objective, [[k] for k in alone], grid)
        decode.extend(d_own)
        compute.extend(c_own)
    return tuple(decode), tuple(compute)


def _fit_groups(
    train: Mapping[str, Sequence[_Run]],
    objective: Objective,
    groups: Sequence[Sequence[str]],
    grid: Sequence[float],
) -> tuple[Factors, Factors]:
    """Per group of architectures, the one (decode, compute) pair chosen on the group's training runs."""
    decode: list[tuple[str, float]] = []
    compute: list[tuple[str, float]] = []
    for group in groups:
        runs = {s: [r for r in rows if r.device_key in group] for s, rows in train.items()}
        runs = {s: rows for s, rows in runs.items() if rows}

        def each(f: float, group: Sequence[str] = group) -> Factors:
            return tuple((key, f) for key in group)

        d = min(grid, key=lambda f: (objective(runs, each(f), (), ("tpot", "throughput")), abs(f - 1)))
        c = min(
            grid,
            key=lambda f: (objective(runs, each(d), each(f), ("tpot", "ttft", "throughput")), abs(f - 1)),
        )
        decode.extend(each(d))
        compute.extend(each(c))
    return tuple(decode), tuple(compute)
