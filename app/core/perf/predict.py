"""`performance()`: TTFT, TPOT and throughput with bands for one planner configuration and workload."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.core.errors import PlannerError
from app.core.perf.bench import BenchResult
from app.core.perf.bench_args import BenchArgs
from app.core.perf.bench_run import bench_serve, open_loop_note, simulated, whole_clients
from app.core.perf.calibrated import BAND_GROUPS, reach_note
from app.core.perf.cluster import ClusterFit, RunComparison
from app.core.perf.physics import (
    Coefficients,
    StepPhysics,
    busy_ranks,
    host_seconds,
    slower_device,
    step_physics,
    tp_crosses_hosts,
    tp_over_pcie,
)
from app.core.perf.regime import Regime, binding_regime
from app.core.perf.schedule import Point, Workload, point_at, requests_in_pool
from app.core.perf.too_long import too_long
from app.core.result import Estimate, Range
from app.core.specs import DeviceSpec, ModelSpec, ServeConfig
from app.core.text import Msg, Text
from app.core.verdicts import VERDICTS, refusal_field
from app.core.version_parse import release_numbers
from app.core.versions import rules_for

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

    # this device's kernels against the fitted family's (physics.slower_device; fit_for sets them): its
    # step as a whole, and its FLOPs (GEMMs, attention) where they were fitted apart (None: the same)
    device_time_factor: float = 1.0
    device_compute_factor: float | None = None
    v0_engine: bool = False  # the release runs the V0 engine: its own host work (v0_host_fit)
    # the simulated benchmark's refit of this CUDA architecture's step (bench_arch_fit; fit_for sets them):
    # (decode, compute) factors on top of the closed-form fit, 1 = as fitted
    bench_factors: tuple[float, float] = (1.0, 1.0)

    def coefficients(self) -> Coefficients:
        return slower_device(
            self._family_coefficients(),
            factor=self.device_time_factor,
            compute_factor=self.device_compute_factor,
        )

    def _family_coefficients(self) -> Coefficients:
        host = {**host_fit(), **(v0_host_fit() if self.v0_engine else {})}
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
            host_step_s=host["host_step_s"],
            host_request_s=host["host_request_s"],
            host_rank_step_s=host.get("host_rank_step_s", 0.0),
            eager_layer_s=host["eager_layer_s"],
            uncaptured_launch=bool(host["uncaptured_launch"]),
            uncaptured_serial=bool(host["uncaptured_serial"]),
        )

    def bench_coefficients(self) -> Coefficients:
        """The simulated benchmark's: the same, with the per-request TTFT overhead bench/perf_loso.py
        fitted across sources for the simulation (the steady state keeps the one fitted with its
        prefill queue factor, which stands in for the queue the simulation has)."""
        decode, compute = self.bench_factors
        base = self.coefficients()
        return slower_device(
            replace(
                base,
                **bench_ttft_fit(),
                tokenizer_workers=bench_tokenizer_workers(),
                uncaptured_launch=base.uncaptured_launch,  # named: the TTFT fit's floats never set the flags
                uncaptured_serial=base.uncaptured_serial,
            ),
            factor=decode,
            compute_factor=compute,
        )


@cache
def host_fit() -> dict[str, float]:
    """The host's per-step and per-request work (physics.Coefficients.host_*): one pair for every device
    family (it is CPU work), fitted across sources by bench/perf_loso.py; absent = 0."""
    raw = json.loads(COEFFICIENTS_FILE.read_text(encoding="utf-8")).get("host", {})
    names = ("host_step_s", "host_request_s", "eager_layer_s", "uncaptured_launch", "uncaptured_serial")
    return {name: float(raw.get(name, 0.0)) for name in names}


@cache
def v0_host_fit() -> dict[str, float]:
    """The V0 engine's host work per step and per request (vLLM before 0.8: scheduling, input
    preparation, sampling and output processing in Python between device steps, in series), fitted
    apart from V1's across sources by bench/perf_loso.py's ``+v0``; absent = V1's (host_fit)."""
    raw = json.loads(COEFFICIENTS_FILE.read_text(encoding="utf-8")).get("host", {})
    return {
        name: float(raw[f"v0_{name}"])
        for name in ("host_step_s", "host_request_s", "host_rank_step_s")
        if f"v0_{name}" in raw
    }


