"""The quantized-shard refusals (app/core/quant_shards.py) on the planner page: the verdict names the field and
says vLLM's own error, and the plan vLLM serves is not refused.

Configs: tests/data/configs/heldout_0_33q (sgl-project/ome fixtures): Llama-2-7B AWQ and GPTQ, 4 bit, group 128,
intermediate 11,008, torch_dtype float16. At TP 8 down_proj's shard is 11,008 / 8 = 1,376 = 10 x 128 + 96."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data/configs/heldout_0_33q"
AWQ = (DATA / "sgl-project--ome-quant-awq-llama-2-7b_config.json").read_text(encoding="utf-8")
GPTQ = (DATA / "sgl-project--ome-quant-gptq-llama-2-7b_config.json").read_text(encoding="utf-8")


def _verdict(page: str) -> str:
    match = re.search(r'<div class="verdict[^"]*" id="verdict"[^>]*>(.*?)</div>', page, re.S)
    assert match, "no verdict on the page"
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", match.group(1))))


def _plan(client, config: str, **fields: str):
    data = {"config_json": config, "vllm_version": "0.33.0", "device": "a100", **fields}
    return client.post("/", data=data)


def test_an_awq_group_split_at_tp_8_is_refused_in_view_naming_the_field(client):
    # 0.33.0 auto_awq.py: Marlin does not take a straddled group, AutoAWQLinearMethod raises
    page = _plan(client, AWQ, tensor_parallel_size="8")
    verdict = _verdict(page.text)
    assert page.status_code == 422 and "vLLM would refuse this combination" in verdict
    assert verdict.count("tensor_parallel_size") == 1 and "1,376 of down_proj's 11,008 inputs" in verdict
    assert (
        "AWQ group size 128" in verdict
        and "The input size is not aligned with the quantized weight shape" in verdict
    )
    # TP 2: 5,504 = 43 x 128, whole groups: it plans
    assert "vLLM would refuse" not in _verdict(_plan(client, AWQ, tensor_parallel_size="2").text)


def test_gptq_in_bfloat16_at_tp_8_is_refused_and_a_t4s_fallback_to_float16_is_served(client):
    page = _plan(client, GPTQ, tensor_parallel_size="8", dtype="bfloat16")
    verdict = _verdict(page.text)
    assert page.status_code == 422 and "tensor_parallel_size" in verdict
    assert "Failed to find a kernel that can implement the WNA16 linear layer." in verdict
    # the same weights saved in bfloat16, --dtype auto on T4s (7.5: no bfloat16, vLLM falls back to float16):
    # Exllama takes the straddled group, so the page plans it
    bf16 = json.dumps(json.loads(GPTQ) | {"torch_dtype": "bfloat16"})
    t4 = _plan(client, bf16, tensor_parallel_size="8", device="t4")
    assert "vLLM would refuse" not in _verdict(t4.text)
