"""Read the headline numbers back out of rendered HTML (by element id, as the e2e tests do)."""

from __future__ import annotations

import html
import re

from app.core.result import Estimate
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
