"""`vllm bench serve`'s arguments (its names and defaults) and the request lengths it draws.

Semantics read from vLLM 0.19.0's vllm/benchmarks/serve.py and datasets.py (facts, not code):

* ``request_rate`` inf sends every prompt at t = 0; a number draws the gaps from a gamma distribution
  of shape ``burstiness`` and scale ``1 / (rate x burstiness)`` (burstiness 1 = Poisson), then rescales
  the gaps so that the last prompt leaves at ``num_prompts / rate``.
* ``max_concurrency`` is a semaphore: a prompt waits for a free slot *before* its clock starts (TTFT
  and E2EL are measured from the send, not from the scheduled arrival).
* random dataset: input lengths uniform on the integers ``[floor(L (1 - r)), ceil(L (1 + r))]``, output
  the same with ``max(1, ...)``; the prompt is ``random_prefix_len`` shared tokens + that input (the
  same prefix for every prompt, so prefix caching hits it).
* sharegpt: the conversations' own lengths after vLLM's filter (prompt 4..1024 tokens, prompt + output
  <= 2048, output >= 4), in the order vLLM draws them: sharegpt_v3_lengths.csv holds the (prompt,
  completion) token counts of ShareGPT_V3_unfiltered_cleaned_split.json's first two turns, shuffled with
  random.seed(0) and filtered as vLLM's benchmark does, Llama-3.1-8B-Instruct tokenizer (16,384 pairs;
  source and check in bench/data/perf/sharegpt/README.md). ``--seed 0`` (vLLM's default) takes the first
  ``num_prompts`` rows, as vLLM does; another seed draws rows with that seed.
* ``ignore_eos`` false lets a model stop before ``max_tokens``; random-token prompts rarely hit EOS
  early, so lengths are taken as drawn (said in the notes when ignore_eos is false).
"""

from __future__ import annotations

import csv
import math
import random
from functools import cache, lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

# vllm/benchmarks/datasets.py RandomDataset defaults and serve.py's argument defaults (0.19.0)
DEFAULT_NUM_PROMPTS = 1000
DEFAULT_INPUT_LEN = 1024
DEFAULT_OUTPUT_LEN = 128
MAX_PROMPTS = 100_000
MIN_REQUEST_RATE = 0.001  # requests/s: slower runs last days (and lose float precision in the clock)
# ShareGPT after vLLM's filter, as vLLM's benchmark draws it (module docstring): its first 1,000 rows
# total 215,196 prompt and 198,343 completion tokens, where vllm#23696 printed 215,312 input tokens
# (gpt-oss tokenizer) and vllm#7062 213,987 for the same 1,000 prompts
SHAREGPT_LENGTHS_FILE = Path(__file__).with_name("sharegpt_v3_lengths.csv")
SHAREGPT_MAX_TOTAL = 2048


def infinite_as_text(value: float | None) -> float | str | None:
    """``inf`` (vLLM's default rate: every prompt at t = 0) as vLLM's own spelling, ``--request-rate inf``:
    strict JSON has no infinity (FastAPI wrote it as null, ``--json`` as the non-JSON ``Infinity``)."""
    return "inf" if value is not None and math.isinf(value) else value


