"""`measured_runs`: your cluster's `vllm bench serve` results, each a performance request (the planner's
fields and ``bench``) with the measured keys under vLLM's names, or a ``paste`` of the printed block /
--save-result JSON. Used by /api/performance; /api/fleet reads the same shape (app/web/inputs later)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from pydantic import ConfigDict, Field, ValidationError

from app.core import deadline
from app.core.command import parse_serve_command
from app.core.errors import PlannerError
from app.core.perf.bench_args import BenchArgs
from app.core.perf.cluster import ClusterFit, MeasuredKeys, RunComparison, fit_cluster
from app.core.perf.paste import bench_fields, parse_paste
from app.core.perf.predict import compare_run
from app.core.perf.simulate import SimulationError
from app.core.text import N_, Msg, Text
from app.web.i18n import t
from app.web.inputs.params import PlannerParams, StrictPlannerParams, serve_values
from app.web.inputs.resolve import estimate_for, resolve_strict
from app.web.validation import message_of

MAX_MEASURED_RUNS = 64
MAX_PASTE_CHARS = 200_000


class MeasuredRun(StrictPlannerParams):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    bench: BenchArgs = Field(default_factory=BenchArgs)
    measured: MeasuredKeys = Field(default_factory=MeasuredKeys)
    paste: str | None = Field(default=None, max_length=MAX_PASTE_CHARS)


def _run_inputs(run: MeasuredRun, index: int) -> tuple[BenchArgs, dict[str, float]]:
    measured = run.measured.values()
    args = run.bench
    if run.paste:
        try:
            fields, pasted = bench_fields(parse_paste(run.paste))
        except PlannerError as exc:
            raise PlannerError(f"measured_runs[{index}].paste", exc.message) from None
        args = args.model_copy(update=fields)
        measured = {**pasted, **measured}
    if not measured:
        raise PlannerError(
            f"measured_runs[{index}]",
            Text("no measured figures: give measured keys (mean_tpot_ms, ...) or a paste"),
        )
    return args, measured


def compared_run(run: MeasuredRun, index: int) -> RunComparison:
    """One measured run against what the shipped model predicts for its configuration; errors name the
    run (``measured_runs[index]``) and its field."""
    args, measured = _run_inputs(run, index)
    resolved = resolve_strict(run)
    planned = estimate_for(resolved)
    if not planned.fits or planned.num_gpu_blocks <= 0:
        raise PlannerError(
            f"measured_runs[{index}]",
            Text(
                "the planner says vLLM would not start this run's configuration: give the serve command it "
                "ran with (e.g. --gpu-memory-utilization, --max-model-len)"
            ),
        )
    try:
        return compare_run(
            estimate=planned,
            model=resolved.model,
            device=resolved.device,
            serve=resolved.serve,
            args=args,
            measured=measured,
        )
    except SimulationError:
        raise PlannerError(
            f"measured_runs[{index}].bench", Text("this run cannot be simulated on the planned pool")
        ) from None


def cluster_of(runs: list[MeasuredRun]) -> ClusterFit | None:
    """Your cluster's factors from your runs (None without runs); errors name the run and field."""
    if not runs:
        return None
    if len(runs) > MAX_MEASURED_RUNS:
        raise PlannerError("measured_runs", Text("at most {n} measured runs", n=MAX_MEASURED_RUNS))
    return fit_cluster([compared_run(run, i) for i, run in enumerate(runs)])


PAGE_FIELD = "my_runs"  # the planner page's "Your own runs" box
FEWER_RUNS = N_("fewer runs, or runs of fewer prompts (num_prompts) or clients (max_concurrency)")


def request_cluster(
    measured: list[MeasuredRun], box: str, base: PlannerParams, bench: BenchArgs | None
) -> ClusterFit | None:
    """/api/performance's cluster: its ``measured_runs`` and the page's ``my_runs`` box together; an
    error in one of the box's runs names ``my_runs``, not its place in the joined list."""
    pasted, notes = page_runs(box, base, bench) if box.strip() else ([], [])
    try:
        # each run is simulated: past the request's CPU budget the runs are what to shrink
        with deadline.naming(field="measured_runs" if measured else PAGE_FIELD, advice=Text(FEWER_RUNS)):
            fit = cluster_of([*measured, *pasted])
    except PlannerError as exc:
        index = exc.field.removeprefix("measured_runs[").partition("]")[0]
        if exc.field.startswith("measured_runs[") and index.isdigit() and int(index) >= len(measured):
            raise PlannerError(PAGE_FIELD, exc.message) from None
        raise
    return fit.model_copy(update={"notes": notes}) if fit is not None and notes else fit


