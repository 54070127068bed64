"""Time of one fleet search (POST /api/fleet and the /fleet page run it once per request).

    .venv/bin/python bench/fleet_speed.py [--requests 10]

Prints p50/p99 in ms (process CPU time, so other engineers' jobs on the 2 shared cores do not count)
for plan_fleet() on a few model/device/limit cases — with how many layouts it tried, the bound
being app.core.fleet.MAX_LAYOUTS layouts x ESTIMATES_PER_LAYOUT estimates x CONCURRENCY_PROBES
performance points — (the first call, with the process's caches cold, printed apart) and for GET /fleet through the ASGI app (resolution, search, template, all
middleware). Numbers, not assertions; the target is well under 1 s of CPU a call.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from speed import _asgi_get, report

from app.core.catalog import find_device, find_model
from app.core.fleet import CONCURRENCY_PROBES, ESTIMATES_PER_LAYOUT, MAX_LAYOUTS, Limits, Target, plan_fleet
from app.core.specs import ServeConfig
from app.web.app import create_app, warm_up

TARGET = Target(
    input_tokens=2048,
    output_tokens=256,
    requests_per_s=20,
    slo_ttft_ms=2000,
    slo_tpot_ms=50,
    devices_available=512,
    price_per_device_hour=2.5,
)
CASES = (
    ("meta-llama/Llama-3.1-70B", "nvidia-h100-sxm-80gb", Limits()),
    ("meta-llama/Llama-3.1-8B", "nvidia-b200", Limits(devices_per_node=8)),  # the largest grid: 42 layouts
    ("moonshotai/Kimi-K2.5", "nvidia-b200", Limits(devices_per_node=8)),
    ("Qwen/Qwen3-235B-A22B-FP8", "nvidia-h200-141gb", Limits(devices_per_node=8)),
)
QUERY = "v=1&model=meta-llama/Llama-3.1-8B&device=nvidia-b200&max_model_len=8192&devices_per_node=8&devices_available=512"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=10)
    n = parser.parse_args().requests
    print(
        f"bound: {MAX_LAYOUTS} layouts x {ESTIMATES_PER_LAYOUT} estimates x {CONCURRENCY_PROBES} performance points"
    )
    for model_id, device_id, limits in CASES:
        model, device = find_model(model_id), find_device(device_id)
        samples = []
        tried = 0
        for _ in range(n):
            t0 = time.process_time()
            plan = plan_fleet(
                model=model,
                device=device,
                serve=ServeConfig(max_model_len=8192),
                vllm_version=None,
                target=TARGET,
                limits=limits,
            )
            samples.append(time.process_time() - t0)
            tried = plan.layouts_tried
        report(f"plan_fleet() {model_id} on {device_id} ({tried} layouts)", samples)
        print(f"  first call (cold caches): {samples[0] * 1000:.1f} ms")
    app = create_app()
    warm_up(app.state.renderer)
    loop = asyncio.new_event_loop()
    samples = []
    for _ in range(n):
        t0 = time.process_time()
        status = _asgi_get(loop, app, "/fleet", QUERY, [(b"host", b"127.0.0.1")])
        samples.append(time.process_time() - t0)
        assert status == 200, status
    report("GET /fleet page (ASGI, all middleware)", samples)


if __name__ == "__main__":
    main()
