"""How far each attention or mixer backend takes CUDA graphs, by release (v1/attention/backend.py AttentionCGSupport):
the data versions_changelog.py's ``cudagraph_support`` rows carry, kept apart so the changelog stays under its cap.

A key is a backends.py name, "mamba:<MambaKind>", or a name with "@sm<major>" for the level on that compute
capability major alone (a builder whose support is decided by the device: FlashAttention by its FA version,
FlashInfer by TRTLLM / XQA decode); graph_rules._lowest_support takes the "@sm" row over the plain one.
Each table below is read from the wheels (`pip download --no-deps vllm==X`, unzipped outside the repository).
"""

from __future__ import annotations

from app.core.version_types import GraphSupport

# AttentionCGSupport levels (v1/attention/backend.py): NEVER < UNIFORM_SINGLE_TOKEN_DECODE < UNIFORM_BATCH < ALWAYS
CG_NEVER, CG_SINGLE_TOKEN, CG_UNIFORM, CG_ALWAYS = 0, 1, 2, 3

# the class name vLLM prints (gpu_model_runner: min_cg_attn_backend = attn_backend.__name__), by key
GRAPH_CLASSES = {
    "TRITON_MLA": "TritonMLABackend",
    "FLEX_ATTENTION": "FlexAttentionBackend",
    "CUTLASS_MLA": "CutlassMLABackend",
    "FLASH_ATTN": "FlashAttentionBackend",
    "FLASHINFER": "FlashInferBackend",
    "TRITON_ATTN": "TritonAttentionBackend",
    "ROCM_ATTN": "RocmAttentionBackend",
    "FLASHMLA": "FlashMLABackend",
    "FLASH_ATTN_MLA": "FlashAttnMLABackend",
    "FLASHINFER_MLA": "FlashInferMLABackend",
    "FLASHMLA_SPARSE": "FlashMLASparseBackend",
    "FLASHINFER_MLA_SPARSE": "FlashInferMLASparseBackend",
    "FLASH_ATTN_MLA_SPARSE": "FlashAttnMLASparseBackend",
    "DEEPSEEK_V32_INDEXER": "DeepseekV32IndexerBackend",
    "mamba:mamba1": "Mamba1AttentionBackend",
    "mamba:mamba2": "Mamba2AttentionBackend",
    "mamba:short_conv": "ShortConvAttentionBackend",
    "mamba:gated_delta_net": "GDNAttentionBackend",
    "mamba:linear_attention": "LinearAttentionBackend",
}


def graph_support(levels: dict[str, int]) -> tuple[GraphSupport, ...]:
    """The cudagraph-support rows of one release, by key (the class vLLM prints is the key's before any "@")."""
    return tuple(
        GraphSupport(key, GRAPH_CLASSES[key.split("@")[0]], level) for key, level in sorted(levels.items())
    )


def on_sm(key: str, sm_major: int) -> str:
    """The key of a level that holds on one compute capability major: on_sm("FLASH_ATTN", 9) -> "FLASH_ATTN@sm9"."""
    return f"{key}@sm{sm_major}"


