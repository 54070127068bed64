"""bench/fit_perf.py rewrites coefficients.json's families; what bench/perf_loso.py wrote beside them
(host work, device-time factors, bands) must survive the refit. Before the fix it kept only host,
bench_bands and host_fitted_by, so a refit silently dropped device_time (the shipped file's MI300X,
MI355X, 910B and 910C factors) and device_compute_time."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _fit_perf() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fit_perf_for_keys", ROOT / "bench" / "fit_perf.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_a_refit_keeps_every_key_perf_loso_wrote() -> None:
    shipped = json.loads((ROOT / "app" / "core" / "perf" / "coefficients.json").read_text(encoding="utf-8"))
    kept = _fit_perf().carried_over(shipped)
    assert set(kept) == set(shipped) - {"fitted_by", "data", "families"}
    assert kept["device_time"] == shipped["device_time"]
    assert "device_compute_time" in kept
    assert "families" not in kept
