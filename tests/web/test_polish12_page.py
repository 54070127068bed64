"""Things a walk of round 12's main found on the page (lane polish12), each in the state it was seen."""

from __future__ import annotations

import html
import re

from fastapi.testclient import TestClient

from app.web.app import create_app

APP = create_app()
SECONDARY = re.compile(r'<p id="speed-secondary">([^<]+)</p>')


def _secondary(client: TestClient, url: str) -> str:
    match = SECONDARY.search(client.get(url).text)
    assert match is not None
    return html.unescape(match.group(1))


def test_one_client_is_one_request_not_1_requests() -> None:
    # /speed with one client said "1 requests run at once in the replica": a closed loop of 1 client keeps
    # exactly one request in flight (Performance.running_requests = min(clients, max_num_seqs, KV fit) = 1).
    one = "/speed?v=1&model=meta-llama%2FLlama-3.1-8B&devices=1&max_model_len=8192&concurrency=1"
    line = _secondary(TestClient(APP), one)
    assert "1 request runs at once in the replica (limited by the number of clients)." in line
    assert "1 requests" not in line
    # DP 2 with 2 clients: one per data-parallel rank
    dp2 = "/speed?v=1&model=Qwen%2FQwen3-30B-A3B&devices=2&max_model_len=32768&data_parallel_size=2&concurrency=2"
    assert "1 request runs at once per data-parallel rank" in _secondary(TestClient(APP), dp2)
    # Chinese has no plural: the singular sentence reads as the plural one did
    zh = _secondary(TestClient(APP, cookies={"lang": "zh"}), one)
    assert "该副本同时运行 1 个请求" in zh and "request" not in zh
    # and more than one keeps the plural
    many = _secondary(TestClient(APP), one.replace("concurrency=1", "concurrency=4"))
    assert "4 requests run at once in the replica" in many


TARGET_BOX = re.compile(r'<input id="f-target"[^>]*>')
CLIENTS_BOX = re.compile(r'<input id="f-conc"[^>]*>')


def _box(pattern: re.Pattern[str], page: str) -> str:
    match = pattern.search(page)
    assert match is not None
    return match.group(0)


def test_the_target_n_box_is_a_placeholder_until_typed() -> None:
    # The default page showed value="1" in the target-concurrency box, as if typed, while the Speed section
    # modelled its own 16 clients (speed_clients: a target N only when given). Worse, the form posts the
    # boxes it shows, so the first edit sent target_concurrency=1 and the Speed section dropped to 1 client.
    # The box is now blank with "1" as its placeholder (the capacity check's N when none is given); a
    # blank box is not a given N, so the Speed section keeps its 16 clients until N is typed.
    client = TestClient(APP)
    page = client.get("/?v=1").text
    target = _box(TARGET_BOX, page)
    assert 'value=""' in target and 'placeholder="1"' in target
    assert 'placeholder="16"' in _box(CLIENTS_BOX, page)
    # the form posted as shown: blank N is accepted (was a 422) and the Speed section still runs 16
    posted = client.post("/", data={"v": "1", "target_concurrency": ""})
    assert posted.status_code == 200
    assert 'placeholder="16"' in _box(CLIENTS_BOX, posted.text)
    assert 'placeholder="1"' in _box(TARGET_BOX, posted.text)
    # a typed N shows as typed, and the Speed section models it (the one-N rule)
    typed = client.post("/", data={"v": "1", "target_concurrency": "4"}).text
    assert 'value="4"' in _box(TARGET_BOX, typed) and 'placeholder="4"' in _box(CLIENTS_BOX, typed)
    # a typed 1 is a given N: the Speed section models that 1 client
    one = client.post("/", data={"v": "1", "target_concurrency": "1"}).text
    assert 'value="1"' in _box(TARGET_BOX, one) and 'placeholder="1"' in _box(CLIENTS_BOX, one)


PHONE_LINE = re.compile(r'<a id="phone-summary" class="phone-summary verdict-(\w+)"[^>]*>(.*?)</a>', re.S)


def _phone_line(page: str) -> tuple[str, str]:
    match = PHONE_LINE.search(page)
    assert match is not None
    return match.group(1), " ".join(re.sub(r"<[^>]+>", " ", html.unescape(match.group(2))).split())


def test_the_explorer_says_its_answer_in_one_phone_line() -> None:
    # /explore had no one-line answer for a phone (the planner's and /fleet's _partials/phone_line.html).
    # The default workload (Llama-3.1-8B, H100) runs into the KV pool: the page's #w-binding-limit data-limit
    # "kv_pool" and #w-peak-kv "100.0%" are what the line repeats.
    page = TestClient(APP).get("/explore").text
    assert 'data-limit="kv_pool"' in page and '<dd id="w-peak-kv">100.0%</dd>' in page
    assert _phone_line(page) == ("warn", "Binding limit: the KV pool Peak KV usage 100.0% Result ↓")
    # max_model_len 4,000,000 leaves the block and prefix cards but stops the simulator (test_explore.py)
    tone, line = _phone_line(TestClient(APP).get("/explore?max_model_len=4000000").text)
    assert (tone, line) == ("bad", "The workload simulator cannot use these inputs max_model_len Result ↓")
    # an input that stops the page, in Chinese; the htmx fragment carries the line out of band
    zh = TestClient(APP, cookies={"lang": "zh"})
    fragment = zh.get("/explore?max_model_len=lots", headers={"HX-Request": "true"}).text
    assert 'hx-swap-oob="true"' in PHONE_LINE.search(fragment).group(0)  # type: ignore[union-attr]
    assert _phone_line(fragment) == ("bad", "未作任何计算：这些输入无法使用 max_model_len 结果 ↓")


def test_each_fleet_row_names_its_option_in_its_first_column() -> None:
    # /fleet's rows of one layout (TP 2) told apart only by the Weights and KV dtype columns, the 11th and
    # 12th, off a phone's screen. The option column now says all three; the e2e test checks the screen.
    fleet = (
        "/fleet?v=1&model=meta-llama%2FLlama-3.1-70B-Instruct&max_model_len=32768&input_tokens=2000"
        "&output_tokens=500&requests_per_s=30&slo_ttft_ms=1500&slo_tpot_ms=40&price_per_device_hour=3"
        "&devices_per_node=8"
    )
    for client, first in (
        (TestClient(APP), r"TP \d+ weights \S+ · KV \S+"),
        (TestClient(APP, cookies={"lang": "zh"}), r"TP \d+ 权重 \S+ · KV \S+"),
    ):
        page = html.unescape(client.get(fleet).text)
        options = [
            " ".join(re.sub(r"<[^>]+>", " ", o).split())
            for o in re.findall(r'<td class="cell-option">(.*?)</td>', page, re.S)
        ]
        # every row says its layout, weights and KV dtype (the ranking is the cost model's, not pinned here)
        assert all(re.fullmatch(first, o) for o in options), options[:3]
        layouts = [o.split(" ")[1] for o in options]
        # some layout repeats: only weights / KV dtype tell those rows apart
        assert len(set(layouts)) < len(layouts)
        assert len(options) >= 7 and len(set(options)) == len(options)
        assert '<th scope="col">KV dtype</th>' not in page  # folded into the option column, not shown twice
