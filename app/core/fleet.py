"""Fleet sizing: a target load and SLO in, the cheapest layouts and how many devices out.

For one model, device and vLLM release the search walks a bounded grid of replica layouts —
tensor parallel (powers of two within a node), pipeline parallel across nodes (only when the node
size is given), weight quantization and KV dtype the device supports, ``max_num_seqs`` — and for
each layout that *starts* (the exact memory model: :func:`app.core.estimate.estimate` without error)
finds the per-replica concurrency where the performance model's *expected* TTFT and TPOT meet the
SLO with the most requests/s. Replicas = ceil(load / requests/s per replica); candidates rank by cost
(devices × price per device-hour).

How the band is used: ``meets_slo`` compares the expected values with the SLO (the operating point is
chosen on them); ``meets_slo_with_margin`` says whether the band's *high* side meets it too.

Bound on the work, per call: at most MAX_LAYOUTS layouts (TP x PP x weight format x KV dtype), each
with at most two memory estimates (``max_num_seqs`` as given, then lowered to the operating point)
and, per estimate, at most CONCURRENCY_PROBES performance points (a bisection over 1..min(max_num_seqs,
KV cliff - 1, MAX_CONCURRENCY_PER_REPLICA)). bench/fleet_speed.py prints the time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.core.command import render_serve_command
from app.core.errors import PlannerError
from app.core.estimate import estimate
from app.core.pareto import ParetoPoint, frontier, slo_tokens_per_s_per_user
from app.core.perf.cluster import ClusterFit
from app.core.perf.cost import device_hours_per_million_output_tokens
from app.core.perf.physics import weight_format
from app.core.perf.predict import Performance, performance, validate_workload
from app.core.perf.schedule import Workload
from app.core.plan import apply_quantization_flag
from app.core.recommend.engine import Context, Engine
from app.core.recommend.kv_dtype import dtype_candidates, dtype_check, dtype_cost
from app.core.result import Estimate, Range
from app.core.serve_flags import check_release_has_flags
from app.core.specs import DeviceSpec, ModelSpec, ServeConfig
from app.core.text import Msg, Text

Binding = Literal["kv_pool", "max_num_seqs", "compute", "slo"]

MAX_CONCURRENCY_PER_REPLICA = (
    1024  # closed-loop clients per replica searched (vLLM's largest default max_num_seqs)
)
MAX_PIPELINE_STAGES = 8  # PP across at most 8 nodes
MAX_TP_CHOICES = 5  # 1, 2, 4, 8, 16: the largest node (16 devices on some Ascend / GB200 boards)
MAX_WEIGHT_FORMATS = 3  # the checkpoint's own, fp8, int4 (nvfp4 on Blackwell instead of int4)
MAX_KV_DTYPES = 2  # the model's dtype and one byte per element
MAX_LAYOUTS = (MAX_TP_CHOICES + MAX_PIPELINE_STAGES.bit_length() - 1) * MAX_WEIGHT_FORMATS * MAX_KV_DTYPES
ESTIMATES_PER_LAYOUT = 2
CONCURRENCY_PROBES = 2 * MAX_CONCURRENCY_PER_REPLICA.bit_length() + 2  # doubling, then bisection
MAX_DEVICES_TOTAL = 100_000
# A doubling of clients that adds less than this share of requests/s: the replica is saturated (compute binds).
SATURATION_GAIN = 0.05
FP8_WEIGHTS_MIN_SM = 89  # fp8 tensor cores: Ada (8.9) and Hopper (9.0) onwards
INT4_WEIGHTS_MIN_SM = 80  # the Marlin int4 kernels need Ampere (8.0) or later
NVFP4_WEIGHTS_MIN_SM = 100  # FP4 tensor cores: Blackwell


class Limits(BaseModel):
    """What the team allows: no quantized KV cache, no quantized weights, the node size (devices)."""

    model_config = ConfigDict(frozen=True)

    no_fp8_kv: bool = False
    no_quantized_weights: bool = False
    devices_per_node: int | None = Field(default=None, ge=1, le=64)


class Target(BaseModel):
    """The load and the SLO: closed-loop requests of ``input_tokens`` in and ``output_tokens`` out."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = Field(ge=1, le=10_000_000)
    output_tokens: int = Field(ge=1, le=10_000_000)
    requests_per_s: float = Field(gt=0, le=1_000_000)
    slo_ttft_ms: float = Field(gt=0, le=1e9)
    slo_tpot_ms: float = Field(gt=0, le=1e9)
    devices_available: int = Field(ge=1, le=MAX_DEVICES_TOTAL)
    price_per_device_hour: float = Field(ge=0, le=1e6)
    cluster: ClusterFit | None = None  # your measured runs' factors (every speed figure scaled by them)


