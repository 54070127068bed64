"""Speed of the workload simulator: median of 5 runs for 1k / 10k / 100k requests on two presets.

    .venv/bin/python bench/workload.py [--repeats 5] [--sizes 1000,10000,100000]

The engine is a fixed reference (a 20,000-block pool of 16-token blocks, 256 sequences, 8192-token
step budget) so the numbers stay comparable between commits.
"""

from __future__ import annotations

import argparse
import statistics
import time

from app.core.workload import WORKLOAD_PRESETS, EngineParams, WorkloadResult, simulate

BENCH_ENGINE = EngineParams(
    num_gpu_blocks=20_000,
    block_size=16,
    max_num_seqs=256,
    max_model_len=32_768,
    max_num_batched_tokens=8192,
)
BENCH_PRESETS = ("many_short", "mixed_long_short")


def _time_one(preset: str, num_requests: int, repeats: int) -> tuple[float, WorkloadResult]:
    spec = WORKLOAD_PRESETS[preset].spec.model_copy(update={"num_requests": num_requests})
    timings: list[float] = []
    for _ in range(max(repeats, 1)):
        start = time.perf_counter()
        result = simulate(workload=spec, engine=BENCH_ENGINE)
        timings.append(time.perf_counter() - start)
    return statistics.median(timings), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", default="1000,10000,100000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    header = f"{'preset':<18} {'requests':>9} {'median ms':>10} {'steps':>8} {'preempt':>8} {'binding':>13}"
    print(header)
    print("-" * len(header))
    for preset in BENCH_PRESETS:
        for size in sizes:
            seconds, result = _time_one(preset, size, args.repeats)
            print(
                f"{preset:<18} {size:>9,} {seconds * 1000:>10.1f} {result.steps:>8,} "
                f"{result.preemptions:>8,} {result.binding_limit:>13}"
            )


if __name__ == "__main__":
    main()
