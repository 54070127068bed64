"""Read the headline numbers back out of rendered HTML (by element id, as the e2e tests do)."""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.result import Estimate, Range
from app.core.specs import GIB, ServeConfig
from app.web.format import gib, integer

if TYPE_CHECKING:
    from fastapi.testclient import TestClient

NUMBER_IDS = ("n-kv-bytes", "n-kv-tokens", "n-concurrency", "n-max-model-len")


def text_of(page: str, element_id: str) -> str:
    """The text inside the element with this id (tags stripped; the element must not nest its own tag)."""
    match = re.search(rf'<(\w+)[^>]*\bid="{element_id}"[^>]*>(.*?)</\1>', page, re.S)
    assert match, f"#{element_id} not in page"
    text = re.sub(r"<[^>]+>", "", match.group(2))
    return html.unescape(re.sub(r"\s+", " ", text)).strip()


def page_numbers(page: str) -> dict[str, str]:
    return {key: text_of(page, key) for key in NUMBER_IDS}


def expected_numbers(est: Estimate) -> dict[str, str]:
    """What the page must show for this Estimate (the same formatting the view uses)."""
    return {
        "n-kv-bytes": gib(est.kv_cache_bytes),
        "n-kv-tokens": f"{integer(est.kv_tokens)} tokens",
        "n-concurrency": f"{est.max_concurrency:.2f}x",
        "n-max-model-len": integer(est.max_model_len),
    }


LLAMA = "meta-llama/Llama-3.1-8B"
H100 = "nvidia-h100-sxm-80gb"


def version_estimate(
    *, model: str = LLAMA, version: str | None = None, target: int | None = None, **serve: object
) -> Estimate:
    """estimate() on one H100 for a catalog model, a release and some flags (what a page must agree with)."""
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


def unusable_fields(page: str) -> list[str]:
    """The inputs a page could not use, as its verdict names them (data-unusable); [] when it computed."""
    match = re.search(r'id="verdict"[^>]*data-unusable="([^"]*)"', page)
    return match.group(1).split() if match else []


def unusable_block(page: str) -> str:
    """The verdict's list of unusable inputs (HTML), where the page shows them instead of a result."""
    start = page.index('data-unusable="')
    return page[start : page.index("</ul>", start)]


RECOMMEND_HX = {"HX-Request": "true", "HX-Target": "recommend-slot"}


def flat_text(fragment: str) -> str:
    """A fragment's text: tags stripped, entities decoded, whitespace folded."""
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", fragment))).strip()


def verdict_box(page: str) -> str:
    return page[page.index('id="verdict"') : page.index('class="model-note"')]


def verdict_changes(client: TestClient, page: str) -> tuple[list[str], list[str], str]:
    """Follow the verdict box's list the way static/app.js does: the box's slot is tagged with the inputs
    it shows, the recommend slot asks with that tag, and the answer fills the box out of band.

    Returns (the box's listed steps, the recommendation's applied step titles, the recommend fragment).
    """
    box = verdict_box(page)
    tag = re.search(r'id="verdict-changes" class="verdict-changes" data-for="([0-9a-f]{8})"', box)
    slot = re.search(r'<div id="recommend-slot"[^>]*>', page)
    assert tag is not None and slot is not None
    assert f'hx-vals=\'{{"verdict_changes": "{tag.group(1)}"}}\'' in slot.group(0)
    state = re.search(r'id="planner-state" name="state" form="command-form" value="([^"]*)"', page)
    assert state is not None
    rec = client.post(
        "/recommend",
        data={"state": html.unescape(state.group(1)), "verdict_changes": tag.group(1)},
        headers=RECOMMEND_HX,
    )
    assert rec.status_code == 200
    oob = re.search(
        rf'<div id="verdict-changes" class="verdict-changes" data-for="{tag.group(1)}" hx-swap-oob="true">'
        r"(.*?)</div>",
        rec.text,
        re.S,
    )
    assert oob is not None  # the answer carries the same tag back
    listed = [flat_text(li) for li in re.findall(r"<li>(.*?)</li>", oob.group(1), re.S)]
    applied = [
        flat_text(h)
        for h in re.findall(r'<li class="step step-applied"[^>]*>\s*<h4>(.*?) — ', rec.text, re.S)
    ]
    return listed, applied, rec.text
