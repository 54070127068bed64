"""A request vLLM's OpenAI server refuses for its length: the one rule, and its one family of messages.

vLLM 0.19.0 ``vllm/entrypoints/openai/engine/serving.py`` ``OpenAIServing._validate_input`` (completion and
chat requests, the ones `vllm bench serve` sends) refuses, in this order:

* a prompt of ``max_model_len`` tokens or more ("your request has N input tokens"; parameter
  ``input_tokens``): a prompt may take at most ``max_model_len - 1``;
* a prompt + ``max_tokens`` above ``max_model_len`` ("N + M = T > max_model_len"; parameter ``max_tokens``).

So a request of P prompt and O output tokens is served iff ``P < max_model_len`` and ``P + O <=
max_model_len``. The Speed section's workload, the simulated benchmark's longest request
(:meth:`app.core.perf.bench_args.BenchArgs.longest_request`), the fleet's load and `kv-planner perf` all
ask :func:`too_long`, so the API, the page and the CLI refuse the same requests in the same words.
"""

from __future__ import annotations

from typing import Literal

from app.core.errors import PlannerError
from app.core.text import N_, Text

Subject = Literal["request", "benchmark"]

# (subject, which of vLLM's two checks): the message, with the fields prompt, output, total, max_model_len
_MESSAGES = {
    ("request", "prompt"): N_(
        "a prompt of {prompt:,} tokens leaves no room for output within max_model_len ({max_model_len:,}): "
        "vLLM rejects a prompt of max_model_len tokens or more"
    ),
    ("request", "total"): N_(
        "{prompt:,} input + {output:,} output tokens = {total:,} exceed max_model_len ({max_model_len:,}): "
        "vLLM rejects such requests"
    ),
    ("benchmark", "prompt"): N_(
        "the benchmark's longest prompt ({prompt:,} tokens) leaves no room for output within max_model_len "
        "({max_model_len:,}): vLLM rejects a prompt of max_model_len tokens or more"
    ),
    ("benchmark", "total"): N_(
        "the benchmark's longest request, {prompt:,} input + {output:,} output tokens = {total:,}, exceeds "
        "max_model_len ({max_model_len:,}): vLLM rejects it"
    ),
}


def too_long(
    *,
    prompt_tokens: int,
    output_tokens: int,
    max_model_len: int,
    prompt_field: str,
    output_field: str,
    subject: Subject = "request",
) -> PlannerError | None:
    """vLLM's refusal of this request as a PlannerError (on ``prompt_field`` when the prompt alone is
    too long, else on ``output_field``, as vLLM names ``input_tokens`` or ``max_tokens``); None when
    vLLM serves it."""
    if prompt_tokens >= max_model_len:
        check, field = "prompt", prompt_field
    elif prompt_tokens + output_tokens > max_model_len:
        check, field = "total", output_field
    else:
        return None
    message = Text(
        _MESSAGES[(subject, check)],
        prompt=prompt_tokens,
        output=output_tokens,
        total=prompt_tokens + output_tokens,
        max_model_len=max_model_len,
    )
    return PlannerError(field, message)