@cache
def device_time_fit() -> dict[str, float]:
    """Per device outside CUDA (its catalog id: an MI300X, a 910B), how much longer its device work takes
    than the fitted NVIDIA family's at the same data-sheet rates (physics.slower_device): its kernel
    stack's achieved share of its data sheet, fitted across sources with the source held out by
    bench/perf_loso.py; absent = 1 (the data sheet as the family reaches its own)."""
    raw = json.loads(COEFFICIENTS_FILE.read_text(encoding="utf-8")).get("device_time", {})
    return {name: float(value) for name, value in raw.items()}


@cache
def device_compute_time_fit() -> dict[str, float]:
    """Per device outside CUDA, the same for its FLOPs alone (a prompt chunk's GEMMs and attention: the
    vendor's GEMM library, not its memory-bound decode kernels), fitted by bench/perf_loso.py's
    ``physics+prefill`` with the rest of the step at device_time_fit's factor; absent = that factor."""
    raw = json.loads(COEFFICIENTS_FILE.read_text(encoding="utf-8")).get("device_compute_time", {})
    return {name: float(value) for name, value in raw.items()}


ARCH_PREFIX = "cuda-sm"


def cuda_arch(device: DeviceSpec) -> str:
    """The key of a CUDA device's architecture in bench_arch_fit ("cuda-sm90" for an H100 or H200,
    "cuda-sm89" for an RTX 4090 or L4), "" outside CUDA (those devices have their own device-time fit)."""
    return f"{ARCH_PREFIX}{device.sm}" if device.platform == "cuda" and device.sm else ""


@cache
def bench_arch_fit() -> dict[str, tuple[float, float]]:
    """Per CUDA architecture (cuda_arch), the (decode, compute) factors that refit the family's
    closed-form step coefficients through the simulated benchmark (physics.slower_device on top of the
    family fit), chosen across sources with the source held out by bench/perf_loso.py's ``+arch``;
    absent = (1, 1)."""
    raw = json.loads(COEFFICIENTS_FILE.read_text(encoding="utf-8")).get("bench_arch_time", {})
    return {name: (float(pair[0]), float(pair[1])) for name, pair in raw.items()}


@cache
def bench_ttft_fit() -> dict[str, float]:
    """The simulation's per-request TTFT overhead (a base and a part per prompt token: the API server
    tokenises the prompt), fitted across sources by bench/perf_loso.py; absent = the family's own."""
    raw = json.loads(COEFFICIENTS_FILE.read_text(encoding="utf-8")).get("host", {})
    names = ("ttft_overhead_s", "ttft_per_prompt_token_s", "frontend_request_s", "frontend_stream_s")
    return {name: float(raw[name]) for name in names if name in raw}


@cache
def bench_tokenizer_workers() -> int:
    """The API server's tokenizer workers the simulation queues the prompts for (simulate.tokenizer_queue),
    chosen across sources by bench/perf_loso.py's ``+tokq``; absent = 0 (no queue, side by side)."""
    raw = json.loads(COEFFICIENTS_FILE.read_text(encoding="utf-8")).get("host", {})
    return int(raw.get("tokenizer_workers", 0))


@cache
def fitted_families() -> dict[str, FamilyFit]:
    raw = json.loads(COEFFICIENTS_FILE.read_text(encoding="utf-8"))
    return {name: FamilyFit.model_validate(body) for name, body in raw["families"].items()}


LEGACY_BAND_BELOW = (0, 15, 0)  # measured 0.12 runs step and queue differently from 0.15+: their own band
LEGACY_BAND_SUFFIX = "@<0.15"


