"""The compare view (app/web/compare/): both versions from the core, the rows that differ and why,
bad parameters named, and the planner's link to it."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

from app.core.specs import GIB
from tests.web.helpers import gib_range, text_of, unusable_block, unusable_fields, version_estimate


def test_planner_links_to_compare(client):
    page = client.get("/?v=1&max_model_len=32768&vllm_version=0.11.0").text
    href = re.search(r'id="compare-link" href="([^"]+)"', page)
    assert href
    url = urlsplit(href.group(1).replace("&amp;", "&"))
    query = dict(parse_qsl(url.query))
    assert url.path == "/compare"
    assert query["a"] == "0.11.0" and query["b"] == "0.19.0" and query["max_model_len"] == "32768"
    assert "vllm_version" not in query


def test_compare_shows_both_versions_from_the_core(client):
    a, b = version_estimate(version="0.19.0", target=1), version_estimate(version="0.33.0", target=1)
    r = client.get("/compare?v=1&a=0.19.0&b=0.33.0")
    assert r.status_code == 200
    page = r.text
    assert text_of(page, "c-utilization-a") == "0.9 (this version's default)"
    assert text_of(page, "c-utilization-b") == "0.92 (this version's default)"
    assert "CUDA graphs subtracted" in text_of(page, "c-graphs-b")
    assert "CUDA graphs subtracted" not in text_of(page, "c-graphs-a")
    for key, attr in (("budget", "budget_bytes"), ("weights", "weights_bytes"), ("kv", "kv_cache_bytes")):
        assert text_of(page, f"c-{key}-a") == f"{getattr(a, attr) / GIB:,.2f} GiB"
        assert text_of(page, f"c-{key}-b") == f"{getattr(b, attr) / GIB:,.2f} GiB"
    assert text_of(page, "c-blocks-a") == f"{a.num_gpu_blocks:,}"
    assert text_of(page, "c-tokens-b") == f"{b.kv_tokens:,}"
    assert text_of(page, "c-concurrency-a") == f"{a.max_concurrency:.2f}x"
    assert text_of(page, "c-kv-range-b") == gib_range(b.ranges["kv_cache_bytes"])
    assert text_of(page, "log-a") == " ".join(" ".join(a.log_lines).split())
    assert text_of(page, "log-b") == " ".join(" ".join(b.log_lines).split())
    # differing rows are flagged, each with its reason; equal rows are not
    assert re.search(r'id="row-utilization" class="differs"', page)
    assert "0.9 → 0.92" in text_of(page, "why-utilization")
    assert "follows from gpu_memory_utilization used" in text_of(page, "why-budget")
    assert "CUDA graphs" in text_of(page, "why-graphs")
    assert re.search(r'id="row-weights" class=""', page) and 'id="why-weights"' not in page
    assert "Capacity log line" in text_of(page, "why-log")


def test_compare_with_explicit_utilization_does_not_blame_the_default(client):
    page = client.get("/compare?v=1&gpu_memory_utilization=0.8&a=0.19.0&b=0.33.0").text
    assert text_of(page, "c-utilization-a") == text_of(page, "c-utilization-b") == "0.8 (set)"
    assert 'id="why-utilization"' not in page
    a, b = (
        version_estimate(version="0.19.0", gpu_memory_utilization=0.8),
        version_estimate(version="0.33.0", gpu_memory_utilization=0.8),
    )
    assert text_of(page, "c-kv-a") == f"{a.kv_cache_bytes / GIB:,.2f} GiB"
    assert text_of(page, "c-kv-b") == f"{b.kv_cache_bytes / GIB:,.2f} GiB"


def test_compare_bad_params_name_the_field(client):
    r = client.get("/compare?a=0.5.4&b=%3Cb%3E&max_model_len=lots&device=nope")  # 0.5.4: older than 0.6
    assert r.status_code == 422
    assert unusable_fields(r.text) == ["max_model_len", "a", "b", "device"]
    block = unusable_block(r.text)
    assert "<b>" not in block and "&#39;&lt;b&gt;&#39;" in block  # the bad value is escaped
    # nothing is compared with defaults standing in (issue 24 item 1: 0.19.0 against 0.33.0 was shown)
    assert 'id="col-a"' not in r.text


def test_compare_error_is_a_field_not_a_500(client):
    # TP=64 does not divide Llama-3.1-8B's 32 attention heads: vLLM refuses it in every version
    r = client.get("/compare?v=1&a=0.19.0&b=0.33.0&tensor_parallel_size=64")
    assert r.status_code == 422
    assert "<code>tensor_parallel_size</code>: 64 does not divide the 32 attention heads" in r.text
    assert 'id="rule-differences"' in r.text  # the rules still compare


def test_a_typed_version_it_cannot_use_stays_selected(client):
    # the form puts the typed value back as the planner's does (inputs.problems.typed_values): the select keeps
    # 0.5.4 as its own "unknown" option, so the error stays until another release is picked
    page = client.get("/compare?a=0.5.4&b=0.33.0").text
    assert '<option value="0.5.4" selected data-unknown>' in page
    assert '<option value="0.33.0" selected>' in page
