"""What people paste in the "vllm serve command" box (issue 24 item 9): every typo named at once, and
`docker run … vllm/vllm-openai …`, a compose service's `command:` and `python -m
vllm.entrypoints.openai.api_server` read by the one command reader (app.core.command), the vLLM
arguments taken and the rest listed as ignored. The inputs are the walkthrough's
(/work/shared/reviews/new-user-walkthrough-2026-12.md, problem 8) and vLLM's own docs' forms."""

from __future__ import annotations

import pytest

from app.core.command import CommandError, NotVllmImageError, parse_pasted, parse_serve_command
from app.core.errors import PlannerError
from app.core.logs.startup import parse_startup_log

DOCKER = (
    "docker run --gpus all -p 8000:8000 vllm/vllm-openai:v0.19.0 --model Qwen/Qwen3-8B --max-model-len 32768"
)


def test_every_unknown_flag_is_named_each_with_did_you_mean() -> None:
    with pytest.raises(CommandError) as err:
        parse_serve_command("vllm serve Qwen/Qwen3-8B --max-modle-len 4096 --tensor-paralel-size 2")
    assert err.value.unrecognized == [
        ("--max-modle-len", "--max-model-len"),
        ("--tensor-paralel-size", "--tensor-parallel-size"),
    ]
    # argparse's one line names every unrecognized argument (the walkthrough saw only the first)
    assert err.value.message == (
        "vllm serve: error: unrecognized arguments: --max-modle-len (did you mean --max-model-len?) "
        "--tensor-paralel-size (did you mean --tensor-parallel-size?)"
    )
    assert err.value.field == "command"


def test_a_typo_and_a_bad_value_are_both_named() -> None:
    with pytest.raises(CommandError) as err:
        parse_serve_command("vllm serve m --gpu-memory-utilisation 0.8 --max-model-len lots")
    assert err.value.unrecognized == [("--gpu-memory-utilisation", "--gpu-memory-utilization")]
    assert [p.field for p in err.value.problems] == ["max_model_len"]
    assert "max_model_len: not a whole number: 'lots'" in err.value.message


def test_one_bad_value_alone_keeps_its_field() -> None:
    with pytest.raises(PlannerError) as err:
        parse_serve_command("vllm serve m --max-model-len lots")
    assert err.value.field == "max_model_len"


def test_docker_run_of_vllms_image() -> None:
    parsed = parse_pasted(DOCKER)
    assert (parsed.model, parsed.serve.max_model_len) == ("Qwen/Qwen3-8B", 32768)
    assert parsed.wrapper.image == "vllm/vllm-openai:v0.19.0"
    assert parsed.wrapper.release == "0.19.0"  # the tag is the release
    assert parsed.wrapper.ignored == ("--gpus all", "-p 8000:8000")  # docker's, not vLLM's


def test_docker_run_options_env_and_tags() -> None:
    # vLLM's docs' form (docs/deployment/docker.md): runtime, volume, token env, ipc; `latest` names no release
    parsed = parse_pasted(
        "sudo docker run --runtime nvidia --gpus all \\\n"
        "    -v ~/.cache/huggingface:/root/.cache/huggingface \\\n"
        '    --env "HUGGING_FACE_HUB_TOKEN=hf_abc123" -e VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 \\\n'
        "    -p 8000:8000 --ipc=host -it --rm \\\n"
        "    vllm/vllm-openai:latest \\\n"
        "    --model mistralai/Mistral-7B-v0.1 -tp 2 --max-model-len 300000\n"
    )
    assert parsed.model == "mistralai/Mistral-7B-v0.1"
    assert parsed.serve.tensor_parallel_size == 2
    assert parsed.serve.allow_long_max_model_len is True  # -e VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is read
    assert parsed.wrapper.release is None
    assert parsed.wrapper.ignored == (
        "--runtime nvidia",
        "--gpus all",
        "-v ~/.cache/huggingface:/root/.cache/huggingface",
        "--env HUGGING_FACE_HUB_TOKEN",  # the variable's name, never its value
        "-p 8000:8000",
        "--ipc=host",
        "-it",
        "--rm",
    )
    assert "hf_abc123" not in repr(parsed)


def test_docker_entrypoint_and_the_old_api_server_form() -> None:
    parsed = parse_pasted(
        "docker run --gpus all --entrypoint python3 vllm/vllm-openai:v0.10.1.1 "
        "-m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-72B-Instruct -tp 8"
    )
    assert (parsed.model, parsed.serve.tensor_parallel_size, parsed.wrapper.release) == (
        "Qwen/Qwen2.5-72B-Instruct",
        8,
        "0.10.1.1",
    )


def test_docker_run_of_another_image_is_refused_by_name() -> None:
    with pytest.raises(NotVllmImageError) as err:
        parse_pasted("docker run -p 80:80 nginx:latest --model x")
    assert "nginx:latest is not vLLM's" in err.value.message


