"""Fit the performance model's coefficients per device family on the measured runs, and only on them.

    .venv/bin/python bench/fit_perf.py            # fit, print residuals, write app/core/perf/coefficients.json
    .venv/bin/python bench/fit_perf.py --check    # fit and print only (no write)

Data: bench/data/perf/vllm_perf_measured.csv (aiconfigurator's silicon_sample vLLM rows, Apache-2.0; see
its README). Rows used: `mode == agg` with a complete layout; exact duplicates (same model, system,
precision, layout, lengths, concurrency, version) averaged into one run. Disaggregated rows are another
serving system and are left out. InferenceMAX rows (dated result files and database dumps) are planned
with that harness's launch settings, which the rows do not record: FP8 KV cache for NVIDIA's FP8/NVFP4
checkpoints, --max-num-seqs = concurrency, and DP-attention layouts as data-parallel ranks of tp / dp GPUs.

Per family (hopper: H100/H200 on vLLM >= 0.15; hopper@<0.15: the 0.12 runs; blackwell: B200/B300/GB200)
twelve coefficients: memory-bandwidth, tensor-core and expert-GEMM efficiencies, per-step, per-layer,
per-MoE-layer and per-decode-token overheads, per-collective latency, the link efficiency of the TP
all-reduce bytes and of the DP expert exchange, the prefill queue factor and the per-request TTFT
overhead. The ten step coefficients by non-negative least squares on relative TPOT error, the two TTFT
ones by Nelder-Mead, then every one on a robust loss of the log errors. Each family is shrunk toward
the fit on all runs (PRIOR_RUNS runs' weight) so that three models per family cannot each buy their own
overhead. Everything else (bytes, FLOPs, pool size) is the planner's own accounting.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.catalog import find_device, find_model  # noqa: E402
from app.core.errors import PlannerError  # noqa: E402
from app.core.estimate import estimate  # noqa: E402
from app.core.perf.physics import Coefficients, StepPhysics, step_physics  # noqa: E402
from app.core.perf.predict import COEFFICIENTS_FILE, device_family, version_band  # noqa: E402
from app.core.perf.schedule import Workload, mean_step, point_at  # noqa: E402
from app.core.result import Estimate  # noqa: E402
from app.core.specs import ModelSpec, QuantMethod, QuantSpec, ServeConfig  # noqa: E402

DATA = ROOT / "bench" / "data" / "perf" / "vllm_perf_measured.csv"
SYSTEMS = {
    "h100_sxm": "nvidia-h100-sxm-80gb",
    "h200_sxm": "nvidia-h200-141gb",
    "b200_sxm": "nvidia-b200",
    "b300_sxm": "nvidia-b300",
    "gb200": "nvidia-gb200",
}
# (model_path, precision) -> the catalog checkpoint that was served, where it has its own entry
CHECKPOINTS = {
    ("MiniMaxAI/MiniMax-M2.5", "fp4"): "nvidia/MiniMax-M2.5-NVFP4",
    ("moonshotai/Kimi-K2.5", "fp4"): "nvidia/Kimi-K2.5-NVFP4",
    ("meta-llama/Llama-3.1-70B", "fp8"): "nvidia/Llama-3.1-70B-Instruct-FP8",
}
# model_path -> catalog id (the precision column then sets the weight format)
MODELS = {
    "MiniMaxAI/MiniMax-M2.5": "MiniMaxAI/MiniMax-M2.5",
    "moonshotai/Kimi-K2.5": "moonshotai/Kimi-K2.5",
    "meta-llama/Llama-3.1-70B": "meta-llama/Llama-3.1-70B",
    "nvidia/Llama-3.1-8B-Instruct-FP8": "nvidia/Llama-3.1-8B-Instruct-FP8",
    "openai/gpt-oss-120b": "openai/gpt-oss-120b",
    "Qwen/Qwen3-235B-A22B-FP8": "Qwen/Qwen3-235B-A22B-FP8",
    "Qwen/Qwen3-32B": "Qwen/Qwen3-32B",
}
# precision column -> the weight format of the checkpoint that was served
PRECISION_QUANT = {
    "fp8": QuantSpec(method=QuantMethod.FP8, source_name="fp8"),
    "fp4": QuantSpec(method=QuantMethod.NVFP4, group_size=16, source_name="modelopt_fp4"),
    "int4": QuantSpec(method=QuantMethod.INT4, group_size=32, source_name="compressed-tensors"),
}
DEFAULT_VERSION = "0.19.0"  # rows without a version (or a nightly) are recent InferenceMAX images
MAX_MODEL_LEN_SLACK = 64  # the bench's --max-model-len leaves a little room over isl + osl
TTFT_WEIGHT = 0.5
ROBUST_SCALE = 0.3  # log error where the loss turns linear (a 35 % miss)
ROBUST_SCALE = 0.3  # log error where the loss turns linear (a 35 % miss)  # TTFT is noisier (queueing, first-wave burst): half the weight of TPOT
PARAM_NAMES = (
    "bandwidth_efficiency",
    "compute_efficiency",
    "moe_compute_efficiency",
    "step_overhead_s",
    "layer_overhead_s",
    "moe_layer_overhead_s",
    "collective_latency_s",
    "link_efficiency",
    "token_overhead_s",
    "exchange_efficiency",
    "prefill_queue_factor",
    "ttft_overhead_s",
)
START = (0.7, 0.4, 0.2, 0.002, 20e-6, 20e-6, 10e-6, 0.5, 5e-6, 0.1, 0.1, 0.03)
# Physical ranges (round 8; before, every efficiency could reach 1.0 and the exchange's 0.001, and the Hopper fit
# sat at bandwidth 1.0 / GEMM 1.0 while the DP exchange took the time instead):
# * HBM: the best streaming kernels read ~90 % of the data sheet (H100 SXM ~3.0 of 3.35 TB/s), so <= 0.9;
# * GEMMs (dense and grouped): cuBLAS / CUTLASS's largest BF16 / FP8 GEMMs reach ~75-80 % of the dense
#   tensor peak on H100 / B200; <= 0.85 leaves room and stops the fit buying TTFT with a free GEMM;
# * the TP all-reduce's and the DP expert exchange's bytes: NCCL's bus bandwidth over NVLink reaches
#   ~360-400 of 450 GB/s at megabytes (NVIDIA/nccl-tests#326: 0.8) and a few per cent of it at the tens
#   of kilobytes a decode step's tokens make (the collective's latency is its own coefficient), so
#   0.05-0.9 for the exchange, <= 0.9 for the link.
BOUNDS = (
    (0.05, 0.9),
    (0.02, 0.85),
    (0.02, 0.85),
    (0.0, 0.05),
    (0.0, 5e-4),
    (0.0, 5e-4),
    (0.0, 2e-4),
    (0.01, 0.9),
    (0.0, 2e-4),
    (0.05, 0.9),
    (1e-4, 2.0),
    (1e-4, 1.0),
)
NELDER_MEAD_ITERATIONS = 60
STEP_PARAMS = 10  # the first ten are the step's (linear least squares); the last two TTFT's


@dataclass
class Run:
    ids: list[str]
    model_path: str
    system: str
    precision: str
    version: str
    tp: int
    dp: int
    ep: bool
    isl: int
    osl: int
    concurrency: int
    ttft_ms: float
    tpot_ms: float
    source: str = ""
    model: ModelSpec | None = None
    estimate: Estimate | None = None
    physics: StepPhysics | None = None
    family: str = ""
    skip: str = ""
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def throughput(self) -> float:
        """README: concurrency x osl / ((ttft + (osl - 1) x tpot) / 1000)."""
        return self.concurrency * self.osl / ((self.ttft_ms + (self.osl - 1) * self.tpot_ms) / 1000)


# InferenceMAX's launch recipes (what its rows do not record): every vLLM recipe passes --async-scheduling
# (jyothisambolu/InferenceMAX benchmarks/70b_fp8_h100_docker.sh at 4e3c32ef, gptoss_fp4_h100_docker.sh at
# af4ccd03: `async-scheduling: true`), so the host's step work overlaps the device's even on 0.12;
# NVIDIA's FP8/NVFP4 checkpoints are served
# with their FP8 KV-cache scales (--kv-cache-dtype fp8) and --max-num-seqs equal to the concurrency, and
# its "TP n, EP n, DP-attention" layouts are n GPUs as n data-parallel ranks with attention TP 1
# (aiconfigurator's row lists tp_size = n and attention_dp_size = n for them).
IMAX_FP8_KV_PRECISIONS = ("fp8", "fp4")
IMAX_BF16_KV_MODELS = ("openai/gpt-oss-120b",)  # native MXFP4 checkpoint, no FP8 KV scales


def is_inferencemax(source: str) -> bool:
    """InferenceMAX runs: its dated result files (`source_file=2026-…csv`) and database dumps; NVIDIA's
    own sweeps name an `aic-auto-gap-analysis` or `kimi-k2.5-gap-analysis` source file."""
    return source.startswith(("db-dump", "source_file=2026-"))


def _int(text: str, default: int = 1) -> int:
    return int(text) if text.strip() else default


def _version(text: str) -> str:
    return text if text and text[0].isdigit() else DEFAULT_VERSION


def load_runs(path: Path = DATA) -> list[Run]:
    groups: dict[tuple[object, ...], list[dict[str, str]]] = defaultdict(list)
    with path.open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["mode"] != "agg" or not row["tp_size"].strip():
                continue
            key = (
                row["model_path"],
                row["system"],
                row["precision"],
                _version(row["backend_version"]),
                row["tp_size"],
                row["attention_dp_size"],
                row["moe_ep_size"],
                row["isl"],
                row["osl"],
                row["batch_size"],
            )
            groups[key].append(row)
    runs = []
    for key, rows in groups.items():
        first = rows[0]
        ep = _int(first["moe_ep_size"]) > 1
        tp = _int(first["tp_size"])
        # attention DP: given, or implied by an MoE layout wider than TP (moe_tp x moe_ep GPUs)
        moe_gpus = _int(first["moe_tp_size"], 0) * _int(first["moe_ep_size"], 0)
        dp = max(_int(first["attention_dp_size"]), moe_gpus // tp if moe_gpus > tp else 1)
        if is_inferencemax(first["silicon_data_source"]) and dp > 1 and tp % dp == 0:
            tp //= dp  # DP-attention: the row's tp_size counts the GPUs, each rank has tp / dp of them
        runs.append(
            Run(
                ids=[r["id"] for r in rows],
                model_path=first["model_path"],
                system=first["system"],
                precision=first["precision"],
                version=str(key[3]),
                tp=tp,
                dp=dp,
                ep=ep,
                isl=int(first["isl"]),
                osl=int(first["osl"]),
                concurrency=int(first["batch_size"]),
                ttft_ms=statistics.fmean(float(r["silicon_ttft_ms"]) for r in rows),
                tpot_ms=statistics.fmean(float(r["silicon_tpot_ms"]) for r in rows),
                source=first["silicon_data_source"],
            )
        )
    return runs


def model_for(run: Run) -> ModelSpec:
    spec = find_model(CHECKPOINTS.get((run.model_path, run.precision), MODELS[run.model_path]))
    if run.precision == "":
        return spec.model_copy(update={"quantization": None})
    if run.model_path == "openai/gpt-oss-120b":
        return spec  # "fp4" is gpt-oss's native MXFP4
    quant = PRECISION_QUANT[run.precision]
    if spec.quantization is not None and spec.quantization.method == quant.method:
        return spec
    return spec.model_copy(update={"quantization": quant})


_CACHE: dict[tuple[object, ...], tuple[Estimate, StepPhysics] | str] = {}


def prepare(runs: Iterable[Run]) -> list[Run]:
    """Attach the planner's estimate and step physics to each run (cached per configuration)."""
    ready = []
    for run in runs:
        if run.model_path not in MODELS:
            run.skip = "model not in catalog"
            continue
        device = find_device(SYSTEMS[run.system])
        model = model_for(run)
        imax = is_inferencemax(run.source)
        fp8_kv = (
            imax and run.precision in IMAX_FP8_KV_PRECISIONS and run.model_path not in IMAX_BF16_KV_MODELS
        )
        serve = ServeConfig(
            tensor_parallel_size=run.tp,
            data_parallel_size=run.dp,
            enable_expert_parallel=run.ep,
            max_model_len=run.isl + run.osl + MAX_MODEL_LEN_SLACK,
            kv_cache_dtype="fp8" if fp8_kv else "auto",
            max_num_seqs=run.concurrency if imax else None,
        )
        key = (
            serve,
            run.model_path,
            run.precision,
            run.system,
            run.version,
            run.tp,
            run.dp,
            run.ep,
            run.isl + run.osl,
        )
        if key not in _CACHE:
            try:
                est = estimate(model=model, device=device, serve=serve, vllm_version=run.version)
                physics = step_physics(estimate=est, model=model, device=device, serve=serve)
                # InferenceMAX's recipes pass --async-scheduling whatever the release's default; NVIDIA's
                # own sweeps (0.12 defaults) are the runs these coefficients are fitted on, so whatever host
                # time they ran in series is inside the fitted overheads already: neither adds a host term
                physics = replace(physics, host_overlapped=True)
                _CACHE[key] = (est, physics)
            except PlannerError as exc:
                _CACHE[key] = f"planner: {exc}"
        cached = _CACHE[key]
        if isinstance(cached, str):
            run.skip = cached
            continue
        run.model, (run.estimate, run.physics) = model, cached
        run.family = device_family(device)[0] + version_band(run.version)
        ready.append(run)
    return ready


