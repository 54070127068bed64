"""Leave-one-source-out accuracy of the simulated `vllm bench serve` run (app.core.perf.bench).

    .venv/bin/python bench/perf_sources.py
    .venv/bin/python bench/perf_sources.py --blind FILE.jsonl ... [--rows]   # shipped answer vs measured

Sources: the shared file (bench/data/perf/vllm_perf_measured.csv, one harness: InferenceMAX and NVIDIA
sweeps, run with InferenceMAX's published client settings: range ratio 0.8, num_prompts = 10 x
concurrency, rate inf) and every `source` in bench/data/perf/sources.jsonl. For each source held out,
the per-kind factors (TPOT-like, TTFT, throughput: median log measured / predicted) and the bands (10th
and 90th percentiles of the log residuals) come from the *other* sources' runs only; the held-out runs
are then predicted and checked against the band. Prints per source and pooled: median |error|, median
predicted / measured, share inside the band. Step coefficients are the shipped ones (fitted on the
shared file only), so for the shared file itself the step part is in-sample.
"""

from __future__ import annotations

import json
import math
import random
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fit_perf as F

from app.core.catalog import find_device, find_model
from app.core.errors import ConfigError, PlannerError
from app.core.estimate import estimate
from app.core.perf.bench import BenchPoint, BenchResult, simulate_bench
from app.core.perf.bench_args import (
    DEFAULT_INPUT_LEN,
    DEFAULT_OUTPUT_LEN,
    SHAREGPT_MAX_TOTAL,
    BenchArgs,
    printed_lengths,
    request_lengths,
)
from app.core.perf.cluster import MeasuredKeys, RunComparison, fit_cluster
from app.core.perf.physics import Coefficients, StepPhysics, step_physics
from app.core.perf.predict import device_family, fit_for, fitted_families, performance
from app.core.perf.schedule import Workload
from app.core.perf.uncaptured import V0_DECODE_GRAPH_MAX
from app.core.plan import apply_quantization_flag
from app.core.result import Estimate, Range
from app.core.specs import DeviceSpec, ModelSpec, ServeConfig
from app.core.versions import rules_for

SOURCES = Path(__file__).resolve().parent / "data" / "perf" / "sources.jsonl"
SOURCES_DIR = Path(__file__).resolve().parent / "data" / "perf" / "sources"
# the sixth collection (2026-12-01), held apart and scored blind first (sources-r6/README.md)
SOURCES_R6_DIR = Path(__file__).resolve().parent / "data" / "perf" / "sources-r6"
# the seventh collection (2026-12-01), held apart and scored blind first (sources-r7/README.md)
SOURCES_R7_DIR = Path(__file__).resolve().parent / "data" / "perf" / "sources-r7"
# ServeConfig fields a source may state under "server" (the rest of what it says stays in "harness")
SERVE_FLAGS = frozenset(
    {
        "max_model_len",
        "gpu_memory_utilization",
        "kv_cache_dtype",
        "max_num_seqs",
        "max_num_batched_tokens",
        "enable_prefix_caching",
        "enable_chunked_prefill",
        "enforce_eager",
        "enable_expert_parallel",
        "async_scheduling",
        "block_size",
        "quantization",  # `--quantization fp8` on a bf16 checkpoint: vLLM's online FP8 (sources-r10 violet-quartz)
    }
)
KEYS = {"tpot": "mean_tpot_ms", "ttft": "mean_ttft_ms", "throughput": "output_throughput"}
SHARED = "shared file (aiconfigurator silicon_sample)"
IMAX_RANGE_RATIO = 0.8  # jyothisambolu/InferenceMAX README: RANDOM_RANGE_RATIO 0.8, num_prompts = CONC x 10
IMAX_PROMPTS_PER_CLIENT = 10
GPU_MEMORY_UTILIZATION_DEFAULT = 0.9  # vllm serve --gpu-memory-utilization default