class Candidate(BaseModel):
    """One replica layout at its operating point, and the fleet of replicas serving the load."""

    model_config = ConfigDict(frozen=True)

    serve: ServeConfig  # the replica's flags (quantization and max_num_seqs included)
    command: str
    tensor_parallel_size: int
    pipeline_parallel_size: int
    quantization: str | None  # the weight format added by --quantization (None: the checkpoint's own)
    weight_format: str  # what the weights are stored as (the checkpoint's own or the added one)
    kv_cache_dtype: str
    max_num_seqs: int
    replicas: int
    devices_per_replica: int
    devices_total: int
    concurrency_per_replica: int
    requests_per_s_per_replica: float
    capacity_requests_per_s: float  # replicas x per-replica requests/s
    ttft_ms: Range  # at the operating point, with its band (Performance's)
    tpot_ms: Range
    regime: str = ""  # what binds the speed at the operating point (Performance.regime)
    meets_slo: bool  # expected TTFT and TPOT within the SLO
    meets_slo_with_margin: bool  # the high band within the SLO too
    cost_per_hour: float
    cost_per_million_output_tokens: float
    headroom: float  # capacity / load - 1
    binding: Binding
    binding_reason: Msg
    kv_cache_bytes: int  # per device
    weights_bytes: int  # per device
    kv_limited_from_concurrency: int | None
    basis: str
    accuracy_costs: list[Msg] = Field(default_factory=list)
    within_devices_available: bool = True


class LoadPoint(BaseModel):
    """The best layout at the load asked rather than at its operating point: each replica's share of the load
    and the latencies there. A replica sized at its busiest point within the SLO (``concurrency_per_replica``
    clients, ``requests_per_s_per_replica``) carries only ``load ÷ replicas`` requests/s, which the fewest
    closed-loop clients whose requests/s reach it send (the performance model is a closed loop; by Little's law
    c clients at c ÷ E2E requests/s hold the same c requests in flight as that load)."""

    model_config = ConfigDict(frozen=True)

    requests_per_s_per_replica: float  # the load asked ÷ replicas
    concurrency: int  # the fewest clients a replica needs to serve that share
    ttft_ms: Range
    tpot_ms: Range


class FleetPlan(BaseModel):
    model_config = ConfigDict(frozen=True)

    candidates: list[Candidate]  # ranked: meeting the SLO first, then by cost
    best: Candidate | None
    best_meets_slo: bool
    best_at_load: LoadPoint | None = None  # the best layout's latencies at the load asked
    why_none: Msg | None  # when no candidate meets the SLO within the devices available
    notes: list[Msg] = Field(default_factory=list)
    layouts_tried: int
    layouts_started: int
    # output tokens/s per device against tokens/s per user over every (layout, clients) the search
    # evaluated: the non-dominated points (app/core/pareto.py), and the SLO's per-user speed
    pareto: list[ParetoPoint] = Field(default_factory=list)
    pareto_slo_tokens_per_s_per_user: float = 0.0


@dataclass(frozen=True)
class Layout:
    tensor_parallel_size: int
    pipeline_parallel_size: int
    quantization: str | None
    kv_cache_dtype: str

    @property
    def devices(self) -> int:
        return self.tensor_parallel_size * self.pipeline_parallel_size