def predict(run: Run, coefficients: Coefficients) -> tuple[float, float, float]:
    """(TTFT ms, TPOT ms, output tokens/s) for one run."""
    assert run.estimate is not None and run.physics is not None
    point = point_at(
        physics=run.physics,
        coefficients=coefficients,
        estimate=run.estimate,
        workload=Workload(input_tokens=run.isl, output_tokens=run.osl, concurrency=run.concurrency),
    )
    return point.ttft_s * 1000, point.tpot_s * 1000, point.output_tokens_per_s


def _clamp(values: Sequence[float]) -> list[float]:
    return [min(max(v, lo), hi) for v, (lo, hi) in zip(values, BOUNDS, strict=True)]


def _coefficients(values: Sequence[float]) -> Coefficients:
    return Coefficients(**dict(zip(PARAM_NAMES, _clamp(values), strict=True)))


def _soft_l1(log_error: float) -> float:
    """Robust loss on a log error: quadratic inside ROBUST_SCALE, linear beyond (a few runs past a KV cliff
    the model cannot see, e.g. an fp8 KV cache the row does not record, must not steer every coefficient)."""
    z = (log_error / ROBUST_SCALE) ** 2
    return 2 * ROBUST_SCALE**2 * (math.sqrt(1 + z) - 1)


