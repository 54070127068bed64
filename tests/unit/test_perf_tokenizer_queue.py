"""The API server's tokenizer queue in the simulation (simulate.tokenizer_queue, round 14b): vLLM tokenizes the
prompts on a thread pool of ModelConfig.renderer_num_workers workers, 1 by default (0.33.0
vllm/renderers/base.py, BaseRenderer; vllm/config/model.py), so the per-prompt-token part of the TTFT
overhead is served first come, first served, not side by side. Every figure worked by hand."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.core.perf.physics import slower_device
from app.core.perf.predict import fit_for
from app.core.perf.simulate import SimResult, tokenizer_queue
from tests.perf_steps import serial_run

# every step costs 10 ms whatever it carries, the host's work in series (tests.perf_steps.FLAT_SERIAL)
PER_TOKEN_S = 4e-6  # 0.004 ms a prompt token: a 1,000-token prompt tokenizes in 4 ms


def test_one_worker_serves_a_burst_one_prompt_after_another() -> None:
    free: list[float] = [0.0]
    # 3 prompts of 1,000 tokens sent at t = 0: done at 4, 8 and 12 ms
    done = [tokenizer_queue(free, 0.0, 1000 * PER_TOKEN_S) for _ in range(3)]
    assert done == pytest.approx([0.004, 0.008, 0.012])
    # a prompt sent after the worker is free starts when sent: 20 + 2 = 22 ms
    assert tokenizer_queue(free, 0.020, 500 * PER_TOKEN_S) == pytest.approx(0.022)


def test_two_workers_take_two_at_a_time() -> None:
    free = [0.0, 0.0]
    done = [tokenizer_queue(free, 0.0, 1000 * PER_TOKEN_S) for _ in range(3)]
    assert done == pytest.approx([0.004, 0.004, 0.008])


def test_data_parallel_ranks_share_the_worker() -> None:
    # 2 ranks: this rank's prompts alternate with the other's, so each holds the worker 8 ms (its own 4 ms and
    # the other rank's 4 ms) and is done 4 ms after it starts: at 4, 12, 20 ms
    free = [0.0]
    done = [tokenizer_queue(free, 0.0, 1000 * PER_TOKEN_S, ranks=2) for _ in range(3)]
    assert done == pytest.approx([0.004, 0.012, 0.020])


def _burst(workers: int) -> SimResult:
    # 3 prompts of 1,000 tokens sent at t = 0, one output token each, no fixed overhead
    return serial_run(
        prompts=[1000, 1000, 1000],
        outputs=[1, 1, 1],
        send_at=[0.0, 0.0, 0.0],
        overhead_per_prompt_token_s=PER_TOKEN_S,
        tokenizer_workers=workers,
    )


def test_side_by_side_every_prompt_reaches_the_scheduler_at_4_ms() -> None:
    # all three arrive at 4 ms and are prefilled in the one step [4, 14] ms: TTFT 14 ms each
    assert _burst(0).ttft_s == pytest.approx([0.014, 0.014, 0.014])


def test_one_worker_the_burst_reaches_the_scheduler_at_4_8_and_12_ms() -> None:
    # request 0 arrives at 4 ms and is prefilled alone in [4, 14]; 1 (8 ms) and 2 (12 ms) arrive during that
    # step and are prefilled together in [14, 24]: TTFT 14, 24, 24 ms
    assert _burst(1).ttft_s == pytest.approx([0.014, 0.024, 0.024])


def test_two_workers() -> None:
    # 0 and 1 arrive at 4 ms ([4, 14]), 2 at 8 ms ([14, 24])
    assert _burst(2).ttft_s == pytest.approx([0.014, 0.014, 0.024])


def test_a_closed_loop_client_never_queues_behind_itself() -> None:
    # one client: each prompt is sent when the last finished, so the worker is always free and the queue
    # changes nothing: 4 ms tokenisation + one 10 ms step, TTFT 14 ms each
    for workers in (0, 1):
        res = serial_run(
            prompts=[1000, 1000, 1000],
            outputs=[1, 1, 1],
            send_at=[0.0, 0.0, 0.0],
            max_concurrency=1,
            overhead_per_prompt_token_s=PER_TOKEN_S,
            tokenizer_workers=workers,
        )
        assert res.ttft_s == pytest.approx([0.014, 0.014, 0.014])


def test_the_tokenizer_is_cpu_work_a_slower_device_keeps() -> None:
    base = replace(
        fit_for(family="hopper", vllm_version="0.19.0")[1].bench_coefficients(), tokenizer_workers=1
    )
    assert slower_device(base, factor=2.0).tokenizer_workers == 1


def _burst_ttft_ms(vllm_version: str, workers: int) -> float:
    from app.core.perf.bench import simulate_bench
    from app.core.perf.bench_args import BenchArgs
    from tests.perf_steps import llama70_fp8_h100

    case = llama70_fp8_h100(vllm_version=vllm_version)
    coefficients = replace(case.coefficients, ttft_per_prompt_token_s=1e-5, tokenizer_workers=workers)
    args = BenchArgs(num_prompts=64, random_input_len=1024, random_output_len=16)
    point = simulate_bench(estimate=case.estimate, physics=case.physics, coefficients=coefficients, args=args)
    return point.values["mean_ttft_ms"]


def test_releases_that_microbatch_the_tokenizer_calls_do_not_queue() -> None:
    # 0.10-0.23 gather a burst's prompts into batched calls (AsyncMicrobatchTokenizer, versions_changelog): the
    # simulation keeps them side by side whatever tokenizer_workers says
    assert _burst_ttft_ms("0.19.0", 1) == _burst_ttft_ms("0.19.0", 0)
    # 0.33.0 tokenizes one prompt at a time: 64 prompts of 1,024 tokens at 0.01 ms a token are 10.24 ms each, the
    # k-th done at 10.24 k ms (the last at 655 ms); the engine's own prefill of the 64 prompts (a mean TTFT of
    # about 1.25 s side by side) hides most of that wait, so the mean TTFT rises by less than the mean tokenizer
    # wait (10.24 x 63 / 2 = 323 ms; it is about 19 ms) but by more than one prompt's 10.24 ms
    queued, side_by_side = _burst_ttft_ms("0.33.0", 1), _burst_ttft_ms("0.33.0", 0)
    assert 10.24 < queued - side_by_side < 322.56
