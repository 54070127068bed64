"""The doctor reads the extras from logs (issue 16, item 1) and its prediction takes every flag the log
shows through the shared planner-parameter model (issue 13, item 8).

Logs: tests/data/logs/real/ascend_0.9.1_llama31_8b_eagle3_engine_line.log (vllm-ascend#2667, a real
engine-config line with speculative_config); tests/data/logs/extras/v1_0.7_70b_w8a8_command_with_draft_and_lora.log (sources.json there),
the real log of vllm PR 12569 (tests/data/logs/real/v1_0.7_llama31_70b_w8a8_command.log) with its pasted
command extended by two real command-line fragments:
  --speculative-config '{"model": "meta-llama/Llama-3.2-1B-Instruct", "num_speculative_tokens": 5}'
    (AWS Prescriptive Guidance "gen-ai-inference-architecture-and-best-practices-on-aws", speculative
    decoding configuration example for meta-llama/Llama-3.1-70B-Instruct; search index id 70481515223)
  --enable-lora --max-lora-rank 64
    (vllm#2847, dspoka's answer: "python -m vllm.entrypoints.openai.api_server --max-lora-rank 64 …
    --enable-lora --lora-modules …")
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.diagnose import diagnose
from app.core.diagnose.case import NOT_FROM_LOG, SERVE_FIELDS
from app.core.logs import LogFacts, parse_startup_log
from app.core.specs import ServeConfig

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
EAGLE3_REAL = LOGS / "real" / "ascend_0.9.1_llama31_8b_eagle3_engine_line.log"
DRAFT_AND_LORA = LOGS / "extras" / "v1_0.7_70b_w8a8_command_with_draft_and_lora.log"
PLAIN = LOGS / "real" / "v1_0.7_llama31_70b_w8a8_command.log"


def test_every_serve_flag_has_a_log_fact_of_the_same_name() -> None:
    # one parameter model: the doctor's list is ServeConfig's, less what a log cannot carry as such
    assert set(SERVE_FIELDS) | NOT_FROM_LOG == set(ServeConfig.model_fields)
    assert set(SERVE_FIELDS) <= set(LogFacts.model_fields)
    for extra in ("speculative_config", "enable_lora", "max_loras", "max_lora_rank", "limit_mm_per_prompt"):
        assert extra in SERVE_FIELDS
    assert {"data_parallel_size", "enable_expert_parallel", "kv_offloading_size_gib"} <= set(SERVE_FIELDS)


def test_real_engine_line_speculative_config_is_read() -> None:
    # vllm-ascend#2667: "speculative_config=SpeculativeConfig(method='eagle3', model='/root/.cache/…/
    # EAGLE3-LLaMA3.1-Instruct-8B', num_spec_tokens=2)" on the "Initializing a V1 LLM engine (v0.9.1)" line
    facts = parse_startup_log(EAGLE3_REAL.read_text(encoding="utf-8"))
    assert facts.speculative_config == {
        "method": "eagle3",
        "model": "/root/.cache/modelscope/hub/models/vllm-ascend/EAGLE3-LLaMA3.1-Instruct-8B",
        "num_speculative_tokens": 2,
    }
    assert facts.enable_chunked_prefill is True  # "chunked_prefill_enabled=True" (the pre-0.11 spelling)
    assert (facts.max_model_len, facts.kv_tokens, facts.max_concurrency) == (128, 252_800, 1975.0)
    assert "speculative_config" in facts.evidence


def test_a_draft_the_catalog_lacks_is_named_and_left_out() -> None:
    d = diagnose(
        log_text=EAGLE3_REAL.read_text(encoding="utf-8"),
        metrics_text=None,
        device_hint="huawei-ascend-910b-64gb",
    )
    assert d.model_id == "meta-llama/Meta-Llama-3.1-8B-Instruct"
    assert any("EAGLE3-LLaMA3.1-Instruct-8B" in n and "not in the catalog" in n for n in d.notes)
    assert d.prediction is not None and d.prediction.extras == []
    assert "speculative_config" not in d.planner_inputs


def test_pasted_command_extras_reach_the_prediction() -> None:
    """Llama-3.1-70B w8a8 at TP 1 on an H100 (the hint; PR 12569's log names no card), bf16 activations.
    Draft Llama-3.2-1B-Instruct at draft TP 1: 1,235,814,400 params x 2 B = 2,471,628,800 B; its KV
    16 layers x 2 x 8 heads x 64 x 2 B = 32,768 B per token (tests/unit/test_extras.py, same shapes).
    One LoRA slot of rank 64 on Llama-3.1-70B at TP 1 (lora/layers/*.py create_lora_weights, 0.19.0):
      qkv A 3 x 64 x 8192 = 1,572,864        B (8192 + 2 x 1024) x 64 = 655,360
      o   A 64 x 8192 = 524,288              B 8192 x 64 = 524,288
      gate_up A 2 x 64 x 8192 = 1,048,576    B 2 x 28672 x 64 = 3,670,016
      down A 64 x 28672 = 1,835,008          B 8192 x 64 = 524,288
      = 10,354,688 per layer x 80 = 828,375,040; embed_tokens and lm_head 2 x (128256 + 8192) x 64 = 17,465,344
      = 845,840,384 elements x 2 B = 1,691,680,768 B (max_loras defaults to 1)."""
    text = DRAFT_AND_LORA.read_text(encoding="utf-8")
    facts = parse_startup_log(text)
    assert facts.speculative_config == {
        "model": "meta-llama/Llama-3.2-1B-Instruct",
        "num_speculative_tokens": 5,
    }
    assert (facts.enable_lora, facts.max_lora_rank) == (True, 64)
    d = diagnose(log_text=text, metrics_text=None, device_hint="h100")
    plain = diagnose(log_text=PLAIN.read_text(encoding="utf-8"), metrics_text=None, device_hint="h100")
    assert d.prediction is not None and plain.prediction is not None
    ledger = {item.name: item.device_bytes for item in d.prediction.extras}
    assert ledger == {"speculative": 2_471_628_800 + 32_768, "lora_slots": 1_691_680_768}
    assert d.prediction.weights_bytes - plain.prediction.weights_bytes == 2_471_628_800 + 1_691_680_768
    assert (plain.prediction.kv_bytes_per_token, d.prediction.kv_bytes_per_token) == (327_680, 360_448)
    # the planner link plans the same configuration
    assert d.planner_inputs["speculative_config"] == (
        '{"model":"meta-llama/Llama-3.2-1B-Instruct","num_speculative_tokens":5}'
    )
    assert (d.planner_inputs["enable_lora"], d.planner_inputs["max_lora_rank"]) == ("true", "64")


def test_v019_non_default_args_and_engine_line_carry_every_extra() -> None:
    # vLLM 0.19.0 prints the argparse Namespace differences as a Python dict (entrypoints/utils.py
    # log_non_default_args) and VllmConfig.__str__ on the engine line (config/vllm.py): values as printed
    args = (
        "(APIServer pid=1) INFO 12-01 00:00:00 [utils.py:233] non-default args: {'model_tag': "
        "'Qwen/Qwen2.5-VL-7B-Instruct', 'model': 'Qwen/Qwen2.5-VL-7B-Instruct', 'enable_lora': True, "
        "'max_loras': 4, 'max_lora_rank': 32, 'max_cpu_loras': 8, 'fully_sharded_loras': True, "
        "'limit_mm_per_prompt': {'image': 0, 'video': 0}, 'data_parallel_size': 2, "
        "'kv_offloading_size': 64.0, 'speculative_config': {'method': 'ngram', "
        "'num_speculative_tokens': 5, 'prompt_lookup_max': 4}}\n"
        "(EngineCore_DP0 pid=2) INFO 12-01 00:00:05 [core.py:107] Initializing a V1 LLM engine (v0.19.0) "
        "with config: model='Qwen/Qwen2.5-VL-7B-Instruct', speculative_config=SpeculativeConfig("
        "method='ngram', model=None, num_spec_tokens=5), tokenizer='Qwen/Qwen2.5-VL-7B-Instruct', "
        "dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1, pipeline_parallel_size=1, "
        "data_parallel_size=2, enable_prefix_caching=True, enable_chunked_prefill=True\n"
    )
    facts = parse_startup_log(args)
    assert (facts.enable_lora, facts.max_loras, facts.max_lora_rank, facts.max_cpu_loras) == (True, 4, 32, 8)
    assert facts.fully_sharded_loras is True
    assert facts.limit_mm_per_prompt == {"image": 0, "video": 0}
    assert (facts.data_parallel_size, facts.kv_offloading_size_gib) == (2, 64.0)
    # the engine line's repr outranks the args dict: it is what the engine ran with
    assert facts.speculative_config == {"method": "ngram", "num_speculative_tokens": 5}
    d = diagnose(log_text=args, metrics_text=None, device_hint="h100")
    assert d.prediction is not None
    names = {item.name for item in d.prediction.extras}
    assert {"speculative", "lora_slots", "data_parallel", "multimodal", "kv_offloading"} <= names
    tower = next(i for i in d.prediction.extras if i.name == "multimodal")
    assert tower.device_bytes == 0  # image=0, video=0: the tower is not loaded
    assert d.prediction.host_memory_bytes >= 64 * 2**30


def test_limits_in_the_0_11_per_modality_form() -> None:
    # 0.11+ also accepts {"image": {"count": 0, "width": …}}: the count is the limit
    facts = parse_startup_log(
        "INFO non-default args: {'model': 'Qwen/Qwen2.5-VL-7B-Instruct', "
        "'limit_mm_per_prompt': {'image': {'count': 1, 'width': 512, 'height': 512}, 'video': 0}}\n"
    )
    assert facts.limit_mm_per_prompt == {"image": 1, "video": 0}


def test_an_mtp_method_name_and_extra_keys_are_vllms_own() -> None:
    # vLLM 0.19.0 renames the per-model MTP methods to "mtp" (config/speculative.py MTPModelTypes) and
    # accepts prompt_lookup_* keys; before, either made the whole pasted command unreadable
    facts = parse_startup_log(
        "vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 8 "
        """--speculative-config '{"method": "deepseek_mtp", "num_speculative_tokens": 1}'\n"""
    )
    assert facts.tensor_parallel_size == 8
    assert facts.speculative_config == {"method": "mtp", "num_speculative_tokens": 1}
    ngram = parse_startup_log(
        "vllm serve meta-llama/Llama-3.1-8B --speculative-config "
        """'{"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 4}'\n"""
    )
    assert ngram.speculative_config == {"method": "ngram", "num_speculative_tokens": 5}


@pytest.mark.parametrize(
    "prefix",
    [
        "Initializing a V1 LLM engine (v0.19.0) with config: speculative_config=SpeculativeConfig(",
        "args: Namespace(limit_mm_per_prompt={",
        "non-default args: {'speculative_config': {",
    ],
)
@pytest.mark.parametrize("chars", ["'", "speculative_config={", "SpeculativeConfig(method='x', model='"])
def test_the_object_values_are_read_in_linear_time(prefix: str, chars: str) -> None:
    # no clock (bench/log_linearity.py prints the time ratios): the object patterns are RE2 or a
    # checked linear shape, and a 32,000-character unterminated object reads as no value
    from app.core import regex
    from app.core.logs.startup import config

    objects = [
        config._OBJECT_VALUE,
        config._OBJECT_ITEM,
        config._SPEC_REPR,
        config._KEY_VALUE,
        config._DICT_ITEM,
    ]
    for compiled in objects:
        entry = regex.PATTERNS[compiled.pattern]
        assert entry.engine == "re2" or regex.shape_problems(compiled.pattern) == [], compiled.pattern
    facts = parse_startup_log(prefix + chars * (32_000 // len(chars)))
    assert facts.speculative_config is None and facts.limit_mm_per_prompt is None
