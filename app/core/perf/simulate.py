"""A `vllm bench serve` run as vLLM's V1 scheduler executes it, step by step, over the step-time model.

Per data-parallel rank (the rank's share of the prompts, the clients and the rate):

* **clients**: prompts leave at their send times (bench_args.send_times); ``max_concurrency`` slots
  are freed when a request completes; the clock of a request starts when it is sent. A sent request
  reaches the scheduler after ``ttft_overhead_s`` (API server: the fitted constant) and its tokenisation
  (the fitted part per prompt token), which the API server's tokenizer worker does one prompt at a time
  when ``tokenizer_workers`` is set (``tokenizer_queue``); the API
  server takes requests one at a time (``frontend_request_s`` each), so a burst reaches it in a queue,
  and each new request waits behind the outputs of the streams already running (``frontend_stream_s``
  per request in the engine when it is sent).
* **one step** (vllm/v1/core/sched/scheduler.py, 0.19.0): the running requests first, in order, each
  for what it still lacks (1 token when decoding, the rest of its prompt when prefilling) within the
  ``max_num_batched_tokens`` budget; KV blocks are allocated for the tokens scheduled and, when the
  pool is out of blocks, the *last* running request is preempted (its blocks freed, its progress
  dropped, back to the front of the queue: recomputed later, prompt and generated tokens alike).
  Then, if nothing was preempted, waiting requests are admitted in order while the budget lasts,
  ``max_num_seqs`` allows and their scheduled tokens' blocks are free (from 0.19.0, blocks for the whole
  sequence must be free: ``scheduler_reserve_full_isl``, so past the KV cliff a closed loop's extra
  clients wait in the queue instead of being admitted one chunk at a time and preempted); a prompt longer
  than the budget is prefilled in chunks over several steps. The shared ``random_prefix_len`` prefix is computed once;
  later prompts start from its cached full blocks (prefix caching on, vLLM's default).
* **async scheduling** (vLLM's default from 0.14): step N+1 is scheduled when step N is launched, so a
  request that reaches the engine while a step runs is first scheduled one step later than in series.
* **time**: a step costs :func:`app.core.perf.rates.stage_seconds`; with pipeline parallel a token
  crosses every stage in turn (pp stage steps plus a hop per stage boundary): the scheduler does not
  reschedule a request whose step is in flight, so the running set moves through as one batch.
* **speed**: runs of decode-only steps between events (a finish, a block boundary, a send) are
  summed in closed form (the step is affine in the context, which grows by one token per sequence
  per step), so 1,000 prompts cost a few thousand evaluations, not a million.

The metrics are vLLM's (serve.py calculate_metrics): TTFT from send to first token; TPOT per request
= (E2EL - TTFT) / (output - 1) for outputs longer than one token; ITL over every inter-token gap;
throughputs over the benchmark's duration (first send to last completion).
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass

from app.core import deadline
from app.core.perf.physics import lockstep_factor
from app.core.perf.rates import StepRates, attended, engine_step_seconds, expert_seconds, stage_seconds
from app.core.perf.uncaptured import launched_seconds, uncaptured

WAITING, PREFILL, DECODE, DONE = 0, 1, 2, 3
STALL_LIMIT = 10_000  # loop turns without the clock moving: only a request the pool can never hold
MAX_TURNS = 400_000  # work budget: a 10,000-prompt run takes ~40,000 turns; thrashing past the cliff more
# A turn costs in proportion to the running set, so 400,000 turns at 65,536 clients took 13 s of CPU
# before MAX_TURNS refused them; the request's CPU budget (app.core.deadline) is read every this many
# turns (a turn is >= ~5 us, so the check costs < 1 % and overshoots the budget by < 5 ms).
DEADLINE_EVERY_TURNS = 1024


class SimulationError(Exception):
    """The run cannot be simulated (it would never finish, or exceeds the work budget)."""


@dataclass(frozen=True)
class EngineLimits:
    """What the scheduler of one rank works within (all exact, from the planner's estimate)."""

    max_num_seqs: int
    max_num_batched_tokens: int
    pool_blocks: int  # usable blocks (num_gpu_blocks less the null block)
    block_size: int
    growth_groups: int  # KV groups whose blocks grow with the context (full attention / MLA)
    fixed_blocks: int  # blocks a request holds whatever its length (sliding-window caps, Mamba state)
    prefix_cache: bool
    pipeline_stages: int
    stage_hop_s: float  # one activation hop between pipeline stages
    lockstep_ranks: int = 1  # data-parallel MoE ranks that step together (physics.lockstep_factor)
    context_cv: float = 0.0  # spread of one request's context (physics.context_cv)
    # admission needs free blocks for the request's whole sequence, not only its first chunk (vLLM 0.19.0 on:
    # SchedulerConfig.scheduler_reserve_full_isl; versions.py); the chunk alone is still what is allocated
    admit_full_sequence: bool = False


@dataclass
class SimResult:
    ttft_s: list[float]
    tpot_s: list[float]
    e2el_s: list[float]
    itl_samples: list[tuple[float, float]]  # (gap seconds, how many gaps)
    duration_s: float
    input_tokens: int
    output_tokens: int
    preemptions: int
    recomputed_tokens: int
    max_running: int
    memory_s: float  # memory-bound seconds of the decode steps (for the regime)
    busy_s: float  # seconds of the decode steps
    kv_full_steps: int  # steps at which a block could not be allocated or a prompt not admitted for blocks
    host_s: float = 0.0  # seconds of the steps whose host work outlasted their device work (for the regime)


class _Engine:
    """One rank's scheduler state; methods are the scheduler's phases."""

    def __init__(
        self,
        rates: StepRates,
        limits: EngineLimits,
        prompts: list[int],
        outputs: list[int],
        overhead_s: float,
    ) -> None:
        n = len(prompts)
        self.r, self.lim = rates, limits
        self.prompt, self.out = prompts, outputs
        self.overhead = overhead_s
        self.state = [WAITING] * n
        self.computed = [0] * n
        self.gen = [0] * n
        self.held = [0] * n
        self.join_g = [0] * n
        self.version = [0] * n
        self.sent = [0.0] * n
        self.first = [0.0] * n
        self.last_tok = [0.0] * n
        self.t = 0.0
        self.g = 0  # decode steps taken (every decoding sequence gains one token per step)
        self.n_dec = 0
        self.ctx_offset = 0  # sum over decoders of (computed at join - join step)
        self.phase = [0] * limits.block_size
        self.heap: list[tuple[int, int, int]] = []
        self.order: list[int] = []  # running requests in admission order (preemption takes the last)
        self.prefilling: list[int] = []
        self.waiting: deque[int] = deque()
        # async scheduling: requests that reached the engine while a step was in flight; they join the
        # queue after one more step (see run)
        self.lagged: list[int] = []
        self.running = 0
        self.free = limits.pool_blocks
        self.prefix_ready = False
        self.warm = False  # every prompt's full blocks are cached before it arrives (run's warm_prompts)
        self.res = SimResult([], [], [], [], 0.0, sum(prompts), sum(outputs), 0, 0, 0, 0.0, 0.0, 0)
        self.done = 0
        self.completions: list[float] = []
        self.admit_blocked = (
            False  # the queue's head waits for blocks: only a finish or preemption frees them
        )

    # ---- blocks -------------------------------------------------------------------------------------
    def blocks_for(self, tokens: int) -> int:
        bs = self.lim.block_size
        return self.lim.growth_groups * (-(-tokens // bs)) + self.lim.fixed_blocks

    def decoder_blocks_now(self, i: int) -> int:
        return self.blocks_for(self.computed_of(i))

    def computed_of(self, i: int) -> int:
        if self.state[i] == DECODE:
            return self.computed[i] + self.g - self.join_g[i]
        return self.computed[i]

    # ---- membership ---------------------------------------------------------------------------------
    def join_decode(self, i: int) -> None:
        self.state[i] = DECODE
        self.join_g[i] = self.g
        self.n_dec += 1
        self.ctx_offset += self.computed[i] - self.g
        self.phase[(self.computed[i] - self.g) % self.lim.block_size] += 1
        self.version[i] += 1
        heapq.heappush(self.heap, (self.g + self.out[i] - self.gen[i], self.version[i], i))

    def leave_decode(self, i: int) -> None:
        c = self.computed_of(i)
        self.held[i] += self.blocks_for(c) - self.blocks_for(self.computed[i])  # the blocks it grew
        self.n_dec -= 1
        self.ctx_offset -= self.computed[i] - self.join_g[i]
        self.phase[(self.computed[i] - self.join_g[i]) % self.lim.block_size] -= 1
        self.gen[i] += self.g - self.join_g[i]
        self.computed[i] = c
        self.version[i] += 1

    def preempt_last(self) -> int:
        """vLLM's FCFS preemption: the most recently admitted running request."""
        while True:
            i = self.order.pop()
            if self.state[i] in (PREFILL, DECODE):
                break
        if self.state[i] == DECODE:
            self.leave_decode(i)
        else:
            self.prefilling.remove(i)
        self.free += self.held[i]
        self.held[i] = 0
        self.res.recomputed_tokens += self.computed[i]
        self.res.preemptions += 1
        self.computed[i] = 0
        self.state[i] = WAITING
        self.running -= 1
        self.last_tok[i] = self.t if self.gen[i] else self.last_tok[i]
        self.waiting.appendleft(i)
        return i

    def finish(self, i: int) -> None:
        self.admit_blocked = False
        self.state[i] = DONE
        self.free += self.held[i]
        self.held[i] = 0
        self.running -= 1
        self.done += 1
        e2el = self.t - self.sent[i]
        self.res.e2el_s.append(e2el)
        if self.out[i] > 1:
            self.res.tpot_s.append((e2el - (self.first[i] - self.sent[i])) / (self.out[i] - 1))
        self.completions.append(self.t)

    # ---- time ---------------------------------------------------------------------------------------
    def decode_context(self) -> float:
        """Attended context summed over the decoders (at their mean length)."""
        if not self.n_dec:
            return 0.0
        total = self.ctx_offset + self.n_dec * self.g
        return self.n_dec * attended(self.r, total / self.n_dec)

    def cycle_seconds(
        self, decode: float, context: float, prefill: float, prefill_context: float, requests: float
    ) -> float:
        """One token for every running request: the batch crosses the pp stages in turn (vLLM does not
        reschedule a request while its step is in flight, so the running set is one micro-batch), and
        the host's work for the step's ``requests`` overlaps it or adds to it (async scheduling)."""
        device = self.device_seconds(decode, context, prefill, prefill_context)
        self.host_bound = self.r.host_step_s + self.r.host_request_s * requests > device
        return engine_step_seconds(self.r, device_s=device, requests=requests)

    def device_seconds(self, decode: float, context: float, prefill: float, prefill_context: float) -> float:
        """The device's part of one step: every pipeline stage in turn, and the hops between them."""
        pp = self.lim.pipeline_stages
        m = 1.0
        lockstep = lockstep_factor(
            ranks=self.lim.lockstep_ranks, batch=decode, context_cv=self.lim.context_cv
        )
        stage = stage_seconds(
            self.r,
            decode_tokens=decode / m,
            decode_context_sum=context * lockstep / m,
            prefill_tokens=prefill / m,
            prefill_context_sum=prefill_context / m,
        )
        r = self.r
        if r.uncaptured_launch_s and uncaptured(
            limit=r.graph_token_limit, v0=r.v0_graphs, decode_tokens=decode, prefill_tokens=prefill
        ):
            stage = launched_seconds(
                device_s=stage, launch_s=r.uncaptured_launch_s, serial=r.uncaptured_serial
            )
        return pp * stage + (pp - 1) * self.lim.stage_hop_s

    # ---- one explicit step ----------------------------------------------------------------------------
    def schedule_decoders(self) -> bool:
        """Blocks for this step's decode tokens; preempt from the back while the pool is short."""
        preempted = False
        bs = self.lim.block_size
        while self.n_dec:
            need = self.lim.growth_groups * self.phase[(-self.g) % bs]
            if need <= self.free:
                break
            self.res.kv_full_steps += 1
            self.preempt_last()
            preempted = True
        return preempted

    def schedule_prefills(self, budget: int, chunks: list[tuple[int, int]]) -> tuple[int, bool]:
        """Running requests still prefilling, in order, within the budget (preempting for blocks)."""
        preempted = False
        for i in list(self.prefilling):
            if budget <= 0:
                break
            if self.state[i] != PREFILL:
                continue  # preempted while making room for an earlier one
            n = min(self.prompt[i] + self.gen[i] - self.computed[i], budget)
            need = self.blocks_for(self.computed[i] + n) - self.held[i]
            while need > self.free and self.state[i] == PREFILL:
                self.res.kv_full_steps += 1
                self.preempt_last()
                preempted = True
            if self.state[i] != PREFILL:
                continue
            self.free -= need
            self.held[i] += need
            chunks.append((i, n))
            budget -= n
        return budget, preempted

    def admit(self, budget: int, chunks: list[tuple[int, int]]) -> None:
        """Waiting requests in order while the budget, max_num_seqs and the free blocks allow."""
        lim = self.lim
        prefix = self.prefix_tokens
        while self.waiting and budget > 0 and self.running < lim.max_num_seqs:
            i = self.waiting[0]
            total = self.prompt[i] + self.gen[i]
            hit = shared = 0
            if self.warm:
                # the prompt's own full blocks are cached, never its last token (vLLM
                # v1/core/kv_cache_manager.py, KVCacheManager.get_computed_blocks: max_cache_hit_length =
                # request.num_tokens - 1); they are the request's, not shared with the others
                hit = (self.prompt[i] - 1) // lim.block_size * lim.block_size
            elif lim.prefix_cache and self.prefix_ready and prefix:
                hit = min(prefix // lim.block_size * lim.block_size, total - 1)
                shared = self.prefix_blocks
            n = min(total - hit, budget)
            need = self.blocks_for(hit + n) - shared
            gate = self.blocks_for(total) - shared if lim.admit_full_sequence else need
            if max(need, gate) > self.free:
                self.res.kv_full_steps += 1
                self.admit_blocked = True
                break
            self.waiting.popleft()
            self.free -= need
            self.held[i] = need
            self.computed[i] = hit
            self.state[i] = PREFILL
            self.prefilling.append(i)
            self.order.append(i)
            self.running += 1
            chunks.append((i, n))
            budget -= n
        self.res.max_running = max(self.res.max_running, self.running)

    prefix_tokens = 0
    prefix_blocks = 0
    host_bound = False  # the last step's host work outlasted its device work

    def step(self) -> None:
        """One scheduler step with prompt work in it (or with a preemption to make)."""
        budget = self.lim.max_num_batched_tokens
        preempted = self.schedule_decoders()
        budget -= self.n_dec
        chunks: list[tuple[int, int]] = []
        budget, more = self.schedule_prefills(budget, chunks)
        if not (preempted or more):
            self.admit(budget, chunks)
        decode = self.n_dec
        context = self.decode_context()
        prefill = sum(n for _, n in chunks)
        prefill_context = sum(n * attended(self.r, self.computed[i] + n / 2) for i, n in chunks)
        if not decode and not prefill:
            return
        self.host_bound = False
        seconds = self.cycle_seconds(decode, context, prefill, prefill_context, decode + len(chunks))
        if self.host_bound and decode:
            self.res.host_s += seconds
        self.t += seconds
        if decode:
            self.free -= self.lim.growth_groups * self.phase[(-self.g) % self.lim.block_size]
            self.record_decode(seconds, 1, context, decode)
            self.g += 1
        for i, n in chunks:
            self.computed[i] += n
            if self.computed[i] >= self.prompt[i] + self.gen[i]:
                self.prompt_done(i)
        self.pop_finished()

    def prompt_done(self, i: int) -> None:
        """The prompt (or the recomputed prompt + output) is in the KV cache: one token is sampled."""
        self.prefilling.remove(i)
        if not self.prefix_ready and self.prefix_tokens and self.computed[i] >= self.prefix_tokens:
            self.prefix_ready = True
            self.held[i] -= self.prefix_blocks  # the shared prefix's blocks stay cached, owned by none
        if self.gen[i] == 0:
            self.first[i] = self.t
            self.res.ttft_s.append(self.t - self.sent[i])
        else:
            self.res.itl_samples.append((self.t - self.last_tok[i], 1.0))
        self.gen[i] += 1
        self.last_tok[i] = self.t
        if self.gen[i] >= self.out[i]:
            self.finish(i)
        else:
            self.join_decode(i)

    def pop_finished(self) -> None:
        while self.heap and self.heap[0][0] <= self.g:
            _, version, i = heapq.heappop(self.heap)
            if self.state[i] != DECODE or self.version[i] != version:
                continue
            self.leave_decode(i)
            self.finish(i)

    def record_decode(self, seconds: float, steps: int, context: float, decode: int) -> None:
        r = self.r
        per_step = seconds / steps
        memory = r.memory_fixed_s + context * r.memory_per_context_s + expert_seconds(r, decode)
        self.res.memory_s += min(per_step, memory * self.lim.pipeline_stages) * steps
        self.res.busy_s += seconds
        self.res.itl_samples.append((per_step, float(decode * steps)))

    # ---- runs of decode-only steps ----------------------------------------------------------------------
    def blocks_over(self, steps: int) -> int:
        """Blocks the decoders take over the next ``steps`` steps (each crosses a boundary every bs)."""
        bs = self.lim.block_size
        full, rest = divmod(steps, bs)
        total = full * self.n_dec
        for j in range(rest):
            total += self.phase[(-(self.g + j)) % bs]
        return self.lim.growth_groups * total

    def steps_within_pool(self, steps: int) -> int:
        """How many of the next ``steps`` decode steps the free blocks cover (whole block cycles in
        closed form, then at most one cycle step by step)."""
        if self.blocks_over(steps) <= self.free:
            return steps
        bs = self.lim.block_size
        per_cycle = self.lim.growth_groups * self.n_dec
        cycles = min(steps // bs, self.free // per_cycle) if per_cycle else steps // bs
        used, j = cycles * per_cycle, cycles * bs
        while j < steps:
            used += self.lim.growth_groups * self.phase[(-(self.g + j)) % bs]
            if used > self.free:
                return j
            j += 1
        return steps

    def fast_forward(self, until_s: float) -> bool:
        """Decode-only steps until the first finish, the pool's next shortfall or ``until_s``; False if
        not even one step can run this way (the explicit step handles it)."""
        steps = self.heap[0][0] - self.g if self.heap else 0
        steps = self.steps_within_pool(steps)
        if steps <= 0:
            return False
        pp, n = self.lim.pipeline_stages, self.n_dec
        m = 1.0
        r = self.r
        slope_share = 1.0
        if r.window_tokens and (self.ctx_offset + n * self.g) / n >= r.window_tokens:
            slope_share = 1.0 - r.windowed_share
        context = self.decode_context()
        base = self.cycle_seconds(n, context, 0.0, 0.0, n)  # the first step's seconds
        lockstep = lockstep_factor(ranks=self.lim.lockstep_ranks, batch=n, context_cv=self.lim.context_cv)
        growth = pp * r.per_context_token_s * slope_share * n * lockstep / m  # seconds added per step
        device = self.device_seconds(n, context, 0.0, 0.0)
        if r.host_overlapped and base > device:
            # the host binds (async scheduling, a small step): constant steps until the device's
            # growing step overtakes the host's, then the device's pace again
            host_bound = math.ceil((base - device) / growth) if growth > 0 else steps
            steps, growth = max(1, min(steps, host_bound)), 0.0
        if until_s < math.inf:
            gap = max(0.0, until_s - self.t)
            # smallest k with k base + growth k (k - 1) / 2 >= gap
            if growth > 0:
                b = base - growth / 2
                k = math.ceil((-b + math.sqrt(max(0.0, b * b + 2 * growth * gap))) / growth)
            else:
                k = math.ceil(gap / base)
            steps = max(1, min(steps, k))
        seconds = steps * base + growth * steps * (steps - 1) / 2
        if self.host_bound:  # set by the first step's cycle_seconds (the host's part is the same each step)
            self.res.host_s += seconds
        self.free -= self.blocks_over(steps)
        self.record_decode(seconds, steps, context + slope_share * n * (steps - 1) / 2, n)
        self.t += seconds
        self.g += steps
        self.pop_finished()
        return True


def tokenizer_queue(free_at: list[float], sent_s: float, tokenize_s: float, ranks: int = 1) -> float:
    """When a prompt sent at ``sent_s`` is tokenized: the first worker to be free (``free_at``, a heap of
    the workers' free times, updated) takes it, first come, first served. vLLM's API server runs the
    blocking tokenizer calls on a thread pool (0.33.0 vllm/renderers/base.py, BaseRenderer: a
    ThreadPoolExecutor of ModelConfig.renderer_num_workers, default 1 in vllm/config/model.py; 0.7.3-0.10.2
    vllm/entrypoints/openai/serving_engine.py, OpenAIServing._tokenizer_executor, max_workers=1; 0.6.3
    calls the tokenizer on the event loop itself), so with one worker the prompts a burst sends together
    are tokenized one after another: 3 prompts sent at 0 taking 4 ms each are done at 4, 8 and 12 ms.
    ``ranks``: one API server feeds that many data-parallel ranks, whose prompts (every ranks-th, as the
    simulated rank's) take turns with this rank's: each of its prompts holds the worker for ``ranks`` x its
    own tokenisation (the others' in between), and is done its own tokenisation after it starts."""
    start = max(sent_s, heapq.heappop(free_at))
    heapq.heappush(free_at, start + ranks * tokenize_s)
    return start + tokenize_s


def _start_engine(
    rates: StepRates,
    limits: EngineLimits,
    prompts: list[int],
    outputs: list[int],
    overhead_s: float,
    prefix_tokens: int,
    warm_prompts: bool,
) -> _Engine:
    """The engine :func:`run` drives, with its shared prefix and (``warm_prompts``) its warm cache set."""
    eng = _Engine(rates, limits, prompts, outputs, overhead_s)
    eng.warm = (
        warm_prompts
        and limits.prefix_cache
        and sum(eng.blocks_for(p + o) for p, o in zip(prompts, outputs, strict=True)) <= limits.pool_blocks
    )
    eng.prefix_tokens = prefix_tokens
    eng.prefix_blocks = (
        limits.growth_groups * (prefix_tokens // limits.block_size) if limits.prefix_cache else 0
    )
    return eng


def run(
    *,
    rates: StepRates,
    limits: EngineLimits,
    prompts: list[int],
    outputs: list[int],
    send_at: list[float],
    max_concurrency: int | None,
    overhead_s: float,
    prefix_tokens: int,
    overhead_per_prompt_token_s: float = 0.0,
    frontend_request_s: float = 0.0,
    frontend_stream_s: float = 0.0,
    tokenizer_workers: int = 0,
    tokenizer_ranks: int = 1,
    warm_prompts: bool = False,
) -> SimResult:
    """Simulate one rank's benchmark; lists are per request in send order. ``tokenizer_workers`` > 0: the
    per-prompt-token part of the overhead is the API server's tokenizer, which that many workers serve
    first come, first served (``tokenizer_queue``, shared by ``tokenizer_ranks`` data-parallel ranks); 0: every
    request tokenizes side by side. ``warm_prompts``: the same prompts ran on this server before (a sweep that
    replays one prompt set, rate after rate, with prefix caching on); their blocks are still cached only where
    the pool holds every request's whole sequence, since the same order replayed through an LRU cache that
    cannot hold them all evicts each block before its turn (vLLM v1/core/block_pool.py, BlockPool's free
    queue evicts the least recently freed block first)."""
    eng = _start_engine(rates, limits, prompts, outputs, overhead_s, prefix_tokens, warm_prompts)
    n = len(prompts)
    slots: deque[float] = deque([0.0] * (max_concurrency or n))
    ready: deque[tuple[float, int]] = deque()  # sent, not yet at the scheduler
    nxt = 0
    frontend_free = 0.0  # when the API server is done with the requests sent so far
    tokenizer = [0.0] * tokenizer_workers  # when each tokenizer worker is free (a heap)
    stalled = turns = 0
    while eng.done < n:
        stalled = stalled + 1 if eng.t == eng.res.duration_s else 0
        turns += 1
        eng.res.duration_s = eng.t
        if stalled > STALL_LIMIT or turns > MAX_TURNS or not math.isfinite(eng.t):
            raise SimulationError("no progress" if stalled > STALL_LIMIT else "work budget")
        if turns % DEADLINE_EVERY_TURNS == 0:
            deadline.check()
        while eng.completions:  # a completion frees a client slot at its time
            slots.append(eng.completions.pop())
        while nxt < n and slots and send_at[nxt] <= eng.t:
            at = max(send_at[nxt], slots.popleft())
            eng.sent[nxt] = at
            if frontend_request_s:  # the API server starts it when done with those sent before it
                frontend_free = at = max(at, frontend_free) + frontend_request_s
            # the API server's loop streams the running requests' outputs before it takes this one
            at += frontend_stream_s * eng.running
            tokenize_s = overhead_per_prompt_token_s * prompts[nxt]
            if tokenizer:
                ready.append((tokenizer_queue(tokenizer, at, tokenize_s, tokenizer_ranks) + overhead_s, nxt))
            else:  # side by side
                ready.append((at + overhead_s + tokenize_s, nxt))
            nxt += 1
        while ready and ready[0][0] <= eng.t:
            at, i = ready.popleft()
            if rates.host_overlapped and (eng.n_dec or eng.prefilling):
                eng.lagged.append(i)
            else:
                eng.waiting.append(i)
        if eng.lagged:
            # async scheduling (vLLM 0.33.0 v1/engine/core.py step_with_batch_queue, a batch queue of
            # 2): step N+1 is scheduled as soon as step N is launched, and new requests are read from
            # the input queue only after N's result, so a request that arrives while N runs is first
            # scheduled in N+2: one step later than without it (vllm_config.max_concurrent_batches)
            admissible = eng.waiting and eng.running < limits.max_num_seqs and not eng.admit_blocked
            if eng.prefilling or admissible or not eng.fast_forward(eng.t):
                eng.step()
            eng.waiting.extend(eng.lagged)
            eng.lagged.clear()
            continue
        next_event = math.inf
        if ready:
            next_event = ready[0][0]
        if nxt < n and slots:
            next_event = min(next_event, send_at[nxt])
        admissible = eng.waiting and eng.running < limits.max_num_seqs and not eng.admit_blocked
        if eng.prefilling or admissible or not eng.n_dec:
            if not eng.prefilling and not eng.waiting and not eng.n_dec:
                eng.t = max(eng.t, next_event)  # idle until the next request reaches the scheduler
                continue
            before = eng.t
            eng.step()
            if eng.t == before and not eng.n_dec and not eng.prefilling:
                eng.t = next_event if next_event < math.inf else eng.t  # blocked: wait for an event
            continue
        if next_event < math.inf and eng.running >= limits.max_num_seqs:
            next_event = math.inf  # arrivals cannot be admitted before a finish anyway
        if not eng.fast_forward(next_event):
            eng.step()
    eng.res.duration_s = max(eng.t, 1e-9)
    return eng.res
