"""The reports served as pages (app/web/reports.py) and their Markdown renderer (app/web/markdown.py)."""

from __future__ import annotations

from app.resources import Data, directory
from app.web.markdown import render


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
