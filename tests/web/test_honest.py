"""Honest numbers on the pages: exact vs modelled, ranges, the borderline note, version rules,
the compare view and the accuracy/model reports. Every value is checked against estimate()."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from app.core.specs import GIB
from tests.web.helpers import gib_range, text_of, version_estimate

# The brief's borderline case: Llama-3.1-8B on one H100 at utilization 0.3, max_model_len set to the
# estimated maximum for that budget (checked below with estimate() itself).
BORDERLINE_UTIL = 0.3


run = version_estimate


@pytest.fixture(scope="module")
def borderline_len() -> int:
    probe = run(gpu_memory_utilization=BORDERLINE_UTIL)
    assert probe.estimated_max_model_len
    est = run(gpu_memory_utilization=BORDERLINE_UTIL, max_model_len=probe.estimated_max_model_len)
    assert est.borderline, "the brief's example must be borderline under the current bands"
    return probe.estimated_max_model_len


def test_headline_ranges_equal_the_estimate(client):
    est = run(max_model_len=32768, gpu_memory_utilization=0.85, target=4)
    page = client.get("/?v=1&max_model_len=32768&gpu_memory_utilization=0.85&target_concurrency=4").text
    ranges = est.ranges
    assert text_of(page, "r-kv-bytes") == gib_range(ranges["kv_cache_bytes"])
    tokens, conc = ranges["kv_tokens"], ranges["max_concurrency"]
    assert text_of(page, "r-kv-tokens") == f"{int(tokens.low):,} – {int(tokens.high):,}"
    assert text_of(page, "r-concurrency") == f"{conc.low:.2f} – {conc.high:.2f}x"
    # the expected value sits inside its range
    assert tokens.low <= est.kv_tokens <= tokens.high
    assert "r-max-model-len" not in page  # an input has no range


def headline_badges(page: str) -> dict[str, str]:
    """Each headline figure's badge text, by the figure's id (n-<key>)."""
    found = re.findall(r'<span class="badge [^"]*"[^>]*>([^<]*)</span>\s*</dt><dd id="n-([\w-]+)"', page)
    return {key: text for text, key in found}


def test_tokens_and_concurrency_are_exact_given_the_modelled_pool(client):
    # the pool is modelled (its range 54.05 - 55.49 GiB above), so tokens and concurrency are exact only
    # for a given pool: the badge beside their range says so (it said "exact", round 8's walk)
    page = client.get("/?v=1&max_model_len=32768").text
    assert "r-kv-tokens" in page and "r-concurrency" in page
    badges = headline_badges(page)
    assert badges["kv-tokens"] == badges["concurrency"] == "exact given the pool"
    assert badges["kv-bytes"].startswith("modelled ±") and badges["max-model-len"] == "input"
    zh = TestClient(client.app).get("/?v=1&max_model_len=32768&lang=zh").text  # its own cookie jar
    assert headline_badges(zh)["kv-tokens"] == "给定 KV 池时精确"


def test_a_pool_given_with_kv_cache_memory_bytes_is_an_input_and_its_tokens_plainly_exact(client):
    # round 9's walk: with --kv-cache-memory-bytes 20G the pool has no band (uncertainty.ranges_for's pool_given),
    # yet the tiles said "modelled ±0.00 GiB  20.00 - 20.00 GiB" and "exact given the pool  163,840 - 163,840".
    # Llama-3.1-8B on H100 at 32,768: 20G = 21,474,836,480 B // 2,097,152 B a block (32 layers x 65,536 B)
    # = 10,240 blocks x 16 = 163,840 tokens = 5.00 x 32,768
    page = client.get("/?v=1&max_model_len=32768&kv_cache_memory_bytes=21474836480").text
    badges = headline_badges(page)
    assert badges["kv-bytes"] == "input"
    assert badges["kv-tokens"] == badges["concurrency"] == "exact"
    assert text_of(page, "n-kv-tokens") == "163,840 tokens"
    assert "r-kv-tokens" not in page and "r-concurrency" not in page


def test_partition_rows_are_marked_and_ranged(client):
    est = run(max_model_len=32768)
    page = client.get("/?v=1&max_model_len=32768").text
    table = page[
        page.index('id="partition-table"') : page.index("</table>", page.index('id="partition-table"'))
    ]
    rows = dict(re.findall(r'<tr data-key="([\w-]+)">(.*?)</tr>', table, re.S))
    for key, name in (
        ("activation", "activation_peak_bytes"),
        ("non-torch", "non_torch_bytes"),
        ("graphs", "cuda_graph_bytes"),
        ("kv", "kv_cache_bytes"),
    ):
        r = est.ranges[name]
        assert "badge-modelled" in rows[key], key
        assert text_of(page, f"range-{key}") == gib_range(r)
        assert f"±{(r.high - r.expected) / GIB:,.2f} GiB" in rows[key]
    # unquantized weights are counted exactly from the parameters; the slack is arithmetic
    for key in ("weights", "unused"):
        assert "badge-exact" in rows[key] and f"range-{key}" not in rows[key]
    assert 'title="Exact: the arithmetic vLLM itself does' in page
    details = text_of(page, "exact-details")
    assert details.startswith("Which numbers are exact?")
    assert "activation peak" in details and "weights of quantized checkpoints" in details


def test_quantized_weights_are_modelled(client):
    model = "openai/gpt-oss-20b"
    est = run(model=model, max_model_len=8192)
    page = client.get(f"/?v=1&model={model}&max_model_len=8192").text
    assert text_of(page, "range-weights") == gib_range(est.ranges["weights_bytes"])


def test_borderline_note_names_the_safe_length_and_the_utilization(client, borderline_len):
    est = run(gpu_memory_utilization=BORDERLINE_UTIL, max_model_len=borderline_len)
    page = client.get(f"/?v=1&gpu_memory_utilization=0.3&max_model_len={borderline_len}").text
    assert 'id="borderline"' in page
    assert est.safe_max_model_len and est.safe_max_model_len < borderline_len
    assert text_of(page, "borderline-safe-len") == (
        f"max_model_len ≤ {est.safe_max_model_len:,} starts with high confidence "
        "(even at the low end of the range)."
    )
    assert gib_range(est.ranges["kv_cache_bytes"]) in text_of(page, "borderline")
    # the suggested utilization really makes the low end start (the core confirms it)
    util = re.search(r"by (0\.\d\d) to (0\.\d\d)", text_of(page, "borderline-util"))
    assert util
    raised = float(util.group(2))
    assert raised == pytest.approx(BORDERLINE_UTIL + float(util.group(1)))
    after = run(gpu_memory_utilization=raised, max_model_len=borderline_len)
    assert after.fits and not after.borderline
    assert after.safe_max_model_len and after.safe_max_model_len >= borderline_len
    # one step less would not have been enough at the low end
    short = run(gpu_memory_utilization=round(raised - 0.01, 2), max_model_len=borderline_len)
    assert short.borderline
    # and the safe length does start at the low end
    safe = run(gpu_memory_utilization=BORDERLINE_UTIL, max_model_len=est.safe_max_model_len)
    assert safe.fits and not safe.borderline


def test_no_borderline_note_when_the_range_agrees(client):
    assert not run(max_model_len=32768).borderline
    assert 'id="borderline"' not in client.get("/?v=1&max_model_len=32768").text


@pytest.mark.parametrize(
    ("version", "util", "graphs", "swap", "offloading"),
    [
        ("0.6.6", "0.9", "not subtracted", "used: CPU swap space", "does not exist yet"),
        ("0.11.0", "0.9", "not subtracted", "accepted but ignored", "does not exist yet"),
        ("0.19.0", "0.9", "not subtracted", "accepted but ignored", "available"),
        ("0.33.0", "0.92", "CUDA graphs subtracted", "removed", "available"),
    ],
)
def test_version_notes_follow_the_rules(client, version, util, graphs, swap, offloading):
    page = client.get(f"/?v=1&vllm_version={version}").text
    notes = dict(re.findall(r'<tr data-key="([\w_]+)"><th scope="row">[^<]*</th><td>([^<]*)</td>', page))
    assert notes["default_util"] == util
    assert notes["cuda_graphs"].startswith(graphs)
    assert notes["swap_space"].startswith(swap)
    assert notes["offloading"].startswith(offloading)
    assert f"What changes with the version (vLLM {version})" in page
