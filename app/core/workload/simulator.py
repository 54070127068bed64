"""A deterministic discrete-step simulator of vLLM V1's paged KV allocation under a workload.

One step is one scheduler iteration (one forward pass). The model follows vLLM V1's scheduler and
KV-cache manager (reference §6, §8) closely enough to say which limit a workload hits first:

* running requests are scheduled first, in admission order; a decode takes 1 token, a partial
  prefill takes what is left of ``max_num_batched_tokens`` (chunked prefill);
* blocks are allocated for the tokens scheduled in the step (a new block only when a sequence
  crosses a block boundary); the KV of the last generated token is never written, so a request of
  P prompt and O output tokens peaks at ceil((P + O - 1) / B) blocks;
* when the pool cannot give a running request its block, the most recently admitted running
  request is preempted (recompute: blocks freed, back to the front of the waiting queue) until
  it can; after a preemption nobody is admitted in that step;
* waiting requests are admitted FIFO while running < max_num_seqs, tokens are left in the step
  budget and the pool has blocks for their first chunk (vLLM V1 allocates per scheduled chunk,
  not for the whole prompt up front);
* with prefix caching, the full blocks of a shared prefix are cached as soon as they are scheduled
  and shared (ref-counted) by later requests of the same ``prefix_group`` with the same
  ``shared_prefix_tokens``; unreferenced cached blocks count as free and are evicted, tail first,
  only when no other free block is left (vLLM evicts in LRU order, so this model is slightly
  optimistic about how long an idle prefix survives).

Decoding requests advance in lockstep (one token per step each, since vLLM requires
max_num_batched_tokens >= max_num_seqs), so the simulator keeps them in B buckets by the step
residue at which they cross a block boundary and never loops over tokens: a step costs O(1) plus
the requests that start, finish or are preempted in it, and quiet steps are skipped in bulk.
"""

from __future__ import annotations

import heapq
import random
import time
from bisect import bisect_right
from collections import deque
from itertools import accumulate

from app.core.blocks import NULL_BLOCKS
from app.core.text import N_, Plural, Text
from app.core.workload.budget import (
    DEADLINE_CHECK_EVERY,
    MAX_SIMULATION_SECONDS,
    MAX_SIMULATION_WORK,
    out_of_time,
    prefill_steps_needed,
    too_much_work,
)
from app.core.workload.schema import (
    MAX_SERIES_POINTS,
    BindingLimit,
    BlockedBy,
    EngineParams,
    KVSeries,
    RejectReason,
    WorkloadResult,
    WorkloadSpec,
    sample_length,
)


class SimulationInvariantError(RuntimeError):
    """The simulator's own bookkeeping went wrong (raised only with check_invariants=True)."""


class _Req:
    __slots__ = (
        "computed",
        "epoch",
        "generated",
        "incarnation",
        "is_decoding",
        "output",
        "own",
        "prefix",
        "prefix_blocks",
        "prompt",
        "rid",
        "shared",
        "was_admitted",
    )

    def __init__(self, rid: int, prompt: int, output: int, prefix: tuple[str, int] | None, block_size: int):
        self.rid = rid
        self.prompt = prompt
        self.output = output
        self.prefix = prefix
        self.prefix_blocks = 0 if prefix is None else prefix[1] // block_size
        self.generated = 0
        self.computed = 0  # KV tokens written; for decoders derived from epoch instead
        self.epoch = 0  # decoders: computed before step t is t - epoch
        self.is_decoding = False
        self.shared = 0  # leading blocks held in a prefix chain
        self.own = 0  # private blocks (prefill phase; decoders derive it)
        self.incarnation = 0
        self.was_admitted = False


