"""bench/perf_sources.inferencemax_lengths: the shared file's request lengths as InferenceMAX's client draws them
(kimbochen/bench_serving benchmark_serving.py sample_random_requests at 406abc35: numpy randint(int(L * r), L + 1)),
against vLLM's RandomDataset draw on [L (1 - r), L (1 + r)] that request_lengths makes."""

from __future__ import annotations

import statistics

from app.core.perf.bench_args import BenchArgs, request_lengths
from bench import perf_sources as P


def test_inferencemax_draws_at_most_the_length_asked() -> None:
    # L = 1,024 prompt and output tokens, r = 0.8 (InferenceMAX's RANDOM_RANGE_RATIO): int(1,024 x 0.8) = int(819.2)
    # = 819, so every length is one of 819 ... 1,024 and their mean (819 + 1,024) / 2 = 921.5 = 0.9 L; 2,000 draws
    # put the sample mean within +-10 of it (the uniform's sd 59.4 / sqrt(2,000) = 1.3)
    args = BenchArgs(
        num_prompts=2000,
        max_concurrency=64,
        random_input_len=1024,
        random_output_len=1024,
        random_range_ratio=0.8,
    )
    inputs, outputs = P.inferencemax_lengths(args)
    assert len(inputs) == len(outputs) == 2000
    for lengths in (inputs, outputs):
        assert min(lengths) == 819 and max(lengths) == 1024
        assert 911.5 < statistics.fmean(lengths) < 931.5
    # vLLM's own draw at the same arguments spans floor(1,024 x 0.2) = 204 to ceil(1,024 x 1.8) = 1,844 around L
    v_inputs, v_outputs = request_lengths(args)
    assert min(v_inputs) < 300 and max(v_outputs) > 1700
    assert 1004 < statistics.fmean(v_inputs) < 1044


def test_a_short_output_never_draws_zero_tokens() -> None:
    # L = 1, r = 0.8: int(0.8) = 0, randint(0, 1) can give 0; a request asks for at least one token
    args = BenchArgs(
        num_prompts=200, max_concurrency=8, random_input_len=128, random_output_len=1, random_range_ratio=0.8
    )
    assert set(P.inferencemax_lengths(args)[1]) == {1}
