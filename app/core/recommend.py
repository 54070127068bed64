"""From a configuration that misses its target to one that meets it, in the seed's order.

The seed's remedy table (处置) says: "先压 S，再考虑 KV 数据类型，再考虑 TP，最后才动
gpu_memory_utilization 与 --swap-space" — first the sequence length, then the KV dtype, then tensor
parallelism, and only last the utilization and swap/offload. :data:`RULES` is that table as data:
each row names the flag it moves, when it may act, the configurations it proposes, and the effect
and cost it explains. :func:`recommend` runs the rows in order; every candidate is re-estimated with
the core and a row is applied only when it is valid and moves the configuration toward the target
(S* = ``target_max_model_len`` tokens for N* = ``target_concurrency`` sequences). A row only ever
changes its own flags, so a later row never undoes an earlier one.

:func:`bisect` is the seed's fourth diagnosis step as a feature: would it run with
``--max-model-len`` halved (S side)? with one sequence (N side)? neither (budget)?
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict

from app.core.budget import CUDA_CONTEXT_BYTES
from app.core.command import render_serve_command
from app.core.errors import PlannerError
from app.core.estimate import V0_CHUNKED_PREFILL_ABOVE, estimate
from app.core.kv import ONE_BYTE_KV_DTYPES, kv_heads_per_rank, stage_layer_ranges
from app.core.result import Estimate
from app.core.specs import GIB, DeviceSpec, ModelSpec, ServeConfig
from app.core.text import COMMA, SEMICOLON, Msg, Text, TextList
from app.core.versions import VersionRules, rules_for

Preference = Literal["latency", "throughput"]
BisectionVerdict = Literal["fits", "s_bound", "n_bound", "budget_bound"]
Search = Literal["always", "first_meeting", "monotone"]

# --- gpu_memory_utilization ceiling ------------------------------------------------------------------
# With CUDA graphs budgeted (0.20+) only the CUDA context, NCCL and cuBLAS handles live outside
# T x u; 0.95 leaves 4 GiB of an 80 GB device for them and for allocator fragmentation.
SAFE_UTILIZATION_CEILING = 0.95
# Older versions capture graphs in the 1 - u slack; besides the graphs and the context we keep this
# much for activation spikes above the profiled peak (the seed: "顶到 1.0 会挤占 prefill 峰值").
ACTIVATION_HEADROOM_BYTES = GIB // 2
UTILIZATION_STEP = 0.01  # the ceiling is rounded down to whole hundredths

# --- tensor-parallel communication ------------------------------------------------------------------
ALLREDUCES_PER_LAYER = 2  # Megatron-style TP: one after attention (o_proj), one after the MLP (down_proj)
RING_ALLREDUCE_FACTOR = 2  # a ring all-reduce sends 2 x (TP - 1)/TP of the message from every rank
ACTIVATION_BYTES = 2  # the hidden state travels in bf16/fp16
BYTES_PER_GB = 10**9  # interconnect and PCIe figures are decimal GB/s

# --- --cpu-offload-gb: weights streamed from host memory every forward step --------------------------
PCIE_GEN4_GB_PER_S = 25  # achievable host-to-device copy rate of a PCIe Gen4 x16 link (32 GB/s raw)
PCIE_GEN5_GB_PER_S = 50  # PCIe Gen5 x16 (64 GB/s raw)
PCIE_GEN5_MIN_SM = 90  # Hopper/Blackwell servers ship PCIe Gen5 hosts; older GPUs sit on Gen4

# --- side levers --------------------------------------------------------------------------------------
MIN_BATCHED_TOKENS = 2048  # vLLM's smallest API-server default for --max-num-batched-tokens (§7)
V0_DEFAULT_SWAP_GIB = 4  # V0 --swap-space default, per GPU (reference §7)
LARGEST_LEN_SEARCH_FLOOR = 1  # the S search starts at one token


# --- output ---------------------------------------------------------------------------------------------


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Snapshot(Frozen):
    """Where one configuration stands against the target (per device of the tightest rank)."""

    max_model_len: int
    kv_tokens: int
    max_concurrency: float  # at the configuration's own max_model_len
    concurrency_at_target_len: float  # at S*, 0.0 when one sequence of S* does not fit
    largest_len_at_target_concurrency: int  # longest max_model_len with N* sequences; 0 if none
    fits: bool  # starts at its own max_model_len
    meets_target: bool  # starts at S* with max concurrency >= N* and max_num_seqs >= N*
    kv_cache_bytes: int
    kv_bytes_per_token: int
    weights_bytes: int
    activation_peak_bytes: int


class Step(Frozen):
    key: str
    label: Msg
    applied: bool
    reason: Msg
    effect: Msg
    cost: Msg
    before: Snapshot
    after: Snapshot
    serve: ServeConfig  # the configuration after this step
    # applied, then undone by the prune pass: a later step met the target without it
    undone: bool = False
    undone_reason: Msg | None = None


class BisectionProbe(Frozen):
    name: Literal["as_given", "half_len", "one_seq"]
    max_model_len: int
    max_num_seqs: int
    demand: int  # sequences it has to hold to count as running
    starts: bool
    runs: bool  # starts and holds `demand` sequences of max_model_len
    max_concurrency: float
    kv_tokens: int
    kv_cache_bytes: int
    estimated_max_model_len: int
    error: str | None


class Bisection(Frozen):
    verdict: BisectionVerdict
    target_concurrency: int
    explanation: Msg
    probes: list[BisectionProbe]


class Recommendation(Frozen):
    target_max_model_len: int
    target_concurrency: int
    preference: Preference
    steps: list[Step]
    final: ServeConfig
    meets_target: bool
    impossible_reason: Msg | None
    best_len_at_target_concurrency: int  # nearest reachable point: best S at N*
    best_concurrency_at_target_len: int  # and best N at S*
    command: str
    bisection: Bisection
    warnings: list[Msg]


# --- evaluation ----------------------------------------------------------------------------------------


class _Engine:
    """Cached estimates of one model/device/version against one target."""

    def __init__(
        self,
        *,
        model: ModelSpec,
        device: DeviceSpec,
        vllm_version: str | None,
        target_len: int,
        target_conc: int,
    ) -> None:
        self.model = model
        self.device = device
        self.vllm_version = vllm_version
        self.rules = rules_for(vllm_version)
        self.target_len = target_len
        self.target_conc = target_conc
        self._estimates: dict[ServeConfig, Estimate | PlannerError] = {}
        self._snapshots: dict[ServeConfig, Snapshot] = {}

    def at(self, serve: ServeConfig) -> Estimate:
        """The core's estimate; raises the PlannerError vLLM's refusal maps to."""
        found = self._estimates.get(serve)
        if found is None:
            try:
                found = estimate(
                    model=self.model, device=self.device, serve=serve, vllm_version=self.vllm_version
                )
            except PlannerError as exc:
                found = exc
            self._estimates[serve] = found
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
class _Ctx:
    """What a rule sees: the inputs and the configuration reached so far."""

    engine: _Engine
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


TextFn = Callable[[_Ctx, ServeConfig | None], str]


@dataclass(frozen=True)
class Rule:
    """One row of the remedy table.

    ``check`` returns why the row cannot act here (or None); ``candidates`` proposes configurations in
    order of increasing strength; ``search`` says how to pick: ``always`` takes the first (the row sets
    the user's own target), ``first_meeting`` scans for the first that meets the target (else the best
    improvement), ``monotone`` binary-searches a list whose strength grows monotonically.
    ``effect``/``cost`` explain the row for the candidate it chose (or tried best; None if none).
    ``side`` rows are listed only where ``relevant`` says they can help.
    """

    key: str
    label: str
    fields: tuple[str, ...]
    check: Callable[[_Ctx], str | None]
    candidates: Callable[[_Ctx], list[ServeConfig]]
    effect: TextFn
    cost: TextFn
    search: Search = "first_meeting"
    must_meet: bool = False  # apply only a candidate that reaches the target (costly levers)
    side: bool = False
    relevant: Callable[[_Ctx], bool] = lambda _ctx: True


# --- text helpers -------------------------------------------------------------------------------------


def _gib(num_bytes: float) -> str:
    return Text("{num_bytes:.2f} GiB", num_bytes=num_bytes / GIB)


def _serve_value(serve: ServeConfig, est: Estimate, name: str) -> object:
    """A flag as it takes effect: the user's value or the version's default."""
    resolved = {
        "max_model_len": est.max_model_len,
        "gpu_memory_utilization": est.gpu_memory_utilization,
        "max_num_seqs": est.max_num_seqs,
        "max_num_batched_tokens": est.max_num_batched_tokens,
    }
    return resolved.get(name, getattr(serve, name))


def _changes(ctx: _Ctx, before: ServeConfig, after: ServeConfig) -> str:
    eng = ctx.engine
    b_est, a_est = eng.at(before), eng.at(after)
    parts = []
    for name in ServeConfig.model_fields:
        old, new = _serve_value(before, b_est, name), _serve_value(after, a_est, name)
        if old != new:
            parts.append(f"{name} {old} → {new}")
    return TextList(COMMA, parts) if parts else Text("no change")


def _progress(ctx: _Ctx, serve: ServeConfig) -> str:
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
        deficit=_gib(deficit),
    )


# --- 1. max_model_len ---------------------------------------------------------------------------------


def _len_check(ctx: _Ctx) -> str | None:
    if ctx.now.max_model_len == ctx.target_len:
        return Text("max_model_len is already the target {target_len:,}.", target_len=ctx.target_len)
    return None


def _len_candidates(ctx: _Ctx) -> list[ServeConfig]:
    return [ctx.serve.model_copy(update={"max_model_len": ctx.target_len})]


def _len_effect(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    snap = ctx.engine.snapshot(chosen or ctx.serve)
    n = math.floor(snap.concurrency_at_target_len)
    return Text(
        "With this budget, at N* = {target_conc} sequences the longest max_model_len that fits is {largest_len_at_target_concurrency:,} tokens; at S* = {target_len:,} tokens {n} sequences fit (vLLM would print {concurrency_at_target_len:.2f}x). KV use is linear in S, so S is the first lever.",
        target_conc=ctx.target_conc,
        largest_len_at_target_concurrency=snap.largest_len_at_target_concurrency,
        target_len=ctx.target_len,
        n=n,
        concurrency_at_target_len=snap.concurrency_at_target_len,
    )


def _len_cost(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    current = ctx.now.max_model_len
    text = Text(
        "Requests longer than {target_len:,} tokens (prompt plus output) are refused.",
        target_len=ctx.target_len,
    )
    if current > ctx.target_len:
        text += Text(
            " The context window shrinks from {current:,} to {target_len:,} tokens.",
            current=current,
            target_len=ctx.target_len,
        )
    elif current < ctx.target_len:
        text += Text(
            " Raising it from {current:,} reserves more KV per sequence, which is what the target asks.",
            current=current,
        )
    if ctx.target_len > ctx.model.max_model_len_derived:
        text += Text(
            " S* is above the model's derived maximum {max_model_len_derived:,}: vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, and quality past the trained context is not guaranteed.",
            max_model_len_derived=ctx.model.max_model_len_derived,
        )
    return text


# --- 2. kv_cache_dtype --------------------------------------------------------------------------------


def _kv_dtype_for(ctx: _Ctx) -> str:
    return "int8" if ctx.device.platform == "npu" else "fp8"


def _dtype_check(ctx: _Ctx) -> str | None:
    device, current = ctx.device, ctx.serve.kv_cache_dtype
    if current in ONE_BYTE_KV_DTYPES or current == "fp8_ds_mla":
        return Text("The KV cache is already {current} (one byte per element).", current=current)
    if not ctx.allow_fp8_kv:
        return Text("Quantized KV cache not allowed by the request (allow_fp8_kv is off).")
    if device.platform == "npu":
        if not device.int8_kv:
            return Text("{name} has no INT8 (C8) KV path in vllm-ascend.", name=device.name)
        return None
    if device.platform not in ("cuda", "rocm"):
        return Text("A quantized KV cache is not modelled on {platform} devices.", platform=device.platform)
    if not device.fp8_kv:
        sm = (
            Text(" (sm {compute_capability})", compute_capability=device.compute_capability)
            if device.compute_capability
            else ""
        )
        return Text(
            "{name}{sm} has no fp8 KV cache in its default attention backend (FlashAttention takes fp8 KV only from sm 9.0); vLLM would refuse --kv-cache-dtype fp8 or fall back to a slower backend.",
            name=device.name,
            sm=sm,
        )
    return None


def _dtype_candidates(ctx: _Ctx) -> list[ServeConfig]:
    return [ctx.serve.model_copy(update={"kv_cache_dtype": _kv_dtype_for(ctx)})]


def _dtype_effect(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    target = _kv_dtype_for(ctx)
    text = Text(
        "One byte per KV element instead of {kv_dtype_bytes_per_element}: KV use roughly halves.",
        kv_dtype_bytes_per_element=ctx.now.kv_dtype_bytes_per_element,
    )
    if chosen is not None:
        before, after = ctx.engine.snapshot(ctx.serve), ctx.engine.snapshot(chosen)
        text += Text(
            " KV bytes per token per device {kv_bytes_per_token:,} → {kv_bytes_per_token2:,} B; KV cache {kv_tokens:,} → {kv_tokens2:,} tokens.",
            kv_bytes_per_token=before.kv_bytes_per_token,
            kv_bytes_per_token2=after.kv_bytes_per_token,
            kv_tokens=before.kv_tokens,
            kv_tokens2=after.kv_tokens,
        )
    if target == "int8":
        text += Text(
            " On Ascend the INT8 (C8) KV cache is not a --kv-cache-dtype value: vllm-ascend reads it from the ModelSlim quantization description (kv_cache_type C8 in quant_model_description.json) of a ModelSlim-quantized checkpoint served with --quantization ascend; the command below carries no KV flag."
        )
    return text


def _dtype_cost(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    if _kv_dtype_for(ctx) == "int8":
        return Text(
            "Quantization error of INT8 KV with per-channel scales from ModelSlim calibration; needs a C8-quantized checkpoint and block_size a multiple of 32 (128 on Ascend)."
        )
    text = Text(
        "Quantization error: `fp8` is fp8_e4m3 (3 mantissa bits, range ±448) with per-tensor scales (from the checkpoint, else 1.0); fp8_e5m2 keeps more range but only 2 mantissa bits. Check accuracy on long contexts. The attention backend must support an fp8 KV cache"
    )
    if chosen is not None:
        old, new = ctx.now.attention_backend, ctx.engine.at(chosen).attention_backend
        text += f": {new}" + (Text(" (instead of {old})", old=old) if new != old else "")
    return text + "."


# --- 3. tensor_parallel_size, then pipeline_parallel_size ----------------------------------------------


def tp_invalid_reason(*, model: ModelSpec, tensor_parallel_size: int) -> str | None:
    """Why vLLM would refuse this TP for this model, or None."""
    tp = tensor_parallel_size
    if model.num_attention_heads % tp:
        return Text(
            "TP {tp} does not divide the {num_attention_heads} attention heads",
            tp=tp,
            num_attention_heads=model.num_attention_heads,
        )
    if model.mla is None:
        kv = model.num_kv_heads
        if kv % tp and tp % kv:
            return Text("TP {tp} and the {kv} KV heads do not divide each other", tp=tp, kv=kv)
    return None


def _powers_of_two(low_exclusive: int, high: int) -> list[int]:
    out, value = [], 1
    while value <= high:
        if value > low_exclusive:
            out.append(value)
        value *= 2
    return out


def _tp_check(ctx: _Ctx) -> str | None:
    tp = ctx.serve.tensor_parallel_size
    if tp >= ctx.devices_per_node:
        return Text(
            "TP is already {tp}, every device of a {devices_per_node}-device node.",
            tp=tp,
            devices_per_node=ctx.devices_per_node,
        )
    if not _tp_candidates(ctx):
        return Text(
            "No larger TP is valid for this model: {reasons}.", reasons=TextList(SEMICOLON, ctx.notes)
        )
    return None


def _tp_candidates(ctx: _Ctx) -> list[ServeConfig]:
    out = []
    ctx.notes.clear()
    for tp in _powers_of_two(ctx.serve.tensor_parallel_size, ctx.devices_per_node):
        problem = tp_invalid_reason(model=ctx.model, tensor_parallel_size=tp)
        if problem:
            ctx.notes.append(problem)
            continue
        out.append(ctx.serve.model_copy(update={"tensor_parallel_size": tp}))
    return out


def allreduce_bytes_per_token(*, tensor_parallel_size: int, hidden_size: int, num_layers: int) -> int:
    """Bytes each rank sends per token: 2 all-reduces per layer x 2(TP-1)/TP x hidden x 2 B x layers."""
    tp = tensor_parallel_size
    return (
        ALLREDUCES_PER_LAYER
        * RING_ALLREDUCE_FACTOR
        * (tp - 1)
        * hidden_size
        * ACTIVATION_BYTES
        * num_layers
        // tp
    )


def _tp_effect(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    model = ctx.model
    if chosen is None:
        return Text(
            "TP splits the KV heads (and the weights) over the devices: per-device KV use falls to about 1/TP."
        )
    eng = ctx.engine
    before, after = eng.snapshot(ctx.serve), eng.snapshot(chosen)
    tp0, tp1 = ctx.serve.tensor_parallel_size, chosen.tensor_parallel_size
    weights = Text(
        "weights per device {weights_bytes} → {weights_bytes2}",
        weights_bytes=_gib(before.weights_bytes),
        weights_bytes2=_gib(after.weights_bytes),
    )
    if model.mla is not None:
        return Text(
            "MLA caches one latent of {latent_size} values per token per layer, replicated on every TP rank: per-device KV bytes per token are {kv_bytes_per_token:,} B at TP {tp0} and {kv_bytes_per_token2:,} B at TP {tp1}. TP helps only by spreading the weights: {weights}, KV pool {kv_cache_bytes} → {kv_cache_bytes2}.",
            latent_size=model.mla.latent_size,
            kv_bytes_per_token=before.kv_bytes_per_token,
            tp0=tp0,
            kv_bytes_per_token2=after.kv_bytes_per_token,
            tp1=tp1,
            weights=weights,
            kv_cache_bytes=_gib(before.kv_cache_bytes),
            kv_cache_bytes2=_gib(after.kv_cache_bytes),
        )
    h0 = kv_heads_per_rank(total_kv_heads=model.num_kv_heads, tensor_parallel_size=tp0)
    h1 = kv_heads_per_rank(total_kv_heads=model.num_kv_heads, tensor_parallel_size=tp1)
    text = Text(
        "KV heads per device {h0} → {h1} (max(1, {num_kv_heads} // TP)): per-device KV bytes per token {kv_bytes_per_token:,} → {kv_bytes_per_token2:,} B; {weights}; KV cache {kv_tokens:,} → {kv_tokens2:,} tokens.",
        h0=h0,
        h1=h1,
        num_kv_heads=model.num_kv_heads,
        kv_bytes_per_token=before.kv_bytes_per_token,
        kv_bytes_per_token2=after.kv_bytes_per_token,
        weights=weights,
        kv_tokens=before.kv_tokens,
        kv_tokens2=after.kv_tokens,
    )
    if tp1 > model.num_kv_heads:
        text += Text(
            " Above {num_kv_heads} ranks the KV heads are replicated, so KV per device stops shrinking.",
            num_kv_heads=model.num_kv_heads,
        )
    return text


def _tp_cost(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    if chosen is None:
        return Text("More devices per replica and an all-reduce per layer.")
    tp = chosen.tensor_parallel_size
    model, device = ctx.model, ctx.device
    sent = allreduce_bytes_per_token(
        tensor_parallel_size=tp, hidden_size=model.hidden_size, num_layers=model.num_layers
    )
    text = Text(
        "All-reduce traffic ≈ {allreduces_per_layer} × 2 × ({tp}−1)/{tp} × hidden {hidden_size:,} × {activation_bytes} B × {num_layers} layers = {sent:.2f} MiB per token per device",
        allreduces_per_layer=ALLREDUCES_PER_LAYER,
        tp=tp,
        hidden_size=model.hidden_size,
        activation_bytes=ACTIVATION_BYTES,
        num_layers=model.num_layers,
        sent=sent / 2**20,
    )
    if device.interconnect_gbps:
        one_way = (
            device.interconnect_gbps / 2
        )  # the figure is bidirectional; a ring sends and receives at once
        micros = sent / (one_way * BYTES_PER_GB) * 1e6
        text += Text(
            "; at the interconnect's {interconnect_gbps:g} GB/s ({one_way:g} GB/s each way) ≈ {micros:.1f} µs per token of transfer, plus {allreduces_per_layer} collective launches per step that dominate at small batch",
            interconnect_gbps=device.interconnect_gbps,
            one_way=one_way,
            micros=micros,
            allreduces_per_layer=ALLREDUCES_PER_LAYER * model.num_layers,
        )
    else:
        text += Text("; the device's interconnect bandwidth is not known")
    return text + Text(
        ". A replica now takes {tp} devices instead of {tensor_parallel_size}.",
        tp=tp,
        tensor_parallel_size=ctx.serve.tensor_parallel_size,
    )


def _pp_check(ctx: _Ctx) -> str | None:
    if ctx.nodes <= 1:
        return Text("One node: pipeline parallelism across nodes needs nodes > 1.")
    if not _pp_candidates(ctx):
        return Text(
            "No pipeline size fits TP {tensor_parallel_size} × PP ≤ {devices_per_node} × {nodes} devices.",
            tensor_parallel_size=ctx.serve.tensor_parallel_size,
            devices_per_node=ctx.devices_per_node,
            nodes=ctx.nodes,
        )
    return None


def _pp_candidates(ctx: _Ctx) -> list[ServeConfig]:
    tp, pp0 = ctx.serve.tensor_parallel_size, ctx.serve.pipeline_parallel_size
    limit = ctx.devices_per_node * ctx.nodes
    return [
        ctx.serve.model_copy(update={"pipeline_parallel_size": pp})
        for pp in range(pp0 + 1, ctx.nodes + 1)
        if tp * pp <= limit and pp <= ctx.model.num_layers
    ]


def _pp_effect(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    if chosen is None:
        return Text(
            "PP gives each node a slice of the layers: weights and KV per device shrink by the stage count."
        )
    pp = chosen.pipeline_parallel_size
    sizes = [
        hi - lo for lo, hi in stage_layer_ranges(num_layers=ctx.model.num_layers, pipeline_parallel_size=pp)
    ]
    before, after = ctx.engine.snapshot(ctx.serve), ctx.engine.snapshot(chosen)
    return Text(
        "{pp} stages of {sizes} layers (the last stage also holds lm_head and sets the block count): per-device KV bytes per token {kv_bytes_per_token:,} → {kv_bytes_per_token2:,} B, weights per device {weights_bytes} → {weights_bytes2}.",
        pp=pp,
        sizes=sizes,
        kv_bytes_per_token=before.kv_bytes_per_token,
        kv_bytes_per_token2=after.kv_bytes_per_token,
        weights_bytes=_gib(before.weights_bytes),
        weights_bytes2=_gib(after.weights_bytes),
    )


def _pp_cost(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    if chosen is None:
        return Text(
            "Pipeline bubbles and a hop over the inter-node network per stage boundary, on every step."
        )
    pp, tp = chosen.pipeline_parallel_size, chosen.tensor_parallel_size
    return Text(
        "Pipeline bubbles: with fewer batches in flight than {pp} stages some stages idle; every step crosses {pp2} stage boundary(ies) on the inter-node network, adding latency per token. Needs a multi-node launch (Ray) over {tp} devices.",
        pp=pp,
        pp2=pp - 1,
        tp=tp * pp,
    )


# --- 4. gpu_memory_utilization ------------------------------------------------------------------------


def utilization_ceiling(est: Estimate) -> tuple[float, str]:
    """The highest utilization we recommend for this estimate's version and device, and why."""
    if est.cuda_graph_budgeted:
        return SAFE_UTILIZATION_CEILING, (
            Text(
                "vLLM {vllm_version} budgets CUDA graphs inside T × u, so only the CUDA context, NCCL and allocator slack live outside: ceiling {safe_utilization_ceiling:.2f}",
                vllm_version=est.vllm_version,
                safe_utilization_ceiling=SAFE_UTILIZATION_CEILING,
            )
        )
    outside = est.cuda_graph_bytes + CUDA_CONTEXT_BYTES + ACTIVATION_HEADROOM_BYTES
    raw = 1 - outside / est.device_total_bytes
    floored = round(math.floor(raw / UTILIZATION_STEP + 1e-9) * UTILIZATION_STEP, 2)
    ceiling = min(SAFE_UTILIZATION_CEILING, floored)
    return round(ceiling, 2), (
        Text(
            "vLLM {vllm_version} captures CUDA graphs outside T × u: 1 − (graphs {cuda_graph_bytes} + CUDA context {cuda_context_bytes} + activation headroom {activation_headroom_bytes}) / {device_total_bytes} = {raw:.4f}, rounded down to {floored:.2f}",
            vllm_version=est.vllm_version,
            cuda_graph_bytes=_gib(est.cuda_graph_bytes),
            cuda_context_bytes=_gib(CUDA_CONTEXT_BYTES),
            activation_headroom_bytes=_gib(ACTIVATION_HEADROOM_BYTES),
            device_total_bytes=_gib(est.device_total_bytes),
            raw=raw,
            floored=floored,
        )
        + (
            Text(
                ", capped at {safe_utilization_ceiling:.2f}",
                safe_utilization_ceiling=SAFE_UTILIZATION_CEILING,
            )
            if floored > SAFE_UTILIZATION_CEILING
            else ""
        )
    )


