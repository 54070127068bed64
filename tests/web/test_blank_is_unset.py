"""One rule for "a blank box is not set" (app/web/inputs/unset.py): the planner's target N, the fleet's lengths and
rate, the explorer's defaulted fields. A blank string (a cleared box) or JSON's null is the key left out: the
default stands and the field is not in model_fields_set, on the pages and in the strict JSON API alike."""

from __future__ import annotations

import pytest

from app.web.explore.params import ExploreParams, parse_explore_lenient
from app.web.fleet.params import StrictFleetParams, parse_fleet_lenient
from app.web.inputs.params import StrictPlannerParams
from tests.web.conftest import TestClient

BASE = {"model": "meta-llama/Llama-3.1-8B", "device": "h100"}


@pytest.mark.parametrize("blank", [None, "", "  "])
def test_a_blank_or_null_target_concurrency_is_not_given(blank: object) -> None:
    params = StrictPlannerParams.model_validate({**BASE, "target_concurrency": blank})
    assert params.target_concurrency == 1 and "target_concurrency" not in params.model_fields_set


def test_the_strict_api_reads_null_target_concurrency_as_absent(client: TestClient) -> None:
    absent = client.post("/api/estimate", json=BASE)
    null = client.post("/api/estimate", json={**BASE, "target_concurrency": None})
    assert absent.status_code == null.status_code == 200, null.text
    assert null.json()["inputs"] == absent.json()["inputs"]
    assert null.json()["kv_cache_bytes"] == absent.json()["kv_cache_bytes"]


@pytest.mark.parametrize("field", ["input_tokens", "output_tokens", "requests_per_s"])
def test_the_fleet_api_reads_a_null_load_field_as_absent(field: str) -> None:
    # was a 422 ("input should be a valid number") while the page and target_concurrency took it as not set
    params = StrictFleetParams.model_validate({**BASE, field: None})
    assert field not in params.model_fields_set
    assert getattr(params, field) == getattr(StrictFleetParams.model_validate(BASE), field)


def test_the_fleet_page_and_the_explorer_take_a_cleared_box_as_not_set() -> None:
    fleet, problems = parse_fleet_lenient([*BASE.items(), ("requests_per_s", " "), ("input_tokens", "")])
    assert problems == [] and {"requests_per_s", "input_tokens"}.isdisjoint(fleet.model_fields_set)
    explore, problems = parse_explore_lenient(
        [*BASE.items(), ("target_concurrency", ""), ("kv_cache_dtype", "")]
    )
    assert problems == [] and explore.kv_cache_dtype == ExploreParams().kv_cache_dtype
    assert {"target_concurrency", "kv_cache_dtype"}.isdisjoint(explore.model_fields_set)


def test_a_planner_page_box_other_than_the_target_stays_a_problem() -> None:
    # only the fields that declare it are "not set" when blank; a blank device is still reported
    from app.web.inputs.lenient import parse_lenient
    from app.web.inputs.params import PlannerParams

    _, problems = parse_lenient(PlannerParams, [("model", "m"), ("device", "")])
    assert [p.field for p in problems] == ["device"]


def _permalink(page: str) -> dict[str, str]:
    import html
    import re
    from urllib.parse import parse_qsl, urlsplit

    found = re.search(r'<a id="permalink" href="([^"]*)"', page)
    assert found
    return dict(parse_qsl(urlsplit(html.unescape(found.group(1))).query))


def test_a_typed_target_concurrency_of_1_stays_in_the_permalink(client: TestClient) -> None:
    # a typed N = 1 is a given N (the Speed section then models 1 client), a blank box is not: the permalink kept
    # neither (1 is the default), so the link reopened the page with the Speed section's own clients
    typed = client.get("/", params={**BASE, "target_concurrency": "1"}).text
    assert _permalink(typed).get("target_concurrency") == "1"
    blank = client.get("/", params={**BASE, "target_concurrency": ""}).text
    assert "target_concurrency" not in _permalink(blank)


def test_the_explorer_keeps_a_typed_target_and_leaves_out_an_untyped_one(client: TestClient) -> None:
    # the explorer's permalink and its link back to the planner carry target_concurrency=1 only when it was typed
    # (its merge of the resolved inputs, and planner_params, had marked every field given)
    typed = client.get("/explore", params={**BASE, "target_concurrency": "1"}).text
    assert _permalink(typed).get("target_concurrency") == "1"
    untyped = client.get("/explore", params=BASE).text
    assert "target_concurrency" not in _permalink(untyped)
    assert "target_concurrency=1" not in untyped
