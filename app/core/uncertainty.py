"""How far the modelled parts can be off, from the calibration residuals (bench/calibrate.py,
docs/accuracy.md), and the ranges that follow for the KV pool, tokens and concurrency.

Each modelled quantity gets a band `expected - low_bytes … expected + high_bytes`, where the band is
the larger of an absolute and a relative term, both taken from the 90th percentile of the absolute
residuals on the real logs. The KV pool band is the sum of the bands of what is subtracted from the
budget (a deliberately conservative combination: the terms are measured in one profile run and their
errors are not independent), and tokens/concurrency follow through vLLM's exact block arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core import kv
from app.core.budget import StageNumbers
from app.core.result import Range
from app.core.specs import GIB
from app.core.versions import VersionRules


@dataclass(frozen=True)
class Band:
    absolute_bytes: int
    relative: float

    def width(self, value: int) -> int:
        return max(self.absolute_bytes, int(abs(value) * self.relative))


# p90 |residual| on the real logs (docs/accuracy.md): weights 0.17 GiB / 1.3 %, activation 0.13 GiB / 5.8 %,
# non-torch 0.21 GiB, CUDA graphs 0.15 GiB / 20 %. Quantized weights carry scales the count misses: 4 %.
WEIGHTS_BAND = Band(absolute_bytes=int(0.05 * GIB), relative=0.013)
QUANTIZED_WEIGHTS_BAND = Band(absolute_bytes=int(0.1 * GIB), relative=0.04)
ACTIVATION_BAND = Band(absolute_bytes=int(0.13 * GIB), relative=0.06)
NON_TORCH_BAND = Band(absolute_bytes=int(0.21 * GIB), relative=0.0)
CUDA_GRAPH_BAND = Band(absolute_bytes=int(0.15 * GIB), relative=0.2)
# Versions or platforms without calibration logs (V0, pre-0.15, Ascend, ROCm) get wider activation bands.
UNCALIBRATED_FACTOR = 2.0


@dataclass(frozen=True)
class Bands:
    weights: int
    activation: int
    non_torch: int
    cuda_graph: int

    @property
    def kv_delta(self) -> int:
        """How much smaller (or larger) the pool can be than expected: the subtracted terms' bands."""
        return self.weights + self.activation + self.non_torch + self.cuda_graph


def bands_for(
    *,
    weights_bytes: int,
    activation_bytes: int,
    cuda_graph_bytes: int,
    quantized: bool,
    calibrated: bool,
    cuda_graph_budgeted: bool,
    host_band_bytes: int = 0,
) -> Bands:
    """``host_band_bytes``: what the host side of the start-up may take on a unified-memory device
    (situations.unified_memory_band_bytes), counted with the non-torch term vLLM measures it in."""
    factor = 1.0 if calibrated else UNCALIBRATED_FACTOR
    weights_band = QUANTIZED_WEIGHTS_BAND if quantized else WEIGHTS_BAND
    return Bands(
        weights=weights_band.width(weights_bytes),
        activation=int(ACTIVATION_BAND.width(activation_bytes) * factor),
        non_torch=NON_TORCH_BAND.width(0) + host_band_bytes,
        cuda_graph=CUDA_GRAPH_BAND.width(cuda_graph_bytes) if cuda_graph_budgeted and cuda_graph_bytes else 0,
    )


def ranges_for(
    *,
    layout: kv.KVLayout,
    rules: VersionRules,
    parts: StageNumbers,
    quantized: bool,
    calibrated: bool,
    max_model_len: int,
    inflight_tokens: int,
    prefix_caching: bool,
    needed_bytes: int,
    upper: int,
    graphs_budgeted: bool,
    host_band_bytes: int = 0,
    pool_given: bool = False,
    peak_weight: float = 1.0,
) -> tuple[dict[str, Range], bool, int]:
    """Low / expected / high for the modelled parts and for the exact numbers that follow from them, whether
    the start is borderline (it starts at one end of the pool's band and not at the other), and the longest
    length that starts at the low end (``parts``: the binding stage's partition). ``pool_given``: the worker
    takes ``--kv-cache-memory-bytes`` as the pool (situations.kv_bytes_given), or the model keeps no KV cache and V1
    sizes no pool, so the pool has no band.
    ``peak_weight``: bytes of pool per byte of activation peak (extensible_kv.peak_sensitivity: 1.75 where 0.34.0's
    extensible cache sizes the pool by the device headroom, whose margin is 0.75 x the peak)."""
    weights_bytes, activation_bytes = parts.weights_bytes, parts.activation_peak_bytes
    cuda_graph_bytes, kv_cache_bytes = parts.cuda_graph_bytes, parts.kv_cache_bytes
    bands = bands_for(
        weights_bytes=weights_bytes,
        activation_bytes=activation_bytes,
        cuda_graph_bytes=cuda_graph_bytes,
        quantized=quantized,
        calibrated=calibrated,
        cuda_graph_budgeted=graphs_budgeted,  # versions.graphs_budgeted: per release and platform
        host_band_bytes=host_band_bytes,
    )

    def span(value: int, width: int) -> Range:
        return Range(low=max(0, value - width), expected=value, high=value + width)

    kv_delta = 0 if pool_given else bands.kv_delta + int(bands.activation * (peak_weight - 1))
    kv_low, kv_high = kv_cache_bytes - kv_delta, kv_cache_bytes + kv_delta
    out = {
        "weights_bytes": span(weights_bytes, bands.weights),
        "activation_peak_bytes": span(activation_bytes, bands.activation),
        "non_torch_bytes": span(parts.non_torch_bytes, bands.non_torch),
        "cuda_graph_bytes": span(cuda_graph_bytes, CUDA_GRAPH_BAND.width(cuda_graph_bytes)),
        "kv_cache_bytes": Range(low=kv_low, expected=kv_cache_bytes, high=kv_high),
    }
    per_group = kv.request_blocks(
        layout=layout,
        max_model_len=max_model_len,
        inflight_tokens=inflight_tokens,
        prefix_caching=prefix_caching,
    )
    tokens, concurrency = [], []
    for pool in (kv_low, kv_cache_bytes, kv_high):
        blocks = kv.num_blocks_for(available_bytes=pool, layout=layout)
        conc = kv.concurrency_from_blocks(
            num_blocks=blocks, layout=layout, per_group=per_group, max_model_len=max_model_len, rules=rules
        )
        printed = kv.kv_tokens_for(
            num_blocks=blocks, layout=layout, max_concurrency=conc, max_model_len=max_model_len, rules=rules
        )
        tokens.append(float(printed if printed is not None else blocks * layout.block_size))
        concurrency.append(round(conc, 2))
    out["kv_tokens"] = Range(low=tokens[0], expected=tokens[1], high=tokens[2])
    out["max_concurrency"] = Range(low=concurrency[0], expected=concurrency[1], high=concurrency[2])
    fits_low, fits_high = (
        kv.one_request_starts(
            rules=rules, layout=layout, kv_cache_bytes=pool, needed=needed_bytes, max_model_len=max_model_len
        )
        for pool in (kv_low, kv_high)
    )
    null_block = layout.bytes_per_block if rules.null_block_in_check else 0
    safe = kv.estimate_max_model_len(
        available_bytes=max(0, kv_low - null_block),
        layout=layout,
        inflight_tokens=inflight_tokens,
        prefix_caching=prefix_caching,
        rules=rules,
        upper=upper,
    )
    return out, fits_low != fits_high, safe
