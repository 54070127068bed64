"""Every held-apart batch of measured runs (bench/data/perf/sources-r8 ... sources-r13, tests/perf_blind.py) parses as
every source row does, comes from none of the sources kept for evaluation nor from a source any fit of its time read
(nor an earlier blind batch), and every run plans at its release, so the blind score committed in each batch's
README.md covers all of them. The batches since round 10 stay out of every fit."""

from __future__ import annotations

from typing import Any

import pytest

from bench import perf_sources as P
from tests.perf_blind import BLIND_ORDER, PERF_DATA, batch_rows, rows_before
from tests.unit.test_perf_sources_file import FORBIDDEN, check_row

# runs per source, as each batch's README.md table lists them
RUNS_PER_SOURCE: dict[str, dict[str, int]] = {
    "sources-r8": {
        "Scicom-AI-Enterprise-Organization/llm-benchmaxxing": 86,
        "wmx ai-platform L4 baseline (ai.wmx.dev)": 6,
        "vllm-project/vllm#39168 (GLM-5.1-FP8 on MI300X, comment)": 1,
        "djangodevreng/dgx-spark-benchmarks": 100,
    },
    "sources-r9": {
        "AI-Hypercomputer/tpu-recipes (Trillium vLLM Llama 3.x recipe)": 2,
        "vllm-project/vllm#16458 (Llama-3.1-8B on TPU v6e-1, PR description)": 1,
        "vllm-project/vllm#23696 (gpt-oss-120b on 8x B200, PR description)": 1,
    },
    "sources-r10": {
        "vllm-project/vllm-ascend#13557 (Qwen2.5-0.5B-Instruct on one Ascend NPU, Quenching Action report)": 1,
        "violet-quartz/vllm-serving-experiments": 12,
        "vllm-project/vllm-ascend@db0493cb (PR #3218's merged description: Qwen2.5-7B ShareGPT burst on the "
        "Atlas 800I A2)": 1,
    },
    "sources-r11": {
        "vllm-project/recipes#58 (Qwen3-Next B200 outputs, PR head 1bc2b47)": 1,
        "llm-d/llm-d docs/accelerators/amd-mi355x-perf.md (PR #1233: Llama-3.3-70B FP8 on 8x MI355X)": 12,
        "vllm-project/recipes#431 (MI300X verified tag for Qwen3Guard: Qwen3Guard-Gen-8B on one MI300X)": 1,
        "llm-d/llm-d-benchmark collected/data/openshift/exp-7 (standalone vLLM replicas, Llama-3.1-8B)": 9,
        # half D (round 11b, speeddata11b)
        "vllm-project/recipes#127 (Llama 3.1-405B / 3.3-70B ROCm recipes on one MI355X, PR head be7e1c5)": 1,
        "kvcache-ai/Mooncake doc/en/vllm-benchmark-results (v0.1, Nov 2024): non-disaggregated vLLM baselines on "
        "one A10": 10,
    },
    "sources-r12": {
        "ROCm/vllm#375 (DeepSeek-R1 on 8x MI300X, comment of 2025-01-23)": 1,
        # half B
        "vllm-project/vllm#47276 (AITER MLA fix for DPA + FP8 KV: TP8 perf check on MI300, v0.23.0 image rows)": 3,
    },
    "sources-r13": {
        "adithyaJRunpod/vllm_bench (Qwen3-8B on one H100 SXM, vLLM 0.18.0, RunPod)": 167,
        "vllm-project/vllm#34924 (FlashInfer DeepGEMM swapAB default: MiniMax-M2.5 on 4x H100, the 'Before' "
        "block)": 1,
    },
    "sources-r14": {
        "pegainfer-project/pegainfer (vLLM reference runs on one RTX 5090: Qwen3-4B bf16 TP1)": 8
    },
    "sources-r15": {
        "surajssd/llm-k8s (vLLM upstream serving benchmark on Azure ND96asr_v4: Llama-3.3-70B-Instruct bf16, "
        "A100 40GB)": 12,
    },
    "sources-r16": {
        "muma378/vllm-benchmark nv-11 no-kvcache baseline (DeepSeek-R1-0528 FP8 on 8x H20-3e, vLLM 0.11.0)": 15,
        "HamzahTariq11/llama.cpp-and-vLLM-benchmarks (vLLM 0.31.0 on one Kaggle Tesla T4, Qwen2.5-1.5B-Instruct "
        "fp16)": 6,
        "mystous/vllm_hybrid BENCHMARK_RESULTS.md (GPU-only baseline: Qwen2.5-1.5B on one RTX 3090)": 1,
    },
}
BATCHES = tuple(RUNS_PER_SOURCE)
# round 10 made these fit sources; every later batch is scored blind on the shipped coefficients
FITTED_SINCE = ("sources-r8", "sources-r9")
# beyond FORBIDDEN: what the blind batches were also never taken from (the briefs' evaluation sets and the tools
# whose numbers are not measured runs)
KEPT = (*FORBIDDEN, "inferencex", "inferencemax", "aiconfigurator", "vllm/pull/43232", "gpustack")