def version_band(vllm_version: str) -> str:
    """ "" for current releases, the legacy suffix below 0.15 (where the data shows a difference); the version is
    read as every surface reads one (version_parse: PEP 440, "0.14.0rc1" is 0.14.0)."""
    return LEGACY_BAND_SUFFIX if release_numbers(vllm_version) < LEGACY_BAND_BELOW else ""


def fit_for(*, family: str, vllm_version: str, device: str = "", arch: str = "") -> tuple[str, FamilyFit]:
    """The family's fit for this vLLM version band (falls back to the family's current band), on this
    device (its catalog id: its device-time factor from device_time_fit) of this CUDA architecture
    (cuda_arch: the simulated benchmark's refit from bench_arch_fit)."""
    fits = fitted_families()
    key = family + version_band(vllm_version)
    key = key if key in fits else family
    factor = device_time_fit().get(device, 1.0)
    compute = device_compute_time_fit().get(device)
    v0 = rules_for(vllm_version).engine == "v0" and bool(v0_host_fit())
    bench = bench_arch_fit().get(arch, (1.0, 1.0))
    if factor == 1.0 and compute is None and not v0 and bench == (1.0, 1.0):
        return key, fits[key]
    update = {
        "device_time_factor": factor,
        "device_compute_factor": compute,
        "v0_engine": v0,
        "bench_factors": bench,
    }
    return key, fits[key].model_copy(update=update)


def fit_on(device: DeviceSpec, *, vllm_version: str) -> tuple[str, FamilyFit]:
    """fit_for of this device: its family, catalog id and CUDA architecture (one place for the three)."""
    return fit_for(
        family=device_family(device)[0], vllm_version=vllm_version, device=device.id, arch=cuda_arch(device)
    )


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
    """One concurrency of the curve, each figure with the band of the operating point's kind (the KV
    pool's wider TTFT band past the cliff)."""

    model_config = ConfigDict(frozen=True)

    concurrency: int
    ttft_ms: Range
    tpot_ms: Range
    output_tokens_per_s: Range
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
    regime: Regime = (
        "compute"  # what binds at this workload (compute, memory bandwidth, host, KV pool, queue)
    )
    basis: Basis
    family: str
    input_tokens: int
    output_tokens: int
    concurrency: int
    notes: list[Msg] = Field(default_factory=list)
    curve: list[CurvePoint] = Field(default_factory=list)
    bench: BenchResult | None = None  # the simulated `vllm bench serve` run, when its arguments were given
    calibrated_runs: int = 0  # > 0: figures scaled by your cluster's measured runs


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
    refused = too_long(
        prompt_tokens=workload.input_tokens,
        output_tokens=workload.output_tokens,
        max_model_len=max_model_len,
        prompt_field="input_tokens",
        output_field="output_tokens",
    )
    if refused is not None:
        raise refused


def kv_cliff(*, estimate: Estimate, physics: StepPhysics, workload: Workload) -> int | None:
    """Smallest client concurrency whose requests the pool cannot all hold at full length (input +
    output): from here vLLM preempts, and further on clients queue for KV blocks."""
    pool = requests_in_pool(estimate=estimate, tokens=workload.input_tokens + workload.output_tokens)
    if pool >= estimate.max_num_seqs:
        return None  # max_num_seqs binds first: the pool never limits
    return pool * physics.data_parallel_size + 1


def _point(*, physics: StepPhysics, fit: FamilyFit, estimate: Estimate, workload: Workload) -> Point:
    return point_at(physics=physics, coefficients=fit.coefficients(), estimate=estimate, workload=workload)


def _formats_measured(family: str) -> set[str]:
    """Weight formats measured on any version band of the family, and bf16 (the reference format: its
    tensor rate is the data sheet's own) once any NVIDIA family has measured bf16 runs."""
    fits = fitted_families()
    formats = {f for key, fit in fits.items() if key.split("@")[0] == family for f in fit.weight_formats}
    if any("bf16" in fit.weight_formats for fit in fits.values()):
        formats.add("bf16")
    return formats