SERVE_PREFIXES = ("vllm serve", "python -m vllm", "python3 -m vllm")
RESULT_HEADER = "serving benchmark result"
FIGURE_UNITS = ("(ms):", "(tok/s):", "(req/s):")  # a line of figures: the next header starts another run


def _json_lines(lines: list[str], first: int) -> int:
    """How many lines, from ``first``, the --save-result JSON object starting there spans (1 when it does
    not parse: that line is then named as not a JSON object). vLLM writes it on one line; pasted from
    an editor or ``jq`` it spans many."""
    rest = "\n".join(lines[first:])
    try:
        _, end = json.JSONDecoder().raw_decode(rest.lstrip())
    except ValueError:
        return 1
    return rest.lstrip()[:end].count("\n") + 1


def _chunks(text: str) -> list[tuple[str | None, int, list[str]]]:
    """The box's runs: (the serve command above it, its first line number, its lines). A `vllm serve`
    line applies to the runs below it; a JSON object (--save-result, on one line or many) is one run; a
    'Serving Benchmark Result' header after figures starts the next run."""
    runs: list[tuple[str | None, int, list[str]]] = []
    command: str | None = None
    current: list[str] = []
    start = 1

    def close() -> None:
        if any(line.strip() for line in current):
            runs.append((command, start, list(current)))
        current.clear()

    lines = text.splitlines()
    index = 0
    while index < len(lines):
        raw = lines[index]
        line, n = raw.strip(), index + 1
        index += 1
        if line.lower().startswith(SERVE_PREFIXES):
            close()
            command, start = line, n + 1
        elif line.startswith("{"):
            close()
            span = _json_lines(lines, n - 1)
            start = n
            current.extend(lines[n - 1 : n - 1 + span])
            close()
            index, start = n - 1 + span, n + span
        elif RESULT_HEADER in line.lower() and any(unit in x for x in current for unit in FIGURE_UNITS):
            close()
            start = n
            current.append(raw)
        else:
            if not current:
                start = n
            current.append(raw)
    close()
    return runs


def planner_only(params: PlannerParams) -> StrictPlannerParams:
    """The planner's own fields of a request or page that adds its own (fleet, recommend, the API's
    ``bench`` and ``measured_runs``): what a pasted run's configuration starts from."""
    planner_fields = StrictPlannerParams.model_fields
    return StrictPlannerParams.model_validate(
        {k: v for k, v in params.model_dump().items() if k in planner_fields}
    )


def _unstated_rate(start: int) -> Msg:
    return Text(
        "Your run at line {n} states no request rate, so it was simulated at inf: that is vLLM's default, and vLLM (0.10.2 and later) prints 'Request rate configured (RPS)' in the result block only for a finite rate. If it ran at a rate, paste the 'Traffic request rate' line above the block.",
        n=start,
    )


