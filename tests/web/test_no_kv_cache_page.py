"""The page for a model with no KV cache (encoder-only attention, tests/unit/test_no_kv_cache_startup.py): vLLM
0.33.0 allocates no pool (v1/engine/core.py _initialize_kv_caches, has_kv_cache False), so the partition draws no
KV bar, its KV row says none, and what the weights, activations, non-torch memory and graphs leave stays unused.

bge-m3 on an H100 at 0.33.0 (TP 1): the estimate's weights 1,133,410,304 + activation 355,676,979 + non-torch
268,435,456 + graphs 419,983,375 = 2,177,506,114 B taken, of 84,932,978,278 B: 82,755,472,164 B unused = 77.07 GiB.
Before: a "KV pool" bar and row of 70.74 GiB and "Unused by design (1 − utilization)" 6.33 GiB.
"""

from __future__ import annotations

import json
from pathlib import Path

from app.core.catalog import find_device
from app.core.estimate import estimate
from app.core.hf_config import model_spec_from_hf_config
from app.core.specs import ServeConfig
from app.web.planner.views import borderline_view, headline_numbers, partition_rows
from app.web.verdict import verdict_view

HELD = Path(__file__).resolve().parents[1] / "data" / "configs" / "heldout_0_33p"
STEM = "dogukanveziroglu--bge-m3-ml-tr-specialized"


def _est():
    config = json.loads((HELD / f"{STEM}_config.json").read_text(encoding="utf-8"))
    model = model_spec_from_hf_config(config, name=STEM, vllm_version="0.33.0")
    return estimate(model=model, device=find_device("h100"), serve=ServeConfig(), vllm_version="0.33.0")


def test_the_partition_has_no_kv_bar_and_the_rest_is_unused() -> None:
    est = _est()
    taken = est.weights_bytes + est.activation_peak_bytes + est.non_torch_bytes + est.cuda_graph_bytes
    assert (est.device_total_bytes, taken) == (84_932_978_278, 2_177_506_114)
    rows, segments, overrun = partition_rows(est)
    assert [s.key for s in segments] == ["weights", "activation", "non-torch", "graphs", "unused"]
    assert {s.key: s.num_bytes for s in segments}["unused"] == 82_755_472_164
    by_key = {row.key: row for row in rows}
    assert (by_key["kv"].gib, by_key["kv"].note) == ("—", "none: no layer keeps a KV cache")
    assert (by_key["unused"].label, by_key["unused"].gib) == (
        "Unused (no KV cache claims the rest)",
        "77.07 GiB",
    )
    assert overrun == 0


def test_the_headline_says_no_kv_cache() -> None:
    figures = {f.key: f for f in headline_numbers(_est())}
    assert figures["kv-bytes"].value == "none (no KV cache)"
    assert figures["kv-tokens"].value == "—"


def test_no_pool_no_band_no_borderline_and_the_verdict_names_max_num_seqs() -> None:
    # before: the pool's band (±0.54 GiB around a pool of 0) made the start "borderline" ("The KV pool is modelled
    # as -0.54 – 0.54 GiB…") and the verdict read "the KV pool holds 0 tokens = 1024.00 concurrent sequences"
    est = _est()
    assert est.fits and not est.borderline
    pool = est.ranges["kv_cache_bytes"]
    assert (pool.low, pool.expected, pool.high) == (0, 0, 0)
    assert borderline_view(est) is None
    # 0.33.0 default --max-num-seqs 1,024 (H100: the usage-context default for an OpenAI server on a GPU of 70+ GiB)
    assert verdict_view(est, 1).detail == (
        "vLLM starts; no layer keeps a KV cache (encoder-only attention), so no pool is sized: up to 1,024 sequences"
        f" of {est.max_model_len:,} tokens run at once (--max-num-seqs)."
    )


def _markdown(query: dict[str, str]) -> str:
    from urllib.parse import urlencode

    from fastapi.testclient import TestClient

    from app.web.app import create_app

    page = TestClient(create_app()).get("/?" + urlencode(query)).text
    md = page[page.index('id="markdown-text"') :]
    return md[: md.index("</")]


def test_the_copied_summary_says_what_the_headline_says() -> None:
    # the Markdown summary (the page's copy button) took its KV size and concurrency from the estimate's raw
    # fields: bge-m3 read "| KV cache size | 0 tokens |" under "| KV cache pool | none (no KV cache) |", and a
    # start whose weights never load (Llama-3.1-70B bf16 on one L4, 141 GB of weights on 24 GB) "0 tokens" and
    # "0.00x" for a pool vLLM never sizes, where the headline shows "—"
    config = (HELD / f"{STEM}_config.json").read_text(encoding="utf-8")
    md = _markdown({"config_json": config, "device": "h100", "vllm_version": "0.33.0"})
    assert "| KV cache pool | none (no KV cache) |" in md and "| KV cache size | — |" in md, md
    never = _markdown({"model": "meta-llama/Llama-3.1-70B", "device": "nvidia-l4"})
    assert "| KV cache pool | never sized |" in never, never
    assert "| KV cache size | — |" in never and "| max concurrency | — |" in never, never


def test_the_compare_page_shows_no_pool_either() -> None:
    # /compare put bge-m3's pool beside a decoder's: "KV cache pool 0.00 GiB", range "0.00 – 0.00 GiB",
    # num_gpu_blocks 0, 0 tokens, for a cache vLLM never allocates (0.33.0 and 0.34.0 alike); the planner's
    # headline says "none (no KV cache)" and "—"
    import re
    from urllib.parse import urlencode

    from fastapi.testclient import TestClient

    from app.web.app import create_app

    config = (HELD / f"{STEM}_config.json").read_text(encoding="utf-8")
    query = {"config_json": config, "device": "h100", "a": "0.33.0", "b": "0.34.0"}
    page = TestClient(create_app()).get("/compare?" + urlencode(query)).text
    cells = dict(re.findall(r'<td class="num" id="c-([\w-]+-[ab])">([^<]*)</td>', page))
    for side in ("a", "b"):
        assert cells[f"kv-{side}"] == "none (no KV cache)", cells
        assert [cells[f"{key}-{side}"] for key in ("kv-range", "blocks", "tokens")] == ["—", "—", "—"], cells
    # a decoder keeps its figures: Llama-3.1-8B's pool in GiB, its blocks a number
    llama = TestClient(create_app()).get("/compare?" + urlencode({"model": "meta-llama/Llama-3.1-8B"})).text
    decoder = dict(re.findall(r'<td class="num" id="c-([\w-]+-[ab])">([^<]*)</td>', llama))
    assert decoder["kv-a"].endswith(" GiB") and decoder["blocks-b"].replace(",", "").isdigit(), decoder
