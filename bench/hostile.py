"""Hostile inputs of each class from issues 19 and 27, one request at a time; prints status and server time.

    .venv/bin/python bench/hostile.py                        # in-process (the ASGI app, no network)
    .venv/bin/python bench/hostile.py --url http://127.0.0.1:8100   # a running server
    .venv/bin/python bench/hostile.py --regex     # every regex of app/: growth from n to 4n (issue 27)
    .venv/bin/python bench/hostile.py --server    # N1-N13 against a real 2-worker server (bench/hostile_server.py)

Every case must answer 2xx or a clear 4xx (never 5xx) within 2 s of server time, 4 s for
simulations. In-process the time is the app's own; against a server it is the loopback round trip
(the request is small, so that is server time too). In process it is CPU time (time.process_time:
the app's threads and the client's), so other work on the machine does not count. Exit status 1
when a case breaks the rule.
The inputs are of our own making, of the kinds the issue names.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
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
    out.extend(issue27_cases())
    return out


def issue27_cases() -> list[Case]:
    """Issue 27's inputs that need no hub (bench/hostile_server.py runs all of them against a server)."""
    out: list[Case] = []
    cookie = 'lang="' + "\\a" * 31_000 + '"'  # 62 KB, quoted: CPython's unquote is quadratic before 3.11.10
    for path in ("/healthz", "/", "/api/estimate"):
        out.append(
            Case("issue 27", f"N1 62 KB quoted cookie on {path}", "GET", path, headers={"cookie": cookie})
        )
    line = "vllm:a" + " " * 8000 + "b" + " " * 8000 + "c\n"
    out.append(
        _json(
            "issue 27", "N2 metrics, 300 lines of 2 x 8,000 spaces", "/api/diagnose", {"metrics": line * 300}
        )
    )
    out.append(Case("issue 27", "N2 the same as a text/plain log", "POST", "/api/diagnose", (line * 300).encode(),
                    {"content-type": "text/plain"}))  # fmt: skip
    moe = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048,
           "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "num_hidden_layers": 10_000,
           "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8,
           "vocab_size": 151936, "max_position_embeddings": 40960, "torch_dtype": "bfloat16",
           "mlp_only_layers": [], "padding": "x" * 58_000}  # fmt: skip
    body = {"config_json": json.dumps(moe), "device": "h100", "nodes": 1024, "devices_per_node": 1024,
            "max_model_len": 32768, "target_concurrency": 64, "enable_lora": True, "max_loras": 8}  # fmt: skip
    out.append(_json("issue 27", "N3 recommend 1,024 x 1,024 x 10,000-layer MoE", "/api/recommend", body,
                     simulation=True))  # fmt: skip
    fragment = {k: str(v) for k, v in body.items() if k not in ("nodes", "devices_per_node")}
    out.append(_get("issue 27", "N3 the recommend fragment (GET)", "/recommend", fragment,
                    headers={"HX-Request": "true"}, simulation=True))  # fmt: skip
    for path in ("/api/estimate", "/", "/explore", "/fleet"):
        out.append(_get("issue 27", f"N7 id ok/a\\n@main on {path}", path, {"model": "ok/a\n@main"}))
    out.append(
        Case(
            "issue 27",
            "N8 one header of 120,000 bytes",
            "GET",
            "/healthz",
            headers={"x-filler": "a" * 120_000},
        )
    )
    out.append(Case("issue 27", "N10 5 MB of y to /api/diagnose", "POST", "/api/diagnose", b"y\n" * 2_500_000,
                    {"content-type": "text/plain"}))  # fmt: skip
    out.append(_json("issue 27", "N11 7,500 unknown parameters (API)", "/api/estimate",
                     {f"unknown_{i}": 1 for i in range(7_500)}))  # fmt: skip
    out.append(
        _get("issue 27", "N11 5,000 unknown parameters (page)", "/", [(f"{i:x}", "") for i in range(5_000)])
    )
    brackets = ("[" + "[]," * 2_000_000 + "[]]").encode()  # 6.0 MB, 4 million values, where an object goes
    out.append(Case("issue 27", "N14 6 MB of JSON brackets to /api/estimate", "POST", "/api/estimate", brackets,
                    {"content-type": "application/json"}))  # fmt: skip
    return out