class BenchArgs(BaseModel):
    """The `vllm bench serve` arguments the simulation reads (its own names)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    num_prompts: int = Field(default=DEFAULT_NUM_PROMPTS, ge=1, le=MAX_PROMPTS)
    max_concurrency: int | None = Field(default=None, ge=1, le=65_536)
    request_rate: float = Field(default=math.inf, ge=MIN_REQUEST_RATE)
    burstiness: float = Field(default=1.0, gt=0)  # inf: constant gaps (serve.py)
    dataset_name: Literal["random", "sharegpt"] = "random"
    random_input_len: int = Field(default=DEFAULT_INPUT_LEN, ge=1, le=10_000_000)
    random_output_len: int = Field(default=DEFAULT_OUTPUT_LEN, ge=1, le=10_000_000)
    random_range_ratio: float = Field(default=0.0, ge=0.0, lt=1.0)
    random_prefix_len: int = Field(default=0, ge=0, le=10_000_000)
    ignore_eos: bool = False
    seed: int = Field(default=0, ge=0, le=2**31)

    @field_serializer("request_rate", "burstiness")
    def _infinite_as_text(self, value: float) -> float | str | None:
        return infinite_as_text(value)

    @field_validator("request_rate", mode="before")
    @classmethod
    def _rate(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().lower() in ("inf", "infinity"):
            return math.inf
        return value

    def mean_lengths(self) -> tuple[int, int]:
        """(prompt tokens with the shared prefix, output tokens) of the benchmark's average request: the
        random dataset's centres (its range is symmetric), the mean of the ShareGPT requests it draws."""
        if self.dataset_name == "sharegpt":
            return _sharegpt_mean_lengths(self.num_prompts, self.seed)
        return self.random_prefix_len + self.random_input_len, self.random_output_len

    def clients(self) -> int:
        """The most clients the run has in flight: its --max-concurrency, else every prompt (a burst at
        --request-rate inf sends them all at once; at a finite rate this is an upper bound)."""
        return min(self.max_concurrency or self.num_prompts, self.num_prompts)

    def clients_in_flight(self, *, request_throughput: float, mean_e2el_s: float) -> float:
        """The clients the run keeps in flight on average. At --request-rate inf, :meth:`clients` (the
        cap, or every prompt sent at t = 0). At a finite rate, Little's law over the run: requests
        completed per second x their mean end-to-end latency, at most :meth:`clients` (200 prompts at
        4 requests/s finishing at 3.94/s after 0.87 s each keep 3.4 in flight, not 200)."""
        if math.isinf(self.request_rate):
            return float(self.clients())
        return min(float(self.clients()), request_throughput * mean_e2el_s)

    def open_loop(self) -> bool:
        """A finite --request-rate with no --max-concurrency: the arrivals, not a client count, decide how
        many requests are in flight (:meth:`clients_in_flight`)."""
        return self.max_concurrency is None and not math.isinf(self.request_rate)

    def longest_request(self) -> tuple[int, int]:
        """(prompt tokens, max_tokens) of the longest request this benchmark sends, what vLLM's length
        check (app.core.perf.too_long) is asked about. random: the ranges' top ends (RandomDataset
        get_sampling_params: ``ceil(L (1 + r))`` for input and output, the shared prefix added; the
        draw can reach both, and the planner's draw is not numpy's). sharegpt: the drawn pair with the
        most tokens (prompt + output; the longer prompt on a tie), as the seed's draw is vLLM's."""
        if self.dataset_name == "sharegpt":
            return _sharegpt_longest(self.num_prompts, self.seed)
        r = self.random_range_ratio
        prompt = self.random_prefix_len + max(1, math.ceil(self.random_input_len * (1 + r)))
        return prompt, max(1, math.ceil(self.random_output_len * (1 + r)))


def _uniform_lengths(
    rng: random.Random, *, center: int, ratio: float, count: int, floor_one: bool
) -> list[int]:
    low, high = math.floor(center * (1 - ratio)), math.ceil(center * (1 + ratio))
    if floor_one:
        low, high = max(low, 1), max(high, 1)
    if low == high:
        return [low] * count
    return [rng.randint(low, high) for _ in range(count)]


@cache
def sharegpt_rows() -> tuple[tuple[int, int], ...]:
    """The (prompt, completion) token counts of SHAREGPT_LENGTHS_FILE, in vLLM's seed-0 order."""
    with SHAREGPT_LENGTHS_FILE.open(encoding="utf-8") as fh:
        return tuple((int(r["num_prefill_tokens"]), int(r["num_decode_tokens"])) for r in csv.DictReader(fh))


