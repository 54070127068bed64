"""The recommendation's sentences say what happened, once, in plain words (issue 24 item 7).

Inputs are the walkthrough's (docs: /work/shared/reviews/new-user-walkthrough-2026-12.md, 2a) and the
issue's prune case: Llama-3.1-70B on 8 × H100 at TP 2 with a 131,072-token target of 8 sequences,
which TP 8 alone meets (20.12x at bf16 KV), so the fp8 KV step taken before it is undone.
"""

from __future__ import annotations

import html
import re

from fastapi.testclient import TestClient

from app.core.text import N_, Plural
from scripts.extract_messages import extract

PRUNED = {
    "model": "meta-llama/Llama-3.1-70B",
    "devices": 8,
    "tensor_parallel_size": 2,
    "max_model_len": 131072,
    "target_concurrency": 8,
}
# the walkthrough's platform engineer: not reachable, so the impossible reason and the steps all show
UNREACHABLE = {
    "model": "meta-llama/Llama-3.1-70B",
    "devices": 8,
    "max_model_len": 128000,
    "target_concurrency": 64,
    "gpu_memory_utilization": 0.95,
    "tensor_parallel_size": 8,
    "concurrency": 64,
}


def _fragment(client: TestClient, params: dict[str, object], lang: str = "en") -> str:
    r = client.get("/recommend", params={**params, "lang": lang}, headers={"HX-Request": "true"})
    assert r.status_code == 200
    return html.unescape(r.text)


def _step_item(page: str, key: str) -> str:
    match = re.search(rf'<li class="step [^"]*" data-key="{key}">(.*?)</li>', page, re.S)
    assert match, key
    return match.group(1)


def test_a_step_the_prune_pass_undid_is_not_called_applied(client: TestClient) -> None:
    r = client.post("/api/recommend", json={**PRUNED, "device": "h100"})
    assert r.status_code == 200
    steps = {s["key"]: s for s in r.json()["steps"]}
    fp8, tp = steps["kv_cache_dtype"], steps["tensor_parallel_size"]
    # the final configuration keeps bf16 KV at TP 8: the fp8 step is not part of it
    assert r.json()["final"]["kv_cache_dtype"] == "auto" and r.json()["final"]["tensor_parallel_size"] == 8
    assert fp8["undone"] and not fp8["applied"]
    assert tp["applied"] and not tp["undone"]
    for lang, applied_word in (("en", "applied"), ("zh", "已采用")):
        item = _step_item(_fragment(client, PRUNED, lang), "kv_cache_dtype")
        assert applied_word not in item.replace("not applied", "")
        assert "<table" not in item and "step-link" not in item  # one line, like a step not taken
    assert "Not needed once tensor_parallel_size 2 → 8" in _step_item(
        _fragment(client, PRUNED), "kv_cache_dtype"
    )


def test_unreachable_target_texts_are_said_once_without_markup(client: TestClient) -> None:
    page = _fragment(client, UNREACHABLE)
    assert "Not applied: Not applied" not in page and "not applied: Not applied" not in page
    # the offload step (16 GiB does not reach 64 × 128,000): one "not applied", then the reason
    assert "— not applied: even cpu_offload_gb 0.0 → 16.0 does not reach the target" in page
    assert page.count("Nearest reachable") == 1
    assert "`" not in re.sub(r"<[^>]+>", "", page)
    # one 8-device node of H100, written as such
    assert "8 × H100 SXM5 80GB (one node of 8)" in page and "node(s)" not in page
    zh = _fragment(client, UNREACHABLE, "zh")
    assert zh.count("最接近的可达点") == 1 and "未采用: 未采用" not in zh and "未采用：未采用" not in zh


def test_one_replica_is_singular_on_the_planner(client: TestClient) -> None:
    r = client.get("/", params=UNREACHABLE)
    text = html.unescape(r.text)
    # ⌊8 ÷ (TP 8 × PP 1)⌋ = 1 replica
    assert "= 1 replica →" in text and "replica(s)" not in text
    two = html.unescape(client.get("/", params={**UNREACHABLE, "devices": 16}).text)
    assert "= 2 replicas →" in two


def test_plural_picks_the_form_by_count() -> None:
    assert Plural(1, N_("{n} node"), N_("{n} nodes"), n=1) == "1 node"
    assert Plural(2, N_("{n} node"), N_("{n} nodes"), n=2) == "2 nodes"
    assert Plural(0, N_("{n} node"), N_("{n} nodes"), n=0) == "0 nodes"


# vLLM's own log lines and messages, quoted as vLLM prints them ("backend(s)", "proc(s)")
VLLM_QUOTES = ("app/core/vllm_text.py", "app/core/versions.py", "app/core/backends.py")
PENDING: tuple[str, ...] = ()
MARKUP_FREE = ("app/core/recommend/", "app/core/fleet.py", "app/core/diagnose/", "app/web/", "templates/")


def test_no_message_of_ours_says_thing_s_and_shown_texts_have_no_backticks() -> None:
    bad = []
    for message in extract():
        msgid = message.id if isinstance(message.id, str) else message.id[0]
        where = [path for path, _ in message.locations]
        if not where or all(p.startswith("openapi:") for p in where):
            continue  # the /docs page's endpoint docstrings are Markdown
        if all(p.startswith(VLLM_QUOTES + PENDING) for p in where):
            continue
        if re.search(r"\w\(s\)", msgid) and "http(s)" not in msgid:
            bad.append((where, msgid))
        # the recommendation and fleet sentences are shown as plain text: no Markdown quotes
        if "`" in msgid and any(p.startswith(MARKUP_FREE) for p in where):
            bad.append((where, msgid))
    assert not bad, bad