def loss(runs: Sequence[Run], coefficients: Coefficients) -> float:
    total = 0.0
    for run in runs:
        ttft, tpot, _ = predict(run, coefficients)
        total += _soft_l1(math.log(tpot / run.tpot_ms)) + TTFT_WEIGHT * _soft_l1(
            math.log(max(ttft, 1e-3) / run.ttft_ms)
        )
    return total / max(1, len(runs))


def nelder_mead(f: Callable[[list[float]], float], start: list[float], iterations: int) -> list[float]:
    """Plain Nelder-Mead (reflection 1, expansion 2, contraction 0.5, shrink 0.5)."""
    n = len(start)
    simplex = [list(start)]
    for i in range(n):
        p = list(start)
        p[i] += 0.5 if p[i] == 0 else 0.3 * abs(p[i]) + 0.3
        simplex.append(p)
    scores = [f(p) for p in simplex]
    for _ in range(iterations):
        order = sorted(range(n + 1), key=lambda i: scores[i])
        simplex = [simplex[i] for i in order]
        scores = [scores[i] for i in order]
        centroid = [sum(p[j] for p in simplex[:-1]) / n for j in range(n)]
        worst = simplex[-1]
        reflected = [c + (c - w) for c, w in zip(centroid, worst, strict=True)]
        r = f(reflected)
        if r < scores[0]:
            expanded = [c + 2 * (c - w) for c, w in zip(centroid, worst, strict=True)]
            e = f(expanded)
            simplex[-1], scores[-1] = (expanded, e) if e < r else (reflected, r)
        elif r < scores[-2]:
            simplex[-1], scores[-1] = reflected, r
        else:
            contracted = [c + 0.5 * (w - c) for c, w in zip(centroid, worst, strict=True)]
            cs = f(contracted)
            if cs < scores[-1]:
                simplex[-1], scores[-1] = contracted, cs
            else:
                best = simplex[0]
                simplex = [best] + [
                    [b + 0.5 * (x - b) for b, x in zip(best, p, strict=True)] for p in simplex[1:]
                ]
                scores = [scores[0]] + [f(p) for p in simplex[1:]]
    return simplex[min(range(n + 1), key=lambda i: scores[i])]


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (small normal equations)."""
    n = len(vector)
    a = [[*row[:], vector[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        if abs(a[col][col]) < 1e-30:
            continue
        for r in range(n):
            if r != col:
                f = a[r][col] / a[col][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col], strict=True)]
    return [a[i][n] / a[i][i] if abs(a[i][i]) > 1e-30 else 0.0 for i in range(n)]


def _nonnegative_least_squares(rows: list[list[float]], targets: list[float]) -> list[float]:
    """min sum (row . x - target)^2 with x >= 0: drop negative unknowns and solve again (active set)."""
    n = len(rows[0])
    free = list(range(n))
    while True:
        ata = [[sum(r[i] * r[j] for r in rows) for j in free] for i in free]
        atb = [sum(r[i] * t for r, t in zip(rows, targets, strict=True)) for i in free]
        for k in range(len(free)):
            ata[k][k] += 1e-12 * (ata[k][k] or 1.0)
        solution = _solve(ata, atb)
        if all(v >= 0 for v in solution) or len(free) == 1:
            x = [0.0] * n
            for i, v in zip(free, solution, strict=True):
                x[i] = max(v, 0.0)
            return x
        worst = min(range(len(free)), key=lambda k: solution[k])
        free.pop(worst)


def step_floors() -> list[float]:
    """The least value of each linear step unknown: an efficiency's ceiling as 1 / eta, else its lower bound."""
    return [1 / BOUNDS[i][1] if i in INVERTED else BOUNDS[i][0] for i in range(STEP_PARAMS)]


