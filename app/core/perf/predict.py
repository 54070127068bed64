"""`performance()`: TTFT, TPOT and throughput with bands for one planner configuration and workload."""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.core.errors import PlannerError
from app.core.perf.physics import Coefficients, StepPhysics, step_physics
from app.core.perf.schedule import Point, Workload, point_at, requests_in_pool
from app.core.result import Estimate, Range
from app.core.specs import DeviceSpec, ModelSpec, ServeConfig
from app.core.text import Msg, Text

COEFFICIENTS_FILE = Path(__file__).with_name("coefficients.json")
MS_PER_S = 1000.0
CURVE_CONCURRENCIES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
SIZE_SPAN_FACTOR = 2.0  # active parameters within 2x of the fitted models' range count as calibrated
# Bands outside the fitted data: log-width multipliers (said plainly in the notes)
WIDEN_OTHER_NVIDIA = 2.0
WIDEN_OTHER_VENDOR = 3.0
WIDEN_OUTSIDE_FIT = 1.5
KV_LIMITED_BAND_WIDEN = 1.5  # queueing past the cliff is sensitive to every length: wider high side
MAX_WORKLOAD_TOKENS = 10_000_000
MAX_CONCURRENCY = 65_536

Basis = Literal["calibrated", "extrapolated"]


