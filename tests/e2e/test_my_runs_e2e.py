"""Your own runs pasted into the Speed section's box in Chromium (issue 23 item 5): every figure they
measured says "calibrated on your 3 runs" (the benchmark's heading names which kinds), the permalink carries the runs deflated (my_runs=z:…) and reopens the same
calibration, and the swaps break no Content-Security-Policy rule.

The runs are tenstorrent/tt-inference-server issue 143's one-client Qwen3-14B runs on an A100 SXM4
(bench/data/perf/sources.jsonl: 8 x 128/128, 4 x 1,024/128, 4 x 2,048/128 prompts; mean TTFT / TPOT
ms as printed), written as vLLM's printed "Serving Benchmark Result" blocks.

The CSP check: htmx settles the ``style`` attribute by default (attributesToSettle), and setting it,
even empty, is a ``style-src-attr`` violation under the app's ``style-src 'self'``; two were reported
on this walk before templates/base.html's htmx-config left ``style`` out.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import LiveServer, Tab

pytestmark = pytest.mark.e2e

START = "/?v=1&model=Qwen/Qwen3-14B&device=nvidia-a100-sxm4-80gb&max_model_len=16384"
RUNS = "\n".join(
    [
        "vllm serve Qwen/Qwen3-14B --max-model-len 16384",
        *(
            "\n".join(
                [
                    "Maximum request concurrency: 1",
                    "============ Serving Benchmark Result ============",
                    f"Successful requests:                     {prompts}",
                    f"Total input tokens:                      {prompts * tokens_in}",
                    f"Total generated tokens:                  {prompts * 128}",
                    f"Mean TTFT (ms):                          {ttft}",
                    f"Mean TPOT (ms):                          {tpot}",
                    "==================================================",
                ]
            )
            for prompts, tokens_in, ttft, tpot in (
                (8, 128, 52.5, 24.3),
                (4, 1024, 284.0, 28.9),
                (4, 2048, 282.8, 27.6),
            )
        ),
    ]
)
WATCH_CSP = (
    "document.addEventListener('securitypolicyviolation', e => "
    "(window.__csp = window.__csp || []).push(e.violatedDirective + ' ' + (e.target && e.target.id)));"
)


def test_pasted_runs_calibrate_every_figure_and_ride_in_the_permalink(
    live_server: LiveServer, tab: Tab
) -> None:
    page = tab.page
    page.add_init_script(WATCH_CSP)
    page.goto(live_server.base + START)
    expect(page.locator("#speed-ttft .value")).to_be_visible()
    page.locator("#bench-details summary").click()
    page.locator("#b-prompts").fill("8")
    page.locator("#b-conc").fill("1")
    page.locator("#b-in").fill("128")
    page.locator("#b-out").fill("128")
    page.locator("#b-runs").fill(RUNS)
    page.locator("#b-runs").blur()
    tags = page.locator(".runs-tag")
    # TTFT, TPOT and the simulated benchmark's table; not throughput, which these runs did not measure
    # (it keeps the model's band: round 6)
    expect(tags).to_have_count(3)
    expect(tags.first).to_have_text("calibrated on your 3 runs")
    # round 9: the benchmark's heading names what the runs measured (round 8: "calibrated on your 3 runs"
    # over a table whose throughput rows they never scaled)
    expect(page.locator("#speed-bench h4 .runs-tag")).to_have_text("TPOT, TTFT calibrated on your 3 runs")
    expect(page).to_have_url(re.compile(r"my_runs=z%3A"))
    page.locator("#speed").scroll_into_view_if_needed()
    tab.shoot("my-runs-calibrated")
    link = page.url
    # a bad line: the box's error names it, and this second swap of the results is the one that broke CSP
    page.locator("#b-runs").fill(
        RUNS.replace("Mean TPOT (ms):                          28.9", "Mean TPOT (ms): n/a")
    )
    page.locator("#b-runs").blur()
    expect(page.locator("#speed-runs-error")).to_contain_text("line 16: cannot read a number")
    expect(page.locator(".runs-tag")).to_have_count(0)
    assert page.evaluate("window.__csp || []") == []
    again = page.context.new_page()
    again.goto(link)
    expect(again.locator(".runs-tag").first).to_have_text("calibrated on your 3 runs")
    # the benchmark as the first run printed it: 8 prompts of 128 / 128 at one client, so its mean TTFT is
    # the cluster's TTFT factor times the simulated one; the page shows it beside vLLM's key
    expect(again.locator("#bench-mean_ttft_ms code")).to_have_text("mean_ttft_ms")
