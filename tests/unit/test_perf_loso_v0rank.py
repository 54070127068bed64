"""bench/perf_loso.py's ``+v0rank``: a V0 run's host work is the fitted step plus the per-rank part for
every TP rank beyond the first (physics.host_step_seconds), worked by hand."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.unit.test_perf_loso_bands import _perf_loso


def test_a_v0_runs_host_point_adds_the_per_rank_part_for_its_tp_group() -> None:
    L = _perf_loso()
    correction = L.Correction(mode="physics+prefill+v0+v0rank", host_v0=(5e-3, 100e-6), host_v0_rank_s=2e-3)

    def run(tp: int) -> object:
        physics = SimpleNamespace(tensor_parallel_size=tp)
        return L.Run("s", {}, {}, context=SimpleNamespace(physics=physics, engine="v0"))

    # TP 8: 5 ms + 7 x 2 ms = 19 ms a step; TP 1: the 5 ms alone; the per-request part is left as fitted
    assert correction._v0_point(run(8)) == pytest.approx((19e-3, 100e-6))
    assert correction._v0_point(run(1)) == pytest.approx((5e-3, 100e-6))
