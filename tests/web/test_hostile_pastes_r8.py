"""Round 8 review: inputs that were a 500 (each case below failed before its fix).

* /api/performance's ``measured_runs[].paste`` went through ``BenchArgs.model_copy``, which does not
  validate: a negative rate reached random.gammavariate, a count of 0.5 or -3 a zero slice step, a
  count of 1e300 an index overflow. It now goes through the page box's reader (read_run).
* json.loads' other refusals: an integer over 4,300 digits is a ValueError (not JSONDecodeError),
  nesting past the recursion limit a RecursionError — in a pasted run and in a ``-cc`` JSON the
  doctor reads from a pasted start-up command.
"""

from __future__ import annotations

from typing import Any

import pytest

from app.core.diagnose.verdict import diagnose

CONFIG = {"model": "Qwen/Qwen2.5-7B-Instruct", "device": "h100", "input_tokens": 512, "output_tokens": 128}


def _with_paste(paste: str) -> dict[str, Any]:
    run = {"model": "Qwen/Qwen2.5-7B-Instruct", "device": "h100", "paste": paste}
    return {**CONFIG, "measured_runs": [run]}


@pytest.mark.parametrize(
    ("paste", "key"),
    [
        ('{"mean_tpot_ms": 10, "request_rate": -1}', "request_rate"),
        # round 9: named as the paste names it (it wrote no num_prompts)
        ('{"mean_tpot_ms": 10, "completed": -3}', "completed: "),
        ('{"mean_tpot_ms": 10, "completed": 0.5}', "completed: "),
        ('{"mean_tpot_ms": 10, "completed": 1e300}', "completed"),
        ('{"mean_tpot_ms": 10, "max_concurrency": 1e300}', "max_concurrency"),
        ('{"mean_tpot_ms": 10, "burstiness": 0}', "burstiness"),
    ],
)
def test_an_api_paste_is_validated_like_the_box(client: Any, paste: str, key: str) -> None:
    response = client.post("/api/performance", json=_with_paste(paste))
    assert response.status_code == 422
    body = response.text
    assert "measured_runs[0].paste" in body and key in body


def test_a_paste_that_measured_nothing_usable_is_refused(client: Any) -> None:
    # -5 ms is not a time vLLM prints: the run calibrates nothing, so it is no calibration
    response = client.post("/api/performance", json=_with_paste('{"mean_tpot_ms": -5}'))
    assert response.status_code == 422 and "no measured figures" in response.text


@pytest.mark.parametrize(
    "paste",
    [
        '{"mean_tpot_ms": 1' + "0" * 4400 + "}",  # over CPython's 4,300-digit int limit
        '{"mean_tpot_ms": 10, "a": ' + "[" * 30000 + "]" * 30000 + "}",  # past the recursion limit
    ],
)
def test_json_the_decoder_refuses_otherwise_is_a_message(client: Any, paste: str) -> None:
    response = client.post("/api/performance", json=_with_paste(paste))
    assert response.status_code == 422 and "not a JSON object vLLM writes" in response.text
    if len(paste) < 8000:  # the nested one is longer than a URL may be
        page = client.get("/speed", params={**CONFIG, "my_runs": paste})
        assert page.status_code == 200 and "not a JSON object vLLM writes" in page.text


def test_a_json_error_names_line_and_column_in_chinese(client: Any) -> None:
    page = client.get("/speed", params={**CONFIG, "lang": "zh", "my_runs": '{\n"mean_tpot_ms": 10,\n'})
    # json stops past the comma of line 2 ('"mean_tpot_ms": 10,' is 19 characters): column 20
    assert "第 2 行第 20 列：不是有效的 JSON" in page.text
    assert "Expecting" not in page.text


def test_a_deeply_nested_cc_in_a_pasted_command_is_read_not_raised() -> None:
    for cc in ("-cc.a=" + "[" * 20000 + "]" * 20000, '-cc \'{"a": ' + "[" * 20000 + "]" * 20000 + "}'"):
        log = f"vllm serve Qwen/Qwen3-8B {cc}\nINFO 12-01 10:00:00 [core.py:1] hello\n"
        diagnosis = diagnose(log_text=log, metrics_text=None)
        assert diagnosis is not None
