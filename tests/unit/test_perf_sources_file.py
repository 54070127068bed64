"""bench/data/perf/sources.jsonl: the measured runs from outside the shared file parse, carry their
provenance and never come from the sources issue 23 keeps for evaluation."""

from __future__ import annotations

import json
import math
from pathlib import Path

from app.core.catalog import find_device, find_model
from app.core.perf.bench_args import BenchArgs

PERF = Path(__file__).resolve().parents[2] / "bench" / "data" / "perf"
SOURCES = PERF / "sources.jsonl"
SOURCES_DIR = PERF / "sources"  # one file per source (bench/data/perf/sources/README.md)
SOURCES_R6_DIR = PERF / "sources-r6"  # round 6's held-apart sources, scored blind (README.md there)
SOURCES_R7_DIR = PERF / "sources-r7"  # round 7's held-apart sources, scored blind (README.md there)
# issue 23: "Kept for evaluation — do not read or fit on these"
FORBIDDEN = (
    "gpustack",
    "performance-lab",
    "dennislee22/vllm-benchmarking",
    "inferencex/blob/",  # InferenceX's experimental/ sweeps (any InferenceX file path is refused)
    "inferencex/tree/",
    "experimental/",
    "inferencex/pull/1061",
    "vllm/pull/43232",
)
# vllm bench serve's result keys (vllm/benchmarks/serve.py, --save-result JSON)
RESULT_KEYS = {
    f"{stat}_{kind}_ms" for stat in ("mean", "median", "p99") for kind in ("ttft", "tpot", "itl", "e2el")
} | {"output_throughput", "request_throughput", "total_token_throughput"}
# runs per source, as the README tables list them
RUNS_PER_SOURCE = {
    "sariekr/gpu_conc": 12,
    "tenstorrent/tt-inference-server GPU reference runs": 32,
    "vllm-project/vllm-ascend#1605": 1,
    "dstackai/benchmarks": 62,
    "vllm-project/recipes": 5,
    "vllm-project/vllm#9722": 2,
    "cssnoeasy/a100-vllm-benchmark-blog": 16,
    "vllm-project/vllm-ascend Kimi-K2-Thinking tutorial": 8,
    "wang-junjian/wang-junjian.github.io vLLM T4 post": 13,
    "vllm-project/vllm#20469": 1,
    "vllm-project/vllm#17788": 1,
    "nerdalert/vllm-bench-automation": 12,
    "moreh-dev/mi355_benchmark": 40,
    "wfwan/gpt-oss-mi300x": 2,
    "vLLM and AITER MoE-tuning PR baselines": 4,
    "IOG-Foundation/llm-inference-benchmarks": 120,
    "vllm-project/vllm-project.github.io FP8 KV-cache post": 4,
    "Vultr inference cookbook (CUDA, HGX B200)": 13,
    "ambientlight/rtx-pro-6000-bench": 83,
    "ovg-project/kvcached vanilla-vLLM baselines": 4,
    "cloudrift-ai/server-benchmark": 20,
    "Wentao274/vllm-benchmark-test (NVIDIA H100 baselines)": 68,
    "maty0609/vllm-benchmarks": 3,
    "mushfiqrahman.dev Mistral-7B RTX 4090 post": 5,
    "vllm-project/vllm#12568": 1,
}
DATASETS = {"random", "sharegpt", "sonnet", "custom"}


def _rows() -> list[dict[str, object]]:
    held_apart = [*sorted(SOURCES_R6_DIR.glob("*.jsonl")), *sorted(SOURCES_R7_DIR.glob("*.jsonl"))]
    files = [SOURCES, *sorted(SOURCES_DIR.glob("*.jsonl")), *held_apart]
    return [
        json.loads(line)
        for path in files
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def test_every_row_parses_and_names_its_source_and_url() -> None:
    rows = _rows()
    counts: dict[str, int] = {}
    for row in rows:
        counts[str(row["source"])] = counts.get(str(row["source"]), 0) + 1
    assert counts == RUNS_PER_SOURCE
    for row in rows:
        check_row(row)


def check_row(row: dict[str, object]) -> None:
    """One measured run as every source file writes it (bench/data/perf/sources/README.md's row format); the
    held-apart directories' tests (test_perf_sources_blind.py) check their rows with it too."""
    assert isinstance(row["source"], str) and row["source"]
    url = row["url"]
    assert isinstance(url, str) and url.startswith("https://")  # a repository file, or a stored page
    find_model(str(row["model"]))  # raises on a model the catalog does not have
    find_device(str(row["device"]))
    measured = row["measured"]
    assert isinstance(measured, dict) and measured and set(measured) <= RESULT_KEYS
    assert all(isinstance(v, float | int) and v > 0 for v in measured.values())
    rate = row.get("request_rate", "inf")
    dataset = row.get("dataset_name", "random")
    assert dataset in DATASETS
    if dataset != "sharegpt":  # random, or the run's own mean lengths for a dataset not modelled
        assert isinstance(row["random_input_len"], int) and isinstance(row["random_output_len"], int)
    BenchArgs(  # the bench arguments are valid `vllm bench serve` arguments
        num_prompts=row["num_prompts"],
        max_concurrency=row.get("max_concurrency"),
        request_rate=math.inf if rate == "inf" else float(str(rate)),
        dataset_name="sharegpt" if dataset == "sharegpt" else "random",
        random_input_len=row.get("random_input_len", 1024),
        random_output_len=row.get("random_output_len", 128),
    )


def test_no_row_comes_from_a_source_kept_for_evaluation() -> None:
    for row in _rows():
        text = f"{row['url']} {row['source']}".lower()
        assert not any(bad in text for bad in FORBIDDEN), row["url"]


def test_the_forbidden_list_catches_what_it_names() -> None:
    # not vacuous: each kept-for-evaluation origin, as a URL, is caught by the same check
    for url in (
        "https://docs.gpustack.ai/latest/performance-lab/gpt-oss-120b/h100",
        "https://github.com/dennislee22/vLLM-benchmarking/blob/main/README.md",
        "https://github.com/SemiAnalysisAI/InferenceX/blob/main/experimental/x.json",
        "https://github.com/SemiAnalysisAI/InferenceX/pull/1061",
        "https://github.com/vllm-project/vllm/pull/43232",
    ):
        assert any(bad in url.lower() for bad in FORBIDDEN), url