def _device_time_note(*, device: DeviceSpec, fit: FamilyFit) -> Msg | None:
    """What this device's kernel factors (fit_for) do to the answer: one factor, or decode and GEMMs apart."""
    compute = fit.device_compute_factor
    if compute is not None and compute != fit.device_time_factor:
        return Text(
            "{device}'s kernels take {factor:g}x the device time NVIDIA's reach at the same data-sheet rates "
            "in decode and {compute:g}x in their matrix multiplications (fitted on public runs of this "
            "device, each source held out in turn).",
            device=device.name,
            factor=fit.device_time_factor,
            compute=compute,
        )
    if fit.device_time_factor != 1.0:
        return Text(
            "{device}'s kernels take {factor:g}x the device time NVIDIA's reach at the same data-sheet rates "
            "(fitted on public runs of this device, each source held out in turn).",
            device=device.name,
            factor=fit.device_time_factor,
        )
    return None


def _basis_notes(
    *,
    device: DeviceSpec,
    model: ModelSpec,
    serve: ServeConfig,
    fit: FamilyFit,
    family: str,
    physics: StepPhysics,
) -> tuple[float, list[Msg]]:
    """How far outside the measured runs this configuration is (band widening) and the notes saying so."""
    base, widen = device_family(device)
    notes: list[Msg] = []
    if widen > 1.0 and device.platform == "cuda":
        notes.append(
            Text(
                "No measured runs on {device}: {family} coefficients are used, bands widened.",
                device=device.name,
                family=family,
            )
        )
    elif widen > 1.0:
        notes.append(
            Text(
                "No measured runs on {vendor} devices: NVIDIA {family} coefficients are used with the device's "
                "data-sheet bandwidth and TFLOPS; treat the figures as a rough guide (bands widened 3x).",
                vendor=device.vendor,
                family=family,
            )
        )
    device_note = _device_time_note(device=device, fit=fit)
    if device_note is not None:
        notes.append(device_note)
    active = model.params_active or model.params_total
    if not fit.active_params_min / SIZE_SPAN_FACTOR <= active <= fit.active_params_max * SIZE_SPAN_FACTOR:
        widen *= WIDEN_OUTSIDE_FIT
        notes.append(
            Text(
                "{active:.1f} B active parameters is far from the fitted models ({low:.1f}-{high:.1f} B): extrapolated.",
                active=active / 1e9,
                low=fit.active_params_min / 1e9,
                high=fit.active_params_max / 1e9,
            )
        )
    if physics.weight_format.value not in _formats_measured(base):
        widen *= WIDEN_OUTSIDE_FIT
        notes.append(
            Text(
                "No measured {fmt} runs on this device family: its bytes and tensor-core rate are modelled, not fitted.",
                fmt=physics.weight_format.value,
            )
        )
    if serve.pipeline_parallel_size > 1:
        widen *= WIDEN_OUTSIDE_FIT
        notes.append(
            Text(
                "Pipeline parallel: a token crosses the {pp} stages in turn, so TPOT and TTFT do not fall with PP "
                "(it buys KV room, not speed); no measured PP run, so extrapolated.",
                pp=serve.pipeline_parallel_size,
            )
        )
    if tp_crosses_hosts(device=device, serve=serve) or tp_over_pcie(device=device, serve=serve):
        widen *= WIDEN_OUTSIDE_FIT
        notes.append(
            Text(
                "Tensor parallel {tp} all-reduces over {link} ({gbps:.0f} GB/s each way), not NVLink: its bytes "
                "and latency are modelled at that rate; no measured run over such a link, so extrapolated.",
                tp=serve.tensor_parallel_size,
                link=Text("the hosts' network")
                if tp_crosses_hosts(device=device, serve=serve)
                else Text("PCIe"),
                gbps=physics.link_bytes_per_s / 1e9,
            )
        )
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
    return widen, notes