class FamilyFit(BaseModel):
    """One device family's coefficients as stored in coefficients.json by bench/fit_perf.py."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    bandwidth_efficiency: float
    compute_efficiency: float
    moe_compute_efficiency: float
    step_overhead_s: float
    layer_overhead_s: float
    moe_layer_overhead_s: float
    collective_latency_s: float
    link_efficiency: float = 1.0
    token_overhead_s: float = 0.0
    exchange_efficiency: float = 1.0
    prefill_queue_factor: float
    ttft_overhead_s: float
    # log(measured / predicted) quantiles on the fitted runs: the band around each prediction
    tpot_log_p10: float
    tpot_log_p90: float
    ttft_log_p10: float
    ttft_log_p90: float
    throughput_log_p10: float
    throughput_log_p90: float
    active_params_min: int
    active_params_max: int
    weight_formats: tuple[str, ...]
    devices: tuple[str, ...]

    def coefficients(self) -> Coefficients:
        return Coefficients(
            bandwidth_efficiency=self.bandwidth_efficiency,
            compute_efficiency=self.compute_efficiency,
            moe_compute_efficiency=self.moe_compute_efficiency,
            step_overhead_s=self.step_overhead_s,
            layer_overhead_s=self.layer_overhead_s,
            moe_layer_overhead_s=self.moe_layer_overhead_s,
            collective_latency_s=self.collective_latency_s,
            link_efficiency=self.link_efficiency,
            token_overhead_s=self.token_overhead_s,
            exchange_efficiency=self.exchange_efficiency,
            prefill_queue_factor=self.prefill_queue_factor,
            ttft_overhead_s=self.ttft_overhead_s,
        )


@cache
def fitted_families() -> dict[str, FamilyFit]:
    raw = json.loads(COEFFICIENTS_FILE.read_text(encoding="utf-8"))
    return {name: FamilyFit.model_validate(body) for name, body in raw["families"].items()}


LEGACY_BAND_BELOW = (0, 15, 0)  # measured 0.12 runs step and queue differently from 0.15+: their own band
LEGACY_BAND_SUFFIX = "@<0.15"


def version_band(vllm_version: str) -> str:
    """ "" for current releases, the legacy suffix below 0.15 (where the data shows a difference)."""
    parts = []
    for piece in vllm_version.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return LEGACY_BAND_SUFFIX if tuple(parts) < LEGACY_BAND_BELOW else ""


def fit_for(*, family: str, vllm_version: str) -> tuple[str, FamilyFit]:
    """The family's fit for this vLLM version band (falls back to the family's current band)."""
    fits = fitted_families()
    key = family + version_band(vllm_version)
    return (key, fits[key]) if key in fits else (family, fits[family])


def device_family(device: DeviceSpec) -> tuple[str, float]:
    """The fitted family whose coefficients apply, and how much to widen its bands (1 = fitted)."""
    sm = device.sm or 0
    if device.platform == "cuda" and sm in (90,):
        return "hopper", 1.0
    if device.platform == "cuda" and sm in (100, 103):
        return "blackwell", 1.0
    if device.platform == "cuda" and sm >= 100:
        return "blackwell", WIDEN_OTHER_NVIDIA
    if device.platform == "cuda":
        return "hopper", WIDEN_OTHER_NVIDIA
    return "hopper", WIDEN_OTHER_VENDOR


class CurvePoint(BaseModel):
    model_config = ConfigDict(frozen=True)

    concurrency: int
    ttft_ms: float
    tpot_ms: float
    output_tokens_per_s: float
    kv_limited: bool


class Performance(BaseModel):
    """The answer of POST /api/performance (and `kv-planner perf --json`)."""

    model_config = ConfigDict(frozen=True)

    ttft_ms: Range
    tpot_ms: Range
    output_tokens_per_s: Range
    requests_per_s: Range
    per_user_tokens_per_s: Range
    kv_limited: bool
    kv_limited_from_concurrency: int | None  # smallest concurrency whose requests the pool cannot all hold
    running_requests: int  # per data-parallel rank
    limit: str  # clients / max_num_seqs / kv_pool
    basis: Basis
    family: str
    input_tokens: int
    output_tokens: int
    concurrency: int
    notes: list[Msg] = Field(default_factory=list)
    curve: list[CurvePoint] = Field(default_factory=list)


def _band(expected: float, low_log: float, high_log: float, widen: float) -> Range:
    low = expected * math.exp(min(0.0, low_log) * widen)
    high = expected * math.exp(max(0.0, high_log) * widen)
    return Range(low=low, expected=expected, high=high)


def validate_workload(workload: Workload, *, max_model_len: int) -> None:
    if not 1 <= workload.input_tokens <= MAX_WORKLOAD_TOKENS:
        raise PlannerError("input_tokens", Text("must be between 1 and 10,000,000"))
    if not 1 <= workload.output_tokens <= MAX_WORKLOAD_TOKENS:
        raise PlannerError("output_tokens", Text("must be between 1 and 10,000,000"))
    if not 1 <= workload.concurrency <= MAX_CONCURRENCY:
        raise PlannerError("concurrency", Text("must be between 1 and 65,536"))
    if workload.input_tokens + workload.output_tokens > max_model_len:
        raise PlannerError(
            "output_tokens",
            Text(
                "input + output tokens ({total:,}) exceed max_model_len ({max_model_len:,}): vLLM rejects such requests",
                total=workload.input_tokens + workload.output_tokens,
                max_model_len=max_model_len,
            ),
        )


def kv_cliff(*, estimate: Estimate, physics: StepPhysics, workload: Workload) -> int | None:
    """Smallest client concurrency whose requests the pool cannot all hold at full length (input +
    output): from here vLLM preempts, and further on clients queue for KV blocks."""
    pool = requests_in_pool(estimate=estimate, tokens=workload.input_tokens + workload.output_tokens)
    if pool >= estimate.max_num_seqs:
        return None  # max_num_seqs binds first: the pool never limits
    return pool * physics.data_parallel_size + 1


def _point(*, physics: StepPhysics, fit: FamilyFit, estimate: Estimate, workload: Workload) -> Point:
    return point_at(physics=physics, coefficients=fit.coefficients(), estimate=estimate, workload=workload)


def performance(
    *,
    estimate: Estimate,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    workload: Workload,
    with_curve: bool = True,
) -> Performance:
    validate_workload(workload, max_model_len=estimate.max_model_len)
    if not estimate.fits or estimate.num_gpu_blocks <= 0:
        raise PlannerError(
            "max_model_len" if estimate.verdict == "s_bound" else "gpu_memory_utilization",
            Text(
                "vLLM would not start with these settings, so there is no speed to show: make it fit first."
            ),
        )
    family, widen = device_family(device)
    family, fit = fit_for(family=family, vllm_version=estimate.vllm_version)
    physics = step_physics(estimate=estimate, model=model, device=device, serve=serve)
    notes: list[str] = []
    if widen > 1.0:
        if device.platform == "cuda":
            notes.append(
                Text(
                    "No measured runs on {device}: {family} coefficients are used, bands widened.",
                    device=device.name,
                    family=family,
                )
            )
        else:
            notes.append(
                Text(
                    "No measured runs on {vendor} devices: NVIDIA {family} coefficients are used with the device's "
                    "data-sheet bandwidth and TFLOPS; treat the figures as a rough guide (bands widened 3x).",
                    vendor=device.vendor,
                    family=family,
                )
            )
    active = model.params_active or model.params_total
    lo, hi = fit.active_params_min / SIZE_SPAN_FACTOR, fit.active_params_max * SIZE_SPAN_FACTOR
    if not lo <= active <= hi:
        widen *= WIDEN_OUTSIDE_FIT
        notes.append(
            Text(
                "{active:.1f} B active parameters is far from the fitted models ({low:.1f}-{high:.1f} B): extrapolated.",
                active=active / 1e9,
                low=fit.active_params_min / 1e9,
                high=fit.active_params_max / 1e9,
            )
        )
    if physics.weight_format.value not in fit.weight_formats:
        widen *= WIDEN_OUTSIDE_FIT
        notes.append(
            Text(
                "No measured {fmt} runs on this device family: its bytes and tensor-core rate are modelled, not fitted.",
                fmt=physics.weight_format.value,
            )
        )
    if serve.pipeline_parallel_size > 1:
        widen *= WIDEN_OUTSIDE_FIT
        notes.append(Text("Pipeline parallel runs were not measured: stage bubbles are not modelled."))
    if serve.cpu_offload_gb > 0:
        widen *= WIDEN_OUTSIDE_FIT
        notes.append(
            Text(
                "--cpu-offload-gb {gib:g}: those weights cross PCIe (about 64 GB/s) in every forward pass, "
                "which the step time includes; no measured offload run, so it is extrapolated.",
                gib=serve.cpu_offload_gb,
            )
        )
    if serve.speculative_config is not None or serve.enable_lora:
        widen *= WIDEN_OUTSIDE_FIT
        notes.append(
            Text(
                "Speculative decoding and LoRA adapters are not in the speed model: their memory is counted, "
                "their effect on speed is not."
            )
        )
    basis: Basis = "calibrated" if widen == 1.0 else "extrapolated"
    point = _point(physics=physics, fit=fit, estimate=estimate, workload=workload)
    cliff = kv_cliff(estimate=estimate, physics=physics, workload=workload)
    kv_limited = cliff is not None and workload.concurrency >= cliff
    if kv_limited:
        notes.append(
            Text(
                "KV-limited from {cliff} concurrent requests: the pool holds {full} requests of {tokens:,} tokens per "
                "rank, so vLLM preempts and clients queue; about {running} run at once (recomputation after "
                "preemption is not added: latency can be worse).",
                cliff=cliff,
                full=requests_in_pool(
                    estimate=estimate, tokens=workload.input_tokens + workload.output_tokens
                ),
                running=point.running,
                tokens=workload.input_tokens + workload.output_tokens,
            )
        )
    elif point.limit == "max_num_seqs":
        notes.append(
            Text(
                "max_num_seqs ({max_num_seqs}) caps the running batch: the other clients queue.",
                max_num_seqs=estimate.max_num_seqs,
            )
        )
    ttft_high = fit.ttft_log_p90 * (KV_LIMITED_BAND_WIDEN if kv_limited else 1.0)
    tpot = _band(point.tpot_s * MS_PER_S, fit.tpot_log_p10, fit.tpot_log_p90, widen)
    throughput = _band(point.output_tokens_per_s, fit.throughput_log_p10, fit.throughput_log_p90, widen)
    requests = _band(point.requests_per_s, fit.throughput_log_p10, fit.throughput_log_p90, widen)
    per_user = Range(low=MS_PER_S / tpot.high, expected=MS_PER_S / tpot.expected, high=MS_PER_S / tpot.low)
    curve: list[CurvePoint] = []
    if with_curve:
        for c in sorted({*CURVE_CONCURRENCIES, workload.concurrency, *([cliff] if cliff else [])}):
            p = _point(
                physics=physics,
                fit=fit,
                estimate=estimate,
                workload=Workload(
                    input_tokens=workload.input_tokens, output_tokens=workload.output_tokens, concurrency=c
                ),
            )
            curve.append(
                CurvePoint(
                    concurrency=c,
                    ttft_ms=p.ttft_s * MS_PER_S,
                    tpot_ms=p.tpot_s * MS_PER_S,
                    output_tokens_per_s=p.output_tokens_per_s,
                    kv_limited=cliff is not None and c >= cliff,
                )
            )
    return Performance(
        ttft_ms=_band(point.ttft_s * MS_PER_S, fit.ttft_log_p10, ttft_high, widen),
        tpot_ms=tpot,
        output_tokens_per_s=throughput,
        requests_per_s=requests,
        per_user_tokens_per_s=per_user,
        kv_limited=kv_limited,
        kv_limited_from_concurrency=cliff,
        running_requests=point.running,
        limit=point.limit,
        basis=basis,
        family=family,
        input_tokens=workload.input_tokens,
        output_tokens=workload.output_tokens,
        concurrency=workload.concurrency,
        notes=notes,
        curve=curve,
    )
