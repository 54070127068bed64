"""A pasted result block without "Maximum request concurrency" ran uncapped (issue 23 round 7,
speedpage7 fault 4).

vLLM prints that line inside the block only when --max-concurrency was set (vllm/benchmarks/serve.py
0.33.0 lines 1223-1224, `if max_concurrency is not None:`), and --save-result writes it as null. Before,
such a block took the benchmark fieldset's cap (here 4 clients), which describes the user's next run, not
the pasted one: the run's prediction, and so your cluster's factor, changed with the fieldset.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

API = {"model": "meta-llama/Llama-3.1-8B-Instruct", "device": "nvidia-h100-sxm-80gb", "max_model_len": 4096}
WORKLOAD = {"input_tokens": 1024, "output_tokens": 256, "concurrency": 16}
# vLLM 0.19.0's printed lines without the cap line; 200 prompts x 1,024 / 256 tokens
BLOCK = "\n".join(
    (
        "============ Serving Benchmark Result ============",
        "Successful requests:                     200",
        "Request rate configured (RPS):           4.00",
        "Total input tokens:                      204800",
        "Total generated tokens:                  51200",
        "Mean TPOT (ms):                          9.00",
        "==================================================",
    )
)
NO_CAP = "states no 'Maximum request concurrency', so it was simulated without a cap"


def _factor(client: TestClient, fieldset: dict[str, Any]) -> tuple[float, list[str]]:
    """Your cluster's TPOT factor: the calibrated expected TPOT over the uncalibrated one."""
    body = {**API, **WORKLOAD, "bench_serve": True, **fieldset}
    plain = client.post("/api/performance", json=body)
    calibrated = client.post("/api/performance", json={**body, "my_runs": BLOCK})
    assert plain.status_code == calibrated.status_code == 200, calibrated.text
    cal = calibrated.json()
    return cal["tpot_ms"]["expected"] / plain.json()["tpot_ms"]["expected"], cal["notes"]


def test_a_block_without_the_cap_line_runs_uncapped_whatever_the_fieldset(client: TestClient) -> None:
    capped, notes = _factor(client, {"max_concurrency": 4})
    uncapped, _ = _factor(client, {})
    # both fits simulate the pasted run with no cap: the same factor (before: 4 clients vs none)
    assert capped == pytest.approx(uncapped, rel=1e-9)
    assert any(NO_CAP in n for n in notes), notes


def test_a_block_with_the_cap_line_keeps_its_cap(client: TestClient) -> None:
    block = BLOCK.replace("Request rate", "Maximum request concurrency:             4\nRequest rate")
    body = {**API, **WORKLOAD, "bench_serve": True}
    answer = client.post("/api/performance", json={**body, "my_runs": block}).json()
    assert not any(NO_CAP in n for n in answer["notes"])
    plain = client.post("/api/performance", json={**body, "my_runs": BLOCK}).json()
    # 4 clients against none: the pasted runs' predictions differ, so do the factors
    assert answer["tpot_ms"]["expected"] != plain["tpot_ms"]["expected"]


def test_the_page_fit_is_made_once_per_box(client: TestClient) -> None:
    # Speed, fleet and recommender of one page each asked for the same fit (an estimate and a simulated
    # benchmark per run, up to 64) and the box was parsed twice per run; now one fit per box text,
    # configuration and benchmark
    from app.web.measured_runs import _cached_fit

    query = {"v": "1", **{k: str(v) for k, v in API.items()}, "my_runs": BLOCK.replace("9.00", "9.25")}
    before = _cached_fit.cache_info()
    for path in ("/speed", "/recommend", "/speed"):
        assert client.get(path, params=query).status_code == 200
    after = _cached_fit.cache_info()
    assert after.misses - before.misses == 1  # the first page fitted it
    assert after.hits - before.hits == 2  # the other two reused it


def test_a_bad_box_is_read_once_too(client: TestClient) -> None:
    # lru_cache keeps no exception: a box whose run fails (here a JSON object that never closes) was read
    # and simulated again on every page and slider move; its PlannerError is now kept like a fit
    from app.web.measured_runs import _cached_fit

    query = {"v": "1", **{k: str(v) for k, v in API.items()}, "my_runs": '{\n  "mean_tpot_ms": 9.75,\n'}
    before = _cached_fit.cache_info()
    pages = [client.get(path, params=query) for path in ("/speed", "/speed")]
    after = _cached_fit.cache_info()
    # '  "mean_tpot_ms": 9.75,' is 23 characters: json stops past its comma, at column 24
    assert all(page.status_code == 200 and "line 2, column 24: not valid JSON" in page.text for page in pages)
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 1)