def _limit_note(*, estimate: Estimate, workload: Workload, point: Point, cliff: int | None) -> Msg | None:
    if cliff is not None and workload.concurrency >= cliff:
        tokens = workload.input_tokens + workload.output_tokens
        return Text(
            "KV-limited from {cliff} concurrent requests: the pool holds {full} requests of {tokens:,} tokens per "
            "rank, so vLLM preempts and clients queue; about {running} run at once (recomputation after "
            "preemption is not added: latency can be worse).",
            cliff=cliff,
            full=requests_in_pool(estimate=estimate, tokens=tokens),
            running=point.running,
            tokens=tokens,
        )
    if point.limit == "max_num_seqs":
        return Text(
            "max_num_seqs ({max_num_seqs}) caps the running batch: the other clients queue.",
            max_num_seqs=estimate.max_num_seqs,
        )
    return None


def _curve(
    *,
    physics: StepPhysics,
    fit: FamilyFit,
    estimate: Estimate,
    workload: Workload,
    cliff: int | None,
    scale: dict[str, float],
    widens: dict[str, float],
    cluster: ClusterFit | None,
    model_widen: float,
) -> list[CurvePoint]:
    """The figures at each concurrency, banded as the operating point's are (``_bands``, ``widens``);
    where your runs did not run (ClusterFit.reaches) the model's bands and widening (``model_widen``)."""
    bands = {limited: _bands(fit, cluster, kv_limited=limited) for limited in (False, True)}
    model = {limited: _bands(fit, None, kv_limited=limited) for limited in (False, True)}
    curve = []
    for c in sorted({*CURVE_CONCURRENCIES, workload.concurrency, *([cliff] if cliff else [])}):
        p = _point(physics=physics, fit=fit, estimate=estimate, workload=replace(workload, concurrency=c))
        limited = cliff is not None and c >= cliff
        expected = {
            "ttft": p.ttft_s * MS_PER_S,
            "tpot": p.tpot_s * MS_PER_S,
            "throughput": p.output_tokens_per_s,
        }
        near = cluster is None or cluster.reaches(c)
        band, w = (bands, widens) if near else (model, dict.fromkeys(widens, model_widen))
        banded = {g: _band(v * scale[g], *band[limited][g], w[g]) for g, v in expected.items()}
        curve.append(
            CurvePoint(
                concurrency=c,
                ttft_ms=banded["ttft"],
                tpot_ms=banded["tpot"],
                output_tokens_per_s=banded["throughput"],
                kv_limited=limited,
            )
        )
    return curve


def bench_bands(fit: FamilyFit, cluster: ClusterFit | None) -> dict[str, tuple[float, float]]:
    """Bands of the simulated benchmark: your cluster's spread, else the out-of-source residual
    quantiles that bench/perf_sources.py fitted (leave-one-source-out), else the family's own."""
    model = source_bands() or _bands(fit, None, kv_limited=False)
    return cluster.bands_over(model) if cluster is not None else model


@cache
def source_bands() -> dict[str, tuple[float, float]]:
    raw = json.loads(COEFFICIENTS_FILE.read_text(encoding="utf-8")).get("bench_bands", {})
    return {group: (float(lo), float(hi)) for group, (lo, hi) in raw.items()}


def _bands(fit: FamilyFit, cluster: ClusterFit | None, *, kv_limited: bool) -> dict[str, tuple[float, float]]:
    """(low, high) log quantiles per kind of figure: the family's held-out residuals, or your cluster's
    for the kinds your runs measured."""
    if cluster is not None:
        return cluster.bands_over(_bands(fit, None, kv_limited=kv_limited))
    widen_high = KV_LIMITED_BAND_WIDEN if kv_limited else 1.0
    stored = source_bands()
    if stored:  # out-of-source residuals (bench/perf_loso.py): what a cluster the fit never saw shows
        low, high = stored["ttft"]
        return {**stored, "ttft": (low, high * widen_high)}
    ttft_high = fit.ttft_log_p90 * widen_high
    return {
        "tpot": (fit.tpot_log_p10, fit.tpot_log_p90),
        "ttft": (fit.ttft_log_p10, ttft_high),
        "throughput": (fit.throughput_log_p10, fit.throughput_log_p90),
    }


