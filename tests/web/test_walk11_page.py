"""Things the round-11 re-walk of the new-user walkthrough (shared/reviews/new-user-walkthrough-2026-12.md)
still found on the page, each in the state it was seen (lane walk11)."""

from __future__ import annotations

import html
import re
from pathlib import Path

from fastapi.testclient import TestClient

from app.web.app import create_app

APP = create_app()


def _zh() -> TestClient:
    return TestClient(APP, cookies={"lang": "zh"})


def test_explore_block_table_marks_and_engine_line_in_chinese() -> None:
    # /explore?lang=zh showed the block-size row 16 with the badges "default" and "current" in English,
    # and the workload's engine sentence said "前缀缓存 on" (the walk's screenshot i10-zh-explore.png).
    page = _zh().get("/explore").text
    row = re.search(r'<tr data-block-size="16".*?</th>', page, re.S).group(0)
    assert '<span class="mark mark-default">默认</span>' in row
    assert '<span class="mark mark-current">当前</span>' in row
    assert ">default<" not in row and ">current<" not in row
    engine = re.search(r"引擎： (.*?)</p>", page, re.S).group(1)
    assert "前缀缓存 开" in engine and " on," not in engine
    # English keeps its words and the row's class (the CSS hooks on the msgid, not on the shown word)
    en = TestClient(APP).get("/explore?lang=en").text
    row_en = re.search(r'<tr data-block-size="16".*?</th>', en, re.S).group(0)
    assert 'class=" current"' in row_en
    assert (
        '<span class="mark mark-default">default</span><span class="mark mark-current">current</span>'
        in row_en
    )
    assert "prefix caching on," in en


# The walkthrough's composed vLLM 0.10.1.1 start-up of Llama-3.1-8B-Instruct on an H100 (its key lines, as it
# quotes them; it prints no device line and no total), item 7: "Device: nvidia-a100-sxm4-80gb (inferred from
# the KV pool)" with no word about the H100, which reports the same 79.10 GiB.
H100_LOG_0_10_1_1 = """\
INFO 09-01 10:00:02 [api_server.py:1805] vLLM API server version 0.10.1.1
INFO 09-01 10:00:02 [utils.py:326] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 32768, 'gpu_memory_utilization': 0.9}
INFO 09-01 10:00:20 [gpu_model_runner.py:2007] Model loading took 14.9889 GiB and 4.127469 seconds
INFO 09-01 10:00:30 [gpu_worker.py:276] Available KV cache memory: 54.98 GiB
INFO 09-01 10:00:30 [kv_cache_utils.py:849] GPU KV cache size: 450,384 tokens
INFO 09-01 10:00:30 [kv_cache_utils.py:853] Maximum concurrency for 32,768 tokens per request: 13.74x
INFO 09-01 10:00:45 [gpu_model_runner.py:2708] Graph capturing finished in 12 secs, took 0.56 GiB
INFO:     Application startup complete.
"""


def _device_items(page: str) -> list[str]:
    ul = re.search(r'<ul class="model-note device-reasoning" id="doctor-device">(.*?)</ul>', page, re.S)
    assert ul is not None
    return [
        html.unescape(re.sub(r"\s+", " ", li)).strip()
        for li in re.findall(r"<li>(.*?)</li>", ul.group(1), re.S)
    ]


