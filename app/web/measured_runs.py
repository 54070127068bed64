"""`measured_runs`: your cluster's `vllm bench serve` results, each a performance request (the planner's
fields and ``bench``) with the measured keys under vLLM's names, or a ``paste`` of the printed block /
--save-result JSON. Used by /api/performance; /api/fleet reads the same shape (app/web/inputs later)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import ConfigDict, Field, ValidationError

from app.core import deadline
from app.core.command import ParsedCommand, parse_serve_command
from app.core.errors import PlannerError
from app.core.perf.bench_args import BenchArgs
from app.core.perf.calibrated import RunsScope
from app.core.perf.cluster import ClusterFit, MeasuredKeys, RunComparison
from app.core.perf.measured import (
    MAX_MEASURED_RUNS,
    MAX_RUNS_CHARS,
    ImplausibleRunError,
    PastedRun,
    PlannedRun,
    ReadRun,
    compared,
    fit_runs,
    read_run,
    runs_of,
    split_runs,
)
from app.core.text import N_, Msg, Text, TextList
from app.web.i18n import tr
from app.web.inputs.params import PlannerParams, StrictPlannerParams, serve_values
from app.web.inputs.resolve import estimate_for, resolve_strict
from app.web.validation import message_of


class MeasuredRun(StrictPlannerParams):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    bench: BenchArgs = Field(default_factory=BenchArgs)
    measured: MeasuredKeys = Field(default_factory=MeasuredKeys)
    paste: str | None = Field(default=None, max_length=MAX_RUNS_CHARS)


def _one_run(paste: str, *, field: str) -> PastedRun:
    """An API run's paste as the page box splits it, which must hold one run and no `vllm serve` line: the
    entry's own fields are its configuration (review9b: two printed blocks merged into one run, the last
    value of each key winning, and a serve line naming another model was ignored without a word)."""
    runs = split_runs(paste)
    if len(runs) > 1:
        raise PlannerError(
            field, Text("holds {n} runs: give each run its own measured_runs entry", n=len(runs))
        )
    if runs and runs[0].command is not None:
        raise PlannerError(
            field,
            Text(
                "a vllm serve line: give the run's configuration as this entry's fields (model, tensor_parallel_size, ...), or paste it in the page's 'Your own runs' box"
            ),
        )
    return runs[0] if runs else PastedRun(None, 1, ())


def _run_inputs(run: MeasuredRun, index: int) -> tuple[ReadRun, list[Msg]]:
    """What one run ran and measured, and how its paste was read (a rate or cap it does not state:
    vLLM's default, said as the box says it, prefixed by the run's field)."""
    measured = run.measured.values()
    args = run.bench
    notes: list[Msg] = []
    if run.paste:
        # the page box's reader: the paste's counts and rates validated as BenchArgs (model_copy had
        # skipped that: a negative rate or a 1e300 count was a 500), its figures kept positive and finite
        field = f"measured_runs[{index}].paste"
        read = read_run(
            _one_run(run.paste, field=field),
            bench=args,
            field=field,
            explicit=frozenset(args.model_fields_set),
        )
        args = read.bench
        measured = {**read.measured, **measured}
        # round 8 dropped these: an API paste without a rate was simulated at inf and nothing said so
        notes = [TextList(COLON, [field, note]) for note in read.notes]
    if not measured:
        raise PlannerError(
            f"measured_runs[{index}]",
            Text("no measured figures: give measured keys (mean_tpot_ms, ...) or a paste"),
        )
    return ReadRun(args, measured, ()), notes


def _compared(run: MeasuredRun, index: int) -> tuple[RunComparison, list[Msg]]:
    read, notes = _run_inputs(run, index)
    resolved = resolve_strict(run)
    planned = PlannedRun(
        estimate=estimate_for(resolved),
        model=resolved.model,
        device=resolved.device,
        serve=resolved.serve,
        read=read,
        field=f"measured_runs[{index}]",
    )
    return compared(planned), notes


def compared_run(run: MeasuredRun, index: int) -> RunComparison:
    """One measured run against what the shipped model predicts for its configuration; errors name the
    run (``measured_runs[index]``) and its field."""
    return _compared(run, index)[0]


def cluster_of(runs: list[MeasuredRun]) -> ClusterFit | None:
    """Your cluster's factors from your runs (None without runs), with how their pastes were read;
    errors name the run and field."""
    if len(runs) > MAX_MEASURED_RUNS:  # before any run is simulated
        raise PlannerError("measured_runs", Text("at most {n} measured runs", n=MAX_MEASURED_RUNS))
    return fit_runs([_compared(run, i) for i, run in enumerate(runs)], field="measured_runs")


PAGE_FIELD = "my_runs"  # the planner page's "Your own runs" box
COLON = N_(": ")  # a run's field before what is said of it
FEWER_RUNS = N_("fewer runs, or runs of fewer prompts (num_prompts) or clients (max_concurrency)")


def request_cluster(
    measured: list[MeasuredRun], box: str, base: PlannerParams, bench: BenchArgs | None
) -> ClusterFit | None:
    """/api/performance's cluster: its ``measured_runs`` and the page's ``my_runs`` box together; an
    error in one of the box's runs names ``my_runs``, not its place in the joined list."""
    pasted, notes, starts = page_runs(box, base, bench) if box.strip() else ([], [], [])
    try:
        # each run is simulated: past the request's CPU budget the runs are what to shrink
        with deadline.naming(field="measured_runs" if measured else PAGE_FIELD, advice=Text(FEWER_RUNS)):
            fit = cluster_of([*measured, *pasted])
    except PlannerError as exc:
        index = exc.field.removeprefix("measured_runs[").partition("]")[0]
        if exc.field.startswith("measured_runs[") and index.isdigit() and int(index) >= len(measured):
            if isinstance(exc, ImplausibleRunError):  # which figure: the box's line of that run
                line = starts[int(index) - len(measured)]
                raise PlannerError(PAGE_FIELD, Text("line {n}: {msg}", n=line, msg=exc.message)) from None
            raise PlannerError(PAGE_FIELD, exc.message) from None
        raise
    return fit.model_copy(update={"notes": [*fit.notes, *notes]}) if fit is not None and notes else fit


