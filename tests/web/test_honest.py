"""Honest numbers on the pages: exact vs modelled, ranges, the borderline note, version rules,
the compare view and the accuracy/model reports. Every value is checked against estimate()."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

import pytest

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.result import Estimate, Range
from app.core.specs import GIB, ServeConfig
from app.resources import Data, directory
from app.web.markdown import render
from tests.web.helpers import text_of

LLAMA = "meta-llama/Llama-3.1-8B"
H100 = "nvidia-h100-sxm-80gb"
# The brief's borderline case: Llama-3.1-8B on one H100 at utilization 0.3, max_model_len set to the
# estimated maximum for that budget (checked below with estimate() itself).
BORDERLINE_UTIL = 0.3


def run(
    *, model: str = LLAMA, version: str | None = None, target: int | None = None, **serve: object
) -> Estimate:
    return estimate(
        model=find_model(model),
        device=find_device(H100),
        serve=ServeConfig(**serve),
        vllm_version=version,
        target_concurrency=target,
    )


def gib_range(r: Range) -> str:
    """Formatted independently of the view: "5.01 – 6.44 GiB"."""
    return f"{r.low / GIB:,.2f} – {r.high / GIB:,.2f} GiB"


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
    a, b = run(version="0.19.0", target=1), run(version="0.33.0", target=1)
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
        run(version="0.19.0", gpu_memory_utilization=0.8),
        run(version="0.33.0", gpu_memory_utilization=0.8),
    )
    assert text_of(page, "c-kv-a") == f"{a.kv_cache_bytes / GIB:,.2f} GiB"
    assert text_of(page, "c-kv-b") == f"{b.kv_cache_bytes / GIB:,.2f} GiB"


def test_compare_bad_params_name_the_field(client):
    r = client.get("/compare?a=0.5.4&b=%3Cb%3E&max_model_len=lots&device=nope")  # 0.5.4: older than 0.6
    assert r.status_code == 200
    banner = r.text.split('id="banner"')[1].split("</div>")[0]
    for field in ("a", "b", "max_model_len", "device"):
        assert f"<li><code>{field}</code>: " in banner, field
    assert "<b>" not in banner and "&#39;&lt;b&gt;&#39;" in banner  # the bad value is escaped
    # defaults were used: 0.19.0 against 0.33.0
    assert 'id="col-a"' in r.text and "vLLM 0.19.0" in text_of(r.text, "col-a")


def test_compare_error_is_a_field_not_a_500(client):
    # TP=64 does not divide Llama-3.1-8B's 32 attention heads: vLLM refuses it in every version
    r = client.get("/compare?v=1&a=0.19.0&b=0.33.0&tensor_parallel_size=64")
    assert r.status_code == 422
    assert "<code>tensor_parallel_size</code>: 64 does not divide the 32 attention heads" in r.text
    assert 'id="rule-differences"' in r.text  # the rules still compare


def test_accuracy_page_renders_the_summary_table(client):
    source = (directory(Data.DOCS) / "accuracy.md").read_text()
    page = client.get("/accuracy").text
    summary = source.split("## Summary", 1)[1].split("\n\n", 2)[1]
    rows = [line for line in summary.splitlines() if line.startswith("|")][2:]
    assert rows
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>" in page
    assert '<h1 id="accuracy-against-real-vllm-start-up-logs">' in page
    assert "Records predicted: 43." in page or "Records predicted:" in page


def test_model_page_and_footer_links(client, prefixed_client):
    page = client.get("/model").text
    assert '<pre class="doc-code"><code>' in page and "<h2" in page
    planner = client.get("/").text
    assert 'href="/accuracy"' in planner and 'href="/model"' in planner
    prefixed = prefixed_client.get("/tools/kvplan/?v=1").text
    assert 'href="/tools/kvplan/accuracy"' in prefixed
    assert 'id="compare-link" href="/tools/kvplan/compare?' in prefixed
    assert prefixed_client.get("/tools/kvplan/compare?a=0.19.0&b=0.33.0").status_code == 200


def test_markdown_escapes_everything():
    html = render("# <x> & y\n\n| a | b |\n|---|---|\n| <script> | `<i>` **bold** |\n\n```\n<pre>\n```")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<code>&lt;i&gt;</code>" in html and "<strong>bold</strong>" in html
    assert '<h1 id="x-y">&lt;x&gt; &amp; y</h1>' in html
    assert "<code>&lt;pre&gt;</code>" in html
