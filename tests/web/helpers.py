"""Read the headline numbers back out of rendered HTML (by element id, as the e2e tests do)."""

from __future__ import annotations

import html
import re

from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.result import Estimate, Range
from app.core.specs import GIB, ServeConfig
from app.web.format import gib, integer

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
