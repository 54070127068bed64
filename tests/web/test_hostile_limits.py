"""Issue 27's limits, functionally (status codes, what is echoed, what is parsed); bench/hostile.py times them.

- headers: a request line + headers over 64 KiB is a 431; a Cookie over 4 KiB is dropped before any
  cookie parser sees it (CPython's is quadratic before 3.11.10 / 3.12.6);
- echoes: a 422 lists at most 8 errors then how many more; the language links carry at most 64 pairs;
- work budgets: past a request's CPU budget the answer is a 422 naming the field and what to shrink.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlencode

import pytest

from app.core import deadline
from app.core.jsontext import MAX_JSON_VALUES, json_values
from app.web import security
from app.web.i18n import SWITCH_MAX_PAIRS
from app.web.security import MAX_COOKIE_BYTES, MAX_HEADER_BYTES, WorkBudget
from app.web.validation import ECHO_MAX_ERRORS
from tests.web.conftest import LLAMA_31_8B_CONFIG, TestClient


@pytest.fixture(scope="module")
def safe_client() -> Iterator[TestClient]:
    """Server exceptions become the 500 a browser would see (so a 5xx fails an assertion, not the run)."""
    from app.web.app import create_app

    yield TestClient(create_app(), raise_server_exceptions=False)


ESTIMATE = {"model": "meta-llama/Llama-3.1-8B", "device": "h100", "max_model_len": "8192"}


def test_headers_over_64_kib_are_a_431(safe_client: TestClient) -> None:
    # 120,000 bytes in one header: h11's own limit counts only what is still buffered, so it passed
    response = safe_client.get("/healthz", headers={"x-filler": "a" * 120_000})
    assert response.status_code == 431
    assert "the limit is 65,536 bytes (64 KiB)" in response.text
    api = safe_client.get("/api/estimate", headers={"x-filler": "a" * MAX_HEADER_BYTES})
    assert api.status_code == 431 and api.json()["detail"][0]["loc"] == ["header"]
    # under the cap: served (request line + this header + the client's own ~150 bytes)
    assert safe_client.get("/healthz", headers={"x-filler": "a" * 60_000}).status_code == 200


def test_a_cookie_over_4_kib_is_dropped_before_parsing(safe_client: TestClient) -> None:
    small = safe_client.get("/", headers={"cookie": "lang=zh"})
    assert small.headers["content-language"] == "zh-CN"  # a real cookie is read
    # the same cookie after 4 KiB of quoted backslash pairs (N1's shape): ignored, the page is English
    quoted = 'pad="' + "\\a" * (MAX_COOKIE_BYTES // 2) + '"; lang=zh'
    assert len(quoted) > MAX_COOKIE_BYTES
    big = safe_client.get("/", headers={"cookie": quoted})
    assert big.status_code == 200 and big.headers["content-language"] == "en"
    assert safe_client.get("/healthz", headers={"cookie": 'lang="' + "\\a" * 31_000 + '"'}).status_code == 200


def test_a_422_lists_a_few_unknown_parameters_and_counts_the_rest(safe_client: TestClient) -> None:
    body = {**ESTIMATE, **{f"unknown_{i}": 1 for i in range(7_500)}}
    response = safe_client.post("/api/estimate", json=body)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert len(detail) == ECHO_MAX_ERRORS + 1 == 9
    assert detail[-1]["msg"] == "and 7,492 more unknown parameters (not listed)"  # 7,500 - 8 listed
    assert detail[-1]["ctx"] == {"more": 7_492}
    assert len(response.content) < 2_000  # was 749 KB
    query = urlencode([*ESTIMATE.items(), *((f"u{i:x}", "") for i in range(5_000))])
    response = safe_client.get(f"/api/estimate?{query}")
    assert response.status_code == 422 and response.json()["detail"][-1]["ctx"] == {"more": 4_992}


def test_a_422_with_few_errors_lists_them_all(safe_client: TestClient) -> None:
    response = safe_client.post("/api/estimate", json={**ESTIMATE, "a": 1, "b": 2})
    assert [e["loc"][-1] for e in response.json()["detail"]] == ["a", "b"]


def test_the_language_links_echo_at_most_64_query_pairs(safe_client: TestClient) -> None:
    query = urlencode([(f"{i:x}", "") for i in range(7_500)])
    page = safe_client.get(f"/doctor?{query}").text
    # every echoed pair is "&amp;KEY=" in each of the two links; key "3f" (63) is the 64th, "40" the 65th
    assert "&amp;3f=" in page and "&amp;40=&amp;" not in page and "?40=" not in page
    assert SWITCH_MAX_PAIRS == 64
    assert len(page) < 20_000  # was 149 KB


def _spent(monkeypatch: pytest.MonkeyPatch, path: str, field: str) -> None:
    """A budget already spent at the first check: -1 s (deterministic, no clock in the assertion)."""
    monkeypatch.setitem(security.WORK_BUDGETS, path, WorkBudget(-1.0, field, security._LAYERS_ADVICE))


def test_past_its_budget_the_recommender_answers_a_422_naming_what_to_shrink(
    safe_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    _spent(monkeypatch, "/api/recommend", "nodes")
    body = {**ESTIMATE, "nodes": 1024, "devices_per_node": 1024}
    response = safe_client.post("/api/recommend", json=body)
    assert response.status_code == 422
    (problem,) = response.json()["detail"]
    assert problem["loc"] == ["body", "nodes"]
    assert problem["msg"].startswith("this needs more than -1 s of computing, the limit for one request: ")
    assert "fewer layers" in problem["msg"]


@pytest.mark.parametrize("path", ["/", "/fleet", "/explore"])
def test_past_its_budget_a_page_shows_the_problem_inline(
    safe_client: TestClient, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    _spent(monkeypatch, path, "config_json")
    form: dict[str, Any] = {"config_json": json.dumps(LLAMA_31_8B_CONFIG), "device": "h100"}
    response = safe_client.post(path, data=form, headers={"HX-Request": "true"})
    assert response.status_code == 422
    assert "this needs more than -1 s of computing" in response.text


def test_without_a_budget_the_core_is_not_limited() -> None:
    deadline.check()  # the CLI and the core's own tests: no budget open, nothing raised
    with (
        deadline.cpu_budget(seconds=-1.0, field="nodes", advice="fewer nodes"),
        pytest.raises(deadline.WorkBudgetError, match="fewer nodes"),
    ):
        deadline.check()
    deadline.check()  # closed again


def test_pipeline_sizes_are_powers_of_two_then_the_largest() -> None:
    from app.core.catalog import find_model
    from app.core.recommend.engine import Context
    from app.core.recommend.parallel import pp_candidates
    from app.core.specs import ServeConfig

    model = find_model("meta-llama/Llama-3.1-8B")  # 32 layers

    def sizes(nodes: int) -> list[int]:
        engine: Any = SimpleNamespace(model=model)  # pp_candidates reads only the model of the engine
        ctx = Context(engine, ServeConfig(), 8, nodes, True, "throughput")
        return [c.pipeline_parallel_size for c in pp_candidates(ctx)]

    assert sizes(1024) == [2, 4, 8, 16, 32]  # the 32 layers bound PP: 5 sizes, not 31
    assert sizes(3) == [2, 3]  # the largest that fits is always among them
    assert sizes(1) == []


def test_a_large_bodys_json_check_runs_off_the_event_loop(
    safe_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The depth count of a JSON body is linear but not free: 6 MiB of ``[]`` is ~6 million steps, ~1.4 s
    of CPU, which on the event loop held every request of the worker (round 5). A body over
    LARGE_REQUEST_BYTES (32 KiB) is checked once admitted, in the thread pool, and so is one over
    INLINE_CHECK_BYTES (4 KiB: a 32 KiB one cost up to 3.7 ms of the loop); a small one where it is read."""
    where: list[bool] = []  # True: checked on the event loop's thread
    real = security._body_problem

    def spied(body: bytes, content_type: str) -> str | None:
        try:
            asyncio.get_running_loop()
            where.append(True)
        except RuntimeError:
            where.append(False)
        return real(body, content_type)

    monkeypatch.setattr(security, "_body_problem", spied)
    deep = "[" * 65 + "]" * 65  # one level past MAX_JSON_DEPTH (64)
    large = ('{"pad": "' + "x" * (security.LARGE_REQUEST_BYTES + 1) + '", "a": ' + deep + "}").encode()
    response = safe_client.post("/api/estimate", content=large, headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert "nested deeper than 64 levels" in response.text
    medium = ('{"pad": "' + "x" * (security.INLINE_CHECK_BYTES + 1) + '", "a": ' + deep + "}").encode()
    assert len(medium) < security.LARGE_REQUEST_BYTES
    response = safe_client.post("/api/estimate", content=medium, headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert "nested deeper than 64 levels" in response.text
    small = ('{"a": ' + deep + "}").encode()
    response = safe_client.post("/api/estimate", content=small, headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert where == [False, False, True]  # the large and the medium body off the loop, the small one on it


def test_a_422_echoes_the_first_entries_of_a_long_input_and_counts_the_rest(safe_client: TestClient) -> None:
    """A JSON list sent where an object is expected was echoed whole: 2 million empty lists (6 MB) cost
    8.5 s of the event loop's CPU and a 6 MB answer (round 5, bench/hostile_server.py N14). The echo
    keeps the first ECHO_MAX_ITEMS (16) entries and says how many more: 100,000 - 16 = 99,984."""
    body = ("[" + "[]," * 99_999 + "[]]").encode()  # 100,000 empty lists, 300 KB
    response = safe_client.post("/api/estimate", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["input"] == [[]] * security.ECHO_MAX_ITEMS + ["… 99,984 more"]
    assert len(response.content) < 1_000  # was 300 KB: the whole input


def test_a_json_body_of_more_than_500000_values_is_refused_before_it_is_parsed(
    safe_client: TestClient,
) -> None:
    """FastAPI parses a JSON body on the event loop, one Python object per value: 6 MB of ``[],`` (4
    million values) was ~0.4 s of the loop per request. Counted first (outside strings), in linear time."""
    assert json_values('{"a": [1, 2], "b": "x,y"}') == 5  # { [ and two commas outside strings, + 1
    assert json_values('["a,b,[c", "{"]') == 3  # brackets and commas inside strings do not count
    body = ("[" + "1," * MAX_JSON_VALUES + "1]").encode()  # 500,002 values
    response = safe_client.post("/api/estimate", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert "holds more than 500,000 values" in response.text
    # a config pasted as a string counts once, whatever it holds
    pasted = json.dumps({**ESTIMATE, "config_json": json.dumps({"pad": [1] * (MAX_JSON_VALUES + 10)})})
    response = safe_client.post("/api/estimate", content=pasted, headers={"content-type": "application/json"})
    assert "holds more than" not in response.text


def test_past_its_budget_your_runs_are_named_not_the_config() -> None:
    # Before: 64 measured runs of 100,000 prompts spent /api/performance's budget inside the runs' own
    # estimates and simulations and the 422 named config_json (bench/data/hostile_cpu/before-d041b4f.txt).
    from app.web.inputs.params import PlannerParams
    from app.web.measured_runs import MeasuredRun, request_cluster

    base = PlannerParams.model_validate(ESTIMATE)
    run = MeasuredRun.model_validate({**ESTIMATE, "measured": {"mean_tpot_ms": 8.0}})
    paste = "Maximum request concurrency: 10\n============ Serving Benchmark Result ============\n"
    paste += "Successful requests: 100\nMean TPOT (ms): 72.74\n"
    for measured, box, field in (([run], "", "measured_runs"), ([], paste, "my_runs")):
        with (
            deadline.cpu_budget(seconds=-1.0, field="config_json", advice=security._LAYERS_ADVICE),
            pytest.raises(deadline.WorkBudgetError) as spent,
        ):
            request_cluster(measured, box, base, None)
        assert spent.value.field == field
        assert spent.value.message.endswith(
            "fewer runs, or runs of fewer prompts (num_prompts) or clients (max_concurrency)"
        )
    assert request_cluster([run], "", base, None) is not None  # no budget open: the same runs fit
