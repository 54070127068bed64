"""Hand-built model and device specs shared by the core tests (dimensions from the models' configs:
Llama-3.1-8B/70B, gpt-oss-20b, DeepSeek-V3; H100 80GB at the runtime-visible 79.1 GiB)."""

from __future__ import annotations

from app.core import kv as K
from app.core.specs import GIB, DeviceSpec, LayerKind, MLASpec, ModelSpec, QuantMethod, QuantSpec
from app.core.versions import rules_for

H100 = DeviceSpec(
    id="h100-like",
    name="H100-like",
    vendor="NVIDIA",
    platform="cuda",
    memory_total_bytes=int(79.1 * GIB),
    compute_capability="9.0",
    fp8_kv=True,
    interconnect="NVLink",
    interconnect_gbps=900.0,
    typical_node_devices=8,
)


def dense(
    *,
    name: str = "llama-3.1-8b-like",
    layers: int = 32,
    kv_heads: int = 8,
    head: int = 128,
    heads: int = 32,
    hidden: int = 4096,
    intermediate: int = 14336,
    params: int = 8_030_261_248,
) -> ModelSpec:
    """A Llama-style dense GQA model (defaults: Llama-3.1-8B)."""
    return ModelSpec(
        name=name,
        num_layers=layers,
        hidden_size=hidden,
        intermediate_size=intermediate,
        num_attention_heads=heads,
        num_kv_heads=kv_heads,
        head_size=head,
        head_size_v=head,
        vocab_size=128256,
        max_model_len_derived=131072,
        layer_kinds=(LayerKind.FULL,) * layers,
        params_total=params,
    )


def llama70() -> ModelSpec:
    return dense(
        name="llama-3.1-70b-like", layers=80, heads=64, hidden=8192, intermediate=28672, params=70_553_706_496
    )


def gpt_oss_like() -> ModelSpec:
    """12 sliding (W=128) + 12 full layers, 8 KV heads of 64."""
    kinds = tuple(LayerKind.SLIDING if i % 2 == 0 else LayerKind.FULL for i in range(24))
    return ModelSpec(
        name="gpt-oss-20b-like",
        num_layers=24,
        hidden_size=2880,
        intermediate_size=2880,
        num_attention_heads=64,
        num_kv_heads=8,
        head_size=64,
        head_size_v=64,
        vocab_size=201088,
        max_model_len_derived=131072,
        layer_kinds=kinds,
        sliding_window_tokens=128,
        params_total=20_900_000_000,
    )


def deepseek_v3_like(*, fp8_weights: bool = False) -> ModelSpec:
    """61 MLA layers, latent 512 + 64; optionally the official fp8 checkpoint."""
    return ModelSpec(
        name="deepseek-v3-like",
        num_layers=61,
        hidden_size=7168,
        intermediate_size=18432,
        num_attention_heads=128,
        num_kv_heads=128,
        head_size=576,
        head_size_v=576,
        vocab_size=129280,
        max_model_len_derived=163840,
        layer_kinds=(LayerKind.MLA,) * 61,
        mla=MLASpec(kv_lora_rank=512, qk_rope_head_dim=64, qk_nope_head_dim=128),
        params_total=671_000_000_000,
        quantization=QuantSpec(method=QuantMethod.FP8) if fp8_weights else None,
    )


def layout(
    model: ModelSpec, *, version: str, tp: int = 1, kv_dtype: str = "auto", block: int = 16
) -> K.KVLayout:
    """The KV layout of the whole model on one rank (a test's shortcut to kv.build_layout)."""
    return K.build_layout(
        model=model,
        layer_range=(0, model.num_layers),
        tensor_parallel_size=tp,
        block_size=block,
        kv_cache_dtype=kv_dtype,
        model_dtype="bfloat16",
        rules=rules_for(version),
    )
