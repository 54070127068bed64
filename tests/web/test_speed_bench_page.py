"""The Speed section's "Benchmark as vllm bench serve" fieldset and "Your own runs" box (issue 23):
the arguments round-trip through the permalink, the table shows vLLM's result keys, pasted runs
calibrate every figure, and a bad paste is a message naming its line (no 500)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode

from app.core.perf.bench import RESULT_KEYS
from app.web.format import speed_number

PAGE = {
    "v": "1",
    "model": "meta-llama/Llama-3.1-8B-Instruct",
    "device": "nvidia-h100-sxm-80gb",
    "max_model_len": "4096",
}
BENCH = {
    "num_prompts": "200",
    "max_concurrency": "16",
    "request_rate": "inf",
    "random_input_len": "1024",
    "random_output_len": "256",
}
COMMAND = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 4096"


def _block(mean_tpot_ms: float) -> str:
    # the lines vLLM 0.19.0's serve.py prints; 200 prompts x 1024 / 256 tokens = 204,800 / 51,200
    return "\n".join(
        (
            "Maximum request concurrency: 16",
            "============ Serving Benchmark Result ============",
            "Successful requests:                     200",
            "Total input tokens:                      204800",
            "Total generated tokens:                  51200",
            f"Mean TPOT (ms):                          {mean_tpot_ms:.4f}",
            "==================================================",
        )
    )


def _cell(html: str, key: str) -> str:
    match = re.search(
        rf'id="bench-{key}"(?: class="runs-calibrated")?><td><code>{key}</code></td><td class="num">([^<]+)</td>',
        html,
    )
    assert match, key
    return match.group(1)


def test_the_fieldset_round_trips_and_answers_vllms_keys(client: Any) -> None:
    page = client.get("/?" + urlencode({**PAGE, **BENCH}))
    assert page.status_code == 200
    assert 'id="bench-details" open' in page.text and 'name="num_prompts"' in page.text
    state = re.search(r'id="planner-state" name="state" form="command-form" value="([^"]+)"', page.text)
    assert state
    carried = dict(parse_qsl(unquote(state.group(1).replace("&amp;", "&"))))
    assert {k: carried[k] for k in BENCH} == BENCH  # every argument under vLLM's name, "inf" included
    speed = client.post("/speed", data={"state": urlencode(carried)})
    assert speed.status_code == 200
    for key in RESULT_KEYS:
        assert f'id="bench-{key}"' in speed.text
    assert "Binding regime:" in speed.text
    api = client.post(
        "/api/performance",
        json={"model": PAGE["model"], "device": PAGE["device"], "max_model_len": 4096, "bench": BENCH},
    ).json()
    # the page shows what /api/performance answers for the same arguments
    assert _cell(speed.text, "mean_tpot_ms") == speed_number(api["bench"]["mean_tpot_ms"]["expected"])


def test_the_default_section_has_no_benchmark(client: Any) -> None:
    speed = client.get("/speed?" + urlencode(PAGE))
    assert speed.status_code == 200 and 'id="speed-bench"' not in speed.text


def test_pasted_runs_calibrate_every_figure_and_ride_in_the_permalink(client: Any) -> None:
    api = client.post(
        "/api/performance",
        json={"model": PAGE["model"], "device": PAGE["device"], "max_model_len": 4096, "bench": BENCH},
    ).json()
    predicted = api["bench"]["mean_tpot_ms"]["expected"]
    # one run of the same configuration measured 20 % slower per token: TPOT figures scale by 1.2
    runs = f"{COMMAND}\n{_block(predicted * 1.2)}\n"
    page = client.get("/?" + urlencode({**PAGE, **BENCH, "my_runs": runs}))
    assert page.status_code == 200
    assert "my_runs=z%3A" in page.text  # deflated like a pasted config.json
    speed = client.get("/speed?" + urlencode({**PAGE, **BENCH, "my_runs": runs}))
    assert speed.status_code == 200, speed.text
    # the run measured TPOT only: the TPOT figure and the benchmark's table say so; TTFT and throughput,
    # which no run measured, keep the model's band and no tag (round 6: they showed a 5 % band, tagged)
    tags = re.findall(
        r'id="speed-(\w+)"><span class="label">[^<]*</span>\s*<strong class="value">[^<]+</strong> '
        r'<span class="range">[^<]+</span>( <span class="badge badge-exact runs-tag">)?',
        speed.text,
    )
    assert tags == [("ttft", ""), ("tpot", ' <span class="badge badge-exact runs-tag">'), ("throughput", "")]
    # the benchmark's table names the kind the run measured (round 8 tagged it "calibrated on your 1 run"
    # whatever the runs measured, beside TTFT and throughput rows the run never scaled), and marks only
    # the TPOT-like rows (app.core.perf.bench.BAND_OF_KEY: TPOT, ITL, E2EL)
    assert 'runs-tag">TPOT calibrated on your 1 run</span></h4>' in speed.text
    marked = re.findall(r'<tr id="bench-(\w+)" class="runs-calibrated">', speed.text)
    tpot_like = {"mean_tpot_ms", "median_tpot_ms", "p99_tpot_ms"} | {"mean_itl_ms", "median_itl_ms"}
    assert set(marked) == tpot_like | {"mean_e2el_ms"}
    assert _cell(speed.text, "mean_tpot_ms") == speed_number(predicted * 1.2)


def test_a_bad_paste_names_its_line_in_view(client: Any) -> None:
    runs = f"{COMMAND}\n{_block(10.0)}".replace(
        "Mean TPOT (ms):                          10.0000", "Mean TPOT (ms): fast"
    )
    speed = client.get("/speed?" + urlencode({**PAGE, **BENCH, "my_runs": runs}))
    assert speed.status_code == 200  # the section still answers, uncalibrated
    error = re.search(r'id="speed-runs-error"><code>my_runs</code>: ([^<]+)</p>', speed.text)
    assert error and "line 7" in error.group(1)  # the command is line 1, the TPOT line is the box's 7th
    assert "calibrated on your" not in speed.text and 'id="speed-bench"' in speed.text


def test_a_bad_bench_argument_names_its_field(client: Any) -> None:
    speed = client.get("/speed?" + urlencode({**PAGE, "num_prompts": "0"}))
    assert speed.status_code == 200
    assert re.search(r'id="speed-bench-error"><code>num_prompts</code>', speed.text)
