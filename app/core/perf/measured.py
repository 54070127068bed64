"""Your own runs as pasted text: split a box or a file into its `vllm bench serve` runs and read each
into the benchmark it ran and the figures it measured. One reader for the planner page's "Your own
runs" box, the fleet, the recommender and `kvplan perf --runs FILE`.

What a run does not state is vLLM's default for that run, not the fieldset's (which describes the
user's next run), and a note says so:

* no rate: ``--request-rate`` inf. vLLM 0.10.2 … 0.33.0 print "Request rate configured (RPS)" in the
  block only for a finite rate (vllm/benchmarks/serve.py).
* no "Maximum request concurrency": no cap. serve.py (0.33.0, lines 1223-1224) prints that line in the
  block only ``if max_concurrency is not None``; --save-result writes ``max_concurrency`` as null then.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from app.core.errors import PlannerError
from app.core.perf.bench_args import BenchArgs, printed_lengths
from app.core.perf.bench_run import whole_clients
from app.core.perf.cluster import MAX_RUN_FACTOR, ClusterFit, RunComparison, fit_cluster, implausible_key
from app.core.perf.paste import bench_fields, parse_paste, paste_names
from app.core.perf.predict import compare_run
from app.core.perf.simulate import SimulationError
from app.core.pydantic_messages import message_of
from app.core.result import Estimate
from app.core.specs import DeviceSpec, ModelSpec, ServeConfig
from app.core.text import Msg, Text

MAX_MEASURED_RUNS = 64  # runs one box, request or file may hold (each is an estimate and a simulated run)
# the text of runs one API paste or `kvplan perf --runs FILE` may hold: 64 printed blocks are ~60 kB (the
# page's box holds less, 65,536 characters: it rides in the permalink)
MAX_RUNS_CHARS = 200_000
SERVE_PREFIXES = ("vllm serve", "python -m vllm", "python3 -m vllm")
RESULT_HEADER = "serving benchmark result"
FIGURE_UNITS = ("(ms):", "(tok/s):", "(req/s):")  # a line of figures: the next header starts another run


@dataclass(frozen=True)
class PastedRun:
    """One run of a box: the serve command above it (None: the page's own configuration), the line
    its text starts on (1-based, the box's own numbering) and its lines; ``saved``: its --save-result
    JSON object as split_runs decoded it (read_run does not decode it again); ``command_line``: the line
    the serve command is on (0: none), which blank lines or a JSON run between them put anywhere above."""

    command: str | None
    start: int
    lines: tuple[str, ...]
    saved: dict[str, Any] | None = None
    command_line: int = 0


@dataclass(frozen=True)
class ReadRun:
    """What one pasted run ran (``bench``) and measured (vLLM's result keys, positive and finite)."""

    bench: BenchArgs
    measured: dict[str, float]
    notes: tuple[Msg, ...]
    # (prompt, generated) tokens per request where the paste printed its totals (bench_fields' means):
    # a ShareGPT run then runs as its drawn requests rescaled to them (bench_args.printed_lengths)
    means: tuple[int, int] | None = None


@dataclass(frozen=True)
class _Box:
    """A box's lines joined once, and where each starts in the joined text: a JSON object is decoded
    from a window of it, not from a copy of the rest of the box per line (that was quadratic: 21,845
    lines of ``{}`` copied 700 MB, 1.4 s of a worker)."""

    lines: list[str]
    joined: str
    starts: list[int]

    @classmethod
    def of(cls, lines: list[str]) -> _Box:
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line) + 1)
        return cls(lines, "\n".join(lines), starts)

    def window(self, first: int, last: int) -> str:
        """Lines ``first`` .. ``last`` (exclusive), the first without its leading blanks."""
        line = self.lines[first]
        lead = len(line) - len(line.lstrip())
        return self.joined[self.starts[first] + lead : self.starts[last] - 1]


def _json_lines(box: _Box, first: int) -> tuple[int, dict[str, Any] | None]:
    """How many lines, from ``first``, the --save-result JSON object starting there spans, and the object
    (None: it does not decode, or is not an object). vLLM writes it on one line; pasted from an editor
    or ``jq`` it spans many. One that does not parse spans to the line of its error, so that reading it
    names that line (an object that never closes: the box's last line).

    The object is decoded from a window of lines that doubles while the decoder stops on its last line
    (it may have run out of text there) or cannot say where it stopped: each decode reads about the
    lines it spans, so a box is read in linear time (what the rest of the box would decode to is the
    same: the decoder reads left to right, and no JSON token crosses a line end)."""
    size = len(box.lines)
    count = 2
    while True:
        last = min(first + count, size)
        window, whole_rest = box.window(first, last), last == size
        count *= 2
        try:
            data, end = json.JSONDecoder().raw_decode(window)
        except json.JSONDecodeError as exc:
            if whole_rest or exc.lineno < last - first:
                return exc.lineno, None
            continue
        except (ValueError, RecursionError):  # a number over 4,300 digits, nesting past the recursion limit
            if whole_rest:
                return 1, None
            continue
        # text after the object on its last line is the run's too: json.loads then refuses it, naming it
        line_end = window.find("\n", end)
        after = window[end:] if line_end < 0 else window[end:line_end]
        whole = isinstance(data, dict) and not after.strip()
        return window.count("\n", 0, end) + 1, data if whole else None


def split_runs(text: str) -> list[PastedRun]:
    """The box's runs. A `vllm serve` line applies to the runs below it; a JSON object (--save-result,
    on one line or many) is one run; a 'Serving Benchmark Result' header after figures starts the next."""
    runs: list[PastedRun] = []
    command: str | None = None
    current: list[str] = []
    start = command_line = 1

    def close(saved: dict[str, Any] | None = None) -> None:
        if any(line.strip() for line in current):
            runs.append(PastedRun(command, start, tuple(current), saved, command_line if command else 0))
        current.clear()

    lines = text.splitlines()
    box = _Box.of(lines)
    index = 0
    while index < len(lines):
        raw = lines[index]
        line, n = raw.strip(), index + 1
        index += 1
        if line.lower().startswith(SERVE_PREFIXES):
            close()
            command, start, command_line = line, n + 1, n
        elif line.startswith("{"):
            close()
            span, saved = _json_lines(box, n - 1)
            start = n
            current.extend(lines[n - 1 : n - 1 + span])
            close(saved)
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


def _unstated(start: int, *, rate: bool, cap: bool) -> list[Msg]:
    notes: list[Msg] = []
    if rate:
        notes.append(
            Text(
                "Your run at line {n} states no request rate, so it was simulated at inf: that is vLLM's default, and vLLM (0.10.2 and later) prints 'Request rate configured (RPS)' in the result block only for a finite rate. If it ran at a rate, paste the 'Traffic request rate' line above the block.",
                n=start,
            )
        )
    if cap:
        notes.append(
            Text(
                "Your run at line {n} states no 'Maximum request concurrency', so it was simulated without a cap: that is vLLM's default, and vLLM prints that line only when --max-concurrency was set.",
                n=start,
            )
        )
    return notes


def read_run(
    run: PastedRun, *, bench: BenchArgs | None, field: str, explicit: frozenset[str] = frozenset()
) -> ReadRun:
    """One pasted run: the fieldset's benchmark (``bench``, else vLLM's defaults) changed by what the
    paste states, a rate or cap it does not state at vLLM's default (unless named in ``explicit``:
    the fields an API run's own ``bench`` set); a bad paste is a PlannerError on ``field`` naming the
    box's line."""
    # padded so that a line number in the paste's message (a JSON error's, a key's) is the box's own
    text = "\n" * (run.start - 1) + "\n".join(run.lines)
    try:
        found = parse_paste(text, saved=run.saved)
        fields, measured = bench_fields(found)
    except PlannerError as exc:
        raise PlannerError(field, exc.message) from None
    except OverflowError:  # a count past a float's range (total_input_tokens of 400 digits)
        raise PlannerError(
            field,
            Text(
                "line {n}: not a JSON object vLLM writes (a number too long or nesting too deep)", n=run.start
            ),
        ) from None
    no_rate = "request_rate" not in fields and "request_rate" not in explicit
    no_cap = "max_concurrency" not in fields and "max_concurrency" not in explicit
    defaults: dict[str, object] = {"request_rate": math.inf} if no_rate else {}
    if no_cap:
        defaults["max_concurrency"] = None
    try:
        args = BenchArgs.model_validate({**(bench or BenchArgs()).model_dump(), **defaults, **fields})
    except ValidationError as exc:
        first = exc.errors()[0]
        # pydantic's English as a catalog sentence: a zh page names the bound in Chinese
        names = paste_names(found, printed=not text.lstrip().startswith("{"))
        key = str(first["loc"][0])
        raise PlannerError(
            field, Text("line {n}: {key}: {msg}", n=run.start, key=names.get(key, key), msg=message_of(first))
        ) from None
    kept = {k: v for k, v in measured.items() if 0 < v < math.inf}
    printed = "random_input_len" in fields and "random_output_len" in fields
    means = (args.random_input_len, args.random_output_len) if printed else None
    return ReadRun(args, kept, tuple(_unstated(run.start, rate=no_rate, cap=no_cap)), means)


def refuse_unstartable(estimate: Estimate, *, field: str) -> None:
    """A measured run is compared only on a configuration vLLM would start: else a PlannerError on
    ``field`` asking for the serve command it ran with."""
    if not estimate.fits or estimate.num_gpu_blocks <= 0:
        raise PlannerError(
            field,
            Text(
                "the planner says vLLM would not start this run's configuration: give the serve command it "
                "ran with (e.g. --gpu-memory-utilization, --max-model-len)"
            ),
        )


@contextlib.contextmanager
def simulated_as(field: str) -> Iterator[None]:
    """A measured run's simulation (predict.compare_run) that cannot run on the planned pool is a
    PlannerError on ``field``.bench."""
    try:
        yield
    except SimulationError:
        raise PlannerError(
            f"{field}.bench", Text("this run cannot be simulated on the planned pool")
        ) from None


# One reader for every way runs arrive (the page's box, an API's measured_runs, `kvplan perf --runs`):
# the same limits, the same comparison, the same notes.


def runs_of(text: str, *, field: str) -> tuple[list[PastedRun], list[Msg]]:
    """The runs of a box, an API paste or a --runs file: at most MAX_RUNS_CHARS of text (a longer one is
    a PlannerError on ``field``) and the first MAX_MEASURED_RUNS runs, with a note when more were left."""
    if len(text) > MAX_RUNS_CHARS:
        raise PlannerError(field, Text("at most {limit:,} characters of runs", limit=MAX_RUNS_CHARS))
    runs = split_runs(text)
    if len(runs) <= MAX_MEASURED_RUNS:
        return runs, []
    return runs[:MAX_MEASURED_RUNS], [
        Text(
            "Only the first {n} of your {total} runs are read (each is simulated; at most {n} a request).",
            n=MAX_MEASURED_RUNS,
            total=len(runs),
        )
    ]


@dataclass(frozen=True)
class PlannedRun:
    """A measured run on the configuration it ran: the planner's estimate of it, and what the run
    ran (its benchmark) and measured; ``field`` names it in an error."""

    estimate: Estimate
    model: ModelSpec
    device: DeviceSpec
    serve: ServeConfig
    read: ReadRun
    field: str


def compared(run: PlannedRun) -> RunComparison:
    """One measured run against what the shipped model predicts for it, on a configuration vLLM would
    start (else a PlannerError on its field) and a pool its benchmark can run on."""
    refuse_unstartable(run.estimate, field=run.field)
    with simulated_as(run.field):
        comparison = compare_run(
            estimate=run.estimate,
            model=run.model,
            device=run.device,
            serve=run.serve,
            args=run.read.bench,
            measured=run.read.measured,
            lengths=printed_lengths(run.read.bench, means=run.read.means),
        )
    refuse_implausible(comparison, field=run.field)
    return replace(comparison, clients=run_clients(run.read.bench, comparison))


class ImplausibleRunError(PlannerError):
    """A run's figure the planner cannot take as measured on its configuration (cluster.MAX_RUN_FACTOR)."""


def refuse_implausible(comparison: RunComparison, *, field: str) -> None:
    """A run whose figure is over MAX_RUN_FACTOR x, or under its inverse, the model's prediction for it
    is an ImplausibleRunError on ``field`` naming the key (a pasted 1e-300 ms was a 500 downstream)."""
    found = implausible_key(comparison)
    if found is None:
        return
    key, measured, predicted = found
    raise ImplausibleRunError(
        field,
        Text(
            "{key}: {measured:.4g} is not a figure of this configuration (the planner predicts "
            "{predicted:.4g}; a run's figure is kept within 1/{limit:g} to {limit:g} times it): check its "
            "units and the serve command it ran with",
            key=key,
            measured=measured,
            predicted=predicted,
            limit=MAX_RUN_FACTOR,
        ),
    )


def run_clients(args: BenchArgs, comparison: RunComparison) -> int:
    """The clients a run kept in flight (BenchArgs.clients_in_flight): at a finite rate with no cap,
    Little's law on its measured request throughput and mean E2EL (the prediction's where it printed
    neither), not its prompt count."""
    figures = {**comparison.predicted, **comparison.measured}
    in_flight = args.clients_in_flight(
        request_throughput=figures["request_throughput"], mean_e2el_s=figures["mean_e2el_ms"] / 1000.0
    )
    return whole_clients(in_flight)


def fit_runs(runs: Sequence[tuple[RunComparison, Sequence[Msg]]], *, field: str) -> ClusterFit | None:
    """Your cluster's factors from compared runs, each with how it was read (its notes, kept on the fit);
    None without runs; more than MAX_MEASURED_RUNS is a PlannerError on ``field``."""
    if not runs:
        return None
    if len(runs) > MAX_MEASURED_RUNS:
        raise PlannerError(field, Text("at most {n} measured runs", n=MAX_MEASURED_RUNS))
    fit = fit_cluster([comparison for comparison, _ in runs])
    notes = [note for _, run_notes in runs for note in run_notes]
    return fit.model_copy(update={"notes": notes}) if notes else fit
