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

from app.core.specs import GIB


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
) -> Bands:
    factor = 1.0 if calibrated else UNCALIBRATED_FACTOR
    weights_band = QUANTIZED_WEIGHTS_BAND if quantized else WEIGHTS_BAND
    return Bands(
        weights=weights_band.width(weights_bytes),
        activation=int(ACTIVATION_BAND.width(activation_bytes) * factor),
        non_torch=NON_TORCH_BAND.width(0),
        cuda_graph=CUDA_GRAPH_BAND.width(cuda_graph_bytes) if cuda_graph_budgeted and cuda_graph_bytes else 0,
    )
