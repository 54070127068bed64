"""The Speed workload's lengths: what the user set, else the benchmark's average request, else the
planner's default; the lengths nobody set shrink to fit ``max_model_len``.

vLLM refuses a request whose prompt + max_tokens exceed max_model_len (the OpenAI server's length
check), so a 1,024 + 1,024 default against a ``--max-model-len 320`` server answers nothing. A field the
user never touched is not the user's mistake: it shrinks (both in proportion when neither was set), and
a note says so. A length the user did set is kept; when it alone leaves no room, the refusal names it.
"""

from __future__ import annotations

from app.core.perf.bench_args import BenchArgs
from app.core.perf.schedule import Workload
from app.core.perf.too_long import too_long
from app.core.text import Msg, Text

# The Speed section's request when neither the user nor a benchmark gives one (the page's placeholder)
DEFAULT_INPUT_TOKENS = 1024
DEFAULT_OUTPUT_TOKENS = 1024


def _refuse_alone(*, input_tokens: int, output_tokens: int, max_model_len: int) -> None:
    """A set length that alone leaves no room: vLLM's refusal (app.core.perf.too_long) of the shortest
    request with it (the other length at one token)."""
    refused = too_long(
        prompt_tokens=input_tokens,
        output_tokens=output_tokens,
        max_model_len=max_model_len,
        prompt_field="input_tokens",
        output_field="output_tokens",
    )
    if refused is not None:
        raise refused


def workload_lengths(
    *,
    input_tokens: int | None,
    output_tokens: int | None,
    bench: BenchArgs | None,
    max_model_len: int,
    defaults: tuple[int, int] = (DEFAULT_INPUT_TOKENS, DEFAULT_OUTPUT_TOKENS),
) -> tuple[int, int, Msg | None]:
    """(input tokens, output tokens, the note when a length was shortened). ``None`` = not set: the
    benchmark's mean request (BenchArgs.mean_lengths) when one is given, else ``defaults`` (the Speed
    section's above; the fleet passes its own load's)."""
    fallback = bench.mean_lengths() if bench is not None else defaults
    given_in = input_tokens if input_tokens is not None else fallback[0]
    given_out = output_tokens if output_tokens is not None else fallback[1]
    if given_in + given_out <= max_model_len or (input_tokens is not None and output_tokens is not None):
        return given_in, given_out, None  # fits, or both were set: performance() refuses it (too_long)
    if input_tokens is None and output_tokens is None:
        # both free: in proportion, at least one token each (1,024 + 1,024 into 320 -> 160 + 160)
        new_in = max(1, min(max_model_len - 1, max_model_len * given_in // (given_in + given_out)))
        new_out = max_model_len - new_in
    elif input_tokens is not None:
        _refuse_alone(input_tokens=input_tokens, output_tokens=1, max_model_len=max_model_len)
        new_in, new_out = input_tokens, max_model_len - input_tokens
    else:
        assert output_tokens is not None
        _refuse_alone(input_tokens=1, output_tokens=output_tokens, max_model_len=max_model_len)
        new_in, new_out = max_model_len - output_tokens, output_tokens
    note = Text(
        "{given_in:,} input + {given_out:,} output tokens exceed max_model_len ({max_model_len:,}): modelled as {new_in:,} + {new_out:,}, the lengths you did not set shortened to fit.",
        given_in=given_in,
        given_out=given_out,
        max_model_len=max_model_len,
        new_in=new_in,
        new_out=new_out,
    )
    return new_in, new_out, note


# The Speed section's clients when nothing else gives them (the page's placeholder, `kvplan perf`)
DEFAULT_SPEED_CONCURRENCY = 16


def speed_workload(
    *,
    input_tokens: int | None,
    output_tokens: int | None,
    concurrency: int | None,
    target_concurrency: int | None,
    bench: BenchArgs | None,
    max_model_len: int,
) -> tuple[Workload, Msg | None]:
    """The one workload builder of the page, the APIs and `kvplan perf`: the lengths as
    :func:`workload_lengths` gives them; the clients given, else the benchmark's --max-concurrency,
    else the target concurrency N (when set), else DEFAULT_SPEED_CONCURRENCY."""
    new_in, new_out, note = workload_lengths(
        input_tokens=input_tokens, output_tokens=output_tokens, bench=bench, max_model_len=max_model_len
    )
    clients = speed_clients(concurrency=concurrency, target_concurrency=target_concurrency, bench=bench)
    return Workload(input_tokens=new_in, output_tokens=new_out, concurrency=clients), note


def speed_clients(*, concurrency: int | None, target_concurrency: int | None, bench: BenchArgs | None) -> int:
    """The Speed section's clients (the one rule: the workload above, the planner form's placeholder
    and slider): the count given, else the benchmark's --max-concurrency, else the target concurrency N
    (when set), else DEFAULT_SPEED_CONCURRENCY."""
    return (
        concurrency
        or (bench.max_concurrency if bench is not None else None)
        or target_concurrency
        or DEFAULT_SPEED_CONCURRENCY
    )
