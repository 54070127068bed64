"""Host memory: KV offloading, CPU weight offload, V0 swap space and pinned buffers."""

from __future__ import annotations

from app.core import kv as K
from app.core.extras.common import src
from app.core.result import ExtraItem
from app.core.specs import GIB, ServeConfig
from app.core.text import Text
from app.core.versions import VersionRules

# --- host memory -----------------------------------------------------------------------------------
V0_DEFAULT_SWAP_GIB = 4  # V0 --swap-space default, per GPU (config/cache.py <= 0.10)


def pinned_bytes(size: int) -> int:
    """PyTorch's pinned-host caching allocator (c10 CachingHostAllocator) rounds each block up to a power
    of two: what a `torch.zeros(..., pin_memory=True)` of `size` bytes really takes."""
    if size <= 0:
        return 0
    return 1 << (size - 1).bit_length()


def kv_offload_host_bytes(
    *, requested_bytes: int, kv_tensors_per_rank: int, page_bytes: int, world_size: int
) -> tuple[int, int]:
    """(blocks, host bytes) of the native OffloadingConnector (vllm/v1/kv_offload/cpu/spec.py,
    worker/cpu_gpu.py, 0.19.0): blocks = requested // (page x tensors x world size); every rank pins one
    (blocks x page) tensor per KV tensor, each rounded up to a power of two by the pinned allocator."""
    per_block = page_bytes * kv_tensors_per_rank * world_size
    if per_block <= 0:
        return 0, 0
    blocks = requested_bytes // per_block
    return blocks, world_size * kv_tensors_per_rank * pinned_bytes(blocks * page_bytes)


def host_items(
    *, serve: ServeConfig, rules: VersionRules, layout: K.KVLayout, world_size: int
) -> list[ExtraItem]:
    items: list[ExtraItem] = []
    if serve.kv_offloading_size_gib and rules.has_kv_offloading_flags:
        requested = int(serve.kv_offloading_size_gib * GIB)
        tensors = layout.num_kv_layers  # one KV cache tensor per attention layer on this rank
        page = layout.page_size_bytes
        blocks, host = kv_offload_host_bytes(
            requested_bytes=requested, kv_tensors_per_rank=tensors, page_bytes=page, world_size=world_size
        )
        items.append(
            ExtraItem(
                name="kv_offloading",
                label=Text("KV offloading to host ({gib:g} GiB requested)", gib=serve.kv_offloading_size_gib),
                device_bytes=0,
                host_bytes=max(host, requested),
                inside_profile=False,
                flag="--kv-offloading-size --kv-offloading-backend",
                source=src("config/vllm.py, v1/kv_offload/cpu/spec.py, v1/kv_offload/worker/cpu_gpu.py"),
                note=Text(
                    "{blocks:,} host blocks; pinned tensors of {tensor:.2f} GiB each are rounded up to a power of two by PyTorch's pinned allocator ({ratio:.2f}× the request; vllm#53042 reports ~1.9×)",
                    blocks=blocks,
                    tensor=blocks * page / GIB,
                    ratio=max(host, requested) / requested if requested else 0.0,
                ),
            )
        )
    if serve.cpu_offload_gb:
        items.append(
            ExtraItem(
                name="cpu_offload",
                label=Text("Weights offloaded to host ({gib:g} GiB per device)", gib=serve.cpu_offload_gb),
                device_bytes=0,
                host_bytes=int(serve.cpu_offload_gb * GIB) * world_size,
                flag="--cpu-offload-gb",
                source=src("model_executor/models/utils.py maybe_offload_to_cpu"),
                note=Text("taken off each device's weights; streamed back over PCIe every step"),
            )
        )
    if rules.swap_space_used:
        swap = serve.swap_space_gib if serve.swap_space_gib is not None else V0_DEFAULT_SWAP_GIB
        if swap:
            items.append(
                ExtraItem(
                    name="swap_space",
                    label=Text("V0 swap space ({gib:g} GiB per device)", gib=swap),
                    device_bytes=0,
                    host_bytes=int(swap * GIB) * world_size,
                    inside_profile=False,
                    flag="--swap-space",
                    source="vllm/worker/cache_engine.py (V0, 0.6.6)",
                    note=Text("pinned CPU blocks for preempted sequences, per GPU"),
                )
            )
    return items
