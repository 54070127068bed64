"""A request too long for max_model_len: vLLM's one rule (too_long), the benchmark's longest request
(BenchArgs.longest_request) and the same refusal on the API, the page and `kv-planner perf`.

The rule is vLLM 0.19.0 vllm/entrypoints/openai/engine/serving.py OpenAIServing._validate_input: a prompt
of max_model_len tokens or more is refused, then a prompt + max_tokens above max_model_len. The random
dataset's top ends are vllm/benchmarks/datasets.py RandomDataset.get_sampling_params (ceil(L (1 + r))).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from app.cli import run_perf
from app.core.errors import PlannerError
from app.core.perf.bench_args import BenchArgs
from app.core.perf.too_long import too_long

LLAMA_8B = {"model": "meta-llama/Llama-3.1-8B-Instruct", "device": "nvidia-h100-sxm-80gb"}


def _rule(prompt: int, output: int, mml: int) -> PlannerError | None:
    return too_long(
        prompt_tokens=prompt, output_tokens=output, max_model_len=mml, prompt_field="p", output_field="o"
    )


def test_the_rule_is_vllms_two_checks_in_order() -> None:
    # 1,023 + 1 = 1,024 <= 1,024 and 1,023 < 1,024: served
    assert _rule(1023, 1, 1024) is None
    # a prompt of exactly max_model_len: the first check (token_num >= max_model_len), on the prompt
    at = _rule(1024, 1, 1024)
    assert at is not None and at.field == "p"
    assert at.message == (
        "a prompt of 1,024 tokens leaves no room for output within max_model_len (1,024): "
        "vLLM rejects a prompt of max_model_len tokens or more"
    )
    # 1,000 + 25 = 1,025 > 1,024: the second check (token_num + max_tokens > max_model_len), on max_tokens
    over = _rule(1000, 25, 1024)
    assert over is not None and over.field == "o"
    assert over.message == (
        "1,000 input + 25 output tokens = 1,025 exceed max_model_len (1,024): vLLM rejects such requests"
    )


def test_random_longest_request_is_the_ranges_top_ends() -> None:
    # no range: the lengths themselves, the prefix added: 100 + 1,000 and 200
    assert BenchArgs(
        random_input_len=1000, random_output_len=200, random_prefix_len=100
    ).longest_request() == (
        1100,
        200,
    )
    # r = 0.3: ceil(1,001 x 1.3 = 1,301.3) = 1,302 and ceil(7 x 1.3 = 9.1) = 10
    assert BenchArgs(
        random_input_len=1001, random_output_len=7, random_range_ratio=0.3
    ).longest_request() == (1302, 10)
    # r = 0.1 in floats, as vLLM computes it: 1,000 x 1.1 = 1100.0 (1,100), but 100 x 1.1 =
    # 110.00000000000001, ceil 111 tokens of output (not 110)
    assert BenchArgs(
        random_input_len=1000, random_output_len=100, random_range_ratio=0.1
    ).longest_request() == (
        1100,
        111,
    )


def test_sharegpt_longest_request_is_the_longest_drawn_pair() -> None:
    # the shipped sharegpt_v3_lengths.csv in vLLM's seed-0 order: of its first 100 rows the longest is
    # 802 + 768 = 1,570 tokens (its longest prompt, 802, is the same row); of the first 1,000, 997 + 768
    assert BenchArgs(dataset_name="sharegpt", num_prompts=100).longest_request() == (802, 768)
    assert BenchArgs(dataset_name="sharegpt", num_prompts=1000).longest_request() == (997, 768)


def _api(client: Any, body: dict[str, Any]) -> tuple[int, list[dict[str, Any]]]:
    r = client.post("/api/performance", json=body)
    return r.status_code, r.json().get("detail", []) if r.status_code != 200 else []


def test_api_refuses_the_benchmarks_longest_request_by_vllms_rule(client: Any) -> None:
    sharegpt = {"dataset_name": "sharegpt", "num_prompts": 100, "max_concurrency": 4}
    # 802 + 768 = 1,570 > 1,569: the sum check; the lengths are the dataset's, so dataset_name is named
    status, detail = _api(client, {**LLAMA_8B, "max_model_len": 1569, "bench": sharegpt})
    assert status == 422
    assert [d["loc"][-1] for d in detail] == ["bench.dataset_name"]
    assert detail[0]["msg"] == (
        "the benchmark's longest request, 802 input + 768 output tokens = 1,570, exceeds max_model_len "
        "(1,569): vLLM rejects it"
    )
    # exactly 1,570: every request fits, the run is simulated
    assert _api(client, {**LLAMA_8B, "max_model_len": 1570, "bench": sharegpt})[0] == 200
    # random, r = 0.1: prompt ceil(1,000 x 1.1) = 1,100 >= 1,100: the prompt check, on random_input_len
    rand = {"num_prompts": 8, "random_input_len": 1000, "random_output_len": 10, "random_range_ratio": 0.1}
    status, detail = _api(client, {**LLAMA_8B, "max_model_len": 1100, "bench": rand})
    assert status == 422 and [d["loc"][-1] for d in detail] == ["bench.random_input_len"]
    assert detail[0]["msg"].startswith("the benchmark's longest prompt (1,100 tokens) leaves no room")
    # 1,100 + ceil(10 x 1.1 = 11.0) = 1,111 > 1,110: the sum check, on random_output_len; 1,111 serves it
    status, detail = _api(client, {**LLAMA_8B, "max_model_len": 1110, "bench": rand})
    assert status == 422 and [d["loc"][-1] for d in detail] == ["bench.random_output_len"]
    assert _api(client, {**LLAMA_8B, "max_model_len": 1111, "bench": rand})[0] == 200


def test_page_and_cli_say_the_same(client: Any) -> None:
    page = client.get(
        "/speed",
        params={
            **LLAMA_8B,
            "max_model_len": "1569",
            "bench_serve": "true",
            "dataset_name": "sharegpt",
            "num_prompts": "100",
        },
    )
    # the page names the benchmark beside the section (its own field name) and the steady state still
    # answers at the benchmark's mean request, as for a bad benchmark argument (round 11's walk: the
    # whole section was this one error)
    assert page.status_code == 200, page.text
    error = re.search(r'id="speed-bench-error"><code>([a-z_]+)</code>: ([^<]+)<', page.text)
    assert error is not None and error.group(1) == "dataset_name"
    assert "802 input + 768 output tokens = 1,570, exceeds max_model_len (1,569)" in error.group(2)
    assert 'id="speed-ttft"' in page.text and 'id="speed-bench"' not in page.text
    with pytest.raises(PlannerError) as cli:
        run_perf(
            [
                LLAMA_8B["model"],
                "--device",
                LLAMA_8B["device"],
                "--max-model-len",
                "1569",
                "--dataset-name",
                "sharegpt",
                "--num-prompts",
                "100",
            ]
        )
    assert cli.value.field == "bench.dataset_name"
    assert "802 input + 768 output tokens = 1,570, exceeds max_model_len (1,569)" in cli.value.message