def _cluster_terms(
    cluster: ClusterFit | None, *, workload: Workload, widen: float, notes: list[Msg], curve: bool
) -> tuple[dict[str, float], ClusterFit | None, dict[str, float]]:
    """Your cluster's factors, the cluster whose bands apply at the asked clients (None: the model's),
    and each kind's widening; its notes go first in ``notes``. Your runs' spread replaces the model's
    widening only for the kinds of figure they measured, at the clients they ran (elsewhere, past a KV
    cliff they never reached, the model's band)."""
    scale = {g: (cluster.factor(g) if cluster else 1.0) for g in ("tpot", "ttft", "throughput")}
    near = cluster if cluster is not None and cluster.reaches(workload.concurrency) else None
    widens = {g: 1.0 if near is not None and near.measures(g) else widen for g in scale}
    if cluster is not None:
        if cluster.clients is not None and (curve or near is None):
            notes.insert(0, reach_note(cluster.clients))
        # the notes below say why the model alone would widen its bands; your runs' spread replaces that
        if widen > 1.0 and all(w == 1.0 for w in widens.values()):
            notes.insert(
                0, Text("The bands are your runs' spread, not the widened bands the notes below mention.")
            )
        notes.insert(0, cluster.calibration_note())  # which figures your runs scale
    return scale, near, widens


def _refuse_unstarted(estimate: Estimate) -> None:
    """No speed for a start vLLM refuses: the refusal names the verdict and the field its first remedy moves; none
    either for a model that starts with no KV cache (it decodes nothing), named as such rather than as a failed start."""
    if estimate.fits and estimate.num_gpu_blocks > 0:
        return
    if (
        estimate.fits
    ):  # started with no KV blocks: only a model whose layers keep no KV cache does (encoder-only)
        raise PlannerError(
            "model",
            Text(
                "This model keeps no KV cache (its attention is encoder-only: an embedding or classification "
                "model), so it generates no tokens: there is no TTFT, TPOT or output throughput to show."
            ),
        )
    raise PlannerError(
        refusal_field(verdict=estimate.verdict, error_kind=estimate.error_kind),
        Text(
            "vLLM would not start with these settings ({verdict}), so there is no speed to show: make it fit first.",
            verdict=Text(VERDICTS[estimate.verdict].label),
        ),
    )


