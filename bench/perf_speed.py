"""Time of one performance estimate (it runs on every slider move, as the Speed fragment).

    .venv/bin/python bench/perf_speed.py [--requests 200]

Prints p50/p99 in ms for: performance() alone (the 12-point concurrency curve included) on an
Estimate already computed; estimate() + performance(); and the /speed fragment through the ASGI app
(parameters, resolution, estimate, performance, template; all middleware). Numbers, not assertions.
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
from app.core.estimate import estimate
from app.core.perf.predict import performance
from app.core.perf.schedule import Workload
from app.core.specs import ServeConfig
from app.web.app import create_app, warm_up

CASES = (
    ("nvidia/Llama-3.1-70B-Instruct-FP8", "nvidia-h200-141gb", ServeConfig(tensor_parallel_size=4)),
    ("MiniMaxAI/MiniMax-M2.5", "nvidia-b200", ServeConfig(tensor_parallel_size=4, data_parallel_size=2)),
    ("moonshotai/Kimi-K2.5", "nvidia-b200", ServeConfig(tensor_parallel_size=8, max_model_len=32768)),
)
QUERY = "v=1&model=MiniMaxAI/MiniMax-M2.5&device=nvidia-b200&tensor_parallel_size=4&concurrency=64&input_tokens=8192"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=200)
    n = parser.parse_args().requests
    for model_id, device_id, serve in CASES:
        model, device = find_model(model_id), find_device(device_id)
        est = estimate(model=model, device=device, serve=serve)
        workload = Workload(input_tokens=1024, output_tokens=1024, concurrency=64)
        alone, both = [], []
        for _ in range(n):
            t0 = time.perf_counter()
            performance(estimate=est, model=model, device=device, serve=serve, workload=workload)
            t1 = time.perf_counter()
            e = estimate(model=model, device=device, serve=serve)
            performance(estimate=e, model=model, device=device, serve=serve, workload=workload)
            t2 = time.perf_counter()
            alone.append(t1 - t0)
            both.append(t2 - t1)
        report(f"performance() {model_id}", alone)
        report(f"estimate() + performance() {model_id}", both)
    app = create_app()
    warm_up(app.state.renderer)
    loop = asyncio.new_event_loop()
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        status = _asgi_get(loop, app, "/speed", QUERY, [(b"hx-request", b"true")])
        samples.append(time.perf_counter() - t0)
        assert status == 200, status
    report("GET /speed fragment (ASGI, all middleware)", samples)


if __name__ == "__main__":
    main()
