"""Step 1's reason for giving tokens without blocks: a failed start with one page size said "1 KV groups with pages
of their own", a reason that was not the one (Case._blocks_and_tokens converts no tokens when the start failed)."""

from __future__ import annotations

import html
import re
from pathlib import Path

from fastapi.testclient import TestClient

from app.web.app import create_app

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
CLIENT = TestClient(create_app())


def _step1(log: str) -> str:
    page = CLIENT.post("/doctor", data={"log": (LOGS / log).read_text()}).text
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    text = re.sub(r"\s+", " ", text)
    start = text.index("Read the KV-cache lines")
    return text[start : text.index("Back-compute where the budget went")]


def test_a_failed_start_says_why_no_blocks() -> None:
    # heldout-2026-12zi: vLLM 0.23.0, Llama-3.2-1B (one full-attention group): "GPU KV cache size: 1,343,840 tokens",
    # then FlashInfer's "Could not find nvcc" RuntimeError
    step = _step1(
        "heldout-2026-12zi/nv_0_23_0_llama32_1b_kv_41_01_1343840_328_09x_graph_then_flashinfer_no_nvcc.log"
    )
    assert "the start failed, so the printed tokens are not converted to blocks" in step
    assert "KV groups with pages of their own" not in step
    assert "1,343,840 tokens" in step
