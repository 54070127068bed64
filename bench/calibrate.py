"""Fit the constants of the measured-part models (activation peak, non-torch, CUDA graphs) on the real
start-up logs, and print them with their residuals. The printed constants are copied into
app/core/budget.py / app/core/versions.py by hand, with this script named as their source.

    .venv/bin/python bench/calibrate.py
"""

from __future__ import annotations

import itertools
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: bench.calibration

from app.core import budget as B
from app.core import graph_rules
from app.core.defaults import ResolvedFlags
from app.core.estimate import resolve, validate_parallel
from app.core.specs import DTYPE_BYTES, GIB
from app.core.versions import rules_for
from bench import calibration


@dataclass
class Point:
    id: str
    version: tuple[int, int, int]
    tokens: int
    width: int
    hidden: int
    act_bytes: int
    rows: int
    vocab: int
    last_stage: bool
    activation_gib: float | None
    non_torch_gib: float | None
    graph_gib: float | None
    layers_on_rank: int
    capture_share: float
    tp: int
    pp: int
    held_bytes: int  # physics terms with no free constant: MoE workspace + parked encoder outputs


def held_bytes(*, case: calibration.Case, tokens: int) -> int:
    """The activation-peak terms taken from vLLM's code with no constant to fit (app/core/budget.py)."""
    act = DTYPE_BYTES[B.serving_dtype(model=case.model, serve=case.serve)]
    moe = B.moe_workspace_bytes(
        model=case.model,
        tensor_parallel_size=case.serve.tensor_parallel_size,
        num_tokens=tokens,
        act_dtype_bytes=act,
    )
    enc = B.encoder_outputs_bytes(model=case.model, serve=case.serve, num_tokens=tokens, act_dtype_bytes=act)
    return moe + enc


def capture_share(*, case: calibration.Case, flags: ResolvedFlags) -> float:
    """The share of the default 51 sizes this start captured, counted by graph_rules.capture_sizes (the one place
    the sizes are decided: the release's grid, 0.11.0's step of 8, the 1,024 cap on 10.x from 0.30.0, -cc keys).
    E.g. a 0.11.0 start at 1,024 sequences captures 67 sizes: 67 / 51 = 1.314; a B200 at 0.30.0, 83 / 51."""
    rules = rules_for(case.vllm_version)
    sizes = graph_rules.capture_sizes(serve=case.serve, flags=flags, rules=rules, sm=case.device.sm)
    return len(sizes) / B.cuda_graph_capture_sizes(max_num_seqs=B.CUDA_GRAPH_MAX_CAPTURE)


def points() -> list[Point]:
    out = []
    for case in calibration.cases(require_version=True):
        rules = rules_for(case.vllm_version)
        validate_parallel(model=case.model, serve=case.serve, device=case.device, rules=rules)
        res, _, _ = resolve(model=case.model, device=case.device, serve=case.serve, rules=rules)
        rep = case.reported
        pp = case.serve.pipeline_parallel_size
        out.append(
            Point(
                id=case.id,
                version=rules.version_tuple,
                tokens=res.max_num_batched_tokens,
                width=(B.dense_mlp_width_per_rank if case.model.num_experts else B.mlp_width_per_rank)(
                    model=case.model, tensor_parallel_size=case.serve.tensor_parallel_size
                ),
                hidden=case.model.hidden_size,
                act_bytes=DTYPE_BYTES[B.serving_dtype(model=case.model, serve=case.serve)],
                rows=min(res.max_num_batched_tokens, res.max_num_seqs),
                vocab=case.model.vocab_size,
                last_stage=pp == 1,  # rank 0 prints the figures; it is the last stage only without PP
                activation_gib=rep.get("activation_peak_gib"),
                non_torch_gib=rep.get("non_torch_gib"),
                graph_gib=None if case.serve.enforce_eager else rep.get("cuda_graph_gib"),
                layers_on_rank=case.model.num_layers // pp,
                capture_share=capture_share(case=case, flags=res),
                tp=case.serve.tensor_parallel_size,
                pp=pp,
                held_bytes=held_bytes(case=case, tokens=res.max_num_batched_tokens),
            )
        )
    return out


def activation(p: Point, mlp: float, hid: float, copies: float, base: float) -> float:
    forward = p.tokens * p.act_bytes * (mlp * p.width + hid * p.hidden)
    sampler = p.rows * p.vocab * B.LOGIT_BYTES * copies if p.last_stage else 0.0
    return (max(forward, sampler) + p.held_bytes) / GIB + base


