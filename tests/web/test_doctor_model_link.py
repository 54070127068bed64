"""The doctor's way to the planner never plans a model the log did not name (issue 24's no-substitution rule,
the web kernel's ``require_usable``): a model the catalog lacks goes as the log names it, so the planner says it
does not know it and computes nothing; a log that names no model gets a form that asks for it."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from fastapi.testclient import TestClient

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs" / "heldout-2026-12b"
# vLLM-Kunlun (baidu/vLLM-Kunlun#330): 41.98 GiB, 171,904 tokens, 5.25x for 32,768; no model named
NO_MODEL = (LOGS / "kunlun_qwen3_vl_fits_41_98_gib_171904_tokens.log").read_text()
# vllm-omni#276: `vllm serve /data/models/Qwen/Qwen3-Omni-30B-A3B-Instruct --omni …`, not a catalog model
UNKNOWN_MODEL = (LOGS / "nv_omni_a100_command_free_memory_0_49_of_79_32.log").read_text()


def _page(client: TestClient, log: str, lang: str = "en") -> str:
    r = client.post("/doctor", data={"log": log}, params={"lang": lang})
    assert r.status_code == 200
    return html.unescape(r.text)


def test_a_log_naming_no_model_asks_for_it_instead_of_opening_the_default_model(client: TestClient) -> None:
    page = _page(client, NO_MODEL)
    assert 'id="open-planner"' not in page  # no link that would plan meta-llama/Llama-3.1-8B
    form = re.search(
        r'<form class="model-needed" id="planner-needs-model" method="get" action="([^"]*)".*?</form>',
        page,
        re.S,
    )
    assert form is not None
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.group(0)))
    assert hidden == {"v": "1", "max_model_len": "32768"}  # what the log says, and no model
    assert re.search(r'<input id="needs-model" name="model" required', form.group(0))
    # the form, filled in, opens the planner with the model given and the log's length
    planner = client.get(form.group(1), params={**hidden, "model": "meta-llama/Llama-3.1-8B-Instruct"})
    assert planner.status_code == 200
    assert 'id="f-mml"' in planner.text and 'value="32768"' in planner.text


def test_the_api_says_the_model_is_needed_for_a_log_naming_no_model(client: TestClient) -> None:
    r = client.post("/api/diagnose", content=NO_MODEL, headers={"content-type": "text/plain"})
    body = r.json()
    assert r.status_code == 200 and body["planner_url"] is None
    # an explicit field, not only the missing link (docs/inputs.md, "The doctor's API"): the model is needed,
    # and the other inputs the log gives (its 32,768 length) come as the page's form carries them
    assert body["model_needed"] is True
    assert body["planner_fields"] == {"v": "1", "max_model_len": "32768"}
    # a log that names its model needs nothing: the link is there
    named = client.post("/api/diagnose", content=UNKNOWN_MODEL, headers={"content-type": "text/plain"}).json()
    assert (named["model_needed"], named["planner_fields"]) == (False, None)
    assert named["planner_url"] is not None


def test_worker_names_show_a_bound_not_a_size_on_the_identity_line(client: TestClient) -> None:
    # club-3090#1139: "(Worker_TP0 …)" and "(Worker_TP1 …)" print, no TP: vLLM names `_TP{rank}` only for TP > 1,
    # so the line says "TP ≥ 2 (worker names)", never "TP 2 × PP 1"
    log = (LOGS / "nv_v1_tp2_3090_free_memory_line_suggestion_4_76_in_use.log").read_text()
    note = re.search(r'<p class="model-note">(.*?)</p>', _page(client, log)).group(1)
    assert "Parallelism: TP ≥ 2 (worker names)" in note
    assert "TP 2 ×" not in note
    zh = re.search(r'<p class="model-note">(.*?)</p>', _page(client, log, lang="zh")).group(1)
    assert "TP ≥ 2（来自 worker 名称）" in zh


def test_a_model_the_catalog_lacks_opens_the_planners_error_state_for_it(client: TestClient) -> None:
    page = _page(client, UNKNOWN_MODEL)
    href = re.search(r'<a id="open-planner" class="button-link" href="([^"]+)"', page).group(1)
    query = parse_qs(urlsplit(href).query)
    assert query["model"] == ["/data/models/Qwen/Qwen3-Omni-30B-A3B-Instruct"]
    assert query["device_memory_gib"] == ["79.32"]  # the printed total (no catalog card: six report it)
    assert "computes nothing and asks for its config.json" in page
    planner = client.get(href)
    assert planner.status_code == 422  # nothing is computed for another model
    text = html.unescape(planner.text)
    assert "unknown model '/data/models/Qwen/Qwen3-Omni-30B-A3B-Instruct'" in text
    assert 'value="/data/models/Qwen/Qwen3-Omni-30B-A3B-Instruct"' in text  # the Model box keeps it


def test_the_form_asking_for_the_model_is_in_chinese_on_the_chinese_page(client: TestClient) -> None:
    page = _page(client, NO_MODEL, lang="zh")
    assert "日志没有写明模型" in page
    assert '<input type="hidden" name="lang" value="zh">' in page


def test_the_identity_line_claims_no_parallelism_or_kv_dtype_the_log_does_not_print(
    client: TestClient,
) -> None:
    # the Kunlun excerpt prints no TP, PP or KV cache dtype: "—", not vLLM's defaults "TP 1 × PP 1" / "auto"
    note = re.search(r'<p class="model-note">(.*?)</p>', _page(client, NO_MODEL)).group(1)
    assert "Parallelism: — · KV cache dtype: —" in note
    assert "TP 1" not in note and "auto" not in note
