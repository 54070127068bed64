"""The one table of `vllm serve` flags (app/core/serve_flags.py) drives ServeConfig's bounds, the command
parser, the renderer and the log reader's keys (issue 25 item 2)."""

from __future__ import annotations

from typing import Any

from app.core import serve_flags
from app.core.command import parse_serve_command, render_serve_command
from app.core.logs import startup
from app.core.specs import ServeConfig, SpeculativeConfig
from app.web.inputs.params import PlannerParams

# not `vllm serve` flags: VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (an environment variable) and the memory other
# processes hold on the device (nvidia-smi "used")
ENV_ONLY = {"allow_long_max_model_len", "device_memory_used_gib"}


def test_every_serve_field_has_one_row() -> None:
    fields = set(ServeConfig.model_fields) - ENV_ONLY
    rows = [flag.field for flag in serve_flags.SERVE_FLAGS]
    assert len(rows) == len(set(rows))
    assert set(rows) == fields


def _limits(interval: object) -> dict[str, float]:
    return {k: v for k in ("ge", "gt", "le") if (v := getattr(interval, k)) is not None}


def test_serveconfig_bounds_are_the_table_s() -> None:
    # max_model_len >= 1 and <= 10,000,000; TP <= 1024; utilization in (0, 1]
    assert _limits(serve_flags.bounds("max_model_len")) == {"ge": 1, "le": 10_000_000}
    assert _limits(serve_flags.bounds("tensor_parallel_size")) == {"ge": 1, "le": 1024}
    assert _limits(serve_flags.bounds("gpu_memory_utilization")) == {"gt": 0.0, "le": 1.0}
    for flag in serve_flags.SERVE_FLAGS:
        metadata = ServeConfig.model_fields[flag.field].metadata
        wanted = _limits(serve_flags.bounds(flag.field))
        assert (_limits(metadata[0]) if metadata else {}) == wanted, flag.field


# JSON-schema names, and the raw constraint names pydantic shows behind a before-validator
_SCHEMA_KEYS = {
    "minimum": "minimum",
    "ge": "minimum",
    "exclusiveMinimum": "exclusiveMinimum",
    "gt": "exclusiveMinimum",
}
_SCHEMA_KEYS |= {"maximum": "maximum", "le": "maximum"}


def _schema_bounds(schema: dict[str, Any]) -> dict[str, float]:
    for option in schema.get("anyOf", [schema]):
        found = {_SCHEMA_KEYS[k]: v for k, v in option.items() if k in _SCHEMA_KEYS}
        if found:
            return found
    return {}


def test_web_serve_fields_are_never_looser_than_the_table() -> None:
    # page-only limits only tighten: the slider's 16-token floor, TP <= 256 (a power of two)
    properties = PlannerParams.model_json_schema()["properties"]
    for flag in serve_flags.SERVE_FLAGS:
        if flag.field not in properties or flag.kind in ("flag", "json", "choice", "text"):
            continue
        web = _schema_bounds(properties[flag.field])
        assert web, flag.field
        if flag.ge is not None:
            assert web["minimum"] >= flag.ge, flag.field
        if flag.gt is not None:
            assert web["exclusiveMinimum"] >= flag.gt, flag.field
        if flag.le is not None:
            assert web["maximum"] <= flag.le, flag.field
    assert _schema_bounds(properties["max_model_len"])["minimum"] == 16
    assert _schema_bounds(properties["tensor_parallel_size"])["maximum"] == 256


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


def test_a_new_memory_moving_flag_is_one_row_plus_its_rule() -> None:
    # --mm-processor-cache-gb (vllm/config/multimodal.py, default 4 GiB, from 0.10): the host cache is held
    # once per API process and once per engine core: 1 API server + 1 DP rank -> 2 x 1 GiB = 2 GiB
    from app.core.catalog import find_device, find_model
    from app.core.estimate import estimate
    from app.core.logs import parse_startup_log

    serve = ServeConfig(mm_processor_cache_gb=1)
    model, device = find_model("google/gemma-3-4b-it"), find_device("nvidia-h100-sxm-80gb")
    est = estimate(model=model, device=device, serve=serve, vllm_version="0.33.0")
    (item,) = [i for i in est.extras if i.name == "multimodal"]
    assert item.host_bytes == 2 * 2**30
    default = estimate(model=model, device=device, serve=ServeConfig(), vllm_version="0.33.0")
    assert [i.host_bytes for i in default.extras if i.name == "multimodal"] == [8 * 2**30]  # 2 x 4 GiB
    text = render_serve_command(model=model.name, serve=serve, vllm_version="0.33.0")
    assert "--mm-processor-cache-gb 1" in text
    assert parse_serve_command(text, vllm_version="0.33.0").serve == serve
    # 0.8.5 has no such flag: not written
    assert "--mm-processor-cache-gb" not in render_serve_command(model="m", serve=serve, vllm_version="0.8.5")
    facts = parse_startup_log("INFO non-default args: {'model': 'x', 'mm_processor_cache_gb': 1}")
    assert facts.mm_processor_cache_gb == 1.0