def test_the_image_tag_decides_which_flags_exist() -> None:
    # --headless is in 0.10.2+ (app/core/vllm_flags.json), not 0.8.5: refused under 0.8.5's image, ignored under 0.19.0's
    with pytest.raises(CommandError):
        parse_pasted("docker run vllm/vllm-openai:v0.8.5 --model m --headless")
    assert parse_pasted("docker run vllm/vllm-openai:v0.19.0 --model m --headless").unknown_flags == [
        "--headless"
    ]


COMPOSE_LIST = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.10.1.1
    ports:
      - "8000:8000"
    ipc: host
    environment:
      - HF_TOKEN=${HF_TOKEN}
    command: ["--model", "Qwen/Qwen2.5-72B-Instruct", "--tensor-parallel-size", "8", "--max-model-len", "32768"]
    deploy:
      resources:
        reservations:
          devices:
            - capabilities: [gpu]
"""

COMPOSE_FOLDED = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.19.0
    command: >
      --model Qwen/Qwen3-8B
      --max-model-len 16384
      --gpu-memory-utilization 0.85
"""


def test_compose_command_list() -> None:
    parsed = parse_pasted(COMPOSE_LIST)
    assert (parsed.model, parsed.serve.tensor_parallel_size, parsed.serve.max_model_len) == (
        "Qwen/Qwen2.5-72B-Instruct",
        8,
        32768,
    )
    assert parsed.wrapper.release == "0.10.1.1"
    assert parsed.wrapper.ignored == ("ports:", "ipc:", "environment:", "deploy:")


def test_compose_folded_command() -> None:
    parsed = parse_pasted(COMPOSE_FOLDED)
    assert (parsed.model, parsed.serve.max_model_len, parsed.serve.gpu_memory_utilization) == (
        "Qwen/Qwen3-8B",
        16384,
        0.85,
    )
    assert parsed.wrapper.ignored == ()


def test_compose_typos_are_named_too() -> None:
    with pytest.raises(CommandError) as err:
        parse_pasted(COMPOSE_FOLDED.replace("--max-model-len", "--max-modle-len"))
    assert err.value.unrecognized == [("--max-modle-len", "--max-model-len")]


def test_python_module_multi_line_with_model_flag() -> None:
    parsed = parse_pasted(
        "python -m vllm.entrypoints.openai.api_server \\\n"
        "    --model Qwen/Qwen3-8B \\\n"
        "    --max-model-len 8192 \\\n"
        "    --tensor-parallel-size 2 \\\n"
        "    --port 8000\n"
    )
    assert (parsed.model, parsed.serve.max_model_len, parsed.serve.tensor_parallel_size) == (
        "Qwen/Qwen3-8B",
        8192,
        2,
    )
    assert parsed.unknown_flags == ["--port", "8000"]


def test_a_typos_value_is_not_taken_for_the_model() -> None:
    with pytest.raises(CommandError) as err:
        parse_pasted("vllm serve --max-modle-len 4096 Qwen/Qwen3-8B")
    assert err.value.unrecognized == [("--max-modle-len", "--max-model-len")]


def test_the_log_reader_reads_docker_run_with_the_same_reader() -> None:
    # a start-up log quoting its docker run: the doctor takes the image's env and flags as the box does
    facts = parse_startup_log(
        "$ docker run --gpus all -e VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm/vllm-openai:v0.19.0 \\\n"
        "    --model Qwen/Qwen3-8B --max-model-len 65536\n"
    )
    assert (facts.model, facts.max_model_len) == ("Qwen/Qwen3-8B", 65536)


def test_of_two_compose_services_vllms_is_read() -> None:
    compose = """\
services:
  proxy:
    image: nginx:latest
    command: nginx -g 'daemon off;'
    ports: ["80:80"]
  vllm:
    image: vllm/vllm-openai:v0.19.0
    ipc: host
    environment:
      VLLM_ALLOW_LONG_MAX_MODEL_LEN: "1"
    command:
      - --model
      - Qwen/Qwen3-8B
      - --max-model-len
      - "65536"
"""
    parsed = parse_pasted(compose)
    assert (parsed.model, parsed.serve.max_model_len) == ("Qwen/Qwen3-8B", 65536)
    assert parsed.wrapper.release == "0.19.0"  # its own image, not the proxy's
    assert parsed.wrapper.ignored == ("ipc:", "environment:")
    assert parsed.serve.allow_long_max_model_len is True


def test_the_cli_takes_a_docker_run_after_the_double_dash(capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    code = main(["estimate", "--device", "h100", "--", *DOCKER.split(), "--max-num-seqs", "8"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "note: not vLLM arguments, ignored: --gpus all -p 8000:8000" in err
    assert "Qwen/Qwen3-8B" in out and "vLLM 0.19.0" in out  # the image tag's release
