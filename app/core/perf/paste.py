"""Read a pasted `vllm bench serve` result: the printed "Serving Benchmark Result" block or the
``--save-result`` JSON. Labels and keys are vLLM 0.19.0's (vllm/benchmarks/serve.py); what the paste
says about the benchmark itself (prompts, concurrency, rate, mean lengths) becomes BenchArgs.

A bad paste raises PlannerError naming the line it could not read.
"""

from __future__ import annotations

import json
import math
from typing import Any

from app.core.errors import PlannerError
from app.core.perf.bench import RESULT_KEYS
from app.core.text import Text

FIELD = "measured_runs"
# printed label -> result key (serve.py's print lines; "Total Token" is the older capitalisation)
_LABELS = {
    "request throughput (req/s)": "request_throughput",
    "output token throughput (tok/s)": "output_throughput",
    "total token throughput (tok/s)": "total_token_throughput",
    **{
        f"{stat} {name.lower()} (ms)": f"{key_stat}_{name.lower()}_ms"
        for name in ("TTFT", "TPOT", "ITL", "E2EL")
        for stat, key_stat in (("mean", "mean"), ("median", "median"), ("p99", "p99"))
    },
}
_ARGS = {
    "successful requests": "completed",
    "maximum request concurrency": "max_concurrency",
    "max request concurrency": "max_concurrency",
    "traffic request rate": "request_rate",
    # inside the result block, printed only when the rate is not inf (serve.py: 0.10.2 to 0.33.0; 0.9.2
    # prints the rate only above the block, as "Traffic request rate")
    "request rate configured (rps)": "request_rate",
    "burstiness factor": "burstiness",
    "total input tokens": "total_input_tokens",
    "total generated tokens": "total_output_tokens",
}
_IGNORED = (
    "failed requests",
    "benchmark duration (s)",
    "peak output token throughput (tok/s)",
    "peak concurrent requests",
    "request goodput (req/s)",
    "backend",
)


def _number(text: str, *, line_no: int, line: str) -> float:
    head = text.strip().split()[0] if text.strip() else ""
    if head.lower() in ("inf", "infinity"):
        return math.inf
    if head.lower() in ("none", "not"):
        return math.nan
    try:
        return float(head)
    except ValueError:
        raise PlannerError(
            FIELD, Text("line {n}: cannot read a number in {line!r}", n=line_no, line=line.strip()[:120])
        ) from None


def parse_printed(text: str) -> dict[str, Any]:
    """The printed block (and the 'Traffic request rate' / 'Maximum request concurrency' lines vLLM
    prints just before it) as one flat dict of result keys and benchmark facts."""
    found: dict[str, Any] = {}
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip().lstrip("#").strip()
        if ":" not in line or line.startswith(("=", "-")):
            continue
        label, _, value = line.partition(":")
        key = label.strip().lower()
        if key in _LABELS:
            found[_LABELS[key]] = _number(value, line_no=n, line=raw)
        elif key in _ARGS:
            found[_ARGS[key]] = _number(value, line_no=n, line=raw)
        elif (
            key.startswith(("p", "mean ", "median ", "std ")) and key.endswith("(ms)") and key not in _IGNORED
        ):
            continue  # other percentiles: not among the answered keys
    if not any(k in found for k in RESULT_KEYS):
        raise PlannerError(
            FIELD,
            Text("no 'Serving Benchmark Result' figures found (expected lines like 'Mean TPOT (ms): 12.3')"),
        )
    return found


# --save-result keys this reader uses. serve.py (0.33.0, lines 1321-1346 and 2312-2330) writes each as
# a JSON number, except max_concurrency (null without a cap) and request_rate ("inf" when unlimited).
_COUNT_KEYS = ("completed", "num_prompts", "total_input_tokens", "total_output_tokens")
_NUMBER_KEYS = (*RESULT_KEYS, *_COUNT_KEYS, "burstiness", "max_concurrency", "request_rate")


def _type_name(value: object) -> str:
    """How a JSON value reads in a message: a string in quotes, else its JSON text (cut short)."""
    text = json.dumps(value, allow_nan=True)
    return text if len(text) <= 40 else text[:37] + "..."


def _wrong_type(data: dict[str, Any]) -> str | None:
    """The first key the reader uses whose value is not what vLLM writes there (a number; null for
    max_concurrency; "inf" for request_rate; a count finite), else None."""
    for key in _NUMBER_KEYS:
        if key not in data:
            continue
        value = data[key]
        if value is None and key == "max_concurrency":
            continue
        if isinstance(value, str) and key == "request_rate" and value.strip().lower() in ("inf", "infinity"):
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            return key
        if key in _COUNT_KEYS and not math.isfinite(value):
            return key
    return None


def _line_of(text: str, key: str) -> int:
    """The line of ``text`` (1-based) where ``"key"`` first appears (1 when it does not)."""
    quoted = f'"{key}"'
    return next((n for n, line in enumerate(text.splitlines(), start=1) if quoted in line), 1)


