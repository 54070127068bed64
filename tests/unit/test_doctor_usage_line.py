"""review10: the doctor's command reader takes a short label of the post's own before a command ("run : vllm serve
…", round 10), and argparse's usage line matched it: "usage: vllm serve [model_tag] [options]", printed whenever
vLLM's CLI rejects a flag, replaced the typed command's model with "[model_tag]"."""

from __future__ import annotations

from app.core.logs.startup import parse_startup_log


def test_the_usage_line_vllm_prints_for_a_bad_flag_is_not_the_command() -> None:
    log = (
        "$ vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 2 --bogus-flag\n"
        "usage: vllm serve [model_tag] [options]\n"
        "vllm serve: error: unrecognized arguments: --bogus-flag\n"
    )
    facts = parse_startup_log(log)
    assert facts.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert facts.tensor_parallel_size == 2


def test_a_labelled_command_is_still_read() -> None:
    # nlzy/vllm-gfx906#12's shape, which round 10 added the label for
    facts = parse_startup_log("run : vllm serve Qwen/Qwen3-32B --tensor-parallel-size 4\n")
    assert facts.model == "Qwen/Qwen3-32B" and facts.tensor_parallel_size == 4