class _PrefixEntry:
    """The cached chain of one shared prefix: ``cached`` leading blocks are in the pool.

    Requests hold contiguous leading runs of the chain, so refcounts never increase along it and
    the unreferenced (evictable) blocks are exactly the tail beyond the longest holder.
    """

    __slots__ = ("cached", "evictable", "holders", "last_release_step")

    def __init__(self) -> None:
        self.cached = 0
        self.evictable = 0
        self.holders: dict[int, int] = {}  # held length -> number of requests holding that many
        self.last_release_step = 0

    def longest_hold(self) -> int:
        return max(self.holders, default=0)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


class _Simulator:
    def __init__(
        self,
        workload: WorkloadSpec,
        engine: EngineParams,
        check_invariants: bool,
        *,
        max_work: int = MAX_SIMULATION_WORK,
        max_seconds: float = MAX_SIMULATION_SECONDS,
    ) -> None:
        self.engine = engine
        self.max_work = max_work
        self.max_seconds = max_seconds
        self.work = 0  # stepped steps + closed-form spans (budget.py)
        self.next_clock_check = DEADLINE_CHECK_EVERY
        self._span_pref: list[int] = [0]
        self._span_cycle = 0
        self.block_size = engine.block_size
        self.usable = engine.num_gpu_blocks - NULL_BLOCKS
        self.check_invariants = check_invariants
        self.num_requests = workload.num_requests

        self.free_plain = self.usable
        self.evictable = 0
        self.entries: dict[tuple[str, int], _PrefixEntry] = {}
        self.running: dict[int, _Req] = {}
        self.partial: _Req | None = None
        self.waiting: deque[_Req] = deque()
        self.bucket = [0] * self.block_size
        self.n_dec = 0
        self.finish_heap: list[tuple[int, int, int]] = []
        self.private_blocks = 0
        self.private_written = 0
        self.step_prefills: list[tuple[_Req, int]] = []
        self.finishing: list[_Req] = []

        self.pending, self.arrivals = self._make_requests(workload)
        self.pending_index = 0
        self.unscheduled = workload.num_requests - len(self.arrivals)  # closed loop: not yet given a slot

        self.finished = 0
        self.settled = 0  # finished + rejected
        self.rejected: dict[str, int] = {}
        self.preemptions = 0
        self.blocked: dict[BlockedBy, int] = {"kv_pool": 0, "max_num_seqs": 0, "max_num_batched_tokens": 0}
        self.prefix_hit_tokens = 0
        self.prompt_queried_tokens = 0
        self.peak_used = 0
        self.max_running = 0
        self.sum_running = 0
        self.sum_waiting = 0
        self.sum_used = 0
        self.sum_waste_slots = 0
        self.sum_alloc_slots = 0
        self.stride = 1
        self.samples: list[tuple[int, float, int, int]] = []

    # ---- set-up -------------------------------------------------------------------------------

    def _make_requests(self, workload: WorkloadSpec) -> tuple[list[_Req], deque[int]]:
        rng = random.Random(workload.seed)
        classes = workload.classes
        weights = [c.share for c in classes]
        caching = self.engine.enable_prefix_caching
        requests: list[_Req] = []
        for rid in range(workload.num_requests):
            cls = classes[0] if len(classes) == 1 else rng.choices(classes, weights)[0]
            prompt = sample_length(cls.prompt_tokens, rng)
            output = sample_length(cls.output_tokens, rng)
            prefix = (
                (cls.prefix_group, cls.shared_prefix_tokens) if caching and cls.shared_prefix_tokens else None
            )
            requests.append(_Req(rid, prompt, output, prefix, self.block_size))
        if workload.concurrency is not None:
            arrivals = deque([0] * min(workload.concurrency, workload.num_requests))
        else:
            rate = workload.arrival_rate or 1.0
            clock = 0.0
            steps: list[int] = []
            for _ in range(workload.num_requests):
                clock += rng.expovariate(rate)
                steps.append(int(clock))
            arrivals = deque(steps)
        return requests, arrivals

    # ---- pool ---------------------------------------------------------------------------------

    def _free_blocks(self) -> int:
        return self.free_plain + self.evictable

    def _allocate(self, blocks: int) -> None:
        take = min(blocks, self.free_plain)
        self.free_plain -= take
        blocks -= take
        while blocks:
            entry = min(
                (e for e in self.entries.values() if e.evictable),
                key=lambda e: e.last_release_step,
            )
            evict = min(blocks, entry.evictable)
            entry.evictable -= evict
            entry.cached -= evict
            self.evictable -= evict
            blocks -= evict

    def _hold(self, req: _Req, entry: _PrefixEntry, length: int) -> None:
        """Make ``req`` hold the first ``length`` blocks of the chain (was holding ``req.shared``)."""
        if req.shared:
            entry.holders[req.shared] -= 1
            if not entry.holders[req.shared]:
                del entry.holders[req.shared]
        if length:
            entry.holders[length] = entry.holders.get(length, 0) + 1
        req.shared = length

    def _release(self, req: _Req, computed: int, step: int) -> None:
        """Give back every block ``req`` holds; ``computed`` is its KV length at this moment."""
        own = _cdiv(computed, self.block_size) - req.shared
        self.private_blocks -= own
        self.private_written -= computed - req.shared * self.block_size
        self.free_plain += own
        if req.shared and req.prefix is not None:
            entry = self.entries[req.prefix]
            before = entry.longest_hold()
            self._hold(req, entry, 0)
            freed = before - entry.longest_hold()
            entry.evictable += freed
            self.evictable += freed
            entry.last_release_step = step
        if req.is_decoding:
            self.bucket[req.epoch % self.block_size] -= 1
            self.n_dec -= 1
            req.is_decoding = False
            req.generated = computed - req.prompt + 1
        req.incarnation += 1
        req.computed = 0
        req.own = 0
        req.shared = 0

    def _extend_chain(self, req: _Req, scheduled_tokens: int) -> None:
        """vLLM caches a full block as soon as it is scheduled: grow the prefix chain with it."""
        if req.prefix is None:
            return
        entry = self.entries.setdefault(req.prefix, _PrefixEntry())
        covered = min(scheduled_tokens // self.block_size, req.prefix_blocks)
        if covered <= req.shared or req.shared != entry.cached:
            return
        grown = covered - req.shared
        entry.cached = covered
        self._hold(req, entry, covered)
        req.own -= grown
        self.private_blocks -= grown
        self.private_written -= grown * self.block_size

    # ---- one step -----------------------------------------------------------------------------

    def _arrive(self, step: int) -> None:
        engine = self.engine
        while self.arrivals and self.arrivals[0] <= step:
            self.arrivals.popleft()
            req = self.pending[self.pending_index]
            self.pending_index += 1
            reason: RejectReason | None = None
            if req.prompt + req.output > engine.max_model_len:
                reason = "max_model_len"
            elif _cdiv(req.prompt + req.output - 1, self.block_size) > self.usable:
                reason = "kv_pool"
            if reason is None:
                self.waiting.append(req)
                continue
            self.rejected[reason] = self.rejected.get(reason, 0) + 1
            self.settled += 1
            if self.unscheduled:
                self.unscheduled -= 1
                self.arrivals.appendleft(step)  # closed loop stays full: the next request comes now

    def _schedule_running(self, step: int) -> tuple[bool, int]:
        """Allocate this step's blocks for running requests, preempting from the tail if needed."""
        block_size = self.block_size
        need_decode = self.bucket[step % block_size]
        budget = self.engine.max_num_batched_tokens - self.n_dec
        partial = self.partial
        chunk = need_partial = 0
        if partial is not None:
            chunk = min(partial.prompt + partial.generated - partial.computed, budget)
            need_partial = _cdiv(partial.computed + chunk, block_size) - partial.shared - partial.own
        preempted = False
        while need_decode + need_partial > self._free_blocks():
            _, victim = self.running.popitem()
            preempted = True
            self.preemptions += 1
            if victim is partial:
                partial = self.partial = None
                need_partial = chunk = 0
                computed = victim.computed
            else:
                computed = step - victim.epoch
                if computed % block_size == 0:
                    need_decode -= 1
            self._release(victim, computed, step)
            self.waiting.appendleft(victim)
        self._allocate(need_decode + need_partial)
        self.private_blocks += need_decode + need_partial
        if partial is not None:
            partial.own += need_partial
            self._extend_chain(partial, partial.computed + chunk)
            self.step_prefills.append((partial, chunk))
            budget -= chunk
        return preempted, budget

    def _prefix_hit_blocks(self, req: _Req, num_tokens: int) -> tuple[int, int]:
        """(blocks hit, how many of them are evictable now) for a request about to be admitted."""
        if req.prefix is None:
            return 0, 0
        entry = self.entries.get(req.prefix)
        if entry is None:
            return 0, 0
        hit = min(entry.cached, req.prefix_blocks, (num_tokens - 1) // self.block_size)
        return hit, max(0, hit - entry.longest_hold())

    def _admit(self, step: int, budget: int) -> None:
        block_size = self.block_size
        waiting = self.waiting
        blocked: BlockedBy | None = None
        while waiting and budget > 0:
            if len(self.running) >= self.engine.max_num_seqs:
                blocked = "max_num_seqs"
                break
            req = waiting[0]
            num_tokens = req.prompt + req.generated
            hit, touched = self._prefix_hit_blocks(req, num_tokens)
            chunk = min(num_tokens - hit * block_size, budget)
            new_blocks = _cdiv(hit * block_size + chunk, block_size) - hit
            if new_blocks + touched > self._free_blocks():
                blocked = "kv_pool"
                break
            waiting.popleft()
            if not req.was_admitted:
                req.was_admitted = True
                self.prefix_hit_tokens += hit * block_size
                self.prompt_queried_tokens += num_tokens
            if hit and req.prefix is not None:
                entry = self.entries[req.prefix]
                entry.evictable -= touched
                self.evictable -= touched
                self._hold(req, entry, hit)
            self._allocate(new_blocks)
            self.private_blocks += new_blocks
            req.own = new_blocks
            req.computed = hit * block_size
            self.running[req.rid] = req
            self._extend_chain(req, req.computed + chunk)
            self.step_prefills.append((req, chunk))
            budget -= chunk
        if blocked is None and waiting:
            # the loop stopped on the token budget; a full running set is the more basic limit
            # (the same order the decode-only fast path uses in _blocked_reason)
            full = len(self.running) >= self.engine.max_num_seqs
            blocked = "max_num_seqs" if full else "max_num_batched_tokens"
        if blocked is not None:
            self.blocked[blocked] += 1

    def _execute(self, step: int) -> None:
        """Write this step's KV: one token per decoder, the scheduled chunk per prefill."""
        self.private_written += self.n_dec
        self.partial = None
        for req, chunk in self.step_prefills:
            req.computed += chunk
            self.private_written += chunk
            num_tokens = req.prompt + req.generated
            if req.computed < num_tokens:
                self.partial = req
                continue
            req.generated += 1
            if req.generated == req.output:
                self.finishing.append(req)
                continue
            req.is_decoding = True
            req.epoch = step + 1 - req.computed
            self.bucket[req.epoch % self.block_size] += 1
            self.n_dec += 1
            heapq.heappush(
                self.finish_heap, (req.epoch + req.prompt + req.output - 2, req.rid, req.incarnation)
            )
        self.step_prefills.clear()
        heap = self.finish_heap
        while heap and heap[0][0] <= step:
            _, rid, incarnation = heapq.heappop(heap)
            req = self.pending[rid]
            if req.incarnation == incarnation and req.is_decoding:
                self.finishing.append(req)

    def _finish(self, step: int) -> None:
        for req in self.finishing:
            computed = step - req.epoch + 1 if req.is_decoding else req.computed
            self._release(req, computed, step)
            del self.running[req.rid]
            self.finished += 1
            self.settled += 1
            if self.unscheduled:
                self.unscheduled -= 1
                self.arrivals.append(step + 1)
        self.finishing.clear()

    def _measure(self, steps: int) -> None:
        """Add ``steps`` forward passes of the current state (decoders advancing) to the sums."""
        used = self.usable - self._free_blocks()
        running = len(self.running)
        self.peak_used = max(self.peak_used, used)
        self.max_running = max(self.max_running, running)
        self.sum_running += running * steps
        self.sum_waiting += len(self.waiting) * steps
        self.sum_used += used * steps
        self.sum_alloc_slots += used * self.block_size * steps
        # waste after the first of these steps, shrinking by one slot per decoder per step
        first = self.private_blocks * self.block_size - self.private_written
        self.sum_waste_slots += first * steps - self.n_dec * steps * (steps - 1) // 2

    def _sample(self, step: int, usage: float, running: int, waiting: int) -> None:
        """Keep one point per ``stride`` steps; halve the points and double the stride when full."""
        self.samples.append((step, usage, running, waiting))
        if len(self.samples) == MAX_SERIES_POINTS:
            self.samples = self.samples[::2]
            self.stride *= 2

    def _record(self, first_step: int, steps: int) -> None:
        """Sample the after-free state, unchanged over steps [first_step, first_step + steps)."""
        usage = (self.usable - self._free_blocks()) / self.usable
        running, waiting = len(self.running), len(self.waiting)
        step = -(-first_step // self.stride) * self.stride
        while step < first_step + steps:
            self._sample(step, usage, running, waiting)
            step = -(-(step + 1) // self.stride) * self.stride

    # ---- quiet spans --------------------------------------------------------------------------

    def _head_blocked_by_pool(self) -> bool:
        """Would the waiting head fail to get blocks for its first chunk right now?"""
        req = self.waiting[0]
        num_tokens = req.prompt + req.generated
        hit, touched = self._prefix_hit_blocks(req, num_tokens)
        budget = self.engine.max_num_batched_tokens - self.n_dec
        chunk = min(num_tokens - hit * self.block_size, budget)
        new_blocks = _cdiv(hit * self.block_size + chunk, self.block_size) - hit
        return new_blocks + touched > self._free_blocks()

    def _blocked_reason(self) -> BlockedBy | None:
        """Why the waiting head cannot be admitted in a step with no partial prefill, or None."""
        if not self.waiting:
            return None
        if len(self.running) >= self.engine.max_num_seqs:
            return "max_num_seqs"
        return "kv_pool" if self._head_blocked_by_pool() else None

    def _span_end(self, step: int, reason: BlockedBy | None) -> int:
        """End (exclusive) of the decode-only span starting at ``step``; ``step`` if it is busy.

        In such a span no prefill is under way, nobody finishes or arrives, and the waiting head
        cannot be admitted (max_num_seqs is full, or the pool is short — it only gets shorter
        while decoders grow). Decoders then only add tokens and, at block boundaries, blocks.
        """
        if self.partial is not None or (self.waiting and reason is None):
            return step
        candidates: list[int] = []
        if self.finish_heap:
            candidates.append(self.finish_heap[0][0])
        if self.arrivals:
            candidates.append(self.arrivals[0])
        if not candidates:
            raise SimulationInvariantError(
                Text("step {step}: requests are waiting but nothing can ever change", step=step)
            )
        return min(candidates)

    def _fast_forward(self, step: int) -> int:
        """Advance through the decode-only span at ``step`` while the pool covers it; new step."""
        if self.partial is not None:
            return step
        reason = self._blocked_reason()
        until = self._span_end(step, reason)
        if until <= step:
            return step
        if not self.n_dec:  # nothing grows: the state is constant until the next event
            span = until - step
            self._measure(span)
            if reason is not None:
                self.blocked[reason] += span
            self._record(step, span)
            return until
        block_size, usable = self.block_size, self.usable
        free = self._free_blocks()
        used = usable - free
        running, waiting = len(self.running), len(self.waiting)
        span, allocated, sum_allocated = self._decode_span(step, until - step, free)
        t = step + span
        # one sample per stride point, with the blocks allocated through that step
        sample_at = -(-step // self.stride) * self.stride
        while sample_at < t:
            through = self._allocated_through(sample_at - step + 1)
            self._sample(sample_at, (used + through) / usable, running, waiting)
            sample_at = -(-(sample_at + 1) // self.stride) * self.stride
        if not span:
            return step
        n_dec, private_blocks, written = self.n_dec, self.private_blocks, self.private_written
        # step j of the span holds (used + allocated through j) blocks and has written j + 1 tokens
        # per decoder: sum the used blocks, allocated slots and waste over the span in closed form
        sum_used = used * span + sum_allocated
        self.sum_used += sum_used
        self.sum_alloc_slots += sum_used * block_size
        self.sum_waste_slots += (
            (private_blocks * span + sum_allocated) * block_size
            - written * span
            - n_dec * span * (span + 1) // 2
        )
        self._allocate(allocated)
        self.private_blocks += allocated
        self.private_written += n_dec * span
        self.peak_used = max(self.peak_used, used + allocated)
        self.max_running = max(self.max_running, running)
        self.sum_running += running * span
        self.sum_waiting += waiting * span
        if reason is not None:
            self.blocked[reason] += span
        return t

    def _decode_span(self, step: int, limit: int, free: int) -> tuple[int, int, int]:
        """The decode-only steps from ``step`` the pool covers without preempting (at most ``limit``).

        Returns (steps k, blocks allocated by them, the sum over j = 1..k of the blocks allocated by
        the first j). Step t allocates ``bucket[t % B]`` blocks, so the allocation is periodic with
        period B and adds ``n_dec`` per period: with ``pref[r]`` the blocks of the first r steps of a
        period, the first j steps allocate ``(j // B) * n_dec + pref[j % B]``. Cost O(min(limit, B)).
        """
        block_size, n_dec = self.block_size, self.n_dec
        start = step % block_size
        if limit <= block_size:  # short: step through it
            pref = [0]
            for offset in range(limit):
                need = self.bucket[(start + offset) % block_size]
                if pref[-1] + need > free:
                    break
                pref.append(pref[-1] + need)
            self._span_pref = pref
            self._span_cycle = 0
            return len(pref) - 1, pref[-1], sum(pref)
        pref = list(accumulate(self.bucket[start:] + self.bucket[:start], initial=0))  # B + 1 entries
        self._span_pref = pref
        self._span_cycle = n_dec
        cycles = free // n_dec
        rest = bisect_right(pref, free - cycles * n_dec, 0, block_size) - 1
        span = min(limit, cycles * block_size + rest)
        # sum over j = 0..span of allocated(j): whole periods, then the first part of the last one
        periods, tail = divmod(span + 1, block_size)
        sums = list(accumulate(pref[:block_size], initial=0))  # sums[r] = pref[0] + ... + pref[r - 1]
        total = (
            n_dec * block_size * periods * (periods - 1) // 2
            + periods * sums[block_size]
            + tail * periods * n_dec
            + sums[tail]
        )
        return span, self._allocated_through(span), total

    def _allocated_through(self, steps: int) -> int:
        """Blocks allocated by the first ``steps`` steps of the span ``_decode_span`` just measured."""
        if not self._span_cycle:
            return self._span_pref[steps]
        periods, rest = divmod(steps, self.block_size)
        return periods * self._span_cycle + self._span_pref[rest]

    # ---- driver -------------------------------------------------------------------------------

    def run(self) -> int:
        started = time.thread_time()
        step = 0
        while True:
            self._arrive(step)
            if self.settled == self.num_requests:
                return step
            self.work += 1
            if self.work >= self.next_clock_check:
                self._check_budget(started)
            forward = self._fast_forward(step)
            if forward > step:
                step = forward
                continue
            preempted, budget = self._schedule_running(step)
            if self.waiting and not preempted:  # vLLM admits nobody in a step that preempted
                self._admit(step, budget)
            self._execute(step)
            self._measure(1)
            self._finish(step)
            self._record(step, 1)
            if self.check_invariants:
                self._check(step)
            step += 1

    def _check_budget(self, started: float) -> None:
        """Stop a run that went over its work budget or its CPU-time deadline (this thread's CPU, so other requests do not count) (budget.py)."""
        self.next_clock_check = self.work + DEADLINE_CHECK_EVERY
        if self.work > self.max_work:
            raise too_much_work(needed=self.work, limit=self.max_work, at_least=False)
        if time.thread_time() - started > self.max_seconds:
            raise out_of_time(seconds=self.max_seconds, work=self.work)

    def check_work_needed(self) -> int:
        """Refuse, before the first step, a workload whose prefills alone exceed the budget."""
        engine, block_size = self.engine, self.block_size
        uncached = (
            max(1, req.prompt - req.prefix_blocks * block_size)
            for req in self.pending
            if req.prompt + req.output <= engine.max_model_len
            and _cdiv(req.prompt + req.output - 1, block_size) <= self.usable
        )
        needed = prefill_steps_needed(
            uncached_prompt_tokens=uncached, max_num_batched_tokens=engine.max_num_batched_tokens
        )
        if needed > self.max_work:
            raise too_much_work(needed=needed, limit=self.max_work, at_least=True)
        return needed

    def _check(self, step: int) -> None:
        block_size = self.block_size
        decoders = [r for r in self.running.values() if r.is_decoding]
        private_blocks = private_written = 0
        for req in self.running.values():
            computed = step - req.epoch + 1 if req.is_decoding else req.computed
            private_blocks += _cdiv(computed, block_size) - req.shared
            private_written += computed - req.shared * block_size
        chain_held = sum(e.longest_hold() for e in self.entries.values())
        problems = []
        if private_blocks != self.private_blocks or private_written != self.private_written:
            problems.append(
                f"private {self.private_blocks}/{self.private_written} vs {private_blocks}/{private_written}"
            )
        if (
            self.free_plain < 0
            or self.free_plain + private_blocks + chain_held + self.evictable != self.usable
        ):
            problems.append(f"pool: free {self.free_plain} + private {private_blocks} + chains {chain_held}")
        if self.evictable != sum(e.evictable for e in self.entries.values()):
            problems.append("evictable total differs from the entries' sum")
        if any(e.evictable != e.cached - e.longest_hold() or e.evictable < 0 for e in self.entries.values()):
            problems.append("a prefix chain's evictable tail is not cached - longest hold")
        if len(decoders) != self.n_dec or sum(self.bucket) != self.n_dec:
            problems.append(f"decoders {len(decoders)} vs n_dec {self.n_dec} vs buckets {sum(self.bucket)}")
        if len(self.running) > self.engine.max_num_seqs:
            problems.append(f"{len(self.running)} running > max_num_seqs")
        if problems:
            raise SimulationInvariantError(Text("step {step}: ", step=step) + "; ".join(problems))

    def result(self, steps: int) -> WorkloadResult:
        binding, explanation = _binding_limit(self.rejected, self.preemptions, self.blocked)
        series = KVSeries(
            step=[s[0] for s in self.samples],
            kv_usage=[s[1] for s in self.samples],
            running=[s[2] for s in self.samples],
            waiting=[s[3] for s in self.samples],
        )
        per_step = max(steps, 1)
        return WorkloadResult(
            num_gpu_blocks=self.engine.num_gpu_blocks,
            usable_blocks=self.usable,
            block_size=self.block_size,
            steps=steps,
            finished=self.finished,
            rejected=sum(self.rejected.values()),
            rejected_by_reason=dict(sorted(self.rejected.items())),
            preemptions=self.preemptions,
            peak_blocks_used=self.peak_used,
            peak_kv_usage=self.peak_used / self.usable,
            mean_kv_usage=self.sum_used / per_step / self.usable,
            max_running=self.max_running,
            mean_running=self.sum_running / per_step,
            mean_waiting=self.sum_waiting / per_step,
            admission_blocked_steps=dict(self.blocked),
            prefix_tokens_hit=self.prefix_hit_tokens,
            prompt_tokens_queried=self.prompt_queried_tokens,
            prefix_hit_rate=self.prefix_hit_tokens / self.prompt_queried_tokens
            if self.prompt_queried_tokens
            else 0.0,
            fragmentation_waste_fraction=(
                self.sum_waste_slots / self.sum_alloc_slots if self.sum_alloc_slots else 0.0
            ),
            binding_limit=binding,
            binding_explanation=explanation,
            series=series,
        )


def _binding_limit(
    rejected: dict[str, int], preemptions: int, blocked: dict[BlockedBy, int]
) -> tuple[BindingLimit, str]:
    """Which limit the workload hit first, checked in this order:

    1. ``"max_model_len"``: at least one request had prompt + output > max_model_len (never served);
    2. ``"kv_pool"``: a request could not fit the pool even alone, or a running request was
       preempted, or FIFO admission was stopped by missing blocks on at least as many steps as by
       max_num_seqs (and on at least one);
    3. ``"max_num_seqs"``: admission was stopped by max_num_seqs on more steps than by the pool;
    4. ``"none"``: nothing waited on memory or sequence slots (steps blocked only by the token
       budget are reported in ``admission_blocked_steps`` but are a throughput limit, not a
       memory one).
    """
    pool, seqs = blocked["kv_pool"], blocked["max_num_seqs"]
    counts = Plural(
        pool,
        N_("admission stopped by the KV pool on {pool} step, by max_num_seqs on {seqs}"),
        N_("admission stopped by the KV pool on {pool} steps, by max_num_seqs on {seqs}"),
        pool=pool,
        seqs=seqs,
    )
    if rejected.get("max_model_len"):
        return (
            "max_model_len",
            Plural(
                rejected["max_model_len"],
                N_("{rejected} request longer than max_model_len was rejected"),
                N_("{rejected} requests longer than max_model_len were rejected"),
                rejected=rejected["max_model_len"],
            ),
        )
    if rejected.get("kv_pool"):
        return "kv_pool", Plural(
            rejected["kv_pool"],
            N_("{rejected} request needs more blocks than the whole pool"),
            N_("{rejected} requests need more blocks than the whole pool"),
            rejected=rejected["kv_pool"],
        )
    if preemptions:
        return "kv_pool", Plural(
            preemptions,
            N_("{preemptions} preemption for lack of free blocks; {counts}"),
            N_("{preemptions} preemptions for lack of free blocks; {counts}"),
            preemptions=preemptions,
            counts=counts,
        )
    if pool and pool >= seqs:
        return "kv_pool", counts
    if seqs:
        return "max_num_seqs", counts
    return "none", counts


def simulate(
    *,
    workload: WorkloadSpec,
    engine: EngineParams,
    check_invariants: bool = False,
    max_work: int = MAX_SIMULATION_WORK,
    max_seconds: float = MAX_SIMULATION_SECONDS,
) -> WorkloadResult:
    """Run ``workload`` through a vLLM-V1-like scheduler with ``engine``'s pool and limits.

    Deterministic: the same spec (seed included) gives the same result. ``check_invariants``
    recounts every block after each step (slow; for tests). A workload that needs more than
    ``max_work`` steps (known before the run from its prefills, or met during it) or more than
    ``max_seconds`` of CPU raises ``WorkloadTooLargeError`` (budget.py).
    """
    sim = _Simulator(workload, engine, check_invariants, max_work=max_work, max_seconds=max_seconds)
    sim.check_work_needed()
    steps = sim.run()
    return sim.result(steps)
