"""The exact text the estimator prints as vLLM would, pinned before app/core/estimate.py was split (issue 25).

Every ``log_lines`` entry and ``error`` of one estimate per rules bracket (a model that fits, one whose
length is too long for the pool, one with no room for a single block), and the refusals: a length above
the model's maximum, weights above the device, free memory below the requested budget, and the
`--max-model-len auto` lines. The expected strings are in tests/data/golden/estimate_text.json,
recorded from the estimator at commit f8a22e2 (before the move) and read against the templates of
/work/shared/reference/vllm-accounting.md §4.1-§4.4 (release by release); the checks below also read
the pinned lines back with the log parser's own patterns (app/core/vllm_text.py), so a template and its
pattern cannot drift apart.

Changed on purpose since (issue 22, the ascend branch): the free-memory refusal prints its sizes as vLLM
does, round(x, 2) — 0.11.0 `GiB = lambda b: round(b / GiB_bytes, 2)`, 0.14+ `format_gib` — so "78.6/79.1",
not "78.60/79.10"; the NPU plan counts vllm-ascend's own budget (no ceil, HCCL non-torch: 40.49 GiB, not
40.37); 0.26.0 is a bracket of its own (its lines here equal 0.24.0's: only ROCm's graph rule differs).
Issue 22 round 8 (rules8): 0.10.2's default cudagraph_mode is PIECEWISE (config/__init__.py VllmConfig.__post_init__),
one graph a size instead of FULL_AND_PIECEWISE's two, so its graph line is half the fitted figure (budget.py
ONE_GRAPH_A_SIZE_SHARE): "took 0.46 GiB", not 0.91.
Round 12: the 910B's total is the one vllm-ascend prints, 65,452,113,920 B, not round(60.96 x 2**30) = 65,455,301,591:
the 0.33.0 NPU pool is 2.87 MB smaller, 40.48 GiB and one 128-token block fewer (331,520 tokens, 40.47x).
Round 10 (rules10): 0.13.0 is a bracket of its own, read from its wheel: "Model loading took %.4f GiB memory"
(gpu_model_runner.load_model), %.2f sizes, and both KV errors end with the conserving_memory link
(kv_cache_utils.py). 0.11.0's default grid steps by 8 (config/__init__.py _set_cudagraph_sizes: 67 sizes to 512,
not 51), so its graph line is 67 / 51 of the fitted figure: "took 1.20 GiB", not 0.91.
Round 11 (rules11): 0.34.0 is a bracket of its own, read from its wheel: under the extensible KV cache no graph
estimate lines, "Available KV cache memory" is the tentative budget before warmup, the KV size line follows
the graph line, and the KV errors carry _more_kv_cache_memory_hint (app/core/vllm_text_extensible.py). 0.9.2 and
0.10.2 step their default grid by 8 too (their wheels' _set_cudagraph_sizes: 67 sizes to 512): "took 1.20 GiB" and
"took 0.60 GiB" (PIECEWISE), not 0.91 and 0.46.
Round 12 (rules12): 0.34.0's start prints extensible_kv_cache.py measure_kv_cache_blocks' "Memory after warmup" line
before the KV size line (blocks, their GiB, the peak and the requested budget; "…" for what is not modelled), and
a start refused on the tentative budget (kv_cache_planning.py get_kv_cache_configs, before warmup) ends after
"Available KV cache memory": no graph capture, warmup or KV size line (too-long / no-blocks on the L4).
Round 13 (configs13): 0.34.0's blocks are those whose 2 MiB-granule footprint fits (extensible_kv_cache.py
ExtensibleKVCache.blocks_within): 30,272, not the floor's 30,301 (59.12 GiB, 484,352 tokens, 59.12x).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.core import vllm_text as T
from app.core.catalog import find_device, find_model
from app.core.estimate import estimate
from app.core.result import Estimate
from app.core.specs import ServeConfig
from app.core.versions import KNOWN_VERSIONS, rules_for

GOLDEN = Path(__file__).parents[1] / "data" / "golden" / "estimate_text.json"
LLAMA_8B, LLAMA_70B = "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-70B"


@dataclass(frozen=True)
class Case:
    model: str
    device: str
    version: str
    serve: dict[str, object]
    auto: bool = False


def _cases() -> dict[str, Case]:
    cases: dict[str, Case] = {}
    for version in KNOWN_VERSIONS:
        # fits: 8B on an H100 at 8,192 tokens (every bracket's capacity lines)
        cases[f"fits-{version}"] = Case(LLAMA_8B, "nvidia-h100-sxm-80gb", version, {"max_model_len": 8192})
        # too long: 8B at its full 131,072 tokens on a 24 GB L4 (the "To serve at least one request" error)
        cases[f"too-long-{version}"] = Case(LLAMA_8B, "nvidia-l4-24gb", version, {"max_model_len": 131_072})
        # no blocks: 8B's ~15 GiB of weights in 40 % of an L4 (9.4 GiB): no memory for the cache blocks
        cases[f"no-blocks-{version}"] = Case(
            LLAMA_8B, "nvidia-l4-24gb", version, {"max_model_len": 8192, "gpu_memory_utilization": 0.4}
        )
    for version in ("0.8.5", "0.19.0", "0.33.0"):  # both wordings of _get_and_verify_max_len
        cases[f"above-model-max-{version}"] = Case(
            LLAMA_8B, "nvidia-h100-sxm-80gb", version, {"max_model_len": 200_000}
        )
    for device in ("nvidia-l4-24gb", "huawei-ascend-910b4-32gb"):  # CUDA and NPU wording of the OOM
        cases[f"weights-above-device-{device}"] = Case(LLAMA_70B, device, "0.33.0", {"max_model_len": 8192})
    for version in ("0.10.2", "0.14.0", "0.33.0"):  # free memory (80 GiB - 0.5 GiB context) < 80 x 0.999
        cases[f"free-memory-{version}"] = Case(
            LLAMA_8B, "nvidia-h100-sxm-80gb", version, {"gpu_memory_utilization": 0.999}
        )
    for version in ("0.14.0", "0.33.0"):  # both auto-fit wordings
        cases[f"auto-full-{version}"] = Case(LLAMA_8B, "nvidia-h100-sxm-80gb", version, {}, auto=True)
        cases[f"auto-reduced-{version}"] = Case(LLAMA_8B, "nvidia-l4-24gb", version, {}, auto=True)
        cases[f"auto-none-{version}"] = Case(
            LLAMA_8B, "nvidia-l4-24gb", version, {"gpu_memory_utilization": 0.7}, auto=True
        )
    cases["npu-fits-0.33.0"] = Case(LLAMA_8B, "huawei-ascend-910b-64gb", "0.33.0", {"max_model_len": 8192})
    return cases


CASES = _cases()


def run(case: Case) -> Estimate:
    return estimate(
        model=find_model(case.model),
        device=find_device(case.device),
        serve=ServeConfig.model_validate(case.serve),
        vllm_version=case.version,
        max_model_len_auto=case.auto,
    )


def _golden() -> dict[str, dict[str, object]]:
    data: dict[str, dict[str, object]] = json.loads(GOLDEN.read_text())
    return data


def test_every_case_is_pinned() -> None:
    assert set(_golden()) == set(CASES)


@pytest.mark.parametrize("key", list(CASES))
def test_text_is_exactly_as_pinned(key: str) -> None:
    est = run(CASES[key])
    want = _golden()[key]
    assert est.log_lines == want["log_lines"]
    assert est.error == want["error"]
    assert (str(est.error_kind) if est.error_kind else None) == want["error_kind"]


def _matches(pattern: T.VllmLine | str, text: str) -> bool:
    regex = pattern.pattern if isinstance(pattern, T.VllmLine) else pattern
    return re.search(regex, text) is not None


@pytest.mark.parametrize("version", KNOWN_VERSIONS)
def test_pinned_lines_read_back_with_the_parser_patterns(version: str) -> None:
    golden = _golden()
    rules = rules_for(version)
    fits = golden[f"fits-{version}"]["log_lines"]
    assert isinstance(fits, list)
    text = "\n".join(fits)
    assert _matches(T.WEIGHTS, text)  # §4.1: "Loading model weights took" / "Model loading took"
    assert _matches(T.CONCURRENCY, text)  # §4.3
    if rules.engine == "v0":
        assert _matches(T.BLOCKS, text) and _matches(T.V0_PARTITION, text)  # §4.2, §4.3
    else:
        assert _matches(T.KV_SIZE, text)
    too_long = golden[f"too-long-{version}"]["error"]
    assert isinstance(too_long, str)
    assert _matches(T.V0_TOO_LONG if rules.engine == "v0" else T.V1_TOO_LONG, too_long)  # §4.4
    no_blocks = golden[f"no-blocks-{version}"]["error"]
    assert isinstance(no_blocks, str)
    assert _matches(T.NO_BLOCKS, no_blocks)


def test_refusals_read_back_with_the_parser_patterns() -> None:
    golden = _golden()
    for key, want in golden.items():
        error = want["error"]
        if key.startswith("free-memory"):
            assert isinstance(error, str) and _matches(T.FREE_AT_START, error)
            assert _matches(T.DESIRED_UTILIZATION, error)
        if key.startswith("weights-above-device"):
            assert isinstance(error, str) and _matches(T.TORCH_OOM, error)
            assert _matches(T.TOTAL_CAPACITY, error)
        if key.startswith("auto-none"):
            assert isinstance(error, str) and _matches(T.AUTOFIT_FAILED, error)
        if key.startswith("auto-reduced"):
            lines = want["log_lines"]
            assert isinstance(lines, list) and _matches(T.AUTOFIT_REDUCED, lines[0])
        if key.startswith("auto-full"):
            lines = want["log_lines"]
            assert isinstance(lines, list) and _matches(T.AUTOFIT_FITS, lines[0])