def test_doctor_names_the_same_total_cards_it_did_not_pick() -> None:
    # Replayed at the 0.10.2 rules on the 79.10 GiB cards, budget 79.10 x 0.9 = 71.19 GiB, weights 14.96 GiB,
    # non-torch 0.25 GiB (graphs outside the budget before 0.21). The sampler profile is max_num_seqs rows of
    # fp32 logits x 9.6 copies (versions_changelog SAMPLER_COPIES_OLD) plus the 0.05 GiB base:
    #   A100 (0.10.2 arg_utils leaves 'a100' out of the large tier): 256 x 128,256 x 4 x 9.6 B = 1.17 GiB
    #     -> 71.19 - 14.96 - 1.22 - 0.25 = 54.76 GiB, 0.22 GiB from the log's 54.98 (the pick);
    #   H100 / H800 / A800: 1,024 rows = 4.70 GiB -> 71.19 - 14.96 - 4.75 - 0.25 = 51.24 GiB, 3.74 GiB off.
    page = TestClient(APP).post("/doctor", data={"log": H100_LOG_0_10_1_1}, params={"lang": "en"}).text
    items = _device_items(page)
    assert len(items) == 3
    assert items[0].startswith("the log prints no device total; nvidia-a100-sxm4-80gb was inferred")
    assert items[1] == (
        "nvidia-a100-pcie-80gb predicts the same KV pool (54.76 GiB): the log cannot tell it from "
        "nvidia-a100-sxm4-80gb, and the planner link uses nvidia-a100-sxm4-80gb"
    )
    assert items[2].startswith(
        "nvidia-h100-sxm-80gb, nvidia-h100-pcie-80gb, nvidia-h800-80gb, nvidia-a800-80gb report the same "
        "79.10 GiB total, so the total does not rule them out; the planner predicts a KV pool of 51.24 GiB "
        "there, 3.74 GiB from the log's"
    )
    zh = _device_items(
        TestClient(APP).post("/doctor", data={"log": H100_LOG_0_10_1_1}, params={"lang": "zh"}).text
    )
    assert zh[2].startswith(
        "nvidia-h100-sxm-80gb, nvidia-h100-pcie-80gb, nvidia-h800-80gb, nvidia-a800-80gb 的总显存同为 79.10 GiB"
    )
    assert "51.24 GiB" in zh[2] and "3.74 GiB" in zh[2]


LOGS = Path(__file__).parents[1] / "data" / "logs"


def test_doctor_in_chinese_words_who_answered_and_where_the_total_came_from() -> None:
    # A real Ascend log whose KV pool is negative (tests/data/logs/real/ascend_qwen3_14b_negative_kv.log): step 4
    # read "按当前配置（S = 4,096）：失败（log）；…；并发 1（--max-num-seqs 1）：失败（arithmetic）".
    log = (LOGS / "real" / "ascend_qwen3_14b_negative_kv.log").read_text(encoding="utf-8")
    page = html.unescape(_zh().post("/doctor", data={"log": log}).text)
    assert "失败（日志）" in page and "失败（算术）" in page
    assert "（log）" not in page and "（arithmetic）" not in page
    # A real ROCm log that prints the device total (heldout-2026-12b, Strix Halo, 57.38 of 124.0 GiB free):
    # step 2 read "预算 = 总量 124.00 GiB（printed）× gpu_memory_utilization 0.8 = 99.20 GiB".
    log = (LOGS / "heldout-2026-12b" / "rocm_strix_halo_free_memory_57_38_of_124_0.log").read_text(
        encoding="utf-8"
    )
    page = html.unescape(_zh().post("/doctor", data={"log": log}).text)
    assert "总量 124.00 GiB（日志打印）× gpu_memory_utilization 0.8 = 99.20 GiB" in page
    assert "（printed）" not in page


def test_speed_card_of_a_load_oom_names_the_verdict_and_its_first_remedy_flag() -> None:
    # Llama-3.1-70B (bf16, 141.1 GB of weights = 131.42 GiB) on one H100 (79.10 GiB): the verdict is
    # "Load OOM: the weights do not fit" (first remedy: --tensor-parallel-size); the Speed card said
    # "gpu_memory_utilization: vLLM would not start with these settings", naming a field the user never
    # touched and one that cannot help (the walkthrough, 2a).
    client = TestClient(APP)
    speed = client.get("/speed?v=1&model=meta-llama%2FLlama-3.1-70B", headers={"HX-Request": "true"}).text
    error = re.search(
        r'<div class="field-error" role="alert" id="speed-error">(.*?)</div>', speed, re.S
    ).group(1)
    assert "<code>tensor_parallel_size</code>" in error and "gpu_memory_utilization" not in error
    assert "(Load OOM: the weights do not fit)" in error
    api = client.post("/api/performance", json={"model": "meta-llama/Llama-3.1-70B"})
    assert api.status_code == 422 and api.json()["detail"][0]["loc"] == ["body", "tensor_parallel_size"]
    zh = _zh().get("/speed?v=1&model=meta-llama%2FLlama-3.1-70B", headers={"HX-Request": "true"}).text
    assert "按这些设置 vLLM 无法启动（加载 OOM：权重放不下）" in zh
    # a budget-bound start still names the utilization (its first remedy raises it): Llama-3.1-8B on a
    # 17 GiB device, 17 x 0.92 = 15.64 GiB budget - 14.96 GiB weights - the peak leaves -0.99 GiB of KV
    budget = client.post(
        "/api/performance", json={"model": "meta-llama/Llama-3.1-8B", "device_memory_gib": 17}
    )
    assert budget.status_code == 422 and budget.json()["detail"][0]["loc"] == [
        "body",
        "gpu_memory_utilization",
    ]
    assert "(Budget: no room for a KV pool)" in budget.json()["detail"][0]["msg"]