def _bounded_least_squares(rows: list[list[float]], targets: list[float]) -> list[float]:
    """The non-negative least squares of the step unknowns shifted by their floors (x = floor + u, u >= 0):
    an efficiency stays under its ceiling inside the solve, so the others are fitted with it there instead
    of being clamped after."""
    floors = step_floors()
    shifted = [
        t - sum(f * r for f, r in zip(floors, row, strict=True)) for row, t in zip(rows, targets, strict=True)
    ]
    return [f + u for f, u in zip(floors, _nonnegative_least_squares(rows, shifted), strict=True)]


LINEAR_ROUNDS = 3
POLISH_FACTOR = 8  # Nelder-Mead iterations of the joint polish, per TTFT-fit iteration


def _step_features(run: Run, coefficients: Coefficients) -> list[float]:
    """TPOT = overhead + memory/eta_bw + compute/eta_c + layers x o_layer + collectives x latency + wire time:
    linear in (1/eta_bw, 1/eta_c, overhead, o_layer, latency) at the run's decode batch and prefill mix."""
    assert run.physics is not None and run.estimate is not None
    point = point_at(
        physics=run.physics,
        coefficients=coefficients,
        estimate=run.estimate,
        workload=Workload(input_tokens=run.isl, output_tokens=run.osl, concurrency=run.concurrency),
    )
    unit = Coefficients(1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0)
    cost = mean_step(
        physics=run.physics,
        coefficients=unit,
        decode_tokens=point.decode_batch,
        prefill_tokens=point.prefill_tokens_per_step,
        input_tokens=run.isl,
        max_num_batched_tokens=run.estimate.max_num_batched_tokens,
        decode_context_tokens=run.isl + run.osl / 2,
    )
    features = [
        cost.memory_seconds,
        cost.dense_compute_seconds,
        cost.expert_compute_seconds,
        1.0,
        float(run.physics.layers_on_device),
        float(run.physics.moe_layers_on_device),
        float(run.physics.collectives_per_step),
        cost.wire_seconds,
        point.decode_batch,
        cost.exchange_seconds,
    ]
    return features