def test_every_batch_is_listed_in_order() -> None:
    assert BLIND_ORDER[1:] == BATCHES
    assert sorted(
        path.name for path in PERF_DATA.glob("sources-r[0-9]*") if path.name in BLIND_ORDER
    ) == sorted(BLIND_ORDER)


@pytest.mark.parametrize("name", [name for name in BATCHES if name not in FITTED_SINCE])
def test_a_blind_batch_is_never_a_fit_directory(name: str, monkeypatch: Any) -> None:
    # FIT_DIRS names its folders one by one (never a glob), so no fit (perf_loso.py, measured_runs_loo.py,
    # perf_misses.py all read source_rows()) may see the batch
    folder = PERF_DATA / name
    # the provenance note: README.md up to round 13, SOURCES.md from round 14
    assert folder.is_dir() and list(folder.glob("*.jsonl"))
    assert (folder / "README.md").is_file() or (folder / "SOURCES.md").is_file()
    assert all(fit.resolve() != folder.resolve() for fit in P.FIT_DIRS)
    read: list[Any] = []
    monkeypatch.setattr(P, "read_rows", lambda files: read.extend(files) or [])
    P.source_rows()
    assert read and not [path for path in read if path.resolve().parent == folder.resolve()]


@pytest.mark.parametrize("name", BATCHES)
def test_every_row_parses_with_its_provenance(name: str) -> None:
    counts: dict[str, int] = {}
    for row in batch_rows(name):
        check_row(row)
        counts[row["source"]] = counts.get(row["source"], 0) + 1
        assert row["harness"] and row["vllm_version"]  # what was stated, and what was taken, is written down
    assert counts == RUNS_PER_SOURCE[name]


@pytest.mark.parametrize("name", BATCHES)
def test_no_row_comes_from_a_source_kept_for_evaluation(name: str) -> None:
    for row in batch_rows(name):
        text = f"{row['url']} {row['source']} {row['harness']}".lower()
        assert not any(bad in text for bad in KEPT), row["url"]


@pytest.mark.parametrize("name", BATCHES)
def test_a_batch_is_new_to_every_fit_and_every_earlier_batch(name: str) -> None:
    seen = rows_before(name)
    old_sources = {row["source"] for row in seen}
    old_urls = {row["url"] for row in seen}
    # the same printed block under another name would slip past the URL check: compare the measured keys too
    old_blocks = {tuple(sorted(row["measured"].items())) for row in seen}
    for row in batch_rows(name):
        assert row["source"] not in old_sources, row["source"]
        assert row["url"] not in old_urls, row["url"]
        assert tuple(sorted(row["measured"].items())) not in old_blocks, row["run_id"]


@pytest.mark.parametrize("name", BATCHES)
def test_every_run_plans_at_its_release(name: str) -> None:
    # the blind score skips a run the planner refuses ("not scored"); none may be, or the README's counts lie
    for row in batch_rows(name):
        run = P.plan_run(row)
        assert not isinstance(run, str), f"{row['run_id']}: {run}"
        assert run.version == P.run_version(row)