def performance(
    *,
    estimate: Estimate,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    workload: Workload,
    with_curve: bool = True,
    bench: BenchArgs | None = None,
    cluster: ClusterFit | None = None,
    clients_from_bench: bool = False,
) -> Performance:
    """The steady state at ``workload`` (and, with ``bench``, the simulated `vllm bench serve` run);
    ``clients_from_bench`` (bench_run.bench_sets_clients): the steady state's clients are the ones the
    uncapped benchmark keeps in flight, not ``workload.concurrency``."""
    validate_workload(workload, max_model_len=estimate.max_model_len)
    _refuse_unstarted(estimate)
    family, fit = fit_on(device, vllm_version=estimate.vllm_version)
    physics = step_physics(estimate=estimate, model=model, device=device, serve=serve)
    widen, notes = _basis_notes(
        device=device, model=model, serve=serve, fit=fit, family=family, physics=physics
    )
    bench_result = None
    if bench is not None:
        bench_result = bench_serve(
            estimate=estimate,
            physics=physics,
            fit=fit,
            serve=serve,
            args=bench,
            cluster=cluster,
            bands_for=lambda at: bench_bands(fit, at),
            widen=widen,
            scale={g: (cluster.factor(g) if cluster else 1.0) for g in BAND_GROUPS},
        )
        if clients_from_bench:  # no cap: the clients the run keeps in flight (BenchArgs.clients_in_flight)
            clients = min(MAX_CONCURRENCY, whole_clients(bench_result.clients_in_flight))
            workload = replace(workload, concurrency=clients)
            notes.append(open_loop_note(bench_result))
    scale, near, widens = _cluster_terms(
        cluster, workload=workload, widen=widen, notes=notes, curve=with_curve
    )
    point = _point(physics=physics, fit=fit, estimate=estimate, workload=workload)
    cliff = kv_cliff(estimate=estimate, physics=physics, workload=workload)
    kv_limited = cliff is not None and workload.concurrency >= cliff
    regime = steady_regime(
        point=point,
        physics=physics,
        coefficients=fit.coefficients(),
        kv_limited=kv_limited,
        max_num_seqs=estimate.max_num_seqs,
    )
    limit_note = _limit_note(estimate=estimate, workload=workload, point=point, cliff=cliff)
    notes.extend([limit_note] if limit_note else [])
    bands = _bands(fit, near, kv_limited=kv_limited)
    tpot = _band(point.tpot_s * MS_PER_S * scale["tpot"], *bands["tpot"], widens["tpot"])
    thr = point.output_tokens_per_s * scale["throughput"]
    return Performance(
        ttft_ms=_band(point.ttft_s * MS_PER_S * scale["ttft"], *bands["ttft"], widens["ttft"]),
        tpot_ms=tpot,
        output_tokens_per_s=_band(thr, *bands["throughput"], widens["throughput"]),
        requests_per_s=_band(
            point.requests_per_s * scale["throughput"], *bands["throughput"], widens["throughput"]
        ),
        per_user_tokens_per_s=Range(
            low=MS_PER_S / tpot.high, expected=MS_PER_S / tpot.expected, high=MS_PER_S / tpot.low
        ),
        kv_limited=kv_limited,
        kv_limited_from_concurrency=cliff,
        running_requests=point.running,
        limit=point.limit,
        regime=regime,
        basis="calibrated" if all(w == 1.0 for w in widens.values()) else "extrapolated",
        family=family,
        input_tokens=workload.input_tokens,
        output_tokens=workload.output_tokens,
        concurrency=workload.concurrency,
        notes=notes,
        curve=_curve(
            physics=physics,
            fit=fit,
            estimate=estimate,
            workload=workload,
            cliff=cliff,
            scale=scale,
            widens=widens,
            cluster=cluster,
            model_widen=widen,
        )
        if with_curve
        else [],
        bench=bench_result,
        calibrated_runs=cluster.runs if cluster else 0,
    )


def steady_regime(
    *, point: Point, physics: StepPhysics, coefficients: Coefficients, kv_limited: bool, max_num_seqs: int
) -> Regime:
    """What binds the steady state, by the simulated benchmark's rule (app.core.perf.regime): the KV
    pool past the cliff, the queue when a rank's clients outnumber max_num_seqs, the host when its step
    work outlasts the device's, else memory bandwidth or compute by the decode step's memory-bound share."""
    host = host_seconds(
        coefficients, requests=point.decode_batch, tensor_parallel_size=physics.tensor_parallel_size
    )
    device = point.tpot_s if physics.host_overlapped else point.tpot_s - host
    ranks = busy_ranks(data_parallel_size=physics.data_parallel_size, clients=point.concurrency)
    return binding_regime(
        kv_limited=kv_limited,
        clients_per_rank=point.concurrency / ranks,
        max_num_seqs=max_num_seqs,
        host_share=1.0 if host > device else 0.0,
        memory_share=point.step_memory_share,
    )


def compare_run(
    *,
    estimate: Estimate,
    model: ModelSpec,
    device: DeviceSpec,
    serve: ServeConfig,
    args: BenchArgs,
    measured: dict[str, float],
    lengths: tuple[list[int], list[int]] | None = None,
) -> RunComparison:
    """One of your measured runs against what the shipped model predicts for it (``lengths``: its own
    requests where it printed them, bench_args.printed_lengths)."""
    _family, fit = fit_on(device, vllm_version=estimate.vllm_version)
    physics = step_physics(estimate=estimate, model=model, device=device, serve=serve)
    point = simulated(estimate=estimate, physics=physics, fit=fit, serve=serve, args=args, lengths=lengths)
    return RunComparison(predicted=point.values, measured=measured)
