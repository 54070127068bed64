"""/fleet takes the `vllm bench serve` arguments /api/fleet takes, under the same names (lane page12 item 2).

Before (main at 169e6d0) the page had no box for them and ignored them when the URL gave them: a
permalink with `random_input_len=4000&random_output_len=300&request_rate=5` sized the fleet for the
defaults (20 requests/s of 2,048 + 256 tokens) while carrying the arguments along as hidden inputs, and
/api/fleet did the same with them as flat fields (only its `bench` object was read as the load).

Worked by hand: `vllm bench serve --dataset-name random` (vLLM 0.33.0, vllm/benchmarks/datasets.py,
RandomDataset.sample) draws input lengths uniformly in [len × (1 − ratio), len × (1 + ratio)]; at the
default --random-range-ratio 0 every request is exactly 4,000 + 300 tokens, so the mean request the fleet
sizes for is 4,000 + 300, at the benchmark's --request-rate 5 (app.core.fleet_load).
"""

from __future__ import annotations

import html
import re
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient

from app.web.app import create_app
from app.web.format import speed_number
from app.web.measured_runs import BENCH_FIELDS

APP = create_app()
MODEL = {"v": "1", "model": "meta-llama/Llama-3.1-8B-Instruct", "device": "nvidia-h100-sxm-80gb"}
BENCH = {"random_input_len": "4000", "random_output_len": "300", "request_rate": "5", "num_prompts": "200"}
SIZED = "Sized for 5 requests/s of 4,000 input + 300 output tokens."


def _text_of(page: str, element_id: str) -> str:
    match = re.search(rf'id="{element_id}"[^>]*>(.*?)</p>', page, re.S)
    assert match, element_id
    return html.unescape(re.sub(r"<[^>]+>", "", match.group(1))).strip()


def _form(page: str) -> str:
    return page[page.index('<form id="fleet-form"') : page.index("</form>")]


def test_the_form_has_every_benchmark_argument_under_its_name() -> None:
    form = _form(TestClient(APP).get("/fleet").text)
    for name in (*BENCH_FIELDS, "ignore_eos", "bench_serve"):
        assert re.search(rf'<(input|select)[^>]*name="{name}"', form), name
        assert not re.search(rf'type="hidden" name="{name}"', form), name


def test_the_page_sizes_for_the_benchmark_and_says_so() -> None:
    client = TestClient(APP)
    page = client.get("/fleet?" + urlencode({**MODEL, **BENCH}))
    assert page.status_code == 200
    assert _text_of(page.text, "fleet-workload") == (
        f"{SIZED} The workload of vllm bench serve --num-prompts 200 --request-rate 5 "
        "--random-input-len 4000 --random-output-len 300."
    )
    # the rate box is blank (the benchmark's rate is the load), its placeholder the rate searched
    assert re.search(r'id="g-rps"[^>]*value=""[^>]*placeholder="5"', page.text)
    # the same answer as the API's `bench` object
    api = client.post(
        "/api/fleet",
        json={
            "model": MODEL["model"],
            "device": MODEL["device"],
            "bench": {
                "random_input_len": 4000,
                "random_output_len": 300,
                "request_rate": 5,
                "num_prompts": 200,
            },
        },
    ).json()
    assert (api["input_tokens"], api["output_tokens"], api["inputs"]["requests_per_s"]) == (4000, 300, 5.0)
    best = api["best"]
    summary = _text_of(page.text, "fleet-best-summary")
    devices = f"{best['devices_total']} device" + ("s" if best["devices_total"] != 1 else "")
    assert summary.startswith(f"{best['replicas']} × TP {best['tensor_parallel_size']} = {devices},")
    assert f"Sized at its busiest within the SLO: {best['concurrency_per_replica']} clients," in summary
    at_load = api["best_at_load"]
    assert (
        f"At the load asked, {speed_number(at_load['requests_per_s_per_replica'])} requests/s a replica"
        in summary
    )


def test_the_api_flat_fields_are_the_same_load() -> None:
    client = TestClient(APP)
    flat = {"model": MODEL["model"], "random_input_len": 4000, "random_output_len": 300, "request_rate": 5}
    answer = client.post("/api/fleet", json=flat).json()
    assert (answer["input_tokens"], answer["output_tokens"], answer["inputs"]["requests_per_s"]) == (
        4000,
        300,
        5.0,
    )


def test_a_rate_typed_in_the_box_wins_and_the_note_says_whose() -> None:
    page = TestClient(APP).get("/fleet?" + urlencode({**MODEL, **BENCH, "requests_per_s": "7"}))
    assert _text_of(page.text, "fleet-workload").startswith("Sized for 7 requests/s of 4,000 input + 300")
    assert (
        "The load is your 7 requests/s of the benchmark&#39;s mean request (4,000 + 300 tokens" in page.text
    )