def planner_only(params: PlannerParams) -> StrictPlannerParams:
    """The planner's own fields of a request or page that adds its own (fleet, recommend, the API's
    ``bench`` and ``measured_runs``): what a pasted run's configuration starts from."""
    planner_fields = StrictPlannerParams.model_fields
    return StrictPlannerParams.model_validate(
        {k: v for k, v in params.model_dump().items() if k in planner_fields}
    )


def _run_params(data: dict[str, object], parsed: ParsedCommand, *, line: int) -> StrictPlannerParams:
    """The configuration a serve line ran: the page's, changed by the line. A flag the command reader
    took but the planner refuses (``-tp 3``: not a power of two; ``--quantization xx``) is a
    PlannerError on ``my_runs`` naming the box's line and the field, as the CLI names it (was a 500)."""
    try:
        return StrictPlannerParams.model_validate(
            {**data, **serve_values(parsed.serve), **({"model": parsed.model} if parsed.model else {})}
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        message = (
            Text("line {n}: {key}: {msg}", n=line, key=key, msg=message_of(first))
            if key
            else Text("line {n}: {msg}", n=line, msg=message_of(first))
        )
        raise PlannerError(PAGE_FIELD, message) from None


def page_runs(
    text: str, base: PlannerParams, bench: BenchArgs | None
) -> tuple[list[MeasuredRun], list[Msg], list[int]]:
    """The pasted runs of the page's box as measured runs of ``base``'s configuration, each changed by
    the serve command above it, what the page says about how they were read, and the line each run
    starts on; a bad paste is a PlannerError on ``my_runs`` naming the box's line. Each paste is read
    once (app.core.perf.measured): a rate or cap it does not state is vLLM's default for that run."""
    runs: list[MeasuredRun] = []
    base = planner_only(base)  # /api/performance's request adds bench and measured_runs (were a 500 here)
    data = {**base.model_dump(), "my_runs": ""}
    pasted_runs, notes = runs_of(text, field=PAGE_FIELD)
    for pasted in pasted_runs:
        params = base
        if pasted.command is not None:
            try:
                parsed = parse_serve_command(pasted.command, vllm_version=base.vllm_version)
            except PlannerError as exc:
                line = pasted.command_line
                # the flag it names (--gpu-memory-utilization 1.5: gpu_memory_utilization), unless the
                # command as a whole is wrong
                message = (
                    Text("line {n}: {key}: {msg}", n=line, key=exc.field, msg=exc.message)
                    if exc.field not in ("", "command")
                    else Text("line {n}: {msg}", n=line, msg=exc.message)
                )
                raise PlannerError(PAGE_FIELD, message) from None
            params = _run_params(data, parsed, line=pasted.command_line)
        read = read_run(pasted, bench=bench, field=PAGE_FIELD)
        notes.extend(read.notes)
        runs.append(
            MeasuredRun.model_validate(
                {**params.model_dump(), "my_runs": "", "bench": read.bench, "measured": read.measured}
            )
        )
    return runs, notes, [pasted.start for pasted in pasted_runs]


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


BENCH_PREFIX = "bench."  # the API's name of a benchmark argument (the page's is the argument's own)


def page_bench_error(exc: PlannerError) -> PlannerError | None:
    """``exc`` under the page's field name when it is about a benchmark argument (``bench.request_rate``
    -> ``request_rate``, the form's box), else None."""
    if not exc.field.startswith(BENCH_PREFIX):
        return None
    return PlannerError(exc.field.removeprefix(BENCH_PREFIX), exc.message)


def bench_given(params: PlannerParams) -> bool:
    """Whether the page states a benchmark: its fieldset is on, or any of its arguments is given."""
    return (
        params.bench_serve or params.ignore_eos or any(getattr(params, n) is not None for n in BENCH_FIELDS)
    )


def bench_of(params: PlannerParams) -> BenchArgs | None:
    """The page's `vllm bench serve` arguments (None: the fieldset is off and no argument is given);
    a bad argument is a PlannerError naming its field."""
    if not bench_given(params):
        return None
    given = {name: getattr(params, name) for name in BENCH_FIELDS if getattr(params, name) is not None}
    try:
        return BenchArgs.model_validate({**given, "ignore_eos": params.ignore_eos})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise PlannerError(".".join(str(p) for p in first["loc"]), message_of(first)) from None


FIT_CACHE_SIZE = 32  # pages whose fits are kept: Speed, fleet and recommender of one page load share one


def page_cluster(params: PlannerParams, bench: BenchArgs | None) -> ClusterFit | None:
    """Your cluster's factors from the page's "Your own runs" box (None when it is empty). The fit (an
    estimate and a simulated benchmark per run, up to 64) is kept by the box's text, the configuration
    the runs start from and the benchmark, so the Speed section, the fleet and the recommender of one
    page, and every slider move that changes neither, fit it once."""
    if not params.my_runs.strip():
        return None
    # the Speed section's own workload (clients, lengths) is not the runs': each run brings its benchmark
    speed_only = {"concurrency": None, "input_tokens": None, "output_tokens": None}
    base = planner_only(params).model_copy(update={"my_runs": "", **speed_only})
    bench_key = bench.model_dump_json() if bench is not None else ""
    fit = _cached_fit(params.my_runs, base.model_dump_json(), bench_key)
    if isinstance(fit, PlannerError):
        raise fit.with_traceback(None)  # the kept instance, without the last raise's frames
    return fit


@functools.lru_cache(maxsize=FIT_CACHE_SIZE)
def _cached_fit(box: str, base_json: str, bench_json: str) -> ClusterFit | PlannerError | None:
    """The fit, or the PlannerError a bad paste raises: kept too, since lru_cache keeps no exception and
    a bad box was otherwise read and simulated again (up to 64 runs) on every slider move. A spent CPU
    budget (deadline.WorkBudgetError) is not a PlannerError and is not kept: it is the request's."""
    base = StrictPlannerParams.model_validate_json(base_json)
    bench = BenchArgs.model_validate_json(bench_json) if bench_json else None
    try:
        return request_cluster([], box, base, bench)
    except PlannerError as exc:
        return exc


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


def api_runs(params: PlannerParams, measured: list[MeasuredRun], bench: BenchArgs | None = None) -> PageRuns:
    """An API's benchmark and cluster, each read once: ``bench`` (the body's own ``bench`` object), else
    the page's benchmark fields (:func:`bench_of`); the cluster of its ``measured_runs`` and the
    ``my_runs`` box together, the box's runs starting from that benchmark. Any error is raised (the
    APIs answer a bad argument or run with a 422 naming it)."""
    bench = bench or bench_of(params)
    return PageRuns(bench, request_cluster(measured, params.my_runs, params, bench))


def runs_scope(cluster: ClusterFit | None) -> RunsScope:
    """What your runs calibrate (app.core.perf.calibrated: the one rule every caption follows)."""
    return cluster.scope() if cluster is not None else RunsScope()


def runs_caption(runs: int, figures: Sequence[str]) -> str:
    """A page's line covering every speed figure, in the page's language: "calibrated on your N runs"
    when your runs measured every kind of figure, else which kinds ("TPOT calibrated on your 1 run");
    "" without runs. The APIs give the same caption in English (RunsScope.caption)."""
    return tr(RunsScope.of(runs, figures).caption())
