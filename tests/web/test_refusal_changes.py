"""The verdict box's "Change, in this order" equals the recommendation's "What to change, in order" on
the three refusals the KV walk used to leave to the box (issue 24 item 5): both come from
Recommendation.changes, whose first step is the refusal's own fix (app.core.recommend.refusals)."""

from __future__ import annotations

import html
import re

import pytest
from fastapi.testclient import TestClient

from tests.web.helpers import RECOMMEND_HX, verdict_box, verdict_changes

REFUSALS = [
    # other processes hold 10 GiB of an H100 (79.1 GiB), vLLM 0.33.0 at its default 0.92: it asks for
    # ceil(79.1 x 0.92) = 72.77 GiB but 79.1 - 0.5 (CUDA context) - 10 = 68.6 GiB is free -> refused.
    # The fix: 68.6 / 79.1 = 0.867 -> 0.86 (0.86 x 79.1 = 68.03 GiB <= 68.6); never raised above it.
    (
        "vllm_version=0.33.0&max_model_len=8192&device_memory_used_gib=10",
        "Lower the budget to the free memory (--gpu-memory-utilization)",
        "--gpu-memory-utilization 0.86",
    ),
    # Qwen3.5-27B, H100, 0.906, S 2,048, N* 16: vLLM 0.33.0's "max_num_seqs (1024) exceeds available
    # Mamba cache blocks (302)" (tests/unit/test_verdicts.py); 302 sequences start
    (
        "model=Qwen/Qwen3.5-27B&vllm_version=0.33.0&gpu_memory_utilization=0.906&max_model_len=2048"
        "&target_concurrency=16",
        "No more sequences than Mamba cache blocks (--max-num-seqs)",
        "--max-num-seqs 302",
    ),
    # Llama-3.1-8B's derived maximum is 131,072 (max_position_embeddings); 262,144 is refused
    (
        "model=meta-llama/Llama-3.1-8B&vllm_version=0.33.0&max_model_len=262144&target_concurrency=4",
        "Lower S to the model's maximum (--max-model-len)",
        "--max-model-len 131072",
    ),
]


@pytest.mark.parametrize(("query", "first", "flag"), REFUSALS)
def test_the_box_lists_the_recommendations_steps_on_a_refusal(
    client: TestClient, query: str, first: str, flag: str
) -> None:
    page = client.get("/?v=1&" + query).text
    box = verdict_box(page)
    assert "vLLM refuses" in box
    assert '<ol class="remedies">' not in box  # no list of the box's own
    listed, applied, rec_text = verdict_changes(client, page)
    assert listed == applied and listed[0] == first  # one list, the refusal's fix first
    if "device_memory_used_gib" in query:  # raising the utilization would ask for more than is free
        assert "Raise the budget (--gpu-memory-utilization)" not in listed
    command = re.search(r'id="recommend-command"><code>(.*?)</code>', rec_text, re.S)
    assert command is not None and flag in html.unescape(command.group(1))


def test_the_free_memory_fix_reads_in_chinese(client: TestClient) -> None:
    page = client.get("/?v=1&" + REFUSALS[0][0]).text
    state = html.unescape(
        re.search(r'id="planner-state" name="state" form="command-form" value="([^"]*)"', page).group(1)
    )
    rec = client.post(
        "/recommend?lang=zh", data={"state": state, "verdict_changes": "1"}, headers=RECOMMEND_HX
    ).text
    assert "将预算降到空闲显存以内（--gpu-memory-utilization）" in rec


def test_numbers_shown_above_the_derived_maximum_say_what_they_assume(client: TestClient) -> None:
    """vLLM 0.33.0 refuses Llama-3.1-8B at 262,144 in vllm/config/model.py _get_and_verify_max_len, before
    it profiles: it prints no pool, so the pool/tokens/concurrency cards (the planner's sizing at that
    length) say they are what it would size with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1; with the flag set, and
    at a length it accepts, the note is gone."""
    refused = client.get("/?v=1&lang=en&" + REFUSALS[2][0]).text
    note = re.search(r'id="numbers-note"[^>]*>(.*?)</p>', refused, re.S)
    assert note is not None and "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1" in note.group(1)
    assert refused.index('id="numbers-note"') < refused.index('id="n-kv-bytes"')
    allowed = client.get("/?v=1&lang=en&" + REFUSALS[2][0] + "&allow_long_max_model_len=1").text
    assert 'id="numbers-note"' not in allowed and 'id="n-kv-bytes"' in allowed
    accepted = client.get("/?v=1&lang=en&model=meta-llama/Llama-3.1-8B&max_model_len=131072").text
    assert 'id="numbers-note"' not in accepted