@dataclass(frozen=True)
class RunContext:
    """One measured run, ready to simulate: the planner's estimate and physics of its configuration, the
    fitted family's coefficients, its bench arguments, and what was measured (vLLM's result keys)."""

    source: str
    estimate: Estimate
    physics: StepPhysics
    coefficients: Coefficients
    args: BenchArgs
    prefix_cache: bool
    measured: dict[str, float]
    cluster: str
    platform: str = "cuda"  # the device's: the cross-source platform factor (bench/perf_loso.py) goes by it
    engine: str = "v1"  # the engine the run used: the release's, or V0 where the row says it was forced
    lengths: tuple[list[int], list[int]] | None = None  # the requests' own, where printed (run_lengths)
    # the row's warm_prefix_cache: the same prompt set ran on the same server earlier, prefix caching on
    warm_prompts: bool = False

    def requests(self) -> tuple[list[int], list[int]]:
        """(prompt, output) tokens per request, as simulated."""
        return self.lengths if self.lengths is not None else request_lengths(self.args)

    def simulate(self, coefficients: Coefficients | None = None) -> dict[str, float]:
        return self.point(coefficients).values

    def point(self, coefficients: Coefficients | None = None) -> BenchPoint:
        """The simulated run (its figures, the regime that bound it, its preemptions)."""
        return simulate_bench(
            estimate=self.estimate,
            physics=self.physics,
            coefficients=coefficients or self.coefficients,
            args=self.args,
            prefix_cache=self.prefix_cache,
            lengths=self.lengths,
            warm_prompts=self.warm_prompts,
        )


def inferencemax_lengths(args: BenchArgs) -> tuple[list[int], list[int]]:
    """(prompt, output) tokens per request as InferenceMAX's client draws them: its scripts run
    kimbochen/bench_serving's benchmark_serving.py (``git clone https://github.com/kimbochen/bench_serving``
    in the InferenceMAX launch scripts), whose ``sample_random_requests`` (at 406abc35) takes each length
    uniform on the integers [int(L x r), L] (numpy ``randint(int(L * r), L + 1)``), i.e. at most the length
    asked and 0.9 L on average at r = 0.8, where vLLM's own RandomDataset draws on [L (1 - r), L (1 + r)]
    around L (``request_lengths``). E.g. L = 1,024, r = 0.8: 819 to 1,024 tokens, against 204 to 1,844."""
    rng = random.Random(args.seed)
    r = args.random_range_ratio
    inputs = [
        rng.randint(int(args.random_input_len * r), args.random_input_len) for _ in range(args.num_prompts)
    ]
    outputs = [
        max(1, rng.randint(int(args.random_output_len * r), args.random_output_len))
        for _ in range(args.num_prompts)
    ]
    return [max(1, n) for n in inputs], outputs


def shared_contexts(*, inferencemax_draw: bool = False) -> list[RunContext]:
    """The shared file's runs; with ``inferencemax_draw`` their request lengths are drawn as InferenceMAX's
    client draws them (inferencemax_lengths) instead of as vLLM's RandomDataset does."""
    out = []
    fams = fitted_families()
    for run in F.prepare(F.load_runs()):
        assert run.estimate is not None and run.physics is not None
        args = BenchArgs(
            num_prompts=run.concurrency * IMAX_PROMPTS_PER_CLIENT,
            max_concurrency=run.concurrency,
            random_input_len=run.isl,
            random_output_len=run.osl,
            random_range_ratio=IMAX_RANGE_RATIO,
        )
        measured = {
            "mean_tpot_ms": run.tpot_ms,
            "mean_ttft_ms": run.ttft_ms,
            "output_throughput": run.throughput,
        }
        cluster = f"{run.system} {run.model_path} {run.precision} tp{run.tp} dp{run.dp} {run.version}"
        coefficients = fams[run.family].bench_coefficients()
        lengths = inferencemax_lengths(args) if inferencemax_draw else None
        out.append(
            RunContext(
                SHARED,
                run.estimate,
                run.physics,
                coefficients,
                args,
                True,
                measured,
                cluster,
                lengths=lengths,
            )
        )
    return out


def shared_runs() -> list[tuple[str, dict[str, float], dict[str, float], str]]:
    return [(c.source, c.simulate(), c.measured, c.cluster) for c in shared_contexts()]


# The collections every fit reads (round 10: rounds 7b, 8 and 9's blind batches, scored blind in their READMEs
# before, are training sources now). Named one by one, never globbed: a new collection (sources-r10/, being
# scored blind) stays out of every fit until it is added here after its blind score is committed.
FIT_DIRS = tuple(
    SOURCES_DIR.parent / name
    for name in ("sources", "sources-r6", "sources-r7", "sources-r7b", "sources-r8", "sources-r9")
)


