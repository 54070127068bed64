"""Which all-reduce vLLM runs for a tensor-parallel message, and how many bytes it puts on each GPU's link.

vLLM's CUDA communicator (0.11.0-0.33.0 ``distributed/device_communicators/cuda_communicator.py``,
``CudaCommunicator.all_reduce``) tries, in order: its custom all-reduce while the message is below
``CUSTOM_ALL_REDUCE_MAX_SIZES[capability][world size]``, then PyTorch's symmetric-memory all-reduce below
``SYMM_MEM_ALL_REDUCE_MAX_SIZES`` (on by default: ``VLLM_ALLREDUCE_USE_SYMM_MEM=1``), then NCCL. The
symmetric-memory path runs ``multimem_all_reduce_`` for the world sizes of
``SymmMemCommunicator._WORLD_SIZES_MULTIMEM`` (``symm_mem.py``): the NVSwitch reduces in the fabric
(NVLink SHARP), so each GPU sends and receives its buffer's (n - 1) / n once, where the ring the step
model charges otherwise moves 2 (n - 1) / n. The tables below are the wheels' (``all_reduce_utils.py``),
the same in 0.11.0, 0.13.0, 0.14.0, 0.19.0 and 0.33.0 for capabilities 9.0 and 10.0 (10.3 and later rows
were added after 0.14 and are left out: not read release by release).

E.g. Qwen3-32B (hidden 5,120, bf16) at TP 8 on H100: a 100-token decode step's all-reduce is
100 x 5,120 x 2 = 1,024,000 B, above the custom all-reduce's 256 KiB and below symmetric memory's
64 MiB, so multimem: half the ring's wire bytes. An 8,192-token prompt chunk's is 83,886,080 B, above
64 MiB: NCCL's ring, as before. At TP 4 on H100 both limits are 32 MiB: never multimem.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.versions import parse_version

MIB = 1024 * 1024
# the release range whose wheels were read (symmetric memory on by default from 0.11.0; earlier not read)
FIRST_RELEASE = (0, 11, 0)

# capability -> world size -> (custom all-reduce max bytes, symmetric-memory max bytes), all_reduce_utils.py
CUSTOM_MAX_BYTES: dict[str, dict[int, int]] = {
    "9.0": {2: 64 * MIB, 4: 32 * MIB, 6: MIB // 2, 8: MIB // 4},
    "10.0": {2: 2 * MIB, 4: 2 * MIB, 6: 1 * MIB, 8: 1 * MIB},
}
SYMM_MEM_MAX_BYTES: dict[str, dict[int, int]] = {
    "9.0": {2: 64 * MIB, 4: 32 * MIB, 6: 64 * MIB, 8: 64 * MIB},
    "10.0": {2: 8 * MIB, 4: 32 * MIB, 6: 128 * MIB, 8: 128 * MIB},
}
MULTIMEM_WORLD_SIZES: dict[str, tuple[int, ...]] = {"9.0": (4, 6, 8), "10.0": (6, 8)}
# multimem's bytes on a GPU's link over the ring's: (n - 1) / n against 2 (n - 1) / n
MULTIMEM_WIRE_SHARE = 0.5


@dataclass(frozen=True)
class MultimemWindow:
    """Messages of at least ``min_bytes`` and below ``max_bytes`` run multimem (0, 0: never)."""

    min_bytes: int = 0
    max_bytes: int = 0

    def applies(self, message_bytes: float) -> bool:
        return self.min_bytes <= message_bytes < self.max_bytes


NEVER = MultimemWindow()


def multimem_window(
    *, compute_capability: str | None, tensor_parallel_size: int, vllm_version: str
) -> MultimemWindow:
    """The message sizes vLLM all-reduces with multimem on this device and TP size. The caller decides the
    fabric: multimem needs NVSwitch multicast, so a TP group over PCIe or across hosts never gets here."""
    if compute_capability is None or parse_version(vllm_version) < FIRST_RELEASE:
        return NEVER
    tp = tensor_parallel_size
    if tp not in MULTIMEM_WORLD_SIZES.get(compute_capability, ()):
        return NEVER
    custom = CUSTOM_MAX_BYTES[compute_capability][tp]  # should_custom_ar: size < max -> custom all-reduce
    symm = SYMM_MEM_MAX_BYTES[compute_capability][tp]  # should_use_symm_mem: size < max
    return MultimemWindow(min_bytes=custom, max_bytes=symm) if symm > custom else NEVER
