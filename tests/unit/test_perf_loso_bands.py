"""bench/perf_loso.py's bands: as wide as a source left out of them needs (issue 23: about 80 % of the
runs of a source the fit never saw inside), worked by hand on three small sources."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _perf_loso() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("perf_loso_for_bands", BENCH / "perf_loso.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


# two sources with log residuals 0, 1, ..., 9 and one shifted by 5 (5, ..., 14); every run weighs
# 1 / 10 (each source one vote)
SOURCES = [[float(v) for v in range(10)], [float(v) for v in range(10)], [float(v) for v in range(5, 15)]]


def test_the_plain_10_90_band_is_too_narrow_for_a_source_left_out() -> None:
    L = _perf_loso()
    # without the shifted source: 0, 0, 1, 1, ..., 9, 9 at 0.1 each; the 10th percentile is the 2nd
    # value (0), the 90th the 18th (8): [0, 8] holds 5..8 of the shifted source, 4 of 10. Without one of
    # the others: [1, 12] holds 9 of its 10. Mean (0.9 + 0.9 + 0.4) / 3 = 0.73 < 0.80
    assert L._central(SOURCES[:2], 0.10) == (0.0, 8.0)
    assert L._central(SOURCES[1:], 0.10) == (1.0, 12.0)


def test_the_band_widens_until_the_left_out_source_is_covered() -> None:
    L = _perf_loso()
    # tails 0.09-0.06 give 0.77; at 0.05 the shifted source left out gets [0, 9] (5 of 10 inside) and the
    # others [0, 13] (all 10): mean (1 + 1 + 0.5) / 3 = 0.83 >= 0.80. With every source, 30 runs at 0.1:
    # the 5th percentile is the 2nd value (0), the 95th the 29th (13)
    assert L.covering_band(SOURCES) == (0.0, 13.0)


def test_sources_that_agree_keep_the_plain_band() -> None:
    L = _perf_loso()
    # three copies of 0..9: any two give [0, 8] at 0.10, holding 9 of the third's 10: 0.9 >= 0.8. With all
    # three (30 runs at 0.1), the 10th percentile is the 3rd value (0) and the 90th the 27th (8)
    same = [[float(v) for v in range(10)] for _ in range(3)]
    assert L.covering_band(same) == (0.0, 8.0)


def test_loo_bands_leave_the_held_out_source_out_of_its_own_band() -> None:
    # --loo-bands (round 10: the nested band's S^2 fits take hours at 35 sources): each source is scored with
    # the band covering_band makes from the *other* sources' residuals. Mode "none" fits nothing, so the
    # residuals are the logs themselves. Held out D (logs 12 and 13.5): its band is covering_band(A, B, C) =
    # [0, 13] (test above), which holds 12 and not 13.5: 50 %. Had D's own runs entered, 13.5 would be inside.
    L = _perf_loso()

    def runs(source: str, logs: list[float]) -> list:  # type: ignore[type-arg]
        return [L.Run(source, {"mean_tpot_ms": 1.0}, {"mean_tpot_ms": math.exp(v)}) for v in logs]

    by_source = {name: runs(name, logs) for name, logs in zip("ABC", SOURCES, strict=True)}
    by_source["D"] = runs("D", [12.0, 13.5])
    cells = L.loso_loo_bands("none", by_source)["D"]
    assert set(cells) == {"tpot"}  # the other kinds were not measured
    assert cells["tpot"].inside == 0.5 and cells["tpot"].runs == 2


def test_the_default_run_is_fast_and_the_nested_refit_is_behind_a_flag(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # round 11: the nested band refits once per training source in every fold (S^2 fits, hours at 35
    # sources); the default is the fold's own residuals (band_in_fold), the nested one --nested-bands
    L = _perf_loso()

    def runs(source: str, logs: list[float]) -> list:  # type: ignore[type-arg]
        return [L.Run(source, {"mean_tpot_ms": 1.0}, {"mean_tpot_ms": math.exp(v)}) for v in logs]

    by_source = {name: runs(name, logs) for name, logs in zip("ABC", SOURCES, strict=True)}
    nested_calls: list[str] = []
    real_band = L.band
    monkeypatch.setattr(L, "band", lambda mode, train: nested_calls.append(mode) or real_band(mode, train))
    monkeypatch.setattr(L, "cached_load", lambda argv: by_source)
    assert L.main(["--modes", "none"]) == 0
    assert nested_calls == []  # three folds and the final fit, no nested band
    # held out C (logs 5..14) under mode none: its fold's band is A's and B's own residuals, covering_band
    # of 0..9 twice = [0, 8] (the two agree: the plain 10-90 band), which holds C's 5, 6, 7, 8: 4 of 10
    fast = L.loso("none", by_source)["C"]["tpot"]
    assert fast.inside == 0.4
    assert L.main(["--modes", "none", "--nested-bands"]) == 0
    assert nested_calls == ["none"] * 4  # one per fold, and the final fit's