# --- the grid ------------------------------------------------------------------------------------------


def tp_choices(*, devices_per_node: int) -> list[int]:
    """Powers of two that fit one node (TP groups stay inside a node's fast interconnect)."""
    return [2**k for k in range(MAX_TP_CHOICES) if 2**k <= devices_per_node]


def parallel_choices(
    *, devices_per_node: int, across_nodes: bool, devices_available: int
) -> list[tuple[int, int]]:
    """(TP, PP) pairs: TP within a node; PP 2, 4, 8 across whole nodes when the node size is given."""
    pairs = [(tp, 1) for tp in tp_choices(devices_per_node=devices_per_node) if tp <= devices_available]
    if across_nodes:
        tp = tp_choices(devices_per_node=devices_per_node)[-1]
        stages = 2
        while stages <= MAX_PIPELINE_STAGES and tp * stages <= devices_available:
            pairs.append((tp, stages))
            stages *= 2
    return pairs


def weight_formats(*, model: ModelSpec, device: DeviceSpec, limits: Limits) -> list[str | None]:
    """None (the checkpoint as it is) plus the --quantization formats the device runs natively."""
    if model.quantization is not None or limits.no_quantized_weights:
        return [None]
    sm = device.sm or 0
    formats: list[str | None] = [None]
    if (device.platform == "cuda" and sm >= FP8_WEIGHTS_MIN_SM) or device.platform == "rocm":
        formats.append("fp8")
    if device.platform == "cuda" and sm >= NVFP4_WEIGHTS_MIN_SM:
        formats.append("nvfp4")
    elif device.platform == "cuda" and sm >= INT4_WEIGHTS_MIN_SM:
        formats.append("int4")
    return formats[:MAX_WEIGHT_FORMATS]


def _kv_context(
    *, model: ModelSpec, device: DeviceSpec, serve: ServeConfig, vllm_version: str | None, limits: Limits
) -> Context:
    """The recommender's view of this configuration, so its KV-dtype rule and sentences are reused."""
    engine = Engine(model=model, device=device, vllm_version=vllm_version, target_len=1, target_conc=1)
    return Context(
        engine=engine,
        serve=serve,
        devices_per_node=limits.devices_per_node or device.typical_node_devices,
        nodes=1,
        allow_fp8_kv=not limits.no_fp8_kv,
        preference="throughput",
    )


def kv_dtypes(
    *, model: ModelSpec, device: DeviceSpec, serve: ServeConfig, vllm_version: str | None, limits: Limits
) -> list[str]:
    """The configured KV dtype, plus the recommender's one-byte dtype when its rule allows it here."""
    ctx = _kv_context(model=model, device=device, serve=serve, vllm_version=vllm_version, limits=limits)
    options: list[str] = [serve.kv_cache_dtype]
    if dtype_check(ctx) is None:
        options.extend(c.kv_cache_dtype for c in dtype_candidates(ctx) if c.kv_cache_dtype not in options)
    return options[:MAX_KV_DTYPES]


# --- one layout ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OperatingPoint:
    concurrency: int
    perf: Performance
    meets_slo: bool
    binding: Binding
    binding_reason: str
    probes: tuple[tuple[int, Performance], ...] = ()  # every client count evaluated, ascending


def _meets(perf: Performance, target: Target) -> bool:
    return perf.ttft_ms.expected <= target.slo_ttft_ms and perf.tpot_ms.expected <= target.slo_tpot_ms


def _performance_at(
    *, est: Estimate, model: ModelSpec, device: DeviceSpec, serve: ServeConfig, target: Target, clients: int
) -> Performance:
    """The performance model at ``clients`` closed-loop clients of the target's request."""
    return performance(
        estimate=est,
        model=model,
        device=device,
        serve=serve,
        workload=Workload(
            input_tokens=target.input_tokens, output_tokens=target.output_tokens, concurrency=clients
        ),
        with_curve=False,
        cluster=target.cluster,
    )