# Shrinkage: a family's coefficients are pulled toward the fit on every run (all families pooled, the
# device data sheets carrying the differences) with the weight of PRIOR_RUNS runs. Few models per family
# (the 0.12 Hopper runs have three) must not buy a free per-layer overhead per model: leaving one out
# would then swing every coefficient.
PRIOR_RUNS = 8.0
# deviation scale of each coefficient in the prior (relative to |pooled| + this), PARAM_NAMES order
PRIOR_SCALES = (0.1, 0.1, 0.1, 2e-4, 1e-5, 1e-5, 1e-5, 0.1, 5e-6, 0.02, 0.02, 0.01)
INVERSE_PRIOR_SCALE = 0.2  # the same for the linear step's unknowns that are 1 / efficiency
INVERTED = (0, 1, 2, 7, 9)  # positions of efficiencies among the step coefficients (fitted as 1 / eta)


def _prior_penalty(coefficients: Coefficients, prior: Coefficients | None, runs: int) -> float:
    if prior is None:
        return 0.0
    total = 0.0
    for name, scale in zip(PARAM_NAMES, PRIOR_SCALES, strict=True):
        x, x0 = getattr(coefficients, name), getattr(prior, name)
        total += ((x - x0) / (abs(x0) + scale)) ** 2
    return PRIOR_RUNS * total / max(1, runs)


