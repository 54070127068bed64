"""Hostile inputs of each class from issue 19, one request at a time; prints status and server time.

    .venv/bin/python bench/hostile.py                        # in-process (the ASGI app, no network)
    .venv/bin/python bench/hostile.py --url http://127.0.0.1:8100   # a running server

Every case must answer 2xx or a clear 4xx (never 5xx) within 2 s of server time, 4 s for
simulations. In-process the time is the app's own; against a server it is the loopback round trip
(the request is small, so that is server time too). Exit status 1 when a case breaks the rule.
The inputs are of our own making, of the kinds the issue names.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

LONG_DIGITS = "9" * 400
HUGE_DIGITS = "7" * 5000
SUPERSCRIPT = "²"  # a digit to str.isdigit(), not to int()
ARABIC_INDIC = "٣٢"  # digits int() accepts: must be refused or bounded too
PLANNER_NUMBERS = (
    "max_model_len",
    "target_concurrency",
    "max_num_seqs",
    "max_num_batched_tokens",
    "block_size",
    "devices",
    "card_layers",
    "card_kv_heads",
    "card_head_size",
    "card_params",
    "card_window",
    "card_max_len",
    "card_hidden_size",
    "gpu_memory_utilization",
    "device_memory_gib",
)
EXPLORE_NUMBERS = (
    "num_requests",
    "concurrency",
    "arrival_rate",
    "seed",
    "shared_prefix_tokens",
    "request_tokens",
    "typical_lengths",
    "num_requests_sharing",
    "prefix_block_size",
    "mm_item_start_token",
)
BAD_NUMBERS = (
    LONG_DIGITS,
    HUGE_DIGITS,
    "inf",
    "-inf",
    "nan",
    "1e308",
    "1e999",
    SUPERSCRIPT,
    ARABIC_INDIC,
    "9" * 30 + "k",
)
SIMULATION_LIMIT_S = 4.0
REQUEST_LIMIT_S = 2.0


@dataclass
class Case:
    kind: str
    name: str
    method: str
    path: str
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    simulation: bool = False


def _get(kind: str, name: str, path: str, query: dict[str, str] | list[tuple[str, str]], **kw: Any) -> Case:
    return Case(kind, name, "GET", f"{path}?{urlencode(query)}", **kw)


def _json(kind: str, name: str, path: str, payload: Any, **kw: Any) -> Case:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return Case(kind, name, "POST", path, body, {"content-type": "application/json"}, **kw)


def _form(kind: str, name: str, path: str, fields: dict[str, str], **kw: Any) -> Case:
    return Case(
        kind, name, "POST", path, urlencode(fields).encode(),
        {"content-type": "application/x-www-form-urlencoded"}, **kw,
    )  # fmt: skip


def cases() -> list[Case]:
    out: list[Case] = []
    # 1. unbounded simulation
    attack = {"preset": "custom", "wl": "1:9999999:1", "num_requests": "20000", "max_num_batched_tokens": "1",
              "max_num_seqs": "1", "max_model_len": "10000000"}  # fmt: skip
    out.append(_get("simulation", "issue's 9,999,999-token GET", "/explore", attack, simulation=True))
    fits = {**attack, "wl": "1:400000:1", "max_model_len": "470000"}
    out.append(_get("simulation", "400k prompts x 20k at 1 token/step", "/explore", fits, simulation=True))
    thrash = {"preset": "long_output", "num_requests": "20000", "concurrency": "65536",
              "gpu_memory_utilization": "0.3", "max_num_seqs": "1024", "max_num_batched_tokens": "1024"}  # fmt: skip
    out.append(_get("simulation", "preemption thrash, small pool", "/explore", thrash, simulation=True))
    for preset in ("long_single", "mixed_long_short", "many_short", "shared_prefix", "long_output"):
        out.append(_get("simulation", f"preset {preset} at the cap", "/explore",
                        {"preset": preset, "num_requests": "20000"}, simulation=True))  # fmt: skip
    out.append(_json("simulation", "API: 400k prompts x 20k", "/api/workload",
                     {"classes": [{"share": 1, "prompt_tokens": 400000, "output_tokens": 1}], "num_requests": 20000,
                      "concurrency": 1, "max_num_batched_tokens": 1, "max_num_seqs": 1, "max_model_len": 470000},
                     simulation=True))  # fmt: skip
    # 2. parsers
    for size in (32_000, 60_000, 1_000_000, 5_000_000):
        out.append(_json("json depth", f"escaped quotes, {size:,} B", "/api/estimate",
                         b'["' + b'\\"' * (size // 2) + b'"]'))  # fmt: skip
        out.append(_json("json depth", f"unterminated escapes, {size:,} B", "/api/estimate",
                         b'"' + b'\\"' * (size // 2)))  # fmt: skip
    out.append(_json("json depth", "quotes only, 5 MB", "/api/estimate", b'"' * 5_000_000))
    out.append(_json("json depth", "deep, 100k", "/api/estimate", b"[" * 100_000 + b"]" * 100_000))
    # 4. numbers of any length on every surface
    for name in PLANNER_NUMBERS:
        for bad in BAD_NUMBERS:
            out.append(_get("numbers", f"/ {name}={bad[:12]}", "/", {name: bad}))
            out.append(_get("numbers", f"/api/estimate {name}={bad[:12]}", "/api/estimate", {name: bad}))
    for name in EXPLORE_NUMBERS:
        for bad in BAD_NUMBERS:
            out.append(_get("numbers", f"/explore {name}={bad[:12]}", "/explore", {name: bad}))
    for bad in ("inf:100:100", "1e308:100:100;1e308:50:50", "nan:1:1", f"1:{LONG_DIGITS}:1", f"1:1-{LONG_DIGITS}:1",
                f"1:100~{LONG_DIGITS}~200:1", "1:100~1e308~200:1", f"0.5:{SUPERSCRIPT}:1", f"1:{ARABIC_INDIC}:1",
                f"1:100:100:{LONG_DIGITS}", "1e-320:1:1"):  # fmt: skip
        out.append(_get("numbers", f"/explore wl={bad[:24]}", "/explore", {"preset": "custom", "wl": bad}))
        out.append(
            _get("numbers", f"/api/blocks typical={bad[:12]}", "/api/blocks", {"typical_lengths": bad})
        )
    for share in (1e308, float("inf")):
        payload = {"classes": [{"share": share, "prompt_tokens": 10, "output_tokens": 10}] * 2, "num_requests": 10,
                   "concurrency": 1}  # fmt: skip
        body = json.dumps(payload).encode()  # Infinity is accepted by Python's json, so send it raw
        out.append(_json("numbers", f"/api/workload share={share}", "/api/workload", body))
    out.append(_json("numbers", "/api/workload 400-digit ints", "/api/workload",
                     f'{{"preset": "many_short", "num_requests": {LONG_DIGITS}, "max_model_len": {LONG_DIGITS}}}'.encode()))  # fmt: skip
    out.append(_json("numbers", "/api/estimate 5000-digit int", "/api/estimate",
                     f'{{"max_model_len": {HUGE_DIGITS}}}'.encode()))  # fmt: skip
    for bad in (SUPERSCRIPT, LONG_DIGITS, ARABIC_INDIC, "1e308", "inf"):
        out.append(_form("numbers", f"/doctor target_concurrency={bad[:12]}", "/doctor",
                         {"log": "INFO ... GPU KV cache size: 1,000 tokens", "target_concurrency": bad}))  # fmt: skip
    for flag in ("--max-model-len", "--max-num-seqs", "--max-num-batched-tokens", "--block-size",
                 "--tensor-parallel-size", "--gpu-memory-utilization", "--pipeline-parallel-size"):  # fmt: skip
        for bad in (LONG_DIGITS, "inf", "nan", "1e308", SUPERSCRIPT, ARABIC_INDIC, "9" * 30 + "K"):
            command = f"vllm serve meta-llama/Llama-3.1-8B {flag} {bad}"
            out.append(
                _form("numbers", f"/command {flag} {bad[:12]}", "/command", {"command": command, "state": ""})
            )
    # 5. protocol
    out.append(Case("protocol", "redirect /explore/ with Host evil.example", "GET", "/explore/",
                    headers={"host": "evil.example"}))  # fmt: skip
    out.append(Case("protocol", "malformed multipart /doctor", "POST", "/doctor", b"--x\r\nbroken",
                    {"content-type": "multipart/form-data; boundary=x"}))  # fmt: skip
    big_config = json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
                             "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
                             "vocab_size": 128256, "max_position_embeddings": 131072, "torch_dtype": "bfloat16",
                             "padding": "x" * 60_000})  # fmt: skip
    out.append(_form("protocol", "60 KB config.json by POST /", "/", {"config_json": big_config}))
    return out


def run_in_process() -> Callable[[Case], tuple[int, float, int, str]]:
    from fastapi.testclient import TestClient

    from app.web.app import create_app

    client = TestClient(create_app(), raise_server_exceptions=False, follow_redirects=False)
    client.get("/")  # warm up

    def send(case: Case) -> tuple[int, float, int, str]:
        start = time.perf_counter()
        response = client.request(case.method, case.path, content=case.body, headers=case.headers)
        return (
            response.status_code,
            time.perf_counter() - start,
            len(response.content),
            response.headers.get("location", ""),
        )

    return send


def run_over_http(url: str) -> Callable[[Case], tuple[int, float, int, str]]:
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)

    def send(case: Case) -> tuple[int, float, int, str]:
        conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=60)
        headers = {"connection": "close", **case.headers}
        start = time.perf_counter()
        if "host" in headers:
            conn.putrequest(case.method, parts.path.rstrip("/") + case.path, skip_host=True)
            for key, value in headers.items():
                conn.putheader(key, value)
            conn.endheaders(case.body)
        else:
            conn.request(case.method, parts.path.rstrip("/") + case.path, body=case.body, headers=headers)
        response = conn.getresponse()
        data = response.read()
        elapsed = time.perf_counter() - start
        conn.close()
        return response.status, elapsed, len(data), response.getheader("location") or ""

    return send


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running server (default: the app in process)")
    parser.add_argument("--only", default="", help="run the cases whose kind contains this")
    parser.add_argument(
        "--all", action="store_true", help="print every case, not only the slowest and the bad"
    )
    args = parser.parse_args()
    send = run_over_http(args.url) if args.url else run_in_process()
    bad = 0
    worst: dict[str, float] = {}
    for case in cases():
        if args.only and args.only not in case.kind:
            continue
        status, seconds, size, location = send(case)
        limit = SIMULATION_LIMIT_S if case.simulation else REQUEST_LIMIT_S
        problem = []
        if status >= 500:
            problem.append("5xx")
        if seconds > limit:
            problem.append(f"over {limit:g} s")
        if location and (location.startswith("//") or "://" in location):
            problem.append("absolute redirect")
        if case.path.startswith("/doctor") and case.method == "POST" and status == 400:
            problem.append("JSON 400 on an HTML route")
        worst[case.kind] = max(worst.get(case.kind, 0.0), seconds)
        if problem or args.all or seconds > 0.5:
            flag = "BAD " + ", ".join(problem) if problem else "ok"
            print(
                f"{case.kind:<11} {status} {seconds * 1000:8.1f} ms {size:>9,} B  {case.name[:70]:<70} {flag} {location}"
            )
        bad += bool(problem)
    print()
    for kind, seconds in worst.items():
        print(f"slowest {kind:<11} {seconds * 1000:8.1f} ms")
    print(f"{bad} case(s) broke the rule")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
