"""CPU time of one simulated `vllm bench serve` run (app.core.perf.bench.simulate_bench).

    .venv/bin/python bench/perf_bench_cpu.py

Prints process CPU time (other jobs on the shared cores do not count) for 100 / 1,000 / 10,000 prompts
at a few client counts and request rates, and a ShareGPT burst; the target is <= 100 ms for 1,000
prompts. Numbers, not assertions.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.perf.bench import simulate_bench
from app.core.perf.bench_args import BenchArgs
from app.core.perf.physics import step_physics
from app.core.perf.predict import fit_for
from app.core.specs import ServeConfig

CASES = (
    (
        "nvidia/Llama-3.1-70B-Instruct-FP8",
        "nvidia-h100-sxm-80gb",
        ServeConfig(tensor_parallel_size=8, max_model_len=4096),
    ),
    ("openai/gpt-oss-20b", "nvidia-h200-141gb", ServeConfig(max_model_len=4096)),
)
LOADS = (
    ("64 clients, rate inf", {"max_concurrency": 64}),
    ("256 clients, rate inf", {"max_concurrency": 256}),
    ("rate 20/s, no cap", {"request_rate": 20.0}),
    # vllm#23696's shape: ShareGPT's own requests (their lengths, not the 1,024 / 1,024 above), all at t = 0
    ("ShareGPT burst", {"dataset_name": "sharegpt"}),
)


def main() -> int:
    for model_id, device_id, serve in CASES:
        model, device = find_model(model_id), find_device(device_id)
        est = estimate(model=model, device=device, serve=serve, vllm_version="0.19.0")
        physics = step_physics(estimate=est, model=model, device=device, serve=serve)
        coefficients = fit_for(family="hopper", vllm_version="0.19.0")[1].bench_coefficients()
        print(
            f"{model_id} on {device_id} (TP {serve.tensor_parallel_size}), 1,024 in / 1,024 out, range ratio 0.8"
        )
        for label, load in LOADS:
            cells = []
            for prompts in (100, 1_000, 10_000):
                args = BenchArgs(
                    num_prompts=prompts,
                    random_input_len=1024,
                    random_output_len=1024,
                    random_range_ratio=0.8,
                    **load,  # type: ignore[arg-type]
                )
                start = time.process_time()
                point = simulate_bench(estimate=est, physics=physics, coefficients=coefficients, args=args)
                cpu_ms = (time.process_time() - start) * 1000
                tpot = point.values["mean_tpot_ms"]
                cells.append(f"{prompts:>6,} prompts {cpu_ms:7.1f} ms CPU (TPOT {tpot:.1f} ms)")
            print(f"  {label:<22} " + " | ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