FLEET_70B = (
    "/fleet?v=1&model=meta-llama%2FLlama-3.1-70B-Instruct&max_model_len=32768&input_tokens=2000"
    "&output_tokens=500&requests_per_s=30&slo_ttft_ms=1500&slo_tpot_ms=40&price_per_device_hour=3"
    "&devices_per_node=8"
)


def test_fleet_chart_labels_say_which_fp8_is_the_kv_cache() -> None:
    # The walkthrough's fleet answer (70B, 30 req/s): the cost chart's table and the frontier's legend named
    # layouts "TP 2 · fp8 · fp8" next to "TP 2 · fp8" (weights fp8, KV cache fp8 / auto). Each part now says
    # what it is; KV auto (the model's dtype) stays unsaid, as before.
    page = html.unescape(TestClient(APP).get(FLEET_70B + "&lang=en").text)
    table = re.search(r'<table class="symbols" id="fleet-chart-table">.*?</table>', page, re.S).group(0)
    legend = re.search(r'<ul class="pareto-legend">.*?</ul>', page, re.S).group(0)
    for part in (table, legend):
        assert "TP 2 · fp8 weights · fp8 KV" in part
        assert not re.search(r"TP \d+ · \w+ · fp8<", part) and "· fp8 · fp8" not in part
    assert "TP 2 · fp8 weights<" in table  # the TP 2 layout with the KV cache at auto
    zh = html.unescape(_zh().get(FLEET_70B).text)
    assert "TP 2 · fp8 权重 · fp8 KV" in zh
    # each layout's details said "#1 TP 2 · fp8 · fp8 · 18 devices" too
    summary = re.search(
        r'<details class="fleet-detail" id="fleet-detail-1".*?<summary>(.*?)</summary>', page, re.S
    ).group(1)
    assert summary == "#1 TP 2 · fp8 weights · KV cache fp8 · 18 devices"
    assert "#1 TP 2 · fp8 权重 · KV cache fp8 · 18 台设备" in zh


def test_a_cut_config_json_says_why_in_a_whole_sentence() -> None:
    # The walkthrough cut Qwen3-30B-A3B-Instruct-2507's config.json at 300 characters: the page said
    # "config_json: not valid JSON (line 14, column 3): Unterminated string starting at" and stopped, in
    # English on the Chinese page too. Here: the real Qwen3-30B-A3B config (tests/data/configs/real) cut the
    # same way; its 14th line opens the string "moe_intermediate_size" at column 3, which the cut leaves open.
    config = (
        Path(__file__).parents[1] / "data" / "configs" / "real" / "Qwen__Qwen3-30B-A3B.config.json"
    ).read_text()
    cut = config[:300]
    assert cut.splitlines()[13].startswith('  "') and cut.count('"') % 2 == 1
    en = html.unescape(
        TestClient(APP).post("/", data={"v": "1", "config_json": cut}, params={"lang": "en"}).text
    )
    assert "not valid JSON (line 14, column 3): a string opens here and is never closed" in en
    assert "starting at" not in en
    zh = html.unescape(_zh().post("/", data={"v": "1", "config_json": cut}).text)
    assert "不是有效的 JSON（第 14 行，第 3 列）：此处开始的字符串没有闭合" in zh and "Unterminated" not in zh
    # the --speculative-config JSON says the same (specs.py, the other reader of a JSON string)
    spec = TestClient(APP).get(
        "/api/estimate", params={"model": "meta-llama/Llama-3.1-8B", "speculative_config": '{"x": 1,}'}
    )
    assert spec.status_code == 422 and "a comma before the object's closing brace" in spec.text


