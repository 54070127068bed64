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
PASTED = (
    "tests/data/configs/gemma-3-27b-it.config.json",
    "tests/data/configs/qwen2.5-7b-instruct-yarn.config.json",
    "tests/data/configs/llama-3.1-8b-instruct-w4a16.config.json",
)


def _digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:16]


def _case(slider: Any, loop: asyncio.AbstractEventLoop, app: Any, name: str, params: dict[str, str]) -> None:
    """One line: the digests of the case's six answers (``slider``: bench/slider_latency.py's requests)."""
    query = urllib.parse.urlencode({"v": "1", **params}).encode()
    out = []
    for label, path, get, post in (
        ("api", "/api/estimate", query, b""),
        ("yaml", "/api/estimate", query + b"&format=yaml", b""),
        ("page", "/", query, b""),
        ("fragment", "/", b"", query),  # as htmx posts the form
    ):
        status, body = slider.asgi_request(loop, app, path, post, query=get)
        out.append(f"{label}={status}:{_digest(body)}")
        if label == "fragment":
            found = slider.STATE.search(body.decode())
            state = urllib.parse.urlencode({"state": html.unescape(found.group(1))}) if found else ""
            for slot in ("/speed", "/recommend"):
                status, body = slider.asgi_request(loop, app, slot, state.encode())
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

    saved = list(sys.path)  # slider_latency puts this tree first: no later import of app may find it
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import slider_latency as slider

    sys.path[:] = saved

    web = create_app()
    warm_up(web.state.renderer)
    loop = asyncio.new_event_loop()
    models = [m.id for m in list_models()]
    for model in models[: args.models or None]:
        for plan, params in PLANS.items():
            _case(slider, loop, web, f"{model} {plan}", {"model": model, **params})
    for path in PASTED:
        text = json.dumps(json.loads((root / path).read_text(encoding="utf-8")))
        _case(slider, loop, web, f"{path} h100", {"config_json": text, **PLANS["h100"]})
    _case(
        slider,
        loop,
        web,
        "10,000-layer MoE h100",
        {"config_json": json.dumps(slider.MOE_10K), **PLANS["h100"]},
    )
    loop.close()


if __name__ == "__main__":
    main()
