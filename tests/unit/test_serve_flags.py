"""The one table of `vllm serve` flags (app/core/serve_flags.py) drives ServeConfig's bounds, the command
parser, the renderer and the log reader's keys (issue 25 item 2)."""

from __future__ import annotations

from app.core import serve_flags
from app.core.command import parse_serve_command, render_serve_command
from app.core.logs import startup
from app.core.specs import ServeConfig, SpeculativeConfig

ENV_ONLY = {"allow_long_max_model_len"}  # VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, an environment variable


def test_every_serve_field_has_one_row() -> None:
    fields = set(ServeConfig.model_fields) - ENV_ONLY
    rows = [flag.field for flag in serve_flags.SERVE_FLAGS]
    assert len(rows) == len(set(rows))
    assert set(rows) == fields


def test_servconfig_bounds_are_the_table_s() -> None:
    # max_model_len >= 1 and <= 10,000,000; TP <= 1024; utilization in (0, 1]
    bounds = serve_flags.serve_bounds()
    assert bounds["max_model_len"] == {"ge": 1, "le": 10_000_000}
    assert bounds["tensor_parallel_size"] == {"ge": 1, "le": 1024}
    assert bounds["gpu_memory_utilization"] == {"gt": 0.0, "le": 1.0}
    for field, limits in bounds.items():
        (interval,) = ServeConfig.model_fields[field].metadata
        assert {k: v for k in ("ge", "gt", "le") if (v := getattr(interval, k)) is not None} == limits


def test_every_spelling_parses_to_its_field() -> None:
    for flag in serve_flags.SERVE_FLAGS:
        for spelling in flag.spellings:
            assert serve_flags.PARSE_KINDS[spelling][0] == flag.field
    assert serve_flags.PARSE_KINDS["--no-enable-prefix-caching"] == ("enable_prefix_caching", "noflag")


def test_log_reader_keys_come_from_the_table() -> None:
    printed = {key for flag in serve_flags.SERVE_FLAGS for key in flag.printed}
    assert set(startup._CONFIG_KEYS) == printed | {"model", "device_config"}
    assert startup._CONFIG_KEYS["swap_space"][0] == "swap_space_gib"  # printed key != field name


def test_render_then_parse_round_trips_and_writes_each_flag_once() -> None:
    serve = ServeConfig(
        max_model_len=32_768,
        tensor_parallel_size=4,
        pipeline_parallel_size=2,
        gpu_memory_utilization=0.85,
        kv_cache_dtype="fp8",
        max_num_seqs=128,
        enable_prefix_caching=False,
        data_parallel_size=2,
        enable_expert_parallel=True,
        enable_lora=True,
        max_loras=4,
        max_lora_rank=64,
        speculative_config=SpeculativeConfig(method="ngram", num_speculative_tokens=3),
        limit_mm_per_prompt={"image": 0},
    )
    text = render_serve_command(model="meta-llama/Llama-3.1-8B", serve=serve, vllm_version="0.33.0")
    # before the table, --data-parallel-size and --enable-expert-parallel were written twice
    assert text.count("--data-parallel-size 2") == 1
    assert text.count("--enable-expert-parallel") == 1
    assert "--max-loras 4 --max-lora-rank 64" in text
    parsed = parse_serve_command(text, vllm_version="0.33.0")
    assert parsed.model == "meta-llama/Llama-3.1-8B"
    assert parsed.serve == serve