def fit_activation(data: list[Point], *, newer: bool) -> tuple[float, float, float, float, list[float]]:
    sel = [p for p in data if p.activation_gib is not None and ((p.version >= (0, 17, 0)) == newer)]
    best: tuple[float, float, float, float, list[float]] | None = None
    best_err = float("inf")
    grid_mlp = [x / 4 for x in range(8, 33)]
    grid_hid = [float(x) for x in range(0, 13)]
    grid_copies = [x / 20 for x in range(60, 220)] if not newer else [x / 20 for x in range(60, 100)]
    grid_base = [x / 100 for x in range(0, 31, 5)]
    for mlp, hid, copies, base in itertools.product(grid_mlp, grid_hid, grid_copies, grid_base):
        residuals = [activation(p, mlp, hid, copies, base) - (p.activation_gib or 0.0) for p in sel]
        err = sum(r * r for r in residuals)
        if err < best_err:
            best_err, best = err, (mlp, hid, copies, base, residuals)
    assert best is not None
    return best


def fit_graphs(data: list[Point]) -> tuple[float, float, list[float]]:
    sel = [p for p in data if p.graph_gib is not None and p.capture_share > 0]
    xs = [p.layers_on_rank for p in sel]
    ys = [(p.graph_gib or 0.0) / p.capture_share for p in sel]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mean_x) ** 2 for x in xs
    )
    intercept = mean_y - slope * mean_x
    residuals = [(intercept + slope * p.layers_on_rank) * p.capture_share - (p.graph_gib or 0.0) for p in sel]
    return intercept, slope, residuals


def describe(name: str, residuals: list[float]) -> None:
    abs_r = sorted(abs(r) for r in residuals)
    if not abs_r:
        print(f"{name}: no data")
        return
    p90 = abs_r[min(len(abs_r) - 1, round(0.9 * (len(abs_r) - 1)))]
    print(
        f"{name}: n={len(abs_r)} median |residual| {statistics.median(abs_r):.3f} GiB, p90 {p90:.3f} GiB, "
        f"max {abs_r[-1]:.3f} GiB, mean {statistics.fmean(residuals):+.3f} GiB"
    )


def main() -> None:
    data = points()
    print(f"{len(data)} records with complete inputs")
    for newer in (True, False):
        mlp, hid, copies, base, residuals = fit_activation(data, newer=newer)
        era = ">=0.17" if newer else "0.10-0.16"
        print(
            f"activation {era}: FWD_MLP_FACTOR={mlp} FWD_HIDDEN_FACTOR={hid} sampler copies={copies} base={base}"
        )
        describe(f"  activation {era}", residuals)
        held = [
            p
            for p in data
            if p.held_bytes and p.activation_gib is not None and (p.version >= (0, 17, 0)) == newer
        ]
        for p in held:
            pred = activation(p, mlp, hid, copies, base)
            print(
                f"    {p.id}: held {p.held_bytes / GIB:.3f} GiB, predicted {pred:.2f} GiB, "
                f"printed {p.activation_gib:.2f} GiB"
            )
    intercept, slope, residuals = fit_graphs(data)
    print(f"cuda graphs: CUDA_GRAPH_BASE={intercept:.4f} GiB CUDA_GRAPH_PER_LAYER={slope:.5f} GiB")
    describe("  cuda graphs", residuals)
    for label, pred in (
        ("tp1", lambda p: p.tp == 1 and p.pp == 1),
        ("tp>1", lambda p: p.tp > 1),
        ("pp>1 tp1", lambda p: p.pp > 1 and p.tp == 1),
    ):
        vals = [p.non_torch_gib for p in data if p.non_torch_gib is not None and pred(p)]
        if vals:
            print(
                f"non-torch {label}: n={len(vals)} median {statistics.median(vals):.3f} GiB "
                f"min {min(vals):.2f} max {max(vals):.2f}"
            )
    # current constants in budget.py, for comparison
    current = [
        B.non_torch_bytes(tensor_parallel_size=p.tp, pipeline_parallel_size=p.pp) / GIB
        - (p.non_torch_gib or 0)
        for p in data
        if p.non_torch_gib is not None
    ]
    describe("non-torch model in budget.py", current)


if __name__ == "__main__":
    main()
