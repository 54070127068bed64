"""A pasted run's validation message is in the page's language (issue 23, round 8 page fault 7).

Until round 8 a run whose benchmark argument or serve flag pydantic refused said pydantic's English on
the Chinese page ("第 1 行：max_concurrency：Input should be greater than or equal to 1"), and a serve
flag's message did not name the flag. The core now builds the message with app.core.pydantic_messages'
message_of, the catalog sentence the rest of the project's forms use; the translations are the zh
catalog's (app/i18n/zh/LC_MESSAGES/messages.po: "Input should be greater than or equal to {ge}" ->
"应大于或等于 {ge}", "... less than or equal to {le}" -> "应小于或等于 {le}").
"""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
SERVE = f"vllm serve {MODEL}"


def _runs_error(client: Any, box: str, lang: str) -> str:
    page = client.get("/speed", params={"model": MODEL, "my_runs": box, "lang": lang})
    assert page.status_code == 200, page.text
    found = re.search(r"<code>my_runs</code>: ([^<]+)", page.text)
    assert found, page.text
    return html.unescape(found.group(1)).strip()


@pytest.mark.parametrize(
    ("box", "en", "zh"),
    [
        # vLLM prints the cap only when one was set; 0 is not one (BenchArgs: max_concurrency >= 1);
        # round 9: a printed block's fact is named by its printed label, as the box shows it
        (
            "Maximum request concurrency: 0\nMean TPOT (ms): 10",
            "line 1: Maximum request concurrency: Input should be greater than or equal to 1",
            "第 1 行：Maximum request concurrency：应大于或等于 1",
        ),
        # the serve line above the run: the flag is named, the bound translated
        (
            f"{SERVE} --gpu-memory-utilization 1.5\nMean TPOT (ms): 10",
            "line 1: gpu_memory_utilization: Input should be less than or equal to 1",
            "第 1 行：gpu_memory_utilization：应小于或等于 1",
        ),
        (
            f"{SERVE} --max-num-seqs 0\nMean TPOT (ms): 10",
            "line 1: max_num_seqs: Input should be greater than or equal to 1",
            "第 1 行：max_num_seqs：应大于或等于 1",
        ),
    ],
)
def test_a_refused_run_is_named_in_the_pages_language(client: Any, box: str, en: str, zh: str) -> None:
    assert _runs_error(client, box, "en") == en
    assert _runs_error(client, box, "zh") == zh