def test_release_default_flags_are_declared_once_and_read_by_kind() -> None:
    # the flags whose unset value is the release's default are one declaration (ReleaseDefaultFlags) that
    # ServeConfig, the web's PlannerParams and the log reader's LogFacts inherit: same name, same bounds
    from app.core.logs import LogFacts, parse_startup_log
    from app.core.specs import RELEASE_DEFAULT_FLAGS, ReleaseDefaultFlags
    from app.web.inputs.lenient import parse_lenient

    assert "async_scheduling" in RELEASE_DEFAULT_FLAGS and "block_size" in RELEASE_DEFAULT_FLAGS
    for cls in (ServeConfig, PlannerParams, LogFacts):
        assert issubclass(cls, ReleaseDefaultFlags)
        assert set(RELEASE_DEFAULT_FLAGS) <= set(cls.model_fields)
    assert set(RELEASE_DEFAULT_FLAGS) <= set(serve_flags.FLAGS_BY_FIELD)  # each has its table row
    # the page reads them by the row's kind: hint "8k" = 8,000; flag "off" = False, "default" = unset;
    # int "16"; float "0.85"; blank = unset (the release decides)
    params, problems = parse_lenient(
        PlannerParams,
        {
            "max_num_batched_tokens": "8k",
            "async_scheduling": "off",
            "enable_chunked_prefill": "default",
            "block_size": "16",
            "gpu_memory_utilization": "0.85",
            "max_cpu_loras": "",
        },
    )
    assert problems == []
    assert (params.max_num_batched_tokens, params.async_scheduling, params.enable_chunked_prefill) == (
        8000,
        False,
        None,
    )
    assert (params.block_size, params.gpu_memory_utilization, params.max_cpu_loras) == (16, 0.85, None)
    # a bad value is named on its own field, and the table's bounds hold on the page (block size <= 16,384)
    _, problems = parse_lenient(PlannerParams, {"block_size": "sixteen", "max_num_batched_tokens": "0"})
    assert sorted(p.field for p in problems) == ["block_size", "max_num_batched_tokens"]
    # the log reader fills the same field from "non-default args"
    facts = parse_startup_log(
        "INFO non-default args: {'model': 'x', 'async_scheduling': True, 'block_size': 32}"
    )
    assert (facts.async_scheduling, facts.block_size) == (True, 32)


def test_each_row_is_written_by_its_own_renderer_or_names_the_row_that_writes_it() -> None:
    # round 8 kept two renderers that wrote nothing (compilation_config's and max_lora_rank's); such a row
    # now names the row whose renderer writes it, and that row has a renderer
    rows = {flag.field: flag for flag in serve_flags.SERVE_FLAGS}
    for flag in serve_flags.SERVE_FLAGS:
        assert (flag.render is None) == (flag.written_with is not None), flag.field
        if flag.written_with is not None:
            assert rows[flag.written_with].render is not None, flag.field
    assert {f.field: f.written_with for f in serve_flags.SERVE_FLAGS if f.written_with} == {
        "compilation_config": "cudagraph_mode",
        "max_lora_rank": "max_loras",
    }


def test_compilation_keys_ride_in_the_mode_s_flag() -> None:
    serve = ServeConfig(cudagraph_mode="PIECEWISE", compilation_config='{"mode":3}')
    text = render_serve_command(model="meta-llama/Llama-3.1-8B", serve=serve, vllm_version="0.33.0")
    assert text.count("--compilation-config") == 1
    assert """--compilation-config '{"cudagraph_mode":"PIECEWISE","mode":3}'""" in text