def operating_point(
    *, est: Estimate, model: ModelSpec, device: DeviceSpec, serve: ServeConfig, target: Target
) -> OperatingPoint:
    """The concurrency with the most requests/s whose expected TTFT and TPOT meet the SLO.

    Latency grows with the clients, so the largest concurrency meeting the SLO is found by doubling,
    then bisection, at most CONCURRENCY_PROBES performance points. The search stays below the KV
    cliff (past it vLLM preempts, which the performance model does not add) and at ``max_num_seqs``.
    """
    cache: dict[int, Performance] = {}

    def at(c: int) -> Performance:
        if c not in cache:
            cache[c] = _performance_at(
                est=est, model=model, device=device, serve=serve, target=target, clients=c
            )
        return cache[c]

    first = at(1)
    cliff = first.kv_limited_from_concurrency
    upper = min(est.max_num_seqs, MAX_CONCURRENCY_PER_REPLICA)
    if cliff is not None:
        upper = min(upper, max(1, cliff - 1))
    if not _meets(first, target):
        over = Text("TTFT") if first.ttft_ms.expected > target.slo_ttft_ms else Text("TPOT")
        return OperatingPoint(
            1,
            first,
            False,
            "slo",
            Text(
                "even one request at a time misses the {metric} SLO: expected TTFT {ttft:,.0f} ms, TPOT {tpot:.1f} ms",
                metric=over,
                ttft=first.ttft_ms.expected,
                tpot=first.tpot_ms.expected,
            ),
            ((1, first),),
        )
    lo, hi = 1, upper + 1  # lo meets; hi does not (or is past the search's end)
    probe = 2
    while probe <= upper and _meets(at(probe), target):
        lo, probe = probe, probe * 2
    hi = min(probe, upper + 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _meets(at(mid), target):
            lo = mid
        else:
            hi = mid
    best = at(lo)
    half = at(max(1, lo // 2))
    saturated = lo > 1 and best.requests_per_s.expected < (1 + SATURATION_GAIN) * half.requests_per_s.expected
    binding: Binding
    if lo < upper:
        nxt = at(lo + 1)
        metric = Text("TTFT") if nxt.ttft_ms.expected > target.slo_ttft_ms else Text("TPOT")
        if saturated:
            binding = "compute"
            reason = Text(
                "compute: doubling the clients from {half} to {c} adds under 5 % requests/s, and {next} clients miss the {metric} SLO",
                half=max(1, lo // 2),
                c=lo,
                next=lo + 1,
                metric=metric,
            )
        else:
            binding = "slo"
            reason = Text(
                "the {metric} SLO: {next} clients per replica would miss it", metric=metric, next=lo + 1
            )
    elif cliff is not None and upper == cliff - 1:
        binding = "kv_pool"
        reason = Text(
            "the KV pool: from {cliff} clients the pool cannot hold every request at full length (vLLM preempts)",
            cliff=cliff,
        )
    elif upper == est.max_num_seqs:
        binding = "max_num_seqs"
        reason = Text(
            "max_num_seqs ({max_num_seqs}) caps the running batch; more clients would only queue",
            max_num_seqs=est.max_num_seqs,
        )
    else:
        binding = "compute"
        reason = Text("the search's end: {c} clients per replica still meet the SLO", c=lo)
    return OperatingPoint(lo, best, True, binding, reason, tuple(sorted(cache.items())))


@dataclass(frozen=True)
class Evaluated:
    layout: Layout
    serve: ServeConfig
    model: ModelSpec
    est: Estimate
    point: OperatingPoint


@dataclass(frozen=True)
class _Search:
    """What every layout of one search shares."""

    model: ModelSpec  # the checkpoint as published (the layout adds its weight format)
    device: DeviceSpec
    serve: ServeConfig  # the flags not searched; quantization None, data parallel 1
    vllm_version: str | None
    target: Target
    limits: Limits
    model_label: str  # what the commands name


def _evaluate(search: _Search, layout: Layout) -> Evaluated | None:
    """The layout's best operating point: ``max_num_seqs`` as given, then lowered to the operating
    concurrency (which frees the CUDA-graph and sampler memory sized by it) when that serves more."""
    device, vllm_version, target = search.device, search.vllm_version, search.target
    model = apply_quantization_flag(search.model, layout.quantization)
    serve = search.serve.model_copy(
        update={
            "tensor_parallel_size": layout.tensor_parallel_size,
            "pipeline_parallel_size": layout.pipeline_parallel_size,
            "quantization": layout.quantization,
            "kv_cache_dtype": layout.kv_cache_dtype,
            "data_parallel_size": 1,
        }
    )
    found: Evaluated | None = None
    for _ in range(ESTIMATES_PER_LAYOUT):
        try:
            est = estimate(model=model, device=device, serve=serve, vllm_version=vllm_version, working=False)
        except PlannerError:
            return found  # vLLM refuses the layout (TP does not divide the heads, …)
        if not est.fits or est.num_gpu_blocks <= 0:
            return found
        try:
            point = operating_point(est=est, model=model, device=device, serve=serve, target=target)
        except PlannerError:
            return found  # input + output exceed max_model_len
        here = Evaluated(layout, serve, model, est, point)
        if found is None or (
            point.meets_slo and point.perf.requests_per_s.expected > found.point.perf.requests_per_s.expected
        ):
            found = here
        if (
            search.serve.max_num_seqs is not None
            or point.concurrency >= est.max_num_seqs
            or not point.meets_slo
        ):
            return found
        serve = serve.model_copy(update={"max_num_seqs": point.concurrency})
    return found


def load_point(ev: Evaluated, *, device: DeviceSpec, target: Target, replicas: int) -> LoadPoint:
    """The layout at the load asked: the fewest clients c (1 .. the operating point's) whose expected
    requests/s reach load ÷ replicas, found by bisection (requests/s grow with the clients up to the operating
    point, which reaches the share since replicas = ⌈load ÷ its requests/s⌉), reusing the search's probes.

    E.g. Llama-3.1-8B on one H100 at 0.1 requests/s of 2,048 + 256 tokens: the replica is sized at 217 clients
    (21.2 requests/s) but carries 0.1 requests/s, which one client already sends (alone a request takes
    TTFT 54 ms + 255 x TPOT 3.9 ms = 1.04 s, 0.96 requests/s): its latencies are one client's."""
    share = target.requests_per_s / replicas
    known = dict(ev.point.probes)

    def at(c: int) -> Performance:
        if c not in known:
            known[c] = _performance_at(
                est=ev.est, model=ev.model, device=device, serve=ev.serve, target=target, clients=c
            )
        return known[c]

    low, high = 0, ev.point.concurrency  # low sends too little (0 clients: nothing), high enough
    while high - low > 1:
        middle = (low + high) // 2
        if at(middle).requests_per_s.expected >= share:
            high = middle
        else:
            low = middle
    perf = at(high)
    return LoadPoint(
        requests_per_s_per_replica=share, concurrency=high, ttft_ms=perf.ttft_ms, tpot_ms=perf.tpot_ms
    )


def _accuracy_costs(search: _Search, ev: Evaluated) -> list[str]:
    """The accuracy price of the layout, in the recommender's words for the KV dtype."""
    costs: list[str] = []
    serve = ev.serve
    if serve.kv_cache_dtype != search.serve.kv_cache_dtype:
        ctx = _kv_context(
            model=ev.model,
            device=search.device,
            serve=serve,
            vllm_version=search.vllm_version,
            limits=search.limits,
        )
        costs.append(dtype_cost(ctx, None))
    if serve.quantization:
        costs.append(
            Text(
                "Quantized weights ({quantization}): quantization error in every layer — check accuracy on your own evaluation set. Only fp8 quantizes a bf16 checkpoint at load time; other formats need a checkpoint already quantized to that format.",
                quantization=serve.quantization,
            )
        )
    return costs


def _speed_fields(perf: Performance) -> dict[str, Range | str]:
    """The speed columns a candidate and a frontier point both carry: each latency with its band (a
    Range, as every speed figure) and the regime that binds it."""
    return {"ttft_ms": perf.ttft_ms, "tpot_ms": perf.tpot_ms, "regime": perf.regime}


def _candidate(search: _Search, ev: Evaluated) -> Candidate:
    target = search.target
    perf = ev.point.perf
    per_replica = perf.requests_per_s.expected
    replicas = replicas_for(target.requests_per_s, per_replica)
    devices_total = replicas * ev.layout.devices
    cost = devices_total * target.price_per_device_hour
    capacity = replicas * per_replica
    return Candidate(
        serve=ev.serve,
        command=render_serve_command(
            model=search.model_label, serve=ev.serve, vllm_version=search.vllm_version
        ),
        tensor_parallel_size=ev.layout.tensor_parallel_size,
        pipeline_parallel_size=ev.layout.pipeline_parallel_size,
        quantization=ev.layout.quantization,
        weight_format=weight_format(ev.model).value,
        kv_cache_dtype=ev.layout.kv_cache_dtype,
        max_num_seqs=ev.est.max_num_seqs,
        replicas=replicas,
        devices_per_replica=ev.layout.devices,
        devices_total=devices_total,
        concurrency_per_replica=ev.point.concurrency,
        requests_per_s_per_replica=per_replica,
        capacity_requests_per_s=capacity,
        **_speed_fields(perf),
        meets_slo=ev.point.meets_slo,
        meets_slo_with_margin=perf.ttft_ms.high <= target.slo_ttft_ms
        and perf.tpot_ms.high <= target.slo_tpot_ms,
        cost_per_hour=cost,
        cost_per_million_output_tokens=target.price_per_device_hour
        * device_hours_per_million_output_tokens(
            devices=devices_total, output_tokens_per_s=target.requests_per_s * target.output_tokens
        ),
        headroom=capacity / target.requests_per_s - 1,
        binding=ev.point.binding,
        binding_reason=ev.point.binding_reason,
        kv_cache_bytes=ev.est.kv_cache_bytes,
        weights_bytes=ev.est.weights_bytes,
        kv_limited_from_concurrency=perf.kv_limited_from_concurrency,
        basis=perf.basis,
        accuracy_costs=_accuracy_costs(search, ev),
        within_devices_available=devices_total <= target.devices_available,
    )


def rank_key(c: Candidate) -> tuple[bool, bool, float, int, bool, int, float]:
    """Meeting the SLO within the devices first, then the cheapest (fewest devices), the margin, the fewest accuracy
    costs (quantized weights, a quantized KV cache: at the same price and margin the checkpoint's own formats win,
    rather than a quantization that buys only a lower TPOT), TPOT."""
    return (
        not (c.meets_slo and c.within_devices_available),
        not c.within_devices_available,
        c.cost_per_hour,
        c.devices_total,
        not c.meets_slo_with_margin,
        len(c.accuracy_costs),
        c.tpot_ms.expected,
    )


def _layouts(
    *,
    pairs: list[tuple[int, int]],
    weight_choices: list[str | None],
    kv_choices: list[str],
) -> list[Layout]:
    """The searched grid, TP x PP outermost, cut at MAX_LAYOUTS (the bound the module docstring states)."""
    return [Layout(tp, pp, quant, kv) for tp, pp in pairs for quant in weight_choices for kv in kv_choices][
        :MAX_LAYOUTS
    ]


def _search_notes(
    *,
    candidates: list[Candidate],
    layouts_tried: int,
    target: Target,
    tp_only_within_node: bool,
    node_devices: int,
) -> list[str]:
    """What the search left out and why: over the devices available, did not start, PP not searched."""
    notes: list[str] = []
    over = sum(1 for c in candidates if not c.within_devices_available)
    if over:
        notes.append(
            Text(
                "{count} of {total} layouts would need more than the {available} devices available.",
                count=over,
                total=len(candidates),
                available=target.devices_available,
            )
        )
    if len(candidates) < layouts_tried:
        notes.append(
            Text(
                "{count} of {total} layouts do not start (memory, or vLLM refuses the parallel layout) or cannot hold one request of {tokens:,} tokens.",
                count=layouts_tried - len(candidates),
                total=layouts_tried,
                tokens=target.input_tokens + target.output_tokens,
            )
        )
    if tp_only_within_node:
        notes.append(
            Text(
                "Pipeline parallel across nodes is searched only when devices per node is given; TP stays within one node of {node} devices.",
                node=node_devices,
            )
        )
    return notes


def _pick_best(candidates: list[Candidate], *, target: Target) -> tuple[Candidate | None, bool, str | None]:
    """The cheapest candidate meeting the SLO within the devices; else the nearest miss and why.

    Returns (best, whether it meets the SLO, why none does). ``candidates`` are sorted by ``rank_key``.
    """
    meeting = [c for c in candidates if c.meets_slo and c.within_devices_available]
    if meeting:
        return meeting[0], True, None
    if not candidates:
        return (
            None,
            False,
            Text(
                "No layout starts on this device: the model does not fit even at the largest TP within a node."
            ),
        )
    best = min(
        candidates,
        key=lambda c: (
            c.meets_slo is False,
            not c.within_devices_available,
            _miss(c, target),
            c.devices_total,
        ),
    )
    return best, False, _why_none(best, target)


def request_len_limit(*, model: ModelSpec, serve: ServeConfig) -> int:
    """The longest request (input + output tokens) every layout of the search serves: the
    --max-model-len given, else the model's derived maximum."""
    return serve.max_model_len or model.max_model_len_derived


def plan_fleet(
    *,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    vllm_version: str | None,
    target: Target,
    limits: Limits | None = None,
    model_label: str | None = None,
    quantization: str | None = None,
) -> FleetPlan:
    """Every layout that starts, sized for the load, ranked by cost; ``best`` meets the SLO if any does.

    ``model`` is the checkpoint as published (without a --quantization flag applied): the search adds
    the formats itself, or only ``quantization`` when one is given (the user fixed the format). ``serve`` holds the flags that are not searched (max_model_len, utilization…).
    """
    limits = limits or Limits()
    # each layout's estimate refuses a flag the release lacks, and a refused layout is dropped: refuse it here,
    # naming the field, rather than answer "no layout starts"
    check_release_has_flags(serve, vllm_version)
    # vLLM rejects a request longer than max_model_len: the one length rule of the performance model
    validate_workload(
        Workload(input_tokens=target.input_tokens, output_tokens=target.output_tokens, concurrency=1),
        max_model_len=request_len_limit(model=model, serve=serve),
    )
    node = limits.devices_per_node or device.typical_node_devices
    pairs = parallel_choices(
        devices_per_node=node,
        across_nodes=limits.devices_per_node is not None,
        devices_available=target.devices_available,
    )
    base = serve.model_copy(update={"quantization": None, "data_parallel_size": 1})
    layouts = _layouts(
        pairs=pairs,
        weight_choices=(
            [quantization] if quantization else weight_formats(model=model, device=device, limits=limits)
        ),
        kv_choices=kv_dtypes(
            model=model, device=device, serve=base, vllm_version=vllm_version, limits=limits
        ),
    )
    label = model_label or model.name
    search = _Search(model, device, base, vllm_version, target, limits, label)
    evaluated = [ev for layout in layouts if (ev := _evaluate(search, layout)) is not None]
    ranked = sorted(((_candidate(search, ev), ev) for ev in evaluated), key=lambda pair: rank_key(pair[0]))
    candidates = [candidate for candidate, _ in ranked]
    best, meets, why = _pick_best(candidates, target=target)
    best_ev = next((ev for candidate, ev in ranked if candidate is best), None)
    return FleetPlan(
        candidates=candidates,
        best=best,
        best_meets_slo=meets,
        best_at_load=None
        if best is None or best_ev is None
        else load_point(best_ev, device=device, target=target, replicas=best.replicas),
        why_none=why,
        notes=_search_notes(
            candidates=candidates,
            layouts_tried=len(layouts),
            target=target,
            # without a node size the grid is TP-only (parallel_choices), so PP was not searched
            tp_only_within_node=bool(pairs) and limits.devices_per_node is None,
            node_devices=node,
        ),
        layouts_tried=len(layouts),
        layouts_started=len(candidates),
        pareto=pareto_points(evaluated, target=target, vllm_version=vllm_version, model_label=label),
        pareto_slo_tokens_per_s_per_user=slo_tokens_per_s_per_user(target.slo_tpot_ms),
    )


def _pareto_point(ev: Evaluated, clients: int, perf: Performance, *, target: Target) -> ParetoPoint:
    layout = ev.layout
    weights = weight_format(ev.model).value
    return ParetoPoint(
        tokens_per_s_per_device=perf.output_tokens_per_s.expected / layout.devices,
        tokens_per_s_per_user=perf.per_user_tokens_per_s.expected,
        layout=(
            f"TP {layout.tensor_parallel_size} × PP {layout.pipeline_parallel_size}, "
            f"weights {weights}, KV {layout.kv_cache_dtype}"
        ),
        tensor_parallel_size=layout.tensor_parallel_size,
        pipeline_parallel_size=layout.pipeline_parallel_size,
        data_parallel_size=ev.serve.data_parallel_size,
        devices_per_replica=layout.devices,
        quantization=layout.quantization,
        weight_format=weights,
        kv_cache_dtype=layout.kv_cache_dtype,
        concurrency=clients,
        **_speed_fields(perf),
        meets_slo=_meets(perf, target),
        serve=ev.serve,
        command="",
    )


def pareto_points(
    evaluated: list[Evaluated], *, target: Target, vllm_version: str | None, model_label: str
) -> list[ParetoPoint]:
    """The frontier over every client count each started layout was probed at (no new performance
    call); the command is rendered for the frontier's points only."""
    kept = frontier(
        [
            _pareto_point(ev, clients, perf, target=target)
            for ev in evaluated
            for clients, perf in ev.point.probes
        ]
    )
    return [
        p.model_copy(
            update={
                "command": render_serve_command(model=model_label, serve=p.serve, vllm_version=vllm_version)
            }
        )
        for p in kept
    ]


def _miss(c: Candidate, target: Target) -> float:
    return max(0.0, c.ttft_ms.expected / target.slo_ttft_ms - 1, c.tpot_ms.expected / target.slo_tpot_ms - 1)


def _why_none(best: Candidate, target: Target) -> str:
    if best.meets_slo and not best.within_devices_available:
        return Text(
            "Every layout that meets the SLO needs more devices than the {available} available: the closest needs {devices}.",
            available=target.devices_available,
            devices=best.devices_total,
        )
    return Text(
        "No layout meets the SLO (TTFT ≤ {ttft:,.0f} ms, TPOT ≤ {tpot:.1f} ms): the closest, one request at a time, has TTFT {c_ttft:,.0f} ms and TPOT {c_tpot:.1f} ms.",
        ttft=target.slo_ttft_ms,
        tpot=target.slo_tpot_ms,
        c_ttft=best.ttft_ms.expected,
        c_tpot=best.tpot_ms.expected,
    )


def cost_at_load(candidate: Candidate, *, requests_per_s: float, price_per_device_hour: float) -> float:
    """Cost per hour of this layout sized for another load (same operating point, more or fewer replicas)."""
    return (
        replicas_for(requests_per_s, candidate.requests_per_s_per_replica)
        * candidate.devices_per_replica
        * price_per_device_hour
    )


def replicas_for(load: float, per_replica: float) -> int:
    """ceil(load / per_replica), never under the load after float rounding."""
    replicas = max(1, math.ceil(load / per_replica))
    while replicas * per_replica < load:
        replicas += 1
    return replicas