def regex_growth(n: int = 2_000) -> int:
    """Every compiled pattern of app/, on strings built from its own structure: each quantifier in turn
    repeated n and 4n times (the others at their minimum), then a character that makes the match fail.
    Linear time grows ~4x from n to 4n, quadratic ~16x; prints the worst ratio per pattern, returns how
    many exceed 8x."""
    import importlib
    import pkgutil
    import re._constants as C  # type: ignore[import-not-found]
    import re._parser as P  # type: ignore[import-not-found]

    import app
    from app.core import regex

    for module in pkgutil.walk_packages(app.__path__, "app."):
        importlib.import_module(module.name)
    repeats = {C.MAX_REPEAT, C.MIN_REPEAT}

    def one_char(av: Any) -> str:
        chars = regex._class(av)
        return next(
            (c for c in "a 7.,:-_x" if ord(c) in chars),
            chr(min(c for c in chars if c < 256) if chars else 97),
        )

    def build(items: Any, target: int, times: int, counter: list[int]) -> str:
        out = []
        for op, av in items:
            if op is C.LITERAL:
                out.append(chr(av))
            elif op is C.IN:
                out.append(one_char(av))
            elif op is C.ANY or op is C.NOT_LITERAL:
                out.append("a")
            elif op in repeats:
                mine = counter[0]
                counter[0] += 1
                body = build(av[2], target, times, counter)
                count = times if mine == target else av[0]
                out.append(body * (count if av[1] == C.MAXREPEAT else min(count, av[1])))
            elif op is C.SUBPATTERN:
                out.append(build(av[-1], target, times, counter))
            elif op is C.BRANCH:
                out.append(build(av[1][0], target, times, counter))
        return "".join(out)

    def seconds(pattern: Any, text: str) -> float:
        best = float("inf")
        for _ in range(5):  # the best of five: the machine is shared
            start = time.perf_counter()
            pattern.search(text)
            best = min(best, time.perf_counter() - start)
        return best

    bad = 0
    rows = []
    for compiled in regex.PATTERNS.values():
        pattern = regex.cached(compiled.pattern)
        parsed = list(P.parse(compiled.pattern))
        quantifiers = build(parsed, -1, 0, counter := [0]) and counter[0]
        worst = 0.0
        for target in range(counter[0] or quantifiers):
            small = build(parsed, target, n, [0]) + "\x00"
            large = build(parsed, target, 4 * n, [0]) + "\x00"
            base = seconds(pattern, small)
            if base > 0:
                worst = max(worst, seconds(pattern, large) / max(base, 1e-6))
        rows.append((worst, compiled.engine, compiled.pattern))
        bad += worst > 8.0
    rows.sort(reverse=True)
    for worst, engine, text in rows[:12]:
        print(f"{worst:6.1f}x  {engine:<3}  {text[:90]}")
    print(
        f"{len(rows)} patterns, {sum(1 for r in rows if r[1] == 're2')} on RE2; {bad} grew more than 8x from n={n:,} to {4 * n:,}"
    )
    return bad


def run_in_process() -> Callable[[Case], tuple[int, float, int, str]]:
    from fastapi.testclient import TestClient

    from app.web.app import create_app

    client = TestClient(create_app(), raise_server_exceptions=False, follow_redirects=False)
    client.get("/")  # warm up

    def send(case: Case) -> tuple[int, float, int, str]:
        # in process the time is the process's CPU (the app's threads and the client's): on a shared
        # machine at load 16 the wall time was 3-4x that, the other sessions' time, not the server's
        start = time.process_time()
        response = client.request(case.method, case.path, content=case.body, headers=case.headers)
        return (
            response.status_code,
            time.process_time() - start,
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
    parser.add_argument("--regex", action="store_true", help="only: every pattern's growth ratio (issue 27)")
    parser.add_argument(
        "--server", action="store_true", help="only: N1-N13 against a real server (bench/hostile_server.py)"
    )
    args = parser.parse_args()
    if args.regex:
        sys.exit(1 if regex_growth() else 0)
    if args.server:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import hostile_server

        sys.argv = [sys.argv[0]]
        sys.exit(hostile_server.main())
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
