"""Fit ROCm's hipGraph memory on the real ROCm start-up logs that print it, and score it leave-one-source-out.

    .venv/bin/python bench/calibrate_rocm_graphs.py

The CUDA figure (budget.CUDA_GRAPH_BASE_BYTES / CUDA_GRAPH_PER_LAYER_BYTES, bench/calibrate.py) was fitted on
NVIDIA logs at 51 sizes and scales everything with the number of sizes; on ROCm it says 1.83 GiB where a real
Gemma-3-27B start prints 1.02. The ROCm logs show a different shape: a fixed part on the first capture (ROCr maps
kernel scratch outside torch's allocator when a kernel first needs it - vLLM 0.34.0's own note beside
v1/worker/extensible_kv_cache.py KV_CACHE_MARGIN_FLOOR_BYTES) plus a part per captured graph per layer (the kernel
nodes each graph holds): ``bytes = base + per_layer_graph x layers x graphs``, graphs = the "Capturing CUDA graphs"
progress bars' totals (PIECEWISE and FULL each count). Two constants, no per-model term; each log is a source of
its own (three repositories), so leaving one out leaves two points for two constants.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core import budget as B  # noqa: E402
from app.core.specs import GIB  # noqa: E402

LOGS = ROOT / "tests" / "data" / "logs"
_TOOK = re.compile(r"Graph capturing finished in \d+ secs?, took ([0-9.]+) GiB")
_BAR = re.compile(r"Capturing CUDA graphs \([^)]*\): 100%[^\n]*? (\d+)/\1 ")


@dataclass(frozen=True)
class Point:
    source: str
    log: str
    layers: int  # num_hidden_layers of the model's config.json (cited per point)
    graphs: int = 0
    printed_gib: float = 0.0


# layers: Gemma-3-27B text_config.num_hidden_layers 62; Llama-3.1-8B 32; Ovis2-8B's LLM (Qwen2.5-7B) 28
POINTS = (
    Point(
        "search-index file 9297248278",
        "heldout-2026-12j/rocm_compose_gemma3_27b_0_11_0rc2_kv_109_86_205696_blocks_89994.log",
        62,
    ),
    Point(
        "unslothai/unsloth README_amd_radeon.md",
        "heldout-2026-12i/rocm_gfx1201_offline_llama_unsloth_merged_0_9_2rc2_kv_9_62_78800.log",
        32,
    ),
    Point(
        "Ovis2 RX 7800 XT compose thread",
        "heldout-2026-12g/rocm_rx7800xt_ovis2_gptq_compose_kv_0_79_14800_tokens.log",
        28,
    ),
)


def read(point: Point) -> Point:
    text = (LOGS / point.log).read_text(encoding="utf-8")
    took = _TOOK.search(text)
    assert took is not None, point.log
    graphs = sum(int(m.group(1)) for m in _BAR.finditer(text))
    return Point(point.source, point.log, point.layers, graphs, float(took.group(1)))


def fit(points: list[Point]) -> tuple[float, float]:
    """Least squares for (base GiB, GiB per layer-graph) on ``points`` (two or more)."""
    xs = [p.layers * p.graphs for p in points]
    ys = [p.printed_gib for p in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope


def cuda_figure(point: Point) -> float:
    """The CUDA form as the planner applied it on ROCm: one graph a size is half a fitted size (51 sizes)."""
    per_size = (B.CUDA_GRAPH_BASE_BYTES + B.CUDA_GRAPH_PER_LAYER_BYTES * point.layers) / GIB
    return B.ONE_GRAPH_A_SIZE_SHARE * point.graphs / B.cuda_graph_capture_sizes(max_num_seqs=512) * per_size


def main() -> int:
    points = [read(p) for p in POINTS]
    base, slope = fit(points)
    print(f"in-sample: ROCM_GRAPH_BASE={base:.4f} GiB ROCM_GRAPH_PER_LAYER_GRAPH={slope * 2**20:.2f} KiB")
    print("log | graphs x layers | printed | CUDA form | shipped | held out (fit on the other two)")
    for held in points:
        others = [p for p in points if p is not held]
        b, s = fit(others)
        shipped = (
            B.ROCM_GRAPH_BASE_BYTES + B.ROCM_GRAPH_PER_LAYER_GRAPH_BYTES * held.layers * held.graphs
        ) / GIB
        print(
            f"{held.log.split('/')[-1][:48]} | {held.graphs} x {held.layers} | {held.printed_gib:.2f} | "
            f"{cuda_figure(held):.2f} | {shipped:.2f} | {b + s * held.layers * held.graphs:.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
