"""Round 16b (speed16b): bench/perf_loso.py scores a run on its median where it printed no mean, and
bench/perf_refit.py's ``+family`` gives a borrowed CUDA architecture its own factors only where two
independent origins ran it. Worked by hand on made-up runs."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _perf_loso() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("perf_loso_for_medians", BENCH / "perf_loso.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


L = _perf_loso()
import perf_refit as R  # noqa: E402  (on sys.path once perf_loso is loaded)

# the simulation prints both figures; this run printed only the medians (pegainfer's and the Kaggle T4's
# sources do): TPOT median 12 ms measured against 10 ms predicted, the predicted mean 15 ms
PREDICTED = {"mean_tpot_ms": 15.0, "median_tpot_ms": 10.0, "mean_ttft_ms": 100.0, "median_ttft_ms": 80.0}
MEDIANS_ONLY = {"median_tpot_ms": 12.0, "median_ttft_ms": 40.0}


def test_a_run_is_scored_on_its_mean_else_its_median() -> None:
    both = L.Run("a", PREDICTED, {"mean_tpot_ms": 16.0, "median_tpot_ms": 12.0})
    medians = L.Run("b", PREDICTED, MEDIANS_ONLY)
    assert both.key("tpot") == "mean_tpot_ms"  # the mean where both were printed
    assert medians.key("tpot") == "median_tpot_ms" and medians.key("ttft") == "median_ttft_ms"
    assert medians.key("throughput") is None  # not printed: not scored
    # TPOT: predicted median 10 against measured 12: |10 - 12| / 12 = 0.167, ratio 0.833 (the mean, 15,
    # would have said 1.25 against a figure the source never printed)
    scores = L.score([medians], "tpot", L.Correction(mode="none"), (-1.0, 1.0))
    assert scores is not None and scores.runs == 1
    assert scores.error == pytest.approx(2 / 12) and scores.ratio == pytest.approx(10 / 12)


def test_mean_only_keeps_the_scorer_of_rounds_10_to_16() -> None:
    medians = L.Run("b", PREDICTED, MEDIANS_ONLY)
    L.SCORE_MEDIANS[0] = False
    try:
        assert medians.key("tpot") is None
        assert L.score([medians], "tpot", L.Correction(mode="none"), (-1.0, 1.0)) is None
    finally:
        L.SCORE_MEDIANS[0] = True


def test_the_ttft_overhead_moves_the_median_ttft_with_the_mean() -> None:
    # a physics correction's TTFT overhead replaces the shipped one on every request: shipped 5 ms and no part
    # per token (no context), fitted 10 ms + 0.01 ms a token over 1,000-token prompts: each request's TTFT moves
    # by 10 - 5 + 0.01 x 1,000 = 15 ms, so the mean 100 -> 115 and the median 80 -> 95
    run = L.Run("b", PREDICTED, MEDIANS_ONLY, prompt_tokens=1000.0, shipped_ttft_overhead_ms=5.0)
    got = L.Correction(mode="physics", ttft_base_ms=10.0, ttft_per_token_ms=0.01).predict(run)
    assert got["mean_ttft_ms"] == pytest.approx(115.0) and got["median_ttft_ms"] == pytest.approx(95.0)


@dataclass(frozen=True)
class FakeRun:
    source: str
    device_key: str


# sm75 run by two origins (target factor 1.5), sm89 by two (1.25), sm86 by one (0.8), sm90 is a fitted
# family's own architecture (never refit), the RTX PRO 6000's sm120 by one origin in two sources of one
# repository (so one origin: "x/repo run A" and "x/repo run B")
TRAIN = {
    "a/t4 post": [FakeRun("a/t4 post", "cuda-sm75")],
    "b/kaggle": [FakeRun("b/kaggle", "cuda-sm75")],
    "c/a10": [FakeRun("c/a10", "cuda-sm86")],
    "d/l40s": [FakeRun("d/l40s", "cuda-sm89")],
    "e/4090": [FakeRun("e/4090", "cuda-sm89")],
    "f/h100": [FakeRun("f/h100", "cuda-sm90")],
    "x/repo run A": [FakeRun("x/repo run A", "cuda-sm120")],
    "x/repo run B": [FakeRun("x/repo run B", "cuda-sm120")],
}
TARGET = {"cuda-sm75": 1.5, "cuda-sm86": 0.8, "cuda-sm89": 1.25, "cuda-sm90": 1.0, "cuda-sm120": 2.0}


def _objective(runs, decode, compute, kinds) -> float:  # type: ignore[no-untyped-def]
    """Each run's distance from its architecture's target, for the decode factor (TPOT + throughput) or,
    with all three kinds, the compute one (the same target)."""
    factors = dict(compute if "ttft" in kinds else decode)
    return sum(
        abs(factors.get(r.device_key, 1.0) - TARGET[r.device_key]) for rows in runs.values() for r in rows
    )


def test_origins_are_the_repository_not_the_source() -> None:
    assert R.origin("tenstorrent/tt-inference-server GPU baselines") == "tenstorrent/tt-inference-server"
    # two issues, two people
    assert R.origin("vllm-project/vllm#17788") != R.origin("vllm-project/vllm#20469")
    assert R.base_family("cuda-sm121") == "blackwell" and R.base_family("cuda-sm75") == "hopper"
    assert {"cuda-sm90", "cuda-sm100"} <= R.fitted_arches()


def test_family_factors_need_two_origins_else_the_pooled_pair() -> None:
    decode, compute = R.fit_family(TRAIN, _objective)
    # sm75 and sm89 have two origins each: their own targets. sm86 (one origin) takes the pooled pair of
    # the Hopper borrowers: the grid point minimising 2 |f - 1.5| + |f - 0.8| + 2 |f - 1.25|, the weighted
    # median of (0.8 x 1, 1.25 x 2, 1.5 x 2) = 1.25. sm120 (one origin) pools alone among the Blackwell
    # borrowers: 2 |f - 2.0|, so 2.0. sm90 is the fitted family's: no factor (1).
    assert dict(decode) == {"cuda-sm75": 1.5, "cuda-sm86": 1.25, "cuda-sm89": 1.25, "cuda-sm120": 2.0}
    assert dict(compute) == dict(decode)


def test_familyown_keeps_the_family_fit_without_two_origins() -> None:
    decode, _ = R.fit_family(TRAIN, _objective, pooled_fallback=False)
    assert dict(decode) == {"cuda-sm75": 1.5, "cuda-sm89": 1.25}  # sm86 and sm120 keep 1