def fit_files() -> list[Path]:
    """sources.jsonl and every *.jsonl of FIT_DIRS, in that order."""
    return [SOURCES, *(path for folder in FIT_DIRS for path in sorted(folder.glob("*.jsonl")))]


def source_rows() -> list[dict[str, Any]]:
    """Every measured run from outside the shared file that the fits read: sources.jsonl plus one file per
    source in each of FIT_DIRS (the README.md in each says where each came from)."""
    return read_rows(fit_files())


def read_rows(files: list[Path]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rows.append(json.loads(line))
    return rows


# ShareGPT runs whose totals are printed run as ShareGPT's own requests (bench_args.sharegpt_lengths: the
# rows vLLM draws at the run's seed) rescaled to those totals' means (run_lengths): the run's tokenizer
# and where its model stopped, with ShareGPT's spread (coefficient of variation ~1.1). Until round 10
# they ran as random prompts at the means, uniform with range ratio 0.99 (CV 0.57), so a burst's long
# outputs, which set its duration, were missing.
def generated_len(row: dict[str, Any]) -> int | None:
    """The mean output the run generated, where it printed its totals ("Total generated tokens",
    "Successful requests") and let the model stop at its end-of-sequence token (no --ignore-eos) on
    random prompts: what the benchmark ran, as the datasets below run at their printed means. E.g.
    nerdalert's 80,945 tokens over 300 requests: 270 a request against the 500 asked for."""
    if row.get("ignore_eos") or row.get("dataset_name", "random") != "random":
        return None
    total, completed = row.get("total_output_tokens"), row.get("completed")
    if total and completed:
        return max(1, round(float(total) / float(completed)))
    # without the totals, the two printed throughputs share the run's duration (vLLM's serve.py divides
    # the generated tokens and the completed requests by the same benchmark duration), so their ratio is
    # the mean output: e.g. mushfiqrahman.dev's 210 tok/s over 2.09 req/s -> 100 a request, not the 128 asked.
    # Never above the length asked (max_tokens): a ratio above it is the printed figures' rounding.
    measured = row.get("measured", {})
    tokens_per_s, requests_per_s = measured.get("output_throughput"), measured.get("request_throughput")
    asked = int(row.get("random_output_len", DEFAULT_OUTPUT_LEN))
    if tokens_per_s and requests_per_s:
        return max(1, min(asked, round(float(tokens_per_s) / float(requests_per_s))))
    # neither totals nor req/s (sources-r11 llm-d MI355X file): the input tok/s (total - output) over the mean
    # prompt (random_input_len, plus random_prefix_len: vLLM's random prompts average the length asked) is the
    # request rate, so the mean output is prompt x output / (total - output)
    total_per_s = measured.get("total_token_throughput")
    if tokens_per_s and total_per_s and float(total_per_s) > float(tokens_per_s):
        prompt = int(row.get("random_input_len", DEFAULT_INPUT_LEN)) + int(row.get("random_prefix_len", 0))
        generated = prompt * float(tokens_per_s) / (float(total_per_s) - float(tokens_per_s))
        return max(1, min(asked, round(generated)))
    return None


def sharegpt_means(row: dict[str, Any]) -> tuple[int, int] | None:
    """(prompt, output) tokens per request of a ShareGPT run that printed its totals ("Total input
    tokens", "Total generated tokens", "Successful requests"): the lengths this run's tokenizer saw and
    where its model stopped, where the simulation's ShareGPT model has one tokenizer's means (230 / 203)
    and every output running to the conversation's length. None for other datasets or without totals
    (those keep the ShareGPT model). E.g. IOG's phi-4 at 1 req/s: 40,572 input and 23,634 generated
    tokens over 200 requests -> 203 and 118."""
    if row.get("dataset_name") != "sharegpt":
        return None
    total_in, total_out, completed = (
        row.get("total_input_tokens"),
        row.get("total_output_tokens"),
        row.get("completed"),
    )
    if not total_in or not total_out or not completed:
        return None
    return (
        max(1, round(float(total_in) / float(completed))),
        max(1, round(float(total_out) / float(completed))),
    )


def bench_args(row: dict[str, Any]) -> BenchArgs:
    """The run's `vllm bench serve` arguments. Datasets the simulation has no model of (sonnet, a custom
    prompt list) run as random prompts of the run's own measured mean lengths (row: random_*_len); a
    random run that stopped at EOS runs at the output length it generated (generated_len); a ShareGPT run
    that printed its totals runs at its printed means (run_lengths)."""
    rate = row.get("request_rate", "inf")
    dataset = row.get("dataset_name", "random")
    common: dict[str, Any] = {
        "num_prompts": row["num_prompts"],
        "max_concurrency": row.get("max_concurrency"),
        "request_rate": math.inf if rate == "inf" else float(rate),
        "burstiness": row.get("burstiness", 1.0),
        "ignore_eos": bool(row.get("ignore_eos", False)),
    }
    return BenchArgs(
        dataset_name="sharegpt" if dataset == "sharegpt" else "random",
        random_input_len=row.get("random_input_len", DEFAULT_INPUT_LEN),
        random_output_len=generated_len(row) or row.get("random_output_len", DEFAULT_OUTPUT_LEN),
        random_range_ratio=row.get("random_range_ratio", 0.0),
        random_prefix_len=row.get("random_prefix_len", 0),
        **common,
    )


def run_lengths(row: dict[str, Any], args: BenchArgs) -> tuple[list[int], list[int]] | None:
    """The (prompt, output) tokens of each request of a ShareGPT run that printed its totals: the requests
    vLLM draws, rescaled to the printed means (sharegpt_means); None where the bench arguments say it all."""
    return printed_lengths(args, means=sharegpt_means(row))


def serve_config(row: dict[str, Any], args: BenchArgs) -> ServeConfig:
    """The server as the source states it (parallel layout and the flags it names); vLLM defaults otherwise."""
    flags: dict[str, Any] = dict(row.get("server", {}))
    flags = {k: v for k, v in flags.items() if k in SERVE_FLAGS}
    longest = sum(args.longest_request())
    if row.get("dataset_name") == "sharegpt":  # the context a ShareGPT run needs, however it is run
        longest = max(longest, SHAREGPT_MAX_TOTAL)
    flags.setdefault("max_model_len", longest + 64)
    flags.setdefault(
        "gpu_memory_utilization", row.get("gpu_memory_utilization", GPU_MEMORY_UTILIZATION_DEFAULT)
    )
    return ServeConfig(
        tensor_parallel_size=row["tp"],
        pipeline_parallel_size=row.get("pp", 1),
        data_parallel_size=row.get("dp", 1),
        **flags,
    )


# Releases current at a run's date, for rows that state a date but not the version (PyPI release dates:
# 0.8.5 2025-04-28, 0.9.1 2025-06-10, 0.9.2 2025-07-08, 0.10.1 2025-08-18, 0.11.0 2025-10-02). gpt-oss
# needs 0.10.1.
RELEASE_AT = (
    ("Apr 2025", "0.8.5"),
    ("2025-06", "0.9.1"),
    ("2025-07", "0.9.2"),
    ("Jul 2025", "0.9.2"),
    ("Aug 2025", "0.10.1"),
    ("Nov 2025", "0.11.0"),
    ("late 2025", "0.11.0"),
    ("2026-03", "0.18.0"),  # wheel build dates: 0.18.0 2026-03-20, 0.19.0 2026-04-03
    ("2026-04-2", "0.19.1"),  # 0.19.1 2026-04-18, 0.20.0 2026-04-27
)
DEFAULT_RUN_VERSION = "0.19.0"


def run_version(row: dict[str, Any]) -> str:
    """The vLLM release the run used: as stated (its leading version number), else the release current at
    the date the row states, else the planner's default."""
    stated = str(row.get("vllm_version", ""))
    head = stated.split()[0].removeprefix("v") if stated.split() else ""
    if head[:1].isdigit():
        return head.split("+")[0]
    return next((version for when, version in RELEASE_AT if when in stated), DEFAULT_RUN_VERSION)


@dataclass(frozen=True)
class PlannedRun:
    """A source row as the planner takes it: the catalog's model and device, the run's bench arguments and
    server, the release it ran and the planner's estimate at that release."""

    model: ModelSpec
    device: DeviceSpec
    args: BenchArgs
    serve: ServeConfig
    version: str
    estimate: Estimate

    def planned(self) -> dict[str, Any]:
        """The planner's own keyword arguments (step_physics, performance)."""
        return {"estimate": self.estimate, "model": self.model, "device": self.device, "serve": self.serve}


def plan_run(row: dict[str, Any]) -> PlannedRun | str:
    """The row's planned run, or why the planner would not start it at the run's release."""
    device = find_device(str(row["device"]))
    args = bench_args(row)
    serve = serve_config(row, args)
    # `--quantization fp8` on a bf16 checkpoint is vLLM's online FP8, as the page and the CLI read it
    model = apply_quantization_flag(find_model(str(row["model"])), serve.quantization)
    version = run_version(row)
    try:
        est = estimate(model=model, device=device, serve=serve, vllm_version=version)
    except ConfigError as err:  # the planner refuses the release (e.g. its registry lacks the model)
        return f"refused at {version}: {err}"
    except PlannerError as err:  # the planner refuses the server (e.g. no ROCm backend takes its block size)
        return f"refused at {version}: {err}"
    if not est.fits or est.num_gpu_blocks <= 0:  # the planner says this release would not start it
        return f"no KV pool at {version}"
    return PlannedRun(model, device, args, serve, version, est)


def other_contexts() -> list[RunContext]:
    return row_contexts(source_rows())


def row_contexts(rows: list[dict[str, Any]]) -> list[RunContext]:
    """The runs of these rows the planner can plan, ready to simulate (a refused one is printed and skipped)."""
    out = []
    for row in rows:
        run = plan_run(row)
        if isinstance(run, str):
            print(f"skipped ({run}): {row['source']}: {row['device']} {row['model']}")
            continue
        physics = step_physics(**run.planned())
        engine = str(row.get("engine", rules_for(run.version).engine)).lower()
        if engine == "v0":  # VLLM_USE_V1=0 on a V1 release: the V0 engine runs the host in series
            physics = replace(physics, host_overlapped=False)
            if physics.graph_token_limit:  # and replays graphs for decode-only steps (uncaptured.py)
                physics = replace(physics, graph_token_limit=V0_DECODE_GRAPH_MAX, v0_graphs=True)
        fit = fit_for(family=device_family(run.device)[0], vllm_version=run.version)[1]
        # every key a user would paste (vLLM's result keys); the within-cluster check reads them all
        measured = {k: float(v) for k, v in dict(row["measured"]).items() if k in MeasuredKeys.model_fields}
        cluster = f"{row['device']} {row['model']} tp{row['tp']}"
        prefix_cache = run.serve.enable_prefix_caching is not False
        out.append(
            RunContext(
                str(row["source"]),
                run.estimate,
                physics,
                fit.bench_coefficients(),
                run.args,
                prefix_cache,
                measured,
                cluster,
                run.device.platform,
                engine,
                run_lengths(row, run.args),
                bool(row.get("warm_prefix_cache", False)),
            )
        )
    return out


def other_runs() -> list[tuple[str, dict[str, float], dict[str, float], str]]:
    return [(c.source, c.simulate(), c.measured, c.cluster) for c in other_contexts()]


def quantile(values: list[float], q: float) -> float:
    return F.quantile(values, q)


# What the blind score compares (vLLM's result keys): TPOT-like, TTFT and throughput, mean and median
BLIND_KEYS = (
    "mean_tpot_ms",
    "median_tpot_ms",
    "mean_itl_ms",
    "median_itl_ms",
    "mean_ttft_ms",
    "median_ttft_ms",
    "output_throughput",
    "request_throughput",
    "total_token_throughput",  # the only throughput some harnesses print (ROCm ATOM's tables)
    "mean_e2el_ms",
)


@dataclass(frozen=True)
class BlindCell:
    """One measured key of one run against the shipped answer: expected / measured, inside low..high."""

    ratio: float
    inside: bool


def shipped_answer(row: dict[str, Any]) -> BenchResult | str:
    """What /api/performance answers for this run as shipped (app.core.perf.predict.performance with the
    run's bench arguments: coefficients.json, its bench bands and the device's widening), or why none."""
    run = plan_run(row)
    if isinstance(run, str):
        return run
    prompt, output = run.args.mean_lengths()
    workload = Workload(input_tokens=prompt, output_tokens=output, concurrency=run.args.max_concurrency or 1)
    try:  # the bench answer alone, as the page's Speed section asks for it (no concurrency curve)
        perf = performance(**run.planned(), workload=workload, with_curve=False, bench=run.args)
    except PlannerError as err:
        return f"no answer: {err.field}"
    assert perf.bench is not None
    return perf.bench


def blind_cells(row: dict[str, Any], answer: BenchResult) -> dict[str, BlindCell]:
    cells = {}
    for key in BLIND_KEYS:
        measured = row["measured"].get(key)
        if measured:
            band: Range = getattr(answer, key)
            cells[key] = BlindCell(band.expected / measured, band.low <= measured <= band.high)
        # a key the run did not print is not scored
    return cells


def blind_summary(cells: list[BlindCell]) -> str:
    """median |error| (median expected / measured, share inside the band)"""
    if not cells:
        return "-"
    error = statistics.median(abs(c.ratio - 1) for c in cells)
    ratio = statistics.median(c.ratio for c in cells)
    inside = sum(c.inside for c in cells) / len(cells)
    return f"{error:.0%} ({ratio:.2f}x, {inside:.0%})"


def blind(files: list[Path], *, rows_too: bool) -> None:
    """The blind score: each run answered as shipped, per source and per (source, model), markdown."""
    groups: dict[str, list[dict[str, BlindCell]]] = defaultdict(list)
    pooled: list[dict[str, BlindCell]] = []
    for row in read_rows(files):
        answer = shipped_answer(row)
        label = f"{row['source']} / {row['model']} tp{row['tp']}"
        if isinstance(answer, str):
            print(f"not scored ({answer}): {label} {row.get('run_id', '')}")
            continue
        cells = blind_cells(row, answer)
        groups[str(row["source"])].append(cells)
        groups[label].append(cells)
        pooled.append(cells)
        if rows_too:
            shown = " ".join(f"{k}={c.ratio:.2f}{'' if c.inside else '!'}" for k, c in cells.items())
            print(f"  {label} {row.get('run_id', '')} [{answer.regime}]: {shown}")
    print("| runs | scored | " + " | ".join(BLIND_KEYS) + " |")
    print("|---|---:|" + "---|" * len(BLIND_KEYS))
    for label, runs in [*groups.items(), ("every run above", pooled)]:
        per_key = [blind_summary([r[k] for r in runs if k in r]) for k in BLIND_KEYS]
        print(f"| {label} | {len(runs)} | " + " | ".join(per_key) + " |")
    sources = {label: runs for label, runs in groups.items() if " / " not in label}
    print(source_medians(sources))


def source_medians(sources: dict[str, list[dict[str, BlindCell]]]) -> str:
    """Per key: the median over sources of each source's median |error|, of its median expected / measured,
    and of its band coverage (each source one vote, however many runs it holds)."""
    lines = ["median of the source medians (|error|, expected / measured, inside the band; sources):"]
    for key in BLIND_KEYS:
        per_source = [[r[key] for r in runs if key in r] for runs in sources.values()]
        per_source = [cells for cells in per_source if cells]
        if not per_source:
            continue
        error = statistics.median(statistics.median(abs(c.ratio - 1) for c in cells) for cells in per_source)
        ratio = statistics.median(statistics.median(c.ratio for c in cells) for cells in per_source)
        inside = statistics.median(sum(c.inside for c in cells) / len(cells) for cells in per_source)
        lines.append(f"  {key}: {error:.0%} ({ratio:.2f}x, {inside:.0%}; {len(per_source)} sources)")
    return "\n".join(lines)


def blind_files(argv: list[str]) -> list[Path]:
    """The files --blind scores: those named after it, and every *.jsonl of each --dir DIR (a held-apart
    directory such as bench/data/perf/sources-r7b/, which source_rows() never reads)."""
    files = []
    args = iter(argv[argv.index("--blind") + 1 :])
    for arg in args:
        if arg == "--dir":
            files.extend(sorted(Path(next(args)).glob("*.jsonl")))
        elif not arg.startswith("--"):
            files.append(Path(arg))
    return files


def main() -> int:
    if "--blind" in sys.argv:
        blind(blind_files(sys.argv), rows_too="--rows" in sys.argv)
        return 0
    runs = shared_runs() + other_runs()
    by_source: dict[str, list[tuple[dict[str, float], dict[str, float]]]] = defaultdict(list)
    for source, predicted, measured, _ in runs:
        by_source[source].append((predicted, measured))
    pooled: dict[str, list[tuple[float, bool, float]]] = defaultdict(list)
    print(f"{len(runs)} runs from {len(by_source)} sources")
    print("as shipped (no cross-source factor):")
    for source, rows in sorted(by_source.items()):
        cells = []
        for kind, key in KEYS.items():
            ratios = [p[key] / m[key] for p, m in rows if key in m and p.get(key, 0) > 0]
            if ratios:
                cells.append(
                    f"{kind} err {statistics.median(abs(r - 1) for r in ratios):.0%} ratio {statistics.median(ratios):.2f}"
                )
        print(f"  {source} ({len(rows)} runs): " + "; ".join(cells))
    print("leave one source out (factors and bands from the other sources):")
    for held in sorted(by_source):
        train = [(p, m) for s, rows in by_source.items() if s != held for p, m in rows]
        line = [f"{held} ({len(by_source[held])} runs):"]
        for kind, key in KEYS.items():
            logs = [math.log(m[key] / p[key]) for p, m in train if key in m and p.get(key, 0) > 0]
            centre = statistics.median(logs) if logs else 0.0
            lo, hi = (quantile(logs, 0.1), quantile(logs, 0.9)) if logs else (0.0, 0.0)
            errs = []
            for p, m in by_source[held]:
                if key not in m or p.get(key, 0) <= 0:
                    continue
                expected = p[key] * math.exp(centre)
                inside = expected * math.exp(lo - centre) <= m[key] <= expected * math.exp(hi - centre)
                errs.append((abs(expected - m[key]) / m[key], inside, expected / m[key]))
            pooled[kind].extend(errs)
            if errs:
                line.append(
                    f"{kind} err {statistics.median(e for e, _, _ in errs):.0%} "
                    f"ratio {statistics.median(r for _, _, r in errs):.2f} "
                    f"in band {sum(i for _, i, _ in errs) / len(errs):.0%}"
                )
        print("  " + "; ".join(line))
    print("pooled over held-out sources:")
    for kind, errs in pooled.items():
        print(
            f"  {kind}: median |error| {statistics.median(e for e, _, _ in errs):.1%}, median predicted/measured "
            f"{statistics.median(r for _, _, r in errs):.2f}, inside the band {sum(i for _, i, _ in errs) / len(errs):.0%}"
        )
    within_cluster(runs)
    return 0


def within_cluster(runs: list[tuple[str, dict[str, float], dict[str, float], str]]) -> None:
    """measured_runs as a user gives them: calibrated on the other runs of the same cluster and model
    (app.core.perf.cluster.fit_cluster), the left-out run's error."""
    clusters: dict[tuple[str, str], list[RunComparison]] = defaultdict(list)
    for source, predicted, measured, cluster in runs:
        clusters[(source, cluster)].append(RunComparison(predicted=predicted, measured=measured))
    errors: dict[str, list[float]] = defaultdict(list)
    inside: dict[str, list[bool]] = defaultdict(list)
    for (source, _), members in sorted(clusters.items()):
        if len(members) < 2:
            continue
        for i, left in enumerate(members):
            fit = fit_cluster(members[:i] + members[i + 1 :])
            for kind, key in KEYS.items():
                if key not in left.measured:
                    continue
                expected = left.predicted[key] * fit.factor(kind)
                lo, hi = fit.band(kind)
                for label in (kind, f"{kind} [{source}]"):
                    errors[label].append(abs(expected - left.measured[key]) / left.measured[key])
                    inside[label].append(
                        expected * math.exp(lo) <= left.measured[key] <= expected * math.exp(hi)
                    )
    print("calibrated on the other runs of the same cluster and model (leave one run out, measured_runs):")
    for kind, errs in errors.items():
        print(
            f"  {kind}: {len(errs)} runs, median |error| {statistics.median(errs):.1%}, "
            f"inside the band {sum(inside[kind]) / len(inside[kind]):.0%}"
        )


if __name__ == "__main__":
    raise SystemExit(main())