def fit_family(
    runs: Sequence[Run], iterations: int = NELDER_MEAD_ITERATIONS, prior: Coefficients | None = None
) -> Coefficients:
    """Step coefficients by non-negative least squares on relative TPOT error; then the two TTFT
    coefficients by Nelder-Mead with the step fixed; then every coefficient on the robust loss. With a
    ``prior`` each stage also pays for moving away from it (shrinkage toward the pooled fit)."""
    current = _coefficients(START)
    prior_rows: list[list[float]] = []
    prior_targets: list[float] = []
    if prior is not None:
        weight = math.sqrt(PRIOR_RUNS)
        for i, name in enumerate(PARAM_NAMES[:STEP_PARAMS]):
            value = getattr(prior, name)
            u0, scale = (1 / value, INVERSE_PRIOR_SCALE) if i in INVERTED else (value, PRIOR_SCALES[i])
            row = [0.0] * STEP_PARAMS
            row[i] = weight / (abs(u0) + scale)
            prior_rows.append(row)
            prior_targets.append(weight * u0 / (abs(u0) + scale))
    for _ in range(LINEAR_ROUNDS):
        rows, targets = list(prior_rows), list(prior_targets)
        for run in runs:
            features = _step_features(run, current)
            measured = run.tpot_ms / 1000
            rows.append([f / measured for f in features])
            targets.append(1.0)
        inv_bw, inv_c, inv_moe, overhead, layer, moe_layer, latency, inv_link, per_token, inv_exchange = (
            _bounded_least_squares(rows, targets)
        )
        current = _coefficients(
            [
                1 / inv_bw if inv_bw > 0 else BOUNDS[0][1],
                1 / inv_c if inv_c > 0 else BOUNDS[1][1],
                1 / inv_moe if inv_moe > 0 else BOUNDS[2][1],
                overhead,
                layer,
                moe_layer,
                latency,
                1 / inv_link if inv_link > 0 else BOUNDS[7][1],
                per_token,
                1 / inv_exchange if inv_exchange > 0 else BOUNDS[9][1],
                current.prefill_queue_factor,
                current.ttft_overhead_s,
            ]
        )
        step = [getattr(current, name) for name in PARAM_NAMES[:STEP_PARAMS]]

        def objective(x: list[float], step: list[float] = step) -> float:
            trial = _coefficients([*step, math.exp(x[0]), math.exp(x[1])])
            return loss(runs, trial) + _prior_penalty(trial, prior, len(runs))

        best = nelder_mead(
            objective, [math.log(current.prefill_queue_factor), math.log(current.ttft_overhead_s)], iterations
        )
        current = _coefficients([*step, math.exp(best[0]), math.exp(best[1])])
    # polish every coefficient together on the log errors (the linear step weighs outliers squared)
    floor = 1e-7
    start = [math.log(max(getattr(current, name), floor)) for name in PARAM_NAMES]

    def joint(x: list[float]) -> float:
        trial = _coefficients([math.exp(v) for v in x])
        return loss(runs, trial) + _prior_penalty(trial, prior, len(runs))

    best = nelder_mead(joint, start, iterations * POLISH_FACTOR)
    return _coefficients([math.exp(v) for v in best])


def quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def fit_all(runs: Sequence[Run], iterations: int = NELDER_MEAD_ITERATIONS) -> dict[str, Coefficients]:
    by_family: dict[str, list[Run]] = defaultdict(list)
    for run in runs:
        by_family[run.family].append(run)
    pooled = fit_family(runs, iterations) if PRIOR_RUNS > 0 and len(by_family) > 1 else None
    return {
        family: fit_family(members, iterations, prior=pooled) for family, members in sorted(by_family.items())
    }


