"""Cached estimates against one target, what a rule sees (the context), the Rule row type and the sentences every lever uses."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.perf.cluster import ClusterFit
from app.core.perf.predict import Performance, performance
from app.core.perf.schedule import Workload
from app.core.recommend.model import Preference, Search, Snapshot
from app.core.result import Estimate
from app.core.specs import GIB, DeviceSpec, ModelSpec, ServeConfig
from app.core.text import COMMA, Text, TextList
from app.core.versions import VersionRules, rules_for

# --- evaluation ----------------------------------------------------------------------------------------


LARGEST_LEN_SEARCH_FLOOR = 1  # the S search starts at one token


class Engine:
    """Cached estimates of one model/device/version against one target."""

    def __init__(
        self,
        *,
        model: ModelSpec,
        device: DeviceSpec,
        vllm_version: str | None,
        target_len: int,
        target_conc: int,
        workload: Workload | None = None,
        cluster: ClusterFit | None = None,
    ) -> None:
        # the target S* x N* the rules walk toward (named as the recommendation's inputs are)
        if target_len < 1:
            raise PlannerError("target_max_model_len", Text("must be at least 1 token"))
        if target_conc < 1:
            raise PlannerError("target_concurrency", Text("must be at least 1 sequence"))
        self.model = model
        self.device = device
        self.vllm_version = vllm_version
        self.rules = rules_for(vllm_version)
        self.target_len = target_len
        self.target_conc = target_conc
        self._estimates: dict[ServeConfig, Estimate | PlannerError] = {}
        self._snapshots: dict[ServeConfig, Snapshot] = {}
        self.workload = workload  # the planner's speed workload (None: no speed effects)
        self._speeds: dict[ServeConfig, Performance | PlannerError] = {}
        self.cluster = cluster  # your measured runs' factors: every speed scaled by them

    def at(self, serve: ServeConfig) -> Estimate:
        """The core's estimate; raises the PlannerError vLLM's refusal maps to."""
        found = self._estimates.get(serve)
        if found is None:
            try:
                found = estimate(  # the walk reads numbers, never the working (terms)
                    model=self.model,
                    device=self.device,
                    serve=serve,
                    vllm_version=self.vllm_version,
                    working=False,
                )
            except PlannerError as exc:
                found = exc
            self._estimates[serve] = found
        if isinstance(found, PlannerError):
            raise found
        return found

    def speed(self, serve: ServeConfig) -> Performance:
        """performance() at the speed workload, the configuration at its own max_model_len (cached,
        without the concurrency curve); raises the PlannerError of a configuration with no speed."""
        if self.workload is None:
            raise ValueError("the engine was built without a speed workload")
        found = self._speeds.get(serve)
        if found is None:
            try:
                found = performance(
                    estimate=self.at(serve),
                    model=self.model,
                    device=self.device,
                    serve=serve,
                    workload=self.workload,
                    with_curve=False,
                    cluster=self.cluster,
                )
            except PlannerError as exc:
                found = exc
            self._speeds[serve] = found
        if isinstance(found, PlannerError):
            raise found
        return found

    def at_len(self, serve: ServeConfig, length: int) -> Estimate:
        return self.at(serve.model_copy(update={"max_model_len": length}))

    def holds(self, est: Estimate, sequences: int) -> bool:
        return est.fits and est.max_concurrency >= sequences

    def meets(self, serve: ServeConfig) -> bool:
        est = self.at_len(serve, self.target_len)
        return self.holds(est, self.target_conc) and est.max_num_seqs >= self.target_conc

    def deficit_bytes(self, serve: ServeConfig) -> int:
        """KV bytes per device still missing for N* sequences of S* (negative: room to spare).

        The demand is what vLLM reserves per request (blocks per request x bytes per block), so a
        smaller KV dtype counts as progress even while weights still leave no pool at all.
        """
        est = self.at_len(serve, self.target_len)
        per_sequence = est.bytes_per_block * sum(g.blocks_per_request for g in est.groups)
        return self.target_conc * per_sequence - est.kv_cache_bytes

    def score(self, serve: ServeConfig) -> tuple[bool, int]:
        """Progress toward the target: met first, then the smaller KV deficit at S* x N*."""
        return self.meets(serve), -self.deficit_bytes(serve)

    def largest_len(self, serve: ServeConfig) -> int:
        """Longest max_model_len holding N* sequences (binary search over the core's estimate)."""
        upper = max(self.target_len, self.model.max_model_len_derived)
        if self.holds(self.at_len(serve, upper), self.target_conc):
            return upper
        lo, hi = 0, upper - 1
        # Full attention: N* x cdiv(S, B) blocks, so the answer is usually a whole number of blocks per
        # sequence (with or without the null block). Try those first; the search below confirms or finds it.
        at_target = self.at_len(serve, self.target_len)
        size = max(1, at_target.block_size)
        for blocks in (at_target.num_gpu_blocks, at_target.num_gpu_blocks - 1):
            guess = blocks // self.target_conc * size
            if 0 < guess < upper and self.holds(self.at_len(serve, guess), self.target_conc):
                if not self.holds(self.at_len(serve, guess + 1), self.target_conc):
                    return guess
                lo = guess
                break
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.holds(self.at_len(serve, max(LARGEST_LEN_SEARCH_FLOOR, mid)), self.target_conc):
                lo = mid
            else:
                hi = mid - 1
        return lo

    def snapshot(self, serve: ServeConfig) -> Snapshot:
        found = self._snapshots.get(serve)
        if found is not None:
            return found
        now = self.at(serve)
        at_target = self.at_len(serve, self.target_len)
        snap = Snapshot(
            max_model_len=now.max_model_len,
            kv_tokens=now.kv_tokens,
            max_concurrency=now.max_concurrency,
            concurrency_at_target_len=at_target.max_concurrency if at_target.fits else 0.0,
            largest_len_at_target_concurrency=self.largest_len(serve),
            fits=now.fits,
            meets_target=self.meets(serve),
            kv_cache_bytes=now.kv_cache_bytes,
            kv_bytes_per_token=now.kv_bytes_per_token,
            weights_bytes=now.weights_bytes,
            activation_peak_bytes=now.activation_peak_bytes,
        )
        self._snapshots[serve] = snap
        return snap


@dataclass
class Context:
    """What a rule sees: the inputs and the configuration reached so far."""

    engine: Engine
    serve: ServeConfig
    devices_per_node: int
    nodes: int
    allow_fp8_kv: bool
    preference: Preference
    notes: list[str] = field(default_factory=list)

    @property
    def model(self) -> ModelSpec:
        return self.engine.model

    @property
    def device(self) -> DeviceSpec:
        return self.engine.device

    @property
    def rules(self) -> VersionRules:
        return self.engine.rules

    @property
    def now(self) -> Estimate:
        return self.engine.at(self.serve)

    @property
    def target_len(self) -> int:
        return self.engine.target_len

    @property
    def target_conc(self) -> int:
        return self.engine.target_conc


TextFn = Callable[[Context, ServeConfig | None], str]
# A row's effect or cost: worded from the context and the candidate, or one sentence that depends on neither.
Explain = TextFn | str


def explain(text: Explain, ctx: Context, chosen: ServeConfig | None) -> str:
    """A row's effect or cost for the candidate it chose or tried (None: none).

    A fixed sentence is returned as it is; a function is called, e.g. ``side.MNBT_EFFECT`` for 8,192 →
    4,096 batched tokens names the activation peaks of both.
    """
    return text if isinstance(text, str) else text(ctx, chosen)


@dataclass(frozen=True)
class Rule:
    """One row of the remedy table.

    ``check`` returns why the row cannot act here (or None); ``candidates`` proposes configurations in
    order of increasing strength; ``search`` says how to pick: ``always`` takes the first (the row sets
    the user's own target), ``first_meeting`` scans for the first that meets the target (else the best
    improvement), ``monotone`` binary-searches a list whose strength grows monotonically.
    ``effect``/``cost`` explain the row for the candidate it chose (or tried best; None if none): a
    function of both, or a fixed sentence where the row's wording depends on neither (:func:`explain`).
    ``side`` rows are listed only where ``relevant`` says they can help.
    """

    key: str
    label: str
    fields: tuple[str, ...]
    check: Callable[[Context], str | None]
    candidates: Callable[[Context], list[ServeConfig]]
    effect: Explain
    cost: Explain
    search: Search = "first_meeting"
    must_meet: bool = False  # apply only a candidate that reaches the target (costly levers)
    side: bool = False
    relevant: Callable[[Context], bool] = lambda _ctx: True


# --- text helpers -------------------------------------------------------------------------------------


def gib_text(num_bytes: float) -> str:
    return Text("{num_bytes:.2f} GiB", num_bytes=num_bytes / GIB)


def gib_changes(before: Estimate | Snapshot, after: Estimate | Snapshot, *fields: str) -> dict[str, str]:
    """The placeholders of a "before → after" sentence, in GiB: ``{field}`` before, ``{field}2`` after.

    E.g. ``gib_changes(b, a, "kv_cache_bytes")`` for a pool of 21,474,836,480 → 32,212,254,720 B gives
    ``{"kv_cache_bytes": "20.00 GiB", "kv_cache_bytes2": "30.00 GiB"}``.
    """
    out: dict[str, str] = {}
    for name in fields:
        out[name], out[f"{name}2"] = gib_text(getattr(before, name)), gib_text(getattr(after, name))
    return out


def _serve_value(serve: ServeConfig, est: Estimate, name: str) -> object:
    """A flag as it takes effect: the user's value or the version's default (objects as `vllm serve` JSON)."""
    if name == "speculative_config" and serve.speculative_config is not None:
        return json.dumps(serve.speculative_config.model_dump(exclude_none=True), separators=(",", ":"))
    if name == "limit_mm_per_prompt" and serve.limit_mm_per_prompt is not None:
        return json.dumps(serve.limit_mm_per_prompt, separators=(",", ":"))
    resolved = {
        "max_model_len": est.max_model_len,
        "gpu_memory_utilization": est.gpu_memory_utilization,
        "max_num_seqs": est.max_num_seqs,
        "max_num_batched_tokens": est.max_num_batched_tokens,
    }
    return resolved.get(name, getattr(serve, name))


def changes_text(ctx: Context, before: ServeConfig, after: ServeConfig) -> str:
    eng = ctx.engine
    b_est, a_est = eng.at(before), eng.at(after)
    parts = []
    for name in ServeConfig.model_fields:
        old, new = _serve_value(before, b_est, name), _serve_value(after, a_est, name)
        if old != new:
            parts.append(f"{name} {old} → {new}")
    return TextList(COMMA, parts) if parts else Text("no change")


def progress_text(ctx: Context, serve: ServeConfig) -> str:
    snap = ctx.engine.snapshot(serve)
    n_star, s_star = ctx.target_conc, ctx.target_len
    if snap.meets_target:
        return Text(
            "meets the target: {concurrency_at_target_len:.2f} sequences of {s_star:,} tokens fit (≥ {n_star})",
            concurrency_at_target_len=snap.concurrency_at_target_len,
            s_star=s_star,
            n_star=n_star,
        )
    deficit = ctx.engine.deficit_bytes(serve)
    if deficit <= 0:
        return Text(
            "the KV pool holds {n_star} sequences of {s_star:,} tokens but max_num_seqs is below {n_star}",
            n_star=n_star,
            s_star=s_star,
        )
    return Text(
        "{concurrency_at_target_len:.2f} sequences of {s_star:,} tokens fit (target {n_star}); at {n_star} sequences the longest max_model_len is {largest_len_at_target_concurrency:,}; the KV pool is {deficit} per device short of the target",
        concurrency_at_target_len=snap.concurrency_at_target_len,
        s_star=s_star,
        n_star=n_star,
        largest_len_at_target_concurrency=snap.largest_len_at_target_concurrency,
        deficit=gib_text(deficit),
    )
