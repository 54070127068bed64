"""A bad --save-result JSON run names what is wrong and the box's line (issue 23, round 8 page fault 8).

Until round 8 every JSON run that failed to read was reported as "line N: not a --save-result JSON
object", N its first line: a missing brace, an object of some other tool and a key holding text all
read alike, and an object pasted over many lines that never closed was cut to its first line. The keys
and their JSON types are vLLM 0.33.0's (vllm/benchmarks/serve.py, lines 1321-1346 and 2312-2330:
numbers; max_concurrency null without a cap; request_rate "inf" when unlimited).
"""

from __future__ import annotations

import json

import pytest

from app.core.errors import PlannerError
from app.core.perf.measured import read_run, split_runs
from app.core.perf.paste import bench_fields, parse_paste

COMMAND = "vllm serve meta-llama/Llama-3.1-8B-Instruct"
GOOD = {"completed": 64, "total_input_tokens": 65536, "total_output_tokens": 16384, "mean_tpot_ms": 9.5}


def _error(box: str) -> str:
    runs = split_runs(box)
    with pytest.raises(PlannerError) as caught:
        for run in runs:
            read_run(run, bench=None, field="my_runs")
    assert caught.value.field == "my_runs"
    return caught.value.message


def test_a_good_pretty_printed_run_still_reads() -> None:
    runs = split_runs("\n".join([COMMAND, json.dumps(GOOD, indent=2)]))
    assert len(runs) == 1 and runs[0].start == 2
    read = read_run(runs[0], bench=None, field="my_runs")
    # 65,536 / 64 = 1,024 input and 16,384 / 64 = 256 output tokens a request
    assert (read.bench.num_prompts, read.bench.random_input_len, read.bench.random_output_len) == (
        64,
        1024,
        256,
    )
    assert read.measured == {"mean_tpot_ms": 9.5}


def test_an_object_that_never_closes_names_the_line_json_stops_at() -> None:
    # lines: 1 the command, 2 "{", 3 the last key; json stops at the end of line 3
    message = _error(COMMAND + '\n{\n  "mean_tpot_ms": 30.9,\n')
    assert message.startswith("line 3, column 24: not valid JSON")


def test_a_missing_comma_names_its_line() -> None:
    box = "\n".join([COMMAND, "{", '  "completed": 64', '  "mean_tpot_ms": 9.5', "}"])
    assert _error(box).startswith("line 4, column 3: not valid JSON")


def test_an_object_without_result_keys_says_so() -> None:
    box = "\n".join([COMMAND, json.dumps({"model": "x", "latency": 1.0}, indent=2)])
    message = _error(box)
    assert message.startswith("line 2: the JSON object has none of vLLM's result keys (mean_ttft_ms")


@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [
        ("mean_tpot_ms", "9.5", '"9.5"'),  # a number written as text
        ("completed", None, "null"),
        ("total_input_tokens", [1, 2], "[1, 2]"),
        ("max_concurrency", True, "true"),
        ("request_rate", "fast", '"fast"'),
    ],
)
def test_a_key_of_the_wrong_type_is_named_with_its_line(key: str, value: object, shown: str) -> None:
    body = json.dumps({**GOOD, key: value}, indent=2).splitlines()
    line = next(n for n, text in enumerate(body, start=2) if f'"{key}"' in text)  # the box's numbering
    message = _error("\n".join([COMMAND, *body]))
    assert message == f"line {line}: {key} is {shown}, not a number as vLLM writes it"


def test_what_vllm_writes_for_no_cap_and_an_unlimited_rate_reads() -> None:
    runs = split_runs(json.dumps({**GOOD, "max_concurrency": None, "request_rate": "inf"}))
    read = read_run(runs[0], bench=None, field="my_runs")
    assert read.bench.max_concurrency is None and read.bench.request_rate == float("inf")


@pytest.mark.parametrize("count", ["inf", "nan"])
def test_a_printed_count_that_is_not_finite_is_ignored(count: str) -> None:
    # int() of it was an OverflowError / ValueError: a 500 on the page
    text = f"Successful requests: {count}\nTotal input tokens: 100\nMean TPOT (ms): 10"
    assert bench_fields(parse_paste(text)) == ({}, {"mean_tpot_ms": 10.0})