def family_record(family: str, runs: Sequence[Run], coefficients: Coefficients) -> dict[str, object]:
    residuals = []
    tpot_logs, ttft_logs, thr_logs = [], [], []
    for run in runs:
        ttft, tpot, thr = predict(run, coefficients)
        tpot_logs.append(math.log(run.tpot_ms / tpot))
        ttft_logs.append(math.log(run.ttft_ms / max(ttft, 1e-3)))
        thr_logs.append(math.log(run.throughput / thr))
        residuals.append(
            {
                "rows": run.ids,
                "tpot_ms": [round(run.tpot_ms, 3), round(tpot, 3)],
                "ttft_ms": [round(run.ttft_ms, 2), round(ttft, 2)],
                "output_tokens_per_s": [round(run.throughput, 1), round(thr, 1)],
            }
        )
    actives = [r.model.params_active or r.model.params_total for r in runs if r.model is not None]
    return {
        **{name: getattr(coefficients, name) for name in PARAM_NAMES},
        "tpot_log_p10": quantile(tpot_logs, 0.1),
        "tpot_log_p90": quantile(tpot_logs, 0.9),
        "ttft_log_p10": quantile(ttft_logs, 0.1),
        "ttft_log_p90": quantile(ttft_logs, 0.9),
        "throughput_log_p10": quantile(thr_logs, 0.1),
        "throughput_log_p90": quantile(thr_logs, 0.9),
        "active_params_min": min(actives),
        "active_params_max": max(actives),
        "weight_formats": sorted({r.physics.weight_format.value for r in runs if r.physics is not None}),
        "devices": sorted({r.system for r in runs}),
        "runs": len(runs),
        "tpot_median_abs_error": statistics.median(abs(math.expm1(-v)) for v in tpot_logs),
        "ttft_median_abs_error": statistics.median(abs(math.expm1(-v)) for v in ttft_logs),
        "residuals": residuals,
    }


def errors(runs: Sequence[Run], fits: dict[str, Coefficients]) -> dict[str, list[float]]:
    """Relative errors |predicted - measured| / measured of each quantity over the runs."""
    out: dict[str, list[float]] = {"tpot": [], "ttft": [], "throughput": []}
    for run in runs:
        if run.family not in fits:
            continue
        ttft, tpot, thr = predict(run, fits[run.family])
        out["tpot"].append(abs(tpot - run.tpot_ms) / run.tpot_ms)
        out["ttft"].append(abs(ttft - run.ttft_ms) / run.ttft_ms)
        out["throughput"].append(abs(thr - run.throughput) / run.throughput)
    return out


FIT_KEYS = ("fitted_by", "data", "families")  # what this script writes into coefficients.json


def carried_over(kept: dict[str, object]) -> dict[str, object]:
    """What bench/perf_loso.py fitted across sources (host work, device-time factors, bench bands): every
    key of the file this fit does not write, kept as it was."""
    return {k: v for k, v in kept.items() if k not in FIT_KEYS}


def main(argv: list[str]) -> int:
    all_runs = load_runs()
    runs = prepare(all_runs)
    skipped = [r for r in all_runs if r.skip]
    print(f"{len(all_runs)} runs after averaging duplicates; {len(runs)} usable; {len(skipped)} skipped")
    for reason in sorted({r.skip for r in skipped}):
        print(f"  skipped {sum(r.skip == reason for r in skipped)}: {reason}")
    fits = fit_all(runs)
    families: dict[str, object] = {}
    for family, coefficients in fits.items():
        members = [r for r in runs if r.family == family]
        record = family_record(family, members, coefficients)
        families[family] = record
        print(
            f"{family}: {len(members)} runs  "
            + "  ".join(f"{n}={getattr(coefficients, n):.4g}" for n in PARAM_NAMES)
            + f"  TPOT median err {record['tpot_median_abs_error']:.1%}  TTFT median err {record['ttft_median_abs_error']:.1%}"
        )
    errs = errors(runs, fits)
    for key, values in errs.items():
        print(f"in-sample {key}: median {statistics.median(values):.1%}  p90 {quantile(values, 0.9):.1%}")
    if "--check" not in argv:
        kept = json.loads(COEFFICIENTS_FILE.read_text(encoding="utf-8")) if COEFFICIENTS_FILE.exists() else {}
        payload = {
            **carried_over(kept),
            "fitted_by": "bench/fit_perf.py",
            "data": "bench/data/perf/vllm_perf_measured.csv (aiconfigurator silicon_sample vLLM rows, Apache-2.0)",
            "families": families,
        }
        COEFFICIENTS_FILE.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {COEFFICIENTS_FILE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