def _util_check(ctx: _Ctx) -> str | None:
    ceiling, why = utilization_ceiling(ctx.now)
    current = ctx.now.gpu_memory_utilization
    if current >= ceiling:
        return Text(
            "gpu_memory_utilization is {current:g}, already at or above the safe ceiling ({why}).",
            current=current,
            why=why,
        )
    return None


def _util_candidates(ctx: _Ctx) -> list[ServeConfig]:
    ceiling, _ = utilization_ceiling(ctx.now)
    start = math.floor(ctx.now.gpu_memory_utilization / UTILIZATION_STEP + 1e-9) + 1
    stop = round(ceiling / UTILIZATION_STEP)
    return [
        ctx.serve.model_copy(update={"gpu_memory_utilization": round(h * UTILIZATION_STEP, 2)})
        for h in range(start, stop + 1)
    ]


def _util_effect(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    _, why = utilization_ceiling(ctx.now)
    if chosen is None:
        return Text(
            "A larger share of the device for vLLM; all of the increase goes to the KV pool ({why}).", why=why
        )
    b, a = ctx.now, ctx.engine.at(chosen)
    return Text(
        "Budget T × u {budget_bytes} → {budget_bytes2}: KV pool {kv_cache_bytes} → {kv_cache_bytes2}. Safe ceiling: {why}.",
        budget_bytes=_gib(b.budget_bytes),
        budget_bytes2=_gib(a.budget_bytes),
        kv_cache_bytes=_gib(b.kv_cache_bytes),
        kv_cache_bytes2=_gib(a.kv_cache_bytes),
        why=why,
    )


def _util_cost(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    est = ctx.engine.at(chosen) if chosen is not None else ctx.now
    return (
        Text(
            "Only {unused_bytes} stays outside the budget for the CUDA context, NCCL buffers",
            unused_bytes=_gib(est.unused_bytes),
        )
        + ("" if est.cuda_graph_budgeted else Text(", CUDA graphs"))
        + Text(
            " and activation spikes above the profiled peak; other processes on the device must fit there too."
        )
    )


# --- 5. offload ---------------------------------------------------------------------------------------


def pcie_gb_per_s(device: DeviceSpec) -> int:
    sm = device.sm
    return PCIE_GEN5_GB_PER_S if sm is not None and sm >= PCIE_GEN5_MIN_SM else PCIE_GEN4_GB_PER_S


def _offload_check(ctx: _Ctx) -> str | None:
    if ctx.preference == "latency":
        return Text(
            "Not applied: the preference is latency, and --cpu-offload-gb streams weights over PCIe on every step; CPU KV tiers (--swap-space / --kv-offloading-size) add no GPU blocks."
        )
    if ctx.now.weights_bytes < GIB:
        return Text("Less than 1 GiB of weights per device: nothing worth offloading.")
    return None


def _offload_candidates(ctx: _Ctx) -> list[ServeConfig]:
    current = ctx.serve.cpu_offload_gb
    top = math.floor(current + ctx.now.weights_bytes / GIB)
    return [
        ctx.serve.model_copy(update={"cpu_offload_gb": float(g)})
        for g in range(math.floor(current) + 1, top + 1)
    ]


def _offload_tiers(ctx: _Ctx) -> str:
    rules = ctx.rules
    if rules.swap_space_used:
        return Text(
            "--swap-space (default {v0_default_swap_gib} GiB per GPU) keeps the KV of preempted sequences in CPU memory; it does not add GPU blocks, so it does not raise the concurrency at S* and swapping adds latency.",
            v0_default_swap_gib=V0_DEFAULT_SWAP_GIB,
        )
    if rules.has_kv_offloading_flags:
        return Text(
            "--kv-offloading-size N --kv-offloading-backend native adds a CPU tier for KV blocks: it helps prefix reuse across requests but adds no GPU blocks, so the concurrency at max length is unchanged."
        )
    return Text(
        "--swap-space is accepted but unused by the V1 engine of this version (preemption recomputes)."
    )


def _offload_effect(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    text = _offload_tiers(ctx)
    if chosen is not None:
        b, a = ctx.now, ctx.engine.at(chosen)
        text += Text(
            " --cpu-offload-gb {cpu_offload_gb:g} moves that much of each device's weights to host memory: weights per device {weights_bytes} → {weights_bytes2}, KV pool {kv_cache_bytes} → {kv_cache_bytes2}.",
            cpu_offload_gb=chosen.cpu_offload_gb,
            weights_bytes=_gib(b.weights_bytes),
            weights_bytes2=_gib(a.weights_bytes),
            kv_cache_bytes=_gib(b.kv_cache_bytes),
            kv_cache_bytes2=_gib(a.kv_cache_bytes),
        )
    else:
        text += Text(" --cpu-offload-gb would free GPU memory for KV by moving weights to host memory.")
    return text


def _offload_cost(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    rate = pcie_gb_per_s(ctx.device)
    gen = "Gen5" if rate == PCIE_GEN5_GB_PER_S else "Gen4"
    if chosen is None:
        return Text(
            "Offloaded weights are streamed over PCIe ({gen}, ~{rate} GB/s) on every forward step: each GiB adds ≈ {gib:.0f} ms per step.",
            gen=gen,
            rate=rate,
            gib=GIB / (rate * BYTES_PER_GB) * 1000.0,
        )
    offload_bytes = chosen.cpu_offload_gb * GIB
    millis = offload_bytes / (rate * BYTES_PER_GB) * 1e3
    return Text(
        "Every forward step streams {cpu_offload_gb:g} GiB of weights over PCIe {gen} (~{rate} GB/s): ≈ {millis:.0f} ms added to every decode step, i.e. to every generated token of the batch. Throughput and latency both drop sharply; prefer more devices where possible.",
        cpu_offload_gb=chosen.cpu_offload_gb,
        gen=gen,
        rate=rate,
        millis=millis,
    )


# --- side levers --------------------------------------------------------------------------------------


def _chunked_prefill_on(ctx: _Ctx) -> bool:
    if ctx.serve.enable_chunked_prefill is not None:
        return ctx.serve.enable_chunked_prefill
    if ctx.rules.engine == "v0":
        return ctx.now.max_model_len > V0_CHUNKED_PREFILL_ABOVE
    return True


def _not_met(ctx: _Ctx) -> bool:
    return not ctx.engine.meets(ctx.serve)


def _seqs_relevant(ctx: _Ctx) -> bool:
    return ctx.now.max_num_seqs < ctx.target_conc


def _seqs_candidates(ctx: _Ctx) -> list[ServeConfig]:
    return [ctx.serve.model_copy(update={"max_num_seqs": ctx.target_conc})]


def _seqs_effect(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    return Text(
        "vLLM runs at most max_num_seqs sequences at once: {max_num_seqs} < N* = {target_conc}, so the target cannot be met whatever the KV pool holds.",
        max_num_seqs=ctx.now.max_num_seqs,
        target_conc=ctx.target_conc,
    )


def _seqs_cost(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    if chosen is None:
        return ""
    b, a = ctx.now, ctx.engine.at(chosen)
    return Text(
        "Larger batches: more CUDA-graph capture sizes ({cuda_graph_bytes} → {cuda_graph_bytes2}) and more sampler rows in the profile run (activation peak {activation_peak_bytes} → {activation_peak_bytes2}).",
        cuda_graph_bytes=_gib(b.cuda_graph_bytes),
        cuda_graph_bytes2=_gib(a.cuda_graph_bytes),
        activation_peak_bytes=_gib(b.activation_peak_bytes),
        activation_peak_bytes2=_gib(a.activation_peak_bytes),
    )


def _seqs_lower_relevant(ctx: _Ctx) -> bool:
    return (
        _not_met(ctx)
        and ctx.now.max_num_seqs > ctx.target_conc
        and _frees_memory(ctx, _seqs_lower_candidates)
    )


def _seqs_lower_candidates(ctx: _Ctx) -> list[ServeConfig]:
    return [ctx.serve.model_copy(update={"max_num_seqs": ctx.target_conc})]


def _seqs_lower_effect(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    text = Text(
        "vLLM sizes the sampler's profile batch and the CUDA-graph capture sizes by max_num_seqs ({max_num_seqs}); N* = {target_conc} is all the target needs.",
        max_num_seqs=ctx.now.max_num_seqs,
        target_conc=ctx.target_conc,
    )
    if chosen is None:
        return text
    b, a = ctx.now, ctx.engine.at(chosen)
    freed = (b.activation_peak_bytes + b.cuda_graph_bytes) - (a.activation_peak_bytes + a.cuda_graph_bytes)
    return text + (
        Text(
            " Activation peak {activation_peak_bytes} → {activation_peak_bytes2}, CUDA graphs {cuda_graph_bytes} → {cuda_graph_bytes2} (frees {freed}).",
            activation_peak_bytes=_gib(b.activation_peak_bytes),
            activation_peak_bytes2=_gib(a.activation_peak_bytes),
            cuda_graph_bytes=_gib(b.cuda_graph_bytes),
            cuda_graph_bytes2=_gib(a.cuda_graph_bytes),
            freed=_gib(freed),
        )
    )


def _seqs_lower_cost(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    return Text(
        "No more than {target_conc} sequences run at once; the rest wait in the queue.",
        target_conc=ctx.target_conc,
    )


def _frees_memory(ctx: _Ctx, candidates: Callable[[_Ctx], list[ServeConfig]]) -> bool:
    """A side lever helps only if its strongest candidate leaves a larger KV pool."""
    options = candidates(ctx)
    if not options:
        return False
    try:
        return ctx.engine.at(options[-1]).kv_cache_bytes > ctx.now.kv_cache_bytes
    except PlannerError:
        return False


def _chunked_relevant(ctx: _Ctx) -> bool:
    return _not_met(ctx) and not _chunked_prefill_on(ctx)


def _chunked_candidates(ctx: _Ctx) -> list[ServeConfig]:
    update: dict[str, object] = {"enable_chunked_prefill": True}
    if (
        ctx.serve.max_num_batched_tokens is not None
        and ctx.serve.max_num_batched_tokens >= ctx.now.max_model_len
    ):
        update["max_num_batched_tokens"] = None  # let vLLM pick its chunked default
    return [ctx.serve.model_copy(update=update)]


def _activation_effect(ctx: _Ctx, chosen: ServeConfig | None, *, what: str) -> str:
    if chosen is None:
        return what
    b, a = ctx.now, ctx.engine.at(chosen)
    return Text(
        "{what} max_num_batched_tokens {max_num_batched_tokens:,} → {max_num_batched_tokens2:,}: activation peak {activation_peak_bytes} → {activation_peak_bytes2} (frees {activation_peak_bytes3} for KV).",
        what=what,
        max_num_batched_tokens=b.max_num_batched_tokens,
        max_num_batched_tokens2=a.max_num_batched_tokens,
        activation_peak_bytes=_gib(b.activation_peak_bytes),
        activation_peak_bytes2=_gib(a.activation_peak_bytes),
        activation_peak_bytes3=_gib(b.activation_peak_bytes - a.activation_peak_bytes),
    )


def _chunked_effect(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    return _activation_effect(
        ctx,
        chosen,
        what=Text(
            "Without chunked prefill a whole max_model_len prompt is one batch, so the profile run peaks at max_num_batched_tokens ≥ max_model_len. Chunking lowers"
        ),
    )


def _chunked_cost(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    return Text(
        "Long prompts are prefilled in chunks mixed with decodes: scheduling is more complex and the attention backend (and, on V0, every other enabled feature) must support it."
    )


def _mnbt_floor(ctx: _Ctx) -> int:
    floor = max(MIN_BATCHED_TOKENS, ctx.now.max_num_seqs)  # vLLM: max_num_batched_tokens >= max_num_seqs
    if not _chunked_prefill_on(ctx):
        floor = max(floor, ctx.now.max_model_len)  # without chunking a whole prompt is one batch
    return floor


def _mnbt_relevant(ctx: _Ctx) -> bool:
    return (
        _not_met(ctx)
        and ctx.now.max_num_batched_tokens > _mnbt_floor(ctx)
        and _frees_memory(ctx, _mnbt_candidates)
    )


def _mnbt_candidates(ctx: _Ctx) -> list[ServeConfig]:
    out = []
    value, floor = ctx.now.max_num_batched_tokens, _mnbt_floor(ctx)
    while value > floor:
        value = max(floor, value // 2)
        out.append(ctx.serve.model_copy(update={"max_num_batched_tokens": value}))
    return out


def _mnbt_effect(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    return _activation_effect(
        ctx,
        chosen,
        what=Text(
            "The profile run pushes max_num_batched_tokens through the model; fewer tokens, a lower peak:"
        ),
    )


def _mnbt_cost(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    return Text(
        "Fewer prompt tokens per step: prefill throughput drops and long prompts take longer to their first token."
    )


def _no_candidates(_ctx: _Ctx) -> list[ServeConfig]:
    return []


def _block_check(ctx: _Ctx) -> str:
    est = ctx.engine.at_len(ctx.serve, ctx.target_len)
    size = est.block_size
    blocks = -(-ctx.target_len // size)
    waste = blocks * size - ctx.target_len
    return Text(
        "Explanation only: each request of {target_len:,} tokens reserves {blocks:,} blocks of {size}; {waste} token slots of the last block stay unused ({waste2:.3%}).",
        target_len=ctx.target_len,
        blocks=blocks,
        size=size,
        waste=waste,
        waste2=waste / ctx.target_len,
    )


def _block_effect(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    return Text(
        "Block size trades internal fragmentation (about B / 2S of a sequence, plus coarser prefix-cache hits) against block-table and scheduling overhead; at long S it barely moves capacity."
    )


def _block_cost(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    return Text(
        "The attention backend restricts the value ({attention_backend} here); a value it rejects makes vLLM fall back to another backend or refuse to start.",
        attention_backend=ctx.now.attention_backend,
    )


def _prefix_check(ctx: _Ctx) -> str:
    on = ctx.serve.enable_prefix_caching
    if on is None:
        on = ctx.rules.engine == "v1"
    state = "on" if on else "off"
    return Text(
        "Explanation only (prefix caching is {state}): it adds no blocks, so vLLM's maximum concurrency at S* does not change; with a shared prompt prefix, full blocks are shared and real use stays below that worst case.",
        state=state,
    )


def _prefix_effect(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    return Text("Shared prefixes are computed and stored once, in whole blocks.")


def _prefix_cost(ctx: _Ctx, chosen: ServeConfig | None) -> str:
    return Text(
        "Only full blocks are cached, and LoRA ids, multimodal hashes or cache_salt in the block hash split otherwise equal prefixes."
    )


# --- the table ----------------------------------------------------------------------------------------

RULES: tuple[Rule, ...] = (
    Rule(
        "max_num_seqs",
        Text("Allow N* sequences (--max-num-seqs)"),
        ("max_num_seqs",),
        lambda _c: None,
        _seqs_candidates,
        _seqs_effect,
        _seqs_cost,
        search="always",
        side=True,
        relevant=_seqs_relevant,
    ),
    Rule(
        "max_model_len",
        Text("Set S to the target (--max-model-len)"),
        ("max_model_len",),
        _len_check,
        _len_candidates,
        _len_effect,
        _len_cost,
        search="always",
    ),
    Rule(
        "kv_cache_dtype",
        Text("Quantize the KV cache (--kv-cache-dtype)"),
        ("kv_cache_dtype",),
        _dtype_check,
        _dtype_candidates,
        _dtype_effect,
        _dtype_cost,
    ),
    Rule(
        "tensor_parallel_size",
        Text("Tensor parallelism (--tensor-parallel-size)"),
        ("tensor_parallel_size",),
        _tp_check,
        _tp_candidates,
        _tp_effect,
        _tp_cost,
    ),
    Rule(
        "pipeline_parallel_size",
        Text("Pipeline parallelism across nodes (--pipeline-parallel-size)"),
        ("pipeline_parallel_size",),
        _pp_check,
        _pp_candidates,
        _pp_effect,
        _pp_cost,
    ),
    Rule(
        "gpu_memory_utilization",
        Text("Raise the budget (--gpu-memory-utilization)"),
        ("gpu_memory_utilization",),
        _util_check,
        _util_candidates,
        _util_effect,
        _util_cost,
        search="monotone",
    ),
    Rule(
        "max_num_seqs",
        Text("Schedule no more than N* sequences (--max-num-seqs)"),
        ("max_num_seqs",),
        lambda _c: None,
        _seqs_lower_candidates,
        _seqs_lower_effect,
        _seqs_lower_cost,
        side=True,
        relevant=_seqs_lower_relevant,
    ),
    Rule(
        "enable_chunked_prefill",
        Text("Chunked prefill (--enable-chunked-prefill)"),
        ("enable_chunked_prefill", "max_num_batched_tokens"),
        lambda _c: None,
        _chunked_candidates,
        _chunked_effect,
        _chunked_cost,
        side=True,
        relevant=_chunked_relevant,
    ),
    Rule(
        "max_num_batched_tokens",
        Text("Smaller prefill batches (--max-num-batched-tokens)"),
        ("max_num_batched_tokens",),
        lambda _c: None,
        _mnbt_candidates,
        _mnbt_effect,
        _mnbt_cost,
        search="monotone",
        side=True,
        relevant=_mnbt_relevant,
    ),
    Rule(
        "offload",
        Text("CPU offload (--cpu-offload-gb, --swap-space / --kv-offloading-size)"),
        ("cpu_offload_gb",),
        _offload_check,
        _offload_candidates,
        _offload_effect,
        _offload_cost,
        search="monotone",
        must_meet=True,
    ),
    Rule(
        "block_size",
        Text("Block size (--block-size)"),
        ("block_size",),
        _block_check,
        _no_candidates,
        _block_effect,
        _block_cost,
        side=True,
        relevant=_not_met,
    ),
    Rule(
        "enable_prefix_caching",
        Text("Prefix caching (--enable-prefix-caching)"),
        ("enable_prefix_caching",),
        _prefix_check,
        _no_candidates,
        _prefix_effect,
        _prefix_cost,
        side=True,
        relevant=_not_met,
    ),
)


# --- the runner ---------------------------------------------------------------------------------------


@dataclass
class _Choice:
    chosen: ServeConfig | None
    tried: ServeConfig | None  # the best valid candidate, applied or not
    refusals: list[str]


def _valid(eng: _Engine, serve: ServeConfig, refusals: list[str]) -> bool:
    try:
        eng.at(serve)
        eng.at_len(serve, eng.target_len)
    except PlannerError as exc:
        refusals.append(Text("{field}: {message}", field=exc.field, message=exc.message))
        return False
    return True


def _choose(eng: _Engine, search: Search, candidates: Sequence[ServeConfig], current: ServeConfig) -> _Choice:
    refusals: list[str] = []
    valid = [c for c in candidates if _valid(eng, c, refusals)] if search != "monotone" else list(candidates)
    if search == "always":
        first = valid[0] if valid else None
        return _Choice(first, first, refusals)
    if search == "monotone":
        # strength grows along the list: binary-search the first that meets the target
        lo, hi = 0, len(valid)
        while lo < hi:
            mid = (lo + hi) // 2
            if _valid(eng, valid[mid], refusals) and eng.meets(valid[mid]):
                hi = mid
            else:
                lo = mid + 1
        if lo < len(valid):
            return _Choice(valid[lo], valid[lo], refusals)
        valid = [c for c in valid[-1:] if _valid(eng, c, refusals)]
    else:
        for c in valid:
            if eng.meets(c):
                return _Choice(c, c, refusals)
    if not valid:
        return _Choice(None, None, refusals)
    best = max(valid, key=eng.score)  # max keeps the first of equals: the weaker lever
    chosen = best if eng.score(best) > eng.score(current) else None
    return _Choice(chosen, best, refusals)


def _run_rule(rule: Rule, ctx: _Ctx) -> Step | None:
    eng = ctx.engine
    if rule.side and not rule.relevant(ctx):
        return None
    current = ctx.serve
    before = eng.snapshot(current)

    def skipped(reason: str, tried: ServeConfig | None = None) -> Step:
        return Step(
            key=rule.key,
            label=rule.label,
            applied=False,
            reason=reason,
            effect=rule.effect(ctx, tried),
            cost=rule.cost(ctx, tried),
            before=before,
            after=before,
            serve=current,
        )

    reason = rule.check(ctx)
    if reason is None and rule.search != "always" and before.meets_target:
        reason = Text("Not needed: the target is already met.")
    if reason is not None:
        return skipped(reason)
    choice = _choose(eng, rule.search, rule.candidates(ctx), current)
    if choice.chosen is not None and rule.must_meet and not eng.meets(choice.chosen):
        return skipped(
            Text(
                "Not applied: even {ctx} does not reach the target ({ctx2}), and this lever is only worth its cost when it does.",
                ctx=_changes(ctx, current, choice.chosen),
                ctx2=_progress(ctx, choice.chosen),
            ),
            choice.chosen,
        )
    if choice.chosen is None:
        if choice.tried is None:
            refused = TextList(SEMICOLON, choice.refusals) if choice.refusals else Text("no candidate")
            return skipped(Text("Not applied: vLLM would refuse it ({refused}).", refused=refused))
        return skipped(
            Text(
                "Not applied: {ctx} does not move toward the target ({ctx2}).",
                ctx=_changes(ctx, current, choice.tried),
                ctx2=_progress(ctx, choice.tried),
            ),
            choice.tried,
        )
    step = Step(
        key=rule.key,
        label=rule.label,
        applied=True,
        reason=Text(
            "{changes}: {progress}.",
            changes=_changes(ctx, current, choice.chosen),
            progress=_progress(ctx, choice.chosen),
        ),
        effect=rule.effect(ctx, choice.chosen),
        cost=rule.cost(ctx, choice.chosen),
        before=before,
        after=eng.snapshot(choice.chosen),
        serve=choice.chosen,
    )
    ctx.serve = choice.chosen
    return step


def recommend(
    *,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    vllm_version: str | None,
    target_max_model_len: int,
    target_concurrency: int,
    devices_per_node: int | None = None,
    nodes: int = 1,
    allow_fp8_kv: bool = True,
    preference: Preference = "throughput",
) -> Recommendation:
    """Walk :data:`RULES` in order from ``serve`` toward S* x N*; raises PlannerError for unusable input."""
    if target_max_model_len < 1:
        raise PlannerError("target_max_model_len", Text("must be at least 1 token"))
    if target_concurrency < 1:
        raise PlannerError("target_concurrency", Text("must be at least 1 sequence"))
    if nodes < 1:
        raise PlannerError("nodes", Text("must be at least 1"))
    per_node = devices_per_node if devices_per_node is not None else device.typical_node_devices
    if per_node < 1:
        raise PlannerError("devices_per_node", Text("must be at least 1"))
    eng = _Engine(
        model=model,
        device=device,
        vllm_version=vllm_version,
        target_len=target_max_model_len,
        target_conc=target_concurrency,
    )
    eng.at(serve)  # the starting point itself must be something vLLM accepts
    if serve.max_model_len is None:
        # the same configuration, with the model's own maximum written out so the command states it
        serve = serve.model_copy(update={"max_model_len": model.max_model_len_derived})
    ctx = _Ctx(
        engine=eng,
        serve=serve,
        devices_per_node=per_node,
        nodes=nodes,
        allow_fp8_kv=allow_fp8_kv,
        preference=preference,
    )
    steps = [step for rule in RULES if (step := _run_rule(rule, ctx)) is not None]
    steps = _prune(ctx, steps, start=serve)
    final = ctx.serve
    snap = eng.snapshot(final)
    best_n = math.floor(snap.concurrency_at_target_len)
    impossible = None
    if not snap.meets_target:
        impossible = Text(
            "{target_concurrency} sequences of {target_max_model_len:,} tokens do not fit on {per_node} × {name} ({nodes} node(s) of {per_node2}) with the steps allowed. Nearest reachable: {best_n} sequences at {target_max_model_len:,} tokens, or {largest_len_at_target_concurrency:,} tokens at {target_concurrency} sequences. Add nodes, use a device with more memory, or relax the target.",
            target_concurrency=target_concurrency,
            target_max_model_len=target_max_model_len,
            per_node=per_node * nodes,
            name=device.name,
            nodes=nodes,
            per_node2=per_node,
            best_n=best_n,
            largest_len_at_target_concurrency=snap.largest_len_at_target_concurrency,
        )
    warnings = []
    if target_max_model_len > model.max_model_len_derived:
        warnings.append(
            Text(
                "S* {target_max_model_len:,} is above {name}'s derived maximum {max_model_len_derived:,}; vLLM needs VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.",
                target_max_model_len=target_max_model_len,
                name=model.name,
                max_model_len_derived=model.max_model_len_derived,
            )
        )
    return Recommendation(
        target_max_model_len=target_max_model_len,
        target_concurrency=target_concurrency,
        preference=preference,
        steps=steps,
        final=final,
        meets_target=snap.meets_target,
        impossible_reason=impossible,
        best_len_at_target_concurrency=snap.largest_len_at_target_concurrency,
        best_concurrency_at_target_len=best_n,
        command=render_serve_command(model=model.name, serve=final, vllm_version=vllm_version),
        bisection=_bisect(eng, serve),
        warnings=warnings,
    )


# --- the prune pass -----------------------------------------------------------------------------------

# Levers whose cost is worth undoing once later steps meet the target, costliest first: offload slows
# every token, fp8 KV costs accuracy, each TP/PP rank is a device, a higher utilization risks an OOM, and
# smaller prefill batches cost prefill throughput. The rows that set the target itself (S, N) stay.
PRUNE_ORDER: tuple[str, ...] = (
    "offload",
    "kv_cache_dtype",
    "pipeline_parallel_size",
    "tensor_parallel_size",
    "gpu_memory_utilization",
    "max_num_batched_tokens",
    "enable_chunked_prefill",
)
RULE_FIELDS: dict[str, tuple[str, ...]] = {rule.key: rule.fields for rule in RULES}


def _prune(ctx: _Ctx, steps: list[Step], *, start: ServeConfig) -> list[Step]:
    """After the target is met, undo earlier applied steps that are no longer needed, costliest first.

    A step's flags go back to their value before it; it stays undone when the final configuration
    still meets the target (and vLLM accepts it). The step stays in the list, marked undone, with why.
    """
    eng = ctx.engine
    if not eng.meets(ctx.serve):
        return steps
    applied = [i for i, step in enumerate(steps) if step.applied]
    before_of = {i: (steps[applied[k - 1]].serve if k else start) for k, i in enumerate(applied)}
    rank = {key: n for n, key in enumerate(PRUNE_ORDER)}
    order = sorted((i for i in applied if steps[i].key in rank), key=lambda i: rank[steps[i].key])
    out = list(steps)
    for i in order:
        step = steps[i]
        later = [j for j in applied if j > i and not out[j].undone]
        if not later:
            continue  # the last applied step is the one that met the target
        fields = RULE_FIELDS[step.key]
        if any(set(fields) & set(RULE_FIELDS[out[j].key]) for j in later):
            continue  # a later step set the same flag: undoing this one would undo that one too
        reverted = ctx.serve.model_copy(update={f: getattr(before_of[i], f) for f in fields})
        if reverted == ctx.serve or not _valid(eng, reverted, []) or not eng.meets(reverted):
            continue
        once = TextList(COMMA, [_changes(ctx, before_of[j], out[j].serve) for j in later])
        out[i] = step.model_copy(
            update={
                "undone": True,
                "undone_reason": Text(
                    "Not needed once {later}: undone ({changes}); the target is still met.",
                    later=once,
                    changes=_changes(ctx, ctx.serve, reverted),
                ),
            }
        )
        ctx.serve = reverted
    return out


# --- bisection (seed, diagnosis step 4) ----------------------------------------------------------------


def _probe(
    eng: _Engine, name: Literal["as_given", "half_len", "one_seq"], serve: ServeConfig, demand: int
) -> BisectionProbe:
    est = eng.at(serve)
    return BisectionProbe(
        name=name,
        max_model_len=est.max_model_len,
        max_num_seqs=est.max_num_seqs,
        demand=demand,
        starts=est.fits,
        runs=eng.holds(est, demand),
        max_concurrency=est.max_concurrency,
        kv_tokens=est.kv_tokens,
        kv_cache_bytes=est.kv_cache_bytes,
        estimated_max_model_len=est.estimated_max_model_len or 0,
        error=est.error,
    )


def _bisect(eng: _Engine, serve: ServeConfig) -> Bisection:
    demand = eng.target_conc
    full = eng.at(serve)
    as_given = _probe(eng, "as_given", serve, demand)
    half = _probe(
        eng, "half_len", serve.model_copy(update={"max_model_len": max(1, full.max_model_len // 2)}), demand
    )
    one = _probe(eng, "one_seq", serve.model_copy(update={"max_num_seqs": 1}), 1)
    probes = [as_given, half, one]
    verdict: BisectionVerdict
    if as_given.runs:
        verdict, text = (
            "fits",
            (
                Text(
                    "It starts and holds {demand} sequence(s) of {max_model_len:,} tokens ({max_concurrency:.2f}x).",
                    demand=demand,
                    max_model_len=as_given.max_model_len,
                    max_concurrency=as_given.max_concurrency,
                )
            ),
        )
    elif half.runs:
        verdict, text = (
            "s_bound",
            (
                Text(
                    "With --max-model-len halved to {max_model_len:,} it runs ({max_concurrency:.2f}x ≥ {demand}): the single sequence is too long (S side). Lower max_model_len first.",
                    max_model_len=half.max_model_len,
                    max_concurrency=half.max_concurrency,
                    demand=demand,
                )
            ),
        )
    elif one.runs:
        verdict, text = (
            "n_bound",
            (
                Text(
                    "With one sequence (--max-num-seqs 1) it runs ({max_concurrency:.2f}x at {max_model_len:,} tokens): the concurrency is too high (N side).",
                    max_concurrency=one.max_concurrency,
                    max_model_len=one.max_model_len,
                )
            ),
        )
    else:
        verdict, text = (
            "budget_bound",
            (
                Text(
                    "Neither halving max_model_len nor a single sequence makes it run: the budget itself is short (KV pool {kv_cache_bytes}). Change the KV dtype, TP or gpu_memory_utilization.",
                    kv_cache_bytes=_gib(as_given.kv_cache_bytes),
                )
            ),
        )
    return Bisection(verdict=verdict, target_concurrency=demand, explanation=text, probes=probes)


def bisect(
    *,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    vllm_version: str | None,
    target_concurrency: int = 1,
) -> Bisection:
    """The seed's check: would it run with --max-model-len halved? with one sequence? neither?

    "Runs" means it starts and holds ``target_concurrency`` sequences of its max_model_len (one sequence
    for the --max-num-seqs 1 probe).
    """
    if target_concurrency < 1:
        raise PlannerError("target_concurrency", Text("must be at least 1 sequence"))
    eng = _Engine(
        model=model,
        device=device,
        vllm_version=vllm_version,
        target_len=serve.max_model_len or model.max_model_len_derived,
        target_conc=target_concurrency,
    )
    return _bisect(eng, serve)
