"""What the recommendation's speed effects add to the /recommend panel (it reloads on every slider move).

    .venv/bin/python bench/recommend_speed.py [--requests 100]

Prints p50/p99 in ms, without the speed workload (the recommender as it was) and with it (each step's
performance() before -> after, the cheapest-layout comparison): recommend() alone for a few cases,
then the /recommend fragment through the ASGI app (parameters, resolution, the walk, the template; all
middleware). Each request is a new S* (a slider move: nothing left in any cache from the last one). Numbers,
not assertions.
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
from app.core.perf.schedule import Workload
from app.core.recommend import recommend
from app.core.specs import ServeConfig
from app.web.app import create_app, warm_up
from app.web.recommend import service as recommend_service

WORKLOAD = Workload(input_tokens=1024, output_tokens=1024, concurrency=16)  # the Speed section's default
# (model, device, start, S*, N*): TP 2 -> fp8 -> TP 4; fp8 then TP 8 then the prune pass; an MoE on B200
CASES = (
    ("meta-llama/Llama-3.1-70B", "nvidia-h100-sxm-80gb", ServeConfig(tensor_parallel_size=2), 8192, 64),
    ("meta-llama/Llama-3.1-70B", "nvidia-h100-sxm-80gb", ServeConfig(tensor_parallel_size=2), 32768, 32),
    ("Qwen/Qwen3-235B-A22B-FP8", "nvidia-b200", ServeConfig(tensor_parallel_size=2), 32768, 64),
)
QUERY = (
    "v=1&model=meta-llama/Llama-3.1-70B&device=nvidia-h100-sxm-80gb&tensor_parallel_size=2"
    "&max_model_len={length}&target_concurrency=64"
)
LENGTH_STEP = 64  # every request a new max_model_len: a slider move, nothing cached from the last one


def bench_core(n: int) -> None:
    """recommend() without and with the speed workload, interleaved (the machine's load hits both)."""
    variants = (("without speed", None), ("with speed", WORKLOAD))
    for model_id, device_id, serve, length, conc in CASES:
        model, device = find_model(model_id), find_device(device_id)
        samples: dict[str, list[float]] = {label: [] for label, _ in variants}
        for i in range(n):
            for run, (label, workload) in enumerate(variants):
                s_star = length + LENGTH_STEP * (2 * i + run)
                t0 = time.perf_counter()
                recommend(
                    model=model,
                    device=device,
                    serve=serve.model_copy(update={"max_model_len": s_star}),
                    vllm_version=None,
                    target_max_model_len=s_star,
                    target_concurrency=conc,
                    workload=workload,
                )
                samples[label].append(time.perf_counter() - t0)
        for label, taken in samples.items():
            report(f"recommend() {label}: {model_id} TP{serve.tensor_parallel_size} {length}x{conc}", taken)


def bench_fragment(n: int) -> None:
    """The panel as it was (no workload passed) and as it is, interleaved request by request."""
    app = create_app()
    warm_up(app.state.renderer)
    loop = asyncio.new_event_loop()
    headers = [(b"host", b"127.0.0.1"), (b"accept-encoding", b"gzip"), (b"hx-request", b"true")]
    with_speed = recommend_service.workload_of
    variants = (("without speed", lambda _params, **_: (None, None)), ("with speed", with_speed))
    samples: dict[str, list[float]] = {label: [] for label, _ in variants}
    try:
        for i in range(n):
            for run, (label, workload_of) in enumerate(variants):
                recommend_service.workload_of = workload_of  # type: ignore[assignment]
                query = QUERY.format(length=8192 + LENGTH_STEP * (2 * i + run))
                t0 = time.perf_counter()
                status = _asgi_get(loop, app, "/recommend", query, headers)
                samples[label].append(time.perf_counter() - t0)
                if status != 200:
                    raise SystemExit(f"/recommend answered {status}")
    finally:
        recommend_service.workload_of = with_speed
    for label, taken in samples.items():
        report(f"GET /recommend fragment {label} (ASGI, all middleware)", taken)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=100)
    n = parser.parse_args().requests
    bench_core(n)
    bench_fragment(n)


if __name__ == "__main__":
    main()