def test_max_concurrency_is_said_to_be_unused() -> None:
    page = TestClient(APP).get("/fleet?" + urlencode({**MODEL, **BENCH, "max_concurrency": "8"}))
    assert "Its --max-concurrency is not used: the search picks the clients per replica." in _text_of(
        page.text, "fleet-workload"
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("num_prompts", "0"),
        ("request_rate", "-1"),
        ("random_input_len", "400000"),
        ("dataset_name", "sonnet"),
    ],
)
def test_a_bad_argument_stops_the_search_naming_it_as_the_api_does(field: str, value: str) -> None:
    client = TestClient(APP)
    page = client.get("/fleet?" + urlencode({**MODEL, **BENCH, field: value}))
    assert page.status_code == 422
    verdict = page.text[page.text.index('id="verdict"') :]
    assert f"<code>{field}</code>" in verdict[: verdict.index("</div>")]
    assert 'id="fleet-best"' not in page.text
    api_bench = {k: v for k, v in {**BENCH, field: value}.items()}
    answer = client.post("/api/fleet", json={"model": MODEL["model"], "bench": api_bench})
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["loc"][-1] in (field, f"bench.{field}")


def test_the_permalink_round_trips_the_benchmark() -> None:
    client = TestClient(APP)
    form = {**MODEL, **BENCH, "ignore_eos": "true", "burstiness": "0.5", "requests_per_s": ""}
    posted = client.post("/fleet", data=form)
    link = html.unescape(re.search(r'id="permalink" href="([^"]+)"', posted.text).group(1))  # type: ignore[union-attr]
    for name, value in (*BENCH.items(), ("ignore_eos", "true"), ("burstiness", "0.5")):
        assert re.search(rf"[?&]{name}={re.escape(value)}(\.0)?(&|$)", link), (name, link)
    reopened = client.get(link)
    assert _text_of(reopened.text, "fleet-workload") == _text_of(posted.text, "fleet-workload")
    assert _text_of(reopened.text, "fleet-best-summary") == _text_of(posted.text, "fleet-best-summary")
    assert 'name="ignore_eos" value="true" checked' in _form(reopened.text)


def test_a_default_rate_is_not_posted_back_as_typed() -> None:
    # the form as first shown: the rate box was value="20" (the default), so ticking the benchmark and
    # submitting posted requests_per_s=20 as typed, and the fleet was sized for 20 requests/s while saying
    # "The workload of vllm bench serve --request-rate 5" (web review of round 12, reproduced with TestClient)
    client = TestClient(APP)
    first = client.get("/fleet?" + urlencode(MODEL)).text
    shown = re.search(r'id="g-rps"[^>]*value="([^"]*)"[^>]*placeholder="([^"]*)"', first)
    assert shown and shown.groups() == ("", "20")  # blank, the default 20/s as its placeholder
    posted = {**MODEL, "requests_per_s": shown.group(1), "bench_serve": "1", **BENCH}
    page = client.get("/fleet?" + urlencode(posted)).text
    assert _text_of(page, "fleet-workload").startswith(SIZED)
    # a rate the user types is theirs, at the default too, and the permalink keeps it
    typed = client.get("/fleet?" + urlencode({**MODEL, "requests_per_s": "20"})).text
    assert re.search(r'id="g-rps"[^>]*value="20"', typed)


def test_one_device_is_said_in_the_singular() -> None:
    # "1 × TP 1 = 1 devices" (Chromium, round 12): the summary is a Plural, so one device is "1 device" and two
    # or more "N devices"; Chinese has one form (台设备) for both
    client = TestClient(APP)
    query = {"model": "meta-llama/Llama-3.1-8B", "max_model_len": "4096", "requests_per_s": "0.2"}
    page = client.get("/fleet?" + urlencode(query)).text
    best = _text_of(page, "fleet-best")
    assert "1 × TP 1 = 1 device," in best, best
    zh = _text_of(client.get("/fleet?" + urlencode({**query, "lang": "zh"})).text, "fleet-best")
    assert "1 × TP 1 = 1 台设备" in zh, zh


