"""A digest of every answer the planner gives for the catalog's presets, to show a speed change kept them.

    .venv/bin/python bench/output_digest.py > after.txt
    (cd /path/to/main-checkout && /work/wt-x/.venv/bin/python /work/wt-x/bench/output_digest.py --root .) > before.txt
    diff before.txt after.txt   # no output: byte-identical

For each preset model x plan (one H100 at 0.33.0 defaults; eight H100 at TP 8, S 32,768, N 8; one MI300X
at 0.18.0, S 8,192) and a few pasted configs, the SHA-256 (first 16 hex digits) of the body of: GET
/api/estimate (JSON and YAML), GET / (the full page, every section inline), POST / as htmx (the
fragment), and the results' /speed and /recommend slots posting their #planner-state. Status codes too.
``--root`` runs the tree given (its app/ package) instead of this one; ``--models N`` the first N only.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import html
import json
import re
import sys
import urllib.parse
from pathlib import Path
from typing import Any

PLANS: dict[str, dict[str, str]] = {
    "h100": {"device": "nvidia-h100-sxm-80gb"},
    "h100x8": {
        "device": "nvidia-h100-sxm-80gb",
        "tensor_parallel_size": "8",
        "max_model_len": "32768",
        "target_concurrency": "8",
    },
    "mi300x-0.18": {"device": "amd-mi300x-192gb", "vllm_version": "0.18.0", "max_model_len": "8192"},
}
STATE = re.compile(r'id="planner-state" name="state" form="command-form" value="([^"]*)"')
PASTED = (
    "tests/data/configs/gemma-3-27b-it.config.json",
    "tests/data/configs/qwen2.5-7b-instruct-yarn.config.json",
    "tests/data/configs/llama-3.1-8b-instruct-w4a16.config.json",
)


def _call(
    loop: asyncio.AbstractEventLoop, app: Any, method: str, path: str, data: str, hx: bool
) -> tuple[int, bytes]:
    status, chunks = 0, []
    headers = [(b"host", b"127.0.0.1")]
    if hx:
        headers.append((b"hx-request", b"true"))
    if method == "POST":
        headers.append((b"content-type", b"application/x-www-form-urlencoded"))
    body = data.encode() if method == "POST" else b""

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    query = data.encode() if method == "GET" else b""
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": query, "root_path": "",
        "headers": headers, "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 18060),
    }  # fmt: skip
    loop.run_until_complete(app(scope, receive, send))
    return status, b"".join(chunks)


def _digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:16]


def _case(loop: asyncio.AbstractEventLoop, app: Any, name: str, params: dict[str, str]) -> None:
    query = urllib.parse.urlencode({"v": "1", **params})
    out = []
    for label, method, path, data, hx in (
        ("api", "GET", "/api/estimate", query, False),
        ("yaml", "GET", "/api/estimate", query + "&format=yaml", False),
        ("page", "GET", "/", query, False),
        ("fragment", "POST", "/", query, True),
    ):
        status, body = _call(loop, app, method, path, data, hx)
        out.append(f"{label}={status}:{_digest(body)}")
        if label == "fragment":
            found = STATE.search(body.decode())
            state = urllib.parse.urlencode({"state": html.unescape(found.group(1))}) if found else ""
            for slot in ("/speed", "/recommend"):
                status, body = _call(loop, app, "POST", slot, state, True)
                out.append(f"{slot[1:]}={status}:{_digest(body)}")
    print(name, " ".join(out), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--root", default=str(Path(__file__).resolve().parents[1]))
    parser.add_argument("--models", type=int, default=0)
    args = parser.parse_args()
    root = Path(args.root).resolve()
    sys.path.insert(0, str(root))
    import app

    assert Path(app.__file__).resolve().parent == root / "app", app.__file__
    from app.core.catalog import list_models
    from app.web.app import create_app, warm_up

    web = create_app()
    warm_up(web.state.renderer)
    loop = asyncio.new_event_loop()
    models = [m.id for m in list_models()]
    for model in models[: args.models or None]:
        for plan, params in PLANS.items():
            _case(loop, web, f"{model} {plan}", {"model": model, **params})
    for path in PASTED:
        text = json.dumps(json.loads((root / path).read_text(encoding="utf-8")))
        _case(loop, web, f"{path} h100", {"config_json": text, **PLANS["h100"]})
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from slider_latency import MOE_10K

    _case(loop, web, "10,000-layer MoE h100", {"config_json": json.dumps(MOE_10K), **PLANS["h100"]})
    loop.close()


if __name__ == "__main__":
    main()