def parse_saved(text: str, *, saved: dict[str, Any] | None = None) -> dict[str, Any]:
    """A --save-result JSON object (``saved``: already decoded from ``text``); what is wrong names its
    line of ``text``: the JSON error's line, the object's first line when it holds none of vLLM's result
    keys, a key's line when its value has the wrong type."""
    first = next((n for n, line in enumerate(text.splitlines(), start=1) if line.strip()), 1)
    try:
        # not stripped: the error's line is the text's own
        data = saved if saved is not None else json.loads(text)
    except json.JSONDecodeError as exc:
        # the position only: the decoder's reason is English on a zh page
        raise PlannerError(
            FIELD, Text("line {n}, column {column}: not valid JSON", n=exc.lineno, column=exc.colno)
        ) from None
    except (ValueError, RecursionError):
        # json.loads' other refusals: an integer over 4,300 digits (ValueError), nesting past the
        # interpreter's recursion limit (RecursionError); both had been a 500
        raise PlannerError(
            FIELD,
            Text("line {n}: not a JSON object vLLM writes (a number too long or nesting too deep)", n=first),
        ) from None
    if not isinstance(data, dict):
        raise PlannerError(FIELD, Text("line {n}: not a JSON object", n=first))
    if not any(k in data for k in RESULT_KEYS):
        raise PlannerError(
            FIELD,
            Text(
                "line {n}: the JSON object has none of vLLM's result keys (mean_ttft_ms, mean_tpot_ms, output_throughput, ...): paste the file vllm bench serve --save-result wrote",
                n=first,
            ),
        )
    key = _wrong_type(data)
    if key is not None:
        raise PlannerError(
            FIELD,
            Text(
                "line {n}: {key} is {value}, not a number as vLLM writes it",
                n=_line_of(text, key),
                key=key,
                value=_type_name(data[key]),
            ),
        )
    return data


def parse_paste(text: str, *, saved: dict[str, Any] | None = None) -> dict[str, Any]:
    """A --save-result JSON object (``saved``: already decoded) or a printed block; line numbers in an
    error are ``text``'s own."""
    if text.strip().startswith("{"):
        return parse_saved(text, saved=saved)
    return parse_printed(text)


# printed label of each benchmark fact (serve.py's print lines), to name it as the block printed it
PRINTED_NAMES = {
    "completed": "Successful requests",
    "max_concurrency": "Maximum request concurrency",
    "request_rate": "Request rate configured (RPS)",
    "burstiness": "Burstiness factor",
    "total_input_tokens": "Total input tokens",
    "total_output_tokens": "Total generated tokens",
}


def paste_names(found: dict[str, Any], *, printed: bool) -> dict[str, str]:
    """Each BenchArgs field :func:`bench_fields` fills, as the paste names what it came from: a count of
    -3 is the paste's ``completed`` (or "Successful requests"), not a ``num_prompts`` it never wrote."""
    count = "completed" if found.get("completed") or "num_prompts" not in found else "num_prompts"
    sources = {
        "num_prompts": count,
        "random_input_len": "total_input_tokens",
        "random_output_len": "total_output_tokens",
        "max_concurrency": "max_concurrency",
        "request_rate": "request_rate",
        "burstiness": "burstiness",
    }
    return {f: PRINTED_NAMES.get(k, k) if printed else k for f, k in sources.items()}


TOTAL_LENGTHS = (("total_input_tokens", "random_input_len"), ("total_output_tokens", "random_output_len"))


def bench_fields(found: dict[str, Any]) -> tuple[dict[str, Any], dict[str, float]]:
    """(BenchArgs fields, measured result keys) from a parsed paste; a total of tokens that is not
    positive is passed on as it is, so that BenchArgs refuses it (:func:`paste_names` names it)."""
    measured = {
        k: float(found[k])
        for k in RESULT_KEYS
        if isinstance(found.get(k), int | float) and found[k] == found[k]
    }
    completed = found.get("completed") or found.get("num_prompts")
    args: dict[str, Any] = {}
    # a printed count of "inf" or "nan" says nothing of the run's size (int() of it was a 500)
    if completed and math.isfinite(completed):
        args["num_prompts"] = int(completed)
        for total, field in TOTAL_LENGTHS:
            value = found.get(total)
            if not value or not math.isfinite(value):
                continue  # not printed, or "inf" / "nan": says nothing of the lengths
            # a mean of at least one token; a total (or count) that is not positive is passed on for
            # BenchArgs to refuse, named as the paste names it
            args[field] = max(1, round(value / completed)) if value > 0 and completed > 0 else int(value)
    concurrency = found.get("max_concurrency")
    if isinstance(concurrency, int | float) and concurrency == concurrency and not math.isinf(concurrency):
        args["max_concurrency"] = int(concurrency)
    rate = found.get("request_rate")
    if isinstance(rate, str) and rate.strip().lower() in ("inf", "infinity"):
        rate = math.inf  # --save-result writes an unlimited rate as the string "inf" (serve.py)
    if isinstance(rate, int | float) and rate == rate:
        args["request_rate"] = float(rate)
    if isinstance(found.get("burstiness"), int | float):
        args["burstiness"] = float(found["burstiness"])
    return args, measured