def page_runs(text: str, base: PlannerParams, bench: BenchArgs | None) -> tuple[list[MeasuredRun], list[Msg]]:
    """The pasted runs of the page's box as measured runs of ``base``'s configuration, each changed by
    the serve command above it, and what the page says about how they were read; a bad paste is a
    PlannerError on ``my_runs`` naming the box's line.

    A run that states no request rate runs at inf (vLLM's default; its block prints the rate only
    when finite), not at the benchmark fieldset's rate, which describes the user's next run."""
    runs: list[MeasuredRun] = []
    notes: list[Msg] = []
    base = planner_only(base)  # /api/performance's request adds bench and measured_runs (were a 500 here)
    data = {**base.model_dump(), "my_runs": ""}
    for command, start, lines in _chunks(text)[:MAX_MEASURED_RUNS]:
        params = base
        if command is not None:
            try:
                parsed = parse_serve_command(command, vllm_version=base.vllm_version)
            except PlannerError as exc:
                raise PlannerError(
                    PAGE_FIELD, Text("line {n}: {msg}", n=start - 1, msg=exc.message)
                ) from None
            params = StrictPlannerParams.model_validate(
                {**data, **serve_values(parsed.serve), **({"model": parsed.model} if parsed.model else {})}
            )
        # padded so that a line number in the paste's message is the box's own line number
        paste = "\n" * (start - 1) + "\n".join(lines)
        try:
            fields, _ = bench_fields(
                parse_paste(paste if not lines[0].lstrip().startswith("{") else "\n".join(lines))
            )
        except PlannerError as exc:
            message = exc.message
            if lines[0].lstrip().startswith("{"):
                message = Text("line {n}: not a --save-result JSON object", n=start)
            raise PlannerError(PAGE_FIELD, message) from None
        run_bench = bench or BenchArgs()
        if "request_rate" not in fields:
            run_bench = run_bench.model_copy(update={"request_rate": math.inf})
            notes.append(_unstated_rate(start))
        runs.append(
            MeasuredRun.model_validate(
                {**params.model_dump(), "my_runs": "", "paste": paste, "bench": run_bench}
            )
        )
    return runs, notes


# the planner fields that are `vllm bench serve` arguments (same names as BenchArgs')
BENCH_FIELDS = (
    "num_prompts",
    "max_concurrency",
    "request_rate",
    "burstiness",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
    "random_prefix_len",
    "dataset_name",
)


def bench_of(params: PlannerParams) -> BenchArgs | None:
    """The page's `vllm bench serve` arguments (None: the fieldset is off and no argument is given);
    a bad argument is a PlannerError naming its field."""
    given = {name: getattr(params, name) for name in BENCH_FIELDS if getattr(params, name) is not None}
    if not (params.bench_serve or given or params.ignore_eos):
        return None
    try:
        return BenchArgs.model_validate({**given, "ignore_eos": params.ignore_eos})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise PlannerError(".".join(str(p) for p in first["loc"]), message_of(first)) from None


def page_cluster(params: PlannerParams, bench: BenchArgs | None) -> ClusterFit | None:
    """Your cluster's factors from the page's "Your own runs" box (None when it is empty)."""
    return request_cluster([], params.my_runs, params, bench)


@dataclass(frozen=True)
class PageRuns:
    """A page's benchmark fieldset and "Your own runs" box, read so that a bad argument or paste is kept
    as its error (shown beside the figures, which then answer without it) rather than refusing the page:
    the Speed section, the fleet and the recommender all read them this way."""

    bench: BenchArgs | None = None
    cluster: ClusterFit | None = None
    bench_error: PlannerError | None = None
    runs_error: PlannerError | None = None

    @property
    def notes(self) -> list[Msg]:
        """How the pasted runs were read (a run without a stated rate ran at inf)."""
        return self.cluster.notes if self.cluster is not None else []


def page_runs_lenient(params: PlannerParams) -> PageRuns:
    """The page's benchmark and your runs' cluster; an error in either is kept, not raised."""
    bench: BenchArgs | None = None
    bench_error = runs_error = None
    try:
        bench = bench_of(params)
    except PlannerError as exc:
        bench_error = exc
    try:
        cluster = page_cluster(params, bench)
    except PlannerError as exc:
        cluster, runs_error = None, exc
    return PageRuns(bench, cluster, bench_error, runs_error)


def api_cluster(params: PlannerParams, measured: list[MeasuredRun]) -> ClusterFit | None:
    """An API's cluster: its ``measured_runs`` and the ``my_runs`` box together; any error is raised
    (the APIs answer a bad run with a 422 naming it)."""
    return request_cluster(measured, params.my_runs, params, bench_of(params))


def calibrated_caption(runs: int) -> str:
    """What every speed figure scaled by your cluster's runs says (the page's and the API's wording)."""
    if runs == 1:
        return t("calibrated on your 1 run")
    return t("calibrated on your {n} runs", n=runs) if runs else ""