def test_speed_says_requests_run_in_the_replica_not_per_rank() -> None:
    # The walkthrough's 70B permalink (TP 8, one replica, 64 clients): "64 requests run at once per rank" read
    # as 64 per GPU. The count is per engine (a data-parallel rank, Performance.running_requests): at DP 1 it is
    # the replica; at DP 2 the 64 clients split 32 per rank.
    client = TestClient(APP)
    base = "/speed?v=1&model=meta-llama%2FLlama-3.1-70B&devices=8&max_model_len=128000&target_concurrency=64&gpu_memory_utilization=0.95&tensor_parallel_size=8&concurrency=64"
    line = re.search(r'<p id="speed-secondary">([^<]+)</p>', client.get(base).text).group(1)
    assert "64 requests run at once in the replica (limited by the number of clients)." in html.unescape(line)
    assert "per rank" not in line
    zh = re.search(r'<p id="speed-secondary">([^<]+)</p>', _zh().get(base).text).group(1)
    assert "该副本同时运行 64 个请求" in zh and "rank" not in zh
    dp2 = "/speed?v=1&model=Qwen%2FQwen3-30B-A3B&devices=2&max_model_len=32768&data_parallel_size=2&concurrency=64"
    line = re.search(r'<p id="speed-secondary">([^<]+)</p>', client.get(dp2).text).group(1)
    assert "32 requests run at once per data-parallel rank" in html.unescape(line)


def test_doctor_lists_only_the_exclusions_of_cards_it_could_be_mistaken_for() -> None:
    # The walkthrough's H100 log with its engine line (dtype=torch.bfloat16): the device notes listed V100 32GB,
    # V100 16GB and T4 as ruled out for bfloat16 (compute capability < 8.0), cards of 32 and 16 GB that a
    # 54.98 GiB KV pool had ruled out already. Only cards of about the chosen card's 79.10 GiB are worth a line.
    engine = (
        "INFO 09-01 10:00:09 [core.py:74] Initializing a V1 LLM engine (v0.10.1.1) with config: "
        "model='meta-llama/Llama-3.1-8B-Instruct', dtype=torch.bfloat16, max_seq_len=32768, "
        "tensor_parallel_size=1, pipeline_parallel_size=1, quantization=None, enforce_eager=False, kv_cache_dtype=auto\n"
    )
    log = H100_LOG_0_10_1_1.replace("INFO 09-01 10:00:20", engine + "INFO 09-01 10:00:20", 1)
    items = _device_items(TestClient(APP).post("/doctor", data={"log": log}, params={"lang": "en"}).text)
    assert items[0].startswith("the log prints no device total; nvidia-a100-sxm4-80gb was inferred")
    assert not [i for i in items if "needs compute capability" in i]
    # with no device at all (a log of nothing but an engine line) every exclusion is still said
    bare = engine.replace("kv_cache_dtype=auto", "kv_cache_dtype=auto, attention_backend=FLASH_ATTN")
    page = TestClient(APP).post("/doctor", data={"log": bare}, params={"lang": "en"}).text
    assert "nvidia-v100-sxm2-32gb: bfloat16 needs compute capability ≥ 8.0 (it has 7.0)" in html.unescape(
        page
    )


def _paste_problems(client: TestClient, command: str) -> list[str]:
    page = client.get("/", params={"v": "1", "command": command}).text
    section = re.search(r'<section id="results".*?</ul>', page, re.S).group(0)
    return [
        html.unescape(re.sub(r"<[^>]+>|\s+", " ", li)).strip()
        for li in re.findall(r"<li[^>]*>(.*?)</li>", section, re.S)
    ]


def test_a_refused_paste_names_every_bad_value_in_words() -> None:
    # "Each problem:" listed one: a paste with two values vLLM's config refuses named only the first, and a
    # value the form refuses read "tensor_parallel_size: Value error, must be a power of two" (pydantic's prefix).
    client = TestClient(APP, cookies={"lang": "en"})
    two = _paste_problems(
        client, "vllm serve Qwen/Qwen2.5-72B-Instruct --gpu-memory-utilization 2 --pipeline-parallel-size 0"
    )
    assert two == [
        "gpu_memory_utilization : Input should be less than or equal to 1",
        "pipeline_parallel_size : Input should be greater than or equal to 1",
    ]
    tp = _paste_problems(client, "vllm serve Qwen/Qwen2.5-72B-Instruct --tensor-parallel-size 3")
    assert tp == [
        "tensor_parallel_size : must be a power of two (1, 2, 4, 8, 16, 32, 64, 128, 256): the tensor-parallel sizes of real machines"
    ]
    zh = _paste_problems(
        _zh(), "vllm serve Qwen/Qwen2.5-72B-Instruct --gpu-memory-utilization 2 --pipeline-parallel-size 0"
    )
    assert zh == ["gpu_memory_utilization : 应小于或等于 1", "pipeline_parallel_size : 应大于或等于 1"]
