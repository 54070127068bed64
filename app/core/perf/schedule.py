"""Closed-loop serving at concurrency C (what `vllm bench serve --max-concurrency C` measures).

C clients each send a request of ``input_tokens`` and wait for ``output_tokens`` before sending the
next. Per data-parallel rank the engine runs at most ``min(C / DP, max_num_seqs, requests the KV pool
holds)`` requests at once; the rest wait. The steady state is solved analytically:

* a step carries the decode batch ``b`` plus the prefill tokens arriving meanwhile
  (``lambda x input x step``), both under ``max_num_batched_tokens`` (chunked prefill: decodes first);
* TPOT is the mean step time while decoding (it includes the prefill chunks interleaved with it);
* TTFT is the waiting step, the request's own chunks, and a fitted share of the other clients'
  prefill it queues behind;
* Little's law closes the loop: ``lambda = running / (TTFT + (O - 1) x TPOT)``; clients beyond the
  running set wait their turn, so TTFT = C / lambda - (O - 1) x TPOT.

Honest limits: preemption and recomputation when vLLM admits more than the pool holds is not
simulated (past the cliff it only makes latency worse than shown); lengths are fixed, not random.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.kv import cdiv
from app.core.perf.physics import (
    Coefficients,
    StepCost,
    StepPhysics,
    blend_costs,
    busy_ranks,
    context_cv,
    host_seconds,
    layer_floor_s,
    lockstep_factor,
    lockstep_ranks,
    on_busy_ranks,
    step_seconds,
    with_host,
)
from app.core.result import Estimate

NULL_BLOCKS = 1  # vLLM keeps one block as the null block (reference §3.6)
FIXED_POINT_ROUNDS = 4  # the decode batch <-> step time loop settles in a few rounds
ADMISSION_WAIT_STEPS = 0.5  # a request arrives on average half a step before the next schedule
KINDS_BOUNDED_BY_WINDOW = ("sliding", "chunked")
KINDS_FIXED_STATE = ("mamba",)


def blocks_for_request(*, estimate: Estimate, tokens: int) -> int:
    """Blocks one request of ``tokens`` holds at its end, summed over the KV groups (exact pool)."""
    total = 0
    for group in estimate.groups:
        if group.kind in KINDS_FIXED_STATE:
            total += group.blocks_per_request
        elif group.kind in KINDS_BOUNDED_BY_WINDOW:
            total += min(group.blocks_per_request, cdiv(tokens, group.block_size) + 1)
        else:
            total += cdiv(tokens, group.block_size)
    return max(total, 1)


def requests_in_pool(*, estimate: Estimate, tokens: int) -> int:
    """How many requests of ``tokens`` the pool holds at once, per data-parallel rank."""
    usable = max(0, estimate.num_gpu_blocks - NULL_BLOCKS)
    return usable // blocks_for_request(estimate=estimate, tokens=tokens)


def requests_in_pool_on_average(*, estimate: Estimate, input_tokens: int, output_tokens: int) -> int:
    """Requests the pool holds when their lengths are spread over their lives (input + output / 2 on
    average): vLLM admits a request once its prompt's blocks are free, so past the no-preemption
    point (:func:`requests_in_pool` at input + output) it keeps about this many running, preempting
    the newest when a block runs out."""
    return requests_in_pool(estimate=estimate, tokens=input_tokens + (output_tokens + 1) // 2)


@dataclass(frozen=True)
class Workload:
    input_tokens: int
    output_tokens: int
    concurrency: int


@dataclass(frozen=True)
class Point:
    """The steady state at one concurrency (whole replica: every data-parallel rank)."""

    concurrency: int
    running: int  # requests the engine runs at once per rank
    limit: str  # "clients" / "max_num_seqs" / "kv_pool": what caps the running set
    ttft_s: float
    tpot_s: float
    requests_per_s: float
    output_tokens_per_s: float
    decode_batch: float
    prefill_tokens_per_step: float
    step_memory_share: float  # memory-bound share of the decode step (physics, for the notes)


def mean_step(
    *,
    physics: StepPhysics,
    coefficients: Coefficients,
    decode_tokens: float,
    prefill_tokens: float,
    input_tokens: int,
    max_num_batched_tokens: int,
    decode_context_tokens: float,
) -> StepCost:
    """The mean engine step while ``decode_tokens`` sequences decode and prompts arrive at
    ``prefill_tokens`` per step on average. Chunked prefill schedules the decodes first and gives a
    prompt what is left of ``max_num_batched_tokens``: so a share of the steps carries a chunk of
    ``min(input, budget)`` tokens (or more, when prompts arrive faster than one chunk a step) and the
    others decode alone. TPOT is this mean: every decoding request waits through both kinds."""
    budget = max(1.0, max_num_batched_tokens - decode_tokens)
    chunk = min(max(float(input_tokens), prefill_tokens), budget)
    plain = step_seconds(
        physics=physics,
        coefficients=coefficients,
        decode_tokens=decode_tokens,
        prefill_tokens=0.0,
        decode_context_tokens=decode_context_tokens,
        prefill_context_tokens=0.0,
    )
    if prefill_tokens <= 0:
        return plain
    with_chunk = step_seconds(
        physics=physics,
        coefficients=coefficients,
        decode_tokens=decode_tokens,
        prefill_tokens=chunk,
        decode_context_tokens=decode_context_tokens,
        prefill_context_tokens=input_tokens / 2,
    )
    return blend_costs(plain=plain, with_chunk=with_chunk, share=min(1.0, prefill_tokens / chunk))


def steady_state(
    *,
    physics: StepPhysics,
    coefficients: Coefficients,
    workload: Workload,
    max_num_seqs: int,
    max_num_batched_tokens: int,
    pool_requests: int,
) -> Point:
    dp = busy_ranks(data_parallel_size=physics.data_parallel_size, clients=workload.concurrency)
    physics = on_busy_ranks(physics, busy=dp)
    inp, out = workload.input_tokens, workload.output_tokens
    clients = max(1.0, workload.concurrency / dp)  # per busy rank
    caps = {"clients": round(clients), "max_num_seqs": max_num_seqs, "kv_pool": pool_requests}
    limit = min(caps, key=lambda key: (caps[key], key != "clients"))
    running = max(1, min(caps.values()))
    if pool_requests < 1:
        limit, running = "kv_pool", 1  # vLLM would refuse or thrash; shown as one at a time
    decode_steps = max(out - 1, 0)
    decode_context = inp + out / 2
    batch = float(running)
    prefill = 0.0
    step = own = 0.0
    rate = 0.0
    memory_share = 0.0
    # pipeline parallel: a token crosses the pp stages in turn (a stage step each, plus a hop between
    # stages). vLLM's V1 scheduler does not schedule a request again while its step is in flight
    # (scheduler.py: "PP>1 and we have already scheduled all prompt tokens but they are not finished
    # yet"), so the running set moves through the stages as one batch: a request's token interval is
    # pp stage steps of the whole batch. PP buys room (twice the KV pool per replica), not speed.
    pp = physics.pipeline_parallel_size
    hops = (pp - 1) * coefficients.collective_latency_s
    ranks, spread = lockstep_ranks(physics), context_cv(input_tokens=inp, output_tokens=out)
    for _ in range(FIXED_POINT_ROUNDS):
        lockstep = lockstep_factor(ranks=ranks, batch=batch, context_cv=spread)
        cost = mean_step(
            physics=physics,
            coefficients=coefficients,
            decode_tokens=batch,
            prefill_tokens=prefill,
            input_tokens=inp,
            max_num_batched_tokens=max_num_batched_tokens,
            decode_context_tokens=decode_context * lockstep,
        )
        step = with_host(
            device_s=pp * cost.seconds + hops,
            host_s=host_seconds(
                coefficients, requests=batch, tensor_parallel_size=physics.tensor_parallel_size
            ),
            overlapped=physics.host_overlapped,
        )
        memory_share = cost.memory_seconds / max(cost.seconds, 1e-12)
        own = _own_ttft(
            physics=physics,
            coefficients=coefficients,
            batch=batch,
            step=step,
            input_tokens=inp,
            max_num_batched_tokens=max_num_batched_tokens,
            decode_context=decode_context,
            running=running,
        )
        cycle = own + decode_steps * step
        rate = running / cycle
        # chunked prefill: decodes are scheduled first, prompts take what is left of the budget
        rate = min(rate, max_num_batched_tokens / ((inp + decode_steps) * step))
        batch = max(1.0, min(float(running), rate * decode_steps * step)) if decode_steps else 1.0
        prefill = rate * inp * step
    ttft = own
    if clients > running or rate * (own + decode_steps * step) < running * 0.999:
        ttft = max(own, clients / rate - decode_steps * step)
    tpot = step
    return Point(
        concurrency=workload.concurrency,
        running=running,
        limit=limit,
        ttft_s=ttft,
        tpot_s=tpot,
        requests_per_s=rate * dp,
        output_tokens_per_s=rate * dp * out,
        decode_batch=batch,
        prefill_tokens_per_step=prefill,
        step_memory_share=memory_share,
    )


def _own_ttft(
    *,
    physics: StepPhysics,
    coefficients: Coefficients,
    batch: float,
    step: float,
    input_tokens: int,
    max_num_batched_tokens: int,
    decode_context: float,
    running: int,
) -> float:
    """A request's TTFT without the client queue: the API overhead, half a step's wait, its own chunks
    (each crossing every pipeline stage) and a fitted share of the other clients' prefill."""
    pp = physics.pipeline_parallel_size
    hops = (pp - 1) * coefficients.collective_latency_s
    inp = input_tokens
    chunk_budget = max(1.0, max_num_batched_tokens - batch)
    chunks = cdiv(inp, int(chunk_budget))
    chunk = min(float(inp), chunk_budget)
    with_decodes = step_seconds(
        physics=physics,
        coefficients=coefficients,
        decode_tokens=batch,
        prefill_tokens=chunk,
        decode_context_tokens=decode_context,
        prefill_context_tokens=inp / 2,
    )
    alone = step_seconds(
        physics=physics,
        coefficients=coefficients,
        decode_tokens=0,
        prefill_tokens=chunk,
        decode_context_tokens=0,
        prefill_context_tokens=inp / 2,
    )
    fixed = coefficients.step_overhead_s + layer_floor_s(physics=physics, coefficients=coefficients)
    per_prefill_token = pp * (alone.seconds - fixed) / chunk
    chunk_step = with_host(
        device_s=pp * with_decodes.seconds + hops,
        host_s=host_seconds(
            coefficients, requests=batch + 1, tensor_parallel_size=physics.tensor_parallel_size
        ),
        overlapped=physics.host_overlapped,
    )
    return (
        coefficients.ttft_overhead_s
        + coefficients.ttft_per_prompt_token_s * inp
        + ADMISSION_WAIT_STEPS * step
        + chunks * chunk_step
        + coefficients.prefill_queue_factor * (running - 1) * inp * per_prefill_token
    )


def point_at(
    *, physics: StepPhysics, coefficients: Coefficients, estimate: Estimate, workload: Workload
) -> Point:
    """The steady state of this configuration at this workload, on the exact pool."""
    return steady_state(
        physics=physics,
        coefficients=coefficients,
        workload=workload,
        max_num_seqs=estimate.max_num_seqs,
        max_num_batched_tokens=estimate.max_num_batched_tokens,
        pool_requests=requests_in_pool_on_average(
            estimate=estimate, input_tokens=workload.input_tokens, output_tokens=workload.output_tokens
        ),
    )
