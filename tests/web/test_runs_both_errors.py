"""A bad benchmark argument and a bad paste are both shown, on every page (issue 23 round 7, speedpage7
fault 8). Before, the fleet and the recommender showed ``runs_error or bench_error``: with a bad paste in
"Your own runs", a bad ``num_prompts`` was hidden (and the three pages wrote the banner three ways; now
one macro, _partials/forms.html ``runs_errors``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest

LLAMA = {"v": "1", "model": "meta-llama/Llama-3.1-8B-Instruct", "device": "nvidia-h100-sxm-80gb"}
PAGE = {**LLAMA, "max_model_len": "4096", "target_concurrency": "64"}
# num_prompts 0: `vllm bench serve` needs at least one prompt (BenchArgs ge=1)
BAD_BENCH = {"bench_serve": "true", "num_prompts": "0"}
# line 2 of the box: the figure is not a number
BAD_PASTE = "============ Serving Benchmark Result ============\nMean TPOT (ms):   fast\n"
FLEET = {"input_tokens": "1024", "output_tokens": "256", "requests_per_s": "5", "devices_available": "8"}


@pytest.mark.parametrize(
    ("path", "prefix", "extra"),
    [("/speed", "speed", {}), ("/recommend", "recommend", {})],
)
def test_both_errors_are_in_view(client: Any, path: str, prefix: str, extra: dict[str, str]) -> None:
    query = {**PAGE, **extra, **BAD_BENCH, "my_runs": BAD_PASTE}
    page = client.get(f"{path}?" + urlencode(query))
    assert page.status_code == 200, page.text[:400]
    assert f'id="{prefix}-bench-error"><code>num_prompts</code>' in page.text
    assert f'id="{prefix}-runs-error"><code>my_runs</code>: line 2: cannot read a number' in page.text


def test_the_fleet_stops_on_a_bad_benchmark_and_shows_both(client: Any) -> None:
    # lane page12: the fleet sizes for the benchmark's workload (its mean request, its rate), so a bad
    # argument stops the search (the answer would be for another load); the verdict names it, and the
    # bad paste is still shown above
    page = client.get("/fleet?" + urlencode({**PAGE, **FLEET, **BAD_BENCH, "my_runs": BAD_PASTE}))
    assert page.status_code == 422, page.text[:400]
    verdict = page.text[page.text.index('id="verdict"') :]
    assert verdict[: verdict.index("</div>")].count("<code>num_prompts</code>") == 1
    assert 'id="fleet-best"' not in page.text
    assert 'id="fleet-runs-error"><code>my_runs</code>: line 2: cannot read a number' in page.text


def test_the_recommender_says_the_lengths_were_shortened(client: Any) -> None:
    # blank lengths 1,024 + 1,024 against a 320-token max_model_len: the speed workload is 160 + 160
    # (320 x 1,024 // 2,048 = 160), and the recommender now says so as the Speed section does (it was dropped)
    query = {**LLAMA, "max_model_len": "320", "target_concurrency": "4"}
    section = client.get("/recommend?" + urlencode(query))
    assert section.status_code == 200
    assert "modelled as 160 + 160, the lengths you did not set shortened to fit" in section.text
    api = client.post(
        "/api/recommend", json={**{k: v for k, v in LLAMA.items() if k != "v"}, "max_model_len": 320}
    )
    assert any("modelled as 160 + 160" in w for w in api.json()["warnings"]), api.json()["warnings"]
