"""`vllm serve` commands: parsing what people paste, rendering only the flags each release has
(app/core/command.py reading versions.py). Flag history: reference vllm-accounting.md §7."""

from __future__ import annotations

import pytest

from app.core.command import human_readable_int, parse_serve_command, render_serve_command
from app.core.errors import PlannerError
from app.core.specs import ServeConfig

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def flags(serve: ServeConfig, version: str, **kw: bool) -> list[str]:
    text = render_serve_command(model=MODEL, serve=serve, vllm_version=version, **kw)
    head, *rest = text.split(" \\\n  ")
    assert head == f"vllm serve {MODEL}"
    return rest


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # vLLM's human_readable_int (reference §7): lower-case decimal, upper-case binary
        ("32k", 32_000),
        ("32K", 32_768),
        ("25.6k", 25_600),
        ("1M", 1_048_576),
        ("8192", 8192),
        ("131_072", 131_072),
    ],
)
def test_human_readable_int(text: str, value: int) -> None:
    assert human_readable_int(text, field_name="max_model_len") == value


def test_human_readable_int_refuses_fractions_and_words() -> None:
    with pytest.raises(PlannerError) as info:
        human_readable_int("1.5", field_name="max_model_len")  # 1.5 tokens
    assert info.value.field == "max_model_len"
    with pytest.raises(PlannerError):
        human_readable_int("lots", field_name="max_model_len")


def test_parse_a_pasted_command() -> None:
    parsed = parse_serve_command(
        "CUDA_VISIBLE_DEVICES=0,1 vllm serve Qwen/Qwen2.5-72B-Instruct \\\n"
        "  -tp 2 --max-model-len 32k --gpu-memory-utilization=0.95 \\\n"
        "  --kv-cache-dtype fp8 --no-enable-prefix-caching --trust-remote-code --served-model-name q"
    )
    assert parsed.model == "Qwen/Qwen2.5-72B-Instruct"
    s = parsed.serve
    assert (s.tensor_parallel_size, s.max_model_len, s.gpu_memory_utilization) == (2, 32_000, 0.95)
    assert (s.kv_cache_dtype, s.enable_prefix_caching) == ("fp8", False)
    assert parsed.unknown_flags == ["--trust-remote-code", "--served-model-name", "q"]


def test_parse_the_api_server_form_and_auto_length() -> None:
    parsed = parse_serve_command(
        "python -m vllm.entrypoints.openai.api_server --model m --max-model-len auto"
    )
    assert parsed.model == "m" and parsed.max_model_len_auto and parsed.serve.max_model_len is None


def test_defaults_are_left_out_per_release() -> None:
    # default --gpu-memory-utilization: 0.9 through 0.19, 0.92 from 0.20.2 (reference §7, versions.py)
    assert flags(ServeConfig(gpu_memory_utilization=0.9), "0.19.0") == []
    assert flags(ServeConfig(gpu_memory_utilization=0.9), "0.33.0") == ["--gpu-memory-utilization 0.9"]
    assert flags(ServeConfig(gpu_memory_utilization=0.92), "0.33.0") == []
    # prefix caching: off by default in V0, on in V1 (reference §6)
    assert flags(ServeConfig(enable_prefix_caching=True), "0.6.6") == ["--enable-prefix-caching"]
    assert flags(ServeConfig(enable_prefix_caching=True), "0.19.0") == []
    assert flags(ServeConfig(enable_prefix_caching=False), "0.19.0") == ["--no-enable-prefix-caching"]


def test_flags_a_release_does_not_have_are_not_written() -> None:
    serve = ServeConfig(kv_cache_memory_bytes=8_000_000_000, swap_space_gib=8, kv_offloading_size_gib=64)
    # --swap-space feeds V0 only; --kv-cache-memory-bytes from 0.10.2; --kv-offloading-size from 0.14.0
    assert flags(serve, "0.6.6") == ["--swap-space 8"]
    assert flags(serve, "0.10.2") == ["--kv-cache-memory-bytes 8000000000"]
    assert flags(serve, "0.14.0") == [
        "--kv-cache-memory-bytes 8000000000",
        "--kv-offloading-size 64 --kv-offloading-backend native",
    ]


def test_auto_length_only_where_it_exists() -> None:
    serve = ServeConfig(max_model_len=8192)
    assert flags(serve, "0.14.0", max_model_len_auto=True) == ["--max-model-len auto"]
    assert flags(serve, "0.11.0", max_model_len_auto=True) == ["--max-model-len 8192"]


def test_any_version_string_renders() -> None:
    # a dev build is rendered with its bracket's flags (0.19.0: utilization default 0.9)
    assert flags(ServeConfig(gpu_memory_utilization=0.9), "0.19.2rc1.dev8+g4b7f5ea1a") == []
    assert (
        render_serve_command(model="my model", serve=ServeConfig(), vllm_version=None)
        == "vllm serve 'my model'"
    )
