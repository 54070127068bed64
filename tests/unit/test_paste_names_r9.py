"""Round 9 (issue 23, page faults): a bad count in a pasted run is named as the paste names it.

Round 8's reviewer: ``{"completed": -3}`` was refused as "num_prompts: …", a key the paste never wrote
(bench_fields turns vLLM's ``completed`` / "Successful requests" into BenchArgs' ``num_prompts``). The
keys and labels are vLLM 0.33.0's (vllm/benchmarks/serve.py: --save-result writes ``completed``,
``total_input_tokens``; the block prints "Successful requests:", "Total input tokens:").
"""

from __future__ import annotations

import pytest

from app.core.errors import PlannerError
from app.core.perf.measured import PastedRun, read_run


def _read(text: str) -> PastedRun:
    return PastedRun(None, 1, tuple(text.splitlines()))


def _message(text: str) -> str:
    with pytest.raises(PlannerError) as caught:
        read_run(_read(text), bench=None, field="my_runs")
    return caught.value.message


@pytest.mark.parametrize(
    ("paste", "named"),
    [
        ('{"mean_tpot_ms": 10, "completed": -3}', "line 1: completed: "),
        ('{"mean_tpot_ms": 10, "num_prompts": 0.5}', "line 1: num_prompts: "),  # this one wrote num_prompts
        ("Successful requests: -3\nMean TPOT (ms): 10", "line 1: Successful requests: "),
        ('{"mean_tpot_ms": 10, "completed": 3, "total_input_tokens": -30}', "line 1: total_input_tokens: "),
        (
            "Successful requests: 4\nTotal generated tokens: -8\nMean TPOT (ms): 10",
            "line 1: Total generated tokens: ",
        ),
    ],
)
def test_a_bad_count_is_named_as_the_paste_names_it(paste: str, named: str) -> None:
    message = _message(paste)
    assert message.startswith(named), message


def test_a_total_printed_as_nan_says_nothing_of_the_lengths() -> None:
    # "Total input tokens: None" reads as nan: round(nan / 3) was a ValueError (a 500); the length stays
    # the benchmark's default (BenchArgs: random_input_len 1024) and the output mean is 300 / 3 = 100
    read = read_run(
        _read(
            "Successful requests: 3\nTotal input tokens: None\nTotal generated tokens: 300\nMean TPOT (ms): 10"
        ),
        bench=None,
        field="my_runs",
    )
    assert (read.bench.num_prompts, read.bench.random_input_len, read.bench.random_output_len) == (
        3,
        1024,
        100,
    )


def test_a_saved_json_run_is_decoded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # round 8: split_runs decoded each --save-result object to find where it ends, then read_run decoded
    # it again (parse_saved's json.loads: JSONDecoder.decode -> raw_decode). Counted at raw_decode.
    import json

    from app.core.perf.measured import split_runs

    calls: list[int] = []
    real = json.JSONDecoder.raw_decode

    def counted(self: json.JSONDecoder, s: str, idx: int = 0) -> tuple[object, int]:
        calls.append(1)
        return real(self, s, idx)

    monkeypatch.setattr(json.JSONDecoder, "raw_decode", counted)
    box = 'vllm serve Qwen/Qwen3-8B\n{"completed": 8, "total_input_tokens": 800, "mean_tpot_ms": 9.5}\n'
    (run,) = split_runs(box)
    read = read_run(run, bench=None, field="my_runs")
    assert (read.bench.num_prompts, read.bench.random_input_len, read.measured) == (
        8,
        100,
        {"mean_tpot_ms": 9.5},
    )
    assert len(calls) == 1


def test_text_after_a_saved_object_is_still_refused() -> None:
    # the object is 37 characters; json.loads names the extra data at its first character, column 39
    # (the one decode kept must not skip that check)
    from app.core.perf.measured import split_runs

    (run,) = split_runs('{"completed": 8, "mean_tpot_ms": 9.5} and more\n')
    with pytest.raises(PlannerError) as caught:
        read_run(run, bench=None, field="my_runs")
    assert caught.value.message.startswith("line 1, column 39: not valid JSON"), caught.value.message