def sharegpt_lengths(
    count: int, *, seed: int = 0, means: tuple[float, float] | None = None
) -> tuple[list[int], list[int]]:
    """``count`` ShareGPT requests as vLLM's benchmark draws them: at seed 0 the first rows in order
    (past the file's rows, more drawn from them, as vLLM oversamples), else rows drawn with the seed.
    ``means`` (prompt, output) rescales each list to a run's printed means, keeping the shape: another
    tokenizer's lengths, and outputs that stopped at the model's end-of-sequence token."""
    rows = sharegpt_rows()
    rng = random.Random(seed)
    picked = list(rows[:count]) if seed == 0 else rng.sample(rows, min(count, len(rows)))
    picked += rng.choices(rows, k=count - len(picked))
    prompts, outputs = [p for p, _ in picked], [o for _, o in picked]
    if means is not None:
        prompts, outputs = (
            _rescaled(values, mean=mean) for values, mean in ((prompts, means[0]), (outputs, means[1]))
        )
    return prompts, outputs


@lru_cache(maxsize=64)  # keyed by a user's (num_prompts, seed): bounded
def _sharegpt_mean_lengths(count: int, seed: int) -> tuple[int, int]:
    prompts, outputs = sharegpt_lengths(count, seed=seed)
    return round(sum(prompts) / count), round(sum(outputs) / count)


@lru_cache(maxsize=64)  # keyed by a user's (num_prompts, seed): bounded
def _sharegpt_longest(count: int, seed: int) -> tuple[int, int]:
    prompts, outputs = sharegpt_lengths(count, seed=seed)
    return max(zip(prompts, outputs, strict=True), key=lambda pair: (pair[0] + pair[1], pair[0]))


def _rescaled(values: list[int], *, mean: float) -> list[int]:
    factor = mean / (sum(values) / len(values))
    return [max(1, round(v * factor)) for v in values]


def printed_lengths(args: BenchArgs, *, means: tuple[int, int] | None) -> tuple[list[int], list[int]] | None:
    """The requests of a ShareGPT run that printed its totals (``means``: its prompt and generated tokens
    per request): the rows vLLM draws at its seed, rescaled to those means (its tokenizer, and outputs
    that stopped at the model's EOS), ShareGPT's spread kept. None otherwise: :func:`request_lengths`
    draws what the arguments say. The one rule of a measured run's lengths, for your pasted runs
    (measured.compared) and bench/perf_sources.py's scorer alike."""
    if args.dataset_name != "sharegpt" or means is None:
        return None
    return sharegpt_lengths(args.num_prompts, seed=args.seed, means=means)


def request_lengths(args: BenchArgs) -> tuple[list[int], list[int]]:
    """(prompt tokens, output tokens) per request, drawn as the benchmark draws them."""
    rng = random.Random(args.seed)
    if args.dataset_name == "sharegpt":
        return sharegpt_lengths(args.num_prompts, seed=args.seed)
    # inputs first, then outputs, from the one generator (the order vLLM's RandomDataset draws them in)
    inputs, outputs = (
        _uniform_lengths(
            rng, center=center, ratio=args.random_range_ratio, count=args.num_prompts, floor_one=one
        )
        for center, one in ((args.random_input_len, False), (args.random_output_len, True))
    )
    return [args.random_prefix_len + max(1, n) for n in inputs], outputs


def send_times(args: BenchArgs, *, count: int, rate: float) -> list[float]:
    """When each prompt is scheduled to leave the client (before the concurrency semaphore)."""
    if math.isinf(rate):
        return [0.0] * count
    rng = random.Random(args.seed + 1)
    if math.isinf(args.burstiness):
        gaps = [1.0 / rate] * count
    else:
        theta = 1.0 / (rate * args.burstiness)
        gaps = [rng.gammavariate(args.burstiness, theta) for _ in range(count)]
    times: list[float] = []
    total = 0.0
    for gap in gaps:
        total += gap
        times.append(total)
    scale = (count / rate) / times[-1] if times[-1] > 0 else 1.0  # serve.py rescales to N / rate
    return [t * scale for t in times]