def test_the_summary_says_at_which_load_its_latencies_are() -> None:
    # Llama-3.1-8B on one H100 at 0.1 requests/s of 2,048 + 256 tokens (round 13's page): the replica is sized at
    # its busiest point within the SLO (217 clients, 21.2 requests/s), and before this the summary gave that
    # point's TTFT and TPOT as "217 clients per replica, TTFT 424 ms", as if the replica had 217 clients. At
    # 0.1 requests/s it has one request at a time: alone a request takes TTFT + 255 x TPOT, about 1 s, so one
    # closed-loop client already sends ~1 request/s >= 0.1, and the latencies at the load are one client's
    client = TestClient(APP)
    query = {"model": "meta-llama/Llama-3.1-8B", "max_model_len": "4096", "requests_per_s": "0.1"}
    api = client.post("/api/fleet", json={**query, "max_model_len": 4096, "requests_per_s": 0.1}).json()
    best, at_load = api["best"], api["best_at_load"]
    assert best["replicas"] == 1 and best["concurrency_per_replica"] > 1
    assert (at_load["requests_per_s_per_replica"], at_load["concurrency"]) == (0.1, 1)
    one_request_s = (at_load["ttft_ms"]["expected"] + 255 * at_load["tpot_ms"]["expected"]) / 1000
    assert 1 / one_request_s >= 0.1
    assert at_load["ttft_ms"]["expected"] < best["ttft_ms"]["expected"]
    summary = _text_of(client.get("/fleet?" + urlencode(query)).text, "fleet-best-summary")
    ttft, tpot = speed_number(at_load["ttft_ms"]["expected"]), speed_number(at_load["tpot_ms"]["expected"])
    assert f"At the load asked, 0.10 requests/s a replica (1 client at a time): TTFT {ttft} ms (" in summary
    assert f"TPOT {tpot} ms (" in summary
    busiest = best["concurrency_per_replica"], speed_number(best["requests_per_s_per_replica"])
    assert (
        f"Sized at its busiest within the SLO: {busiest[0]} clients, {busiest[1]} requests/s a replica"
        in summary
    )
    assert "clients per replica" not in summary
    zh = _text_of(client.get("/fleet?" + urlencode({**query, "lang": "zh"})).text, "fleet-best-summary")
    assert "按所给负载，每副本 0.10 请求/秒（同时 1 个客户端）" in zh, zh
    assert f"规模按 SLO 内最繁忙的工作点确定：每副本 {busiest[0]} 个客户端、{busiest[1]} 请求/秒" in zh, zh


def test_the_summary_names_the_formats_the_search_chose() -> None:
    # Llama-3.1-8B (a bf16 checkpoint) on H100s, 2,048 + 256 tokens. At 20 requests/s the cheapest layout is one
    # TP 1 replica with fp8 weights (it takes 21.2 requests/s within the SLO; bf16 weights take 14.7, so two
    # replicas, twice the price), and the summary used to read "1 × TP 1 = 1 device, 2.50 per hour …" with nothing
    # saying the weights were fp8 (only the table's row did): its TPOT at low load, 3.88 ms, is below bf16's
    # bandwidth floor (16 GB ÷ 3.35 TB/s ≈ 4.8 ms a step). The summary names the row's formats.
    client = TestClient(APP)
    query = {"model": "meta-llama/Llama-3.1-8B", "max_model_len": "4096", "requests_per_s": "20"}
    api = client.post("/api/fleet", json={**query, "max_model_len": 4096, "requests_per_s": 20}).json()
    best = api["best"]
    assert (best["weight_format"], best["kv_cache_dtype"], best["replicas"]) == ("fp8", "auto", 1)
    summary = _text_of(client.get("/fleet?" + urlencode(query)).text, "fleet-best-summary")
    assert summary.startswith("1 × TP 1 = 1 device, weights fp8 · KV auto, "), summary
    zh = _text_of(client.get("/fleet?" + urlencode({**query, "lang": "zh"})).text, "fleet-best-summary")
    assert zh.startswith("1 × TP 1 = 1 台设备，权重 fp8 · KV auto，每小时"), zh


def test_at_the_same_price_the_checkpoints_own_formats_win() -> None:
    # The same model at 0.1 requests/s: one TP 1 replica carries it with bf16 or fp8 weights, fp8 or auto KV, all at
    # 2.50 per hour and all meeting the SLO on the expected figures (none with margin). The search used to break the
    # tie on TPOT at the busiest point and chose fp8 weights: a quantization that buys nothing the load asked for.
    # At the same price and margin the layout with the fewest accuracy costs wins: the checkpoint's own bf16, KV auto.
    client = TestClient(APP)
    query = {
        "model": "meta-llama/Llama-3.1-8B",
        "max_model_len": "4096",
        "requests_per_s": "0.1",
        "lang": "en",
    }
    api = client.post("/api/fleet", json={**query, "max_model_len": 4096, "requests_per_s": 0.1}).json()
    best = api["best"]
    assert (best["weight_format"], best["kv_cache_dtype"], best["devices_total"]) == ("bf16", "auto", 1)
    assert best["accuracy_costs"] == []
    summary = _text_of(client.get("/fleet?" + urlencode(query)).text, "fleet-best-summary")
    assert summary.startswith("1 × TP 1 = 1 device, weights bf16 · KV auto, 2.50 per hour"), summary