# 0.10.2 / 0.11.0: TritonMLA and the short-conv / linear-attention builders keep AttentionMetadataBuilder's NEVER
# (mla/common.py MLACommonMetadataBuilder sets none), FlexAttention too; mamba_attn.py and cutlass_mla.py
# UNIFORM_SINGLE_TOKEN_DECODE; gdn_attn.py UNIFORM_BATCH
GRAPHS_0_10 = {
    "TRITON_MLA": CG_NEVER,
    "FLEX_ATTENTION": CG_NEVER,
    "CUTLASS_MLA": CG_SINGLE_TOKEN,
    "mamba:mamba1": CG_SINGLE_TOKEN,
    "mamba:mamba2": CG_SINGLE_TOKEN,
    "mamba:short_conv": CG_NEVER,
    "mamba:gated_delta_net": CG_UNIFORM,
    "mamba:linear_attention": CG_NEVER,
}
# 0.11.0 (read; 0.10.2 not: its row keeps the table above): the default CUDA / ROCm backends.
# flash_attn.py FlashAttentionMetadataBuilder.cudagraph_support = ALWAYS if get_flash_attn_version() == 3 else
# UNIFORM_BATCH: a class attribute, so read at import with no head size -- FA3 on capability 9.x
# (attention/utils/fa_utils.py: "3 if device_capability.major == 9 and is_fa_version_supported(3) else 2");
# flashinfer.py UNIFORM_SINGLE_TOKEN_DECODE; triton_attn.py / rocm_attn.py ALWAYS; mla/flashmla.py,
# flashattn_mla.py, flashmla_sparse.py UNIFORM_BATCH; mla/flashinfer_mla.py builds on MLACommonMetadataBuilder
# (none set: NEVER); mla/indexer.py DeepseekV32IndexerMetadataBuilder UNIFORM_SINGLE_TOKEN_DECODE
GRAPHS_0_11 = {
    **GRAPHS_0_10,
    "FLASH_ATTN": CG_UNIFORM,
    on_sm("FLASH_ATTN", 9): CG_ALWAYS,
    "FLASHINFER": CG_SINGLE_TOKEN,
    "TRITON_ATTN": CG_ALWAYS,
    "ROCM_ATTN": CG_ALWAYS,
    "FLASHMLA": CG_UNIFORM,
    "FLASH_ATTN_MLA": CG_UNIFORM,
    "FLASHMLA_SPARSE": CG_UNIFORM,
    "FLASHINFER_MLA": CG_NEVER,
    "DEEPSEEK_V32_INDEXER": CG_SINGLE_TOKEN,
}
# 0.14.0 (0.13.0 read too): short_conv_attn.py builds on BaseMambaAttentionMetadataBuilder and linear_attn.py
# sets UNIFORM_SINGLE_TOKEN_DECODE; flashinfer.py FlashInferMetadataBuilder.get_cudagraph_support UNIFORM_BATCH
# when can_use_trtllm_attention (utils/flashinfer.py supports_trtllm_attention: is_device_capability_family(100),
# and num_qo_heads % num_kv_heads == 0), else UNIFORM_SINGLE_TOKEN_DECODE; mla/flashinfer_mla.py
# FlashInferMLAMetadataBuilder UNIFORM_BATCH
GRAPHS_0_14 = {
    **GRAPHS_0_11,
    "mamba:short_conv": CG_SINGLE_TOKEN,
    "mamba:linear_attention": CG_SINGLE_TOKEN,
    on_sm("FLASHINFER", 10): CG_UNIFORM,
    "FLASHINFER_MLA": CG_UNIFORM,
}
# 0.17.0 (0.15.0: as 0.14.0): mamba_attn.py BaseMambaAttentionMetadataBuilder UNIFORM_BATCH; mla/indexer.py
# DeepseekV32IndexerMetadataBuilder UNIFORM_BATCH (0.15.0: UNIFORM_SINGLE_TOKEN_DECODE); mla/flashinfer_mla_sparse.py
# (new) UNIFORM_BATCH
GRAPHS_0_17 = {
    **GRAPHS_0_14,
    "mamba:mamba1": CG_UNIFORM,
    "mamba:mamba2": CG_UNIFORM,
    "mamba:short_conv": CG_UNIFORM,
    "DEEPSEEK_V32_INDEXER": CG_UNIFORM,
    "FLASHINFER_MLA_SPARSE": CG_UNIFORM,
}
# 0.20.0: flex_attention.py ALWAYS (0.19.0: none, NEVER)
GRAPHS_0_20 = {**GRAPHS_0_17, "FLEX_ATTENTION": CG_ALWAYS}
# 0.22.0: mla/triton_mla.py TritonMLAMetadataBuilder UNIFORM_BATCH (0.21.0: NEVER)
GRAPHS_0_22 = {**GRAPHS_0_20, "TRITON_MLA": CG_UNIFORM}
# 0.26.0: triton_mla.py UNIFORM_SINGLE_TOKEN_DECODE (0.25.0: UNIFORM_BATCH); mla/flashattn_mla_sparse.py (new)
# UNIFORM_BATCH
GRAPHS_0_26 = {**GRAPHS_0_22, "TRITON_MLA": CG_SINGLE_TOKEN, "FLASH_ATTN_MLA_SPARSE": CG_UNIFORM}
# 0.30.0 (0.27.1: as 0.26.0): mla/indexer.py ALWAYS; registry.py FLASHINFER_MLA_SPARSE is
# FlashInferMLASparseTRTLLMBackend, whose builder is ALWAYS (0.32.0: UNIFORM_BATCH); flashinfer.py get_cudagraph_support takes XQA decode as
# uniform-batch too (is_xqa_arch: is_device_capability(90) or is_device_capability_family(120); head sizes
# 16-256 in steps of 16, not an NVFP4 cache on SM90)
GRAPHS_0_30 = {
    **GRAPHS_0_26,
    "DEEPSEEK_V32_INDEXER": CG_ALWAYS,
    "FLASHINFER_MLA_SPARSE": CG_ALWAYS,
    on_sm("FLASHINFER", 9): CG_UNIFORM,
    on_sm("FLASHINFER", 12): CG_UNIFORM,
}
# 0.32.0 (0.31.0 read; 0.31.x is planned with 0.30.0's): triton_mla.py UNIFORM_BATCH again; mla/flashinfer_mla.py
# ALWAYS (0.30.0: UNIFORM_BATCH); flashinfer_mla_sparse.py FlashInferMLASparseTRTLLMMetadataBuilder UNIFORM_BATCH
GRAPHS_0_32 = {
    **GRAPHS_0_30,
    "TRITON_MLA": CG_UNIFORM,
    "FLASHINFER_MLA": CG_ALWAYS,
    "FLASHINFER_MLA_SPARSE": CG_UNIFORM,
}
# 0.33.0: flash_attn.py "ALWAYS if get_flash_attn_version() in (3, 4)": FA4 on capability 10.x (fa_utils.py
# "elif device_capability.major == 10 and is_fa_version_supported(4)"); flashinfer.py _use_fa2_native_decode
# ("not current_platform.has_device_capability(90)") makes every device below 9.0 UNIFORM_BATCH (causal attention);
# 11.x is neither XQA nor TRTLLM (utils/flashinfer.py supports_trtllm_attention): UNIFORM_SINGLE_TOKEN_DECODE
GRAPHS_0_33 = {
    **GRAPHS_0_32,
    on_sm("FLASH_ATTN", 10): CG_ALWAYS,
    "FLASHINFER": CG_UNIFORM,
    on_sm("FLASHINFER", 11): CG_SINGLE_TOKEN,
}
