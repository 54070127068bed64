"""`vllm serve` flags as vLLM's own parser takes them (app/core/vllm_flags.json, from each release's
arg_utils.py / cli_args.py): a typo is an error with the nearest flag, a real flag that does not move
memory is listed as ignored, and `--max_model_len` / a unique prefix work as in argparse."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from app.core.command import parse_serve_command, vllm_flags
from app.core.errors import PlannerError


@pytest.mark.parametrize(
    ("typo", "suggestion"),
    [
        ("--max-modle-len 4096", "--max-model-len"),
        ("--gpu-memory-utilisation 0.5", "--gpu-memory-utilization"),
    ],
)
def test_a_misspelt_flag_is_refused_with_did_you_mean(typo: str, suggestion: str) -> None:
    with pytest.raises(PlannerError) as err:
        parse_serve_command(f"vllm serve meta-llama/Llama-3.1-8B {typo}")
    assert err.value.field == "command"
    assert (
        "unrecognized arguments" in err.value.message and f"did you mean {suggestion}?" in err.value.message
    )


def test_the_cli_exits_non_zero_on_a_typo(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["estimate", "llama-3.1-8b", "--device", "h100", "--max-modle-len", "4096"])
    assert code != 0
    assert "did you mean --max-model-len?" in capsys.readouterr().err


def test_flags_vllm_has_that_do_not_move_memory_are_ignored_and_listed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parsed = parse_serve_command(
        "vllm serve meta-llama/Llama-3.1-8B --trust-remote-code --served-model-name llama --port 8001 "
        "--max-model-len 4096"
    )
    assert parsed.unknown_flags == ["--trust-remote-code", "--served-model-name", "llama", "--port", "8001"]
    assert parsed.serve.max_model_len == 4096
    code = main(["estimate", "llama-3.1-8b", "--device", "h100", "--port", "8001", "--json"])
    assert code == 0
    captured = capsys.readouterr()
    assert "ignored flags that do not move memory: --port 8001" in captured.err
    assert json.loads(captured.out)["max_model_len"] == 131072


def test_underscores_and_unique_prefixes_are_read_like_vllms_parser() -> None:
    # FlexibleArgumentParser turns --max_model_len into --max-model-len; argparse takes a unique prefix
    assert parse_serve_command("vllm serve m --max_model_len 8192").serve.max_model_len == 8192
    assert parse_serve_command("vllm serve m --gpu-memory-util 0.8").serve.gpu_memory_utilization == 0.8


def test_the_flag_list_follows_the_release() -> None:
    # --headless is in 0.10.2+'s entrypoints/cli/serve.py, not in the 0.8.5 wheel; every release has
    # --max-model-len
    assert "--max-model-len" in vllm_flags("0.6.6") and "--max-model-len" in vllm_flags("0.33.0")
    with pytest.raises(PlannerError, match="unrecognized arguments: --headless"):
        parse_serve_command("vllm serve m --headless", vllm_version="0.8.5")
    assert parse_serve_command("vllm serve m --headless", vllm_version="0.19.0").unknown_flags == [
        "--headless"
    ]


def test_vllm_allow_long_max_model_len_in_the_environment_is_read() -> None:
    parsed = parse_serve_command("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve m --max-model-len 300000")
    assert parsed.serve.allow_long_max_model_len is True
    assert parse_serve_command("vllm serve m").serve.allow_long_max_model_len is False
