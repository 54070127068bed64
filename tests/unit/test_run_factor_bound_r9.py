"""The bound on a measured run's figure against the model's (app.core.perf.cluster.MAX_RUN_FACTOR = 100).

Worked by hand: measured 10 ms against predicted 0.1001 ms is 99.9 x (kept); against 0.0999 ms it is
100.1 x (refused); 0.1 ms against 10.01 ms is 1/100.1 (refused). Keys are tried in vLLM's result-key order
(app.core.perf.bench.RESULT_KEYS: TTFT before TPOT).
"""

from __future__ import annotations

import pytest

from app.core.errors import PlannerError
from app.core.perf.cluster import RunComparison, implausible_key
from app.core.perf.measured import refuse_implausible


@pytest.mark.parametrize(
    ("measured", "predicted", "refused"),
    [(10.0, 0.1001, False), (10.0, 0.0999, True), (0.1, 10.01, True), (0.1, 9.99, False)],
)
def test_the_bound_is_a_hundred_either_way(measured: float, predicted: float, refused: bool) -> None:
    run = RunComparison(predicted={"mean_tpot_ms": predicted}, measured={"mean_tpot_ms": measured})
    assert (implausible_key(run) is not None) is refused


def test_the_first_key_out_of_bounds_is_named() -> None:
    run = RunComparison(
        predicted={"mean_tpot_ms": 50.0, "mean_ttft_ms": 100.0, "output_throughput": 2000.0},
        measured={"mean_tpot_ms": 1e-300, "mean_ttft_ms": 1e-300, "output_throughput": 1e-300},
    )
    assert implausible_key(run) == ("mean_ttft_ms", 1e-300, 100.0)
    with pytest.raises(PlannerError) as caught:
        refuse_implausible(run, field="runs: line 4")
    assert caught.value.field == "runs: line 4"
    assert str(caught.value.message).startswith("mean_ttft_ms: 1e-300 is not a figure of this configuration")


def test_a_key_the_model_does_not_predict_is_not_judged() -> None:
    run = RunComparison(predicted={}, measured={"mean_tpot_ms": 1e-300})
    assert implausible_key(run) is None
